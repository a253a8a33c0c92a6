//! The two kebab-case drafts: the first (`002`) and the second (`000`).

use super::yaml::Node;
use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{Dialect, Workflow};

pub(super) fn lower(
    _file: &str,
    root: &Node,
    dialect: Dialect,
    diags: &mut Diagnostics,
) -> Option<Workflow> {
    diags.error(
        Code::NOT_YET_COMPILED,
        root.span,
        format!("the {} front end is not written yet", dialect.label()),
    );
    None
}
