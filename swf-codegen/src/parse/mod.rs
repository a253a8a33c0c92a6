//! Front ends: one per draft dialect, each lowering the positioned YAML tree into the one IR.

mod reader;
mod tasks;
pub mod yaml;

pub use reader::closest;

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::Workflow;
use crate::source::SourceFile;
use yaml::NodeKind;

/// Keys that only the earlier drafts use; a file with them is not in the tasks dialect.
const EARLIER_DRAFT_KEYS: &[(&str, &str)] = &[
    ("startsAt", "v0.1"),
    ("triggers", "v0.1"),
    ("starts-at", "second (kebab-case)"),
    ("trigger-defs", "kebab-case"),
];

/// Parses a workflow file into the IR, recording every problem found on the way.
pub fn parse(source: &SourceFile, diags: &mut Diagnostics) -> Option<Workflow> {
    let root = yaml::load(&source.text, diags)?;
    if let NodeKind::Map(entries) = &root.kind {
        for entry in entries {
            if let Some((key, draft)) = EARLIER_DRAFT_KEYS
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(&entry.key))
            {
                diags
                    .error(
                        Code::NOT_YET_COMPILED,
                        entry.key_span,
                        format!(
                            "`{key}` belongs to the {draft} draft, which this version does not compile yet"
                        ),
                    )
                    .help("write the workflow in the tasks draft (`tasks`, `nextTask`, `start: {kind: default}`)");
                return None;
            }
        }
    }
    tasks::lower(&source.name, &root, diags)
}
