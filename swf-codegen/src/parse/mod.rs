//! Front ends: one per draft dialect, each lowering the positioned YAML tree into the one IR.
//! Which one reads a file is named by the user or detected from the file's tell-tale keys.

mod detect;
mod event_condition;
mod kebab;
mod lowering;
mod reader;
mod tasks;
mod v01;
pub mod yaml;

pub use reader::closest;

use crate::diagnostic::Diagnostics;
use crate::ir::{Dialect, Workflow};
use crate::source::SourceFile;

/// Parses a workflow file into the IR, recording every problem found on the way.
pub fn parse(source: &SourceFile, diags: &mut Diagnostics) -> Option<Workflow> {
    let root = yaml::load(&source.text, diags)?;
    match detect::dialect(&root, source.dialect, diags)? {
        Dialect::Tasks => tasks::lower(&source.name, &root, diags),
        Dialect::V01 => v01::lower(&source.name, &root, diags),
        dialect @ (Dialect::First | Dialect::Second) => {
            kebab::lower(&source.name, &root, dialect, diags)
        }
    }
}
