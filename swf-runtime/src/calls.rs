//! Operation tasks described by data: the sequential function calls of a task, written by the
//! generated code as a `static` list of [`Call`]s and run here, by one function.
//!
//! Why: spelled out in each task's `run_*`, the same few statements (select the input, build
//! the arguments, call, place the result) were compiled once per task; a 1,000-task workflow
//! paid about half of its release build for them (issue 10, point 4). Described by data, they
//! are compiled once per machine, and a task adds a `static` (constant data, nothing to
//! optimise) and one call. The function to call is chosen by its index in the workflow's
//! `functions`, through [`CallFunction`], which the generated machine implements with one
//! `match` over its functions.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;

use crate::action::ActionCall;
use crate::arguments::Arguments;
use crate::data::{
    filter_in_place, merge_result, merge_result_then_filter, select_input, write_result_then_filter,
};
use crate::error::{ErrorObject, FunctionError, WorkflowError};
use crate::events::Io;
use crate::path::JsonPath;
use crate::progress::Attempt;

/// Calls the workflow's functions by their position in its `functions`: implemented by each
/// generated machine (a `match` awaiting the user's trait method).
pub trait CallFunction: Sync {
    /// The workflow's id, for the failures of its runs.
    const WORKFLOW: &'static str;

    /// Calls function `function` with `args`.
    fn call_function(
        &self,
        function: usize,
        args: Value,
    ) -> impl Future<Output = Result<Value, FunctionError>> + Send;
}

/// Runs `call` (a [`Call`]) as attempt `attempt` of its task, changing `data` (a place holding
/// the `Value`, named twice): its arguments, its action awaited, then the result placed; the
/// call's failure, if any, as `Result<(), ErrorObject>`.
///
/// `data` changes only by the final merge or write, and neither changes it when it fails: a
/// failed call leaves `data` as it was. The code generator relies on it (a task with retries
/// and one call copies its input only when the attempt fails).
///
/// A macro rather than an `async fn`: each loop over calls awaits the action itself, and so
/// holds one level of futures fewer, and each level copies the ones inside it as it starts
/// them (issue 10; against an `async fn run`, 0.15% to 0.44% fewer instructions in each
/// benchmark shape). Exported (hidden) for `run_call_step!`, which expands in the user's crate:
/// so it reaches `Call` through public (hidden) methods.
#[doc(hidden)]
#[macro_export]
macro_rules! run_call_in_place {
    ($call:expr, $machine:expr, $attempt:expr, $data:expr, $io:expr) => {{
        let call: &$crate::__private::Call = $call;
        let result = match call.arguments(&$data) {
            ::core::result::Result::Ok(args) => call.action($machine, $attempt, args, $io).await,
            ::core::result::Result::Err(error) => ::core::result::Result::Err(error),
        };
        result.and_then(|result| call.finish(result, &mut $data))
    }};
}

/// One action of an operation task: a call of one of the workflow's functions.
#[derive(Debug, Clone, Copy)]
pub struct Call {
    /// The function's position in the workflow's `functions` (see [`CallFunction`]).
    function: usize,
    /// The function's name, the task's and the action's (or `action N`), for traces, call
    /// contexts and messages.
    function_name: &'static str,
    task: &'static str,
    action: &'static str,
    /// `actionDataFilter.fromStateData`: what of the task data the action sees.
    input: Option<&'static JsonPath>,
    /// The arguments; `None` passes the action's input.
    args: Option<&'static Arguments>,
    /// The earlier drafts' action `outputPath`: what of the result is kept.
    selection: Option<&'static JsonPath>,
    /// `dataResultsPath`: where the result is written; `None` merges it into the task data.
    results: Option<&'static JsonPath>,
    /// The task's output filter, applied after this call (see [`Call::output`]).
    output: Option<&'static JsonPath>,
    /// The action's timeout, and its text as written (`PT10S`).
    timeout: Option<(Duration, &'static str)>,
}

impl Call {
    /// Calls function number `function` (named `function_name`) for action `action` of task
    /// `task`, with the action's input as its arguments, merging its result into the task data.
    #[must_use]
    pub const fn new(
        function: usize,
        function_name: &'static str,
        task: &'static str,
        action: &'static str,
    ) -> Self {
        Self {
            function,
            function_name,
            task,
            action,
            input: None,
            args: None,
            selection: None,
            results: None,
            output: None,
            timeout: None,
        }
    }

    /// The action sees what `path` selects of the task data (`fromStateData`).
    #[must_use]
    pub const fn input(self, path: &'static JsonPath) -> Self {
        Self {
            input: Some(path),
            ..self
        }
    }

    /// The arguments are built by `arguments` from the action's input.
    #[must_use]
    pub const fn args(self, arguments: &'static Arguments) -> Self {
        Self {
            args: Some(arguments),
            ..self
        }
    }

