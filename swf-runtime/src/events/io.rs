//! [`Io`]: the outside world of one workflow instance.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cloudevents::Event;
use jiff::Timestamp;
use tokio::sync::mpsc;

use super::definitions::{Accepting, Definitions, Undeliverable};
use super::inbox::{Bindings, Inbox};
use super::registry::{self, SharedRegistry};
use super::spec::EventSpec;
use crate::clock::{Clock, SystemClock};
use crate::host::InstanceId;

/// The system clock, one for every standalone `Io` that uses it (an `Io` per run would
/// otherwise allocate its own).
fn system_clock() -> Arc<dyn Clock> {
    static SYSTEM: std::sync::LazyLock<Arc<dyn Clock>> =
        std::sync::LazyLock::new(|| Arc::new(SystemClock));
    Arc::clone(&SYSTEM)
}

/// The `Io` of a run by hand of a workflow that neither talks to the world outside its instance
/// (events, sub-flows) nor has a scheduled start: what the generated `run`, `start` and `step`
/// of such a workflow make. As [`Io::standalone`], except that its deployment instant is read
/// from the clock when first asked for rather than when it is made: nothing such a run does
/// depends on it but the instance's name in its calls' contexts (`<deployment ns>-0`), which
/// most runs never make (issue 10: reading the clock was a quarter of a short run's `Io`);
/// and its inbox is made only when a wait (a delay, a retry's) first needs it: the `Io` is the
/// generated method's own, so nothing is ever delivered to it, and learning the workflow's
/// (absent) event definitions has nothing to check (issue 10: the inbox, made, learnt and
/// dropped, was a twentieth of a run of one switch and one call).
///
/// Made over the one the last such run on this thread left (see [`PlainRunIo`]).
pub fn plain_run_io() -> PlainRunIo {
    let kept = SPARE_PLAIN_IO.try_with(Cell::take).ok().flatten();
    PlainRunIo(Io {
        inner: kept.unwrap_or_else(|| Arc::new(IoInner::plain())),
    })
}

thread_local! {
    /// The `Io` of the last plain run on this thread, made new again (see [`PlainRunIo`]).
    static SPARE_PLAIN_IO: Cell<Option<Arc<IoInner>>> = const { Cell::new(None) };
}

/// A plain run's `Io` (see [`plain_run_io`]), used as an `Io`. When the run is over and
/// nothing else holds it (a detached sub-flow's `Io` shares only its outbox; a function may
/// have kept nothing of it), it is made new again in place and kept for the next plain run on
/// the thread: no run can tell it from a new one, and its allocation, made and freed in every
/// run, was 270 instructions of a switch and one call's 7,700 (issue 10).
#[derive(Debug)]
pub struct PlainRunIo(Io);

impl std::ops::Deref for PlainRunIo {
    type Target = Io;

    fn deref(&self) -> &Io {
        &self.0
    }
}

impl Drop for PlainRunIo {
    fn drop(&mut self) {
        let Some(inner) = Arc::get_mut(&mut self.0.inner) else {
            return;
        };
        inner.make_plain_again();
        let kept = Arc::clone(&self.0.inner);
        // `Err`: the thread is ending; the `Io` is dropped with it.
        let _ = SPARE_PLAIN_IO.try_with(|spare| spare.set(Some(kept)));
    }
}

/// How many events an inbox holds before deliveries wait, unless configured otherwise.
pub const DEFAULT_INBOX_CAPACITY: usize = 64;

/// The outside world of one workflow instance: the events routed to it, the correlation values
/// it is bound to, where the events it produces go, and the clock its scheduled start is checked
/// against.
///
/// A [`Host`](crate::Host) gives each instance its own; [`Io::standalone_for`] and
/// [`Io::standalone`] make one for an instance run by hand, whose events the caller delivers
/// with [`Io::deliver`] and whose produced events it collects with [`Io::take_produced`].
/// Cloning is cheap and shares everything.
///
/// A standalone `Io` refuses an event that matches none of the workflow's event definitions
/// (no wait of the workflow could ever take it). One made by [`Io::standalone_for`] knows them
/// from the start, so [`Io::deliver`] gives such an event back at once. One made by
/// [`Io::standalone`] learns them when the run starts (the generated `run_with`, `start_with`
/// or `step_with`, whichever comes first): before that it holds every event, and the run then
/// refuses to start while it holds one that matches no definition (an `EventError` naming each),
/// so that no event is lost without a word.
#[derive(Clone)]
pub struct Io {
    pub(super) inner: Arc<IoInner>,
}

