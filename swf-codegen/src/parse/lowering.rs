//! What every front end shares while lowering one file: the diagnostics, the default expression
//! language, and the conversions of values whose syntax is the same in every draft (JSONPaths,
//! durations, retry intervals, expressions, function arguments).

use crate::diagnostic::Diagnostics;
use crate::ir::{DurationSpec, ExprLanguage, Expression, JsonPath, Param, RetryInterval};
use crate::parse::reader;
use crate::parse::yaml::{Node, NodeKind};
use crate::source::Spanned;
use crate::syntax;

/// State shared while lowering one file.
pub(in crate::parse) struct Lowering<'d> {
    pub diags: &'d mut Diagnostics,
    /// The workflow's `expressionLanguage`, else `spel`.
    pub default_language: ExprLanguage,
    /// Set when the task being read had an error the parser recovered from; taken (and reset)
    /// when the task is built: see `Task::recovered`.
    pub recovered: bool,
}

/// The earlier drafts' retry transitions: each handler belongs to the action written at `Span`.
/// Once the task is built, each becomes a handler for that action's failures only (its index in
/// `Task::actions`), placed before the state's own handlers, in order; a handler whose action
/// was dropped (reported already) is dropped too.
pub(in crate::parse) fn attach_retry_handlers(
    task: &mut crate::ir::Task,
    pending: Vec<(crate::source::Span, crate::ir::ErrorHandler)>,
) {
    let spans: Vec<crate::source::Span> = task.actions().iter().map(|a| a.span).collect();
    let mut handlers: Vec<crate::ir::ErrorHandler> = pending
        .into_iter()
        .filter_map(|(span, mut handler)| {
            handler.action = Some(spans.iter().position(|s| *s == span)?);
            Some(handler)
        })
        .collect();
    handlers.append(&mut task.on_error);
    task.on_error = handlers;
}

/// What every dialect's workflow definition says about itself.
pub(in crate::parse) struct Header {
    pub id: Option<Spanned<String>>,
    pub name: Option<Spanned<String>>,
    pub version: Option<Spanned<String>>,
    pub description: Option<String>,
}

/// `name`, and, unless the dialect has none of them (the first draft), `id` (required),
/// `version` and `description`.
pub(in crate::parse) fn header(
    map: &mut reader::MapReader<'_>,
    diags: &mut Diagnostics,
    with_id: bool,
) -> Header {
    let mut text = |map: &mut reader::MapReader<'_>, key: &'static str, required: bool| {
        let node = if required {
            map.require(&[key])
        } else {
            map.take(&[key])
        };
        node.and_then(|n| reader::string(n, key, diags))
    };
    let id = with_id.then(|| text(map, "id", true)).flatten();
    let name = text(map, "name", true);
    let (version, description) = if with_id {
        (
            text(map, "version", false),
            text(map, "description", false).map(|s| s.value),
        )
    } else {
        (None, None)
    };
    Header {
        id,
        name,
        version,
        description,
    }
}

/// How a dialect spells its event definitions.
pub(in crate::parse) struct EventDefinitions {
    /// The list's key, for messages: `events`, `triggers`, `trigger-defs`.
    pub list: &'static str,
    /// What one item is, for messages: `event definition`, `trigger definition`.
    pub item: &'static str,
    /// The key of the correlation attribute: `correlationToken`, `correlation-token`.
    pub correlation: &'static str,
}

impl Lowering<'_> {
    /// Function definitions (`functions`): `name` and `resource` required, `type` optional.
    pub(in crate::parse) fn function_definitions(
        &mut self,
        node: &Node,
    ) -> Vec<crate::ir::FunctionDef> {
        let mut out = Vec::new();
        for item in reader::list(node, "functions", self.diags) {
            let Some(mut map) = reader::MapReader::new(item, "function definition", self.diags)
            else {
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
                out.push(crate::ir::FunctionDef {
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

    /// Event definitions, spelled as `spelling` says: `name`, `source` and `type` required,
    /// the correlation attribute optional.
    pub(in crate::parse) fn event_definitions(
        &mut self,
        node: &Node,
        spelling: &EventDefinitions,
    ) -> Vec<crate::ir::EventDef> {
        let mut out = Vec::new();
        for item in reader::list(node, spelling.list, self.diags) {
            let Some(mut map) = reader::MapReader::new(item, spelling.item, self.diags) else {
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
            let correlation = [spelling.correlation];
            let correlation_token = map
                .take(&correlation)
                .and_then(|n| reader::string(n, spelling.correlation, self.diags));
            let metadata = map.verbatim(&["metadata"]);
            let span = map.span();
            map.finish(self.diags);
            if let Some(name) = name {
                out.push(crate::ir::EventDef {
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

    pub(in crate::parse) fn path(&mut self, node: &Node, what: &str) -> Option<JsonPath> {
        let text = reader::string(node, what, self.diags)?;
        Some(syntax::jsonpath::parse(&text.value, text.span, self.diags))
    }

    pub(in crate::parse) fn duration(&mut self, node: &Node, what: &str) -> Option<DurationSpec> {
        let text = reader::string(node, what, self.diags)?;
        Some(syntax::duration::parse(&text.value, text.span, self.diags))
    }

    pub(in crate::parse) fn retry_interval(&mut self, node: &Node) -> Option<RetryInterval> {
        let text = reader::string(node, "interval", self.diags)?;
        Some(syntax::duration::parse_retry_interval(
            &text.value,
            text.span,
            self.diags,
        ))
    }

    /// Function arguments: a string starting with `$` selects from the action's input data.
    pub(in crate::parse) fn param(&mut self, node: &Node) -> Param {
        match &node.kind {
            NodeKind::Map(entries) => Param::Object(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), self.param(&e.value)))
                    .collect(),
            ),
            NodeKind::Seq(items) => Param::Array(items.iter().map(|i| self.param(i)).collect()),
            NodeKind::Scalar(s) if s.text.starts_with('$') && node.to_json().is_string() => {
                Param::Path(syntax::jsonpath::parse(&s.text, node.span, self.diags))
            }
            NodeKind::Scalar(_) => Param::Literal(node.to_json()),
        }
    }

    pub(in crate::parse) fn name_list(&mut self, node: &Node, what: &str) -> Vec<Spanned<String>> {
        reader::list(node, what, self.diags)
            .iter()
            .filter_map(|n| reader::string(n, what, self.diags))
            .collect()
    }

    /// An expression `body` in `language` (the default when `None`), parsed at its position.
    pub(in crate::parse) fn expression_in(
        &mut self,
        language: Option<&Spanned<String>>,
        body: &Spanned<String>,
    ) -> Option<Expression> {
        let language = match language {
            Some(l) => syntax::expr::parse_language(&l.value, l.span, self.diags)?,
            None => self.default_language,
        };
        Some(syntax::expr::parse(
            language,
            &body.value,
            body.span,
            self.diags,
        ))
    }
}
