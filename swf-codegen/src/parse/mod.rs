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

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{Dialect, Workflow};
use crate::source::SourceFile;

/// Parses a workflow file into the IR, recording every problem found on the way.
pub fn parse(source: &SourceFile, diags: &mut Diagnostics) -> Option<Workflow> {
    if source.text.len() > crate::source::MAX_INPUT_BYTES {
        diags
            .error(
                Code::LIMIT,
                crate::source::Span::new(1, 1),
                format!(
                    "the file is larger than {} MiB, the most a workflow file may hold",
                    crate::source::MAX_INPUT_BYTES >> 20
                ),
            )
            .help("split the workflow into workflows that call each other as sub-flows");
        return None;
    }
    let root = yaml::load(&source.text, diags)?;
    let workflow = match detect::dialect(&root, source.dialect, diags)? {
        Dialect::Tasks => tasks::lower(&source.name, &root, diags),
        Dialect::V01 => v01::lower(&source.name, &root, diags),
        dialect @ (Dialect::First | Dialect::Second) => {
            kebab::lower(&source.name, &root, dialect, diags)
        }
    }?;
    let count = count_tasks(&workflow.scope);
    if count > MAX_TASKS {
        diags
            .error(
                Code::LIMIT,
                workflow.id.span,
                format!(
                    "the workflow has {count} tasks (counting those of branches and foreach bodies); at most {MAX_TASKS} are compiled"
                ),
            )
            .help("split the workflow into workflows that call each other as sub-flows");
        return None;
    }
    Some(workflow)
}

/// The most tasks one workflow may have, nested ones included: generated code and compile
/// time grow with it, and rustc handles a state enum of this many variants comfortably.
pub const MAX_TASKS: usize = 10_000;

fn count_tasks(scope: &crate::ir::Scope) -> usize {
    scope
        .tasks
        .iter()
        .map(|t| {
            1 + t
                .nested_scopes()
                .into_iter()
                .map(count_tasks)
                .sum::<usize>()
        })
        .sum()
}

#[cfg(test)]
mod limit_tests {
    use super::*;

    fn parse_text(text: String) -> (Option<Workflow>, Diagnostics) {
        let mut diags = Diagnostics::new("big.yaml");
        let workflow = parse(&SourceFile::new("big.yaml", text), &mut diags);
        (workflow, diags)
    }

    /// `/dev/zero` was read until memory ran out; a file past the limit is refused at once.
    #[test]
    fn files_past_the_size_limit_are_refused() {
        let (workflow, diags) = parse_text(" ".repeat(crate::source::MAX_INPUT_BYTES + 1));
        assert!(workflow.is_none());
        assert_eq!(diags.items()[0].code, Code::LIMIT);
        assert!(diags.items()[0].message.contains("16 MiB"));
    }

    #[test]
    fn reading_stops_after_the_limit() {
        let text = crate::source::read_bounded(std::path::Path::new("/dev/zero")).expect("reads");
        assert_eq!(text.len(), crate::source::MAX_INPUT_BYTES + 1);
    }

    fn tasks(count: usize) -> String {
        let mut text = String::from("id: many\nname: many\nversion: '1.0'\ntasks:\n");
        for i in 0..count {
            let start = if i == 0 {
                "start: {kind: default}, "
            } else {
                ""
            };
            let next = if i + 1 == count {
                "end: {kind: default}".to_owned()
            } else {
                format!("transition: {{nextTask: t{}}}", i + 1)
            };
            text.push_str(&format!(
                "  - {{name: t{i}, type: inject, {start}data: {{}}, {next}}}\n"
            ));
        }
        text
    }

    #[test]
    fn workflows_past_the_task_limit_are_refused() {
        let (workflow, diags) = parse_text(tasks(MAX_TASKS + 1));
        assert!(workflow.is_none());
        assert_eq!(diags.items()[0].code, Code::LIMIT);
        let (workflow, diags) = parse_text(tasks(MAX_TASKS));
        assert!(workflow.is_some(), "{:?}", diags.items());
    }
}