pub(super) struct IoInner {
    /// Made when first needed for a plain run's `Io` (see [`plain_run_io`]), when it is made
    /// for any other.
    inbox: OnceLock<Arc<Inbox>>,
    pub(super) outbox: Outbox,
    clock: Arc<dyn Clock>,
    /// Set when the `Io` is made, except for a plain run's (see [`plain_run_io`]): read from
    /// the clock when first asked for then.
    deployed_at: OnceLock<Timestamp>,
    pub(super) link: Option<HostLink>,
    /// Events produced in the current step, for their ids. (32 bits, as `detached`: a host
    /// holds an `Io` for every waiting instance, issue 10.)
    pub(super) produced: AtomicU32,
    /// The current step's number: the instance's revision under a durable host, else a count
    /// of the steps run through this `Io`.
    pub(super) step: AtomicU64,
    /// Detached sub-flows started so far, for their ids.
    pub(super) detached: AtomicU32,
    /// `<deployment instant in ns>-<instance>` (a durable host: `<workflow>-<instance>`): with
    /// the step number, it makes produced event ids and idempotency keys unique across hosts
    /// and restarts without any process-wide counter.
    /// Made when first read (most runs never name anything), from `deployed_at` and the
    /// instance's number in its host (0 for a standalone `Io`). Set when made for a durable
    /// host's `Io` and a detached sub-flow's.
    id_prefix: OnceLock<String>,
    /// Under a durable host: the sub-flows the step started detached, which become instances of
    /// their own, committed with the step. `None`: they run on tokio tasks of this process.
    pub(super) children: Option<Mutex<Vec<ChildStart>>>,
}

impl IoInner {
    fn new(
        inbox: OnceLock<Arc<Inbox>>,
        outbox: Outbox,
        clock: Arc<dyn Clock>,
        deployed_at: OnceLock<Timestamp>,
        link: Option<HostLink>,
    ) -> Self {
        IoInner {
            inbox,
            outbox,
            clock,
            deployed_at,
            link,
            produced: AtomicU32::new(0),
            step: AtomicU64::new(0),
            detached: AtomicU32::new(0),
            id_prefix: OnceLock::new(),
            children: None,
        }
    }

    /// What a plain run (see [`plain_run_io`]) changed, as [`IoInner::plain`] makes it:
    /// cheaper than making it anew (its clock is the system's, its link and children none).
    /// Every field is named, so that one added later is thought about here.
    fn make_plain_again(&mut self) {
        let IoInner {
            inbox,
            outbox,
            clock: _,
            deployed_at,
            link: _,
            produced,
            step,
            detached,
            id_prefix,
            children: _,
        } = self;
        inbox.take();
        if let Outbox::Collect(collected) = outbox {
            collected.take();
        }
        deployed_at.take();
        *produced.get_mut() = 0;
        *step.get_mut() = 0;
        *detached.get_mut() = 0;
        id_prefix.take();
    }

    /// A plain run's (see [`plain_run_io`]).
    fn plain() -> Self {
        IoInner::new(
            OnceLock::new(),
            Outbox::Collect(OnceLock::new()),
            system_clock(),
            OnceLock::new(),
            None,
        )
    }
}

/// A sub-flow started detached under a durable host: an instance of its own workflow, created
/// with the step that started it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChildStart {
    /// The called workflow's definition.
    pub(crate) definition: crate::store::Definition,
    /// Its first state, serialized.
    pub(crate) state: String,
    /// Where that state is, for people.
    pub(crate) position: String,
}

/// Where produced events go.
pub(super) enum Outbox {
    /// Kept for [`Io::take_produced`] (shared with the `Io`s of detached sub-flows), made
    /// when the first is produced or the first detached sub-flow starts: most runs produce
    /// nothing, and a run by hand paid for the allocation in every run.
    Collect(OnceLock<Arc<Mutex<Vec<Event>>>>),
    /// Sent to a bounded channel, waiting for room.
    Channel(mpsc::Sender<Event>),
}

