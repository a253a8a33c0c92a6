//! [`Io`]: the outside world of one workflow instance.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use cloudevents::Event;
use jiff::Timestamp;
use tokio::sync::mpsc;

use super::inbox::Inbox;
use super::registry::{self, SharedRegistry};
use crate::clock::{Clock, SystemClock};
use crate::host::InstanceId;

/// How many events an inbox holds before deliveries wait, unless configured otherwise.
pub const DEFAULT_INBOX_CAPACITY: usize = 64;

/// The outside world of one workflow instance: the events routed to it, the correlation values
/// it is bound to, where the events it produces go, and the clock its scheduled start is checked
/// against.
///
/// A [`Host`](crate::Host) gives each instance its own; [`Io::standalone`] makes one for an
/// instance run by hand, whose events the caller delivers with [`Io::deliver`] and whose produced
/// events it collects with [`Io::take_produced`]. Cloning is cheap and shares everything.
#[derive(Clone)]
pub struct Io {
    pub(super) inner: Arc<IoInner>,
}

pub(super) struct IoInner {
    pub(super) inbox: Arc<Inbox>,
    pub(super) outbox: Outbox,
    clock: Arc<dyn Clock>,
    deployed_at: Timestamp,
    pub(super) link: Option<HostLink>,
    /// Produced events so far, for their ids.
    pub(super) produced: AtomicU64,
    /// `<deployment instant in ns>-<instance>`: makes produced ids unique across hosts and
    /// restarts without any process-wide counter.
    pub(super) id_prefix: String,
}

/// Where produced events go.
pub(super) enum Outbox {
    /// Kept for [`Io::take_produced`] (shared with the `Io`s of detached sub-flows).
    Collect(Arc<Mutex<Vec<Event>>>),
    /// Sent to a bounded channel, waiting for room.
    Channel(mpsc::Sender<Event>),
}

/// The tie between a hosted instance's `Io` and its host's registry.
pub(crate) struct HostLink {
    pub(crate) registry: SharedRegistry,
    pub(crate) instance: InstanceId,
}

impl Io {
    /// An `Io` for an instance run without a host, on the system clock, deployed now.
    pub fn standalone() -> Io {
        Io::builder().build()
    }

    /// An `Io` for an instance run without a host, on `clock`, deployed at its current time.
    pub fn standalone_with_clock(clock: Arc<dyn Clock>) -> Io {
        Io::builder().clock(clock).build()
    }

    /// A builder of standalone `Io`s, for the settings [`Io::standalone`] chooses.
    pub fn builder() -> IoBuilder {
        IoBuilder::default()
    }

    /// The `Io` of instance `instance` of a host.
    pub(crate) fn hosted(
        inbox: Arc<Inbox>,
        link: HostLink,
        produced: mpsc::Sender<Event>,
        clock: Arc<dyn Clock>,
        deployed_at: Timestamp,
    ) -> Io {
        let instance = link.instance;
        Io::assemble(
            inbox,
            Outbox::Channel(produced),
            clock,
            deployed_at,
            Some(link),
            instance,
        )
    }

    fn assemble(
        inbox: Arc<Inbox>,
        outbox: Outbox,
        clock: Arc<dyn Clock>,
        deployed_at: Timestamp,
        link: Option<HostLink>,
        instance: InstanceId,
    ) -> Io {
        let id_prefix = format!("{}-{instance}", deployed_at.as_nanosecond());
        Io {
            inner: Arc::new(IoInner {
                inbox,
                outbox,
                clock,
                deployed_at,
                link,
                produced: AtomicU64::new(0),
                id_prefix,
            }),
        }
    }

    /// The `Io` of a sub-flow this instance starts detached: the same clock, deployment instant,
    /// correlation values and destination for produced events, and an inbox of its own. A host
    /// does not know detached sub-flows, so nothing is routed to that inbox: they can produce
    /// events but not wait for any (a wait ends at its timeout), and they never hold events the
    /// host routed to this instance.
    pub fn detached(&self) -> Io {
        let number = self.inner.produced.fetch_add(1, Ordering::Relaxed) + 1;
        let correlation = self.correlation();
        let inbox = Arc::new(Inbox::new(DEFAULT_INBOX_CAPACITY, correlation, Vec::new()));
        let outbox = match &self.inner.outbox {
            Outbox::Collect(produced) => Outbox::Collect(Arc::clone(produced)),
            Outbox::Channel(sender) => Outbox::Channel(sender.clone()),
        };
        Io {
            inner: Arc::new(IoInner {
                inbox,
                outbox,
                clock: Arc::clone(&self.inner.clock),
                deployed_at: self.inner.deployed_at,
                link: None,
                produced: AtomicU64::new(0),
                id_prefix: format!("{}-sub{number}", self.inner.id_prefix),
            }),
        }
    }

