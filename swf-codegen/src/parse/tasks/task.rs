//! One task: the fields every task has, then the fields of its type.

use super::{Lowering, TASKS};
use crate::diagnostic::Code;
use crate::ir::{
    Branch, Comparison, Completion, DataCondition, DataTest, EventActions, EventCondition,
    Operator, Switch, SwitchConditions, Task, TaskKind,
};
use crate::parse::reader::{self, MapReader};
use crate::parse::yaml::{Entry, Node, NodeKind};
use crate::source::Spanned;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TaskType {
    Operation,
    Event,
    Switch,
    Delay,
    Parallel,
    SubFlow,
    Inject,
    ForEach,
    Callback,
}

const TASK_TYPES: &[(&str, TaskType)] = &[
    ("operation", TaskType::Operation),
    ("event", TaskType::Event),
    ("switch", TaskType::Switch),
    ("delay", TaskType::Delay),
    ("parallel", TaskType::Parallel),
    ("subflow", TaskType::SubFlow),
    ("inject", TaskType::Inject),
    ("foreach", TaskType::ForEach),
    ("callback", TaskType::Callback),
];

const OPERATORS: &[(&str, Operator)] = &[
    ("exists", Operator::Exists),
    ("notexists", Operator::NotExists),
    ("null", Operator::Null),
    ("notnull", Operator::NotNull),
    ("equals", Operator::Equals),
    ("notequals", Operator::NotEquals),
    ("lessthan", Operator::LessThan),
    ("lessthanorequals", Operator::LessThanOrEquals),
    ("greaterthan", Operator::GreaterThan),
    ("greaterthanorequals", Operator::GreaterThanOrEquals),
    ("matches", Operator::Matches),
    ("notmatches", Operator::NotMatches),
    ("custom", Operator::Custom),
];

