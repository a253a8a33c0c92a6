//! The host with a small hand-written [`Machine`]: a plan of waits and produced events.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use cloudevents::{AttributesReader, Event, EventBuilder, EventBuilderV10};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep, sleep_until};

use super::*;
use crate::clock::ManualClock;
use crate::concurrent::{ScopeEnd, ScopeState};
use crate::error::ErrorObject;
use crate::events::{Io, event_data};
use crate::progress::{Progress, Wait, deadline_of, passed};
use crate::schedule::{ScheduleWindow, check_schedule};

const ORDER: usize = 0;
const PAYMENT: usize = 1;
const SHIPMENT: usize = 2;
const PING: usize = 3;
const RECEIPT: usize = 4;

const EVENTS: &[EventSpec] = &[
    EventSpec {
        name: "Order",
        source: "shop",
        event_type: "order.placed",
        correlation: Some("orderid"),
    },
    EventSpec {
        name: "Payment",
        source: "bank",
        event_type: "payment.received",
        correlation: Some("orderid"),
    },
    EventSpec {
        name: "Shipment",
        source: "warehouse",
        event_type: "shipment.ready",
        correlation: Some("orderid"),
    },
    EventSpec {
        name: "Ping",
        source: "ops",
        event_type: "ping",
        correlation: None,
    },
    EventSpec {
        name: "Receipt",
        source: "workflows/orders",
        event_type: "order.paid",
        correlation: Some("orderid"),
    },
];

const SEC: Duration = Duration::from_secs(1);

/// One step of the test workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Step {
    /// Wait for any of these events (seconds of timeout), storing its data under its name.
    Any(Vec<usize>, Option<u64>),
    /// Wait for all of these events, storing their data under their names.
    All(Vec<usize>),
    /// Produce this event with the data so far.
    Produce(usize),
    Panic,
    /// Wait for nothing, no event and no deadline: what no state of a workflow does.
    Forever,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct State {
    data: Value,
    plan: Vec<Step>,
    /// The deadline of the wait in progress, set by its first step.
    until: Option<Timestamp>,
}

impl State {
    /// What the next step of the plan waits for.
    fn wait(&self) -> Wait {
        let specs = |wanted: &[usize]| -> Vec<&'static EventSpec> {
            wanted.iter().filter_map(|i| EVENTS.get(*i)).collect()
        };
        match self.plan.last() {
            Some(Step::Any(wanted, _)) => Wait::new(self.until, &specs(wanted)),
            Some(Step::All(wanted)) => Wait::new(None, &specs(wanted)),
            _ => Wait::default(),
        }
    }
}

impl ScopeState for State {
    fn end(self) -> Result<ScopeEnd, Self> {
        if self.plan.is_empty() {
            Ok(ScopeEnd::Completed(self.data))
        } else {
            Err(self)
        }
    }

    fn listening(&self) -> Wait {
        self.wait()
    }

    fn position(&self) -> String {
        format!("{} steps left", self.plan.len())
    }

    fn terminated(output: Value) -> Self {
        State {
            data: output,
            plan: Vec::new(),
            until: None,
        }
    }
}

/// A workflow that runs `plan`, then outputs its data with the instance's correlation.
struct Plan {
    plan: Vec<Step>,
    start_on: Option<StartOnEvents>,
    window: Option<ScheduleWindow>,
}

impl Plan {
    fn new(plan: Vec<Step>) -> Self {
        Self {
            plan,
            start_on: None,
            window: None,
        }
    }

    fn starting(mut self, start_on: StartOnEvents) -> Self {
        self.start_on = Some(start_on);
        self
    }
}

fn failure(task: &str, error: ErrorObject, data: Value) -> WorkflowError {
    WorkflowError::new("orders", task, error, data)
}

fn store(data: &mut Value, index: usize, event: &Event) {
    if let (Value::Object(members), Some(spec)) = (data, EVENTS.get(index)) {
        members.insert(spec.name.to_owned(), event_data(event));
    }
}

impl Machine for Plan {
    type State = State;

