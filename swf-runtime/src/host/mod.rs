//! [`Host`]: runs the instances of one compiled workflow and routes incoming events to them.

mod config;
mod id;
mod instance;
mod machine;
mod router;
mod starting;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, PoisonError};

use cloudevents::Event;
use jiff::Timestamp;
use serde_json::Value;
use tokio::sync::mpsc;

pub use config::{HostChannels, HostConfig, Outcome, Unmatched};
pub(crate) use id::ById;
pub use id::InstanceId;
pub use machine::{Machine, StartOnEvents};

use crate::clock::Clock;
use crate::error::WorkflowError;
use crate::events::{EventSpec, SharedRegistry, Spill};
use instance::{Liveness, Parked};

/// The error name of a failure of the host itself: no tokio runtime to run an instance on, or
/// an instance that panicked.
pub const HOST_ERROR: &str = "HostError";

/// The instances of one compiled workflow, and the router that delivers incoming events to them.
///
/// Each instance has its own [`Io`](crate::Io). It steps on a tokio task of its own while it
/// has something to do (or waits for a deadline); while it waits for events alone, the host
/// holds it as data (its state, its inbox and correlation values, its place among the waiters)
/// and an event routed to it steps it again: on the router's task as long as its steps need
/// nothing to wait for and run no user code (most take the event and wait again, or end), on a
/// task of its own from there. Functions and custom conditions always run on the instance's
/// own task, never on the router's. [`Host::run`] routes each event of
/// [`HostChannels::events`]:
///
/// 1. an event that matches no event definition (source and type) is reported unmatched;
/// 2. for each definition it matches that has a correlation token, if it carries a value `v`:
///    to every live instance bound to `v`;
/// 3. otherwise to the instances waiting for that definition: every one for a definition without
///    a token; for a token, the one waiting longest among those not bound yet, which is bound to
///    `v` from then on;
/// 4. if nobody received it and it is a starting event ([`Machine::start_on_events`]): it
///    creates an instance (input `{}`, the event in its inbox, its correlation bound from the
///    event), at once when the start is exclusive, else once one event of each starting
///    definition with the same correlation values has arrived, each within the timeout of the
///    previous one;
/// 5. else it is reported unmatched.
///
/// Deliveries wait while an inbox is full, and every event ends up consumed by an instance or
/// in [`HostChannels::unmatched`] with the reason, including events left in an instance's inbox
/// when it ends. Cloning a host is cheap and shares it: start instances through a clone while
/// another runs [`Host::run`].
pub struct Host<M: Machine> {
    shared: Arc<Shared<M>>,
}

impl<M: Machine> Clone for Host<M> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

/// What the host's handles, its router and its instances share.
struct Shared<M: Machine> {
    machine: M,
    events: &'static [EventSpec],
    registry: SharedRegistry,
    produced: mpsc::Sender<Event>,
    unmatched: mpsc::Sender<Unmatched>,
    outcomes: mpsc::Sender<Outcome>,
    clock: Arc<dyn Clock>,
    deployed_at: Timestamp,
    inbox_capacity: usize,
    /// What the overflows of full inboxes hold, all instances together.
    spill: Arc<Spill>,
    /// Set once the events channel closed: no event will be routed any more.
    closed: AtomicBool,
    next_instance: AtomicU64,
    live: Arc<Liveness>,
    /// The instances waiting for events alone, held as data (see `instance::Parked`). Lock
    /// order: this lock, then an inbox lock; the router delivers to an inbox before taking it.
    parked: Mutex<ById<Box<Parked<M::State>>>>,
    /// Taken by the first `run`.
    incoming: Mutex<Option<mpsc::Receiver<Event>>>,
}

impl<M: Machine> Host<M> {
    /// A host for `machine`, deployed now (on `config.clock`), and the user's ends of its
    /// channels.
    pub fn new(machine: M, config: HostConfig) -> (Host<M>, HostChannels) {
        let channels = config::Channels::new(&config);
        let events = machine.events();
        let deployed_at = config.clock.now();
        let shared = Shared {
            machine,
            events,
            registry: SharedRegistry::default(),
            produced: channels.produced,
            unmatched: channels.unmatched,
            outcomes: channels.outcomes,
            deployed_at,
            clock: config.clock,
            inbox_capacity: config.inbox_capacity,
            spill: Arc::new(Spill::new(config.overflow_capacity)),
            closed: AtomicBool::new(false),
            next_instance: AtomicU64::new(1),
            live: Arc::default(),
            parked: Mutex::default(),
            incoming: Mutex::new(Some(channels.events)),
        };
        let host = Host {
            shared: Arc::new(shared),
        };
        (host, channels.user)
    }

    /// Creates an instance from `input` and runs it on its own task; its outcome arrives on
    /// [`HostChannels::outcomes`].
    ///
    /// # Errors
    /// The refusal of [`Machine::start`] (input that is not an object, a scheduled start
    /// outside its window), or a `HostError` when called outside a tokio runtime.
    pub fn start_instance(&self, input: Value) -> Result<InstanceId, WorkflowError> {
        self.start_instance_correlated(input, BTreeMap::new())
    }

    /// Like [`Host::start_instance`], with the instance bound to `correlation` (attribute →
    /// value) from the start, so that correlated events reach it before it waits for them.
    ///
    /// # Errors
    /// As [`Host::start_instance`].
    pub fn start_instance_correlated(
        &self,
        input: Value,
        correlation: BTreeMap<String, String>,
    ) -> Result<InstanceId, WorkflowError> {
        let (id, parked) = self
            .shared
            .create(input, correlation, Vec::new())
            .map_err(|(refusal, _)| refusal)?;
        self.shared.spawn(id, parked);
        Ok(id)
    }

    /// Routes the incoming events until every sender of [`HostChannels::events`] is dropped,
    /// then reports the starting events still waiting for their group as unmatched, lets the
    /// instances that can still go on (on a deadline, or with events already in their inbox)
    /// run to their end, ends those that wait for events alone with an outcome that carries
    /// their saved state (a `HostError`: nothing can reach them any more), and returns. Only one
    /// `run` routes: on another clone of the host it only waits for the instances.
    pub async fn run(self) {
        let incoming = self
            .shared
            .incoming
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(incoming) = incoming {
            self.shared.clone().serve(incoming).await;
        }
        self.shared.live.idle().await;
    }

    /// The compiled workflow.
    pub fn machine(&self) -> &M {
        &self.shared.machine
    }

    /// When the host was created: where duration-only schedules start counting.
    pub fn deployed_at(&self) -> Timestamp {
        self.shared.deployed_at
    }
}
