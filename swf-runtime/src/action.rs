//! Running one action: the user's function under the action's timeout, with its call context.

use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;
use tracing::Instrument;

use crate::error::{ErrorObject, FunctionError};
use crate::events::Io;
use crate::inline::leave_inline;
use crate::scope_path::ScopePath;
use crate::scoped::{Scoped, read, scoped_thread_local};
use crate::trace;

/// The name of the error a function that panics raises.
pub const FUNCTION_PANIC: &str = "FunctionPanic";

scoped_thread_local! {
    /// The path of the nested scope a future runs in (`Fork/Branch A`, `Each[3]`), empty at a
    /// workflow's top level. Held by value, not behind an `Arc`: every branch and iteration
    /// enters a scope of its own at each step, and only a scope nested in another shares its
    /// outer one (issue 10: one allocation fewer per branch and per iteration).
    static SCOPE: ScopePath
}
scoped_thread_local! {
    /// The call a function runs for.
    static CALL: CallSite
}
thread_local! {
    /// Set while a round makes the step of one of its branches or iterations, for the scope it
    /// enters to keep (see [`member_step`]). A plain thread-local, as the value is copied: a
    /// scoped one (a pointer to a value set around a closure) is reached through an indirect
    /// call each time, four per branch and per iteration (issue 10).
    static MEMBER: Cell<Option<Member>> = const { Cell::new(None) };
}

/// Where the calls of a branch's or an iteration's step count their keys from.
#[derive(Debug, Clone, Copy)]
struct Member {
    /// The step of the instance in which the outermost running parallel or foreach task
    /// started its branches or iterations.
    origin: u64,
    /// Which step of its branch or iteration this is (0 for the first, counted in the saved
    /// state): a branch that comes back to a task calls it under another key.
    step: u32,
}

/// What a function is being called for: readable from inside the function with
/// [`CallContext::current`], without changing its arguments.
///
/// Calls are at least once: a step interrupted by a crash (or a branch cancelled once its
/// parallel task had what it needed) runs again, calling its functions again. The
/// [`idempotency key`](CallContext::idempotency_key) is the same when the same attempt runs
/// again and differs between retries, so a function can make its effect happen once (a payment
/// service deduplicates by it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallContext {
    /// The instance, as its host names it (`<workflow>-<id>` under a durable host).
    pub instance: String,
    /// The step of the instance the call belongs to (its revision under a durable host); in a
    /// branch or iteration, the step in which its parallel or foreach task started them.
    pub step: u64,
    /// The nested scope the task runs in, each branch or iteration with its count of steps
    /// so far (`Fork/Branch A@2`, `Each[3]`), empty at the top.
    pub scope: String,
    /// The task's name.
    pub task: String,
    /// The action's name (or `action N`).
    pub action: String,
    /// Which attempt of the task (or of the action, for the earlier drafts' action retries):
    /// 1, then 2 after one retry...
    pub attempt: u32,
}

/// What a running call keeps of its [`CallContext`]: the instance's `Io` (its name is made
/// when first read), the task's and action's names as the generated code wrote them, so that a
/// call copies no text unless its function asks for its context. Neither the scope path nor
/// the step its keys count from is kept: the function runs inside its scope, set for each poll
/// and for its drop, and within the instance's step, where its context reads both (issue 10:
/// reading the step's origin for every call, most of which never ask, read the scope twice).
struct CallSite {
    /// The instance's `Io`, for its name (see [`Io::id_prefix`]) and its step.
    io: Io,
    task: &'static str,
    action: &'static str,
    attempt: u32,
}

impl CallSite {
    fn context(&self) -> CallContext {
        CallContext {
            instance: self.io.id_prefix().to_owned(),
            step: step_origin(&self.io),
            scope: current_scope(),
            task: self.task.to_owned(),
            action: self.action.to_owned(),
            attempt: self.attempt,
        }
    }
}