    /// Only what `path` selects of the result is kept.
    #[must_use]
    pub const fn select(self, path: &'static JsonPath) -> Self {
        Self {
            selection: Some(path),
            ..self
        }
    }

    /// The result is written at `path` (`dataResultsPath`) rather than merged.
    #[must_use]
    pub const fn results(self, path: &'static JsonPath) -> Self {
        Self {
            results: Some(path),
            ..self
        }
    }

    /// The task's output filter (`dataOutputPath`) is applied once this call's result is in
    /// the data: the last call of a task whose step then goes on from its output (see
    /// `CallStep`). The filter failing leaves the data as the result made it, so a task
    /// whose retries start again from the data it had does not use it.
    #[must_use]
    pub const fn output(self, path: &'static JsonPath) -> Self {
        Self {
            output: Some(path),
            ..self
        }
    }

    /// The call is limited to `timeout`, written `text` in the workflow.
    #[must_use]
    pub const fn timeout(self, timeout: Duration, text: &'static str) -> Self {
        Self {
            timeout: Some((timeout, text)),
            ..self
        }
    }

    /// The arguments of the call, built from the task data `data`.
    #[doc(hidden)]
    pub fn arguments(&self, data: &Value) -> Result<Value, ErrorObject> {
        match (self.input, self.args) {
            (None, None) => Ok(data.clone()),
            (None, Some(arguments)) => arguments.build(data),
            (Some(path), None) => select_input(path, data),
            (Some(path), Some(arguments)) => arguments.build(&select_input(path, data)?),
        }
    }

    /// The action that calls the function with `args`, as attempt `attempt`: up to the
    /// function's result (see `run_call_in_place!`).
    #[doc(hidden)]
    pub fn action<'a, M: CallFunction>(
        &self,
        machine: &'a M,
        attempt: u32,
        args: Value,
        io: &'a Io,
    ) -> impl Future<Output = Result<Value, ErrorObject>> + use<'a, M> {
        let mut how = ActionCall::new(self.function_name, self.task, self.action, attempt);
        if let Some((timeout, text)) = self.timeout {
            how = how.with_timeout(timeout, text);
        }
        let function = self.function;
        how.call(io, move || machine.call_function(function, args))
    }

    /// The call's last part: what it keeps of the function's `result`, written or merged into
    /// `data` (left as it was when that fails), then the task's output filter, if the call
    /// applies it (see [`output`](Self::output)).
    #[doc(hidden)]
    pub fn finish(&self, mut result: Value, data: &mut Value) -> Result<(), ErrorObject> {
        if let Some(selection) = self.selection {
            filter_in_place(selection, &mut result)?;
        }
        match (self.results, self.output) {
            (None, Some(output)) => {
                merge_result_then_filter(data, result, output, self.task, self.action)
            }
            (None, None) => merge_result(data, result, self.task, self.action),
            (Some(path), Some(output)) => write_result_then_filter(data, result, path, output),
            (Some(path), None) => path.write(data, result),
        }
    }
}

/// Runs `calls` one after the other, as attempt `attempt` of their task, changing `data`: the
/// attempt of an operation task whose actions are all plain sequential calls.
///
/// # Errors
/// The first call's failure (its function's error, a timeout, a path that cannot be
/// evaluated, a result that cannot be merged); the calls before it have changed `data`.
pub async fn call_functions<M: CallFunction>(
    machine: &M,
    calls: &'static [Call],
    attempt: u32,
    data: &mut Value,
    io: &Io,
) -> Result<Attempt<std::convert::Infallible>, ErrorObject> {
    for call in calls {
        crate::run_call_in_place!(call, machine, attempt, *data, io)?;
    }
    Ok(Attempt::Exit(0))
}

/// [`call_functions`] for a task that has no retry or onError and one exit (most operation
/// tasks): the task data after the calls, or the run's failure with the data it had then.
///
/// # Errors
/// The first call's failure, as the run's.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn holds its arguments twice"
)]
pub fn run_calls<'a, M: CallFunction>(
    machine: &'a M,
    calls: &'static [Call],
    attempt: u32,
    mut data: Value,
    io: &'a Io,
) -> impl Future<Output = Result<Value, WorkflowError>> + 'a {
    // Not an `async fn`, which would hold `data` twice (see `run_action`): a smaller future
    // for the levels around it to copy (issue 10).
    async move {
        for call in calls {
            if let Err(error) = crate::run_call_in_place!(call, machine, attempt, data, io) {
                return Err(WorkflowError::new(M::WORKFLOW, call.task, error, data));
            }
        }
        Ok(data)
    }
}

