//! The tasks draft (`004`), in both of its spellings: `tasks`/`nextTask`/`taskDataFilter` and
//! `states`/`nextState`/`stateDataFilter`.

mod common;
mod task;

use super::lowering::{EventDefinitions, Header, Lowering, header};
use super::reader::{self, MapReader};
use super::yaml::Node;
use crate::diagnostic::Diagnostics;
use crate::ir::{DataSchemas, Dialect, ExprLanguage, SchemaRef, Scope, Workflow};
use crate::source::Spanned;
use crate::syntax;

pub(super) const TASKS: &[&str] = &["tasks", "states"];

pub(super) fn lower(file: &str, root: &Node, diags: &mut Diagnostics) -> Option<Workflow> {
    let mut map = MapReader::new(root, "workflow definition", diags)?;
    let Header {
        id,
        name,
        version,
        description,
    } = header(&mut map, diags, true);
    map.verbatim(&["schemaVersion"]);
    let schemas = data_schemas(&mut map, diags);
    let expression_language = map
        .take(&["expressionLanguage"])
        .and_then(|n| reader::string(n, "expressionLanguage", diags));
    let default_language = expression_language
        .as_ref()
        .and_then(|l| syntax::expr::parse_language(&l.value, l.span, diags))
        .unwrap_or(ExprLanguage::Spel);
    let metadata = map.verbatim(&["metadata"]);
    let extensions = map.verbatim(&["extensions"]);
    let functions_node = map.take(&["functions"]);
    let events_node = map.take(&["events"]);
    let tasks_node = map.require(TASKS);
    let span = map.span();
    map.finish(diags);

    let mut lowering = Lowering {
        diags,
        default_language,
        recovered: false,
    };
    let functions = functions_node
        .map(|n| lowering.function_definitions(n))
        .unwrap_or_default();
    let events = events_node
        .map(|n| {
            lowering.event_definitions(
                n,
                &EventDefinitions {
                    list: "events",
                    item: "event definition",
                    correlation: "correlationToken",
                },
            )
        })
        .unwrap_or_default();
    let scope = tasks_node.map(|n| lowering.scope(n)).unwrap_or_default();

    Some(Workflow {
        file: file.to_owned(),
        dialect: Dialect::Tasks,
        id: id.unwrap_or_else(|| Spanned::new(String::new(), span)),
        name: name.unwrap_or_else(|| Spanned::new(String::new(), span)),
        version,
        description,
        expression_language,
        functions,
        events,
        scope,
        metadata,
        extensions,
        schemas,
        span,
    })
}

/// `dataInputSchema` and `dataOutputSchema` of a workflow or a task: references to schema
/// files, read later by [`crate::schema::load`].
pub(super) fn data_schemas(map: &mut MapReader<'_>, diags: &mut Diagnostics) -> DataSchemas {
    let mut reference = |key: &'static str| {
        map.take(&[key])
            .and_then(|n| reader::string(n, key, diags))
            .map(SchemaRef::new)
    };
    DataSchemas {
        input: reference("dataInputSchema"),
        output: reference("dataOutputSchema"),
    }
}

impl Lowering<'_> {
    pub(super) fn scope(&mut self, node: &Node) -> Scope {
        let tasks = reader::list(node, "tasks", self.diags)
            .iter()
            .filter_map(|item| self.task(item))
            .collect();
        Scope { tasks }
    }
}

#[cfg(test)]
mod tests;
