//! Creating an instance, running it on its own task, and cleaning up after it.

use std::collections::BTreeMap;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cloudevents::Event;
use serde_json::Value;
use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::task::JoinError;

use super::{HOST_ERROR, InstanceId, Machine, Outcome, Shared, Unmatched};
use crate::error::{ErrorObject, WorkflowError};
use crate::events::{HostLink, Inbox, Io, lock_registry};

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
        let running = Running::new(&self.live);
        runtime.spawn(self.clone().supervise(id, io, state, running));
        Ok(id)
    }

    /// Runs instance `id` to its end on a task of its own (so that a panic in it is caught
    /// here), then reports the events it left unconsumed and its outcome.
    async fn supervise(
        self: Arc<Self>,
        id: InstanceId,
        io: Io,
        state: M::State,
        _running: Running,
    ) {
        let driver = tokio::spawn(self.clone().drive(io, state));
        let result = match driver.await {
            Ok(result) => result,
            Err(failure) => Err(self.crashed(failure)),
        };
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

    async fn drive(self: Arc<Self>, io: Io, state: M::State) -> Result<Value, WorkflowError> {
        let run = async {
            let ran = crate::drive::run_until_stranded(state, &io, self.events, |state| {
                self.machine.step(state, &io)
            })
            .await?;
            // Stranded once the events channel closed: reported with its saved state, which
            // another host (a durable one) can resume.
            ran.map_err(|(state, wait)| {
                let saved = serde_json::to_value(&state).unwrap_or(Value::Null);
                crate::drive::stranded(self.machine.workflow_id(), &state, &wait, saved)
            })
        };
        crate::trace::traced_run(self.machine.info(), &io, run)
            .await
            .map(crate::concurrent::ScopeEnd::into_output)
    }

    fn crashed(&self, failure: JoinError) -> WorkflowError {
        let message = if failure.is_panic() {
            let payload = failure.into_panic();
            let text = crate::action::panic_message(payload.as_ref());
            format!("the instance panicked: {text}")
        } else {
            String::from("the instance was cancelled")
        };
        let error = ErrorObject::new(HOST_ERROR, message);
        WorkflowError::new(self.machine.workflow_id(), "", error, Value::Null)
    }

    /// Reports `event` as unmatched. An error only means the user dropped the receiver.
    pub(super) async fn report(&self, event: Event, reason: String) {
        let _ = self.unmatched.send(Unmatched { event, reason }).await;
    }
}