impl Lowering<'_> {
    pub(super) fn task(&mut self, node: &Node) -> Option<Task> {
        self.recovered = false;
        let mut map = MapReader::new(node, "task", self.diags)?;
        let name = map
            .require(&["name"])
            .and_then(|n| reader::string(n, "name", self.diags));
        let id = map
            .take(&["id"])
            .and_then(|n| reader::string(n, "id", self.diags));
        let task_type = map
            .require(&["type"])
            .and_then(|n| reader::enumerated(n, "task type", TASK_TYPES, self.diags));
        let start = map.take(&["start"]).and_then(|n| self.start(n));
        let end = map.take(&["end"]).and_then(|n| self.end(n));
        let transition = match map.take_entry(&["transition"]) {
            Some(entry)
                if task_type
                    .as_ref()
                    .is_some_and(|t| t.value == TaskType::Switch) =>
            {
                self.diags
                    .error(
                        Code::NOT_ALLOWED_HERE,
                        entry.key_span,
                        "a switch task has no `transition` of its own",
                    )
                    .help(
                        "give each condition its `transition`, and the task a `default` \
                         transition for when no condition holds",
                    );
                None
            }
            Some(entry) => self.transition(&entry.value),
            None => None,
        };
        let data_filter = map
            .take(&["taskDataFilter", "stateDataFilter"])
            .map(|n| self.task_data_filter(n))
            .unwrap_or_default();
        let retry = map
            .take(&["retry"])
            .map(|n| self.retries(n))
            .unwrap_or_default();
        let on_error = map
            .take(&["onError"])
            .map(|n| self.error_handlers(n))
            .unwrap_or_default();
        let compensated_by = map
            .take(&["compensatedBy"])
            .and_then(|n| reader::string(n, "compensatedBy", self.diags));
        let used_for_compensation = map
            .take(&["usedForCompensation"])
            .and_then(|n| reader::boolean(n, "usedForCompensation", self.diags))
            .unwrap_or(false);
        let metadata = map.verbatim(&["metadata"]);
        let schemas = super::data_schemas(&mut map, self.diags);

        let kind = match task_type {
            Some(t) => {
                let kind = self.task_kind(t.value, &mut map);
                map.finish(self.diags);
                kind
            }
            // An unknown (or missing) type is reported: the task stays, with its name and
            // transitions, so that nothing that names it or follows it is reported too; its
            // other keys are not checked against a schema nobody knows, but missing required
            // keys (`name`, `type`) are still reported.
            None => {
                map.finish_missing_only(self.diags);
                self.recovered = true;
                TaskKind::Inject {
                    data: serde_json::Value::Object(serde_json::Map::new()),
                }
            }
        };
        Some(Task {
            name: name?,
            id,
            kind,
            data_filter,
            retry,
            on_error,
            start,
            transition,
            end,
            compensated_by,
            used_for_compensation,
            metadata,
            schemas,
            span: node.span,
            recovered: std::mem::take(&mut self.recovered),
        })
    }

    fn task_kind(&mut self, task_type: TaskType, map: &mut MapReader<'_>) -> TaskKind {
        match task_type {
            TaskType::Operation => TaskKind::Operation {
                action_mode: map
                    .take(&["actionMode"])
                    .map_or(crate::ir::ActionMode::Sequential, |n| self.action_mode(n)),
                // Required, but may be empty (`actions: []`): the drafts' schemas set no
                // minimum, and the tasks draft's own timeout example has none.
                actions: match map.take(&["actions"]) {
                    Some(n) => self.actions(n),
                    None => {
                        reader::missing_actions(map.span(), "operation task", self.diags);
                        Vec::new()
                    }
                },
            },
            TaskType::Event => TaskKind::Event {
                exclusive: map
                    .take(&["exclusive"])
                    .and_then(|n| reader::boolean(n, "exclusive", self.diags))
                    .unwrap_or(true),
                events_actions: map
                    .take(&["eventsActions"])
                    .map(|n| self.events_actions(n))
                    .unwrap_or_default(),
                timeout: map
                    .take(&["timeout"])
                    .and_then(|n| self.duration(n, "timeout")),
            },
            TaskType::Switch => TaskKind::Switch(self.switch(map)),
            TaskType::Delay => TaskKind::Delay {
                time_delay: map
                    .take(&["timeDelay"])
                    .and_then(|n| self.duration(n, "timeDelay")),
            },
            TaskType::Parallel => self.parallel(map),
            TaskType::SubFlow => TaskKind::SubFlow {
                workflow_id: map
                    .take(&["workflowId"])
                    .and_then(|n| reader::string(n, "workflowId", self.diags)),
                wait_for_completion: map
                    .take(&["waitForCompletion"])
                    .and_then(|n| reader::boolean(n, "waitForCompletion", self.diags))
                    .unwrap_or(false),
            },
            TaskType::Inject => TaskKind::Inject {
                data: map.take(&["data"]).map_or(
                    serde_json::Value::Object(Default::default()),
                    |n| {
                        if !matches!(n.to_json(), serde_json::Value::Object(_)) {
                            reader::wrong_type(n, "data", "a mapping", self.diags);
                        }
                        n.to_json()
                    },
                ),
            },
            TaskType::ForEach => TaskKind::ForEach {
                input_collection: map
                    .take(&["inputCollection"])
                    .and_then(|n| self.path(n, "inputCollection")),
                input_parameter: map
                    .take(&["inputParameter"])
                    .and_then(|n| self.path(n, "inputParameter")),
                element_as_input: false,
                output_collection: map
                    .take(&["outputCollection"])
                    .and_then(|n| self.path(n, "outputCollection")),
                max: map
                    .take(&["max"])
                    .and_then(|n| reader::unsigned(n, "max", self.diags)),
                time_delay: map
                    .take(&["timeDelay"])
                    .and_then(|n| self.duration(n, "timeDelay")),
                completion_condition: None,
                scope: map.take(TASKS).map(|n| self.scope(n)).unwrap_or_default(),
            },
            TaskType::Callback => TaskKind::Callback {
                action: map.take(&["action"]).and_then(|n| self.action(n)),
                event_ref: map
                    .take(&["eventRef"])
                    .and_then(|n| reader::string(n, "eventRef", self.diags)),
                timeout: map
                    .take(&["timeout"])
                    .and_then(|n| self.duration(n, "timeout")),
                event_data_filter: map
                    .take(&["eventDataFilter"])
                    .and_then(|n| self.selection_filter(n, "event data filter")),
            },
        }
    }

    fn events_actions(&mut self, node: &Node) -> Vec<EventActions> {
        let mut out = Vec::new();
        for item in reader::list(node, "eventsActions", self.diags) {
            let Some(mut map) = MapReader::new(item, "event actions", self.diags) else {
                continue;
            };
            let event_refs = map
                .take(&["eventRefs"])
                .map(|n| self.name_list(n, "eventRefs"))
                .unwrap_or_default();
            let action_mode = map
                .take(&["actionMode"])
                .map_or(crate::ir::ActionMode::Sequential, |n| self.action_mode(n));
            let actions = map
                .take(&["actions"])
                .map(|n| self.actions(n))
                .unwrap_or_default();
            let event_data_filter = map
                .take(&["eventDataFilter"])
                .and_then(|n| self.selection_filter(n, "event data filter"));
            let span = map.span();
            map.finish(self.diags);
            out.push(EventActions {
                event_refs,
                condition: None,
                action_mode,
                actions,
                event_data_filter,
                event_results_path: None,
                transition: None,
                timeout: None,
                span,
            });
        }
        out
    }

    /// The draft's table says `dataConditions`/`eventConditions`, its schema says `conditions`:
    /// accept all three, telling data from event conditions by their content.
    fn switch(&mut self, map: &mut MapReader<'_>) -> Switch {
        let data = map.take_entry(&["dataConditions"]);
        let event = map.take_entry(&["eventConditions"]);
        let either = map.take_entry(&["conditions"]);
        let default = map.take(&["default"]).and_then(|n| self.transition(n));
        let event_timeout = map
            .take(&["eventTimeout"])
            .and_then(|n| self.duration(n, "eventTimeout"));
        // "These are exclusive, meaning that a switch task can define one or the other
        // condition type, not both" (the tasks draft, Switch task).
        let either_events = either.is_some_and(|e| holds_event_conditions(&e.value));
        let data_like = data.or(either.filter(|_| !either_events));
        let event_like = event.or(either.filter(|_| either_events));
        let second = data_like.and(event_like);
        if let Some(entry) = second {
            self.recovered = true;
            self.diags
                .error(
                    Code::NOT_ALLOWED_HERE,
                    entry.value.span,
                    "a switch task has data conditions or event conditions, not both",
                )
                .help(
                    "the tasks draft makes them exclusive: split the switch into an event switch \
                     (or event task) followed by a data switch",
                );
        }
        // `conditions` of the same kind as `dataConditions` (or `eventConditions`) is the same
        // list written twice: reported, and both are read, so that nothing in them goes
        // unchecked and no task they lead to is reported unreachable.
        let twice = match (data, event, either) {
            (Some(first), _, Some(again)) if !either_events => Some((first, again)),
            (_, Some(first), Some(again)) if either_events => Some((first, again)),
            _ => None,
        };
        if let Some((first, again)) = twice {
            let (first, again) = if again.key_span < first.key_span {
                (again, first)
            } else {
                (first, again)
            };
            let kind = if either_events { "event" } else { "data" };
            self.diags
                .error(
                    Code::DUPLICATE_KEY,
                    again.key_span,
                    format!(
                        "the switch's {kind} conditions are given twice, as `{}` (at line {}) \
                         and as `{}`",
                        first.key, first.key_span.line, again.key
                    ),
                )
                .help(format!(
                    "`{}` and `{}` are two spellings of the same list: keep one, with all the \
                     conditions in it",
                    first.key, again.key
                ));
        }
        let conditions = match (data, event, either) {
            (_, Some(events), Some(again)) if either_events => {
                SwitchConditions::Event(self.event_conditions_of(&[events, again]))
            }
            (_, Some(events), _) => SwitchConditions::Event(self.event_conditions(&events.value)),
            (Some(data), None, Some(again)) if !either_events => {
                SwitchConditions::Data(self.data_conditions_of(&[data, again]))
            }
            (Some(data), None, _) => SwitchConditions::Data(self.data_conditions(&data.value)),
            (None, None, Some(n)) if either_events => {
                SwitchConditions::Event(self.event_conditions(&n.value))
            }
            (None, None, Some(n)) => SwitchConditions::Data(self.data_conditions(&n.value)),
            (None, None, None) => SwitchConditions::Data(Vec::new()),
        };
        Switch {
            conditions,
            default,
            event_timeout,
        }
    }

    /// The data conditions of every list given, in document order.
    fn data_conditions_of(&mut self, lists: &[&Entry]) -> Vec<DataCondition> {
        let mut lists = lists.to_vec();
        lists.sort_by_key(|e| e.key_span);
        lists
            .into_iter()
            .flat_map(|e| self.data_conditions(&e.value))
            .collect()
    }

    /// The event conditions of every list given, in document order.
    fn event_conditions_of(&mut self, lists: &[&Entry]) -> Vec<EventCondition> {
        let mut lists = lists.to_vec();
        lists.sort_by_key(|e| e.key_span);
        lists
            .into_iter()
            .flat_map(|e| self.event_conditions(&e.value))
            .collect()
    }

    fn data_conditions(&mut self, node: &Node) -> Vec<DataCondition> {
        let mut out = Vec::new();
        for item in reader::list(node, "dataConditions", self.diags) {
            let Some(mut map) = MapReader::new(item, "data condition", self.diags) else {
                continue;
            };
            let path = map.take(&["path"]).and_then(|n| self.path(n, "path"));
            let value = map
                .take(&["value"])
                .and_then(|n| reader::string(n, "value", self.diags));
            let operator = map
                .require(&["operator"])
                .and_then(|n| reader::enumerated(n, "condition operator", OPERATORS, self.diags));
            let transition = map.take(&["transition"]).and_then(|n| self.transition(n));
            let metadata = map.verbatim(&["metadata"]);
            let span = map.span();
            map.finish(self.diags);
            // An unknown operator is reported; the condition stays (with a stand-in operator),
            // so that its transition's target is not reported as unreachable.
            let operator = operator.unwrap_or_else(|| {
                self.recovered = true;
                Spanned::new(Operator::Equals, span)
            });
            if matches!(operator.value, Operator::Matches | Operator::NotMatches)
                && let Some(pattern) = &value
            {
                crate::syntax::regex::check(&pattern.value, pattern.span, self.diags);
            }
            out.push(DataCondition {
                test: DataTest::Compare(Comparison {
                    path,
                    value,
                    operator,
                    span,
                }),
                transition,
                metadata,
                span,
            });
        }
        out
    }

    fn event_conditions(&mut self, node: &Node) -> Vec<EventCondition> {
        let mut out = Vec::new();
        for item in reader::list(node, "eventConditions", self.diags) {
            let Some(mut map) = MapReader::new(item, "event condition", self.diags) else {
                continue;
            };
            let event_ref = map
                .take(&["eventRef"])
                .and_then(|n| reader::string(n, "eventRef", self.diags));
            let transition = map.take(&["transition"]).and_then(|n| self.transition(n));
            let event_data_filter = map
                .take(&["eventDataFilter"])
                .and_then(|n| self.selection_filter(n, "event data filter"));
            map.verbatim(&["metadata"]);
            let span = map.span();
            map.finish(self.diags);
            out.push(EventCondition {
                event_ref,
                transition,
                event_data_filter,
                span,
            });
        }
        out
    }

    fn parallel(&mut self, map: &mut MapReader<'_>) -> TaskKind {
        let branches = map
            .take(&["branches"])
            .map(|n| self.branches(n))
            .unwrap_or_default();
        let completion = map
            .take(&["completionType"])
            .and_then(|n| {
                reader::enumerated(
                    n,
                    "completionType",
                    &[
                        ("and", Completion::And),
                        ("xor", Completion::Xor),
                        ("n_of_m", Completion::NOfM),
                        ("allOf", Completion::AllOf),
                        ("atLeast", Completion::AtLeast),
                    ],
                    self.diags,
                )
            })
            .map_or(Completion::And, |c| c.value);
        let n = map
            .take(&["n", "numCompleted"])
            .and_then(|n| reader::unsigned(n, "n", self.diags));
        let (state_timeout, branch_timeout) = map
            .take(&["timeouts"])
            .map(|n| self.parallel_timeouts(n))
            .unwrap_or_default();
        TaskKind::Parallel {
            branches,
            completion,
            output: crate::ir::ParallelOutput::Merge,
            n,
            state_timeout,
            branch_timeout,
        }
    }

    /// `timeouts: {stateExecTimeout, branchExecTimeout}`; the later drafts also write the state
    /// timeout as `{total: PT1M}`.
    fn parallel_timeouts(
        &mut self,
        node: &Node,
    ) -> (
        Option<crate::ir::DurationSpec>,
        Option<crate::ir::DurationSpec>,
    ) {
        let Some(mut map) = MapReader::new(node, "timeouts", self.diags) else {
            return (None, None);
        };
        let state = map.take(&["stateExecTimeout"]).and_then(|n| match &n.kind {
            NodeKind::Map(_) => {
                let mut inner = MapReader::new(n, "stateExecTimeout", self.diags)?;
                let total = inner
                    .require(&["total"])
                    .and_then(|t| self.duration(t, "total"));
                if let Some(single) = inner.take_entry(&["single"]) {
                    self.diags
                        .warning(
                            Code::IGNORED_SINGLE_TIMEOUT,
                            single.key_span,
                            "`single` is not applied: `total` limits each attempt of the task, \
                             and a retry counts it again",
                        )
                        .help("remove `single`, and set `total` to the limit each attempt has");
                }
                inner.finish(self.diags);
                total
            }
            _ => self.duration(n, "stateExecTimeout"),
        });
        let branch = map
            .take(&["branchExecTimeout"])
            .and_then(|n| self.duration(n, "branchExecTimeout"));
        map.finish(self.diags);
        (state, branch)
    }

    fn branches(&mut self, node: &Node) -> Vec<Branch> {
        let mut out = Vec::new();
        for item in reader::list(node, "branches", self.diags) {
            let Some(mut map) = MapReader::new(item, "branch", self.diags) else {
                continue;
            };
            let name = map
                .require(&["name"])
                .and_then(|n| reader::string(n, "name", self.diags));
            let scope = map.take(TASKS).map(|n| self.scope(n)).unwrap_or_default();
            let span = map.span();
            map.finish(self.diags);
            out.push(Branch {
                name: name.unwrap_or_else(|| Spanned::new(String::new(), span)),
                scope,
                wait_for_completion: true,
                span,
            });
        }
        out
    }
}

/// True when a `conditions` list holds event conditions (entries with an `eventRef`).
fn holds_event_conditions(node: &Node) -> bool {
    let NodeKind::Seq(items) = &node.kind else {
        return false;
    };
    items.iter().any(|item| match &item.kind {
        NodeKind::Map(entries) => entries
            .iter()
            .any(|e| e.key.eq_ignore_ascii_case("eventRef")),
        _ => false,
    })
}
