//! Events, waiting and concurrency: the draft's examples and every timeout, end to end.
//!
//! Everything timed runs on a paused tokio clock and asserts exact virtual times. The host tests
//! read every channel to its end (the host drops its senders once the `events` sender is gone and
//! every instance finished), so an unexpected outcome, produced event or unmatched event fails
//! them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use swf_runtime::{
    AttributesReader, CallbackPhase, CloudEvent, EventBuilder, EventBuilderV10, FunctionError,
    Host, HostChannels, HostConfig, InstanceId, Io, Machine, ManualClock, Outcome, Timestamp,
    Unmatched, Value, context_attribute, event_data, json,
};
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, sleep_until, timeout};

mod inline {
    swf_runtime::workflow!("workflows/events/ev-inline.sw.yaml");
}
mod greeting {
    swf_runtime::workflow!("workflows/events/greeting.sw.yaml");
}
mod patient {
    swf_runtime::workflow!("workflows/events/patient.sw.yaml");
}
mod approval {
    swf_runtime::workflow!("workflows/events/approval.sw.yaml");
}
mod together {
    swf_runtime::workflow!("workflows/events/together.sw.yaml");
}
mod orders {
    swf_runtime::workflow!("workflows/events/orders.sw.yaml");
}
mod fan_out {
    swf_runtime::workflow!("workflows/events/parallel.sw.yaml");
}
mod terminate {
    swf_runtime::workflow!("workflows/events/terminate.sw.yaml");
}
mod flows {
    swf_runtime::workflow!(
        "workflows/events/parent.sw.yaml",
        "workflows/events/child.sw.yaml"
    );
}
mod either {
    swf_runtime::workflow!("workflows/events/ev-either.sw.yaml");
}
mod three {
    swf_runtime::workflow!("workflows/events/ev-three-readings.sw.yaml");
}
mod collect {
    swf_runtime::workflow!("workflows/events/ev-collect.sw.yaml");
}
mod tickets {
    swf_runtime::workflow!("workflows/events/ev-ten-thousand.sw.yaml");
}
mod track {
    swf_runtime::workflow!("workflows/events/ev-track.sw.yaml");
}
mod retried {
    swf_runtime::workflow!("workflows/events/ev-retried.sw.yaml");
}

use approval::{ApprovalEvent, ApprovalState, ApprovalWorkflow};
use collect::{EvCollectEvent, EvCollectWorkflow};
use either::{EvEitherEvent, EvEitherWorkflow};
use greeting::{GreetingEvent, GreetingState, GreetingWorkflow};
use patient::{PatientVitalsEvent, PatientVitalsState, PatientVitalsWorkflow};
use three::{EvThreeReadingsEvent, EvThreeReadingsWorkflow};
use tickets::{EvTenThousandEvent, EvTenThousandWorkflow};
use together::{TogetherEvent, TogetherWorkflow};
use track::{EvTrackEvent, EvTrackWorkflow};

const SECOND: Duration = Duration::from_secs(1);
const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);

/// What the draft's "no instance" rule reports for a starting group that timed out.
const LATE: &str = "the other starting events did not arrive within PT2M";
const NOBODY: &str = "no instance is waiting for it and it does not start one";
/// The reason of an event of source `nowhere` and type `nothing` under the patient workflow.
const NOWHERE: &str = "it matches no event definition of `patient-vitals` (its source is \
                       `nowhere` and its type `nothing`); the closest is `VitalsRecordedEvent` \
                       (source `patientVitalsWorkflow`, type `com.hospital.patient.vitalsRecorded`)";

// ---------------------------------------------------------------------------------------------
// Helpers

/// The next message of `rx`; fails the test if the channel closes or nothing comes for a day of
/// (virtual) time.
async fn next<T>(rx: &mut mpsc::Receiver<T>) -> T {
    timeout(24 * HOUR, rx.recv())
        .await
        .expect("nothing arrived within a day")
        .expect("the channel closed")
}

/// Everything `rx` still carries, until the host closes it.
async fn rest<T>(rx: &mut mpsc::Receiver<T>) -> Vec<T> {
    let mut all = Vec::new();
    while let Some(item) = timeout(24 * HOUR, rx.recv())
        .await
        .expect("the channel did not close within a day")
    {
        all.push(item);
    }
    all
}

/// The user's ends of a host, with the router running on its own task.
struct Running {
    events: Option<mpsc::Sender<CloudEvent>>,
    produced: mpsc::Receiver<CloudEvent>,
    unmatched: mpsc::Receiver<Unmatched>,
    outcomes: mpsc::Receiver<Outcome>,
    router: JoinHandle<()>,
}

impl Running {
    fn start<M: Machine>(machine: M, config: HostConfig) -> (Host<M>, Running) {
        let (host, channels) = Host::new(machine, config);
        let HostChannels {
            events,
            produced,
            unmatched,
            outcomes,
        } = channels;
        let router = tokio::spawn(host.clone().run());
        let running = Running {
            events: Some(events),
            produced,
            unmatched,
            outcomes,
            router,
        };
        (host, running)
    }

    async fn send(&self, event: CloudEvent) {
        self.events
            .as_ref()
            .expect("events still open")
            .send(event)
            .await
            .expect("the router is running");
    }

    /// Closes `events`, waits for the router and every instance, and returns what is left on
    /// each channel: (outcomes, produced, unmatched).
    async fn finish<M: Machine>(
        mut self,
        host: Host<M>,
    ) -> (Vec<Outcome>, Vec<CloudEvent>, Vec<Unmatched>) {
        self.events = None;
        // The caller's clone keeps the channels open: let it go before reading them to the end.
        drop(host);
        let outcomes = rest(&mut self.outcomes).await;
        let produced = rest(&mut self.produced).await;
        let unmatched = rest(&mut self.unmatched).await;
        timeout(24 * HOUR, self.router)
            .await
            .expect("the router ends")
            .expect("the router does not panic");
        (outcomes, produced, unmatched)
    }
}

fn output(outcome: &Outcome) -> &Value {
    outcome.result.as_ref().expect("the instance completed")
}

fn ids(events: &[CloudEvent]) -> Vec<&str> {
    events.iter().map(AttributesReader::id).collect()
}

fn reasons(unmatched: &[Unmatched]) -> Vec<(&str, &str)> {
    unmatched
        .iter()
        .map(|u| (u.event.id(), u.reason.as_str()))
        .collect()
}

/// Records every call of a function and answers with a fixed transformation of its arguments.
#[derive(Clone, Default)]
struct Calls(Arc<Mutex<Vec<Value>>>);

impl Calls {
    fn push(&self, args: &Value) {
        self.0.lock().unwrap().push(args.clone());
    }

    fn taken(&self) -> Vec<Value> {
        self.0.lock().unwrap().clone()
    }
}

// ---------------------------------------------------------------------------------------------
// (1) The draft's "Using multiple filters" example

/// `greetingFunction`: "<greeting> <customerName>!" from its parameters.
#[derive(Clone, Default)]
struct Greeter {
    calls: Calls,
    /// How long each greeting takes.
    takes: Duration,
}

impl greeting::GreetingFunctions for Greeter {
    async fn greeting_function(&self, args: Value) -> Result<Value, FunctionError> {
        self.calls.push(&args);
        if !self.takes.is_zero() {
            sleep(self.takes).await;
        }
        let greeting = args["greeting"].as_str().unwrap_or("Hello");
        let name = args["customerName"]
            .as_str()
            .ok_or_else(|| FunctionError::new("no customerName"))?;
        Ok(json!(format!("{greeting} {name}!")))
    }
}

/// The draft's workflow data input.
/// The instant `after` from now by `io`'s clock: a deadline as a saved state holds it.
fn in_(io: &Io, after: Duration) -> Option<Timestamp> {
    io.now().checked_add(after).ok()
}

fn greetings() -> Value {
    json!({
        "hello": {"english": "Hello", "spanish": "Hola", "german": "Hallo", "russian": ""},
        "goodbye": {"english": "Goodbye", "spanish": "Adis", "german": "Auf Wiedersehen", "russian": ""}
    })
}

