//! [`DurableHost`]: instances that outlive the process. Every transition is committed to a
//! [`Store`] with what it consumed and produced; a waiting instance is a row, not a future; any
//! number of workers (processes, machines) share the instances of a store.
//!
//! The host runs the same compiled state machine as `run` does, one step at a time: it claims
//! an instance that has work (a lease names the worker), loads its state, steps it with an
//! [`Io`](crate::Io) holding its stored inbox, and commits the new state together with the
//! events the step took, the events it produced (into the outbox) and its new waits, in one
//! transaction that checks the instance's revision. A crash loses at most the step in
//! progress, which runs again (its function calls are at least once, with the same
//! idempotency keys). An instance that waits is committed as waiting, with its deadline and
//! the definitions it waits for, and dropped from memory; an incoming event (stored before it
//! is acknowledged) or its deadline makes it runnable again.

mod batch;
mod codec;
mod config;
mod driver;
mod report;
mod routing;
mod text;
mod worker;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cloudevents::Event;
use jiff::Timestamp;
use serde_json::Value;
use tokio::sync::{Notify, broadcast};

pub use config::{DurableConfig, ProbePoint};
pub use report::{Discard, Ended, EventSink, Report};
pub use text::MAX_STORED_KEY_BYTES;

use crate::clock::after;
use crate::error::WorkflowError;
use crate::events::Io;
use crate::host::{InstanceId, Machine};
use crate::store::{
    Claimed, Commit, CommitResult, Definition, Delivery, InstanceRecord, Lease, NewInstance,
    Routed, Status, Store, StoreError, StoredEvent, Versions, WakeClaim,
};
use batch::Batcher;

/// The error name of a failure of the durable host itself (a state it cannot save).
pub const DURABLE_ERROR: &str = "DurableHostError";

/// Runs the instances of one compiled workflow on a [`Store`], durably: every transition is
/// committed with the events it took and produced, a waiting instance is a row rather than a
/// future, and any number of workers (processes, machines) share the instances of a store.
/// Cloning is cheap and shares the host.
///
/// ```ignore
/// let store = SqliteStore::open("orders.db").await?;
/// let host = DurableHost::open(OrderWorkflow::new(Shop), store, DurableConfig::default()).await?;
/// let id = host.start(json!({"orderId": 7})).await?;
/// tokio::spawn({ let host = host.clone(); async move { host.run(Discard, std::future::pending()).await } });
/// let ended = host.wait(id).await?;
/// ```
pub struct DurableHost<M: Machine, S: Store> {
    inner: Arc<Inner<M, S>>,
}

impl<M: Machine, S: Store> Clone for DurableHost<M, S> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct Inner<M, S> {
    machine: M,
    store: S,
    config: DurableConfig,
    definition: Definition,
    /// The instances this worker steps: of its own version when pinned, else of any.
    versions: Versions,
    /// When the workflow's definition was first registered in the store: where duration-only
    /// schedules count from, for every worker.
    deployed_at: Timestamp,
    commits: Batcher<Commit, CommitResult>,
    deliveries: Batcher<Delivery, Routed>,
    creations: Batcher<NewInstance, InstanceId>,
    reports: broadcast::Sender<Report>,
    /// New local work for the worker loop: instances handed over, instances woken.
    work: Notify,
    /// New events in the outbox.
    produced: Notify,
    shared: Arc<Shared>,
}

/// What the worker loop of this process learns without asking the store.
#[derive(Default)]
struct Local {
    /// Instances created here, leased to this worker, to step at once.
    handoff: Vec<Claimed>,
    /// Instances an event delivered here made runnable.
    woken: BTreeSet<InstanceId>,
    /// The instances being stepped here, with the events delivered here to them meanwhile.
    in_flight: BTreeMap<InstanceId, InFlight>,
    /// The last driver spawned here (see [`InFlight::driver`]).
    drivers: u64,
    /// Starts in progress that lease their instance to this worker: slots taken before the
    /// store answers, so that starts made at once do not all find the same free slot.
    reserved: usize,
}

/// An instance a driver of this process steps.
struct InFlight {
    /// Which driver: an instance that one driver released may be claimed again and a new
    /// driver spawned before the worker loop hears that the first one ended; only its own
    /// entry goes with it.
    driver: u64,
    /// The events delivered here to it meanwhile.
    mailbox: Vec<StoredEvent>,
}

/// A slot a start took for the instance it leases to this worker: given back when the start
/// hands the instance over or fails (or is dropped).
struct Reserved<'a> {
    shared: &'a Shared,
}

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        let mut local = self.shared.local();
        local.reserved = local.reserved.saturating_sub(1);
    }
}

