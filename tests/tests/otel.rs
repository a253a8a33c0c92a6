//! Trace context across events (feature `otel`): an event an instance produces carries the
//! `traceparent` of the span that produced it, in the trace of the run; an event it consumes
//! with a `traceparent` becomes a link of the task that took it.
#![cfg(feature = "otel")]

use std::sync::{Arc, Mutex, PoisonError};

use opentelemetry::trace::{TraceContextExt, TracerProvider};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use swf_runtime::{Io, context_attribute};
use swf_tests::shop::{DurableOrderWorkflow, Shop, order_input, order_output, shipped};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

/// Keeps every exported span.
#[derive(Debug, Clone, Default)]
struct Collect(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Collect {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(batch);
        Ok(())
    }
}

const SENDER: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[tokio::test(start_paused = true)]
async fn produced_events_carry_the_run_s_trace_and_consumed_ones_are_linked() {
    let exporter = Collect::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("swf-tests")));
    let _guard = tracing::subscriber::set_default(subscriber);

    let io = Io::standalone();
    let mut event = shipped(7);
    event.set_extension("traceparent", SENDER);
    io.deliver(event).await.unwrap();
    let caller = tracing::info_span!("caller");
    let output = DurableOrderWorkflow::new(Shop::new(0))
        .run_with(order_input(7, 1), &io)
        .instrument(caller.clone())
        .await
        .unwrap();
    assert_eq!(output, order_output(7, 1));
    let trace = caller.context().span().span_context().trace_id();

    let produced = io.take_produced();
    assert_eq!(produced.len(), 1);
    let traceparent = context_attribute(&produced[0], "traceparent").expect("a traceparent");
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(parts.len(), 4, "{traceparent}");
    assert_eq!(parts[0], "00");
    assert_eq!(parts[1], trace.to_string(), "in the run's trace");
    assert_eq!(parts[3], "01", "sampled");

    drop(caller);
    provider.force_flush().unwrap();
    let spans = exporter.0.lock().unwrap().clone();
    let producer = spans
        .iter()
        .find(|span| span.span_context.span_id().to_string() == parts[2])
        .expect("the producing span was exported");
    assert_eq!(producer.name, "task");
    let task_name = |span: &SpanData| {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == "task.name")
            .map(|kv| kv.value.to_string())
            .unwrap_or_default()
    };
    assert_eq!(task_name(producer), "PickAll");
    let taker = spans
        .iter()
        .find(|span| span.name == "task" && task_name(span) == "AwaitShipping")
        .expect("the task that took the event");
    let linked: Vec<String> = taker
        .links
        .iter()
        .map(|link| {
            format!(
                "{}-{}",
                link.span_context.trace_id(),
                link.span_context.span_id()
            )
        })
        .collect();
    assert_eq!(
        linked,
        ["4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"]
    );
}