    fn workflow_id(&self) -> &'static str {
        "orders"
    }

    fn version(&self) -> Option<&'static str> {
        None
    }

    fn definition_hash(&self) -> &'static str {
        "plan"
    }

    fn events(&self) -> &'static [EventSpec] {
        EVENTS
    }

    fn start_on_events(&self) -> Option<StartOnEvents> {
        self.start_on
    }

    fn start(&self, input: Value, io: &Io) -> Result<State, WorkflowError> {
        if let Some(window) = &self.window {
            check_schedule(window, io).map_err(|e| failure("Start", e, input.clone()))?;
        }
        let data = crate::input::workflow_input("orders", "Start", input)?;
        let mut plan = self.plan.clone();
        plan.reverse();
        Ok(State {
            data,
            plan,
            until: None,
        })
    }

    async fn step(&self, mut state: State, io: &Io) -> Result<Progress<State>, WorkflowError> {
        let Some(step) = state.plan.last().cloned() else {
            return Ok(Progress::Ran(state));
        };
        match step {
            Step::Any(wanted, timeout) => match io.take_any(EVENTS, &wanted, state.until) {
                Ok(Some((index, event))) => store(&mut state.data, index, &event),
                Ok(None) => {
                    if state.until.is_none() {
                        state.until = deadline_of(io, timeout.map(Duration::from_secs));
                    }
                    if !passed(io, state.until) {
                        let wait = state.wait();
                        return Ok(Progress::Waiting(state, wait));
                    }
                    store_flag(&mut state.data);
                }
                Err(e) => return Err(failure("Any", e, state.data)),
            },
            Step::All(wanted) => match io.take_all(EVENTS, &wanted, None) {
                Ok(Some(found)) => {
                    for (index, event) in found {
                        store(&mut state.data, index, &event);
                    }
                }
                Ok(None) => {
                    let wait = state.wait();
                    return Ok(Progress::Waiting(state, wait));
                }
                Err(e) => return Err(failure("All", e, state.data)),
            },
            Step::Produce(index) => {
                let spec = EVENTS.get(index).unwrap_or(&EVENTS[0]);
                if let Err(e) = io.produce(spec, state.data.clone()).await {
                    return Err(failure("Produce", e, state.data));
                }
            }
            Step::Panic => panic!("the plan says so"),
            Step::Forever => return Ok(Progress::Waiting(state, Wait::default())),
        }
        state.plan.pop();
        state.until = None;
        if state.plan.is_empty()
            && let Value::Object(members) = &mut state.data
        {
            members.insert(String::from("correlation"), json!(io.correlation()));
        }
        Ok(Progress::Ran(state))
    }

    fn output(state: &State) -> Option<&Value> {
        state.plan.is_empty().then_some(&state.data)
    }
}

fn store_flag(data: &mut Value) {
    if let Value::Object(members) = data {
        members.insert(String::from("timedOut"), Value::Bool(true));
    }
}

/// An event of definition `index` for order `order`, with `data`.
fn event(index: usize, order: Option<&str>, data: Value) -> Event {
    let spec = EVENTS.get(index).unwrap_or(&EVENTS[0]);
    let builder = EventBuilderV10::new()
        .id(format!("{}-{}", spec.name, order.unwrap_or("none")))
        .source(spec.source)
        .ty(spec.event_type)
        .data("application/json", data);
    let builder = match order {
        Some(order) => builder.extension("orderid", order),
        None => builder,
    };
    builder.build().unwrap_or_default()
}

fn small_config() -> HostConfig {
    HostConfig {
        events_capacity: 8,
        produced_capacity: 8,
        unmatched_capacity: 8,
        outcomes_capacity: 8,
        inbox_capacity: 2,
        ..HostConfig::default()
    }
}

/// Everything a host reported, with when it arrived (virtual time since `origin`).
#[derive(Debug, Default)]
struct Report {
    produced: Vec<Event>,
    unmatched: Vec<(Unmatched, Duration)>,
    outcomes: Vec<(Outcome, Duration)>,
}

