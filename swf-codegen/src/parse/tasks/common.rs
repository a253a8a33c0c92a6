//! Definitions shared by several task types: transitions, ends, starts, filters, expressions,
//! retries, error handlers and actions.

use super::Lowering;
use crate::diagnostic::Code;
use crate::ir::{
    Action, ActionMode, End, EndKind, ErrorHandler, Expression, FunctionRef, JsonPath, ProduceData,
    ProduceEvent, Retry, Start, StartKind, TaskDataFilter, Transition,
};
use crate::parse::reader::{self, MapReader};
use crate::parse::yaml::{Node, NodeKind};
use crate::source::Spanned;
use crate::syntax;

pub(super) const NEXT: &[&str] = &["nextTask", "nextState"];

impl Lowering<'_> {
    /// `transition: {nextTask, expression, produceEvent}`; a bare string names the next task.
    pub(super) fn transition(&mut self, node: &Node) -> Option<Transition> {
        if let NodeKind::Scalar(_) = node.kind {
            let next = reader::target(node, "transition", self.diags)?;
            return Some(Transition {
                next,
                condition: None,
                produce_event: None,
                compensate: false,
                span: node.span,
            });
        }
        let mut map = MapReader::new(node, "transition", self.diags)?;
        let next = map
            .require(NEXT)
            .and_then(|n| reader::target(n, "nextTask", self.diags));
        let condition = map.take(&["expression"]).and_then(|n| self.expression(n));
        let produce_event = map
            .take(&["produceEvent"])
            .and_then(|n| self.produce_event(n));
        let compensate = self.compensate_flag(&mut map);
        map.finish(self.diags);
        // Kept with an empty target when `nextTask` is missing: the task still has a transition,
        // so validation reports nothing more about it.
        Some(Transition {
            next: next.unwrap_or_else(|| Spanned::new(String::new(), node.span)),
            condition,
            produce_event,
            compensate,
            span: node.span,
        })
    }

    /// `end: {kind: default|terminate|event}`; `end: true` (later drafts) means the default end.
    pub(super) fn end(&mut self, node: &Node) -> Option<End> {
        if let NodeKind::Scalar(_) = node.kind {
            return reader::boolean(node, "end", self.diags)
                .filter(|end| *end)
                .map(|_| End {
                    kind: EndKind::Default,
                    status: None,
                    compensate: false,
                    span: node.span,
                });
        }
        let mut map = MapReader::new(node, "end definition", self.diags)?;
        #[derive(Clone, Copy, PartialEq)]
        enum Kind {
            Default,
            Terminate,
            Event,
        }
        // `kind` is required (the tasks draft, End Definition). The later fragment's end object
        // (`end: {compensate: true}`) has no kind: there it is the default end.
        let later_form = matches!(&node.kind, NodeKind::Map(entries)
            if entries.iter().any(|e| e.key.eq_ignore_ascii_case("compensate")));
        let kind_node = if later_form {
            map.take(&["kind"])
        } else {
            map.require(&["kind"])
        };
        let kind = kind_node.and_then(|n| {
            reader::enumerated(
                n,
                "end kind",
                &[
                    ("default", Kind::Default),
                    ("terminate", Kind::Terminate),
                    ("event", Kind::Event),
                ],
                self.diags,
            )
        });
        let produce_entry = map.take_entry(&["produceEvent"]);
        let produce = produce_entry.and_then(|e| self.produce_event(&e.value));
        let compensate = self.compensate_flag(&mut map);
        map.finish(self.diags);
        if let (Some(kind), Some(entry)) = (&kind, produce_entry)
            && kind.value != Kind::Event
        {
            let word = if kind.value == Kind::Default {
                "default"
            } else {
                "terminate"
            };
            self.diags
                .error(
                    Code::NOT_ALLOWED_HERE,
                    entry.key_span,
                    format!(
                        "an end of kind `{word}` produces no event, so it has no `produceEvent`"
                    ),
                )
                .help(
                    "write `kind: event` to produce this event when the workflow ends, or \
                     remove `produceEvent`",
                );
        }
        let kind = match kind.map(|k| k.value) {
            Some(Kind::Default) => EndKind::Default,
            Some(Kind::Terminate) => EndKind::Terminate,
            Some(Kind::Event) => EndKind::Event { produce },
            // The missing (or unknown) kind is reported; an end that produces an event is taken
            // as the event end it most likely is, so that its `eventRef` is still checked.
            None if produce_entry.is_some() => EndKind::Event { produce },
            None => EndKind::Default,
        };
        Some(End {
            kind,
            status: None,
            compensate,
            span: node.span,
        })
    }

    /// `compensate: true` on an end or transition object (the later drafts).
    fn compensate_flag(&mut self, map: &mut MapReader<'_>) -> bool {
        map.take(&["compensate"])
            .and_then(|n| reader::boolean(n, "compensate", self.diags))
            .unwrap_or(false)
    }

    /// `start: {kind: default|scheduled, schedule: {interval}}`; `start: true` means default.
    pub(super) fn start(&mut self, node: &Node) -> Option<Start> {
        if let NodeKind::Scalar(_) = node.kind {
            return reader::boolean(node, "start", self.diags)
                .filter(|start| *start)
                .map(|_| Start {
                    kind: StartKind::Default,
                    span: node.span,
                });
        }
        let mut map = MapReader::new(node, "start definition", self.diags)?;
        let scheduled = map.require(&["kind"]).and_then(|n| {
            reader::enumerated(
                n,
                "start kind",
                &[("default", false), ("scheduled", true)],
                self.diags,
            )
        });
        let schedule = map.take_entry(&["schedule"]);
        map.finish(self.diags);
        if let (Some(kind), Some(entry)) = (&scheduled, schedule)
            && !kind.value
        {
            self.diags
                .error(
                    Code::NOT_ALLOWED_HERE,
                    entry.key_span,
                    "a start of kind `default` has no `schedule`",
                )
                .help(
                    "write `kind: scheduled` to start instances only inside the schedule's \
                     interval, or remove `schedule`",
                );
        }
        let kind = if scheduled.is_some_and(|k| k.value) {
            let interval = schedule.and_then(|e| {
                let mut map = MapReader::new(&e.value, "schedule definition", self.diags)?;
                let interval = map
                    .take(&["interval"])
                    .and_then(|n| reader::string(n, "interval", self.diags));
                map.finish(self.diags);
                if let Some(interval) = &interval {
                    syntax::interval::check(&interval.value, interval.span, self.diags);
                }
                interval
            });
            StartKind::Scheduled { interval }
        } else {
            StartKind::Default
        };
        Some(Start {
            kind,
            span: node.span,
        })
    }

    pub(super) fn task_data_filter(&mut self, node: &Node) -> TaskDataFilter {
        let Some(mut map) = MapReader::new(node, "task data filter", self.diags) else {
            return TaskDataFilter::default();
        };
        let input = map
            .take(&["dataInputPath"])
            .and_then(|n| self.path(n, "dataInputPath"));
        let output = map
            .take(&["dataOutputPath"])
            .and_then(|n| self.path(n, "dataOutputPath"));
        map.finish(self.diags);
        TaskDataFilter { input, output }
    }

    /// Event and error data filters: the drafts call their one path both `dataOutputPath` and
    /// `dataInputPath` (SEMANTICS.md: accept both).
    pub(super) fn selection_filter(&mut self, node: &Node, what: &'static str) -> Option<JsonPath> {
        let mut map = MapReader::new(node, what, self.diags)?;
        let path = map
            .take(&["dataOutputPath", "dataInputPath"])
            .and_then(|n| self.path(n, "dataOutputPath"));
        map.finish(self.diags);
        path
    }

    /// `{language, body}`, or a bare string in the default language.
    pub(super) fn expression(&mut self, node: &Node) -> Option<Expression> {
        if let NodeKind::Scalar(_) = node.kind {
            let body = reader::string(node, "expression", self.diags)?;
            return self.expression_in(None, &body);
        }
        let mut map = MapReader::new(node, "expression", self.diags)?;
        let language = map
            .take(&["language"])
            .and_then(|n| reader::string(n, "language", self.diags));
        let body = map
            .require(&["body"])
            .and_then(|n| reader::string(n, "body", self.diags));
        map.finish(self.diags);
        self.expression_in(language.as_ref(), &body?)
    }

    pub(super) fn produce_event(&mut self, node: &Node) -> Option<ProduceEvent> {
        let mut map = MapReader::new(node, "produceEvent", self.diags)?;
        let event_ref = map
            .require(&["eventRef"])
            .and_then(|n| reader::string(n, "eventRef", self.diags));
        let data = map.take(&["data"]).and_then(|n| match n.kind {
            NodeKind::Map(_) => Some(ProduceData::Object(n.to_json())),
            _ => self.path(n, "data").map(ProduceData::Path),
        });
        map.finish(self.diags);
        Some(ProduceEvent {
            event_ref: event_ref?,
            data,
            span: node.span,
        })
    }

    pub(super) fn retries(&mut self, node: &Node) -> Vec<Retry> {
        let mut out = Vec::new();
        for item in reader::list(node, "retry", self.diags) {
            let Some(mut map) = MapReader::new(item, "retry definition", self.diags) else {
                continue;
            };
            let condition = map.take(&["expression"]).and_then(|n| self.expression(n));
            let interval = map.take(&["interval"]).and_then(|n| self.retry_interval(n));
            let multiplier = map
                .take(&["multiplier"])
                .and_then(|n| self.duration(n, "multiplier"));
            let max_attempts = map
                .take(&["maxAttempts"])
                .and_then(|n| reader::unsigned(n, "maxAttempts", self.diags))
                .map_or(1, |n| u32::try_from(n.value).unwrap_or(u32::MAX));
            let span = map.span();
            map.finish(self.diags);
            out.push(Retry {
                condition,
                interval,
                multiplier,
                max_attempts,
                span,
            });
        }
        out
    }

    pub(super) fn error_handlers(&mut self, node: &Node) -> Vec<ErrorHandler> {
        let mut out = Vec::new();
        for item in reader::list(node, "onError", self.diags) {
            let Some(mut map) = MapReader::new(item, "error definition", self.diags) else {
                continue;
            };
            let condition = map.take(&["expression"]).and_then(|n| self.expression(n));
            let error_data_filter = map
                .take(&["errorDataFilter"])
                .and_then(|n| self.selection_filter(n, "error data filter"));
            let transition = map.take(&["transition"]).and_then(|n| self.transition(n));
            let span = map.span();
            map.finish(self.diags);
            out.push(ErrorHandler {
                condition,
                error_data_filter,
                error_results_path: None,
                output_path: None,
                transition,
                action: None,
                span,
            });
        }
        out
    }

    pub(super) fn action_mode(&mut self, node: &Node) -> ActionMode {
        reader::enumerated(
            node,
            "actionMode",
            &[
                ("sequential", ActionMode::Sequential),
                ("parallel", ActionMode::Parallel),
            ],
            self.diags,
        )
        .map_or(ActionMode::Sequential, |m| m.value)
    }

    pub(super) fn actions(&mut self, node: &Node) -> Vec<Action> {
        reader::list(node, "actions", self.diags)
            .iter()
            .filter_map(|item| self.action(item))
            .collect()
    }

    pub(super) fn action(&mut self, node: &Node) -> Option<Action> {
        let mut map = MapReader::new(node, "action", self.diags)?;
        let name = map
            .take(&["name"])
            .and_then(|n| reader::string(n, "name", self.diags));
        let function = map
            .take(&["functionRef"])
            .and_then(|n| self.function_ref(n));
        let timeout = map
            .take(&["timeout"])
            .and_then(|n| self.duration(n, "timeout"));
        let (input_path, results_path) = match map.take(&["actionDataFilter"]) {
            Some(filter) => self.action_data_filter(filter),
            None => (None, None),
        };
        let span = map.span();
        map.finish(self.diags);
        Some(Action {
            name,
            function,
            timeout,
            input_path,
            result_selection: None,
            results_path,
            retry: Vec::new(),
            span,
        })
    }

    fn action_data_filter(&mut self, node: &Node) -> (Option<JsonPath>, Option<JsonPath>) {
        let Some(mut map) = MapReader::new(node, "action data filter", self.diags) else {
            return (None, None);
        };
        let input = map
            .take(&["dataInputPath"])
            .and_then(|n| self.path(n, "dataInputPath"));
        let results = map
            .take(&["dataResultsPath"])
            .and_then(|n| self.path(n, "dataResultsPath"));
        map.finish(self.diags);
        (input, results)
    }

    fn function_ref(&mut self, node: &Node) -> Option<FunctionRef> {
        // `functionRef: name` is the short form some examples use.
        if let NodeKind::Scalar(_) = node.kind {
            let ref_name = reader::string(node, "functionRef", self.diags)?;
            return Some(FunctionRef {
                ref_name,
                parameters: None,
                span: node.span,
            });
        }
        let mut map = MapReader::new(node, "functionRef", self.diags)?;
        let ref_name = map
            .require(&["refName"])
            .and_then(|n| reader::string(n, "refName", self.diags));
        let parameters = map.take(&["parameters"]).map(|n| self.param(n));
        map.finish(self.diags);
        Some(FunctionRef {
            ref_name: ref_name?,
            parameters,
            span: node.span,
        })
    }
}