/// The tie between a hosted instance's `Io` and its host's registry.
pub(crate) struct HostLink {
    pub(crate) registry: SharedRegistry,
    pub(crate) instance: InstanceId,
}

impl IoInner {
    /// The instance's inbox, made now if it was not (a plain run's, when a wait first needs
    /// it).
    pub(super) fn inbox(&self) -> &Arc<Inbox> {
        self.inbox.get_or_init(|| {
            Arc::new(Inbox::accepting(
                DEFAULT_INBOX_CAPACITY,
                Bindings::default(),
                Vec::new(),
                Accepting::Unchecked,
            ))
        })
    }

    /// The instance's inbox if it has been made: a plain run's is not until a wait needs it,
    /// and until then nothing has arrived in it.
    pub(super) fn made_inbox(&self) -> Option<&Arc<Inbox>> {
        self.inbox.get()
    }
}

impl Io {
    /// Seals the inbox, as a host does when its events channel closes: nothing will be
    /// delivered any more.
    #[cfg(test)]
    pub(crate) fn seal(&self) {
        self.inner.inbox().seal();
    }

    /// An `Io` for an instance run without a host, on the system clock, deployed now. It learns
    /// the workflow's event definitions when the run starts (see [`Io`]); prefer
    /// [`Io::standalone_for`] when events are delivered before that.
    pub fn standalone() -> Io {
        Io::builder().build()
    }

    /// An `Io` for an instance of `machine`'s workflow run without a host, on the system clock,
    /// deployed now, that refuses at once an event matching none of its definitions.
    pub fn standalone_for<M: crate::Machine>(machine: &M) -> Io {
        Io::builder().definitions_of(machine).build()
    }

    /// An `Io` for an instance run without a host, on `clock`, deployed at its current time.
    pub fn standalone_with_clock(clock: Arc<dyn Clock>) -> Io {
        Io::builder().clock(clock).build()
    }

    /// A builder of standalone `Io`s, for the settings [`Io::standalone`] chooses.
    pub fn builder() -> IoBuilder {
        IoBuilder::default()
    }

    /// The `Io` of instance `link.instance` of a host deployed at `deployed_at`. Its id prefix
    /// (`<deployment ns>-<instance>`) is made when first read, as a standalone `Io`'s: most
    /// hosted instances produce nothing and call nothing that asks for its key, and writing it
    /// for each cost a few hundred instructions and a heap block held while it waited.
    pub(crate) fn hosted(
        inbox: Arc<Inbox>,
        link: HostLink,
        produced: mpsc::Sender<Event>,
        clock: Arc<dyn Clock>,
        deployed_at: Timestamp,
    ) -> Io {
        Io::assemble(IoInner::new(
            OnceLock::from(inbox),
            Outbox::Channel(produced),
            clock,
            OnceLock::from(deployed_at),
            Some(link),
        ))
    }

    /// The `Io` of one step of instance `instance` under a durable host: its stored inbox
    /// events (with their sequence numbers) and correlation, produced events collected for the
    /// commit, and the instance's revision as the step number, so that what the step names
    /// (produced event ids, idempotency keys) is the same when the step runs again after a
    /// crash.
    pub(crate) fn durable(
        prefix: String,
        revision: u64,
        inbox: Vec<(u64, Timestamp, Event)>,
        correlation: BTreeMap<String, String>,
        clock: Arc<dyn Clock>,
        deployed_at: Timestamp,
    ) -> Io {
        let inbox = Arc::new(Inbox::stored(DEFAULT_INBOX_CAPACITY, correlation, inbox));
        Io {
            inner: Arc::new(IoInner {
                inbox: OnceLock::from(inbox),
                outbox: Outbox::Collect(OnceLock::new()),
                clock,
                deployed_at: OnceLock::from(deployed_at),
                link: None,
                produced: AtomicU32::new(0),
                step: AtomicU64::new(revision),
                detached: AtomicU32::new(0),
                id_prefix: OnceLock::from(prefix),
                children: Some(Mutex::new(Vec::new())),
            }),
        }
    }

    fn assemble(inner: IoInner) -> Io {
        Io {
            inner: Arc::new(inner),
        }
    }

