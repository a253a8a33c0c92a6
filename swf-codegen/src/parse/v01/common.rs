//! Definitions several states share: transitions, conditions, filters, actions with their
//! retries, and error handlers.

use super::V01;
use crate::diagnostic::Code;
use crate::ir::{
    Action, ActionMode, End, EndKind, ErrorHandler, Expression, FunctionRef, JsonPath, Retry,
    Transition,
};
use crate::parse::reader::{self, MapReader};
use crate::parse::yaml::{Node, NodeKind};
use crate::source::{Span, Spanned};

/// A `filter: {inputPath, resultPath, outputPath}` as written. The keys' positions are kept for
/// the places where one of them is not allowed.
#[derive(Debug, Default)]
pub(super) struct Filter {
    pub input: Option<JsonPath>,
    pub result: Option<JsonPath>,
    pub result_key: Option<Span>,
    pub output: Option<JsonPath>,
    pub output_key: Option<Span>,
}

/// The error handlers that the transitions of a state's action retries become, each with the
/// position of its action (the retries themselves stay on their actions).
#[derive(Debug, Default)]
pub(super) struct Retries {
    /// One per retry with a `transition`: once that action's retries are spent, onError decides
    /// (SEMANTICS.md), and this handler, first in the state's `onError`, takes its transition.
    pub handlers: Vec<(Span, ErrorHandler)>,
}

/// A `condition` as written: `{expressionLanguage, body}`, or a bare string (the body).
pub(super) struct ConditionText {
    pub language: Option<Spanned<String>>,
    pub body: Spanned<String>,
}

