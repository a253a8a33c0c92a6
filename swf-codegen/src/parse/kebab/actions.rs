//! Actions: the function each one declares inline, its timeout, its retry and its filter.

use super::Kebab;
use crate::diagnostic::Code;
use crate::ir::{
    Action, ActionMode, ErrorHandler, ExprLanguage, FunctionDef, FunctionRef, JsonPath, Retry,
};
use crate::parse::reader::{self, MapReader};
use crate::parse::yaml::{Node, NodeKind};
use crate::source::{Span, Spanned};
use crate::syntax;

/// The filter keys, in the kebab-case spelling and the drafts' own (`InputPath`).
pub(super) const INPUT_PATH: &[&str] = &["input-path", "InputPath"];
pub(super) const RESULT_PATH: &[&str] = &["result-path", "ResultPath"];
pub(super) const OUTPUT_PATH: &[&str] = &["output-path", "OutputPath"];

impl Kebab<'_> {
    pub(super) fn action_mode(&mut self, node: &Node) -> ActionMode {
        reader::enumerated(
            node,
            "action-mode",
            &[
                ("SEQUENTIAL", ActionMode::Sequential),
                ("PARALLEL", ActionMode::Parallel),
            ],
            self.cx.diags,
        )
        .map_or(ActionMode::Sequential, |m| m.value)
    }

    /// The actions of a state or events entry; the handlers taking their retries' `next-state`
    /// go to `retries`, with the action's position.
    pub(super) fn actions(
        &mut self,
        node: &Node,
        retries: &mut Vec<(Span, ErrorHandler)>,
    ) -> Vec<Action> {
        reader::list(node, "actions", self.cx.diags)
            .iter()
            .filter_map(|item| self.action(item, retries))
            .collect()
    }

    fn action(&mut self, node: &Node, retries: &mut Vec<(Span, ErrorHandler)>) -> Option<Action> {
        let mut map = MapReader::new(node, "action", self.cx.diags)?;
        let function = map.require(&["function"]).and_then(|n| self.function(n));
        let timeout = map
            .take(&["timeout"])
            .and_then(|n| self.seconds_or_iso(n, "timeout"));
        // The action retries itself; once spent, the handler takes the retry's `next-state`.
        let mut retry = Vec::new();
        if let Some((definition, handler)) = map.take(&["retry"]).and_then(|n| self.retry(n)) {
            retry.push(definition);
            retries.push((map.span(), handler));
        }
        let (input_path, results_path, result_selection) = match map.take(&["filter"]) {
            Some(filter) => self.action_filter(filter),
            None => (None, None, None),
        };
        let span = map.span();
        map.finish(self.cx.diags);
        Some(Action {
            name: None,
            function,
            timeout,
            input_path,
            result_selection,
            results_path,
            retry,
            span,
        })
    }

    /// `function: {name, type, parameters}`: declares the function (the first declaration of a
    /// name is the definition) and calls it.
    fn function(&mut self, node: &Node) -> Option<FunctionRef> {
        let mut map = MapReader::new(node, "function", self.cx.diags)?;
        let name = map
            .require(&["name"])
            .and_then(|n| reader::string(n, "name", self.cx.diags));
        let kind = map
            .require(&["type"])
            .and_then(|n| reader::string(n, "type", self.cx.diags));
        let parameters = map.take(&["parameters"]).and_then(|n| match n.kind {
            NodeKind::Map(_) => Some(self.cx.param(n)),
            _ => {
                reader::wrong_type(n, "parameters", "a mapping", self.cx.diags);
                None
            }
        });
        let span = map.span();
        map.finish(self.cx.diags);
        let name = name?;
        self.declare_function(&name, kind, span);
        Some(FunctionRef {
            ref_name: name,
            parameters,
            span,
        })
    }

    /// Records an inline declaration. Declaring a name again is fine when the type agrees;
    /// another type would make one name stand for two functions.
    fn declare_function(
        &mut self,
        name: &Spanned<String>,
        kind: Option<Spanned<String>>,
        span: crate::source::Span,
    ) {
        let Some(first) = self.functions.iter().find(|f| f.name.value == name.value) else {
            self.functions.push(FunctionDef {
                name: name.clone(),
                resource: None,
                kind: kind.map(|k| k.value),
                metadata: None,
                span,
            });
            return;
        };
        let (Some(first_kind), Some(kind)) = (&first.kind, kind) else {
            return;
        };
        if first_kind.eq_ignore_ascii_case(&kind.value) {
            return;
        }
        let line = first.span.line;
        let first_kind = first_kind.clone();
        self.cx
            .diags
            .error(
                Code::DUPLICATE_DEFINITION,
                kind.span,
                format!(
                    "function `{}` is declared again with type `{}`, but its first declaration \
                     (line {line}) has type `{first_kind}`",
                    name.value, kind.value
                ),
            )
            .help(format!(
                "functions are declared inline and identified by name: use type `{first_kind}` \
                 here, or give this function another name"
            ));
    }

    /// `retry: {match, retry-interval, max-retry, next-state}`: retried while the error's name
    /// is `match`; once the attempts are spent, the handler takes `next-state`.
    fn retry(&mut self, node: &Node) -> Option<(Retry, ErrorHandler)> {
        let mut map = MapReader::new(node, "retry definition", self.cx.diags)?;
        let matched = map
            .require(&["match"])
            .and_then(|n| reader::string(n, "match", self.cx.diags));
        let interval = map
            .take(&["retry-interval"])
            .and_then(|n| self.retry_interval(n));
        let max_retry = map
            .take(&["max-retry"])
            .and_then(|n| reader::unsigned(n, "max-retry", self.cx.diags))
            .map(|n| u32::try_from(n.value).unwrap_or(u32::MAX));
        let next = match map.require(&["next-state"]) {
            Some(n) => self.next_state(n),
            None => Some(super::placeholder_transition(map.span())),
        };
        let span = map.span();
        map.finish(self.cx.diags);
        let condition = matched.map(|m| {
            let body = format!("name eq '{}'", m.value.replace('\'', "''"));
            syntax::expr::parse(ExprLanguage::Spel, &body, m.span, self.cx.diags)
        });
        // `max-retry` defaults to 0 (the schemas), except that `R5/PT15M` itself says how many
        // times to repeat.
        let max_attempts = max_retry
            .or_else(|| interval.as_ref().and_then(|i| i.repeat))
            .unwrap_or(0);
        let retry = Retry {
            condition: condition.clone(),
            interval,
            multiplier: None,
            max_attempts,
            span,
        };
        let handler = ErrorHandler {
            condition,
            error_data_filter: None,
            error_results_path: None,
            output_path: None,
            transition: next,
            action: None,
            span,
        };
        Some((retry, handler))
    }

    /// An action's filter: `(input_path, results_path, result_selection)`.
    fn action_filter(
        &mut self,
        node: &Node,
    ) -> (Option<JsonPath>, Option<JsonPath>, Option<JsonPath>) {
        let Some(mut map) = MapReader::new(node, "action filter", self.cx.diags) else {
            return (None, None, None);
        };
        let input = map
            .take(INPUT_PATH)
            .and_then(|n| self.filter_path(n, "input-path"));
        let results = map
            .take(RESULT_PATH)
            .and_then(|n| self.filter_path(n, "result-path"));
        let output = map
            .take(OUTPUT_PATH)
            .and_then(|n| self.filter_path(n, "output-path"));
        map.finish(self.cx.diags);
        (input, results, output)
    }
}
