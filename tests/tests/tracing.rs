//! The spans and span events of a run: the durable order (a retry, a delay, a correlated event,
//! a parallel task, a foreach, a produced event) run in memory under a subscriber that records
//! the span tree.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};

use swf_runtime::Io;
use swf_tests::shop::{DurableOrderWorkflow, Shop, order_input, order_output, shipped};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// A span or an event, with its fields and its parent span.
#[derive(Debug, Clone, Default)]
struct Node {
    name: String,
    parent: Option<u64>,
    fields: BTreeMap<String, String>,
}

impl Node {
    fn field(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }
}

impl Visit for Node {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.fields
            .insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.fields
            .insert(field.name().to_owned(), value.to_owned());
    }
}

#[derive(Clone, Default)]
struct Recorder {
    spans: Arc<Mutex<BTreeMap<u64, Node>>>,
    events: Arc<Mutex<Vec<Node>>>,
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut node = Node {
            name: attrs.metadata().name().to_owned(),
            parent: ctx
                .span(id)
                .and_then(|span| span.parent())
                .map(|parent| parent.id().into_u64()),
            ..Node::default()
        };
        attrs.record(&mut node);
        self.spans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.into_u64(), node);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        if let Some(node) = self
            .spans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(&id.into_u64())
        {
            values.record(node);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut node = Node {
            parent: ctx.lookup_current().map(|span| span.id().into_u64()),
            ..Node::default()
        };
        event.record(&mut node);
        node.name = node.field("message").to_owned();
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(node);
    }
}

#[tokio::test(start_paused = true)]
async fn a_run_is_a_tree_of_workflow_task_and_action_spans() {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    let _guard = tracing::subscriber::set_default(subscriber);

    let io = Io::standalone();
    io.deliver(shipped(7)).await.unwrap();
    let output = DurableOrderWorkflow::new(Shop::new(1))
        .run_with(order_input(7, 2), &io)
        .await
        .unwrap();
    assert_eq!(output, order_output(7, 2));

    let spans = recorder.spans.lock().unwrap().clone();
    let events = recorder.events.lock().unwrap().clone();
    let named = |name: &str| -> Vec<(u64, &Node)> {
        spans
            .iter()
            .filter(|(_, node)| node.name == name)
            .map(|(id, node)| (*id, node))
            .collect()
    };
    let parent_of = |id: u64| spans[&id].parent.map(|parent| &spans[&parent]);

    // One workflow span, the root, with the OpenTelemetry names and the outcome.
    let workflows = named("workflow");
    assert_eq!(workflows.len(), 1);
    let (workflow_id, workflow) = workflows[0];
    assert_eq!(workflow.parent, None);
    assert_eq!(workflow.field("workflow.id"), "durable-order");
    assert_eq!(workflow.field("workflow.name"), "Durable order");
    assert_eq!(workflow.field("workflow.version"), "1.0");
    assert_eq!(workflow.field("workflow.execution.outcome"), "completed");
    assert!(!workflow.field("workflow.execution.id").is_empty());

    // Top-level task spans under it, in order, with their types.
    let top: Vec<(&str, &str)> = named("task")
        .into_iter()
        .filter(|(_, task)| task.parent == Some(workflow_id))
        .map(|(_, task)| (task.field("task.name"), task.field("task.type")))
        .collect();
    let mut steps = top.clone();
    steps.dedup();
    assert_eq!(
        steps,
        [
            ("Charge", "operation"),
            ("Pack", "delay"),
            ("AwaitShipping", "event"),
            ("Paperwork", "parallel"),
            ("PickAll", "foreach"),
        ],
        "{top:?}"
    );

    // The charge failed once (Busy) and was retried: two action spans under two attempts of
    // the task, and a retry event in the first.
    let charges: Vec<&Node> = named("action")
        .into_iter()
        .filter(|(_, action)| action.field("action.function") == "charge")
        .map(|(_, action)| action)
        .collect();
    let outcomes: Vec<(&str, &str, &str)> = charges
        .iter()
        .map(|c| {
            (
                c.field("action.attempt"),
                c.field("action.outcome"),
                c.field("error.name"),
            )
        })
        .collect();
    assert_eq!(outcomes, [("1", "error", "Busy"), ("2", "ok", "")]);
    assert!(
        charges
            .iter()
            .all(|c| !c.field("action.duration_ms").is_empty())
    );
    let retry = events
        .iter()
        .find(|event| event.name == "retry scheduled")
        .expect("a retry event");
    let retry_task = &spans[&retry.parent.unwrap()];
    assert_eq!(retry_task.field("task.name"), "Charge");
    assert_eq!(retry_task.field("task.attempt"), "1");
    assert_eq!(retry.field("retry.attempt"), "2");
    assert_eq!(retry.field("retry.delay_ms"), "10000");

    // The parallel task's branches are task spans inside it, their calls inside them.
    let (paperwork_id, _) = named("task")
        .into_iter()
        .find(|(_, task)| task.field("task.name") == "Paperwork")
        .unwrap();
    let mut branches: Vec<(&str, &str)> = named("task")
        .into_iter()
        .filter(|(_, task)| task.parent == Some(paperwork_id))
        .map(|(_, task)| (task.field("task.name"), task.field("task.scope")))
        .collect();
    branches.sort_unstable();
    assert_eq!(
        branches,
        [
            ("Invoice", "Paperwork/billing"),
            ("Notify", "Paperwork/customer")
        ]
    );
    for (id, action) in named("action") {
        if action.field("action.function") == "invoice" {
            assert_eq!(parent_of(id).unwrap().field("task.name"), "Invoice");
        }
    }

    // The event taken and the event produced, as span events of the tasks that did it.
    let consumed = events
        .iter()
        .find(|event| event.name == "event consumed")
        .expect("an event consumed");
    assert_eq!(consumed.field("cloudevents.event_id"), "ship-7");
    assert_eq!(consumed.field("cloudevents.event_source"), "warehouse");
    assert_eq!(consumed.field("cloudevents.event_type"), "order.shipped");
    assert_eq!(
        spans[&consumed.parent.unwrap()].field("task.name"),
        "AwaitShipping"
    );
    let produced = events
        .iter()
        .find(|event| event.name == "event produced")
        .expect("an event produced");
    assert_eq!(produced.field("cloudevents.event_type"), "order.completed");
    assert_eq!(
        spans[&produced.parent.unwrap()].field("task.name"),
        "PickAll"
    );
}