impl Report {
    fn reasons(&self) -> Vec<(String, String, u64)> {
        self.unmatched
            .iter()
            .map(|(u, at)| (u.event.id().to_owned(), u.reason.clone(), at.as_secs()))
            .collect()
    }

    fn outputs(&self) -> BTreeMap<InstanceId, Value> {
        self.outcomes
            .iter()
            .map(|(o, _)| {
                let output = o.result.clone().unwrap_or_else(|e| json!(e.to_string()));
                (o.instance, output)
            })
            .collect()
    }
}

/// Runs `host` while `feed` sends events (then drops the sender) and collects every report
/// until the host is done.
async fn serve<M, F>(host: Host<M>, channels: HostChannels, feed: F) -> Report
where
    M: Machine,
    F: FnOnce(mpsc::Sender<Event>) -> tokio::task::JoinHandle<()>,
{
    let origin = Instant::now();
    let HostChannels {
        events,
        mut produced,
        mut unmatched,
        mut outcomes,
    } = channels;
    let router = tokio::spawn(host.run());
    let feeder = feed(events);
    let mut report = Report::default();
    let (mut produced_open, mut unmatched_open, mut outcomes_open) = (true, true, true);
    while produced_open || unmatched_open || outcomes_open {
        tokio::select! {
            event = produced.recv(), if produced_open => match event {
                Some(event) => report.produced.push(event),
                None => produced_open = false,
            },
            item = unmatched.recv(), if unmatched_open => match item {
                Some(item) => report.unmatched.push((item, origin.elapsed())),
                None => unmatched_open = false,
            },
            outcome = outcomes.recv(), if outcomes_open => match outcome {
                Some(outcome) => report.outcomes.push((outcome, origin.elapsed())),
                None => outcomes_open = false,
            },
        }
    }
    assert!(feeder.await.is_ok());
    assert!(router.await.is_ok());
    report
}