impl V01<'_> {
    /// `transition: {nextState, condition}`; a bare string names the next state.
    pub(super) fn transition(&mut self, node: &Node) -> Option<Transition> {
        if let NodeKind::Scalar(_) = node.kind {
            let next = reader::target(node, "transition", self.cx.diags)?;
            return Some(Transition {
                next,
                condition: None,
                produce_event: None,
                compensate: false,
                span: node.span,
            });
        }
        let mut map = MapReader::new(node, "transition", self.cx.diags)?;
        let next = map
            .require(&["nextState"])
            .and_then(|n| reader::target(n, "nextState", self.cx.diags));
        let condition = map.take(&["condition"]).and_then(|n| self.expression(n));
        map.finish(self.cx.diags);
        // Kept with an empty target when `nextState` is missing: the state still has a
        // transition, so validation reports nothing more about it.
        Some(Transition {
            next: next.unwrap_or_else(|| Spanned::new(String::new(), node.span)),
            condition,
            produce_event: None,
            compensate: false,
            span: node.span,
        })
    }

    /// `end: true` is the default end; `end: false` is no end.
    pub(super) fn end(&mut self, node: &Node) -> Option<End> {
        reader::boolean(node, "end", self.cx.diags)
            .filter(|end| *end)
            .map(|_| End {
                kind: EndKind::Default,
                status: None,
                compensate: false,
                span: node.span,
            })
    }

    pub(super) fn condition_text(&mut self, node: &Node) -> Option<ConditionText> {
        if let NodeKind::Scalar(_) = node.kind {
            let body = reader::string(node, "condition", self.cx.diags)?;
            return Some(ConditionText {
                language: None,
                body,
            });
        }
        let mut map = MapReader::new(node, "condition", self.cx.diags)?;
        let language = map
            .take(&["expressionLanguage"])
            .and_then(|n| reader::string(n, "expressionLanguage", self.cx.diags));
        let body = map
            .require(&["body"])
            .and_then(|n| reader::string(n, "body", self.cx.diags));
        map.finish(self.cx.diags);
        Some(ConditionText {
            language,
            body: body?,
        })
    }

    /// A condition in its language (the workflow's `expressionLanguage` when it names none).
    pub(super) fn expression(&mut self, node: &Node) -> Option<Expression> {
        let text = self.condition_text(node)?;
        self.cx.expression_in(text.language.as_ref(), &text.body)
    }

    pub(super) fn filter(&mut self, node: &Node, what: &'static str) -> Filter {
        let Some(mut map) = MapReader::new(node, what, self.cx.diags) else {
            return Filter::default();
        };
        // The schema requires `inputPath`, but the draft's own relay example has only an
        // `outputPath`: every path is optional.
        let input = map
            .take(&["inputPath"])
            .and_then(|n| self.cx.path(n, "inputPath"));
        let result_entry = map.take_entry(&["resultPath"]);
        let result = result_entry.and_then(|e| self.cx.path(&e.value, "resultPath"));
        let output_entry = map.take_entry(&["outputPath"]);
        let output = output_entry.and_then(|e| self.cx.path(&e.value, "outputPath"));
        map.finish(self.cx.diags);
        Filter {
            input,
            result,
            result_key: result_entry.map(|e| e.key_span),
            output,
            output_key: output_entry.map(|e| e.key_span),
        }
    }

    pub(super) fn action_mode(&mut self, node: Option<&Node>) -> ActionMode {
        node.and_then(|n| {
            reader::enumerated(
                n,
                "actionMode",
                &[
                    ("Sequential", ActionMode::Sequential),
                    ("Parallel", ActionMode::Parallel),
                ],
                self.cx.diags,
            )
        })
        .map_or(ActionMode::Sequential, |m| m.value)
    }

    pub(super) fn actions(&mut self, node: &Node, retries: &mut Retries) -> Vec<Action> {
        reader::list(node, "actions", self.cx.diags)
            .iter()
            .filter_map(|item| self.action(item, retries))
            .collect()
    }

    /// `{functionref: {refname, parameters}, timeout, retry, filter}`. The action retries
    /// itself; the handlers its retries' transitions become go to `retries`.
    fn action(&mut self, node: &Node, retries: &mut Retries) -> Option<Action> {
        let mut map = MapReader::new(node, "action", self.cx.diags)?;
        let function = map
            .require(&["functionref"])
            .and_then(|n| self.function_ref(n));
        let timeout = map
            .take(&["timeout"])
            .and_then(|n| self.cx.duration(n, "timeout"));
        let mut retry = Vec::new();
        if let Some(list) = map.take(&["retry"]) {
            for (definition, handler) in self.retries(list) {
                retry.push(definition);
                if let Some(handler) = handler {
                    retries.handlers.push((map.span(), handler));
                }
            }
        }
        let filter = map
            .take(&["filter"])
            .map(|n| self.filter(n, "action filter"))
            .unwrap_or_default();
        let span = map.span();
        map.finish(self.cx.diags);
        Some(Action {
            name: None,
            function,
            timeout,
            input_path: filter.input,
            result_selection: filter.output,
            results_path: filter.result,
            retry,
            span,
        })
    }

    fn function_ref(&mut self, node: &Node) -> Option<FunctionRef> {
        let mut map = MapReader::new(node, "functionref", self.cx.diags)?;
        let ref_name = map
            .require(&["refname"])
            .and_then(|n| reader::string(n, "refname", self.cx.diags));
        let parameters = map.take(&["parameters"]).map(|n| self.cx.param(n));
        map.finish(self.cx.diags);
        Some(FunctionRef {
            ref_name: ref_name?,
            parameters,
            span: node.span,
        })
    }

    /// `retry: [{condition, interval, max, transition}]`. `max` defaults to 0: no retries, only
    /// the transition once the condition matches.
    fn retries(&mut self, node: &Node) -> Vec<(Retry, Option<ErrorHandler>)> {
        let mut out = Vec::new();
        for item in reader::list(node, "retry", self.cx.diags) {
            let Some(mut map) = MapReader::new(item, "retry definition", self.cx.diags) else {
                continue;
            };
            let condition = map.require(&["condition"]).and_then(|n| self.expression(n));
            let interval = map
                .take(&["interval"])
                .and_then(|n| self.cx.retry_interval(n));
            let max_attempts = map
                .take(&["max"])
                .and_then(|n| reader::unsigned(n, "max", self.cx.diags))
                .map_or(0, |n| u32::try_from(n.value).unwrap_or(u32::MAX));
            let transition = map.take(&["transition"]).and_then(|n| self.transition(n));
            let span = map.span();
            map.finish(self.cx.diags);
            // A retry whose condition is missing or unreadable is reported above and left out,
            // so that nothing reports it again.
            let Some(condition) = condition else { continue };
            let condition = Some(condition);
            let handler = transition.map(|transition| ErrorHandler {
                condition: condition.clone(),
                error_data_filter: None,
                error_results_path: None,
                output_path: None,
                transition: Some(transition),
                action: None,
                span,
            });
            let retry = Retry {
                condition,
                interval,
                multiplier: None,
                max_attempts,
                span,
            };
            out.push((retry, handler));
        }
        out
    }

    /// `onError: [{condition, filter, transition}]`, on a state or on the workflow.
    pub(super) fn error_handlers(&mut self, node: &Node) -> Vec<ErrorHandler> {
        let mut out = Vec::new();
        for item in reader::list(node, "onError", self.cx.diags) {
            let Some(mut map) = MapReader::new(item, "error definition", self.cx.diags) else {
                continue;
            };
            let condition = map.require(&["condition"]).and_then(|n| self.expression(n));
            let filter = map
                .take(&["filter"])
                .map(|n| self.filter(n, "error filter"))
                .unwrap_or_default();
            let transition = map
                .require(&["transition"])
                .and_then(|n| self.transition(n));
            let span = map.span();
            map.finish(self.cx.diags);
            // A handler whose condition or transition is missing or unreadable is reported above
            // and left out, so that nothing reports it again.
            let (Some(condition), Some(transition)) = (condition, transition) else {
                continue;
            };
            out.push(ErrorHandler {
                condition: Some(condition),
                error_data_filter: filter.input,
                error_results_path: filter.result,
                output_path: filter.output,
                transition: Some(transition),
                action: None,
                span,
            });
        }
        out
    }

    /// E0132 at `key`: `what` is not allowed here, and `help` says what to do instead.
    pub(super) fn not_allowed(&mut self, key: Span, what: String, help: &str) {
        self.cx
            .diags
            .error(Code::NOT_ALLOWED_HERE, key, what)
            .help(help);
    }
}
