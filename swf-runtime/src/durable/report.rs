//! What a durable host tells its user: how instances ended, which events nobody takes, and
//! what went wrong; and where produced events go.

use std::future::Future;

use cloudevents::Event;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::error::WorkflowError;
use crate::host::InstanceId;
use crate::store::{Purged, Status, StoreError};

/// How an instance ended, as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// It completed (an end of kind `default`, `event` or `terminate`) with this output.
    Completed(Value),
    /// It failed with this error, which keeps the data it had.
    /// [`Store::redrive`](crate::store::Store::redrive) resumes it from its last committed
    /// state.
    Failed(WorkflowError),
    /// An operator cancelled it, for this reason.
    Cancelled(String),
}

impl Ended {
    /// What a stored instance's status and outcome say, when it has ended.
    pub(super) fn of(status: Status, outcome: Option<&Value>) -> Option<Ended> {
        let outcome = outcome.cloned().unwrap_or(Value::Null);
        match status {
            Status::Completed => Some(Ended::Completed(outcome)),
            Status::Failed => Some(match serde_json::from_value(outcome.clone()) {
                Ok(error) => Ended::Failed(error),
                Err(_) => Ended::Failed(WorkflowError::new(
                    "",
                    "",
                    crate::error::ErrorObject::new(
                        super::DURABLE_ERROR,
                        format!("the stored error cannot be read: {outcome}"),
                    ),
                    Value::Null,
                )),
            }),
            Status::Cancelled => Some(Ended::Cancelled(
                outcome
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            )),
            Status::Runnable | Status::Waiting => None,
        }
    }

    /// The output of a completed instance, else `None`.
    pub fn output(&self) -> Option<&Value> {
        match self {
            Ended::Completed(output) => Some(output),
            _ => None,
        }
    }
}

/// Something a durable host did or met, for its user to see (see
/// [`DurableHost::reports`](super::DurableHost::reports)). The store stays the record of
/// truth: reports of a user who reads too slowly are dropped, never the instances' data.
#[derive(Debug, Clone, PartialEq)]
pub enum Report {
    /// An instance this worker stepped ended.
    Ended {
        /// The instance.
        instance: InstanceId,
        /// How.
        ended: Ended,
    },
    /// An event that no instance will ever take: it matched nothing, was left in the inbox of
    /// an instance that completed, or belonged to a start group that timed out. (A failed
    /// instance keeps its inbox for a redrive: nothing of it is reported.)
    Unmatched {
        /// The event.
        event: Box<Event>,
        /// Why nobody takes it.
        reason: String,
    },
    /// A stored instance this worker cannot resume: its position does not exist in the
    /// definition this worker runs (the workflow changed). It is left as it was, for a worker
    /// that runs its definition.
    Refused {
        /// The instance.
        instance: InstanceId,
        /// What does not fit, and what to do.
        reason: String,
    },
    /// A step of this worker could not be committed: another worker took the instance over
    /// (this worker's lease had expired) or an operator cancelled it. The step is dropped.
    Conflict {
        /// The instance.
        instance: InstanceId,
        /// What the store found instead.
        found: String,
    },
    /// The store failed; the host goes on (a step that was not committed runs again later).
    StoreFailed {
        /// What the host was doing.
        during: &'static str,
        /// The store's error.
        error: StoreError,
    },
    /// Stepping an instance panicked (in code outside the workflow's functions); its lease
    /// expires and a worker steps it again.
    StepPanicked {
        /// The instance.
        instance: InstanceId,
        /// The panic's message.
        message: String,
    },
    /// This worker removed instances that ended, and events no instance holds, longer than the
    /// retention ago ([`DurableConfig::retention`](super::DurableConfig::retention)).
    Purged {
        /// How many of each, in one sweep.
        purged: Purged,
    },
    /// The sink refused a produced event; it stays in the outbox and is sent again later.
    SinkFailed {
        /// The event's sequence number in the outbox.
        seq: u64,
        /// The sink's message.
        message: String,
    },
}

/// Where a durable host sends the events its instances produce, once each transition that
/// produced them is committed. Delivery is at least once: an event whose sending was
/// interrupted (a crash, an error) is sent again, with the same `id`.
pub trait EventSink: Send + Sync + 'static {
    /// Sends `event`; `Ok` once the receiver has it.
    ///
    /// # Errors
    /// Why it could not be sent; it is sent again later.
    fn send(&self, event: &Event) -> impl Future<Output = Result<(), String>> + Send;
}

impl EventSink for mpsc::Sender<Event> {
    async fn send(&self, event: &Event) -> Result<(), String> {
        mpsc::Sender::send(self, event.clone())
            .await
            .map_err(|_| String::from("the receiver of produced events was dropped"))
    }
}

/// A sink that takes every produced event and does nothing with it, for workflows whose
/// produced events nobody needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Discard;

impl EventSink for Discard {
    async fn send(&self, _event: &Event) -> Result<(), String> {
        Ok(())
    }
}
