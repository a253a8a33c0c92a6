//! EVENT states: each `events` entry waits for its `event-expression` over trigger names, then
//! runs its actions and takes its own `next-state`; its `timeout` takes that `next-state`
//! without running the actions.

use super::states::Lowered;
use super::{Kebab, not_allowed};
use crate::ir::{ActionMode, EventActions, EventExpr, TaskKind};
use crate::parse::event_condition;
use crate::parse::reader::{self, MapReader};
use crate::parse::yaml::Node;
use crate::source::Spanned;

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
        let wording = event_condition::Wording {
            what: "`event-expression`",
            help: EXPRESSION_HELP,
        };
        event_condition::read(&mut self.cx, expression, &self.triggers, &wording)
    }
}
