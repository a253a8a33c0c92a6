//! Waiting for and producing events on a standalone [`Io`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use cloudevents::{AttributesReader, Event, EventBuilder, EventBuilderV10};
use jiff::Timestamp;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep};

use super::{EVENT_ERROR, EventSpec, Io, event_data};
use crate::clock::ManualClock;
use crate::error::ErrorObject;
use crate::progress::{Wait, deadline, passed};

const HEART_RATE: usize = 0;
const BLOOD_PRESSURE: usize = 1;
const ALARM: usize = 2;
const REPORT: usize = 3;

/// The draft's correlation example, an uncorrelated alarm and a produced report.
const EVENTS: &[EventSpec] = &[
    EventSpec {
        name: "HeartRateReadingEvent",
        source: "hospitalMonitorSystem",
        event_type: "com.hospital.patient.heartRateMonitor",
        correlation: Some("patientId"),
    },
    EventSpec {
        name: "BloodPressureReadingEvent",
        source: "hospitalMonitorSystem",
        event_type: "com.hospital.patient.bloodPressureMonitor",
        correlation: Some("patientId"),
    },
    EventSpec {
        name: "AlarmEvent",
        source: "hospitalMonitorSystem",
        event_type: "com.hospital.alarm",
        correlation: None,
    },
    EventSpec {
        name: "ReportEvent",
        source: "workflows/patients",
        event_type: "com.hospital.report",
        correlation: Some("patientId"),
    },
];

const SEC: Duration = Duration::from_secs(1);

fn spec(index: usize) -> &'static EventSpec {
    EVENTS.get(index).unwrap_or(&EVENTS[0])
}

/// An event of definition `index` with id `id`, for `patient` if given, with `data`.
fn event(index: usize, id: &str, patient: Option<&str>, data: Value) -> Event {
    let spec = spec(index);
    let builder = EventBuilderV10::new()
        .id(id)
        .source(spec.source)
        .ty(spec.event_type)
        .data("application/json", data);
    let builder = match patient {
        Some(patient) => builder.extension("patientId", patient),
        None => builder,
    };
    builder.build().unwrap_or_default()
}

fn reading(index: usize, id: &str, patient: &str) -> Event {
    event(index, id, Some(patient), json!({"value": id}))
}

/// Delivers `event` to `io` after `after`, from another task.
fn deliver_later(io: &Io, after: Duration, event: Event) {
    let io = io.clone();
    tokio::spawn(async move {
        sleep(after).await;
        assert!(io.deliver(event).await.is_ok());
    });
}

/// The ids of the events left in `io`'s inbox, in order.
fn inbox_ids(io: &Io) -> Vec<String> {
    io.inner
        .inbox()
        .lock()
        .events
        .iter()
        .map(|queued| queued.event.id().to_owned())
        .collect()
}

/// The blocking waits a driver makes of the non-blocking takes (as `run_to_end` does for a
/// step): take; else wait until an event arrives or the deadline comes, and try again.
trait Waits {
    async fn wait_any(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        timeout: Option<Duration>,
    ) -> Result<Option<(usize, Event)>, ErrorObject>;

    async fn wait_all(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        timeout: Option<Duration>,
    ) -> Result<Option<Vec<(usize, Event)>>, ErrorObject>;

    async fn wait_until(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        holds: &(dyn Fn(&[bool]) -> bool + Sync),
        timeout: Option<Duration>,
    ) -> Result<Option<Vec<(usize, Event)>>, ErrorObject>;
}

impl Waits for Io {
    async fn wait_any(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        timeout: Option<Duration>,
    ) -> Result<Option<(usize, Event)>, ErrorObject> {
        waiting(self, events, wanted, timeout, || {
            self.take_any(events, wanted, None)
                .map(|taken| taken.map(|(index, event)| (index, *event)))
        })
        .await
    }

    async fn wait_all(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        timeout: Option<Duration>,
    ) -> Result<Option<Vec<(usize, Event)>>, ErrorObject> {
        waiting(self, events, wanted, timeout, || {
            self.take_all(events, wanted, None)
        })
        .await
    }

