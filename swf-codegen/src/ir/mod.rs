//! The one intermediate representation every dialect lowers into. It is plain data (serializable,
//! compared in tests) and keeps the position of every node. Stages after parsing never look at YAML.

mod expr;
mod path;
mod schema;
mod strict;

pub use expr::{CompareOp, Expr, ExprLanguage, Expression, Operand};
pub use path::{JsonPath, PathKind, PathSegment};
pub use schema::{DataSchemas, SchemaDocument, SchemaRef};

use crate::source::{Span, Spanned};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which draft a file was written against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Dialect {
    /// `002`: the first draft: kebab-case, `start: true` flags, END states.
    First,
    /// `000`: the second draft: kebab-case, `id`, `starts-at`, `end: true` flags.
    Second,
    /// `001`: v0.1: camelCase states, `startsAt`, `triggers`, `functions`.
    V01,
    /// `004`: tasks/nextTask (also written states/nextState).
    Tasks,
}

impl Dialect {
    /// Every dialect, oldest first.
    pub const ALL: [Dialect; 4] = [
        Dialect::First,
        Dialect::Second,
        Dialect::V01,
        Dialect::Tasks,
    ];

    /// How messages and `swfc` name the dialect.
    pub fn label(self) -> &'static str {
        match self {
            Dialect::First => "first draft (kebab-case)",
            Dialect::Second => "second draft (kebab-case)",
            Dialect::V01 => "v0.1",
            Dialect::Tasks => "tasks draft",
        }
    }

    /// The name a user gives to choose the dialect explicitly (`--dialect`, `dialect = "..."`).
    pub fn name(self) -> &'static str {
        match self {
            Dialect::First => "first",
            Dialect::Second => "second",
            Dialect::V01 => "v0.1",
            Dialect::Tasks => "tasks",
        }
    }

    /// The dialect a user named, regardless of case; also accepts the draft file numbers.
    pub fn from_name(name: &str) -> Option<Dialect> {
        let name = name.trim().to_ascii_lowercase();
        Dialect::ALL.into_iter().find(|d| {
            d.name() == name
                || matches!(
                    (d, name.as_str()),
                    (Dialect::First, "002" | "first-draft")
                        | (Dialect::Second, "000" | "second-draft")
                        | (Dialect::V01, "001" | "0.1" | "v01")
                        | (Dialect::Tasks, "004" | "tasks-draft")
                )
        })
    }

    /// The two kebab-case drafts, whose parallel output is an array of the branch outputs.
    pub fn is_kebab_case(self) -> bool {
        matches!(self, Dialect::First | Dialect::Second)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workflow {
    /// The file it was read from, as diagnostics name it; every `Span` below is in this file.
    pub file: String,
    pub dialect: Dialect,
    pub id: Spanned<String>,
    pub name: Spanned<String>,
    pub version: Option<Spanned<String>>,
    pub description: Option<String>,
    pub expression_language: Option<Spanned<String>>,
    pub functions: Vec<FunctionDef>,
    pub events: Vec<EventDef>,
    /// The top-level tasks.
    pub scope: Scope,
    /// Kept verbatim, never interpreted.
    pub metadata: Option<Value>,
    /// Kept verbatim, never interpreted.
    pub extensions: Option<Value>,
    /// `dataInputSchema` and `dataOutputSchema` of the workflow.
    #[serde(default, skip_serializing_if = "DataSchemas::is_empty")]
    pub schemas: DataSchemas,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionDef {
    pub name: Spanned<String>,
    pub resource: Option<Spanned<String>>,
    pub kind: Option<String>,
    pub metadata: Option<Value>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventDef {
    pub name: Spanned<String>,
    pub source: Option<Spanned<String>>,
    pub event_type: Option<Spanned<String>>,
    pub correlation_token: Option<Spanned<String>>,
    pub metadata: Option<Value>,
    pub span: Span,
}

/// A set of tasks that transition among themselves: the workflow, a parallel branch or a foreach
/// body. Transitions never cross a scope boundary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scope {
    pub tasks: Vec<Task>,
}

impl Scope {
    /// What transitions name, to the task's index: task names, then task ids not already a
    /// name (the first of equals).
    pub fn targets(&self) -> std::collections::BTreeMap<&str, usize> {
        let mut targets = std::collections::BTreeMap::new();
        for (index, task) in self.tasks.iter().enumerate() {
            targets.entry(task.name.value.as_str()).or_insert(index);
        }
        for (index, task) in self.tasks.iter().enumerate() {
            if let Some(id) = &task.id {
                targets.entry(id.value.as_str()).or_insert(index);
            }
        }
        targets
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub name: Spanned<String>,
    pub id: Option<Spanned<String>>,
    pub kind: TaskKind,
    pub data_filter: TaskDataFilter,
    pub retry: Vec<Retry>,
    pub on_error: Vec<ErrorHandler>,
    pub start: Option<Start>,
    pub transition: Option<Transition>,
    pub end: Option<End>,
    /// `compensatedBy`: the task that undoes this one when a later end or transition asks for
    /// compensation.
    pub compensated_by: Option<Spanned<String>>,
    /// `usedForCompensation: true`: the task only runs to compensate another one.
    pub used_for_compensation: bool,
    pub metadata: Option<Value>,
    /// `dataInputSchema` and `dataOutputSchema` of the task (the tasks draft).
    #[serde(default, skip_serializing_if = "DataSchemas::is_empty")]
    pub schemas: DataSchemas,
    /// Where the task's mapping begins.
    pub span: Span,
    /// The task's definition had an error the parser recovered from (an unknown task type or
    /// operator, an event condition that cannot be waited for), keeping what it could read:
    /// rules about the task's own shape are skipped, so the error is reported once, without
    /// the "has no conditions" or "cannot be reached" that would only follow from it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recovered: bool,
}

impl Task {
    /// Every transition this task can take, in document order: its own, those of its event
    /// entries (earlier drafts), switch conditions and default, then onError handlers.
    pub fn transitions(&self) -> Vec<&Transition> {
        let mut out = self.success_transitions();
        out.extend(self.on_error.iter().filter_map(|h| h.transition.as_ref()));
        out
    }

    /// The transitions the task takes when it succeeds (all but its onError handlers'), in
    /// document order.
    pub fn success_transitions(&self) -> Vec<&Transition> {
        let mut out = Vec::new();
        out.extend(self.transition.iter());
        if let TaskKind::Event { events_actions, .. } = &self.kind {
            out.extend(events_actions.iter().filter_map(|e| e.transition.as_ref()));
        }
        if let TaskKind::Switch(switch) = &self.kind {
            match &switch.conditions {
                SwitchConditions::Data(conditions) => {
                    out.extend(conditions.iter().filter_map(|c| c.transition.as_ref()))
                }
                SwitchConditions::Event(conditions) => {
                    out.extend(conditions.iter().filter_map(|c| c.transition.as_ref()))
                }
            }
            out.extend(switch.default.iter());
        }
        out
    }

    /// Every action the task runs, in document order.
    pub fn actions(&self) -> Vec<&Action> {
        match &self.kind {
            TaskKind::Operation { actions, .. } => actions.iter().collect(),
            TaskKind::Event { events_actions, .. } => events_actions
                .iter()
                .flat_map(|e| e.actions.iter())
                .collect(),
            TaskKind::Callback { action, .. } => action.iter().collect(),
            _ => Vec::new(),
        }
    }

    /// The event names the task waits for (an event task's refs, a switch's event conditions,
    /// a callback's event), in document order.
    pub fn waited_event_refs(&self) -> Vec<&Spanned<String>> {
        match &self.kind {
            TaskKind::Event { events_actions, .. } => events_actions
                .iter()
                .flat_map(|e| e.event_refs.iter())
                .collect(),
            TaskKind::Switch(switch) => match &switch.conditions {
                SwitchConditions::Event(conditions) => conditions
                    .iter()
                    .filter_map(|c| c.event_ref.as_ref())
                    .collect(),
                SwitchConditions::Data(_) => Vec::new(),
            },
            TaskKind::Callback { event_ref, .. } => event_ref.iter().collect(),
            _ => Vec::new(),
        }
    }

    /// Nested scopes (parallel branches, a foreach body), in document order.
    pub fn nested_scopes(&self) -> Vec<&Scope> {
        match &self.kind {
            TaskKind::Parallel { branches, .. } => branches.iter().map(|b| &b.scope).collect(),
            TaskKind::ForEach { scope, .. } => vec![scope],
            _ => Vec::new(),
        }
    }

    /// [`Task::nested_scopes`], to change them.
    pub fn nested_scopes_mut(&mut self) -> Vec<&mut Scope> {
        match &mut self.kind {
            TaskKind::Parallel { branches, .. } => {
                branches.iter_mut().map(|b| &mut b.scope).collect()
            }
            TaskKind::ForEach { scope, .. } => vec![scope],
            _ => Vec::new(),
        }
    }

    pub fn type_name(&self) -> &'static str {
        self.kind.type_name()
    }

    /// The type as the workflow's dialect writes it, for documentation and traces: what the
    /// earlier drafts lower into an inject is their `END` state (kebab-case drafts) or `RELAY`
    /// state (v0.1); every other kind keeps its name.
    pub fn written_type(&self, dialect: Dialect) -> &'static str {
        match (&self.kind, dialect) {
            (TaskKind::Inject { .. }, Dialect::First | Dialect::Second) => "END",
            (TaskKind::Inject { .. }, Dialect::V01) => "RELAY",
            _ => self.type_name(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TaskKind {
    Operation {
        action_mode: ActionMode,
        actions: Vec<Action>,
    },
    Event {
        exclusive: bool,
        events_actions: Vec<EventActions>,
        timeout: Option<DurationSpec>,
    },
    Switch(Switch),
    Delay {
        time_delay: Option<DurationSpec>,
    },
    Parallel {
        branches: Vec<Branch>,
        completion: Completion,
        /// How the branch outputs make the task's output.
        output: ParallelOutput,
        /// `n` (n_of_m) or `numCompleted` (atLeast).
        n: Option<Spanned<u64>>,
        /// `timeouts.stateExecTimeout` (the later fragment): the whole task.
        state_timeout: Option<DurationSpec>,
        /// `timeouts.branchExecTimeout`: each branch.
        branch_timeout: Option<DurationSpec>,
    },
    SubFlow {
        workflow_id: Option<Spanned<String>>,
        wait_for_completion: bool,
    },
    Inject {
        data: Value,
    },
    ForEach {
        input_collection: Option<JsonPath>,
        input_parameter: Option<JsonPath>,
        /// v0.1 `loop`: each iteration's input is the element itself, not a copy of the task
        /// data with the element at `input_parameter`.
        element_as_input: bool,
        output_collection: Option<JsonPath>,
        max: Option<Spanned<u64>>,
        time_delay: Option<DurationSpec>,
        /// v0.1 `loop.completionCondition`: checked on each iteration's output, in order (the
        /// iterations then run one at a time); when it holds, no further iteration starts.
        completion_condition: Option<Expression>,
        scope: Scope,
    },
    Callback {
        action: Option<Action>,
        event_ref: Option<Spanned<String>>,
        timeout: Option<DurationSpec>,
        event_data_filter: Option<JsonPath>,
    },
}

impl TaskKind {
    pub fn type_name(&self) -> &'static str {
        match self {
            TaskKind::Operation { .. } => "operation",
            TaskKind::Event { .. } => "event",
            TaskKind::Switch(_) => "switch",
            TaskKind::Delay { .. } => "delay",
            TaskKind::Parallel { .. } => "parallel",
            TaskKind::SubFlow { .. } => "subflow",
            TaskKind::Inject { .. } => "inject",
            TaskKind::ForEach { .. } => "foreach",
            TaskKind::Callback { .. } => "callback",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ActionMode {
    Sequential,
    Parallel,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    pub name: Option<Spanned<String>>,
    pub function: Option<FunctionRef>,
    pub timeout: Option<DurationSpec>,
    pub input_path: Option<JsonPath>,
    /// Selects what of the function's result is kept (the earlier drafts' action `outputPath`);
    /// absent keeps all of it.
    pub result_selection: Option<JsonPath>,
    /// Where the result is written in the task data (`dataResultsPath`); absent means merge.
    pub results_path: Option<JsonPath>,
    /// The earlier drafts' retries of this action alone: the function is called again, without
    /// leaving the task, until one matches no more or is exhausted (then the task fails).
    pub retry: Vec<Retry>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionRef {
    pub ref_name: Spanned<String>,
    /// The arguments; absent means the action's input data is passed.
    pub parameters: Option<Param>,
    pub span: Span,
}

/// A function argument template: strings starting with `$` select from the action input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Param {
    Literal(Value),
    Path(JsonPath),
    Object(Vec<(String, Param)>),
    Array(Vec<Param>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventActions {
    /// Every event the entry names, in document order.
    pub event_refs: Vec<Spanned<String>>,
    /// The earlier drafts' condition over event names (`(a or b) and c`); absent, the task's
    /// `exclusive` flag says whether one or all of `event_refs` are awaited.
    pub condition: Option<EventExpr>,
    pub action_mode: ActionMode,
    pub actions: Vec<Action>,
    pub event_data_filter: Option<JsonPath>,
    /// Where the selected event data is written in the task data; absent means merge.
    pub event_results_path: Option<JsonPath>,
    /// The earlier drafts' per-entry transition, taken after this entry's actions.
    pub transition: Option<Transition>,
    /// The earlier drafts' per-entry wait: when it elapses before any entry's events have
    /// arrived, the task takes this entry's transition without performing actions.
    pub timeout: Option<DurationSpec>,
    pub span: Span,
}

/// A condition over event arrivals: true once the events it needs have arrived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum EventExpr {
    Event(Spanned<String>),
    All(Vec<EventExpr>),
    Any(Vec<EventExpr>),
}

impl EventExpr {
    /// The event names it mentions, in order of appearance.
    pub fn events(&self) -> Vec<&Spanned<String>> {
        match self {
            EventExpr::Event(name) => vec![name],
            EventExpr::All(items) | EventExpr::Any(items) => {
                items.iter().flat_map(EventExpr::events).collect()
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Switch {
    pub conditions: SwitchConditions,
    pub default: Option<Transition>,
    pub event_timeout: Option<DurationSpec>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SwitchConditions {
    Data(Vec<DataCondition>),
    Event(Vec<EventCondition>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataCondition {
    pub test: DataTest,
    pub transition: Option<Transition>,
    pub metadata: Option<Value>,
    pub span: Span,
}

impl DataCondition {
    /// The comparison, when the condition is a single one.
    pub fn comparison(&self) -> Option<&Comparison> {
        match &self.test {
            DataTest::Compare(c) => Some(c),
            _ => None,
        }
    }

    pub fn comparison_mut(&mut self) -> Option<&mut Comparison> {
        match &mut self.test {
            DataTest::Compare(c) => Some(c),
            _ => None,
        }
    }
}

/// What a data condition tests: one comparison, or (earlier drafts) a combination of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum DataTest {
    Compare(Comparison),
    All(Vec<DataTest>),
    Any(Vec<DataTest>),
    Not(Box<DataTest>),
}

impl DataTest {
    /// Every comparison, in document order.
    pub fn comparisons(&self) -> Vec<&Comparison> {
        match self {
            DataTest::Compare(c) => vec![c],
            DataTest::All(items) | DataTest::Any(items) => {
                items.iter().flat_map(DataTest::comparisons).collect()
            }
            DataTest::Not(inner) => inner.comparisons(),
        }
    }
}

/// `path`, `operator`, `value`: the selected value tested against the written one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub path: Option<JsonPath>,
    pub value: Option<Spanned<String>>,
    pub operator: Spanned<Operator>,
    pub span: Span,
}

/// Switch data condition operators. The `Str*` forms always compare as strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Operator {
    Exists,
    NotExists,
    Null,
    NotNull,
    Equals,
    NotEquals,
    LessThan,
    LessThanOrEquals,
    GreaterThan,
    GreaterThanOrEquals,
    Matches,
    NotMatches,
    Custom,
    /// The second draft's `StrEQ`, `StrLT`, ...: always compared as strings.
    StrEquals,
    StrLessThan,
    StrLessThanOrEquals,
    StrGreaterThan,
    StrGreaterThanOrEquals,
}

impl Operator {
    /// The `Str*` operators compare as strings whatever the values look like.
    pub fn compares_strings(self) -> bool {
        matches!(
            self,
            Operator::StrEquals
                | Operator::StrLessThan
                | Operator::StrLessThanOrEquals
                | Operator::StrGreaterThan
                | Operator::StrGreaterThanOrEquals
        )
    }
}

/// How a parallel task's output is made from its branches' outputs (SEMANTICS.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParallelOutput {
    /// Merged into the task data in branch order (v0.1 and later).
    Merge,
    /// An array with one element per branch, in branch order (the kebab-case drafts).
    Array,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventCondition {
    pub event_ref: Option<Spanned<String>>,
    pub transition: Option<Transition>,
    pub event_data_filter: Option<JsonPath>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Completion {
    And,
    Xor,
    NOfM,
    AllOf,
    AtLeast,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Branch {
    pub name: Spanned<String>,
    pub scope: Scope,
    /// The earlier drafts' `waitForCompletion`: false lets the task go on without this branch,
    /// which then runs on its own (its output is not part of the task's).
    pub wait_for_completion: bool,
    pub span: Span,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskDataFilter {
    pub input: Option<JsonPath>,
    pub output: Option<JsonPath>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Start {
    pub kind: StartKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum StartKind {
    Default,
    Scheduled { interval: Option<Spanned<String>> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct End {
    pub kind: EndKind,
    /// The first draft's END state `status`: `FAILURE` fails the run with the data it had.
    pub status: Option<Spanned<EndStatus>>,
    /// `compensate: true`: run the compensation of every completed task first.
    pub compensate: bool,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EndStatus {
    Success,
    Failure,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum EndKind {
    Default,
    Terminate,
    Event { produce: Option<ProduceEvent> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    pub next: Spanned<String>,
    pub condition: Option<Expression>,
    pub produce_event: Option<ProduceEvent>,
    /// `compensate: true`: run the compensation of every completed task before moving on.
    pub compensate: bool,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProduceEvent {
    pub event_ref: Spanned<String>,
    pub data: Option<ProduceData>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ProduceData {
    Path(JsonPath),
    Object(Value),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Retry {
    pub condition: Option<Expression>,
    pub interval: Option<RetryInterval>,
    pub multiplier: Option<DurationSpec>,
    /// `maxAttempts`, default 1; 0 means no retries.
    pub max_attempts: u32,
    pub span: Span,
}

impl Retry {
    /// Retries allowed by this definition: `maxAttempts`, capped by the `R<n>/` repeat count.
    pub fn effective_attempts(&self) -> u32 {
        match self.interval.as_ref().and_then(|i| i.repeat) {
            Some(repeat) => self.max_attempts.min(repeat),
            None => self.max_attempts,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorHandler {
    pub condition: Option<Expression>,
    /// Selects from the `{"error": {...}}` object what is merged into the task data.
    pub error_data_filter: Option<JsonPath>,
    /// v0.1 error filter `resultPath`: where the selected error is written; absent means merge.
    pub error_results_path: Option<JsonPath>,
    /// v0.1 error filter `outputPath`: selects the task's output once the error is in its data.
    pub output_path: Option<JsonPath>,
    pub transition: Option<Transition>,
    /// Only for a failure of this action of the task (its index in [`Task::actions`]) once its
    /// own retries are spent: the earlier drafts' retry `transition`/`next-state`.
    pub action: Option<usize>,
    pub span: Span,
}

/// A duration as written and its length. Durations are fixed-length time spans.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DurationSpec {
    pub text: String,
    pub millis: u64,
    pub span: Span,
}

/// A retry interval: `PT2M` or the repeating form `R5/PT15M`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryInterval {
    pub text: String,
    pub millis: u64,
    pub repeat: Option<u32>,
    pub span: Span,
}