pin_project_lite::pin_project! {
    /// The user's `call`, its [`CallSite`] readable inside it (see [`CallContext::current`])
    /// and a panic in one of its polls caught: a [`Scoped`] around `futures`' `CatchUnwind`
    /// around `AssertUnwindSafe`, in one future, which the action moves once rather than three
    /// layers (issue 10). Its output is the call's, or the panic's payload. Dropped inside the
    /// call site once it completes, or when the action is dropped first (a cancelled call), so
    /// that its destructors still read their context; a call that panicked is dropped so too.
    struct GuardedCall<F> {
        site: CallSite,
        #[pin]
        call: Option<F>,
    }

    impl<F> PinnedDrop for GuardedCall<F> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            let mut call = this.call;
            if call.is_some() {
                CALL.set(this.site, || call.set(None));
            }
        }
    }
}

impl<F> GuardedCall<F> {
    /// `call`, to run at `site`.
    fn new(site: CallSite, call: F) -> Self {
        Self {
            site,
            call: Some(call),
        }
    }
}

// Its poll and drop are `Scoped`'s with the panic caught, written again: the two sharing one
// helper (the catch passed in as a closure) measured 20 more instructions per call and seq10
// 2% slower (2026-11-29).
impl<F: Future> Future for GuardedCall<F> {
    type Output = Result<F::Output, Box<dyn std::any::Any + Send>>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut call = this.call;
        CALL.set(this.site, || {
            // Pending for ever once completed (it is never polled again so).
            let Some(running) = call.as_mut().as_pin_mut() else {
                return Poll::Pending;
            };
            match std::panic::catch_unwind(AssertUnwindSafe(|| running.poll(context))) {
                Ok(Poll::Pending) => Poll::Pending,
                Ok(Poll::Ready(output)) => {
                    call.set(None);
                    Poll::Ready(Ok(output))
                }
                Err(payload) => Poll::Ready(Err(payload)),
            }
        })
    }
}

impl CallContext {
    /// The context of the call running now, when called from inside a function that a workflow
    /// called.
    pub fn current() -> Option<CallContext> {
        read(&CALL, CallSite::context)
    }

    /// A key naming this call: the same for the same attempt run again, different for another
    /// attempt, another task, another instance. `<instance>/<step>/<scope>/<task>/<action>#<attempt>`.
    pub fn idempotency_key(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}/{}/{}#{}",
            self.instance, self.step, self.scope, self.task, self.action, self.attempt
        )
    }
}

/// Runs the future `make` makes inside the nested scope `segment` of the current one (a
/// branch's `Fork/Branch A`, a sub-flow's task; `segment@n` for the `n`th step of a branch in
/// one round, see `member_step`).
pub fn in_scope<F: Future, M: FnOnce() -> F>(
    segment: &'static str,
    make: M,
) -> impl Future<Output = F::Output> + use<F, M> {
    enter(segment, None, make)
}

/// Runs the future `make` makes inside the scope of item `item`'s iteration of foreach task
/// `task` (`Each[3]`, `Each[3]@n` for its `n`th step in one round).
pub fn in_iteration<F: Future, M: FnOnce() -> F>(
    task: &'static str,
    item: usize,
    make: M,
) -> impl Future<Output = F::Output> + use<F, M> {
    enter(task, Some(item), make)
}

fn enter<F: Future, M: FnOnce() -> F>(
    name: &'static str,
    item: Option<usize>,
    make: M,
) -> impl Future<Output = F::Output> + use<F, M> {
    let member = MEMBER.with(Cell::get);
    let outer = read(&SCOPE, |outer| Arc::new(outer.clone()));
    // A member's scope counts from its task's origin; another (a sub-flow's task) from the
    // scope it is in, if any.
    let origin = member
        .map(|member| member.origin)
        .or_else(|| outer.as_ref().and_then(|outer| outer.origin()));
    let step = member.map_or(0, |member| member.step);
    // Its parts, not its text: a step that nobody asks about writes nothing out.
    let path = ScopePath::new(outer, name, item, step).with_origin(origin);
    // Boxed here, where the step's future is made: it holds the future of the scope's largest
    // task, which every layer around it (the member's step counts, its span, the round's
    // future) would otherwise copy as it is moved into each.
    Scoped::new(&SCOPE, path, crate::boxed::pinned!(make()))
}

