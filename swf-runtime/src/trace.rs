//! What instances do, as `tracing` spans and events (target `swf`): a `workflow` span per
//! instance run, a `task` span per step, an `action` span per function call, and span events
//! for events consumed and produced, retries scheduled, timeouts and compensation.
//!
//! Attribute names follow OpenTelemetry's drafts for workflows where they exist
//! (`workflow.id`, `workflow.name`, `workflow.execution.id`, `workflow.execution.outcome`) and
//! CloudEvents' semantic conventions (`cloudevents.event_id`, `cloudevents.event_source`,
//! `cloudevents.event_type`). With no subscriber (or one that does not want target `swf`), a
//! span costs one atomic load at its call site: no field is computed.

use std::future::Future;
use std::time::{Duration, Instant};

use cloudevents::{AttributesReader, Event};
use tracing::field::Empty;
use tracing::{Level, Span};

use crate::concurrent::{ScopeEnd, ScopeState};
use crate::error::WorkflowError;
use crate::events::Io;

/// Awaits `future` inside `span`, or bare when the span is disabled: with nobody listening,
/// tracing's wrapper would only add a layer to every poll, a drop, and a copy of the future as
/// the wrapper takes it. A macro rather than a function, whose future would be one more level
/// around the one it awaits (issue 10). With `?` last, the `?` is applied in each branch, as
/// the step loops wrote it: applied to the `if`'s value, it measured 38 more instructions per
/// run of ten steps.
macro_rules! in_span {
    ($future:expr, $span:expr) => {{
        let span: ::tracing::Span = $span;
        if span.is_disabled() {
            $future.await
        } else {
            ::tracing::Instrument::instrument($future, span).await
        }
    }};
    ($future:expr, $span:expr, ?) => {{
        let span: ::tracing::Span = $span;
        if span.is_disabled() {
            $future.await?
        } else {
            ::tracing::Instrument::instrument($future, span).await?
        }
    }};
}

pub(crate) use in_span;

/// The workflow a run belongs to, as generated code names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkflowInfo {
    /// Its `id`.
    pub id: &'static str,
    /// Its `name`.
    pub name: &'static str,
    /// Its `version`, if it has one.
    pub version: Option<&'static str>,
}

/// The span of one instance's run.
pub(crate) fn workflow_span<E: AsRef<str>>(
    workflow: &WorkflowInfo,
    execution: impl FnOnce() -> E,
) -> Span {
    tracing::info_span!(
        target: "swf",
        "workflow",
        workflow.id = workflow.id,
        workflow.name = workflow.name,
        workflow.version = workflow.version.unwrap_or_default(),
        // Read only when somebody listens: most runs never name their instance.
        workflow.execution.id = execution().as_ref(),
        workflow.execution.outcome = Empty,
        error.name = Empty,
        task.name = Empty,
    )
}

/// Records how the run in `span` ended.
pub(crate) fn record_outcome(span: &Span, outcome: &Result<ScopeEnd, WorkflowError>) {
    if span.is_disabled() {
        return;
    }
    match outcome {
        Ok(ScopeEnd::Completed(_)) => {
            span.record("workflow.execution.outcome", "completed");
        }
        Ok(ScopeEnd::Terminated(_)) => {
            span.record("workflow.execution.outcome", "terminated");
        }
        Err(error) => {
            span.record("workflow.execution.outcome", "failed");
            span.record("error.name", error.error().name.as_str());
            span.record("task.name", error.task());
        }
    }
}

/// Records on the current `workflow` span how a durable instance ended.
pub(crate) fn record_ended(ended: &crate::durable::Ended) {
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    match ended {
        crate::durable::Ended::Completed(_) => {
            span.record("workflow.execution.outcome", "completed");
        }
        crate::durable::Ended::Failed(error) => {
            span.record("workflow.execution.outcome", "failed");
            span.record("error.name", error.error().name.as_str());
            span.record("task.name", error.task());
        }
        crate::durable::Ended::Cancelled(_) => {
            span.record("workflow.execution.outcome", "cancelled");
        }
    }
}

/// Runs an instance (`run`, the future of its whole run) inside its `workflow` span, and
/// records the outcome.
///
/// A function returning an `async` block rather than an `async fn`, which would hold its
/// arguments twice: the generated `run` holds this future, and block_on copies it (issue 10).
///
/// # Errors
/// The run's.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn holds its arguments twice"
)]
pub fn traced_run<F>(
    workflow: WorkflowInfo,
    io: &Io,
    run: F,
) -> impl Future<Output = Result<ScopeEnd, WorkflowError>>
where
    F: Future<Output = Result<ScopeEnd, WorkflowError>>,
{
    async move {
        let span = workflow_span(&workflow, || io.id_prefix());
        let outcome = in_span!(run, span.clone());
        record_outcome(&span, &outcome);
        outcome
    }
}

/// The span of one step of a scope at `state`.
pub(crate) fn task_span<S: ScopeState>(state: &S) -> Span {
    tracing::info_span!(
        target: "swf",
        "task",
        task.name = state.position(),
        task.type = state.task_type(),
        task.scope = %crate::action::CurrentScope,
        task.attempt = Empty,
    )
}

