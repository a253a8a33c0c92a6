//! EVENT states: each `events` entry waits for its `event-expression` over trigger names, then
//! runs its actions and takes its own `next-state`; its `timeout` takes that `next-state`
//! without running the actions.

use super::states::Lowered;
use super::{Kebab, not_allowed};
use crate::diagnostic::Code;
use crate::ir::{ActionMode, EventActions, EventExpr, Expr, ExprLanguage, Operand, TaskKind};
use crate::parse::reader::{self, MapReader};
use crate::parse::yaml::Node;
use crate::source::{Span, Spanned};
use crate::syntax;

const EXPRESSION_HELP: &str = "combine trigger names with `and`, `or` and parentheses, such as \
                               `(BidEvent or OfferEvent) and ApprovalEvent`";

impl Kebab<'_> {
    pub(super) fn event_state(&mut self, map: &mut MapReader<'_>, ends: bool) -> Lowered {
        let mut retries = Vec::new();
        // Absent, validation reports it in this draft's words.
        let events_actions = map
            .take(&["events"])
            .map(|n| self.events_entries(n, ends, &mut retries))
            .unwrap_or_default();
        Lowered {
            kind: TaskKind::Event {
                exclusive: true,
                events_actions,
                timeout: None,
            },
            // Each entry has its own `next-state`.
            transition: None,
            retries,
            end: None,
        }
    }

    fn events_entries(
        &mut self,
        node: &Node,
        ends: bool,
        retries: &mut Vec<(crate::source::Span, crate::ir::ErrorHandler)>,
    ) -> Vec<EventActions> {
        let mut out = Vec::new();
        for item in reader::list(node, "events", self.cx.diags) {
            let Some(mut map) = MapReader::new(item, "events entry", self.cx.diags) else {
                continue;
            };
            let expression = map
                .require(&["event-expression"])
                .and_then(|n| reader::string(n, "event-expression", self.cx.diags));
            let timeout = map
                .take(&["timeout"])
                .and_then(|n| self.seconds_or_iso(n, "timeout"));
            let action_mode = map
                .take(&["action-mode"])
                .map_or(ActionMode::Sequential, |n| self.action_mode(n));
            let actions = map
                .require(&["actions"])
                .map(|n| self.actions(n, retries))
                .unwrap_or_default();
            let (event_data_filter, event_results_path) = map
                .take(&["filter"])
                .map(|n| self.event_filter(n))
                .unwrap_or_default();
            let transition = self.state_next(&mut map, item, ends, "events entry");
            let span = map.span();
            map.finish(self.cx.diags);
            let Some(expression) = expression else {
                continue;
            };
            let (condition, event_refs) = self.event_expression(&expression);
            if event_refs.is_empty() {
                // Nothing to wait for; the expression's problem is reported.
                continue;
            }
            out.push(EventActions {
                event_refs,
                condition,
                action_mode,
                actions,
                event_data_filter,
                event_results_path,
                transition,
                timeout,
                span,
            });
        }
        out
    }

    /// An events entry's filter: input-path selects from the event data, result-path places it
    /// in the state data. An event has no output of its own.
    fn event_filter(
        &mut self,
        node: &Node,
    ) -> (Option<crate::ir::JsonPath>, Option<crate::ir::JsonPath>) {
        let Some(mut map) = MapReader::new(node, "event filter", self.cx.diags) else {
            return (None, None);
        };
        let input = map
            .take(super::actions::INPUT_PATH)
            .and_then(|n| self.filter_path(n, "input-path"));
        let results = map
            .take(super::actions::RESULT_PATH)
            .and_then(|n| self.filter_path(n, "result-path"));
        if let Some(entry) = map.take_entry(super::actions::OUTPUT_PATH)
            && !super::is_whole_data(&entry.value)
        {
            not_allowed(
                self.cx.diags,
                entry.key_span,
                "an event filter has no `output-path`: the event's data goes into the state data",
                "select from the event's data with `input-path`, place it with `result-path`, \
                 and filter what the state passes on with the state's own `filter`",
            );
        }
        map.finish(self.cx.diags);
        (input, results)
    }

    /// The condition an `event-expression` states, and the trigger names it mentions (in
    /// order, once each).
    fn event_expression(
        &mut self,
        expression: &Spanned<String>,
    ) -> (Option<EventExpr>, Vec<Spanned<String>>) {
        let aliases = self.trigger_aliases();
        let body = substitute(&expression.value, &aliases);
        let parsed = syntax::expr::parse(ExprLanguage::Spel, &body, expression.span, self.cx.diags);
        let unalias = |name: &str| {
            aliases
                .iter()
                .find(|(_, alias)| alias == name)
                .map_or_else(|| name.to_owned(), |(trigger, _)| trigger.clone())
        };
        if parsed.ast == Expr::Invalid {
            // Already reported. The trigger names written in it still count as waited for, so
            // that nothing else is reported because of this one mistake.
            let refs = self.mentioned_triggers(&expression.value, expression.span);
            return (None, refs);
        }
        match event_expr(&parsed.ast, expression.span, &unalias) {
            Ok(condition) => {
                let mut refs: Vec<Spanned<String>> = Vec::new();
                for name in condition.events() {
                    if !refs.iter().any(|r| r.value == name.value) {
                        refs.push(name.clone());
                    }
                }
                (Some(condition), refs)
            }
            Err(found) => {
                self.cx
                    .diags
                    .error(
                        Code::BAD_EVENT_CONDITION,
                        expression.span,
                        format!(
                            "`event-expression` `{}` is not over trigger names: it has {found}, \
                             which cannot be waited for",
                            expression.value
                        ),
                    )
                    .help(EXPRESSION_HELP);
                let refs = self.mentioned_triggers(&expression.value, expression.span);
                (None, refs)
            }
        }
    }

    /// `(trigger, alias)` for each trigger name that is not a plain identifier (`order-placed`):
    /// the alias replaces its other characters with `_`, keeping the length so that positions
    /// in messages stay right.
    fn trigger_aliases(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for trigger in &self.triggers {
            if is_identifier(trigger) {
                continue;
            }
            let alias: String = trigger
                .chars()
                .map(|c| {
                    if c.is_alphanumeric() || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let taken = self.triggers.contains(&alias) || out.iter().any(|(_, a)| *a == alias);
            if is_identifier(&alias) && !taken {
                out.push((trigger.clone(), alias));
            }
        }
        out
    }

    /// The trigger names that appear as words of `text`, in order of definition.
    fn mentioned_triggers(&self, text: &str, span: Span) -> Vec<Spanned<String>> {
        let words: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
            .collect();
        self.triggers
            .iter()
            .filter(|t| words.contains(&t.as_str()))
            .map(|t| Spanned::new(t.clone(), span))
            .collect()
    }
}

/// The event condition an expression states, or what in it is not one.
fn event_expr(
    expr: &Expr,
    span: Span,
    unalias: &dyn Fn(&str) -> String,
) -> Result<EventExpr, &'static str> {
    match expr {
        Expr::Truthy(Operand::Name(name)) => {
            Ok(EventExpr::Event(Spanned::new(unalias(name), span)))
        }
        Expr::And(a, b) => Ok(EventExpr::All(flatten(
            [event_expr(a, span, unalias)?, event_expr(b, span, unalias)?],
            true,
        ))),
        Expr::Or(a, b) => Ok(EventExpr::Any(flatten(
            [event_expr(a, span, unalias)?, event_expr(b, span, unalias)?],
            false,
        ))),
        Expr::Not(_) => Err("`not`"),
        Expr::Compare { .. } => Err("a comparison"),
        Expr::Matches { .. } => Err("a `matches` test"),
        Expr::Truthy(Operand::Path(_)) => Err("a JSONPath"),
        Expr::Truthy(Operand::Literal(_)) => Err("a literal value"),
        Expr::Invalid => Err("a part that does not parse"),
    }
}