/// What the worker loop shares with the task that sends deliveries to the store, which asks
/// the store to lease the instances a delivery wakes to this worker while it has room.
struct Shared {
    local: Mutex<Local>,
    /// A worker loop runs in this process: instances created here are stepped here at once
    /// while it has a free slot.
    running: AtomicBool,
    /// The worker loop is stopping: steps in progress commit and release their instances.
    stopping: AtomicBool,
}

impl Shared {
    fn local(&self) -> MutexGuard<'_, Local> {
        // Every critical section leaves `Local` consistent before anything that could panic.
        self.local.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a worker loop runs in this process and is not stopping: what it is handed or
    /// told of, it steps.
    fn steps_here(&self) -> bool {
        self.running.load(Ordering::Acquire) && !self.stopping.load(Ordering::Acquire)
    }

    /// How many deliveries of a batch may ask the store to lease what they wake to this
    /// worker (and whether a start here may lease its instance to it): while it steps
    /// instances here, its free slots, `max` less the instances it steps and those handed
    /// over and not yet stepped. A busy worker leases nothing more: what it would hold waiting
    /// for a slot (its lease renewed) no idle worker could take. (Those of the batch before may
    /// not have been handed over yet: at most two batches' worth wait, each instance a few
    /// KB.)
    fn lease_room(&self, max: usize) -> usize {
        if !self.steps_here() {
            return 0;
        }
        let local = self.local();
        max.saturating_sub(local.handoff.len() + local.in_flight.len() + local.reserved)
    }
}

/// Why an instance could not be started.
#[derive(Debug, Clone, PartialEq)]
pub enum StartError {
    /// The workflow refused the input (not an object, a scheduled start outside its window).
    Refused(WorkflowError),
    /// The store failed. With
    /// [`StoreErrorKind::Unavailable`](crate::store::StoreErrorKind::Unavailable) the instance
    /// may have been created all the same (the answer was lost): a start that must happen once
    /// is made with [`DurableHost::start_keyed`] and retried.
    Store(StoreError),
    /// [`DurableHost::start_keyed`]: the key names an instance started with another input.
    KeyTaken {
        /// The key.
        key: String,
        /// The instance it names.
        instance: InstanceId,
    },
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Refused(error) => write!(f, "the workflow refused to start: {error}"),
            StartError::Store(error) => write!(f, "the store failed: {error}"),
            StartError::KeyTaken { key, instance } => write!(
                f,
                "the start key {key:?} names instance {instance}, started with another input"
            ),
        }
    }
}

impl std::error::Error for StartError {}

impl<M: Machine, S: Store> DurableHost<M, S> {
    /// A host of `machine`'s instances in `store`. Registers the definition (its id, version and
    /// hash) and learns when the workflow was first deployed. Must be called on a tokio
    /// runtime: the host's batching tasks run on it.
    ///
    /// # Errors
    /// The store's error; [`StoreErrorKind::Invalid`](crate::store::StoreErrorKind::Invalid)
    /// for a worker name that holds U+0000 (no store holds it alike).
    pub async fn open(machine: M, store: S, config: DurableConfig) -> Result<Self, StoreError> {
        text::refuse_unstorable_worker(&config.worker)?;
        let definition = Definition {
            workflow: machine.workflow_id().to_owned(),
            version: machine.version().map(str::to_owned),
            hash: machine.definition_hash().to_owned(),
        };
        let deployed_at = store.register(&definition, config.clock.now()).await?;
        let versions = if config.pinned {
            Versions::Only(definition.version.clone())
        } else {
            Versions::Any
        };
        let batch = config.batch;
        let clock = Arc::clone(&config.clock);
        let commits = {
            let (store, clock) = (store.clone(), Arc::clone(&clock));
            Batcher::spawn(batch, move |commits| {
                let (store, now) = (store.clone(), clock.now());
                async move { store.commit(commits, now).await }
            })
        };
        let shared = Arc::new(Shared {
            local: Mutex::default(),
            running: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
        });
        let deliveries = {
            let (store, clock, shared) = (store.clone(), Arc::clone(&clock), Arc::clone(&shared));
            let (worker, lease, max) = (config.worker.clone(), config.lease, config.max_in_flight);
            let versions = versions.clone();
            Batcher::spawn(batch, move |mut deliveries: Vec<Delivery>| {
                // Decided per batch, not per call of `deliver`: a caller queued behind a full
                // batch would otherwise have found no room when it called.
                let room = shared.lease_room(max);
                for delivery in deliveries.iter_mut().take(room) {
                    delivery.claim = Some(WakeClaim {
                        worker: worker.clone(),
                        lease,
                        limit: 1,
                        versions: versions.clone(),
                    });
                }
                let (store, now) = (store.clone(), clock.now());
                async move { store.deliver(deliveries, now).await }
            })
        };
        let creations = {
            let (store, clock) = (store.clone(), Arc::clone(&clock));
            Batcher::spawn(batch, move |instances| {
                let (store, now) = (store.clone(), clock.now());
                async move { store.create(instances, now).await }
            })
        };
        let (reports, _) = broadcast::channel(1024);
        Ok(Self {
            inner: Arc::new(Inner {
                machine,
                store,
                config,
                definition,
                versions,
                deployed_at,
                commits,
                deliveries,
                creations,
                reports,
                work: Notify::new(),
                produced: Notify::new(),
                shared,
            }),
        })
    }