/// The step of one branch or iteration: `start` makes its future, entering its scope with
/// [`in_scope`] or [`in_iteration`], which keeps `step`, the member's count of steps so far,
/// and `origin`, the instance's step in which the task started its members. So each call's key
/// depends only on saved counts, never on how the steps of concurrent members fell into the
/// instance's steps: a step that runs again after a crash calls under the same keys. Kept in
/// the scope rather than in a scoped value of its own around the future, which every poll of
/// every member's step would pay for (issue 10).
pub(crate) fn member_step<F: Future>(origin: u64, step: u32, start: impl FnOnce() -> F) -> F {
    /// Puts back the member that was set before, when the step is made or if making it
    /// panics.
    struct Restore(Option<Member>);
    impl Drop for Restore {
        fn drop(&mut self) {
            MEMBER.with(|member| member.set(self.0));
        }
    }
    let _restore = Restore(MEMBER.with(|member| member.replace(Some(Member { origin, step }))));
    start()
}

/// Whether the code running now is inside a nested scope (a parallel branch, a foreach
/// iteration, a sub-flow run inline) rather than at the top of its instance's state.
pub(crate) fn in_nested_scope() -> bool {
    SCOPE.is_set()
}

/// The step a parallel or foreach task starting its members now counts their calls' keys
/// from: the instance's current step, or, inside another such task, that task's origin.
pub fn step_origin(io: &Io) -> u64 {
    read(&SCOPE, ScopePath::origin)
        .flatten()
        .unwrap_or_else(|| io.step_number())
}

/// One action's call, as generated code describes it.
#[derive(Debug, Clone, Copy)]
pub struct ActionCall<'a> {
    /// The function's name, as the workflow defines it.
    pub function: &'a str,
    /// The task's name.
    pub task: &'a str,
    /// The action's name (or `action N`).
    pub action: &'a str,
    /// The action's timeout.
    pub timeout: Option<Duration>,
    /// The timeout as written in the workflow (`PT15M`), for messages.
    pub timeout_text: &'a str,
    /// Which attempt of the task or action this is.
    pub attempt: u32,
}

impl<'a> ActionCall<'a> {
    /// Attempt `attempt` of action `action` of task `task`, calling `function`, with no timeout.
    #[must_use]
    pub const fn new(function: &'a str, task: &'a str, action: &'a str, attempt: u32) -> Self {
        Self {
            function,
            task,
            action,
            timeout: None,
            timeout_text: "",
            attempt,
        }
    }

    /// The same call limited to `timeout`, written `text` in the workflow (`PT15M`).
    #[must_use]
    pub const fn with_timeout(self, timeout: Duration, text: &'a str) -> Self {
        Self {
            timeout: Some(timeout),
            timeout_text: text,
            ..self
        }
    }
}

impl ActionCall<'static> {
    /// Awaits the future `call` makes (the user's function) for at most the action's timeout,
    /// with its [`CallContext`] readable from inside it. `call` runs on the instance's own task,
    /// never inline on a host's router (a function may block or panic): see [`leave_inline`].
    ///
    /// A [`FunctionError`] becomes an [`ErrorObject`] with the same name, message and trace, so
    /// `onError` and `retry` expressions see what the function reported. When the timeout
    /// elapses first, the call is dropped (cancelled) and a `TimeoutError` is returned; a
    /// function that panics raises a `FunctionPanic` error with the panic's message. Both are
    /// handled like any other error of the task.
    ///
    /// # Errors
    /// The function's error, a `TimeoutError` or a `FunctionPanic`.
    pub fn call<C, F>(self, io: &Io, call: C) -> impl Future<Output = Result<Value, ErrorObject>>
    where
        C: FnOnce() -> F,
        F: Future<Output = Result<Value, FunctionError>>,
    {
        // Not an `async fn` around `run_action`: each level of futures copies the ones inside
        // it when it starts them (issue 10).
        run_action(io, self, call)
    }
}