/// [`run_calls`] of one call.
///
/// # Errors
/// As [`run_calls`].
pub fn run_call<'a, M: CallFunction>(
    machine: &'a M,
    call: &'static Call,
    attempt: u32,
    data: Value,
    io: &'a Io,
) -> impl Future<Output = Result<Value, WorkflowError>> + 'a {
    run_calls(machine, std::slice::from_ref(call), attempt, data, io)
}

/// A task that is its plain calls and then one transition (most operation tasks): its calls,
/// its data and the state after them, which the generated `advance` of its scope runs for
/// every such task at one `await`.
///
/// Why: each task awaiting its own calls was an `async fn` of its own and an await point of
/// its scope's `advance`, a coroutine with a suspend state per task that rustc paid for in
/// type checking, borrow checking and LLVM: a workflow of 1,000 tasks took 9 s and 1 GB to
/// build in release (issue 10, point 4). Described by data, a task adds a plain function and
/// every such task of a scope runs through this one future: 3 s and 0.4 GB (the README's
/// "Compile time against task count"). A run does the same work either way (its time and
/// instructions did not change measurably).
#[derive(Debug)]
pub struct CallStep<S> {
    calls: &'static [Call],
    data: Value,
    next: Next<S>,
}

/// A call step's transition: the state it goes to with the data after its calls.
type Next<S> = fn(Value) -> Result<S, WorkflowError>;

impl<S> CallStep<S> {
    /// The task that makes `call` on `data`, then goes where `next` says with the data after it.
    pub fn one(call: &'static Call, data: Value, next: Next<S>) -> Self {
        Self::new(std::slice::from_ref(call), data, next)
    }

    /// The task that makes `calls` one after the other on `data`, then goes where `next` says
    /// with the data after them.
    pub fn new(calls: &'static [Call], data: Value, next: Next<S>) -> Self {
        Self { calls, data, next }
    }

    /// Its calls, its data and its transition, for `run_call_step!`.
    #[doc(hidden)]
    pub fn into_parts(self) -> (&'static [Call], Value, Next<S>) {
        (self.calls, self.data, self.next)
    }
}

/// The failure of a run in `call` of the workflow `M` (which `machine` names, for
/// `run_call_step!`), with the data it had.
#[doc(hidden)]
#[cold]
pub fn call_failed<M: CallFunction>(
    _machine: &M,
    call: &Call,
    error: ErrorObject,
    data: Value,
) -> WorkflowError {
    WorkflowError::new(M::WORKFLOW, call.task, error, data)
}

