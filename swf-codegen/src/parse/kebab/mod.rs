//! The two kebab-case drafts: the first (`002`) and the second (`000`). They share almost all
//! of their shape, so one front end reads both and branches on the dialect where they differ:
//!
//! | | first draft | second draft |
//! |---|---|---|
//! | workflow id | none: the `name` is used | `id` |
//! | start | `start: true` on a state (in each branch too) | `starts-at` (workflow and branches) |
//! | end | END states with `status: SUCCESS/FAILURE` | `end: true` on a state |
//! | durations | integer seconds | ISO 8601 (both are accepted in both) |
//! | choices | `{condition, next-state}`, conditions nest | `{single/and/or/not: [..], next-state}` |
//! | `exec-status` | `SYS.Timeout`, `SYS.Fail`, ... | `Success`, `Fail`, `Timeout`, `Invalid` |
//!
//! Functions are declared inline in actions; they are collected into the workflow's functions.

mod actions;
mod choices;
mod events;
mod states;

use super::lowering::{EventDefinitions, Header, Lowering, header};
use super::reader::{self, MapReader};
use super::yaml::{Node, NodeKind, ScalarValue};
use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{
    Dialect, DurationSpec, ExprLanguage, FunctionDef, JsonPath, RetryInterval, Transition, Workflow,
};
use crate::source::Spanned;
use crate::syntax;

pub(super) fn lower(
    file: &str,
    root: &Node,
    dialect: Dialect,
    diags: &mut Diagnostics,
) -> Option<Workflow> {
    let mut map = MapReader::new(root, "workflow definition", diags)?;
    let second = dialect == Dialect::Second;
    // The first draft's workflow has only a name.
    let Header {
        id,
        name,
        version,
        description,
    } = header(&mut map, diags, second);
    let starts_at = if second {
        // Kept verbatim, like the later drafts' `schemaVersion`: nothing depends on it.
        map.verbatim(&["schema-version"]);
        map.require(&["starts-at"])
            .and_then(|n| reader::string(n, "starts-at", diags))
    } else {
        None
    };
    if let Some(status) = map.take(&["exec-status"]) {
        check_exec_status(status, dialect, diags);
    }
    let metadata = map.verbatim(&["metadata"]);
    let triggers_node = map.take(&["trigger-defs"]);
    let states_node = map.require(&["states"]);
    let span = map.span();
    map.finish(diags);

    let mut kebab = Kebab {
        cx: Lowering {
            diags,
            default_language: ExprLanguage::Spel,
            recovered: false,
        },
        dialect,
        functions: Vec::new(),
        triggers: Vec::new(),
    };
    let events = triggers_node
        .map(|n| {
            kebab.cx.event_definitions(
                n,
                &EventDefinitions {
                    list: "trigger-defs",
                    item: "trigger definition",
                    correlation: "correlation-token",
                },
            )
        })
        .unwrap_or_default();
    kebab.triggers = events.iter().map(|e| e.name.value.clone()).collect();
    let scope = states_node
        .map(|n| kebab.scope(n, starts_at.as_ref(), "the workflow", span))
        .unwrap_or_default();

    // The first draft has no id: the name identifies the workflow (and names its Rust types).
    let name = name.unwrap_or_else(|| Spanned::new(String::new(), span));
    let id = id.unwrap_or_else(|| {
        if second {
            Spanned::new(String::new(), span)
        } else {
            name.clone()
        }
    });
    Some(Workflow {
        file: file.to_owned(),
        dialect,
        id,
        name,
        version,
        description,
        expression_language: None,
        functions: kebab.functions,
        events,
        scope,
        metadata,
        extensions: None,
        schemas: crate::ir::DataSchemas::default(),
        span,
    })
}

/// `exec-status` is the status the runtime reports, so the file's value is only checked against
/// the draft's enumeration.
fn check_exec_status(node: &Node, dialect: Dialect, diags: &mut Diagnostics) {
    let values: &[(&str, ())] = match dialect {
        Dialect::First => &[
            ("SYS.Timeout", ()),
            ("SYS.Fail", ()),
            ("SYS.Success", ()),
            ("SYS.InvalidParameter", ()),
        ],
        _ => &[
            ("Success", ()),
            ("Fail", ()),
            ("Timeout", ()),
            ("Invalid", ()),
        ],
    };
    reader::enumerated(node, "exec-status", values, diags);
}