/// [`ActionCall::call`] of a future already made (the module's tests call it so).
#[cfg(test)]
async fn call_action<F>(io: &Io, how: ActionCall<'static>, call: F) -> Result<Value, ErrorObject>
where
    F: Future<Output = Result<Value, FunctionError>>,
{
    run_action(io, how, || call).await
}

/// [`ActionCall::call`].
///
/// Written as a function returning an `async move` block rather than an `async fn`, which
/// would move its arguments into locals of its own and so hold each twice; and the timed call
/// boxed, so that the calls without a timeout (most) do not hold room for its timer. Both
/// shrink the future that every level around it copies as it starts it (issue 10).
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn holds its arguments twice"
)]
fn run_action<C, F>(
    io: &Io,
    how: ActionCall<'static>,
    make: C,
) -> impl Future<Output = Result<Value, ErrorObject>>
where
    C: FnOnce() -> F,
    F: Future<Output = Result<Value, FunctionError>>,
{
    async move {
        // Before the user's code, which starts when `make` makes the future.
        leave_inline().await;
        let span = trace::action_span(how.function, how.task, how.action, how.attempt);
        let started = trace::call_started(&span);
        let site = CallSite {
            io: io.clone(),
            task: how.task,
            action: how.action,
            attempt: how.attempt,
        };
        // The user's future is made in the guard where the guard is awaited: made first and
        // awaited later, it was copied into the guard and the guard into the await's place,
        // two calls of `memcpy` per call (issue 10).
        let outcome = match how.timeout {
            // With nobody listening, the span's wrapper would only add a layer to every poll.
            None if span.is_disabled() => GuardedCall::new(site, make()).await,
            None => {
                GuardedCall::new(site, make())
                    .instrument(span.clone())
                    .await
            }
            Some(limit) => {
                let call = GuardedCall::new(site, make());
                match Box::pin(tokio::time::timeout(limit, call).instrument(span.clone())).await {
                    Ok(outcome) => outcome,
                    Err(_elapsed) => {
                        span.in_scope(|| trace::timed_out(how.action, how.timeout_text));
                        trace::record_call(&span, started, Err(ErrorObject::TIMEOUT));
                        return Err(ErrorObject::new(
                            ErrorObject::TIMEOUT,
                            format!(
                                "action `{}` of task `{}` did not complete within {}",
                                how.action, how.task, how.timeout_text
                            ),
                        ));
                    }
                }
            }
        };
        let result = match outcome {
            Ok(result) => result.map_err(ErrorObject::from),
            Err(payload) => Err(ErrorObject::new(
                FUNCTION_PANIC,
                format!(
                    "the function of action `{}` of task `{}` panicked: {}",
                    how.action,
                    how.task,
                    panic_message(payload.as_ref())
                ),
            )),
        };
        trace::record_call(
            &span,
            started,
            result
                .as_ref()
                .map(drop)
                .map_err(|error| error.name.as_str()),
        );
        result
    }
}

/// The nested scope the code running now is in (`Fork/Branch A@2/Each[3]`), empty at the top.
pub(crate) fn current_scope() -> String {
    CurrentScope.to_string()
}

/// The nested scope the code running now is in, read when it is written out: a span's field
/// that only a listening subscriber formats (tracing evaluates a disabled span's fields not at
/// all), so that a call nobody traces does not read the scope (issue 10).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CurrentScope;

impl fmt::Display for CurrentScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        read(&SCOPE, |scope| scope.fmt(f)).unwrap_or(Ok(()))
    }
}

