//! Creating an instance, stepping it on a task while it has something to do, holding it as
//! data while it waits for events, and cleaning up after it.

use std::any::Any;
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError};

use cloudevents::Event;
use futures_util::FutureExt;
use serde_json::Value;
use tokio::runtime::Handle;
use tokio::sync::Notify;
use tracing::Instrument;

use super::{HOST_ERROR, InstanceId, Machine, Outcome, Shared, Unmatched};
use crate::drive::Paused;
use crate::error::{ErrorObject, WorkflowError};
use crate::events::{HostLink, Inbox, Io, Registration, Since, lock_registry};

/// How many instances are running, so that `run` can wait for the last one.
#[derive(Debug, Default)]
pub(super) struct Liveness {
    running: AtomicUsize,
    idle: Notify,
}

impl Liveness {
    /// Waits until no instance runs.
    pub(super) async fn idle(&self) {
        loop {
            let mut idle = pin!(self.idle.notified());
            idle.as_mut().enable();
            if self.running.load(Ordering::SeqCst) == 0 {
                return;
            }
            idle.await;
        }
    }
}

/// Counts one running instance for as long as it lives (also if its task is dropped).
struct Running(Arc<Liveness>);

impl Running {
    fn new(live: &Arc<Liveness>) -> Self {
        live.running.fetch_add(1, Ordering::SeqCst);
        Self(live.clone())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// An instance between two steps, held as data while it waits for events alone: no task, no
/// future, only what it needs to go on. An event routed to it (or the events channel closing)
/// takes it out and steps it on a task again.
pub(super) struct Parked<S> {
    state: S,
    io: Io,
    /// What it listens for; `None` before its first step.
    registration: Option<Registration>,
    running: Running,
}

impl<M: Machine> Shared<M> {
    /// Creates an instance bound to `correlation` with `initial` in its inbox, and spawns it.
    pub(super) fn create(
        self: &Arc<Self>,
        input: Value,
        correlation: BTreeMap<String, String>,
        initial: Vec<Event>,
    ) -> Result<InstanceId, WorkflowError> {
        let runtime = Handle::try_current().map_err(|err| {
            let error = ErrorObject::new(
                HOST_ERROR,
                format!("instances run on tokio, but there is no runtime here: {err}"),
            );
            WorkflowError::new(self.machine.workflow_id(), "", error, Value::Null)
        })?;
        let id = InstanceId::new(self.next_instance.fetch_add(1, Ordering::Relaxed));
        let inbox = Arc::new(
            Inbox::new(self.inbox_capacity, correlation, initial)
                .spilling_into(Arc::clone(&self.spill)),
        );
        let link = HostLink {
            registry: self.registry.clone(),
            instance: id,
        };
        let io = Io::hosted(
            inbox.clone(),
            link,
            self.produced.clone(),
            self.clock.clone(),
            self.deployed_at,
        );
        let state = self.machine.start(input, &io)?;
        // Registered before it runs, so that events correlated with it reach it from now on.
        lock_registry(&self.registry).insert(id, inbox.clone());
        // Created after the events channel closed (or while it closed): nothing will come.
        if self.closed.load(Ordering::SeqCst) {
            inbox.seal();
        }
        let parked = Box::new(Parked {
            state,
            io,
            registration: None,
            running: Running::new(&self.live),
        });
        runtime.spawn(self.clone().activate(id, parked));
        Ok(id)
    }

    /// Steps instance `id` again if it is parked: an event was routed to it.
    pub(super) fn wake(self: &Arc<Self>, id: InstanceId) {
        let parked = self
            .parked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        if let Some(parked) = parked {
            tokio::spawn(self.clone().activate(id, parked));
        }
    }

    /// Steps every parked instance once more: the events channel closed, so each finds that
    /// nothing can reach it any more and ends with its saved state.
    pub(super) fn wake_all(self: &Arc<Self>) {
        let parked: Vec<(InstanceId, Box<Parked<M::State>>)> = self
            .parked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect();
        for (id, parked) in parked {
            tokio::spawn(self.clone().activate(id, parked));
        }
    }

    /// Steps instance `id` until it ends (then reports the events it left unconsumed and its
    /// outcome) or waits for events alone (then parks it). A panic in a step ends the instance
    /// with a `HostError`, as it would have ended its task.
    async fn activate(self: Arc<Self>, id: InstanceId, parked: Box<Parked<M::State>>) {
        let Parked {
            state,
            io,
            registration,
            running,
        } = *parked;
        // One span per activation, as a durable host has one per claim: a parked instance has
        // no span open.
        let span = crate::trace::workflow_span(&self.machine.info(), io.id_prefix());
        let (mut state, mut registration) = (state, registration);
        let result = loop {
            // Boxed: the step's future is as large as the workflow's largest step, and every
            // wrapper (and the task, at each spawn) would otherwise move it whole.
            let stepping = Box::pin(crate::drive::run_until_waiting(
                state,
                &io,
                self.events,
                registration,
                |state| self.machine.step(state, &io),
            ));
            let stepped = AssertUnwindSafe(stepping)
                .catch_unwind()
                .instrument(span.clone())
                .await;
            let (same, wait, seen, kept) = match stepped {
                Ok(Ok(Paused::Ended(end))) => break Ok(end),
                Ok(Ok(Paused::Waiting {
                    state,
                    wait,
                    seen,
                    registration,
                })) => (state, wait, seen, registration),
                Ok(Err(error)) => break Err(error),
                Err(panic) => break Err(self.crashed(panic.as_ref())),
            };
            // Decided under the parking lot's lock, which the router takes only after its
            // delivery: either this sees the event, or the router finds the instance parked.
            let mut lot = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
            match io.since(seen) {
                Since::Arrived => {
                    drop(lot);
                    (state, registration) = (same, Some(kept));
                }
                Since::Nothing => {
                    let parked = Parked {
                        state: same,
                        io,
                        registration: Some(kept),
                        running,
                    };
                    lot.insert(id, Box::new(parked));
                    return;
                }
                Since::Sealed => {
                    drop(lot);
                    // Ends the registration.
                    drop(io.resume_listening(self.events, kept));
                    // Reported with its saved state, which another host (a durable one) can
                    // resume.
                    let saved = serde_json::to_value(&same).unwrap_or(Value::Null);
                    let workflow = self.machine.workflow_id();
                    break Err(crate::drive::stranded(workflow, &same, &wait, saved));
                }
            }
        };
        crate::trace::record_outcome(&span, &result);
        let result = result.map(crate::concurrent::ScopeEnd::into_output);
        self.finish(id, result).await;
        drop(running);
    }

    /// Reports the events instance `id` left unconsumed, then its outcome.
    async fn finish(&self, id: InstanceId, result: Result<Value, WorkflowError>) {
        let inbox = lock_registry(&self.registry).remove(id);
        let leftovers = inbox.map(|inbox| inbox.close()).unwrap_or_default();
        for event in leftovers {
            let reason = format!("instance {id} ended before consuming it");
            self.report(event, reason).await;
        }
        // An error only means the user dropped the receiver, declining outcomes.
        let _ = self
            .outcomes
            .send(Outcome {
                instance: id,
                result,
            })
            .await;
    }

    fn crashed(&self, payload: &(dyn Any + Send)) -> WorkflowError {
        let text = crate::action::panic_message(payload);
        let error = ErrorObject::new(HOST_ERROR, format!("the instance panicked: {text}"));
        WorkflowError::new(self.machine.workflow_id(), "", error, Value::Null)
    }

    /// Reports `event` as unmatched. An error only means the user dropped the receiver.
    pub(super) async fn report(&self, event: Event, reason: String) {
        let _ = self.unmatched.send(Unmatched { event, reason }).await;
    }
}