/// Lowering state of one kebab-case file.
struct Kebab<'d> {
    cx: Lowering<'d>,
    dialect: Dialect,
    /// Functions declared inline in actions, in order of first declaration.
    functions: Vec<FunctionDef>,
    /// The names of the trigger definitions, for event expressions.
    triggers: Vec<String>,
}

impl Kebab<'_> {
    fn second(&self) -> bool {
        self.dialect == Dialect::Second
    }

    /// A length of time: integer seconds (the first draft) or ISO 8601 (the second); both are
    /// accepted in both drafts, and a quoted whole number is seconds too.
    fn seconds_or_iso(&mut self, node: &Node, what: &str) -> Option<DurationSpec> {
        if let Some(seconds) = whole_seconds(node) {
            return Some(syntax::duration::parse_seconds(seconds, node.span));
        }
        match &node.kind {
            NodeKind::Scalar(s) if s.value == ScalarValue::Str => self.cx.duration(node, what),
            _ => {
                reader::wrong_type(
                    node,
                    what,
                    "a whole number of seconds or an ISO 8601 duration such as `PT15M`",
                    self.cx.diags,
                );
                None
            }
        }
    }

    /// `retry-interval`: integer seconds (first draft) or ISO 8601, `R5/PT15M` included.
    fn retry_interval(&mut self, node: &Node) -> Option<RetryInterval> {
        if let Some(seconds) = whole_seconds(node) {
            let duration = syntax::duration::parse_seconds(seconds, node.span);
            return Some(RetryInterval {
                text: duration.text,
                millis: duration.millis,
                repeat: None,
                span: node.span,
            });
        }
        match &node.kind {
            NodeKind::Scalar(s) if s.value == ScalarValue::Str => self.cx.retry_interval(node),
            _ => {
                reader::wrong_type(
                    node,
                    "retry-interval",
                    "a whole number of seconds or an ISO 8601 interval such as `R5/PT15M`",
                    self.cx.diags,
                );
                None
            }
        }
    }

    /// A filter path. `$` (the drafts' default: the whole data) is no filter at all.
    fn filter_path(&mut self, node: &Node, what: &str) -> Option<JsonPath> {
        if is_whole_data(node) {
            return None;
        }
        self.cx.path(node, what)
    }

    /// `next-state: <name>` as a transition.
    fn next_state(&mut self, node: &Node) -> Option<Transition> {
        let next = reader::target(node, "next-state", self.cx.diags)?;
        Some(Transition {
            span: next.span,
            next,
            condition: None,
            produce_event: None,
            compensate: false,
        })
    }
}

/// A transition to nowhere, standing for a `next-state` that is missing and already reported:
/// validation skips empty targets, so the state does not also count as having no exit.
fn placeholder_transition(span: crate::source::Span) -> Transition {
    Transition {
        next: Spanned::new(String::new(), span),
        condition: None,
        produce_event: None,
        compensate: false,
        span,
    }
}

/// A whole number of seconds: an integer, or a string of digits.
fn whole_seconds(node: &Node) -> Option<u64> {
    match &node.kind {
        NodeKind::Scalar(s) => match s.value {
            ScalarValue::Int(i) => u64::try_from(i).ok(),
            ScalarValue::UInt(u) => Some(u),
            ScalarValue::Str
                if !s.text.trim().is_empty()
                    && s.text.trim().bytes().all(|b| b.is_ascii_digit()) =>
            {
                s.text.trim().parse().ok()
            }
            _ => None,
        },
        _ => None,
    }
}

/// True for a path of exactly `$`.
fn is_whole_data(node: &Node) -> bool {
    matches!(&node.kind, NodeKind::Scalar(s) if s.value == ScalarValue::Str && s.text.trim() == "$")
}

/// Reports a key this kind of state (or this draft) cannot have.
fn not_allowed(
    diags: &mut Diagnostics,
    span: crate::source::Span,
    message: impl Into<String>,
    help: impl Into<String>,
) {
    diags
        .error(Code::NOT_ALLOWED_HERE, span, message)
        .help(help);
}

#[cfg(test)]
mod tests;