    async fn wait_until(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        holds: &(dyn Fn(&[bool]) -> bool + Sync),
        timeout: Option<Duration>,
    ) -> Result<Option<Vec<(usize, Event)>>, ErrorObject> {
        waiting(self, events, wanted, timeout, || {
            self.take_until(events, wanted, holds, None)
        })
        .await
    }
}

async fn waiting<T>(
    io: &Io,
    events: &'static [EventSpec],
    wanted: &[usize],
    timeout: Option<Duration>,
    take: impl Fn() -> Result<Option<T>, ErrorObject>,
) -> Result<Option<T>, ErrorObject> {
    let until = timeout.map(|timeout| deadline(io, timeout));
    let specs: Vec<&'static EventSpec> = wanted.iter().filter_map(|i| events.get(*i)).collect();
    let wait = Wait::new(until, &specs);
    let _listening = io.listen(events, &wait);
    loop {
        let seen = io.arrivals();
        if let Some(found) = take()? {
            return Ok(Some(found));
        }
        if passed(io, until) {
            return Ok(None);
        }
        io.wait_for(&wait, seen).await;
    }
}

fn found_id(found: &Option<(usize, Event)>) -> Option<(usize, &str)> {
    found.as_ref().map(|(index, event)| (*index, event.id()))
}

#[tokio::test(start_paused = true)]
async fn wait_any_times_out_exactly_at_the_timeout() {
    let io = Io::standalone();
    assert!(
        io.deliver(event(ALARM, "unrelated", None, Value::Null))
            .await
            .is_ok()
    );
    let started = Instant::now();
    let found = io
        .wait_any(EVENTS, &[HEART_RATE, BLOOD_PRESSURE], Some(30 * SEC))
        .await;
    assert_eq!(started.elapsed(), 30 * SEC);
    assert_eq!(found, Ok(None));
    assert_eq!(inbox_ids(&io), ["unrelated"], "what it did not take stays");
}

#[tokio::test(start_paused = true)]
async fn wait_any_takes_the_oldest_suitable_event_when_it_arrives() {
    let io = Io::standalone();
    let started = Instant::now();
    deliver_later(&io, 10 * SEC, event(ALARM, "alarm-1", None, json!(1)));
    let found = io.wait_any(EVENTS, &[ALARM], Some(30 * SEC)).await;
    assert_eq!(started.elapsed(), 10 * SEC);
    assert_eq!(found.as_ref().map(found_id), Ok(Some((ALARM, "alarm-1"))));

    for id in ["hr-1", "alarm-2", "hr-2"] {
        let index = if id.starts_with("hr") {
            HEART_RATE
        } else {
            ALARM
        };
        assert!(io.deliver(reading(index, id, "PID-1")).await.is_ok());
    }
    let found = io.wait_any(EVENTS, &[ALARM], None).await;
    assert_eq!(found.as_ref().map(found_id), Ok(Some((ALARM, "alarm-2"))));
    let found = io.wait_any(EVENTS, &[ALARM, HEART_RATE], None).await;
    assert_eq!(found.as_ref().map(found_id), Ok(Some((HEART_RATE, "hr-1"))));
    assert_eq!(
        started.elapsed(),
        10 * SEC,
        "events already there are taken at once"
    );
    assert_eq!(inbox_ids(&io), ["hr-2"]);
}

