//! The tasks draft (`004`), in both of its spellings: `tasks`/`nextTask`/`taskDataFilter` and
//! `states`/`nextState`/`stateDataFilter`.

mod common;
mod task;

use super::lowering::Lowering;
use super::reader::{self, MapReader};
use super::yaml::Node;
use crate::diagnostic::Diagnostics;
use crate::ir::{Dialect, EventDef, ExprLanguage, FunctionDef, Scope, Workflow};
use crate::source::Spanned;
use crate::syntax;

pub(super) const TASKS: &[&str] = &["tasks", "states"];

pub(super) fn lower(file: &str, root: &Node, diags: &mut Diagnostics) -> Option<Workflow> {
    let mut map = MapReader::new(root, "workflow definition", diags)?;
    let id = map
        .require(&["id"])
        .and_then(|n| reader::string(n, "id", diags));
    let name = map
        .require(&["name"])
        .and_then(|n| reader::string(n, "name", diags));
    let version = map
        .take(&["version"])
        .and_then(|n| reader::string(n, "version", diags))
        .map(|s| s.value);
    let description = map
        .take(&["description"])
        .and_then(|n| reader::string(n, "description", diags))
        .map(|s| s.value);
    map.verbatim(&["schemaVersion"]);
    map.verbatim(&["dataInputSchema"]);
    map.verbatim(&["dataOutputSchema"]);
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
    };
    let functions = functions_node
        .map(|n| lowering.functions(n))
        .unwrap_or_default();
    let events = events_node.map(|n| lowering.events(n)).unwrap_or_default();
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
        span,
    })
}

impl Lowering<'_> {
    fn functions(&mut self, node: &Node) -> Vec<FunctionDef> {
        let mut out = Vec::new();
        for item in reader::list(node, "functions", self.diags) {
            let Some(mut map) = MapReader::new(item, "function definition", self.diags) else {
                continue;
            };
            let name = map
                .require(&["name"])
                .and_then(|n| reader::string(n, "name", self.diags));
            let resource = map
                .require(&["resource"])
                .and_then(|n| reader::string(n, "resource", self.diags));
            let kind = map
                .take(&["type"])
                .and_then(|n| reader::string(n, "type", self.diags))
                .map(|s| s.value);
            let metadata = map.verbatim(&["metadata"]);
            let span = map.span();
            map.finish(self.diags);
            if let Some(name) = name {
                out.push(FunctionDef {
                    name,
                    resource,
                    kind,
                    metadata,
                    span,
                });
            }
        }
        out
    }

    fn events(&mut self, node: &Node) -> Vec<EventDef> {
        let mut out = Vec::new();
        for item in reader::list(node, "events", self.diags) {
            let Some(mut map) = MapReader::new(item, "event definition", self.diags) else {
                continue;
            };
            let name = map
                .require(&["name"])
                .and_then(|n| reader::string(n, "name", self.diags));
            let source = map
                .require(&["source"])
                .and_then(|n| reader::string(n, "source", self.diags));
            let event_type = map
                .require(&["type"])
                .and_then(|n| reader::string(n, "type", self.diags));
            let correlation_token = map
                .take(&["correlationToken"])
                .and_then(|n| reader::string(n, "correlationToken", self.diags));
            let metadata = map.verbatim(&["metadata"]);
            let span = map.span();
            map.finish(self.diags);
            if let Some(name) = name {
                out.push(EventDef {
                    name,
                    source,
                    event_type,
                    correlation_token,
                    metadata,
                    span,
                });
            }
        }
        out
    }

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
