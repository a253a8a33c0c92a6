//! EVENT states: `eventActions` entries, each waiting for a condition over trigger names
//! (`(event1 or event2) and event3`), then running its actions and taking its transition.

use super::V01;
use super::common::Retries;
use crate::diagnostic::Code;
use crate::ir::{EventActions, EventExpr, Expr, ExprLanguage, Operand, TaskKind};
use crate::parse::reader::{self, MapReader};
use crate::parse::yaml::Node;
use crate::source::{Span, Spanned};
use crate::syntax;

const EVENT_CONDITION_HELP: &str = "an event condition combines trigger names with `and`, `or` \
                                    and parentheses, such as `(event1 or event2) and event3`; \
                                    to test the events' data, add a SWITCH state after this one";

impl V01<'_> {
    /// The entries are exclusive (the first whose condition holds runs) and carry their own
    /// transition and timeout, so the task has neither.
    pub(super) fn event_state(
        &mut self,
        map: &mut MapReader<'_>,
        retries: &mut Retries,
    ) -> TaskKind {
        let events_actions = map
            .take(&["eventActions"])
            .map(|n| self.event_actions(n, retries))
            .unwrap_or_default();
        TaskKind::Event {
            exclusive: true,
            events_actions,
            timeout: None,
        }
    }

    fn event_actions(&mut self, node: &Node, retries: &mut Retries) -> Vec<EventActions> {
        let mut out = Vec::new();
        for item in reader::list(node, "eventActions", self.cx.diags) {
            let Some(mut map) = MapReader::new(item, "eventActions entry", self.cx.diags) else {
                continue;
            };
            let (condition, event_refs) = map
                .require(&["condition"])
                .map(|n| self.event_condition(n))
                .unwrap_or_default();
            let timeout = map
                .take(&["timeout"])
                .and_then(|n| self.cx.duration(n, "timeout"));
            let action_mode = self.action_mode(map.take(&["actionMode"]));
            let actions = map
                .take(&["actions"])
                .map(|n| self.actions(n, retries))
                .unwrap_or_default();
            let filter = map
                .take(&["filter"])
                .map(|n| self.filter(n, "event filter"))
                .unwrap_or_default();
            if let Some(key) = filter.output_key {
                self.not_allowed(
                    key,
                    "an event filter has no `outputPath`".to_owned(),
                    "use `inputPath` to select what of the event data is kept, and \
                     `resultPath` for where it goes in the state's data",
                );
            }
            let transition = map.take(&["transition"]).and_then(|n| self.transition(n));
            let span = map.span();
            map.finish(self.cx.diags);
            out.push(EventActions {
                event_refs,
                condition,
                action_mode,
                actions,
                event_data_filter: filter.input,
                event_results_path: filter.result,
                transition,
                timeout,
                span,
            });
        }
        out
    }

    /// The condition as an [`EventExpr`], and the trigger names it mentions (in order of
    /// appearance, each once). A condition that is not over names alone is reported; the names
    /// it does mention are still returned, so that they are checked against the triggers.
    fn event_condition(&mut self, node: &Node) -> (Option<EventExpr>, Vec<Spanned<String>>) {
        let Some(text) = self.condition_text(node) else {
            return (None, Vec::new());
        };
        if let Some(language) = &text.language {
            match syntax::expr::parse_language(&language.value, language.span, self.cx.diags) {
                Some(ExprLanguage::Spel) => {}
                Some(_) => {
                    self.cx
                        .diags
                        .error(
                            Code::BAD_EVENT_CONDITION,
                            language.span,
                            format!(
                                "an event condition is written in spel, not `{}`",
                                language.value
                            ),
                        )
                        .help(format!(
                            "write `expressionLanguage: spel` or leave it out; {EVENT_CONDITION_HELP}"
                        ));
                    return (None, Vec::new());
                }
                None => return (None, Vec::new()),
            }
        }
        // Always spel, whatever the workflow's default language: the draft's event conditions
        // are spel-style combinations of names.
        let body = &text.body;
        let parsed = syntax::expr::parse(ExprLanguage::Spel, &body.value, body.span, self.cx.diags);
        let mut names = Vec::new();
        leaf_names(&parsed.ast, body.span, &mut names);
        let mut refs: Vec<Spanned<String>> = Vec::new();
        for name in names {
            if !refs.iter().any(|r| r.value == name.value) {
                refs.push(name);
            }
        }
        match event_expr(&parsed.ast, body.span) {
            Ok(expr) => (Some(expr), refs),
            Err(NotEvents::Invalid) => (None, refs),
            Err(NotEvents::Found(what)) => {
                self.cx
                    .diags
                    .error(
                        Code::BAD_EVENT_CONDITION,
                        body.span,
                        format!(
                            "event condition `{}` is not over trigger names alone: {what} cannot \
                             be waited for",
                            syntax::excerpt(&body.value)
                        ),
                    )
                    .help(EVENT_CONDITION_HELP);
                (None, refs)
            }
        }
    }
}

/// Why an expression is not a condition over event names.
enum NotEvents {
    /// It did not parse; the parser reported it.
    Invalid,
    /// It contains this construct, described for the message.
    Found(&'static str),
}

/// `a` → `Event`, `and` → `All`, `or` → `Any`, nested lists of the same kind flattened. Every
/// name is positioned at the condition's body: the parser keeps no positions inside it.
fn event_expr(ast: &Expr, span: Span) -> Result<EventExpr, NotEvents> {
    match ast {
        Expr::Truthy(Operand::Name(name)) => Ok(EventExpr::Event(Spanned::new(name.clone(), span))),
        Expr::And(a, b) => {
            let mut items = Vec::new();
            for side in [a, b] {
                match event_expr(side, span)? {
                    EventExpr::All(inner) => items.extend(inner),
                    other => items.push(other),
                }
            }
            Ok(EventExpr::All(items))
        }
        Expr::Or(a, b) => {
            let mut items = Vec::new();
            for side in [a, b] {
                match event_expr(side, span)? {
                    EventExpr::Any(inner) => items.extend(inner),
                    other => items.push(other),
                }
            }
            Ok(EventExpr::Any(items))
        }
        Expr::Not(_) => Err(NotEvents::Found("`not`")),
        Expr::Compare { .. } => Err(NotEvents::Found("a comparison")),
        Expr::Matches { .. } => Err(NotEvents::Found("`matches`")),
        Expr::Truthy(Operand::Path(_)) => Err(NotEvents::Found("a JSONPath")),
        Expr::Truthy(Operand::Literal(_)) => Err(NotEvents::Found("a literal value")),
        Expr::Invalid => Err(NotEvents::Invalid),
    }
}

/// The names that stand alone as conditions (not the operands of comparisons), in order.
fn leaf_names(ast: &Expr, span: Span, out: &mut Vec<Spanned<String>>) {
    match ast {
        Expr::Truthy(Operand::Name(name)) => out.push(Spanned::new(name.clone(), span)),
        Expr::And(a, b) | Expr::Or(a, b) => {
            leaf_names(a, span, out);
            leaf_names(b, span, out);
        }
        Expr::Not(inner) => leaf_names(inner, span, out),
        Expr::Compare { .. } | Expr::Matches { .. } | Expr::Truthy(_) | Expr::Invalid => {}
    }
}