    /// The `Io` of a sub-flow this instance starts detached: the same clock, deployment instant,
    /// correlation values and destination for produced events, and an inbox of its own. A host
    /// does not know detached sub-flows, so nothing is routed to that inbox: they can produce
    /// events but not wait for any (a wait ends at its timeout), and they never hold events the
    /// host routed to this instance.
    pub fn detached(&self) -> Io {
        let number = self.inner.detached.fetch_add(1, Ordering::Relaxed) + 1;
        let correlation = self.correlation();
        // The sub-flow's run tells it its definitions.
        let inbox = Arc::new(Inbox::accepting(
            DEFAULT_INBOX_CAPACITY,
            correlation,
            Vec::new(),
            Accepting::Unchecked,
        ));
        let outbox = match &self.inner.outbox {
            Outbox::Collect(produced) => Outbox::Collect(OnceLock::from(Arc::clone(
                produced.get_or_init(Arc::default),
            ))),
            Outbox::Channel(sender) => Outbox::Channel(sender.clone()),
        };
        Io {
            inner: Arc::new(IoInner {
                inbox: OnceLock::from(inbox),
                outbox,
                clock: Arc::clone(&self.inner.clock),
                deployed_at: OnceLock::from(self.deployed_at()),
                link: None,
                produced: AtomicU32::new(0),
                step: AtomicU64::new(0),
                detached: AtomicU32::new(0),
                id_prefix: OnceLock::from(format!("{}-sub{number}", self.id_prefix())),
                children: None,
            }),
        }
    }

    /// Whether sub-flows started detached become instances of their own, committed with the
    /// step ([`Io::start_child`]), rather than tokio tasks: under a durable host.
    pub fn records_children(&self) -> bool {
        self.inner.children.is_some()
    }

    /// Records that the step starts an instance of workflow `workflow` (its `version` and
    /// definition `hash`) at `state`: a sub-flow started detached under a durable host, which
    /// commits it with the step; a host of that workflow runs it. Nothing happens for an `Io`
    /// that does not record children.
    ///
    /// # Errors
    /// A `RuntimeError` when the state cannot be saved (nothing a generated state causes).
    pub fn start_child<S: serde::Serialize + crate::concurrent::ScopeState>(
        &self,
        workflow: &str,
        version: Option<&str>,
        hash: &str,
        state: &S,
    ) -> Result<(), crate::error::ErrorObject> {
        let Some(children) = &self.inner.children else {
            return Ok(());
        };
        let text = serde_json::to_string(state).map_err(|err| {
            crate::error::ErrorObject::new(
                "RuntimeError",
                format!("the first state of sub-flow `{workflow}` cannot be saved: {err}"),
            )
        })?;
        children
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(ChildStart {
                definition: crate::store::Definition {
                    workflow: workflow.to_owned(),
                    version: version.map(str::to_owned),
                    hash: hash.to_owned(),
                },
                state: text,
                position: state.position(),
            });
        Ok(())
    }

    /// The children recorded so far (see [`Io::start_child`]).
    pub(crate) fn take_children(&self) -> Vec<ChildStart> {
        self.inner
            .children
            .as_ref()
            .map(|children| {
                std::mem::take(&mut *children.lock().unwrap_or_else(PoisonError::into_inner))
            })
            .unwrap_or_default()
    }

    /// Puts `event` into this instance's inbox, waiting while the inbox is full; a wait takes
    /// it if it suits the wait.
    ///
    /// # Errors
    /// The event and why, when the instance has ended (only a host ends an instance's inbox),
    /// or when the `Io` knows the workflow's event definitions (see [`Io`]) and the event
    /// matches none of them: the reason names its source and type and the closest definition.
    pub async fn deliver(&self, event: Event) -> Result<(), Undeliverable> {
        self.inner.inbox().deliver(event).await
    }