    /// Creates an instance from `input`. Once this returns, the instance is in the store: a
    /// worker steps it (this process's at once, when it runs [`DurableHost::run`] and has a
    /// free slot).
    ///
    /// # Errors
    /// The workflow's refusal of the input, or the store's error.
    pub async fn start(&self, input: Value) -> Result<InstanceId, StartError> {
        self.start_correlated(input, BTreeMap::new()).await
    }

    /// Like [`DurableHost::start`], with the instance bound to `correlation` (attribute →
    /// value) from the start, so that correlated events reach it before it waits for them.
    ///
    /// # Errors
    /// As [`DurableHost::start`]; [`StoreErrorKind::Invalid`](crate::store::StoreErrorKind::Invalid)
    /// when an attribute or a value of `correlation` holds U+0000 or is longer than
    /// [`MAX_STORED_KEY_BYTES`] (no store holds it alike).
    pub async fn start_correlated(
        &self,
        input: Value,
        correlation: BTreeMap<String, String>,
    ) -> Result<InstanceId, StartError> {
        self.start_with(input, correlation, None).await
    }

    /// Like [`DurableHost::start_correlated`], at most once per `key`: when an instance of this
    /// workflow was started with `key` and the same input before, nothing starts and its id is
    /// returned, so a start whose answer was lost (`Unavailable`: the store may have created
    /// the instance) is safe to retry; a start without a key may start a second instance.
    /// Another input under a taken key is refused, as a Step Functions execution name is. Keys
    /// are kept as long as the store keeps the instance, ended or not. The input is compared
    /// as JSON (the order of members aside); the correlation is not compared.
    ///
    /// # Errors
    /// As [`DurableHost::start_correlated`]; [`StartError::KeyTaken`] when the key's instance
    /// was started with another input;
    /// [`StoreErrorKind::Invalid`](crate::store::StoreErrorKind::Invalid) when `key` holds
    /// U+0000 or is longer than [`MAX_STORED_KEY_BYTES`].
    pub async fn start_keyed(
        &self,
        key: &str,
        input: Value,
        correlation: BTreeMap<String, String>,
    ) -> Result<InstanceId, StartError> {
        text::refuse_unstorable_start_key(key).map_err(StartError::Store)?;
        self.start_with(input, correlation, Some(key.to_owned()))
            .await
    }

    async fn start_with(
        &self,
        input: Value,
        correlation: BTreeMap<String, String>,
        start_key: Option<String>,
    ) -> Result<InstanceId, StartError> {
        text::refuse_unstorable_correlation(&correlation).map_err(StartError::Store)?;
        let mut instance = self
            .new_instance(input, correlation.into_iter().collect())
            .map_err(StartError::Refused)?;
        // A keyed start may find the key's instance already there (leased to another worker,
        // or ended): this worker claims it by id as an event would wake it, which takes it
        // only if it has work and no live lease.
        let mut slot = None;
        if start_key.is_none()
            && let Some((lease, reserved)) = self.local_lease()
        {
            instance.lease = Some(lease);
            slot = Some(reserved);
        }
        instance.start_key = start_key;
        let id = self
            .inner
            .creations
            .ask(instance.clone())
            .await
            .map_err(StartError::Store)?;
        if let Some(key) = &instance.start_key {
            self.same_start(key, id, &instance.detail).await?;
        }
        match instance.lease.clone() {
            Some(lease) => {
                let now = self.now();
                let record = InstanceRecord {
                    id,
                    definition: instance.definition,
                    status: Status::Runnable,
                    state: instance.state,
                    position: instance.position,
                    revision: 0,
                    wake_at: None,
                    waits: Vec::new(),
                    correlation: instance.correlation,
                    parent: None,
                    lease: Some(lease),
                    outcome: None,
                    created_at: now,
                    updated_at: now,
                    start_key: instance.start_key,
                };
                self.local().handoff.push(Claimed {
                    record,
                    inbox: Vec::new(),
                });
            }
            None if self.inner.shared.steps_here() => {
                self.local().woken.insert(id);
            }
            // Another worker, or this process's once it runs, claims it from the store.
            None => {}
        }
        // Handed over: the instance counts among the handoff now.
        drop(slot);
        self.inner.work.notify_one();
        Ok(id)
    }