/// The text of a panic's payload (a `&str` or a `String`), or a placeholder.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| String::from("(a payload that is not text)"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tokio::time::{Instant, sleep};

    use super::*;

    const LIMIT: Duration = Duration::from_secs(5);

    fn how(timeout: Option<Duration>) -> ActionCall<'static> {
        ActionCall {
            function: "inventory",
            task: "Check",
            action: "inventory",
            timeout,
            timeout_text: "PT5S",
            attempt: 1,
        }
    }

    async fn slow(after: Duration) -> Result<Value, FunctionError> {
        sleep(after).await;
        Ok(json!({"done": true}))
    }

    #[tokio::test(start_paused = true)]
    async fn the_timeout_fires_exactly_at_the_limit() {
        let io = Io::standalone();
        let started = Instant::now();
        let result = call_action(&io, how(Some(LIMIT)), slow(Duration::from_secs(60))).await;
        assert_eq!(started.elapsed(), LIMIT);
        assert_eq!(
            result,
            Err(ErrorObject::new(
                ErrorObject::TIMEOUT,
                "action `inventory` of task `Check` did not complete within PT5S"
            ))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_that_finishes_in_time_returns_its_value() {
        let io = Io::standalone();
        let started = Instant::now();
        let result = call_action(&io, how(Some(LIMIT)), slow(Duration::from_secs(4))).await;
        assert_eq!(started.elapsed(), Duration::from_secs(4));
        assert_eq!(result, Ok(json!({"done": true})));
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_timeout_the_call_may_take_any_time() {
        let io = Io::standalone();
        let result = call_action(&io, how(None), slow(Duration::from_secs(86_400))).await;
        assert_eq!(result, Ok(json!({"done": true})));
    }

    #[test]
    fn the_future_is_send_when_the_call_is() {
        // Generated machines are spawned on multi-threaded runtimes.
        fn assert_send<T: Send>(_: &T) {}
        let io = Io::standalone();
        let future = call_action(&io, how(Some(LIMIT)), slow(LIMIT));
        assert_send(&future);
    }

    #[tokio::test(start_paused = true)]
    async fn function_errors_keep_their_properties() {
        let io = Io::standalone();
        let failing =
            async { Err(FunctionError::named("OutOfStock", "no more apples").with_trace("t")) };
        let result = call_action(&io, how(Some(LIMIT)), failing).await;
        assert_eq!(
            result,
            Err(ErrorObject::new("OutOfStock", "no more apples").with_trace("t"))
        );
    }

    #[tokio::test]
    async fn a_panicking_function_raises_a_function_panic() {
        let io = Io::standalone();
        let panicking = async {
            if io.step_number() < u64::MAX {
                panic!("card reader on fire");
            }
            Ok(Value::Null)
        };
        let result = call_action(&io, how(None), panicking).await;
        assert_eq!(
            result,
            Err(ErrorObject::new(
                FUNCTION_PANIC,
                "the function of action `inventory` of task `Check` panicked: card reader on fire"
            ))
        );
    }

    /// Records, when dropped, the action of the call context it finds.
    struct ReadsContext(Arc<std::sync::Mutex<Vec<Option<String>>>>);

    impl Drop for ReadsContext {
        fn drop(&mut self) {
            let action = CallContext::current().map(|context| context.action);
            self.0.lock().unwrap().push(action);
        }
    }

    /// A call that its timeout cancels, and one that panics, are dropped inside their call
    /// site: their destructors still read their context (a function releasing what it holds
    /// under its idempotency key, say).
    #[tokio::test(start_paused = true)]
    async fn a_cancelled_or_panicked_call_is_dropped_inside_its_context() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let io = Io::standalone();
        let held = ReadsContext(Arc::clone(&seen));
        let slow = async move {
            let _held = held;
            slow(Duration::from_secs(60)).await
        };
        let result = call_action(&io, how(Some(LIMIT)), slow).await;
        assert_eq!(result.unwrap_err().name, ErrorObject::TIMEOUT);
        let held = ReadsContext(Arc::clone(&seen));
        let panicking = async {
            let _held = held;
            if io.step_number() < u64::MAX {
                panic!("card reader on fire");
            }
            Ok(Value::Null)
        };
        let result = call_action(&io, how(None), panicking).await;
        assert_eq!(result.unwrap_err().name, FUNCTION_PANIC);
        let inventory = Some(String::from("inventory"));
        assert_eq!(*seen.lock().unwrap(), [inventory.clone(), inventory]);
        assert_eq!(CallContext::current(), None);
    }

    #[tokio::test]
    async fn a_function_reads_its_call_context_and_key() {
        let io = Io::standalone();
        let call = async {
            let context = CallContext::current().ok_or_else(|| FunctionError::new("no context"))?;
            Ok(json!({"scope": context.scope, "key": context.idempotency_key()}))
        };
        let seen = in_scope("Fork/Branch A", || call_action(&io, how(None), call)).await;
        let prefix = io.id_prefix().to_owned();
        assert_eq!(
            seen,
            Ok(json!({
                "scope": "Fork/Branch A",
                "key": format!("{prefix}/0/Fork/Branch A/Check/inventory#1"),
            }))
        );
        assert_eq!(CallContext::current(), None);
    }

    #[tokio::test]
    async fn an_iterations_scope_names_its_item_and_its_step() {
        let io = Io::standalone();
        let call = async {
            let context = CallContext::current().ok_or_else(|| FunctionError::new("no context"))?;
            Ok(json!(context.scope))
        };
        // The iteration's step is made inside the branch's, as a round makes it.
        let branch = async {
            member_step(0, 2, || {
                in_iteration("Each", 3, || call_action(&io, how(None), call))
            })
            .await
        };
        let seen = in_scope("Fork/Branch A", || branch).await;
        assert_eq!(seen, Ok(json!("Fork/Branch A/Each[3]@2")));
    }

    /// The member a round sets while it makes a step is the one that step's scope sees, the
    /// outer one is back once it is made, and a step whose making panics sets nothing that
    /// outlives it.
    #[test]
    fn a_members_step_sees_its_member_and_puts_the_outer_one_back() {
        let current = || {
            MEMBER
                .with(Cell::get)
                .map(|member| (member.origin, member.step))
        };
        assert_eq!(current(), None);
        // The step's future is what the closure makes: here a ready one holding what it saw.
        let seen = member_step(4, 1, || {
            let inner = member_step(7, 2, || std::future::ready(current())).into_inner();
            std::future::ready((current(), inner))
        })
        .into_inner();
        assert_eq!(seen, (Some((4, 1)), Some((7, 2))));
        assert_eq!(current(), None);
        let panicked = std::panic::catch_unwind(|| {
            member_step(9, 3, || -> std::future::Ready<()> {
                panic!("making the step failed")
            })
        });
        assert!(panicked.is_err());
        assert_eq!(
            current(),
            None,
            "the panicking step's member is not left set"
        );
    }

    /// A call counts its key from the instance's step, except in a branch or an iteration,
    /// where it counts from the step in which the outermost running task started them: in a
    /// sub-flow's scope or a nested task's members too.
    #[tokio::test]
    async fn calls_count_their_keys_from_the_outermost_members_origin() {
        let io = Io::standalone();
        for _ in 0..3 {
            io.begin_step();
        }
        let step = || async {
            let context = CallContext::current().ok_or_else(|| FunctionError::new("no context"))?;
            Ok(json!(context.step))
        };
        assert_eq!(call_action(&io, how(None), step()).await, Ok(json!(3)));
        let member = member_step(1, 0, || {
            in_scope("Fork/Branch A", || async {
                let own = call_action(&io, how(None), step()).await;
                let sub_flow = in_scope("Sub/Task", || call_action(&io, how(None), step())).await;
                let nested = member_step(step_origin(&io), 0, || {
                    in_iteration("Each", 0, || call_action(&io, how(None), step()))
                })
                .await;
                (own, sub_flow, nested)
            })
        });
        io.begin_step();
        let (own, sub_flow, nested) = member.await;
        assert_eq!(own, Ok(json!(1)));
        assert_eq!(sub_flow, Ok(json!(1)));
        assert_eq!(nested, Ok(json!(1)));
        assert_eq!(step_origin(&io), 4, "outside every member");
    }
}