    /// Tells a standalone `Io` the event definitions of `workflow`, whose run (or sub-flow)
    /// starts on it; generated code calls it. Nothing happens under a host, whose router
    /// checks events itself. The first call checks the events delivered before it.
    ///
    /// # Errors
    /// An `EventError` naming each event delivered before the first call that matches none of
    /// `specs` (they are removed from the inbox).
    pub fn learn_events(
        &self,
        workflow: &'static str,
        specs: &[EventSpec],
    ) -> Result<(), crate::error::ErrorObject> {
        // A plain run's inbox not made yet has had nothing delivered (see `plain_run_io`).
        let Some(inbox) = self.inner.made_inbox() else {
            return Ok(());
        };
        let refused = inbox.learn(workflow, specs);
        if refused.is_empty() {
            return Ok(());
        }
        let reasons: Vec<String> = refused.iter().map(ToString::to_string).collect();
        Err(crate::error::ErrorObject::new(
            super::EVENT_ERROR,
            format!(
                "the run does not start: {} (delivered before it started; make the `Io` with \
                 `Io::standalone_for` to have such events refused at delivery)",
                reasons.join("; ")
            ),
        ))
    }

    /// Takes the events produced so far, in production order. Always empty when they go to a
    /// channel (a hosted instance, or [`IoBuilder::outbox`]).
    pub fn take_produced(&self) -> Vec<Event> {
        match &self.inner.outbox {
            Outbox::Collect(produced) => produced.get().map_or_else(Vec::new, |produced| {
                std::mem::take(&mut *produced.lock().unwrap_or_else(PoisonError::into_inner))
            }),
            Outbox::Channel(_) => Vec::new(),
        }
    }

    /// The wall clock every deadline of the instance is read from.
    pub fn clock(&self) -> &dyn Clock {
        &*self.inner.clock
    }

    /// The clock's current time.
    pub fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    /// Starts the next step through this `Io` (a driver calls it before each step): numbers
    /// it, and restarts the count of the events it produces.
    pub fn begin_step(&self) {
        self.inner.step.fetch_add(1, Ordering::Relaxed);
        self.inner.produced.store(0, Ordering::Relaxed);
    }

    /// The current step's number (see [`Io::begin_step`]).
    pub fn step_number(&self) -> u64 {
        self.inner.step.load(Ordering::Relaxed)
    }

    /// What names this instance in produced event ids and idempotency keys.
    pub(crate) fn id_prefix(&self) -> &str {
        self.inner.id_prefix.get_or_init(|| {
            format!(
                "{}-{}",
                self.deployed_at().as_nanosecond(),
                // 0 without a host, whose instances are numbered from 1: never one of them.
                self.inner
                    .link
                    .as_ref()
                    .map_or(InstanceId::new(0), |link| link.instance)
            )
        })
    }

    /// The sequence numbers of the inbox events taken, and the correlation values bound, since
    /// the last call: what a durable host commits with the step.
    pub(crate) fn drain_taken(&self) -> (Vec<u64>, Vec<(String, String)>) {
        self.inner.inbox().lock().drain_taken()
    }

    /// When the workflow was deployed: where duration-only schedules start counting.
    pub fn deployed_at(&self) -> Timestamp {
        *self
            .inner
            .deployed_at
            .get_or_init(|| self.inner.clock.now())
    }

    /// The correlation values this instance is bound to (attribute → value), a copy.
    pub fn correlation(&self) -> BTreeMap<String, String> {
        self.inner
            .made_inbox()
            .map_or_else(BTreeMap::new, |inbox| inbox.lock().correlation.to_map())
    }

    /// Whether a host routes events to this instance (its registrations reach the host's
    /// router): false for a standalone `Io`.
    pub(crate) fn is_hosted(&self) -> bool {
        self.inner.link.is_some()
    }

    /// The host's identifier of this instance; `None` for a standalone `Io`.
    pub fn instance(&self) -> Option<InstanceId> {
        self.inner.link.as_ref().map(|link| link.instance)
    }