#[tokio::test(start_paused = true)]
async fn another_patients_events_never_reach_a_bound_instance() {
    let bound = BTreeMap::from([(String::from("patientId"), String::from("PID-1"))]);
    let io = Io::builder().correlation(bound.clone()).build();
    assert!(
        io.deliver(reading(HEART_RATE, "other", "PID-2"))
            .await
            .is_ok()
    );
    assert!(
        io.deliver(event(HEART_RATE, "anonymous", None, Value::Null))
            .await
            .is_ok()
    );
    assert!(
        io.deliver(reading(HEART_RATE, "mine", "PID-1"))
            .await
            .is_ok()
    );
    let found = io.wait_any(EVENTS, &[HEART_RATE], None).await;
    assert_eq!(found.as_ref().map(found_id), Ok(Some((HEART_RATE, "mine"))));
    let found = io.wait_any(EVENTS, &[HEART_RATE], Some(SEC)).await;
    assert_eq!(found, Ok(None));
    assert_eq!(inbox_ids(&io), ["other", "anonymous"]);
    assert_eq!(io.correlation(), bound);
}

#[tokio::test(start_paused = true)]
async fn the_first_correlated_event_binds_the_instance() {
    let io = Io::standalone();
    assert!(
        io.deliver(reading(HEART_RATE, "first", "PID-7"))
            .await
            .is_ok()
    );
    assert!(
        io.deliver(reading(HEART_RATE, "second", "PID-8"))
            .await
            .is_ok()
    );
    let found = io.wait_any(EVENTS, &[HEART_RATE], None).await;
    assert_eq!(
        found.as_ref().map(found_id),
        Ok(Some((HEART_RATE, "first")))
    );
    assert_eq!(
        io.correlation().get("patientId").map(String::as_str),
        Some("PID-7")
    );
    assert_eq!(
        io.wait_any(EVENTS, &[HEART_RATE], Some(SEC)).await,
        Ok(None)
    );
}

#[tokio::test(start_paused = true)]
async fn the_drafts_patient_example_pairs_readings_of_one_patient() {
    let io = Io::standalone();
    deliver_later(&io, SEC, reading(HEART_RATE, "A234-1234-1234", "PID-12345"));
    deliver_later(&io, 2 * SEC, reading(BLOOD_PRESSURE, "B-other", "PID-999"));
    deliver_later(
        &io,
        3 * SEC,
        reading(BLOOD_PRESSURE, "B234-1234-1234", "PID-12345"),
    );
    let started = Instant::now();
    let Ok(Some(both)) = io
        .wait_all(EVENTS, &[HEART_RATE, BLOOD_PRESSURE], Some(60 * SEC))
        .await
    else {
        panic!("both readings of PID-12345 arrive in time");
    };
    assert_eq!(started.elapsed(), 3 * SEC);
    let ids: Vec<(usize, &str)> = both.iter().map(|(i, e)| (*i, e.id())).collect();
    assert_eq!(
        ids,
        [
            (HEART_RATE, "A234-1234-1234"),
            (BLOOD_PRESSURE, "B234-1234-1234")
        ]
    );
    let data: Vec<Value> = both.iter().map(|(_, e)| event_data(e)).collect();
    assert_eq!(
        data,
        [
            json!({"value": "A234-1234-1234"}),
            json!({"value": "B234-1234-1234"})
        ]
    );
    assert_eq!(inbox_ids(&io), ["B-other"]);
    assert_eq!(
        io.correlation().get("patientId").map(String::as_str),
        Some("PID-12345")
    );
}

/// An unbound instance holding a heart rate of patient 1, then both readings of patient 2,
/// takes patient 2's pair: binding the first value met (patient 1) left no pair complete, and
/// the wait timed out with a complete pair in its inbox.
#[tokio::test(start_paused = true)]
async fn wait_all_takes_the_complete_set_of_any_value() {
    let io = Io::standalone();
    for (index, id, patient) in [
        (HEART_RATE, "hr-1", "PID-1"),
        (HEART_RATE, "hr-2", "PID-2"),
        (BLOOD_PRESSURE, "bp-2", "PID-2"),
    ] {
        assert!(io.deliver(reading(index, id, patient)).await.is_ok());
    }
    let Ok(Some(both)) = io
        .wait_all(EVENTS, &[HEART_RATE, BLOOD_PRESSURE], Some(SEC))
        .await
    else {
        panic!("patient 2's pair is complete");
    };
    let ids: Vec<&str> = both.iter().map(|(_, e)| e.id()).collect();
    assert_eq!(ids, ["hr-2", "bp-2"]);
    assert_eq!(inbox_ids(&io), ["hr-1"]);
    assert_eq!(
        io.correlation().get("patientId").map(String::as_str),
        Some("PID-2")
    );
}

