//! v0.1 (`001`): camelCase states, `startsAt`, `triggers`, `functions`.

use super::yaml::Node;
use crate::diagnostic::{Code, Diagnostics};
use crate::ir::Workflow;

pub(super) fn lower(_file: &str, root: &Node, diags: &mut Diagnostics) -> Option<Workflow> {
    diags.error(
        Code::NOT_YET_COMPILED,
        root.span,
        "the v0.1 front end is not written yet",
    );
    None
}
