//! The one intermediate representation every dialect lowers into. It is plain data (serializable,
//! compared in tests) and keeps the position of every node. Stages after parsing never look at YAML.

mod expr;
mod path;

pub use expr::{CompareOp, Expr, ExprLanguage, Expression, Operand};
pub use path::{JsonPath, PathKind, PathSegment};

use crate::source::{Span, Spanned};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which draft a file was written against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dialect {
    /// `004`: tasks/nextTask (also written states/nextState).
    Tasks,
}

impl Dialect {
    pub fn label(self) -> &'static str {
        match self {
            Dialect::Tasks => "tasks draft",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workflow {
    /// The file it was read from, as diagnostics name it; every `Span` below is in this file.
    pub file: String,
    pub dialect: Dialect,
    pub id: Spanned<String>,
    pub name: Spanned<String>,
    pub version: Option<String>,
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
    pub metadata: Option<Value>,
    /// Where the task's mapping begins.
    pub span: Span,
}

impl Task {
    /// Every transition this task can take, in document order: its own, switch conditions and
    /// default, then onError handlers.
    pub fn transitions(&self) -> Vec<&Transition> {
        let mut out = Vec::new();
        out.extend(self.transition.iter());
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
        out.extend(self.on_error.iter().filter_map(|h| h.transition.as_ref()));
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

    /// Nested scopes (parallel branches, a foreach body), in document order.
    pub fn nested_scopes(&self) -> Vec<&Scope> {
        match &self.kind {
            TaskKind::Parallel { branches, .. } => branches.iter().map(|b| &b.scope).collect(),
            TaskKind::ForEach { scope, .. } => vec![scope],
            _ => Vec::new(),
        }
    }

    pub fn type_name(&self) -> &'static str {
        self.kind.type_name()
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
        output_collection: Option<JsonPath>,
        max: Option<Spanned<u64>>,
        time_delay: Option<DurationSpec>,
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
    /// Where the result is written in the task data (`dataResultsPath`); absent means merge.
    pub results_path: Option<JsonPath>,
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
    pub event_refs: Vec<Spanned<String>>,
    pub action_mode: ActionMode,
    pub actions: Vec<Action>,
    pub event_data_filter: Option<JsonPath>,
    pub span: Span,
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
    pub path: Option<JsonPath>,
    pub value: Option<Spanned<String>>,
    pub operator: Spanned<Operator>,
    pub transition: Option<Transition>,
    pub metadata: Option<Value>,
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
    pub span: Span,
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
    pub transition: Option<Transition>,
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
