//! EVENT states: `eventActions` entries, each waiting for a condition over trigger names
//! (`(event1 or event2) and event3`), then running its actions and taking its transition.

use super::V01;
use super::common::Retries;
use crate::diagnostic::Code;
use crate::ir::{EventActions, EventExpr, ExprLanguage, TaskKind};
use crate::parse::event_condition;
use crate::parse::reader::{self, MapReader};
use crate::parse::yaml::Node;
use crate::source::Spanned;
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
        let wording = event_condition::Wording {
            what: "event condition",
            help: EVENT_CONDITION_HELP,
        };
        event_condition::read(&mut self.cx, &text.body, &self.triggers, &wording)
    }
}
