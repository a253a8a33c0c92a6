//! Creating an instance, stepping it on a task while it has something to do, holding it as
//! data while it waits for events, and cleaning up after it.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError};

use cloudevents::Event;
use futures_util::FutureExt;
use serde_json::Value;
use tokio::runtime::Handle;
use tokio::sync::Notify;

use super::{HOST_ERROR, InstanceId, Machine, Outcome, Shared, Unmatched};
use crate::drive::Paused;
use crate::error::{ErrorObject, WorkflowError};
use crate::events::{Bindings, HostLink, Inbox, Io, Registration, Since, lock_registry};

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

/// A new instance, parked before its first step.
pub(super) type Created<S> = (InstanceId, Box<Parked<S>>);

/// Why an instance could not be created, with the events it was to start with.
pub(super) type Refused = (WorkflowError, Vec<Event>);

impl<M: Machine> Shared<M> {
    /// Creates an instance bound to `correlation` with `initial` in its inbox, parked before
    /// its first step: the caller activates it ([`Shared::spawn`] or [`Shared::activator`]).
    ///
    /// # Errors
    /// Why it cannot be created, with `initial` given back.
    pub(super) fn create(
        self: &Arc<Self>,
        input: Value,
        correlation: impl Into<Bindings>,
        initial: Vec<Event>,
    ) -> Result<Created<M::State>, Refused> {
        // Checked first: a created instance is activated on tokio.
        if let Err(err) = Handle::try_current() {
            let error = ErrorObject::new(
                HOST_ERROR,
                format!("instances run on tokio, but there is no runtime here: {err}"),
            );
            let error = WorkflowError::new(self.machine.workflow_id(), "", error, Value::Null);
            return Err((error, initial));
        }
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
        let state = match self.machine.start(input, &io) {
            Ok(state) => state,
            // The inbox, never registered, gives its events back.
            Err(refusal) => return Err((refusal, inbox.close())),
        };
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
        Ok((id, parked))
    }

    /// Runs instance `id` on a task of its own: one the user created, whose task must not run
    /// it. Boxed, so that the step's future (as large as the workflow's largest step) is not
    /// moved into the task.
    pub(super) fn spawn(self: &Arc<Self>, id: InstanceId, parked: Box<Parked<M::State>>) {
        drop(tokio::spawn(crate::boxed::pinned!(
            self.clone().activate(id, parked)
        )));
    }

    /// Takes instance `id` out of the parking lot, if it is parked: an event was routed to it.
    pub(super) fn unpark(&self, id: InstanceId) -> Option<Box<Parked<M::State>>> {
        self.parked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id)
    }

    /// What the router activates instances with: on its own task, as far as each goes without
    /// waiting (for a deadline, room in a channel, the tokio budget) or running user code, and
    /// on a task of its own from there (see [`crate::inline`]). Most activations take an event
    /// and park again or end, and spawning a task for each cost more than the step itself; the
    /// box of an activation that ended inline is reused by the next.
    pub(super) fn activator(
        self: &Arc<Self>,
    ) -> impl FnMut(InstanceId, Box<Parked<M::State>>) + Send + use<M> {
        let shared = self.clone();
        let mut spare = crate::inline::Spare::default();
        move |id, parked| spare.run(|| shared.clone().activate(id, parked))
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
            self.spawn(id, parked);
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
        let span = crate::trace::workflow_span(&self.machine.info(), || io.id_prefix());
        let (mut state, mut registration) = (state, registration);
        let workflow = self.machine.workflow_id();
        let result = loop {
            let stepping = crate::drive::run_until_waiting(
                workflow,
                state,
                &io,
                self.events,
                registration,
                |state| self.machine.step(state, &io),
            );
            let stepping = AssertUnwindSafe(stepping).catch_unwind();
            let stepped = crate::trace::in_span!(stepping, span.clone());
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
            // Boxed: rare, and with its event the largest part of the activation otherwise.
            Box::pin(self.report(event, reason)).await;
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