/// The span of one function call.
pub(crate) fn action_span(function: &str, task: &str, action: &str, attempt: u32) -> Span {
    let scope = crate::action::CurrentScope;
    let span = tracing::info_span!(
        target: "swf",
        "action",
        action.function = function,
        action.name = action,
        action.attempt = i64::from(attempt),
        task.name = task,
        task.scope = %scope,
        action.outcome = Empty,
        action.duration_ms = Empty,
        error.name = Empty,
    );
    // The task span learns its attempt, and its scope path inside branches and iterations,
    // from the action it runs; with nobody listening, nothing more is done.
    if !span.is_disabled() {
        let task_span = Span::current();
        task_span.record("task.attempt", i64::from(attempt));
        task_span.record("task.scope", tracing::field::display(scope));
    }
    span
}

/// When a call traced in `span` starts: read only when somebody listens.
pub(crate) fn call_started(span: &Span) -> Option<Instant> {
    (!span.is_disabled()).then(Instant::now)
}

/// Records how the call in `span`, started at `started`, ended (`Err` with the error's name).
pub(crate) fn record_call(span: &Span, started: Option<Instant>, outcome: Result<(), &str>) {
    let Some(started) = started else {
        return;
    };
    span.record(
        "action.duration_ms",
        started.elapsed().as_secs_f64() * 1_000.0,
    );
    match outcome {
        Ok(()) => span.record("action.outcome", "ok"),
        Err(name) => {
            span.record("action.outcome", "error");
            span.record("error.name", name)
        }
    };
}

/// An event a step took from its inbox (linked, with feature `otel`, to the span its
/// `traceparent` names).
pub(crate) fn event_consumed(event: &Event) {
    #[cfg(feature = "otel")]
    if let Some(traceparent) = crate::events::context_attribute(event, "traceparent") {
        context::link(&traceparent);
    }
    tracing::event!(
        target: "swf",
        Level::INFO,
        cloudevents.event_id = event.id(),
        cloudevents.event_source = %event.source(),
        cloudevents.event_type = event.ty(),
        traceparent = crate::events::context_attribute(event, "traceparent").unwrap_or_default(),
        "event consumed"
    );
}

/// An event a step produced.
pub(crate) fn event_produced(event: &Event) {
    tracing::event!(
        target: "swf",
        Level::INFO,
        cloudevents.event_id = event.id(),
        cloudevents.event_source = %event.source(),
        cloudevents.event_type = event.ty(),
        "event produced"
    );
}

/// A retry scheduled: attempt `attempt` runs after `delay`.
pub(crate) fn retry_scheduled(attempt: u32, delay: Duration) {
    tracing::event!(
        target: "swf",
        Level::INFO,
        retry.attempt = i64::from(attempt),
        retry.delay_ms = i64::try_from(delay.as_millis()).unwrap_or(i64::MAX),
        "retry scheduled"
    );
}

/// A timeout elapsed: `what` did not complete within `limit` (as written).
pub(crate) fn timed_out(what: &str, limit: &str) {
    tracing::event!(target: "swf", Level::INFO, timeout.of = what, timeout.limit = limit, "timeout");
}

/// Compensation of `task` starts.
pub(crate) fn compensating(task: &str) {
    tracing::event!(target: "swf", Level::INFO, compensation.task = task, "compensation");
}

/// Trace context across events, in W3C `traceparent` form (the CloudEvents distributed-tracing
/// extension), from and to the OpenTelemetry context that `tracing-opentelemetry` keeps for
/// each span.
#[cfg(feature = "otel")]
pub(crate) mod context {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    /// The current span's context as a `traceparent`, when it has a valid one.
    pub(crate) fn traceparent() -> Option<String> {
        let context = tracing::Span::current().context();
        let span = context.span();
        let span = span.span_context();
        span.is_valid().then(|| {
            format!(
                "00-{}-{}-{:02x}",
                span.trace_id(),
                span.span_id(),
                span.trace_flags().to_u8()
            )
        })
    }

    /// Links the current span to the span a consumed event's `traceparent` names (a malformed
    /// one is ignored: it is the sender's field, not ours to refuse).
    pub(crate) fn link(traceparent: &str) {
        if let Some(remote) = parse(traceparent) {
            tracing::Span::current().add_link(remote);
        }
    }

    /// `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`.
    pub(crate) fn parse(traceparent: &str) -> Option<SpanContext> {
        let mut parts = traceparent.trim().split('-');
        let (version, trace, span, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        if version != "00" || parts.next().is_some() || trace.len() != 32 || span.len() != 16 {
            return None;
        }
        let trace = TraceId::from_hex(trace).ok()?;
        let span = SpanId::from_hex(span).ok()?;
        let flags = u8::from_str_radix(flags, 16).ok()?;
        let context = SpanContext::new(
            trace,
            span,
            TraceFlags::new(flags),
            true,
            TraceState::default(),
        );
        context.is_valid().then_some(context)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn reads_the_w3c_form_and_refuses_the_rest() {
            let context = parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
                .expect("a valid traceparent");
            assert_eq!(
                context.trace_id().to_string(),
                "4bf92f3577b34da6a3ce929d0e0e4736"
            );
            assert_eq!(context.span_id().to_string(), "00f067aa0ba902b7");
            assert!(context.is_sampled() && context.is_remote());
            for bad in [
                "",
                "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
                "00-xyz-00f067aa0ba902b7-01",
            ] {
                assert!(parse(bad).is_none(), "{bad}");
            }
        }
    }
}