/// The draft's customer-arrival CloudEvent data.
fn arrival(id: &str) -> CloudEvent {
    GreetingEvent::CustomerArrivesEvent
        .event(
            id,
            json!({"customer": {
                "name": "John Michaels",
                "address": "111 Some Street, SomeCity, SomeCountry",
                "age": 40
            }}),
        )
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn draft_greeting_example_outputs_hola_john_michaels() {
    let greeter = Greeter::default();
    let workflow = GreetingWorkflow::new(greeter.clone());
    let io = Io::standalone();
    io.deliver(arrival("c-1")).await.unwrap();
    let start = Instant::now();
    let output = workflow.run_with(greetings(), &io).await.unwrap();
    assert_eq!(output, json!("Hola John Michaels!"));
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(
        greeter.calls.taken(),
        [json!({"greeting": "Hola", "customerName": "John Michaels"})]
    );
    assert!(io.take_produced().is_empty());
}

#[tokio::test(start_paused = true)]
async fn draft_greeting_example_step_by_step_waits_for_the_customer() {
    let greeter = Greeter::default();
    let workflow = GreetingWorkflow::new(greeter.clone());
    let io = Io::standalone();
    let state = workflow.start_with(greetings(), &io).unwrap();
    // (1) the task input filter `$.hello` keeps the greetings.
    assert_eq!(
        state,
        GreetingState::WaitForCustomerToArrive {
            data: json!({"english": "Hello", "spanish": "Hola", "german": "Hallo", "russian": ""}),
            until: None,
        }
    );
    let start = Instant::now();
    let courier = io.clone();
    tokio::spawn(async move {
        sleep(3 * MINUTE).await;
        courier.deliver(arrival("c-2")).await.unwrap();
    });
    // (2)-(4) the customer arrives after 3 minutes; the output filter keeps the greeting.
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(start.elapsed(), 3 * MINUTE);
    assert_eq!(
        state,
        GreetingState::Completed {
            output: json!("Hola John Michaels!")
        }
    );
    assert_eq!(greeter.calls.taken().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn greeting_through_a_host_reaches_every_waiting_instance_then_starts_one() {
    let greeter = Greeter::default();
    let (host, mut running) = Running::start(
        GreetingWorkflow::new(greeter.clone()),
        HostConfig::default(),
    );
    let mut german = greetings();
    german["hello"]["spanish"] = json!("Buenos días");
    assert_eq!(
        host.start_instance(greetings()).unwrap(),
        InstanceId::new(1)
    );
    assert_eq!(host.start_instance(german).unwrap(), InstanceId::new(2));
    // Both instances are waiting once the paused clock can advance.
    sleep(SECOND).await;
    // An event without a correlation token reaches every instance waiting for it.
    running.send(arrival("c-3")).await;
    let mut first = [
        next(&mut running.outcomes).await,
        next(&mut running.outcomes).await,
    ];
    first.sort_by_key(|outcome| outcome.instance);
    assert_eq!(first[0].instance, InstanceId::new(1));
    assert_eq!(output(&first[0]), &json!("Hola John Michaels!"));
    assert_eq!(first[1].instance, InstanceId::new(2));
    assert_eq!(output(&first[1]), &json!("Buenos días John Michaels!"));
    // Nobody waits any more: the same event starts an instance, with input `{}` (the input
    // filter selects nothing and leaves it unfiltered, so no greeting reaches the function).
    running.send(arrival("c-4")).await;
    let (outcomes, produced, unmatched) = running.finish(host).await;
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0].instance, InstanceId::new(3));
    assert_eq!(output(&outcomes[0]), &json!("Hello John Michaels!"));
    assert!(produced.is_empty());
    assert!(unmatched.is_empty(), "{unmatched:?}");
    assert_eq!(greeter.calls.taken().len(), 3);
    assert_eq!(
        greeter.calls.taken()[2],
        json!({"greeting": null, "customerName": "John Michaels"})
    );
}

/// An instance that took its event no longer waits for it: the next customer, arriving while
/// the first is greeted, starts an instance of its own instead of landing in the busy one's
/// inbox, where nothing would take it and it would be reported unconsumed when it ended.
#[tokio::test(start_paused = true)]
async fn a_customer_arriving_during_a_greeting_starts_an_instance_of_its_own() {
    let greeter = Greeter {
        takes: MINUTE,
        ..Greeter::default()
    };
    let (host, running) = Running::start(
        GreetingWorkflow::new(greeter.clone()),
        HostConfig::default(),
    );
    running.send(arrival("c-1")).await;
    // Instance 1 takes c-1 and is a minute into its greeting.
    sleep(SECOND).await;
    assert_eq!(greeter.calls.taken().len(), 1);
    running.send(arrival("c-2")).await;
    let (mut outcomes, produced, unmatched) = running.finish(host).await;
    assert!(unmatched.is_empty(), "{unmatched:?}");
    assert!(produced.is_empty());
    outcomes.sort_by_key(|outcome| outcome.instance);
    let instances: Vec<InstanceId> = outcomes.iter().map(|outcome| outcome.instance).collect();
    assert_eq!(instances, [InstanceId::new(1), InstanceId::new(2)]);
    assert_eq!(greeter.calls.taken().len(), 2);
}

/// `record`: busy the first time, then records the amount.
#[derive(Clone, Default)]
struct Ledger {
    calls: Calls,
}

impl retried::EvRetriedFunctions for Ledger {
    async fn record(&self, args: Value) -> Result<Value, FunctionError> {
        self.calls.push(&args);
        if self.calls.taken().len() == 1 {
            return Err(FunctionError::named("Busy", "the ledger is busy"));
        }
        Ok(args["amount"].clone())
    }
}

/// A retried event task waits for a new event for its whole timeout, counted from when the
/// retry starts: counted from the failure, a retry whose interval (15 minutes) outlasts the
/// timeout (10 minutes) found its deadline passed as it started, and took the task's
/// transition without an event, without its actions and without the error.
#[tokio::test(start_paused = true)]
async fn a_retried_wait_for_an_event_has_its_whole_timeout() {
    let ledger = Ledger::default();
    let workflow = retried::EvRetriedWorkflow::new(ledger.clone());
    let io = Io::standalone();
    let started = Instant::now();
    let payments = io.clone();
    tokio::spawn(async move {
        let paid = |id: &str, amount: u64| {
            retried::EvRetriedEvent::Paid
                .event(id, json!({"amount": amount}))
                .unwrap()
        };
        sleep(MINUTE).await;
        payments.deliver(paid("p-1", 5)).await.unwrap();
        // The retry starts 15 minutes after the failure, at 16 minutes, and waits until 26.
        sleep(24 * MINUTE).await;
        payments.deliver(paid("p-2", 7)).await.unwrap();
    });
    let output = workflow.run_with(json!({}), &io).await.unwrap();
    assert_eq!(started.elapsed(), 25 * MINUTE);
    assert_eq!(output, json!({"amount": 7, "recorded": 7}));
    assert_eq!(ledger.calls.taken().len(), 2);
}

// ---------------------------------------------------------------------------------------------
// (2) The draft's patientId correlation example, and (3) the event task timeout

/// `recordVitals`: answers `{"recorded": <its arguments>}`.
#[derive(Clone, Default)]
struct Records {
    calls: Calls,
}

impl patient::PatientVitalsFunctions for Records {
    async fn record_vitals(&self, args: Value) -> Result<Value, FunctionError> {
        self.calls.push(&args);
        Ok(json!({"recorded": args}))
    }
}

/// The draft's heart-rate CloudEvent, attribute for attribute.
fn draft_heart_rate() -> CloudEvent {
    EventBuilderV10::new()
        .id("A234-1234-1234")
        .source("hospitalMonitorSystem")
        .ty("com.hospital.patient.heartRateMonitor")
        .subject("HeartRateReading")
        .time("2020-01-05T17:31:00Z")
        .extension("patientId", "PID-12345")
        .data("application/json", json!({"value": "80bpm"}))
        .build()
        .unwrap()
}

/// The draft's blood-pressure CloudEvent, attribute for attribute.
fn draft_blood_pressure() -> CloudEvent {
    EventBuilderV10::new()
        .id("B234-1234-1234")
        .source("hospitalMonitorSystem")
        .ty("com.hospital.patient.bloodPressureMonitor")
        .subject("BloodPressureReading")
        .time("2020-02-05T17:31:00Z")
        .extension("patientId", "PID-12345")
        .data("application/json", json!({"value": "110/70"}))
        .build()
        .unwrap()
}

fn heart_rate(id: &str, patient: &str, value: &str) -> CloudEvent {
    PatientVitalsEvent::HeartRateReadingEvent
        .correlated(id, patient, json!({"value": value}))
        .unwrap()
}

fn blood_pressure(id: &str, patient: &str, value: &str) -> CloudEvent {
    PatientVitalsEvent::BloodPressureReadingEvent
        .correlated(id, patient, json!({"value": value}))
        .unwrap()
}

/// The produced events by their `patientId`, checking each is a VitalsRecordedEvent.
fn vitals_by_patient(produced: &[CloudEvent]) -> BTreeMap<String, Value> {
    let mut by_patient = BTreeMap::new();
    for event in produced {
        assert_eq!(
            PatientVitalsEvent::of(event),
            Some(PatientVitalsEvent::VitalsRecordedEvent)
        );
        assert_eq!(event.source(), "patientVitalsWorkflow");
        assert_eq!(event.ty(), "com.hospital.patient.vitalsRecorded");
        let patient = context_attribute(event, "patientId").expect("carries patientId");
        let previous = by_patient.insert(patient, event_data(event));
        assert!(previous.is_none(), "one VitalsRecordedEvent per patient");
    }
    by_patient
}

#[tokio::test(start_paused = true)]
async fn draft_patient_correlation_routes_interleaved_readings_to_their_instances() {
    let records = Records::default();
    let (host, running) = Running::start(
        PatientVitalsWorkflow::new(records.clone()),
        HostConfig::default(),
    );
    let start = Instant::now();
    running.send(draft_heart_rate()).await; // starts instance 1 for PID-12345
    running.send(heart_rate("H-2", "PID-67890", "95bpm")).await; // instance 2 for PID-67890
    running
        .send(blood_pressure("B-2", "PID-67890", "130/85"))
        .await;
    running.send(draft_blood_pressure()).await;
    let (mut outcomes, produced, unmatched) = running.finish(host).await;
    assert_eq!(start.elapsed(), Duration::ZERO, "nothing waits for a timer");
    outcomes.sort_by_key(|outcome| outcome.instance);
    assert_eq!(outcomes.len(), 2);
    assert_eq!(outcomes[0].instance, InstanceId::new(1));
    assert_eq!(
        output(&outcomes[0]),
        &json!({"value": "110/70", "record": {"recorded": {"value": "110/70"}}})
    );
    assert_eq!(outcomes[1].instance, InstanceId::new(2));
    assert_eq!(
        output(&outcomes[1]),
        &json!({"value": "130/85", "record": {"recorded": {"value": "130/85"}}})
    );
    assert_eq!(produced.len(), 2);
    let produced_ids: BTreeSet<&str> = ids(&produced).into_iter().collect();
    assert_eq!(produced_ids.len(), 2, "produced ids are unique");
    assert_eq!(
        vitals_by_patient(&produced),
        BTreeMap::from([
            (
                String::from("PID-12345"),
                json!({"recorded": {"value": "110/70"}})
            ),
            (
                String::from("PID-67890"),
                json!({"recorded": {"value": "130/85"}})
            ),
        ])
    );
    assert!(unmatched.is_empty(), "{unmatched:?}");
    let mut calls = records.calls.taken();
    calls.sort_by_key(Value::to_string);
    assert_eq!(
        calls,
        [json!({"value": "110/70"}), json!({"value": "130/85"})]
    );
}

#[tokio::test(start_paused = true)]
async fn events_with_another_patient_id_never_reach_an_instance() {
    let records = Records::default();
    let (host, running) = Running::start(
        PatientVitalsWorkflow::new(records.clone()),
        HostConfig::default(),
    );
    let start = Instant::now();
    running.send(heart_rate("H-A", "A", "70bpm")).await; // instance 1
    running.send(heart_rate("H-B", "B", "71bpm")).await; // instance 2
    sleep(SECOND).await; // both wait for their blood pressure now
    // Nobody is bound to C, and the bound instances A and B do not take it for themselves.
    running.send(blood_pressure("B-C", "C", "999/1")).await;
    // A second heart-rate reading of A goes to A (bound to A), not to a new instance; A never
    // consumes it, so it comes back when A ends.
    running.send(heart_rate("H-A2", "A", "72bpm")).await;
    sleep(SECOND).await;
    running.send(blood_pressure("B-B", "B", "120/80")).await;
    running.send(blood_pressure("B-A", "A", "110/70")).await;
    let (mut outcomes, produced, unmatched) = running.finish(host).await;
    assert_eq!(start.elapsed(), 2 * SECOND);
    outcomes.sort_by_key(|outcome| outcome.instance);
    let outputs: Vec<(u64, &Value)> = outcomes
        .iter()
        .map(|outcome| (outcome.instance.get(), output(outcome)))
        .collect();
    assert_eq!(
        outputs,
        [
            (
                1,
                &json!({"value": "110/70", "record": {"recorded": {"value": "110/70"}}})
            ),
            (
                2,
                &json!({"value": "120/80", "record": {"recorded": {"value": "120/80"}}})
            ),
        ]
    );
    assert_eq!(
        vitals_by_patient(&produced),
        BTreeMap::from([
            (String::from("A"), json!({"recorded": {"value": "110/70"}})),
            (String::from("B"), json!({"recorded": {"value": "120/80"}})),
        ])
    );
    assert_eq!(
        reasons(&unmatched),
        [
            ("B-C", NOBODY),
            ("H-A2", "instance 1 ended before consuming it")
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn blood_pressure_times_out_at_exactly_one_hour_without_running_its_action() {
    let records = Records::default();
    let workflow = PatientVitalsWorkflow::new(records.clone());
    let io = Io::standalone();
    io.deliver(heart_rate("H-1", "PID-1", "80bpm"))
        .await
        .unwrap();
    let start = Instant::now();
    let state = workflow.start_with(json!({}), &io).unwrap();
    assert_eq!(
        state,
        PatientVitalsState::HeartRate {
            data: json!({}),
            until: None
        }
    );
    let state = workflow.step_with(state, &io).await.unwrap();
    // Its one-hour timeout counts from when it became active, and is saved with it.
    assert_eq!(
        state,
        PatientVitalsState::BloodPressure {
            data: json!({"value": "80bpm"}),
            until: in_(&io, HOUR),
        }
    );
    // Another patient's reading during the wait does not end it.
    let courier = io.clone();
    tokio::spawn(async move {
        sleep(30 * MINUTE).await;
        courier
            .deliver(blood_pressure("B-2", "PID-2", "120/80"))
            .await
            .unwrap();
    });
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(start.elapsed(), HOUR);
    assert_eq!(
        state,
        PatientVitalsState::Completed {
            output: json!({"value": "80bpm"})
        }
    );
    assert!(records.calls.taken().is_empty(), "no action on a timeout");
    // The end still produces its event: `$.record` selects nothing, so it has no data.
    let produced = io.take_produced();
    assert_eq!(produced.len(), 1);
    assert_eq!(
        PatientVitalsEvent::of(&produced[0]),
        Some(PatientVitalsEvent::VitalsRecordedEvent)
    );
    assert_eq!(produced[0].data(), None);
    assert_eq!(
        context_attribute(&produced[0], "patientId").as_deref(),
        Some("PID-1")
    );
    assert_eq!(
        io.correlation().get("patientId").map(String::as_str),
        Some("PID-1")
    );
}

#[tokio::test(start_paused = true)]
async fn blood_pressure_a_second_before_the_timeout_runs_the_action() {
    let records = Records::default();
    let workflow = PatientVitalsWorkflow::new(records.clone());
    let io = Io::standalone();
    io.deliver(heart_rate("H-1", "PID-1", "80bpm"))
        .await
        .unwrap();
    let courier = io.clone();
    tokio::spawn(async move {
        sleep(HOUR - SECOND).await;
        courier
            .deliver(blood_pressure("B-1", "PID-1", "110/70"))
            .await
            .unwrap();
    });
    let start = Instant::now();
    let output = workflow.run_with(json!({}), &io).await.unwrap();
    assert_eq!(start.elapsed(), HOUR - SECOND);
    assert_eq!(
        output,
        json!({"value": "110/70", "record": {"recorded": {"value": "110/70"}}})
    );
    assert_eq!(records.calls.taken(), [json!({"value": "110/70"})]);
    let produced = io.take_produced();
    assert_eq!(produced.len(), 1);
    assert_eq!(
        event_data(&produced[0]),
        json!({"recorded": {"value": "110/70"}})
    );
    assert_eq!(
        context_attribute(&produced[0], "patientId").as_deref(),
        Some("PID-1")
    );
}

#[tokio::test(start_paused = true)]
async fn hosted_blood_pressure_timeout_counts_from_when_the_task_becomes_active() {
    let records = Records::default();
    let (host, running) = Running::start(
        PatientVitalsWorkflow::new(records.clone()),
        HostConfig::default(),
    );
    let start = Instant::now();
    sleep(10 * MINUTE).await;
    running.send(heart_rate("H-1", "PID-1", "80bpm")).await;
    let mut running = running;
    let outcome = next(&mut running.outcomes).await;
    assert_eq!(start.elapsed(), 10 * MINUTE + HOUR);
    assert_eq!(outcome.instance, InstanceId::new(1));
    assert_eq!(output(&outcome), &json!({"value": "80bpm"}));
    let (outcomes, produced, unmatched) = running.finish(host).await;
    assert!(outcomes.is_empty());
    assert_eq!(produced.len(), 1);
    assert_eq!(produced[0].data(), None);
    assert_eq!(
        context_attribute(&produced[0], "patientId").as_deref(),
        Some("PID-1")
    );
    assert!(unmatched.is_empty(), "{unmatched:?}");
    assert!(records.calls.taken().is_empty());
}

// ---------------------------------------------------------------------------------------------
// (4) A callback task and a switch on events

/// `askManager`: records its arguments, takes `delay`, answers `{"asked": "manager"}`.
#[derive(Clone, Default)]
struct Manager {
    calls: Calls,
    delay: Duration,
}

impl approval::ApprovalFunctions for Manager {
    async fn ask_manager(&self, args: Value) -> Result<Value, FunctionError> {
        self.calls.push(&args);
        sleep(self.delay).await;
        Ok(json!({"asked": "manager"}))
    }
}

fn decision(id: &str, request: &str) -> CloudEvent {
    ApprovalEvent::Decision
        .correlated(
            id,
            request,
            json!({"decision": {"amount": 100, "ok": true}, "noise": "filtered out"}),
        )
        .unwrap()
}

fn approved(id: &str, request: &str) -> CloudEvent {
    ApprovalEvent::Approved
        .correlated(id, request, json!({"approvedBy": "Ann"}))
        .unwrap()
}

fn rejected(id: &str, request: &str) -> CloudEvent {
    ApprovalEvent::Rejected
        .correlated(id, request, json!({"rejectedBy": "Bob"}))
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn callback_then_approved_accepts_and_produces_done() {
    let manager = Manager::default();
    let workflow = ApprovalWorkflow::new(manager.clone());
    let clock = Arc::new(ManualClock::new("2030-01-02T03:04:05Z".parse().unwrap()));
    let io = Io::standalone_with_clock(clock);
    // In any order: each wait takes the event it wants.
    io.deliver(approved("A-1", "R1")).await.unwrap();
    io.deliver(decision("D-1", "R1")).await.unwrap();
    let start = Instant::now();
    let output = workflow
        .run_with(json!({"request": "laptop"}), &io)
        .await
        .unwrap();
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(
        output,
        json!({
            "request": "laptop",
            "asked": "manager",
            "amount": 100,
            "ok": true,
            "approvedBy": "Ann",
            "status": "accepted"
        })
    );
    assert_eq!(manager.calls.taken(), [json!({"request": "laptop"})]);
    let produced = io.take_produced();
    assert_eq!(produced.len(), 1);
    assert_eq!(ApprovalEvent::of(&produced[0]), Some(ApprovalEvent::Done));
    assert_eq!(produced[0].source(), "approval-workflow");
    assert_eq!(produced[0].ty(), "approval.done");
    assert_eq!(event_data(&produced[0]), json!({"outcome": "approved"}));
    assert_eq!(
        context_attribute(&produced[0], "requestId").as_deref(),
        Some("R1")
    );
    // Stamped with the instance's clock.
    assert_eq!(
        context_attribute(&produced[0], "time").as_deref(),
        Some("2030-01-02T03:04:05+00:00")
    );
}

#[tokio::test(start_paused = true)]
async fn callback_then_rejected_refuses_and_produces_nothing() {
    let manager = Manager::default();
    let workflow = ApprovalWorkflow::new(manager.clone());
    let io = Io::standalone();
    io.deliver(decision("D-1", "R1")).await.unwrap();
    let courier = io.clone();
    tokio::spawn(async move {
        sleep(29 * MINUTE).await;
        courier.deliver(rejected("X-1", "R1")).await.unwrap();
    });
    let start = Instant::now();
    let output = workflow
        .run_with(json!({"request": "laptop"}), &io)
        .await
        .unwrap();
    assert_eq!(start.elapsed(), 29 * MINUTE);
    assert_eq!(
        output,
        json!({
            "request": "laptop",
            "asked": "manager",
            "amount": 100,
            "ok": true,
            "rejectedBy": "Bob",
            "status": "refused"
        })
    );
    assert!(io.take_produced().is_empty());
}

#[tokio::test(start_paused = true)]
async fn callback_times_out_at_one_hour_then_the_switch_expires_30_minutes_later() {
    let manager = Manager::default();
    let workflow = ApprovalWorkflow::new(manager.clone());
    let io = Io::standalone();
    let input = json!({"request": "laptop"});
    let start = Instant::now();
    let state = workflow.start_with(input.clone(), &io).unwrap();
    assert_eq!(
        state,
        ApprovalState::AskManager {
            data: input,
            phase: CallbackPhase::Call
        }
    );
    // The action is one step, saved before the wait for the callback begins: a resumed
    // instance never calls it again.
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(
        state,
        ApprovalState::AskManager {
            data: json!({"request": "laptop", "asked": "manager"}),
            phase: CallbackPhase::Wait {
                until: in_(&io, HOUR),
                input: None
            }
        }
    );
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(start.elapsed(), HOUR);
    // No callback event, so nothing else changed.
    assert_eq!(
        state,
        ApprovalState::AwaitOutcome {
            data: json!({"request": "laptop", "asked": "manager"}),
            until: in_(&io, 30 * MINUTE),
        }
    );
    assert_eq!(manager.calls.taken().len(), 1);
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(start.elapsed(), HOUR + 30 * MINUTE);
    assert_eq!(
        state,
        ApprovalState::Expire {
            data: json!({"request": "laptop", "asked": "manager"})
        }
    );
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(
        state,
        ApprovalState::Completed {
            output: json!({"request": "laptop", "asked": "manager", "status": "expired"})
        }
    );
    assert_eq!(start.elapsed(), HOUR + 30 * MINUTE);
    assert!(io.take_produced().is_empty());
    assert_eq!(manager.calls.taken().len(), 1, "the action runs once");
}

#[tokio::test(start_paused = true)]
async fn callback_timeout_starts_after_the_action() {
    let manager = Manager {
        delay: 10 * MINUTE,
        ..Manager::default()
    };
    let workflow = ApprovalWorkflow::new(manager);
    let io = Io::standalone();
    let start = Instant::now();
    let state = workflow.start_with(json!({}), &io).unwrap();
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(start.elapsed(), 10 * MINUTE);
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(start.elapsed(), 10 * MINUTE + HOUR);
    assert_eq!(
        state,
        ApprovalState::AwaitOutcome {
            data: json!({"asked": "manager"}),
            until: in_(&io, 30 * MINUTE),
        }
    );
}

#[tokio::test(start_paused = true)]
async fn switch_expires_30_minutes_after_it_becomes_active_ignoring_other_requests() {
    let workflow = ApprovalWorkflow::new(Manager::default());
    let io = Io::standalone();
    // Another request's approval: the instance is bound to R1 by its decision.
    io.deliver(approved("A-2", "R2")).await.unwrap();
    let courier = io.clone();
    tokio::spawn(async move {
        sleep(20 * MINUTE).await;
        courier.deliver(decision("D-1", "R1")).await.unwrap();
    });
    let start = Instant::now();
    let output = workflow.run_with(json!({}), &io).await.unwrap();
    assert_eq!(start.elapsed(), 20 * MINUTE + 30 * MINUTE);
    assert_eq!(
        output,
        json!({"asked": "manager", "amount": 100, "ok": true, "status": "expired"})
    );
    assert!(io.take_produced().is_empty());
    assert_eq!(
        io.correlation(),
        BTreeMap::from([(String::from("requestId"), String::from("R1"))])
    );
}

#[tokio::test(start_paused = true)]
async fn hosted_approval_routes_by_request_and_produces_done_on_the_channel() {
    let manager = Manager::default();
    let (host, mut running) = Running::start(
        ApprovalWorkflow::new(manager.clone()),
        HostConfig::default(),
    );
    let correlation = BTreeMap::from([(String::from("requestId"), String::from("R7"))]);
    let id = host
        .start_instance_correlated(json!({"request": "desk"}), correlation)
        .unwrap();
    assert_eq!(id, InstanceId::new(1));
    let start = Instant::now();
    running.send(decision("D-8", "R8")).await; // another request: nobody
    running.send(decision("D-7", "R7")).await;
    sleep(5 * MINUTE).await;
    running.send(approved("A-7", "R7")).await;
    let outcome = next(&mut running.outcomes).await;
    assert_eq!(start.elapsed(), 5 * MINUTE);
    assert_eq!(
        output(&outcome),
        &json!({
            "request": "desk",
            "asked": "manager",
            "amount": 100,
            "ok": true,
            "approvedBy": "Ann",
            "status": "accepted"
        })
    );
    let (outcomes, produced, unmatched) = running.finish(host).await;
    assert!(outcomes.is_empty());
    assert_eq!(produced.len(), 1);
    assert_eq!(ApprovalEvent::of(&produced[0]), Some(ApprovalEvent::Done));
    assert_eq!(event_data(&produced[0]), json!({"outcome": "approved"}));
    assert_eq!(
        context_attribute(&produced[0], "requestId").as_deref(),
        Some("R7")
    );
    assert_eq!(reasons(&unmatched), [("D-8", NOBODY)]);
    assert_eq!(manager.calls.taken(), [json!({"request": "desk"})]);
}

#[tokio::test(start_paused = true)]
async fn each_decision_binds_the_instance_that_waited_longest() {
    let manager = Manager::default();
    let (host, mut running) = Running::start(
        ApprovalWorkflow::new(manager.clone()),
        HostConfig::default(),
    );
    assert_eq!(
        host.start_instance(json!({"request": "chair"})).unwrap(),
        InstanceId::new(1)
    );
    sleep(SECOND).await;
    assert_eq!(
        host.start_instance(json!({"request": "lamp"})).unwrap(),
        InstanceId::new(2)
    );
    sleep(SECOND).await;
    // Neither instance is bound yet: the first decision binds instance 1 (waiting longest) to
    // R1, the second binds instance 2 to R2; later events reach them by value.
    running.send(decision("D-1", "R1")).await;
    running.send(decision("D-2", "R2")).await;
    running.send(approved("A-2", "R2")).await;
    running.send(rejected("X-1", "R1")).await;
    let mut outcomes = [
        next(&mut running.outcomes).await,
        next(&mut running.outcomes).await,
    ];
    outcomes.sort_by_key(|outcome| outcome.instance);
    assert_eq!(
        output(&outcomes[0]),
        &json!({
            "request": "chair",
            "asked": "manager",
            "amount": 100,
            "ok": true,
            "rejectedBy": "Bob",
            "status": "refused"
        })
    );
    assert_eq!(
        output(&outcomes[1]),
        &json!({
            "request": "lamp",
            "asked": "manager",
            "amount": 100,
            "ok": true,
            "approvedBy": "Ann",
            "status": "accepted"
        })
    );
    let (rest_outcomes, produced, unmatched) = running.finish(host).await;
    assert!(rest_outcomes.is_empty());
    assert_eq!(produced.len(), 1);
    assert_eq!(
        context_attribute(&produced[0], "requestId").as_deref(),
        Some("R2")
    );
    assert!(unmatched.is_empty(), "{unmatched:?}");
}

#[tokio::test(start_paused = true)]
async fn event_data_filters_that_select_nothing_and_events_without_data() {
    // A decision without `decision`: the filter selects nothing and leaves the data unfiltered.
    let workflow = ApprovalWorkflow::new(Manager::default());
    let io = Io::standalone();
    io.deliver(
        ApprovalEvent::Decision
            .correlated("D-1", "R1", json!({"note": "no decision field"}))
            .unwrap(),
    )
    .await
    .unwrap();
    // An approval without data merges nothing.
    io.deliver(
        ApprovalEvent::Approved
            .correlated("A-1", "R1", Value::Null)
            .unwrap(),
    )
    .await
    .unwrap();
    let output = workflow.run_with(json!({}), &io).await.unwrap();
    assert_eq!(
        output,
        json!({"asked": "manager", "note": "no decision field", "status": "accepted"})
    );
}

#[tokio::test(start_paused = true)]
async fn event_data_of_another_kind_fails_the_task_with_a_data_error() {
    let workflow = ApprovalWorkflow::new(Manager::default());
    let io = Io::standalone();
    io.deliver(decision("D-1", "R1")).await.unwrap();
    io.deliver(
        ApprovalEvent::Approved
            .correlated("A-1", "R1", json!([1, 2]))
            .unwrap(),
    )
    .await
    .unwrap();
    let error = workflow.run_with(json!({}), &io).await.unwrap_err();
    assert_eq!(error.task(), "AwaitOutcome");
    assert_eq!(error.error().name, "DataError");
    assert!(
        error.error().message.contains("event data"),
        "{}",
        error.error().message
    );
    assert_eq!(
        error.data(),
        &json!({"asked": "manager", "amount": 100, "ok": true})
    );
    assert!(io.take_produced().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_saved_waiting_state_resumes_with_its_correlation() {
    let workflow = PatientVitalsWorkflow::new(Records::default());
    let io = Io::standalone();
    io.deliver(heart_rate("H-1", "PID-1", "80bpm"))
        .await
        .unwrap();
    let state = workflow.start_with(json!({}), &io).unwrap();
    let state = workflow.step_with(state, &io).await.unwrap();
    let saved = swf_runtime::serde_json::to_string(&state).unwrap();
    // Later, elsewhere: the state and the correlation come back.
    let state: PatientVitalsState = swf_runtime::serde_json::from_str(&saved).unwrap();
    let io = Io::builder().correlation(io.correlation()).build();
    io.deliver(blood_pressure("B-2", "PID-2", "1/1"))
        .await
        .unwrap();
    io.deliver(blood_pressure("B-1", "PID-1", "110/70"))
        .await
        .unwrap();
    let state = workflow.step_with(state, &io).await.unwrap();
    assert_eq!(
        state,
        PatientVitalsState::Completed {
            output: json!({"value": "110/70", "record": {"recorded": {"value": "110/70"}}})
        }
    );
    let produced = io.take_produced();
    assert_eq!(
        context_attribute(&produced[0], "patientId").as_deref(),
        Some("PID-1")
    );
}

#[tokio::test(start_paused = true)]
async fn a_lower_cased_correlation_attribute_still_reaches_its_instance() {
    // What an HTTP binary-mode transport makes of `patientId`.
    let (host, running) = Running::start(
        PatientVitalsWorkflow::new(Records::default()),
        HostConfig::default(),
    );
    running.send(heart_rate("H-1", "PID-1", "80bpm")).await;
    let lowered = EventBuilderV10::new()
        .id("B-1")
        .source("hospitalMonitorSystem")
        .ty("com.hospital.patient.bloodPressureMonitor")
        .extension("patientid", "PID-1")
        .data("application/json", json!({"value": "110/70"}))
        .build()
        .unwrap();
    running.send(lowered).await;
    let (outcomes, produced, unmatched) = running.finish(host).await;
    assert_eq!(outcomes.len(), 1);
    assert_eq!(
        output(&outcomes[0]),
        &json!({"value": "110/70", "record": {"recorded": {"value": "110/70"}}})
    );
    assert_eq!(produced.len(), 1);
    assert!(unmatched.is_empty(), "{unmatched:?}");
}

// ---------------------------------------------------------------------------------------------
// A switch on events as the start task

#[tokio::test(start_paused = true)]
async fn switch_event_conditions_filter_their_event_data() {
    let workflow = EvTrackWorkflow::new(NoFunctions);
    let io = Io::standalone();
    io.deliver(
        EvTrackEvent::Lost
            .correlated(
                "L-1",
                "X1",
                json!({"report": {"where": "depot"}, "extra": 1}),
            )
            .unwrap(),
    )
    .await
    .unwrap();
    let output = workflow
        .run_with(json!({"parcel": {"to": "Ann"}}), &io)
        .await
        .unwrap();
    assert_eq!(
        output,
        json!({"parcel": {"to": "Ann"}, "where": "depot", "status": "lost"})
    );
    let io = Io::standalone();
    io.deliver(
        EvTrackEvent::Delivered
            .correlated("D-1", "X1", json!({"proof": {"signedBy": "Eve"}}))
            .unwrap(),
    )
    .await
    .unwrap();
    let output = workflow.run_with(json!({}), &io).await.unwrap();
    assert_eq!(output, json!({"signedBy": "Eve", "status": "delivered"}));
    assert!(io.take_produced().is_empty());
}

/// BUG (reported): the compiler drops the `eventTimeout` of a switch on events that is the
/// start task (`emit/events.rs`, `waiting_timeout`, applies the draft's rule for *event* tasks
/// that start instances to switches too), and the host does not start instances from a
/// switch either, so the timeout is never applied and the instance waits forever.
#[tokio::test(start_paused = true)]
async fn a_starting_switch_takes_its_default_after_its_event_timeout() {
    let workflow = EvTrackWorkflow::new(NoFunctions);
    let correlation = BTreeMap::from([(String::from("parcelid"), String::from("X9"))]);
    let io = Io::builder().correlation(correlation).build();
    let start = Instant::now();
    let output = timeout(
        48 * HOUR,
        workflow.run_with(json!({"parcel": {"to": "Ann"}}), &io),
    )
    .await
    .expect("eventTimeout P1D takes the default transition after a day")
    .unwrap();
    assert_eq!(start.elapsed(), 24 * HOUR);
    assert_eq!(output, json!({"parcel": {"to": "Ann"}, "status": "lost"}));
    let produced = io.take_produced();
    assert_eq!(produced.len(), 1);
    assert_eq!(EvTrackEvent::of(&produced[0]), Some(EvTrackEvent::Overdue));
    assert_eq!(event_data(&produced[0]), json!({"to": "Ann"}));
    assert_eq!(
        context_attribute(&produced[0], "parcelid").as_deref(),
        Some("X9")
    );
}

// ---------------------------------------------------------------------------------------------
// (5) A non-exclusive starting event task

struct NoFunctions;

impl together::TogetherFunctions for NoFunctions {}
impl three::EvThreeReadingsFunctions for NoFunctions {}
impl tickets::EvTenThousandFunctions for NoFunctions {}
impl track::EvTrackFunctions for NoFunctions {}

fn temperature(id: &str, patient: &str, celsius: f64) -> CloudEvent {
    TogetherEvent::Temperature
        .correlated(id, patient, json!({"celsius": celsius}))
        .unwrap()
}

fn pulse(id: &str, patient: &str, bpm: u64) -> CloudEvent {
    TogetherEvent::Pulse
        .correlated(id, patient, json!({"bpm": bpm}))
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn both_readings_within_two_minutes_start_one_instance_per_patient() {
    let (host, mut running) =
        Running::start(TogetherWorkflow::new(NoFunctions), HostConfig::default());
    let start = Instant::now();
    running.send(temperature("T-1", "P1", 37.5)).await;
    sleep_until(start + 30 * SECOND).await;
    running.send(pulse("P-2", "P2", 80)).await;
    sleep_until(start + MINUTE).await;
    running.send(temperature("T-2", "P2", 38.0)).await;
    // P2's pair is complete at 1m: the first instance.
    let first = next(&mut running.outcomes).await;
    assert_eq!(start.elapsed(), MINUTE);
    assert_eq!(first.instance, InstanceId::new(1));
    assert_eq!(output(&first), &json!({"celsius": 38.0, "bpm": 80}));
    sleep_until(start + 2 * MINUTE - SECOND).await;
    running.send(pulse("P-1", "P1", 72)).await;
    let second = next(&mut running.outcomes).await;
    assert_eq!(start.elapsed(), 2 * MINUTE - SECOND);
    assert_eq!(second.instance, InstanceId::new(2));
    assert_eq!(output(&second), &json!({"celsius": 37.5, "bpm": 72}));
    let (outcomes, produced, unmatched) = running.finish(host).await;
    assert!(outcomes.is_empty());
    assert!(produced.is_empty());
    assert!(unmatched.is_empty(), "{unmatched:?}");
}

#[tokio::test(start_paused = true)]
async fn a_reading_after_two_minutes_and_one_second_starts_nothing() {
    let (host, mut running) =
        Running::start(TogetherWorkflow::new(NoFunctions), HostConfig::default());
    let start = Instant::now();
    running.send(temperature("T-3", "P3", 37.0)).await;
    sleep_until(start + 2 * MINUTE + SECOND).await;
    running.send(pulse("P-3", "P3", 70)).await;
    // The temperature's group timed out at exactly 2m; the pulse starts a new group, which
    // times out 2m after it.
    let first = next(&mut running.unmatched).await;
    assert_eq!((first.event.id(), first.reason.as_str()), ("T-3", LATE));
    let second = next(&mut running.unmatched).await;
    assert_eq!(start.elapsed(), 4 * MINUTE + SECOND);
    assert_eq!((second.event.id(), second.reason.as_str()), ("P-3", LATE));
    let (outcomes, produced, unmatched) = running.finish(host).await;
    assert!(outcomes.is_empty(), "no instance: {outcomes:?}");
    assert!(produced.is_empty());
    assert!(unmatched.is_empty(), "{unmatched:?}");
}

#[tokio::test(start_paused = true)]
async fn the_late_temperature_comes_back_at_exactly_two_minutes() {
    let (host, mut running) =
        Running::start(TogetherWorkflow::new(NoFunctions), HostConfig::default());
    let start = Instant::now();
    running.send(temperature("T-4", "P4", 37.0)).await;
    let late = next(&mut running.unmatched).await;
    assert_eq!(start.elapsed(), 2 * MINUTE);
    assert_eq!((late.event.id(), late.reason.as_str()), ("T-4", LATE));
    // A pulse now starts a new group, given back when the events channel closes.
    running.send(pulse("P-4", "P4", 70)).await;
    let (outcomes, _, unmatched) = running.finish(host).await;
    assert!(outcomes.is_empty());
    assert_eq!(
        reasons(&unmatched),
        [(
            "P-4",
            "the events channel closed before the other starting events arrived"
        )]
    );
    assert_eq!(start.elapsed(), 2 * MINUTE);
}

#[tokio::test(start_paused = true)]
async fn a_repeated_reading_waits_in_a_group_of_its_own() {
    let (host, mut running) =
        Running::start(TogetherWorkflow::new(NoFunctions), HostConfig::default());
    let start = Instant::now();
    running.send(temperature("T-1", "P1", 37.0)).await;
    sleep_until(start + MINUTE).await;
    running.send(temperature("T-1b", "P1", 39.0)).await;
    sleep_until(start + 90 * SECOND).await;
    // Completes the oldest group of P1, the one holding T-1.
    running.send(pulse("P-1", "P1", 60)).await;
    let outcome = next(&mut running.outcomes).await;
    assert_eq!(start.elapsed(), 90 * SECOND);
    assert_eq!(output(&outcome), &json!({"celsius": 37.0, "bpm": 60}));
    // T-1b's group times out 2m after it arrived.
    let late = next(&mut running.unmatched).await;
    assert_eq!(start.elapsed(), 3 * MINUTE);
    assert_eq!((late.event.id(), late.reason.as_str()), ("T-1b", LATE));
    let (outcomes, _, unmatched) = running.finish(host).await;
    assert!(outcomes.is_empty() && unmatched.is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_instance_started_by_hand_takes_the_starting_events_without_a_timeout() {
    let (host, mut running) =
        Running::start(TogetherWorkflow::new(NoFunctions), HostConfig::default());
    let start = Instant::now();
    assert_eq!(
        host.start_instance(json!({"bed": 7})).unwrap(),
        InstanceId::new(1)
    );
    sleep(SECOND).await;
    // The instance waits for both: the temperature binds it to P7 instead of opening a group.
    running.send(temperature("T-7", "P7", 36.9)).await;
    sleep_until(start + 10 * MINUTE).await;
    running.send(pulse("P-7", "P7", 64)).await;
    let outcome = next(&mut running.outcomes).await;
    assert_eq!(start.elapsed(), 10 * MINUTE);
    assert_eq!(outcome.instance, InstanceId::new(1));
    assert_eq!(
        output(&outcome),
        &json!({"bed": 7, "celsius": 36.9, "bpm": 64})
    );
    let (outcomes, _, unmatched) = running.finish(host).await;
    assert!(outcomes.is_empty());
    assert!(unmatched.is_empty(), "{unmatched:?}");
}

fn reading(kind: EvThreeReadingsEvent, id: &str, patient: &str, value: u64) -> CloudEvent {
    let key = match kind {
        EvThreeReadingsEvent::Temperature => "celsius",
        EvThreeReadingsEvent::Pulse => "bpm",
        EvThreeReadingsEvent::Oxygen => "spo2",
    };
    kind.correlated(id, patient, json!({ key: value })).unwrap()
}

#[tokio::test(start_paused = true)]
async fn the_starting_timeout_restarts_with_each_event() {
    use EvThreeReadingsEvent::{Oxygen, Pulse, Temperature};
    let (host, mut running) = Running::start(
        EvThreeReadingsWorkflow::new(NoFunctions),
        HostConfig::default(),
    );
    let start = Instant::now();
    // P1: each event within 2m of the previous one, the last 3m after the first.
    running.send(reading(Temperature, "T-1", "P1", 37)).await;
    sleep_until(start + 90 * SECOND).await;
    running.send(reading(Pulse, "P-1", "P1", 72)).await;
    sleep_until(start + 3 * MINUTE).await;
    running.send(reading(Oxygen, "O-1", "P1", 98)).await;
    let outcome = next(&mut running.outcomes).await;
    assert_eq!(start.elapsed(), 3 * MINUTE);
    assert_eq!(outcome.instance, InstanceId::new(1));
    assert_eq!(
        output(&outcome),
        &json!({"celsius": 37, "bpm": 72, "spo2": 98})
    );
    // P2: the third one arrives 2m1s after the second: no instance.
    let restart = Instant::now();
    running.send(reading(Oxygen, "O-2", "P2", 97)).await;
    sleep_until(restart + 90 * SECOND).await;
    running.send(reading(Temperature, "T-2", "P2", 38)).await;
    sleep_until(restart + 90 * SECOND + 2 * MINUTE + SECOND).await;
    running.send(reading(Pulse, "P-2", "P2", 75)).await;
    let (outcomes, produced, unmatched) = running.finish(host).await;
    assert!(outcomes.is_empty(), "{outcomes:?}");
    assert!(produced.is_empty());
    assert_eq!(
        reasons(&unmatched),
        [
            ("O-2", LATE),
            ("T-2", LATE),
            (
                "P-2",
                "the events channel closed before the other starting events arrived"
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn standalone_non_exclusive_start_ignores_its_timeout() {
    let workflow = TogetherWorkflow::new(NoFunctions);
    let io = Io::standalone();
    io.deliver(pulse("P-5", "P5", 66)).await.unwrap();
    let courier = io.clone();
    tokio::spawn(async move {
        sleep(5 * MINUTE).await;
        // Another patient's temperature does not complete P5's pair.
        courier
            .deliver(temperature("T-6", "P6", 36.0))
            .await
            .unwrap();
        sleep(5 * MINUTE).await;
        courier
            .deliver(temperature("T-5", "P5", 36.6))
            .await
            .unwrap();
    });
    let start = Instant::now();
    let output = workflow.run_with(json!({"ward": 3}), &io).await.unwrap();
    assert_eq!(start.elapsed(), 10 * MINUTE);
    assert_eq!(output, json!({"ward": 3, "celsius": 36.6, "bpm": 66}));
}

// ---------------------------------------------------------------------------------------------
// (6) An exclusive starting event task

/// `reply`: answers its arguments.
#[derive(Clone, Default)]
struct Replier {
    calls: Calls,
}

impl either::EvEitherFunctions for Replier {
    async fn reply(&self, args: Value) -> Result<Value, FunctionError> {
        self.calls.push(&args);
        Ok(args)
    }
}

#[tokio::test(start_paused = true)]
async fn any_listed_event_starts_one_instance_running_only_its_entry() {
    let replier = Replier::default();
    let (host, running) = Running::start(
        EvEitherWorkflow::new(replier.clone()),
        HostConfig::default(),
    );
    let start = Instant::now();
    let email = EvEitherEvent::Email
        .correlated("E-1", "c1", json!({"text": "hello"}))
        .unwrap();
    let sms = EvEitherEvent::Sms
        .correlated("S-2", "c2", json!({"text": "yo"}))
        .unwrap();
    running.send(email).await;
    running.send(sms).await;
    let (mut outcomes, produced, unmatched) = running.finish(host).await;
    assert_eq!(start.elapsed(), Duration::ZERO);
    outcomes.sort_by_key(|outcome| outcome.instance);
    let outputs: Vec<(u64, &Value)> = outcomes
        .iter()
        .map(|outcome| (outcome.instance.get(), output(outcome)))
        .collect();
    assert_eq!(
        outputs,
        [
            (
                1,
                &json!({"text": "hello", "reply": {"via": "email", "text": "hello"}})
            ),
            (
                2,
                &json!({"text": "yo", "reply": {"via": "sms", "text": "yo"}})
            ),
        ]
    );
    let mut acks: Vec<(Option<String>, Value)> = produced
        .iter()
        .map(|event| {
            assert_eq!(EvEitherEvent::of(event), Some(EvEitherEvent::Ack));
            (context_attribute(event, "customerid"), event_data(event))
        })
        .collect();
    acks.sort_by_key(|(customer, _)| customer.clone());
    assert_eq!(
        acks,
        [
            (
                Some(String::from("c1")),
                json!({"via": "email", "text": "hello"})
            ),
            (
                Some(String::from("c2")),
                json!({"via": "sms", "text": "yo"})
            ),
        ]
    );
    assert!(unmatched.is_empty(), "{unmatched:?}");
    assert_eq!(replier.calls.taken().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn standalone_exclusive_start_takes_the_oldest_event_and_ignores_its_timeout() {
    let replier = Replier::default();
    let workflow = EvEitherWorkflow::new(replier.clone());
    let io = Io::standalone();
    let courier = io.clone();
    tokio::spawn(async move {
        sleep(5 * MINUTE).await;
        let sms = EvEitherEvent::Sms
            .correlated("S-1", "c1", json!({"text": "first"}))
            .unwrap();
        let email = EvEitherEvent::Email
            .correlated("E-1", "c1", json!({"text": "second"}))
            .unwrap();
        courier.deliver(sms).await.unwrap();
        courier.deliver(email).await.unwrap();
    });
    let start = Instant::now();
    let output = workflow.run_with(json!({}), &io).await.unwrap();
    assert_eq!(
        start.elapsed(),
        5 * MINUTE,
        "PT1M is ignored on the start task"
    );
    assert_eq!(
        output,
        json!({"text": "first", "reply": {"via": "sms", "text": "first"}})
    );
    assert_eq!(
        replier.calls.taken(),
        [json!({"via": "sms", "text": "first"})]
    );
    let produced = io.take_produced();
    assert_eq!(produced.len(), 1);
    assert_eq!(
        context_attribute(&produced[0], "customerid").as_deref(),
        Some("c1")
    );
}

// ---------------------------------------------------------------------------------------------
// A non-start, non-exclusive event task with a timeout

/// `note`: answers its arguments.
#[derive(Clone, Default)]
struct Notes {
    calls: Calls,
}

impl collect::EvCollectFunctions for Notes {
    async fn note(&self, args: Value) -> Result<Value, FunctionError> {
        self.calls.push(&args);
        Ok(args)
    }
}

fn weight(id: &str, patient: &str, kg: u64) -> CloudEvent {
    EvCollectEvent::Weight
        .correlated(
            id,
            patient,
            json!({"reading": {"kg": kg}, "device": "scale-1"}),
        )
        .unwrap()
}

fn height(id: &str, patient: &str, cm: u64) -> CloudEvent {
    EvCollectEvent::Height
        .correlated(
            id,
            patient,
            json!({"reading": {"cm": cm}, "device": "ruler-1"}),
        )
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn all_events_in_any_order_then_each_entry_in_document_order() {
    let notes = Notes::default();
    let workflow = EvCollectWorkflow::new(notes.clone());
    let io = Io::standalone();
    io.deliver(height("H-1", "P1", 180)).await.unwrap();
    let courier = io.clone();
    tokio::spawn(async move {
        sleep(9 * MINUTE).await;
        courier.deliver(weight("W-1", "P1", 80)).await.unwrap();
    });
    let start = Instant::now();
    let output = workflow.run_with(json!({}), &io).await.unwrap();
    assert_eq!(start.elapsed(), 9 * MINUTE);
    assert_eq!(
        output,
        json!({
            "admitted": true,
            "kg": 80,
            "afterWeight": {"kg": 80, "cm": null},
            "cm": 180,
            "afterHeight": {"kg": 80, "cm": 180}
        })
    );
    assert_eq!(
        notes.calls.taken(),
        [json!({"kg": 80, "cm": null}), json!({"kg": 80, "cm": 180})]
    );
}

#[tokio::test(start_paused = true)]
async fn non_exclusive_wait_times_out_at_ten_minutes_merging_nothing() {
    let notes = Notes::default();
    let workflow = EvCollectWorkflow::new(notes.clone());
    let io = Io::standalone();
    // The weight binds P1; another patient's height does not complete the pair.
    io.deliver(weight("W-1", "P1", 80)).await.unwrap();
    io.deliver(height("H-2", "P2", 170)).await.unwrap();
    let start = Instant::now();
    let output = workflow.run_with(json!({}), &io).await.unwrap();
    assert_eq!(start.elapsed(), 10 * MINUTE);
    assert_eq!(output, json!({"admitted": true}));
    assert!(notes.calls.taken().is_empty());
}

#[tokio::test(start_paused = true)]
async fn hosted_wait_times_out_and_gives_back_the_event_it_held() {
    let notes = Notes::default();
    let (host, mut running) =
        Running::start(EvCollectWorkflow::new(notes.clone()), HostConfig::default());
    let start = Instant::now();
    assert_eq!(host.start_instance(json!({})).unwrap(), InstanceId::new(1));
    sleep(MINUTE).await;
    // Routed to the instance waiting for heights, which it binds to P1.
    running.send(height("H-1", "P1", 180)).await;
    let outcome = next(&mut running.outcomes).await;
    assert_eq!(start.elapsed(), 10 * MINUTE);
    assert_eq!(output(&outcome), &json!({"admitted": true}));
    let (outcomes, produced, unmatched) = running.finish(host).await;
    assert!(outcomes.is_empty());
    assert!(produced.is_empty());
    assert_eq!(
        reasons(&unmatched),
        [("H-1", "instance 1 ended before consuming it")]
    );
    assert!(notes.calls.taken().is_empty());
}

// ---------------------------------------------------------------------------------------------
// (7) Unmatched events

#[tokio::test(start_paused = true)]
async fn events_nobody_takes_come_back_with_their_reason() {
    let records = Records::default();
    let (host, running) = Running::start(
        PatientVitalsWorkflow::new(records.clone()),
        HostConfig::default(),
    );
    let unknown = EventBuilderV10::new()
        .id("U-1")
        .source("hospitalMonitorSystem")
        .ty("com.hospital.patient.temperature")
        .extension("patientId", "PID-1")
        .build()
        .unwrap();
    let wrong_source = EventBuilderV10::new()
        .id("U-2")
        .source("otherSystem")
        .ty("com.hospital.patient.heartRateMonitor")
        .extension("patientId", "PID-1")
        .build()
        .unwrap();
    let no_patient = PatientVitalsEvent::HeartRateReadingEvent
        .event("U-3", json!({"value": "80bpm"}))
        .unwrap();
    let no_patient_bp = PatientVitalsEvent::BloodPressureReadingEvent
        .event("U-4", json!({"value": "110/70"}))
        .unwrap();
    // Matches a definition, but nobody waits for it and it starts nothing.
    let stray_bp = blood_pressure("U-5", "PID-1", "110/70");
    let produced_kind = PatientVitalsEvent::VitalsRecordedEvent
        .correlated("U-6", "PID-1", json!({}))
        .unwrap();
    for event in [
        unknown,
        wrong_source,
        no_patient,
        no_patient_bp,
        stray_bp,
        produced_kind,
    ] {
        running.send(event).await;
    }
    let (outcomes, produced, unmatched) = running.finish(host).await;
    assert!(outcomes.is_empty(), "{outcomes:?}");
    assert!(produced.is_empty());
    assert_eq!(
        reasons(&unmatched),
        [
            (
                "U-1",
                "it matches no event definition of `patient-vitals` (its source is \
                 `hospitalMonitorSystem` and its type `com.hospital.patient.temperature`); the \
                 closest is `BloodPressureReadingEvent` (source `hospitalMonitorSystem`, type \
                 `com.hospital.patient.bloodPressureMonitor`)"
            ),
            (
                "U-2",
                "it matches no event definition of `patient-vitals` (its source is \
                 `otherSystem` and its type `com.hospital.patient.heartRateMonitor`); the \
                 closest is `HeartRateReadingEvent` (source `hospitalMonitorSystem`, type \
                 `com.hospital.patient.heartRateMonitor`)"
            ),
            (
                "U-3",
                "it lacks the correlation attribute `patientId` of event definition \
                 `HeartRateReadingEvent`"
            ),
            ("U-4", "it lacks the correlation attribute `patientId`"),
            ("U-5", NOBODY),
            ("U-6", NOBODY),
        ]
    );
    assert!(records.calls.taken().is_empty());
}

// ---------------------------------------------------------------------------------------------
// (8) Back-pressure

fn stray(id: &str) -> CloudEvent {
    EventBuilderV10::new()
        .id(id)
        .source("nowhere")
        .ty("nothing")
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_full_events_channel_makes_send_wait_and_drops_nothing() {
    let config = HostConfig {
        events_capacity: 1,
        ..HostConfig::default()
    };
    let (host, channels) = Host::new(PatientVitalsWorkflow::new(Records::default()), config);
    let HostChannels {
        events,
        mut unmatched,
        ..
    } = channels;
    // The router is not running yet: one event fills the channel.
    events.try_send(stray("1")).unwrap();
    let Err(TrySendError::Full(refused)) = events.try_send(stray("2")) else {
        panic!("the channel holds one event");
    };
    assert_eq!(refused.id(), "2", "try_send gives the event back");
    let sender = events.clone();
    let waiting = tokio::spawn(async move { sender.send(stray("2")).await.is_ok() });
    sleep(HOUR).await;
    assert!(
        !waiting.is_finished(),
        "send waits while the channel is full"
    );
    let router = tokio::spawn(host.run());
    assert!(waiting.await.unwrap());
    events.send(stray("3")).await.unwrap();
    drop(events);
    router.await.unwrap();
    let back = rest(&mut unmatched).await;
    assert_eq!(
        reasons(&back),
        [("1", NOWHERE), ("2", NOWHERE), ("3", NOWHERE)]
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_unmatched_channel_holds_up_routing_until_read() {
    let config = HostConfig {
        events_capacity: 1,
        unmatched_capacity: 1,
        ..HostConfig::default()
    };
    let (host, mut running) =
        Running::start(PatientVitalsWorkflow::new(Records::default()), config);
    running.send(stray("1")).await; // reported: fills `unmatched`
    running.send(stray("2")).await; // the router waits to report it
    running.send(stray("3")).await; // waits in `events`
    sleep(SECOND).await;
    let events = running.events.clone().unwrap();
    let Err(TrySendError::Full(_)) = events.try_send(stray("4")) else {
        panic!("nobody reads `unmatched`, so routing stopped and `events` is full");
    };
    let late = tokio::spawn(async move { events.send(stray("4")).await.is_ok() });
    let mut back = Vec::new();
    for _ in 0..4 {
        back.push(next(&mut running.unmatched).await);
    }
    assert!(late.await.unwrap());
    assert_eq!(
        ids(&back.iter().map(|u| u.event.clone()).collect::<Vec<_>>()),
        ["1", "2", "3", "4"]
    );
    let (outcomes, produced, unmatched) = running.finish(host).await;
    assert!(outcomes.is_empty() && produced.is_empty() && unmatched.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_full_produced_channel_makes_instances_wait() {
    let config = HostConfig {
        produced_capacity: 1,
        ..HostConfig::default()
    };
    let (host, mut running) =
        Running::start(PatientVitalsWorkflow::new(Records::default()), config);
    let start = Instant::now();
    for patient in ["A", "B"] {
        running
            .send(heart_rate(&format!("H-{patient}"), patient, "70bpm"))
            .await;
        running
            .send(blood_pressure(&format!("B-{patient}"), patient, "120/80"))
            .await;
    }
    let first = next(&mut running.outcomes).await;
    // The other instance is stuck producing its event until someone reads `produced`.
    assert!(
        timeout(HOUR, running.outcomes.recv()).await.is_err(),
        "no second outcome while `produced` is full"
    );
    assert_eq!(start.elapsed(), HOUR);
    let one = next(&mut running.produced).await;
    let second = next(&mut running.outcomes).await;
    assert_eq!(start.elapsed(), HOUR);
    let (outcomes, produced, unmatched) = running.finish(host).await;
    assert!(outcomes.is_empty() && unmatched.is_empty());
    let all: Vec<CloudEvent> = std::iter::once(one).chain(produced).collect();
    assert_eq!(all.len(), 2, "nothing dropped");
    let patients: BTreeSet<String> = vitals_by_patient(&all).into_keys().collect();
    assert_eq!(
        patients,
        BTreeSet::from([String::from("A"), String::from("B")])
    );
    let instances: BTreeSet<u64> = [first.instance.get(), second.instance.get()].into();
    assert_eq!(instances, BTreeSet::from([1, 2]));
}

#[tokio::test(start_paused = true)]
async fn a_full_inbox_holds_up_no_other_instance() {
    let records = Records::default();
    let config = HostConfig {
        inbox_capacity: 1,
        ..HostConfig::default()
    };
    let (host, mut running) = Running::start(PatientVitalsWorkflow::new(records.clone()), config);
    let start = Instant::now();
    running.send(heart_rate("H-1", "A", "70bpm")).await; // instance 1, bound to A
    sleep(SECOND).await; // it consumed H-1 and waits for A's blood pressure
    running.send(heart_rate("H-2", "A", "71bpm")).await; // fills instance 1's inbox
    running.send(heart_rate("H-3", "A", "72bpm")).await; // beyond it: kept, and counted
    running.send(heart_rate("H-4", "B", "60bpm")).await; // not held up: starts instance 2
    running.send(blood_pressure("B-1", "B", "110/70")).await; // which completes at once
    let first = next(&mut running.outcomes).await;
    assert_eq!(start.elapsed(), SECOND, "instance 2 waited for instance 1");
    assert_eq!(first.instance, InstanceId::new(2));
    assert_eq!(
        output(&first),
        &json!({"value": "110/70", "record": {"recorded": {"value": "110/70"}}})
    );
    // Instance 1 finds its event behind the two it does not want.
    running.send(blood_pressure("B-2", "A", "120/80")).await;
    let second = next(&mut running.outcomes).await;
    assert_eq!(start.elapsed(), SECOND);
    assert_eq!(second.instance, InstanceId::new(1));
    assert_eq!(
        output(&second),
        &json!({"value": "120/80", "record": {"recorded": {"value": "120/80"}}})
    );
    let (rest_outcomes, produced, unmatched) = running.finish(host).await;
    assert!(rest_outcomes.is_empty());
    assert_eq!(produced.len(), 2);
    assert_eq!(
        reasons(&unmatched),
        [
            ("H-2", "instance 1 ended before consuming it"),
            ("H-3", "instance 1 ended before consuming it"),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// (9) Ten thousand concurrent instances

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_concurrent_instances_each_complete_once_with_their_own_data() {
    const N: u64 = 10_000;
    let clock = std::time::Instant::now();
    let config = HostConfig {
        events_capacity: 4096,
        produced_capacity: 16,
        unmatched_capacity: 16,
        outcomes_capacity: 2 * N as usize,
        inbox_capacity: 4,
        ..HostConfig::default()
    };
    let (host, mut running) = Running::start(EvTenThousandWorkflow::new(NoFunctions), config);
    // Every ticket opens (an instance each), then they all close, in the reverse order.
    for ticket in 0..N {
        let opened = EvTenThousandEvent::Opened
            .correlated(
                &format!("O-{ticket}"),
                &format!("T{ticket}"),
                json!({"opened": ticket}),
            )
            .unwrap();
        running.send(opened).await;
    }
    // Nothing can end before its ticket closes: all of them are alive at once.
    assert!(running.outcomes.try_recv().is_err(), "no outcome yet");
    for ticket in (0..N).rev() {
        let closed = EvTenThousandEvent::Closed
            .correlated(
                &format!("C-{ticket}"),
                &format!("T{ticket}"),
                json!({"closed": ticket}),
            )
            .unwrap();
        running.send(closed).await;
    }
    let (outcomes, produced, unmatched) = running.finish(host).await;
    let elapsed = clock.elapsed();
    eprintln!("{N} instances: {elapsed:?}");
    assert!(produced.is_empty());
    assert!(unmatched.is_empty(), "{} unmatched", unmatched.len());
    assert_eq!(outcomes.len(), N as usize);
    let mut instances = BTreeSet::new();
    let mut tickets = BTreeSet::new();
    for outcome in &outcomes {
        assert!(
            instances.insert(outcome.instance),
            "one outcome per instance"
        );
        let data = output(outcome);
        let ticket = data["opened"].as_u64().expect("the opening data");
        assert_eq!(data, &json!({"opened": ticket, "closed": ticket}));
        // The router creates instances in the order of their opening events.
        assert_eq!(outcome.instance.get(), ticket + 1);
        assert!(tickets.insert(ticket), "ticket {ticket} completed twice");
    }
    assert_eq!(tickets, (0..N).collect::<BTreeSet<u64>>());
    assert_eq!(
        instances,
        (1..=N).map(InstanceId::new).collect::<BTreeSet<_>>()
    );
    assert!(
        elapsed < Duration::from_secs(30),
        "10,000 instances took {elapsed:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// (10) Typed events

#[test]
fn typed_events_recognise_and_build_events() {
    use PatientVitalsEvent::{
        BloodPressureReadingEvent, HeartRateReadingEvent, VitalsRecordedEvent,
    };
    assert_eq!(
        PatientVitalsEvent::ALL,
        [
            HeartRateReadingEvent,
            BloodPressureReadingEvent,
            VitalsRecordedEvent
        ]
    );
    let spec = VitalsRecordedEvent.spec();
    assert_eq!(
        (spec.name, spec.source, spec.event_type, spec.correlation),
        (
            "VitalsRecordedEvent",
            "patientVitalsWorkflow",
            "com.hospital.patient.vitalsRecorded",
            Some("patientId")
        )
    );
    // The draft's events are recognised by source and type.
    assert_eq!(
        PatientVitalsEvent::of(&draft_heart_rate()),
        Some(HeartRateReadingEvent)
    );
    assert_eq!(
        PatientVitalsEvent::of(&draft_blood_pressure()),
        Some(BloodPressureReadingEvent)
    );
    assert_eq!(PatientVitalsEvent::of(&stray("x")), None);
    assert_eq!(PatientVitalsEvent::of(&arrival("x")), None);
    assert_eq!(
        GreetingEvent::of(&arrival("x")),
        Some(GreetingEvent::CustomerArrivesEvent)
    );
    // `.correlated` puts the value in the correlation attribute; `.event` does not.
    let built = HeartRateReadingEvent
        .correlated("H-9", "PID-9", json!({"value": "60bpm"}))
        .unwrap();
    assert_eq!(built.id(), "H-9");
    assert_eq!(built.source(), "hospitalMonitorSystem");
    assert_eq!(built.ty(), "com.hospital.patient.heartRateMonitor");
    assert_eq!(
        context_attribute(&built, "patientId").as_deref(),
        Some("PID-9")
    );
    assert_eq!(event_data(&built), json!({"value": "60bpm"}));
    let plain = HeartRateReadingEvent.event("H-10", Value::Null).unwrap();
    assert_eq!(context_attribute(&plain, "patientId"), None);
    assert_eq!(plain.data(), None);
    // A definition without a correlation token cannot carry a value.
    let refused = GreetingEvent::CustomerArrivesEvent
        .correlated("c", "v", json!({}))
        .unwrap_err();
    assert_eq!(refused.name, "EventError");
}

#[tokio::test(start_paused = true)]
async fn typed_events_built_with_correlated_are_routed_and_produced_ones_recognised() {
    let (host, mut running) = Running::start(
        PatientVitalsWorkflow::new(Records::default()),
        HostConfig::default(),
    );
    running
        .send(
            PatientVitalsEvent::HeartRateReadingEvent
                .correlated("H", "PID-42", json!({"value": "64bpm"}))
                .unwrap(),
        )
        .await;
    running
        .send(
            PatientVitalsEvent::BloodPressureReadingEvent
                .correlated("B", "PID-42", json!({"value": "115/75"}))
                .unwrap(),
        )
        .await;
    let vitals = next(&mut running.produced).await;
    assert_eq!(
        PatientVitalsEvent::of(&vitals),
        Some(PatientVitalsEvent::VitalsRecordedEvent)
    );
    assert_eq!(
        PatientVitalsEvent::VitalsRecordedEvent
            .spec()
            .correlation_value(&vitals)
            .as_deref(),
        Some("PID-42")
    );
    assert_eq!(
        event_data(&vitals),
        json!({"recorded": {"value": "115/75"}})
    );
    assert_eq!(vitals.datacontenttype(), Some("application/json"));
    let (outcomes, produced, unmatched) = running.finish(host).await;
    assert_eq!(outcomes.len(), 1);
    assert!(produced.is_empty() && unmatched.is_empty());
}

/// The event enum says which definitions a workflow consumes and which it produces.
#[test]
fn event_enums_list_what_the_workflow_consumes_and_produces() {
    use approval::ApprovalEvent;
    use patient::PatientVitalsEvent;
    assert_eq!(
        ApprovalEvent::CONSUMED,
        &[
            ApprovalEvent::Decision,
            ApprovalEvent::Approved,
            ApprovalEvent::Rejected
        ]
    );
    assert_eq!(ApprovalEvent::PRODUCED, &[ApprovalEvent::Done]);
    assert_eq!(
        PatientVitalsEvent::CONSUMED,
        &[
            PatientVitalsEvent::HeartRateReadingEvent,
            PatientVitalsEvent::BloodPressureReadingEvent
        ]
    );
    assert_eq!(
        PatientVitalsEvent::PRODUCED,
        &[PatientVitalsEvent::VitalsRecordedEvent]
    );
}

// ---------------------------------------------------------------------------------------------
// User code never runs on the router's task

/// The tasks user code ran on: the custom condition, the function's synchronous part (run when
/// it makes its future) and the future itself.
#[derive(Clone, Default)]
struct TaskIds {
    seen: Arc<Mutex<Vec<RanOn>>>,
}

/// What user code ran, and on which task.
type RanOn = (&'static str, Option<tokio::task::Id>);

impl TaskIds {
    fn record(&self, what: &'static str) {
        self.seen
            .lock()
            .unwrap()
            .push((what, tokio::task::try_id()));
    }
}

impl inline::EvInlineFunctions for TaskIds {
    fn custom_condition(&self, _: swf_runtime::CustomCondition<'_>) -> bool {
        self.record("condition");
        false
    }

    // Not an `async fn`: the code before the future is user code too.
    #[allow(
        clippy::manual_async_fn,
        reason = "the synchronous part is what is tested"
    )]
    fn answer(
        &self,
        _: Value,
    ) -> impl std::future::Future<Output = Result<Value, FunctionError>> + Send {
        self.record("function");
        let ids = self.clone();
        async move {
            ids.record("future");
            Ok(json!(42))
        }
    }
}

#[tokio::test(start_paused = true)]
async fn the_router_steps_instances_inline_but_never_runs_user_code() {
    let ids = TaskIds::default();
    let (host, running) = Running::start(
        inline::EvInlineWorkflow::new(ids.clone()),
        HostConfig::default(),
    );
    let router = running.router.id();
    // Each event wakes the instance on the router, right before user code: the function's,
    // then (after the second event) the condition's.
    let ping = inline::EvInlineEvent::Ping
        .event("ping", json!({"n": 1}))
        .unwrap();
    running.send(ping).await;
    sleep(SECOND).await;
    let pong = inline::EvInlineEvent::Pong
        .event("pong", json!({}))
        .unwrap();
    running.send(pong).await;
    let (outcomes, produced, unmatched) = running.finish(host).await;
    assert_eq!(outcomes.len(), 1);
    assert_eq!(output(&outcomes[0]), &json!({"n": 1, "answer": 42}));
    assert!(produced.is_empty() && unmatched.is_empty(), "{unmatched:?}");
    let seen = ids.seen.lock().unwrap().clone();
    let what: Vec<&str> = seen.iter().map(|(what, _)| *what).collect();
    assert_eq!(what, ["function", "future", "condition"]);
    for (what, task) in seen {
        assert!(task.is_some(), "{what} ran outside any task");
        assert_ne!(task, Some(router), "{what} ran on the router's task");
    }
}