/// A feeder sending `timeline` (seconds since the start, event) in order.
fn timeline(
    timeline: Vec<(u64, Event)>,
) -> impl FnOnce(mpsc::Sender<Event>) -> tokio::task::JoinHandle<()> {
    move |events| {
        let origin = Instant::now();
        tokio::spawn(async move {
            for (at, event) in timeline {
                sleep_until(origin + Duration::from_secs(at)).await;
                assert!(events.send(event).await.is_ok());
            }
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_thousand_instances_from_starting_events_each_get_their_own_payment() {
    a_thousand_instances().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_instances_on_several_threads() {
    // No timers involved: the same result whatever the interleaving.
    a_thousand_instances().await;
}

async fn a_thousand_instances() {
    const COUNT: usize = 1_000;
    let machine = Plan::new(vec![
        Step::Any(vec![ORDER], None),
        Step::Any(vec![PAYMENT], None),
        Step::Produce(RECEIPT),
    ])
    .starting(StartOnEvents {
        events: &[ORDER],
        exclusive: true,
        timeout: None,
    });
    let (host, channels) = Host::new(machine, small_config());
    let registry = host.shared.registry.clone();
    let report = serve(host, channels, |events| {
        tokio::spawn(async move {
            for n in 0..COUNT {
                let order = n.to_string();
                let placed = event(ORDER, Some(&order), json!({"n": n}));
                assert!(events.send(placed).await.is_ok());
            }
            // Payments in the reverse order, each for its own order.
            for n in (0..COUNT).rev() {
                let order = n.to_string();
                let paid = event(PAYMENT, Some(&order), json!({"amount": n * 10}));
                assert!(events.send(paid).await.is_ok());
            }
        })
    })
    .await;
    assert_eq!(report.reasons(), []);
    assert_eq!(report.outcomes.len(), COUNT);
    let instances: BTreeSet<InstanceId> = report.outcomes.iter().map(|(o, _)| o.instance).collect();
    assert_eq!(instances.len(), COUNT, "each instance ends exactly once");
    let mut orders = BTreeSet::new();
    for output in report.outputs().into_values() {
        let n = output["Order"]["n"].as_u64().unwrap_or(u64::MAX);
        assert_eq!(output["Payment"], json!({"amount": n * 10}));
        assert_eq!(output["correlation"], json!({"orderid": n.to_string()}));
        orders.insert(n);
    }
    assert_eq!(orders.len(), COUNT);
    assert_eq!(report.produced.len(), COUNT);
    for receipt in &report.produced {
        let order = EVENTS[RECEIPT].correlation_value(receipt);
        let data = event_data(receipt);
        assert_eq!(order, data["Order"]["n"].as_u64().map(|n| n.to_string()));
    }
    assert!(
        crate::events::lock_registry(&registry).is_empty(),
        "ended instances leave the registry"
    );
}

#[tokio::test(start_paused = true)]
async fn correlated_events_reach_their_instance_and_the_rest_is_reported() {
    let (host, channels) = Host::new(
        Plan::new(vec![Step::Any(vec![PAYMENT], None)]),
        small_config(),
    );
    let bound = |order: &str| BTreeMap::from([(String::from("orderid"), order.to_owned())]);
    let first = host.start_instance_correlated(json!({"who": 1}), bound("1"));
    let second = host.start_instance_correlated(json!({"who": 2}), bound("2"));
    assert_eq!(
        (first, second),
        (Ok(InstanceId::new(1)), Ok(InstanceId::new(2)))
    );
    let stranger = EventBuilderV10::new()
        .id("stranger")
        .source("elsewhere")
        .ty("unknown")
        .build()
        .unwrap_or_default();
    let report = serve(
        host,
        channels,
        timeline(vec![
            (1, event(PAYMENT, Some("2"), json!({"amount": 20}))),
            (2, event(PAYMENT, Some("3"), json!({"amount": 30}))),
            (3, event(PAYMENT, None, json!({"amount": 0}))),
            (4, stranger),
            (5, event(PAYMENT, Some("1"), json!({"amount": 10}))),
        ]),
    )
    .await;
    let outputs = report.outputs();
    assert_eq!(
        outputs.get(&InstanceId::new(1)),
        Some(&json!({"who": 1, "Payment": {"amount": 10}, "correlation": {"orderid": "1"}}))
    );
    assert_eq!(
        outputs.get(&InstanceId::new(2)),
        Some(&json!({"who": 2, "Payment": {"amount": 20}, "correlation": {"orderid": "2"}}))
    );
    let times: Vec<(InstanceId, u64)> = report
        .outcomes
        .iter()
        .map(|(o, at)| (o.instance, at.as_secs()))
        .collect();
    assert_eq!(times, [(InstanceId::new(2), 1), (InstanceId::new(1), 5)]);
    let nobody = "no instance is waiting for it and it does not start one";
    assert_eq!(
        report.reasons(),
        [
            (String::from("Payment-3"), String::from(nobody), 2),
            (
                String::from("Payment-none"),
                String::from("it lacks the correlation attribute `orderid`"),
                3
            ),
            (
                String::from("stranger"),
                String::from(
                    "it matches no event definition of `orders` (its source is `elsewhere` and \
                     its type `unknown`); the closest is `Receipt` (source `workflows/orders`, \
                     type `order.paid`)"
                ),
                4
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn unbound_waiting_instances_are_bound_longest_waiting_first() {
    let (host, channels) = Host::new(
        Plan::new(vec![Step::Any(vec![PAYMENT], None)]),
        small_config(),
    );
    for who in 1..=2 {
        assert!(host.start_instance(json!({"who": who})).is_ok());
    }
    let report = serve(
        host,
        channels,
        timeline(vec![
            (1, event(PAYMENT, Some("b"), json!("for the first waiter"))),
            (2, event(PAYMENT, Some("a"), json!("for the second waiter"))),
        ]),
    )
    .await;
    let outputs = report.outputs();
    assert_eq!(
        outputs
            .get(&InstanceId::new(1))
            .map(|o| o["Payment"].clone()),
        Some(json!("for the first waiter"))
    );
    assert_eq!(
        outputs
            .get(&InstanceId::new(2))
            .map(|o| o["correlation"].clone()),
        Some(json!({"orderid": "a"}))
    );
    assert_eq!(report.reasons(), []);
}

#[tokio::test(start_paused = true)]
async fn uncorrelated_events_reach_every_waiting_instance() {
    let (host, channels) = Host::new(Plan::new(vec![Step::Any(vec![PING], None)]), small_config());
    for who in 1..=3 {
        assert!(host.start_instance(json!({"who": who})).is_ok());
    }
    let report = serve(
        host,
        channels,
        timeline(vec![
            (10, event(PING, None, json!("all of you"))),
            (20, event(PING, None, json!("nobody waits any more"))),
        ]),
    )
    .await;
    let pinged: Vec<Value> = report
        .outputs()
        .values()
        .map(|o| o["Ping"].clone())
        .collect();
    assert_eq!(
        pinged,
        [
            json!("all of you"),
            json!("all of you"),
            json!("all of you")
        ]
    );
    assert_eq!(
        report.reasons(),
        [(
            String::from("Ping-none"),
            String::from("no instance is waiting for it and it does not start one"),
            20
        )]
    );
}

#[tokio::test(start_paused = true)]
async fn starting_groups_need_every_event_each_within_the_timeout_of_the_last() {
    let machine =
        Plan::new(vec![Step::All(vec![ORDER, PAYMENT, SHIPMENT])]).starting(StartOnEvents {
            events: &[ORDER, PAYMENT, SHIPMENT],
            exclusive: false,
            timeout: Some(120 * SEC),
        });
    let (host, channels) = Host::new(machine, small_config());
    let report = serve(
        host,
        channels,
        timeline(vec![
            (0, event(ORDER, Some("ok"), json!("ok order"))),
            (0, event(ORDER, Some("late"), json!("late order"))),
            // Restarts the timeout of "ok" until 220 s.
            (100, event(PAYMENT, Some("ok"), json!("ok payment"))),
            // "late" timed out at 120 s: this one starts a new group, which times out at 250 s.
            (130, event(PAYMENT, Some("late"), json!("late payment"))),
            // 200 s after the first event of "ok", but 100 s after the previous one.
            (200, event(SHIPMENT, Some("ok"), json!("ok shipment"))),
            (
                300,
                event(SHIPMENT, Some("pending"), json!("never completed")),
            ),
        ]),
    )
    .await;
    let outcomes: Vec<(Value, u64)> = report
        .outcomes
        .iter()
        .map(|(o, at)| (o.result.clone().unwrap_or_default(), at.as_secs()))
        .collect();
    assert_eq!(
        outcomes,
        [(
            json!({
                "Order": "ok order",
                "Payment": "ok payment",
                "Shipment": "ok shipment",
                "correlation": {"orderid": "ok"},
            }),
            200
        )]
    );
    let late = "the other starting events did not arrive within PT2M";
    assert_eq!(
        report.reasons(),
        [
            (String::from("Order-late"), String::from(late), 120),
            (String::from("Payment-late"), String::from(late), 250),
            (
                String::from("Shipment-pending"),
                String::from("the events channel closed before the other starting events arrived"),
                300
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_scheduled_start_refuses_instances_outside_its_window() {
    let opens: Timestamp = "2030-01-01T00:00:00Z"
        .parse()
        .unwrap_or(Timestamp::UNIX_EPOCH);
    let clock = Arc::new(ManualClock::new(Timestamp::UNIX_EPOCH));
    let mut machine = Plan::new(vec![Step::Any(vec![ORDER], None)]).starting(StartOnEvents {
        events: &[ORDER],
        exclusive: true,
        timeout: None,
    });
    machine.window = Some(ScheduleWindow::between(opens.as_millisecond(), i64::MAX));
    let config = HostConfig {
        clock: clock.clone(),
        ..small_config()
    };
    let (host, channels) = Host::new(machine, config);
    let refusal = "ScheduleError: the start task is not active yet: its schedule opens at \
                   2030-01-01T00:00:00Z";
    let Err(refused) = host.start_instance(json!({})) else {
        panic!("the window is not open yet");
    };
    assert_eq!(refused.error().to_string(), refusal);
    let report = serve(host, channels, move |events| {
        tokio::spawn(async move {
            assert!(
                events
                    .send(event(ORDER, Some("early"), json!(1)))
                    .await
                    .is_ok()
            );
            sleep(SEC).await;
            clock.set(opens);
            assert!(
                events
                    .send(event(ORDER, Some("on time"), json!(2)))
                    .await
                    .is_ok()
            );
        })
    })
    .await;
    assert_eq!(
        report.reasons(),
        [(
            String::from("Order-early"),
            format!("it would start an instance, but {refusal}"),
            0
        )]
    );
    let outputs: Vec<Value> = report.outputs().into_values().collect();
    assert_eq!(
        outputs,
        [json!({"Order": 2, "correlation": {"orderid": "on time"}})]
    );
}

#[tokio::test(start_paused = true)]
async fn events_an_instance_did_not_consume_are_reported_when_it_ends() {
    let (host, channels) = Host::new(
        Plan::new(vec![Step::Any(vec![PAYMENT], Some(60))]),
        small_config(),
    );
    let bound = BTreeMap::from([(String::from("orderid"), String::from("1"))]);
    assert!(host.start_instance_correlated(json!({}), bound).is_ok());
    let report = serve(
        host,
        channels,
        timeline(vec![(5, event(ORDER, Some("1"), json!(1)))]),
    )
    .await;
    assert_eq!(
        report.reasons(),
        [(
            String::from("Order-1"),
            String::from("instance 1 ended before consuming it"),
            60
        )]
    );
    let outcomes: Vec<(Value, u64)> = report
        .outcomes
        .iter()
        .map(|(o, at)| (o.result.clone().unwrap_or_default(), at.as_secs()))
        .collect();
    assert_eq!(
        outcomes,
        [(
            json!({"timedOut": true, "correlation": {"orderid": "1"}}),
            60
        )]
    );
}

#[tokio::test(start_paused = true)]
async fn failures_to_start_and_panics_are_reported() {
    let (host, channels) = Host::new(Plan::new(vec![Step::Panic]), small_config());
    let Err(refused) = host.start_instance(json!([1])) else {
        panic!("an array is not a valid input");
    };
    assert_eq!(refused.error().name, ErrorObject::INVALID_INPUT);
    // The refused start used up number 1: numbers are unique, not necessarily consecutive.
    assert_eq!(host.start_instance(json!({})), Ok(InstanceId::new(2)));
    let report = serve(host, channels, timeline(Vec::new())).await;
    let [(outcome, _)] = report.outcomes.as_slice() else {
        panic!("one instance ran");
    };
    let Err(error) = &outcome.result else {
        panic!("it panicked");
    };
    assert_eq!(
        *error.error(),
        ErrorObject::new(HOST_ERROR, "the instance panicked: the plan says so")
    );
}

#[test]
fn outside_a_runtime_an_instance_cannot_start() {
    let (host, _channels) = Host::new(Plan::new(Vec::new()), HostConfig::default());
    let Err(refused) = host.start_instance(json!({})) else {
        panic!("there is no runtime");
    };
    assert_eq!(refused.error().name, HOST_ERROR);
}

#[tokio::test(start_paused = true)]
async fn once_the_events_channel_closes_run_finishes_what_can_go_on_and_returns() {
    // Instance 1 waits for a ping with no timeout: once the channel closes nothing can reach
    // it. Instance 2 waits for one with a 30 s timeout: it times out and completes.
    let plan = |timeout| vec![Step::Any(vec![PING], timeout), Step::Produce(ORDER)];
    let (stranded, channels) = Host::new(Plan::new(plan(None)), small_config());
    assert!(stranded.start_instance(json!({"n": 1})).is_ok());
    // Before the fix, run() never returned: the day of virtual time ends the test instead.
    let report = tokio::time::timeout(
        Duration::from_secs(86_400),
        serve(stranded, channels, timeline(vec![])),
    )
    .await
    .expect("run() returns once the events channel closed");
    assert_eq!(report.outcomes.len(), 1, "run returned, with the outcome");
    let (outcome, at) = &report.outcomes[0];
    assert_eq!(at.as_secs(), 0, "at once");
    let error = outcome.result.clone().unwrap_err();
    assert_eq!(error.error().name, HOST_ERROR);
    assert!(
        error.error().message.contains("for `Ping` with no timeout"),
        "{error}"
    );
    // Its saved state, which a durable host could resume.
    let saved: State = serde_json::from_value(error.data().clone()).unwrap();
    assert_eq!(saved.data, json!({"n": 1}));

    let (timed, channels) = Host::new(Plan::new(plan(Some(30))), small_config());
    assert!(timed.start_instance(json!({"n": 2})).is_ok());
    let report = serve(timed, channels, timeline(vec![])).await;
    assert_eq!(report.outcomes.len(), 1);
    let (outcome, at) = &report.outcomes[0];
    assert!(outcome.result.is_ok(), "{outcome:?}");
    assert_eq!(at.as_secs(), 30, "it went on to its timeout");
}

/// A state that waits for nothing (in a workflow, a saved state it would never make) ends its
/// instance at once with its saved state, rather than staying parked while the events
/// channel is open.
#[tokio::test(start_paused = true)]
async fn an_instance_that_waits_for_nothing_fails_at_once() {
    let plan = vec![Step::Forever, Step::Produce(ORDER)];
    let (host, channels) = Host::new(Plan::new(plan), small_config());
    assert!(host.start_instance(json!({"n": 1})).is_ok());
    let ping = event(PING, None, json!({}));
    let report = serve(host, channels, timeline(vec![(60, ping)])).await;
    let [(outcome, at)] = report.outcomes.as_slice() else {
        panic!("one instance ran");
    };
    assert_eq!(at.as_secs(), 0, "at once, not when the channel closed");
    let error = outcome.result.clone().unwrap_err();
    assert_eq!(error.error().name, HOST_ERROR);
    assert!(
        error
            .error()
            .message
            .contains("waits at `2 steps left` for nothing that can come"),
        "{error}"
    );
    let saved: State = serde_json::from_value(error.data().clone()).unwrap();
    assert_eq!(saved.data, json!({"n": 1}));
}

#[tokio::test(start_paused = true)]
async fn a_full_inbox_holds_up_no_event_behind_it() {
    // An inbox of 2 and an instance waiting for a ping until 30 s: the third order goes beyond
    // the inbox's capacity without holding up the router, so the ping behind it reaches the
    // instance at once (it used to wait for room until the instance timed out).
    let plan = vec![
        Step::Any(vec![PING], Some(30)),
        Step::All(vec![ORDER]),
        Step::All(vec![ORDER]),
        Step::All(vec![ORDER]),
    ];
    let (host, channels) = Host::new(Plan::new(plan), small_config());
    let bound = BTreeMap::from([(String::from("orderid"), String::from("1"))]);
    assert!(host.start_instance_correlated(json!({}), bound).is_ok());
    let report = serve(
        host,
        channels,
        timeline(vec![
            (1, event(ORDER, Some("1"), json!("a"))),
            (1, event(ORDER, Some("1"), json!("b"))),
            (1, event(ORDER, Some("1"), json!("c"))),
            (2, event(PING, None, json!("in time"))),
        ]),
    )
    .await;
    let outcomes: Vec<(Value, u64)> = report
        .outcomes
        .iter()
        .map(|(o, at)| (o.result.clone().unwrap_or_default(), at.as_secs()))
        .collect();
    assert_eq!(
        outcomes,
        [(
            json!({"Ping": "in time", "Order": "c", "correlation": {"orderid": "1"}}),
            2
        )]
    );
    assert!(report.reasons().is_empty());
}

#[test]
fn a_host_can_run_on_any_thread() {
    fn assert_send<T: Send>(_: &T) {}
    fn assert_shared<T: Send + Sync + Clone>() {}
    assert_shared::<Host<Plan>>();
    let (host, _channels) = Host::new(Plan::new(Vec::new()), HostConfig::default());
    assert_send(&host.run());
}

#[tokio::test(start_paused = true)]
async fn waiting_instances_hold_no_task_and_wake_with_their_inbox_in_order() {
    const COUNT: usize = 50;
    let plan = vec![
        Step::All(vec![ORDER]),
        Step::All(vec![PAYMENT]),
        Step::All(vec![PAYMENT]),
    ];
    let config = HostConfig {
        outcomes_capacity: COUNT,
        ..small_config()
    };
    let (host, mut channels) = Host::new(Plan::new(plan), config);
    for n in 0..COUNT {
        let bound = BTreeMap::from([(String::from("orderid"), n.to_string())]);
        assert!(host.start_instance_correlated(json!({}), bound).is_ok());
    }
    let router = tokio::spawn(host.run());
    let tasks = || {
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks()
    };
    // Virtual time moves on only once every task is idle: each instance has reached its wait.
    sleep(SEC).await;
    assert_eq!(tasks(), 1, "the router alone: waiting instances are data");
    // Two payments each, which an instance waiting for its order wakes for and leaves in
    // its inbox.
    for n in 0..COUNT {
        for k in [1, 2] {
            let paid = event(PAYMENT, Some(&n.to_string()), json!({"k": k}));
            assert!(channels.events.send(paid).await.is_ok());
        }
    }
    sleep(SEC).await;
    assert_eq!(tasks(), 1, "woken for nothing it takes, each parks again");
    for n in 0..COUNT {
        let placed = event(ORDER, Some(&n.to_string()), json!({"n": n}));
        assert!(channels.events.send(placed).await.is_ok());
    }
    let mut outputs = BTreeMap::new();
    for _ in 0..COUNT {
        let outcome = channels.outcomes.recv().await.expect("an outcome");
        outputs.insert(outcome.instance, outcome.result.expect("completed"));
    }
    drop(channels.events);
    assert!(router.await.is_ok());
    assert_eq!(outputs.len(), COUNT);
    for output in outputs.values() {
        let n = output["Order"]["n"].as_u64().expect("its order");
        assert_eq!(output["correlation"], json!({"orderid": n.to_string()}));
        // The second payment taken last: the inbox kept arrival order across parking.
        assert_eq!(output["Payment"], json!({"k": 2}));
    }
    assert!(
        channels.unmatched.try_recv().is_err(),
        "every event was taken"
    );
}

/// A hosted instance's produced event ids start with the host's deployment instant (in
/// nanoseconds) and the instance's number, whether or not anything read its id prefix before
/// (it is made when first read).
#[tokio::test]
async fn produced_ids_name_the_deployment_and_the_instance() {
    let deployed: Timestamp = "2026-03-04T05:06:07.000000008Z"
        .parse()
        .unwrap_or(Timestamp::UNIX_EPOCH);
    let machine = Plan::new(vec![Step::Any(vec![ORDER], None), Step::Produce(RECEIPT)]).starting(
        StartOnEvents {
            events: &[ORDER],
            exclusive: true,
            timeout: None,
        },
    );
    let config = HostConfig {
        clock: Arc::new(ManualClock::new(deployed)),
        ..small_config()
    };
    let (host, channels) = Host::new(machine, config);
    assert_eq!(host.deployed_at(), deployed);
    let report = serve(host, channels, |events| {
        tokio::spawn(async move {
            for n in 0..2 {
                let order = n.to_string();
                let placed = event(ORDER, Some(&order), json!({"n": n}));
                assert!(events.send(placed).await.is_ok());
            }
        })
    })
    .await;
    let mut prefixes: Vec<String> = report
        .produced
        .iter()
        .map(|receipt| {
            let id = receipt.id();
            let instance = id.split('-').nth(1).unwrap_or_default();
            format!("{}-{instance}", id.split('-').next().unwrap_or_default())
        })
        .collect();
    prefixes.sort();
    let mut expected: Vec<String> = report
        .outcomes
        .iter()
        .map(|(outcome, _)| format!("{}-{}", deployed.as_nanosecond(), outcome.instance))
        .collect();
    expected.sort();
    assert_eq!(prefixes, expected);
    assert_eq!(prefixes.len(), 2);
}