#[tokio::test(start_paused = true)]
async fn wait_all_accepts_any_arrival_order() {
    let io = Io::standalone();
    deliver_later(&io, 5 * SEC, event(ALARM, "alarm", None, Value::Null));
    deliver_later(&io, 8 * SEC, reading(BLOOD_PRESSURE, "bp", "PID-1"));
    deliver_later(&io, 9 * SEC, reading(HEART_RATE, "hr", "PID-1"));
    let started = Instant::now();
    let found = io
        .wait_all(EVENTS, &[HEART_RATE, BLOOD_PRESSURE, ALARM], None)
        .await;
    assert_eq!(started.elapsed(), 9 * SEC);
    let ids = found.map(|found| {
        found
            .unwrap_or_default()
            .iter()
            .map(|(i, e)| (*i, e.id().to_owned()))
            .collect::<Vec<_>>()
    });
    assert_eq!(
        ids,
        Ok(vec![
            (HEART_RATE, String::from("hr")),
            (BLOOD_PRESSURE, String::from("bp")),
            (ALARM, String::from("alarm")),
        ])
    );
    assert_eq!(io.wait_all(EVENTS, &[], None).await, Ok(Some(Vec::new())));
}

#[tokio::test(start_paused = true)]
async fn wait_until_ends_as_soon_as_the_condition_over_arrivals_holds() {
    let io = Io::standalone();
    deliver_later(&io, 2 * SEC, reading(BLOOD_PRESSURE, "bp", "PID-1"));
    deliver_later(&io, 5 * SEC, event(ALARM, "alarm", None, Value::Null));
    deliver_later(&io, 9 * SEC, reading(HEART_RATE, "hr", "PID-1"));
    let started = Instant::now();
    // (heart rate or blood pressure) and alarm
    let holds = |arrived: &[bool]| (arrived[0] || arrived[1]) && arrived[2];
    let found = io
        .wait_until(EVENTS, &[HEART_RATE, BLOOD_PRESSURE, ALARM], &holds, None)
        .await;
    assert_eq!(started.elapsed(), 5 * SEC);
    let ids = found.map(|found| {
        found
            .unwrap_or_default()
            .iter()
            .map(|(i, e)| (*i, e.id().to_owned()))
            .collect::<Vec<_>>()
    });
    assert_eq!(
        ids,
        Ok(vec![
            (BLOOD_PRESSURE, String::from("bp")),
            (ALARM, String::from("alarm")),
        ])
    );
    // The heart rate reading was not needed: it stays for a later wait.
    assert_eq!(
        io.wait_any(EVENTS, &[HEART_RATE], Some(10 * SEC))
            .await
            .map(|found| found_id(&found).map(|(i, id)| (i, id.to_owned()))),
        Ok(Some((HEART_RATE, String::from("hr"))))
    );
}