#[tokio::test(start_paused = true)]
async fn a_failed_run_records_its_outcome_error_and_task() {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    // Busy more often than the retry allows: the charge fails for good.
    let failed = DurableOrderWorkflow::new(Shop::new(10))
        .run_with(order_input(7, 1), &Io::standalone())
        .await;
    assert!(failed.is_err());
    let spans = recorder.spans.lock().unwrap().clone();
    let workflow = spans.values().find(|node| node.name == "workflow").unwrap();
    assert_eq!(workflow.field("workflow.execution.outcome"), "failed");
    assert_eq!(workflow.field("error.name"), "Busy");
    assert_eq!(workflow.field("task.name"), "Charge");
}

mod waiting {
    swf_runtime::workflow!("benches/waiting.sw.yaml");
}

/// Under a `Host`, each activation of an instance (the one its first event starts, the one
/// its second event wakes) is a `workflow` span of that instance, its tasks' spans inside it
/// (the host skips the span's wrapper when nobody listens: here somebody does).
#[tokio::test(start_paused = true)]
async fn a_host_s_activations_are_workflow_spans_with_their_task_spans() {
    use waiting::{WaitingBenchEvent, WaitingBenchFunctions, WaitingBenchWorkflow};
    struct NoFunctions;
    impl WaitingBenchFunctions for NoFunctions {}

    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    let _guard = tracing::subscriber::set_default(subscriber);

    let (host, mut channels) = swf_runtime::Host::new(
        WaitingBenchWorkflow::new(NoFunctions),
        swf_runtime::HostConfig::default(),
    );
    let router = tokio::spawn(host.run());
    for (event, id) in [
        (WaitingBenchEvent::Opened, "open-1"),
        (WaitingBenchEvent::Closed, "close-1"),
    ] {
        let event = event
            .correlated(id, "key-1", swf_runtime::json!({}))
            .unwrap();
        channels.events.send(event).await.unwrap();
    }
    let outcome = channels.outcomes.recv().await.unwrap();
    assert!(outcome.result.is_ok(), "{:?}", outcome.result);
    drop(channels.events);
    router.await.unwrap();

    let spans = recorder.spans.lock().unwrap().clone();
    let tasks: Vec<(&str, &Node)> = spans
        .values()
        .filter(|node| node.name == "task")
        .map(|task| {
            (
                task.field("task.name"),
                &spans[&task.parent.expect("a parent")],
            )
        })
        .collect();
    // `Close` may step twice: once finding no event yet, once taking it.
    let mut names: Vec<&str> = tasks.iter().map(|(name, _)| *name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names, ["Close", "Open"], "{spans:?}");
    for (name, parent) in tasks {
        assert_eq!(parent.name, "workflow", "the span around task {name}");
        assert_eq!(parent.field("workflow.id"), "waiting-bench");
        assert!(!parent.field("workflow.execution.id").is_empty());
    }
    // Each event taken, inside the span of the task that took it.
    let events = recorder.events.lock().unwrap().clone();
    let mut taken: Vec<(&str, &str)> = events
        .iter()
        .filter(|event| event.name == "event consumed")
        .map(|event| {
            let task = &spans[&event.parent.expect("inside a span")];
            (event.field("cloudevents.event_id"), task.field("task.name"))
        })
        .collect();
    taken.sort_unstable();
    assert_eq!(taken, [("close-1", "Close"), ("open-1", "Open")]);
}