    /// Whether instance `id`, which a start with `key` made or found, was started as `detail`
    /// says (with its input): then this start made it or repeats the one that did.
    async fn same_start(
        &self,
        key: &str,
        id: InstanceId,
        detail: &Value,
    ) -> Result<(), StartError> {
        let history = self
            .inner
            .store
            .history(id)
            .await
            .map_err(StartError::Store)?;
        match history.first() {
            Some(started) if started.detail == *detail => Ok(()),
            _ => Err(StartError::KeyTaken {
                key: key.to_owned(),
                instance: id,
            }),
        }
    }

    /// Stores `event` and routes it (see [`Delivery`]): to the instances correlated with it,
    /// else to the one that waited longest for its definition, else it starts an instance when
    /// it is a starting event. When this returns `Ok`, the event is durable and may be
    /// acknowledged to its sender; an event whose `source` and `id` this workflow already
    /// received is reported as a duplicate and changes nothing.
    ///
    /// While this process runs a worker with a free slot, the store leases an instance the event
    /// wakes to it in the same transaction and this worker steps it at once; the returned
    /// [`Routed::Delivered`] still lists it in `woken`, and its `claimed` is empty (the records
    /// went to the worker).
    ///
    /// # Errors
    /// The store's error: the event was not stored, do not acknowledge it.
    /// [`StoreErrorKind::Invalid`](crate::store::StoreErrorKind::Invalid), on every store,
    /// for an event whose id, source or correlation value holds U+0000 (CloudEvents does not
    /// allow it, PostgreSQL cannot store it) or is longer than [`MAX_STORED_KEY_BYTES`] (the
    /// stores index them), or whose data a store would not give back as it is: JSON data under
    /// a content type the CloudEvents reader takes for text (`text/plain`, say), bytes without
    /// a content type. Such an event is never stored, do not retry it. (Text under a JSON
    /// content type that parses is stored as that JSON, as every step reads it.)
    pub async fn deliver(&self, event: Event) -> Result<Routed, StoreError> {
        let event = crate::events::with_json_text_parsed(event);
        let delivery = self.delivery(event.clone());
        text::refuse_unstorable_event(&delivery)?;
        // The drivers that may have read their inbox before this event is stored (see
        // `routed`).
        let drivers = self.local().drivers;
        let mut routed = self.inner.deliveries.ask(delivery).await?;
        if let Routed::Unmatched { reason, .. } = &mut routed {
            self.unmatched_reason(&event, reason);
        }
        self.inner.config.at(ProbePoint::Stored);
        self.routed(event, &mut routed, drivers);
        Ok(routed)
    }

    /// What became of an instance: `None` while it runs or waits.
    ///
    /// # Errors
    /// The store's error, or `NotFound`.
    pub async fn outcome(&self, id: InstanceId) -> Result<Option<Ended>, StoreError> {
        let claimed = self.inner.store.instance(id).await?.ok_or_else(|| {
            StoreError::new(
                crate::store::StoreErrorKind::NotFound,
                format!(
                    "there is no instance {id}: none was created with this id, or it ended \
                     longer than the retention ago and was purged"
                ),
            )
        })?;
        Ok(Ended::of(
            claimed.record.status,
            claimed.record.outcome.as_ref(),
        ))
    }

    /// Waits until instance `id` has ended (stepped by any worker), and says how.
    ///
    /// # Errors
    /// As [`DurableHost::outcome`].
    pub async fn wait(&self, id: InstanceId) -> Result<Ended, StoreError> {
        let mut reports = self.inner.reports.subscribe();
        loop {
            if let Some(ended) = self.outcome(id).await? {
                return Ok(ended);
            }
            // This worker reports its own instances' ends; another worker's are polled for.
            let poll = self.inner.config.poll;
            let _ = tokio::time::timeout(poll, async {
                loop {
                    match reports.recv().await {
                        Ok(Report::Ended { instance, .. }) if instance == id => return,
                        Err(broadcast::error::RecvError::Closed) => {
                            std::future::pending::<()>().await;
                        }
                        _ => {}
                    }
                }
            })
            .await;
        }
    }