#[tokio::test(start_paused = true)]
async fn a_condition_no_arrival_can_satisfy_is_an_error_not_a_wait_forever() {
    let io = Io::standalone();
    let never = |_: &[bool]| false;
    let found = io.wait_until(EVENTS, &[ALARM], &never, None).await;
    assert!(found.is_err_and(|e| e.name == "EventError"));
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_wait_all_puts_what_it_took_back_in_place() {
    let io = Io::standalone();
    assert!(
        io.deliver(event(ALARM, "before", None, Value::Null))
            .await
            .is_ok()
    );
    assert!(io.deliver(reading(HEART_RATE, "hr", "PID-1")).await.is_ok());
    deliver_later(&io, 10 * SEC, event(ALARM, "after", None, Value::Null));
    deliver_later(&io, 61 * SEC, reading(BLOOD_PRESSURE, "late", "PID-1"));
    let started = Instant::now();
    let found = io
        .wait_all(EVENTS, &[HEART_RATE, BLOOD_PRESSURE], Some(60 * SEC))
        .await;
    assert_eq!(started.elapsed(), 60 * SEC);
    assert_eq!(found, Ok(None));
    assert_eq!(inbox_ids(&io), ["before", "hr", "after"]);
    // A wait that took nothing bound nothing: the reading binds whoever takes it.
    assert_eq!(io.correlation().get("patientId"), None);
    let found = io.wait_any(EVENTS, &[HEART_RATE], None).await;
    assert_eq!(found.as_ref().map(found_id), Ok(Some((HEART_RATE, "hr"))));
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_wait_all_puts_what_it_took_back() {
    let io = Io::standalone();
    assert!(io.deliver(reading(HEART_RATE, "hr", "PID-1")).await.is_ok());
    let cancelled = tokio::time::timeout(
        5 * SEC,
        io.wait_all(EVENTS, &[HEART_RATE, BLOOD_PRESSURE], None),
    )
    .await;
    assert!(cancelled.is_err());
    assert_eq!(inbox_ids(&io), ["hr"]);
}

#[tokio::test(start_paused = true)]
async fn concurrent_waits_of_one_instance_each_get_their_event() {
    // Two parallel branches of one instance, each waiting for its own event.
    let io = Io::standalone();
    deliver_later(&io, 2 * SEC, event(ALARM, "alarm", None, Value::Null));
    deliver_later(&io, 4 * SEC, reading(HEART_RATE, "hr", "PID-1"));
    let started = Instant::now();
    let (alarm, heart) = tokio::join!(
        async {
            let found = io.wait_any(EVENTS, &[ALARM], None).await;
            (found, started.elapsed())
        },
        async {
            let found = io.wait_any(EVENTS, &[HEART_RATE], None).await;
            (found, started.elapsed())
        },
    );
    assert_eq!(alarm.0.as_ref().map(found_id), Ok(Some((ALARM, "alarm"))));
    assert_eq!(alarm.1, 2 * SEC);
    assert_eq!(heart.0.as_ref().map(found_id), Ok(Some((HEART_RATE, "hr"))));
    assert_eq!(heart.1, 4 * SEC);
}

#[tokio::test(start_paused = true)]
async fn waits_naming_no_definition_are_errors() {
    let io = Io::standalone();
    let Err(error) = io.wait_any(EVENTS, &[9], None).await else {
        panic!("definition 9 does not exist");
    };
    assert_eq!(error.name, EVENT_ERROR);
    assert_eq!(
        error.message,
        "a wait names event definition #9, but the workflow has 4"
    );
    assert!(io.wait_all(EVENTS, &[0, 9], None).await.is_err());
    assert!(io.wait_any(EVENTS, &[], None).await.is_err());
}

#[tokio::test(start_paused = true)]
async fn produced_events_are_cloudevents_carrying_the_correlation() {
    let now: Timestamp = "2026-01-02T03:04:05Z"
        .parse()
        .unwrap_or(Timestamp::UNIX_EPOCH);
    let io = Io::builder()
        .clock(Arc::new(ManualClock::new(now)))
        .correlation(BTreeMap::from([(
            String::from("patientId"),
            String::from("PID-1"),
        )]))
        .build();
    assert_eq!(io.produce(spec(REPORT), json!({"bpm": 80})).await, Ok(()));
    assert_eq!(io.produce(spec(ALARM), Value::Null).await, Ok(()));
    let produced = io.take_produced();
    assert!(io.take_produced().is_empty());
    let [report, alarm] = produced.as_slice() else {
        panic!("two events were produced");
    };
    let prefix = now.as_nanosecond();
    assert_eq!(report.id(), format!("{prefix}-0-0-1"));
    assert_eq!(report.source(), "workflows/patients");
    assert_eq!(report.ty(), "com.hospital.report");
    assert_eq!(
        report.time().map(ToString::to_string).as_deref(),
        Some("2026-01-02 03:04:05 UTC")
    );
    assert_eq!(report.datacontenttype(), Some("application/json"));
    assert_eq!(event_data(report), json!({"bpm": 80}));
    assert_eq!(
        spec(REPORT).correlation_value(report).as_deref(),
        Some("PID-1")
    );
    assert_eq!(alarm.id(), format!("{prefix}-0-0-2"));
    assert_eq!(alarm.data(), None);
    assert_eq!(
        alarm.iter_extensions().count(),
        0,
        "its definition has no token"
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_outbox_makes_produce_wait_and_nothing_is_dropped() {
    let (outbox, mut produced) = mpsc::channel(1);
    let io = Io::builder().outbox(outbox).build();
    let started = Instant::now();
    let producer = tokio::spawn({
        let io = io.clone();
        async move {
            let mut done = Vec::new();
            for n in 0..3 {
                let sent = io.produce(spec(ALARM), json!(n)).await;
                done.push((sent, started.elapsed()));
            }
            done
        }
    });
    let mut received = Vec::new();
    for _ in 0..3 {
        sleep(5 * SEC).await;
        if let Some(event) = produced.recv().await {
            received.push(event_data(&event));
        }
    }
    let done = producer.await.unwrap_or_default();
    assert_eq!(
        done,
        [
            (Ok(()), Duration::ZERO),
            (Ok(()), 5 * SEC),
            (Ok(()), 10 * SEC)
        ]
    );
    assert_eq!(received, [json!(0), json!(1), json!(2)]);
    assert!(io.take_produced().is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_event_that_cannot_be_built_is_an_error() {
    const NO_SOURCE: EventSpec = EventSpec {
        name: "Broken",
        source: "",
        event_type: "t",
        correlation: None,
    };
    let Err(error) = Io::standalone().produce(&NO_SOURCE, Value::Null).await else {
        panic!("an empty source is invalid");
    };
    assert_eq!(error.name, EVENT_ERROR);
    assert!(error.message.starts_with("cannot build event `Broken`: "));
}

#[test]
fn io_and_its_futures_can_cross_threads() {
    // Generated machines run on multi-threaded runtimes and hold these futures across awaits.
    fn assert_send<T: Send>(_: &T) {}
    fn assert_shared<T: Send + Sync + Clone>() {}
    assert_shared::<Io>();
    let io = Io::standalone();
    assert_send(&io.wait_any(EVENTS, &[ALARM], None));
    assert_send(&io.wait_all(EVENTS, &[ALARM], None));
    assert_send(&io.produce(spec(ALARM), Value::Null));
    assert_send(&io.deliver(Event::default()));
}

#[tokio::test(start_paused = true)]
async fn a_subject_token_is_carried_as_the_subject() {
    const BY_SUBJECT: EventSpec = EventSpec {
        name: "Done",
        source: "workflows/patients",
        event_type: "done",
        correlation: Some("subject"),
    };
    let io = Io::builder()
        .correlation(BTreeMap::from([(
            String::from("subject"),
            String::from("PID-3"),
        )]))
        .build();
    assert_eq!(io.produce(&BY_SUBJECT, json!(1)).await, Ok(()));
    let produced = io.take_produced();
    let subjects: Vec<Option<&str>> = produced.iter().map(AttributesReader::subject).collect();
    assert_eq!(subjects, [Some("PID-3")]);
    assert_eq!(
        produced
            .iter()
            .map(|e| e.iter_extensions().count())
            .sum::<usize>(),
        0
    );
}

/// A detached sub-flow's `Io` produces where its parent's does, with the parent's correlation,
/// but never takes the parent's events.
#[tokio::test(start_paused = true)]
async fn a_detached_io_shares_the_outbox_but_not_the_inbox() {
    let parent = Io::standalone();
    parent
        .deliver(reading(HEART_RATE, "h1", "PID-1"))
        .await
        .expect("delivered");
    let taken = parent
        .wait_any(EVENTS, &[HEART_RATE], Some(SEC))
        .await
        .expect("waits");
    assert!(taken.is_some());
    parent
        .deliver(reading(HEART_RATE, "h2", "PID-1"))
        .await
        .expect("delivered");

    let child = parent.detached();
    assert_eq!(child.correlation(), parent.correlation());
    let waited = child
        .wait_any(EVENTS, &[HEART_RATE], Some(SEC))
        .await
        .expect("waits");
    assert!(
        waited.is_none(),
        "the child must not take the parent's event"
    );
    child
        .produce(spec(REPORT), serde_json::json!({"from": "child"}))
        .await
        .expect("produces");
    let produced = parent.take_produced();
    assert_eq!(produced.len(), 1);
    assert_eq!(
        spec(REPORT).correlation_value(&produced[0]).as_deref(),
        Some("PID-1")
    );
    let left = parent
        .wait_any(EVENTS, &[HEART_RATE], Some(SEC))
        .await
        .expect("waits");
    assert!(left.is_some(), "the parent still has its second reading");
}

/// A plain run's `Io` (what the generated `run`, `start` and `step` of a workflow without
/// events make) has no inbox until a wait needs one: reading its arrivals, learning its
/// workflow's definitions and its correlation make none, and a wait still works (issue 10).
#[tokio::test(start_paused = true)]
async fn a_plain_runs_inbox_is_made_only_when_a_wait_needs_it() {
    let io = super::plain_run_io();
    assert!(io.inner.made_inbox().is_none());
    assert_eq!(io.arrivals(), 0);
    assert!(io.learn_events("plain", &[]).is_ok());
    assert!(io.correlation().is_empty());
    assert!(io.inner.made_inbox().is_none(), "made before any wait");
    let started = Instant::now();
    let wait = Wait {
        until: Some(deadline(&io, Duration::from_millis(20))),
        events: Vec::new(),
    };
    assert!(io.wait_for(&wait, 0).await, "the deadline comes");
    assert!(started.elapsed() >= Duration::from_millis(20));
    assert!(io.inner.made_inbox().is_some(), "made by the wait");
    assert_eq!(io.arrivals(), 0);
    // Any other `Io` has its inbox from the start: events may be delivered before its run.
    assert!(Io::standalone().inner.made_inbox().is_some());
}

/// A stored event that arrived at or after a wait's deadline is not taken by that wait (it
/// had ended), by any of the takes; a wait with a later deadline, or none, takes it.
#[test]
fn an_event_that_arrived_after_the_deadline_is_left_in_the_inbox() {
    let arrived = Timestamp::UNIX_EPOCH + jiff::SignedDuration::from_hours(2);
    let reading = event(HEART_RATE, "hr", Some("p1"), json!({"bpm": 80}));
    let stored = || {
        Io::durable(
            String::from("w-1"),
            1,
            vec![(0, arrived, reading.clone())],
            BTreeMap::new(),
            Arc::new(ManualClock::new(arrived)),
            Timestamp::UNIX_EPOCH,
        )
    };
    let before = Some(arrived - jiff::SignedDuration::from_hours(1));
    let after = Some(arrived + jiff::SignedDuration::from_secs(1));
    for until in [before, Some(arrived)] {
        let io = stored();
        assert!(matches!(
            io.take_any(EVENTS, &[HEART_RATE], until),
            Ok(None)
        ));
        assert!(matches!(
            io.take_all(EVENTS, &[HEART_RATE], until),
            Ok(None)
        ));
        assert_eq!(io.inner.inbox().lock().events.len(), 1, "left in the inbox");
    }
    for until in [after, None] {
        let taken = stored().take_any(EVENTS, &[HEART_RATE], until);
        assert!(matches!(taken, Ok(Some((HEART_RATE, _)))), "{until:?}");
        let taken = stored().take_all(EVENTS, &[HEART_RATE], until);
        assert!(matches!(taken, Ok(Some(_))), "{until:?}");
    }
}