    /// Records in the host's registry that this instance bound `attribute` to `value`, after
    /// the inbox lock that bound it was released (the registry lock comes first otherwise).
    pub(super) fn index(&self, attribute: &str, value: &Arc<str>) {
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
            .field("deployed_at", &self.inner.deployed_at.get())
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
    definitions: Option<Definitions>,
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

    /// The event definitions of `machine`'s workflow, which [`Io::deliver`] then checks every
    /// event against from the first (by default they are learnt when the run starts: see
    /// [`Io`]).
    #[must_use]
    pub fn definitions_of<M: crate::Machine>(mut self, machine: &M) -> Self {
        self.definitions = Some(Definitions::new(machine.workflow_id(), machine.events()));
        self
    }

    /// The `Io`.
    pub fn build(self) -> Io {
        let clock = self.clock.unwrap_or_else(system_clock);
        let deployed_at = OnceLock::from(self.deployed_at.unwrap_or_else(|| clock.now()));
        let capacity = self.inbox_capacity.unwrap_or(DEFAULT_INBOX_CAPACITY);
        let accepting = self
            .definitions
            .map_or(Accepting::Unchecked, Accepting::Defined);
        let inbox = Arc::new(Inbox::accepting(
            capacity,
            self.correlation,
            Vec::new(),
            accepting,
        ));
        let outbox = match self.outbox {
            Some(sender) => Outbox::Channel(sender),
            None => Outbox::Collect(OnceLock::new()),
        };
        // The prefix (`<deployment ns>-0`) is made when first read.
        Io::assemble(IoInner::new(
            OnceLock::from(inbox),
            outbox,
            clock,
            deployed_at,
            None,
        ))
    }
}

impl fmt::Debug for IoBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IoBuilder")
            .field("deployed_at", &self.deployed_at)
            .field("inbox_capacity", &self.inbox_capacity)
            .field("correlation", &self.correlation)
            .field("definitions", &self.definitions)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain run's `Io` reads the clock for its deployment instant when first asked, once;
    /// any other standalone `Io` when it is made (a scheduled start counts from it).
    #[test]
    fn a_plain_runs_io_reads_its_deployment_when_first_asked() {
        let io = plain_run_io();
        assert_eq!(io.inner.deployed_at.get(), None, "read when made");
        let before = system_clock().now();
        let deployed = io.deployed_at();
        assert!(deployed >= before, "{deployed} is before {before}");
        assert_eq!(io.deployed_at(), deployed);
        assert_eq!(io.id_prefix(), format!("{}-0", deployed.as_nanosecond()));

        let standalone = Io::standalone();
        assert!(standalone.inner.deployed_at.get().is_some());
    }

    /// A plain run's `Io` that nothing else holds any more is made new again for the next
    /// plain run on the thread: nothing the last run did shows (its steps, events produced,
    /// deployment instant, name, inbox). One still held elsewhere is left alone.
    #[tokio::test(start_paused = true)]
    async fn a_plain_runs_io_is_made_new_again_for_the_next_run() {
        let first = plain_run_io();
        let address = Arc::as_ptr(&first.inner);
        first.begin_step();
        first.begin_step();
        first.inner.produced.fetch_add(3, Ordering::Relaxed);
        first.inner.detached.fetch_add(1, Ordering::Relaxed);
        let name = first.id_prefix().to_owned();
        let wait = crate::progress::Wait {
            until: Some(first.now()),
            events: Vec::new(),
        };
        assert!(first.wait_for(&wait, 0).await);
        assert!(first.inner.made_inbox().is_some());
        drop(first);
        // The system clock follows tokio's, paused here.
        tokio::time::advance(std::time::Duration::from_secs(1)).await;
        let second = plain_run_io();
        assert_eq!(Arc::as_ptr(&second.inner), address, "the same allocation");
        let new = plain_run_io();
        for (io, what) in [(&second, "made new again"), (&new, "new")] {
            assert_eq!(io.step_number(), 0, "{what}");
            assert_eq!(io.inner.produced.load(Ordering::Relaxed), 0, "{what}");
            assert_eq!(io.inner.detached.load(Ordering::Relaxed), 0, "{what}");
            assert!(io.inner.made_inbox().is_none(), "{what}");
            assert_eq!(io.inner.deployed_at.get(), None, "{what}");
            assert!(io.inner.id_prefix.get().is_none(), "{what}");
            assert!(
                io.inner.link.is_none() && io.inner.children.is_none(),
                "{what}"
            );
        }
        assert_ne!(second.id_prefix(), name, "its name read anew");
        drop(new);
        drop(second);

        let held = plain_run_io();
        let address = Arc::as_ptr(&held.inner);
        held.begin_step();
        let kept = Io::clone(&held);
        drop(held);
        assert_eq!(kept.step_number(), 1, "what is still held is left alone");
        assert_ne!(Arc::as_ptr(&plain_run_io().inner), address);
    }
}