    /// What this host reports from now on (ends, unmatched events, refusals, store errors).
    /// A receiver that falls behind loses the oldest reports, never any instance's data.
    pub fn reports(&self) -> broadcast::Receiver<Report> {
        self.inner.reports.subscribe()
    }

    /// The compiled workflow.
    pub fn machine(&self) -> &M {
        &self.inner.machine
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.inner.store
    }

    /// The definition this host runs, as instances record it.
    pub fn definition(&self) -> &Definition {
        &self.inner.definition
    }

    /// When the workflow was first deployed on this store.
    pub fn deployed_at(&self) -> Timestamp {
        self.inner.deployed_at
    }

    fn now(&self) -> Timestamp {
        self.inner.config.clock.now()
    }

    fn local(&self) -> MutexGuard<'_, Local> {
        self.inner.shared.local()
    }

    fn report(&self, report: Report) {
        // Nobody listening is fine: the store keeps what matters.
        let _ = self.inner.reports.send(report);
    }

    /// A lease for an instance created here, when this process steps instances and has a free
    /// slot, which the start holds (see [`Local::reserved`]) until it hands the instance over.
    /// Not while the loop stops (it would not step what it was handed), nor while it has no
    /// free slot (it would hold the instance from the other workers until it has one).
    fn local_lease(&self) -> Option<(Lease, Reserved<'_>)> {
        let shared = &self.inner.shared;
        if shared.lease_room(self.inner.config.max_in_flight) == 0 {
            return None;
        }
        shared.local().reserved += 1;
        let lease = Lease {
            worker: self.inner.config.worker.clone(),
            until: after(self.now(), self.inner.config.lease),
        };
        Some((lease, Reserved { shared }))
    }

    /// The `Io` of one step of instance `name` at `revision`, holding `inbox` and bound to
    /// `correlation`.
    fn io_for(
        &self,
        revision: u64,
        name: &str,
        inbox: Vec<(u64, Timestamp, Event)>,
        correlation: &[(String, String)],
    ) -> Io {
        Io::durable(
            format!("{}-{name}", self.inner.definition.workflow),
            revision,
            inbox,
            correlation.iter().cloned().collect(),
            Arc::clone(&self.inner.config.clock),
            self.inner.deployed_at,
        )
    }

    /// Acts on how the store routed `event`: events for instances stepped here join their
    /// inboxes at once, woken and started instances are stepped, unmatched events reported.
    /// Tells this process what a delivery did. Its event goes to the mailbox of an instance a
    /// driver steps here only if that driver was spawned before the delivery was sent (numbers
    /// up to `drivers`): it may have read its inbox before the event was stored. A later one
    /// read it after (the event is there, and it may have taken it already), or before the
    /// event was stored by a claim that began earlier, in which case the store marked the
    /// instance (`nudged`) and its next wait is made runnable again.
    fn routed(&self, event: Event, routed: &mut Routed, drivers: u64) {
        match routed {
            Routed::Delivered {
                seq,
                instances,
                woken,
                claimed,
            } => {
                let mut local = self.local();
                for instance in instances {
                    if let Some(in_flight) = local
                        .in_flight
                        .get_mut(instance)
                        .filter(|in_flight| in_flight.driver <= drivers)
                    {
                        in_flight.mailbox.push(StoredEvent {
                            seq: *seq,
                            event: event.clone(),
                            received_at: self.now(),
                        });
                    }
                }
                // The instances leased to this worker are stepped from the records the store
                // returned (the caller keeps their ids in `woken`); the others are claimed.
                let leased: BTreeSet<InstanceId> =
                    claimed.iter().map(|claimed| claimed.record.id).collect();
                local.handoff.append(claimed);
                // Only a loop that runs here takes them out again.
                if self.inner.shared.steps_here() {
                    local.woken.extend(
                        woken
                            .iter()
                            .copied()
                            .filter(|instance| !leased.contains(instance)),
                    );
                }
                drop(local);
                if !woken.is_empty() {
                    self.inner.work.notify_one();
                }
            }
            Routed::Started { instance, .. } => {
                if self.inner.shared.steps_here() {
                    self.local().woken.insert(*instance);
                }
                self.inner.work.notify_one();
            }
            Routed::Unmatched { reason, .. } => self.report(Report::Unmatched {
                event: Box::new(event),
                reason: reason.clone(),
            }),
            Routed::Duplicate { .. } | Routed::Grouped { .. } => {}
        }
    }
}