/// Runs the [`CallStep`] `$step` where it is written: its calls (as its first attempt: such a
/// task has no retry), then its transition; it evaluates to the step's result, or to the first
/// call's failure, as the run's, with the data it had then (the calls before it have changed
/// it). The generated `advance` of a scope whose tasks share their calls' `await` runs them so,
/// in its own future, rather than awaiting a future of the step's own, which it copied whole as
/// it started it each step (issue 10). `$machine` is the machine (`&M`, `M: CallFunction`),
/// `$io` the instance's `&Io`. Each call is [`run_call_in_place!`]'s.
#[doc(hidden)]
#[macro_export]
macro_rules! run_call_step {
    ($step:expr, $machine:expr, $io:expr) => {{
        let machine = $machine;
        let io: &$crate::__private::Io = $io;
        let (calls, mut data, next) = $crate::__private::CallStep::into_parts($step);
        let mut failed = ::core::option::Option::None;
        for call in calls {
            if let ::core::result::Result::Err(error) =
                $crate::__private::run_call_in_place!(call, machine, 1, data, io)
            {
                failed = ::core::option::Option::Some((call, error));
                break;
            }
        }
        match failed {
            ::core::option::Option::None => next(data).map($crate::__private::Progress::Ran),
            ::core::option::Option::Some((call, error)) => ::core::result::Result::Err(
                $crate::__private::call_failed(machine, call, error, data),
            ),
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arguments::Template;
    use crate::path::Segment;
    use crate::progress::Progress;
    use serde_json::json;

    static PATH_A: JsonPath = JsonPath::definite("$.a", &[Segment::Key("a")]);
    static PATH_OUT: JsonPath = JsonPath::definite("$.out", &[Segment::Key("out")]);
    static PATH_KEEP: JsonPath = JsonPath::definite("$.keep", &[Segment::Key("keep")]);

    /// Function 0 echoes its arguments, function 1 fails, function 2 never finishes.
    struct Echo;

    impl CallFunction for Echo {
        const WORKFLOW: &'static str = "echo";

        async fn call_function(
            &self,
            function: usize,
            args: Value,
        ) -> Result<Value, FunctionError> {
            match function {
                0 => Ok(args),
                1 => Err(FunctionError::named("Refused", "no")),
                _ => std::future::pending().await,
            }
        }
    }

    #[tokio::test]
    async fn calls_merge_write_select_and_stop_at_the_first_failure() {
        static KEEP_A: Arguments =
            Arguments::new(Template::Object(&[("keep", Template::Path(&PATH_A))]));
        static CALLS: [Call; 3] = [
            // Input narrowed to `$.a`, passed whole, merged.
            Call::new(0, "echo", "T", "first").input(&PATH_A),
            // Arguments from a template, the result's `keep` written at `$.out`.
            Call::new(0, "echo", "T", "second")
                .args(&KEEP_A)
                .select(&PATH_KEEP)
                .results(&PATH_OUT),
            Call::new(1, "refuse", "T", "third"),
        ];
        let io = Io::standalone();
        let mut data = json!({"a": {"b": 1}});
        let error = call_functions(&Echo, &CALLS, 1, &mut data, &io)
            .await
            .unwrap_err();
        assert_eq!(error.name, "Refused");
        assert_eq!(data, json!({"a": {"b": 1}, "b": 1, "out": {"b": 1}}));

        let mut data = json!({"a": {"c": 2}});
        let attempt = call_functions(&Echo, &CALLS[..1], 1, &mut data, &io).await;
        assert!(matches!(attempt, Ok(Attempt::Exit(0))), "{attempt:?}");
        assert_eq!(data, json!({"a": {"c": 2}, "c": 2}));
    }

    #[tokio::test]
    async fn a_plain_task_fails_the_run_with_its_data_and_name() {
        static CALLS: [Call; 2] = [
            Call::new(0, "echo", "T", "first").input(&PATH_A),
            Call::new(1, "refuse", "T", "second"),
        ];
        let io = Io::standalone();
        let data = run_call(&Echo, &CALLS[0], 1, json!({"a": {"b": 1}}), &io).await;
        assert_eq!(data.unwrap(), json!({"a": {"b": 1}, "b": 1}));
        let failure = run_calls(&Echo, &CALLS, 1, json!({"a": {"b": 1}}), &io)
            .await
            .unwrap_err();
        assert_eq!(failure.workflow(), "echo");
        assert_eq!(failure.task(), "T");
        assert_eq!(failure.error().name, "Refused");
        assert_eq!(failure.data(), &json!({"a": {"b": 1}, "b": 1}));
    }

    #[tokio::test]
    async fn a_call_step_runs_its_calls_then_its_transition_or_fails_with_the_data_it_had() {
        static CALLS: [Call; 2] = [
            Call::new(0, "echo", "T", "first").input(&PATH_A),
            Call::new(1, "refuse", "T", "second"),
        ];
        fn next(data: Value) -> Result<Value, WorkflowError> {
            Ok(json!({"after": data}))
        }
        fn refuse(data: Value) -> Result<Value, WorkflowError> {
            Err(WorkflowError::new(
                "echo",
                "T",
                ErrorObject::new(ErrorObject::DATA, "no"),
                data,
            ))
        }
        /// The step run as the generated `advance` runs it.
        async fn run<S>(step: CallStep<S>, io: &Io) -> Result<Progress<S>, WorkflowError> {
            crate::run_call_step!(step, &Echo, io)
        }
        let io = Io::standalone();
        let ran = run(CallStep::one(&CALLS[0], json!({"a": {"b": 1}}), next), &io).await;
        assert_eq!(
            ran.unwrap(),
            Progress::Ran(json!({"after": {"a": {"b": 1}, "b": 1}}))
        );

        let failure = run(CallStep::new(&CALLS, json!({"a": {"b": 1}}), next), &io)
            .await
            .unwrap_err();
        assert_eq!((failure.workflow(), failure.task()), ("echo", "T"));
        assert_eq!(failure.error().name, "Refused");
        assert_eq!(failure.data(), &json!({"a": {"b": 1}, "b": 1}));

        let refused = run(
            CallStep::one(&CALLS[0], json!({"a": {"c": 2}}), refuse),
            &io,
        )
        .await
        .unwrap_err();
        assert_eq!(refused.error().name, ErrorObject::DATA);
        assert_eq!(refused.data(), &json!({"a": {"c": 2}, "c": 2}));
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_past_its_timeout_fails_with_a_timeout_error() {
        static CALLS: [Call; 1] =
            [Call::new(2, "never", "T", "wait").timeout(Duration::from_secs(5), "PT5S")];
        let io = Io::standalone();
        let mut data = json!({"kept": true});
        let error = call_functions(&Echo, &CALLS, 1, &mut data, &io)
            .await
            .unwrap_err();
        assert_eq!(error.name, ErrorObject::TIMEOUT);
        assert!(error.message.contains("PT5S"), "{}", error.message);
        assert_eq!(data, json!({"kept": true}));
    }
}