    /// Puts `event` into this instance's inbox, waiting while the inbox is full. The event is
    /// not checked against anything: a wait takes it if it suits the wait.
    ///
    /// # Errors
    /// The event, when the instance has ended (only a host ends an instance's inbox).
    pub async fn deliver(&self, event: Event) -> Result<(), Event> {
        self.inner.inbox.deliver(event).await
    }

    /// Takes the events produced so far, in production order. Always empty when they go to a
    /// channel (a hosted instance, or [`IoBuilder::outbox`]).
    pub fn take_produced(&self) -> Vec<Event> {
        match &self.inner.outbox {
            Outbox::Collect(produced) => {
                std::mem::take(&mut *produced.lock().unwrap_or_else(PoisonError::into_inner))
            }
            Outbox::Channel(_) => Vec::new(),
        }
    }

    /// The wall clock scheduled starts are checked against.
    pub fn clock(&self) -> &dyn Clock {
        &*self.inner.clock
    }

    /// When the workflow was deployed: where duration-only schedules start counting.
    pub fn deployed_at(&self) -> Timestamp {
        self.inner.deployed_at
    }

    /// The correlation values this instance is bound to (attribute → value), a copy.
    pub fn correlation(&self) -> BTreeMap<String, String> {
        self.inner.inbox.lock().correlation.clone()
    }

    /// The host's identifier of this instance; `None` for a standalone `Io`.
    pub fn instance(&self) -> Option<InstanceId> {
        self.inner.link.as_ref().map(|link| link.instance)
    }

    /// Records in the host's registry that this instance bound `attribute` to `value`, after
    /// the inbox lock that bound it was released (the registry lock comes first otherwise).
    pub(super) fn index(&self, attribute: &str, value: &str) {
        if let Some(link) = &self.inner.link {
            registry::lock(&link.registry).index(link.instance, attribute, value);
        }
    }
}

impl fmt::Debug for Io {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Io")
            .field("instance", &self.instance())
            .field("correlation", &self.correlation())
            .field("deployed_at", &self.inner.deployed_at)
            .finish_non_exhaustive()
    }
}

/// Settings of a standalone [`Io`].
#[derive(Default)]
pub struct IoBuilder {
    clock: Option<Arc<dyn Clock>>,
    deployed_at: Option<Timestamp>,
    inbox_capacity: Option<usize>,
    correlation: BTreeMap<String, String>,
    outbox: Option<mpsc::Sender<Event>>,
}

impl IoBuilder {
    /// The wall clock (the system clock by default).
    #[must_use]
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The deployment instant (by default the clock's time when the `Io` is built).
    #[must_use]
    pub fn deployed_at(mut self, deployed_at: Timestamp) -> Self {
        self.deployed_at = Some(deployed_at);
        self
    }

    /// How many events the inbox holds before [`Io::deliver`] waits (64 by default, at least 1).
    #[must_use]
    pub fn inbox_capacity(mut self, capacity: usize) -> Self {
        self.inbox_capacity = Some(capacity);
        self
    }

    /// Correlation values the instance starts bound to.
    #[must_use]
    pub fn correlation(mut self, correlation: BTreeMap<String, String>) -> Self {
        self.correlation = correlation;
        self
    }

    /// Sends produced events to `outbox` (waiting for room) instead of collecting them.
    #[must_use]
    pub fn outbox(mut self, outbox: mpsc::Sender<Event>) -> Self {
        self.outbox = Some(outbox);
        self
    }

    /// The `Io`.
    pub fn build(self) -> Io {
        let clock = self.clock.unwrap_or_else(|| Arc::new(SystemClock));
        let deployed_at = self.deployed_at.unwrap_or_else(|| clock.now());
        let capacity = self.inbox_capacity.unwrap_or(DEFAULT_INBOX_CAPACITY);
        let inbox = Arc::new(Inbox::new(capacity, self.correlation, Vec::new()));
        let outbox = match self.outbox {
            Some(sender) => Outbox::Channel(sender),
            None => Outbox::Collect(Arc::new(Mutex::new(Vec::new()))),
        };
        // Host instances are numbered from 1, so 0 never collides with one of them.
        Io::assemble(inbox, outbox, clock, deployed_at, None, InstanceId::new(0))
    }
}

impl fmt::Debug for IoBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IoBuilder")
            .field("deployed_at", &self.deployed_at)
            .field("inbox_capacity", &self.inbox_capacity)
            .field("correlation", &self.correlation)
            .finish_non_exhaustive()
    }
}