/// `a and (b and c)` is `All[a, b, c]`.
fn flatten(items: [EventExpr; 2], all: bool) -> Vec<EventExpr> {
    let mut out = Vec::new();
    for item in items {
        match item {
            EventExpr::All(inner) if all => out.extend(inner),
            EventExpr::Any(inner) if !all => out.extend(inner),
            other => out.push(other),
        }
    }
    out
}

/// A name the expression parser reads as one bare name.
fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphabetic() || c == '_' || c.is_ascii_digit())
}

/// `text` with each whole-word occurrence of a trigger replaced by its alias (longest names
/// first, so that `a-b-c` is not taken for `a-b`).
fn substitute(text: &str, aliases: &[(String, String)]) -> String {
    if aliases.is_empty() {
        return text.to_owned();
    }
    let mut ordered: Vec<&(String, String)> = aliases.iter().collect();
    ordered.sort_by_key(|(trigger, _)| std::cmp::Reverse(trigger.len()));
    let chars: Vec<char> = text.chars().collect();
    let boundary = |i: Option<&char>| i.is_none_or(|c| c.is_whitespace() || *c == '(' || *c == ')');
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    'outer: while i < chars.len() {
        if i == 0 || boundary(chars.get(i - 1)) {
            for (trigger, alias) in &ordered {
                let len = trigger.chars().count();
                let matches = chars.len() >= i + len
                    && chars[i..i + len].iter().copied().eq(trigger.chars())
                    && boundary(chars.get(i + len));
                if matches {
                    out.push_str(alias);
                    i += len;
                    continue 'outer;
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}
