//! The records a [`Store`](super::Store) keeps and the requests it answers.

use std::fmt;
use std::time::Duration;

use cloudevents::Event;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::host::InstanceId;

/// Which compiled definition an instance runs: the workflow's `id` and `version`, and a hash of
/// the definition (so that a host can tell an instance started by another definition).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Definition {
    /// The workflow's `id`.
    pub workflow: String,
    /// The workflow's `version`, when it has one.
    pub version: Option<String>,
    /// A hash of the definition, as generated code declares it (hex).
    pub hash: String,
}

/// Where an instance is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It has a step to run now.
    Runnable,
    /// It waits for an event or a deadline (`wake_at`); it holds no memory in any host.
    Waiting,
    /// It ended with an output.
    Completed,
    /// It halted on an error that nothing handled; [`Store::redrive`](super::Store::redrive)
    /// resumes it from its last committed state, with the inbox and correlation bindings it
    /// keeps meanwhile.
    Failed,
    /// An operator cancelled it.
    Cancelled,
}

impl Status {
    /// Every status, in lifecycle order.
    pub const ALL: [Status; 5] = [
        Status::Runnable,
        Status::Waiting,
        Status::Completed,
        Status::Failed,
        Status::Cancelled,
    ];

    /// Its name as shown: `runnable`, `waiting`, `completed`, `failed`, `cancelled`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Runnable => "runnable",
            Status::Waiting => "waiting",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    /// The status named `name` (as [`Status::as_str`] writes it).
    pub fn parse(name: &str) -> Option<Status> {
        Status::ALL
            .into_iter()
            .find(|status| status.as_str() == name)
    }

    /// Whether the instance has ended: completed, failed or cancelled.
    pub const fn has_ended(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Cancelled)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A lease: which worker may commit an instance's next transition, and until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The worker's name, unique among the workers sharing a store.
    pub worker: String,
    /// When the lease expires; another worker may claim the instance from then on.
    pub until: Timestamp,
}

/// An instance to create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewInstance {
    /// The definition it runs.
    pub definition: Definition,
    /// Its first state, serialized by the host (JSON text).
    pub state: String,
    /// Where it is, for people: task names and scope path (`Fork/branch 1/Charge`).
    pub position: String,
    /// `Runnable` or `Waiting`.
    pub status: Status,
    /// When a waiting instance must be stepped even without an event (its earliest deadline).
    pub wake_at: Option<Timestamp>,
    /// The event definitions (by name) it waits for.
    pub waits: Vec<String>,
    /// Correlation values it is bound to from the start (attribute, value).
    pub correlation: Vec<(String, String)>,
    /// Stored events (by [`StoredEvent::seq`]) that start in its inbox: the events that created
    /// it. (A [`StartPlan`]'s instance gets its events without naming them here.)
    pub inbox: Vec<u64>,
    /// The instance that started it (a detached sub-flow or branch), if any.
    pub parent: Option<InstanceId>,
    /// A lease taken at creation, so that the creating worker steps it without claiming it.
    pub lease: Option<Lease>,
    /// What the `Started` history entry records (the input, for instance).
    pub detail: Value,
    /// The caller's name for this start: an instance of the same workflow created with the
    /// same key is this one, and is not created again (see
    /// [`Store::create`](super::Store::create)).
    pub start_key: Option<String>,
}

/// An instance as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceRecord {
    /// Its id.
    pub id: InstanceId,
    /// The definition it runs.
    pub definition: Definition,
    /// Its status.
    pub status: Status,
    /// Its last committed state (JSON text).
    pub state: String,
    /// Its position, for people.
    pub position: String,
    /// How many transitions were committed (0 when created).
    pub revision: u64,
    /// When it must be stepped even without an event.
    pub wake_at: Option<Timestamp>,
    /// The event definitions it waits for.
    pub waits: Vec<String>,
    /// The correlation values it is bound to, sorted by attribute.
    pub correlation: Vec<(String, String)>,
    /// The instance that started it, if any.
    pub parent: Option<InstanceId>,
    /// Its current lease, if any (possibly expired).
    pub lease: Option<Lease>,
    /// The output of a completed instance, the error of a failed one (with its data), or
    /// `{"reason": ...}` for a cancelled one.
    pub outcome: Option<Value>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
    /// The key it was started with ([`NewInstance::start_key`]), if any.
    pub start_key: Option<String>,
}

/// An event as stored: its sequence number (store-wide, increasing in arrival order) and when
/// it was received.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    /// Its sequence number.
    pub seq: u64,
    /// The CloudEvent.
    pub event: Event,
    /// When the store received it.
    pub received_at: Timestamp,
}

/// A claimed instance: its record and its inbox, oldest event first.
#[derive(Debug, Clone, PartialEq)]
pub struct Claimed {
    /// The instance.
    pub record: InstanceRecord,
    /// The events in its inbox.
    pub inbox: Vec<StoredEvent>,
}

/// One committed transition of an instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    /// The instance.
    pub instance: InstanceId,
    /// The worker whose lease allows the commit.
    pub worker: String,
    /// The revision the step started from; the commit makes it `revision + 1`.
    pub revision: u64,
    /// The new state (JSON text).
    pub state: String,
    /// `Some`: the instance runs this definition from now on (a worker of another release of
    /// the workflow resumed it); `None`: it keeps its definition.
    pub definition: Option<Definition>,
    /// The new position, for people.
    pub position: String,
    /// The new status. An ended status removes the instance's waits; `Completed` and
    /// `Cancelled` also its correlation bindings (so that its values route to no instance that
    /// will never take them) and inbox, while `Failed` keeps both for a redrive (see
    /// [`Store::commit`](super::Store::commit)). `Waiting` is stored as
    /// `Runnable` when any event reached its inbox after it was last claimed: the step could
    /// not see that event (whatever the instance waited for when the step began, the step may
    /// end waiting for it), so the instance must run again to look.
    pub status: Status,
    /// When to step it even without an event.
    pub wake_at: Option<Timestamp>,
    /// The event definitions it now waits for (replacing the previous ones; a definition it
    /// already waited for keeps its age, which decides who waited longest).
    pub waits: Vec<String>,
    /// Correlation values it bound in this step (attribute, value); an attribute already bound
    /// keeps its value.
    pub bind: Vec<(String, String)>,
    /// The inbox events (by seq) the step consumed: removed from its inbox, unless the status
    /// is `Failed` (the step is not committed, and runs again after a redrive).
    pub consumed: Vec<u64>,
    /// The events the step produced, appended to the outbox in this order. Each has its final,
    /// stable id.
    pub produced: Vec<Event>,
    /// Instances the step started (detached sub-flows and branches).
    pub children: Vec<NewInstance>,
    /// The output of a completed instance, the error of a failed one.
    pub outcome: Option<Value>,
    /// `Some(until)`: the worker keeps its lease until then (it steps the instance again at
    /// once); `None`: the lease is released.
    pub lease_until: Option<Timestamp>,
    /// What the history records of this transition (its `revision` is ignored: the store
    /// writes `revision + 1`).
    pub history: HistoryEntry,
    /// `Some(through)`: the store also removes the instance's oldest history entries of
    /// revisions 1 to `through`, at most [`MAX_TRIMMED_PER_COMMIT`] of them, keeping its first
    /// (`Started`, which holds the input), its `Failed` and `Redriven` entries (why it failed,
    /// which its record no longer says once redriven) and the one this commit writes (a
    /// `through` at or past it counts as the revision before it). A worker with a
    /// [`history_limit`](crate::DurableConfig::history_limit) sets it.
    pub trim_history_through: Option<u64>,
}

/// The most history entries one commit removes ([`Commit::trim_history_through`]): a limit
/// set on an instance with a long history removes its backlog over several commits, each a
/// short transaction, never in one that holds up every commit batched with it.
pub const MAX_TRIMMED_PER_COMMIT: u64 = 1_024;

/// What became of one [`Commit`].
#[derive(Debug, Clone, PartialEq)]
pub enum CommitResult {
    /// Committed.
    Committed {
        /// The new revision.
        revision: u64,
        /// The ids of the children created, in order.
        children: Vec<InstanceId>,
        /// For an instance that completed or was cancelled: the events left in its inbox (but
        /// those it consumed), which it will never take. Empty for one that failed, which keeps
        /// its inbox for a redrive, and for one that has not ended.
        leftovers: Vec<StoredEvent>,
    },
    /// Not committed: the instance is not at that revision or not leased to that worker (another
    /// worker took it over, or an operator cancelled it). Nothing was written.
    Conflict {
        /// What the store found (`revision 7, leased to worker-b`).
        found: String,
    },
}

/// One incoming event and how to route it.
///
/// The store routes it as follows, and records the result (also for duplicates to come):
///
/// 1. For each target with a correlation value `v` for attribute `a`: every instance of the
///    workflow bound to `a = v` receives it. Completed and cancelled instances are bound to
///    nothing; a failed one keeps its bindings, so that the events of its values wait in its
///    inbox (they do not wake it) for a redrive, rather than binding another instance or going
///    unmatched.
/// 2. Otherwise, for that same target: with a correlation attribute, the instance that has
///    waited longest for the target's definition among those not bound for `a` receives it
///    and is bound to `a = v` (if there is one); without a correlation attribute, every
///    instance waiting for the definition receives it. A target whose event lacks its
///    correlation value (`Some((a, None))`) reaches nobody.
/// 3. The union over the targets receives it (each instance once). Receiving means an inbox row;
///    a receiver that waits for the event's definition and has status `Waiting` becomes
///    `Runnable`.
/// 4. If nobody received it and [`Delivery::start`] is set: it starts an instance, or joins a
///    start group (see [`StartPlan`]).
/// 5. Else it is unmatched, with [`Delivery::unmatched`] as the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// The workflow whose instances may receive it. Duplicates are detected per workflow.
    pub workflow: String,
    /// The event.
    pub event: Event,
    /// The workflow's event definitions it matches, in document order.
    pub targets: Vec<Target>,
    /// What it does when no instance receives it.
    pub start: Option<StartPlan>,
    /// Why it reaches nobody, when it reaches nobody and starts nothing; returned as it is in
    /// [`Routed::Unmatched`]. A host may leave it empty and say why once it knows the event
    /// reached nobody.
    pub unmatched: String,
    /// `Some`: the instances it wakes are leased at once to a worker that steps them (see
    /// [`WakeClaim`]), which then needs no claim of its own.
    pub claim: Option<WakeClaim>,
}

/// A worker's request to lease the instances a delivery wakes, in the same transaction that
/// stores the event: it saves the worker a claim and a second read of each instance.
///
/// Of the instances the delivery makes `Runnable`, those without a live lease (absent, or
/// expired: `until < now`) and of a version `versions` admits are leased to `worker` until `now + lease`, at most `limit` of them
/// (lowest ids first), and returned in [`Routed::Delivered::claimed`] with their inbox, as
/// [`Store::claim_ids`](super::Store::claim_ids) would return them. The others stay runnable
/// for any worker to claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WakeClaim {
    /// The worker the instances are leased to.
    pub worker: String,
    /// How long the lease lasts.
    pub lease: Duration,
    /// The most instances to lease (the worker's free slots).
    pub limit: usize,
    /// Of which versions: a woken instance of another is woken, not leased.
    pub versions: Versions,
}

/// Which instances of a workflow a worker steps, by the version of the definition each runs
/// (the workflow's `version`, as [`Definition::version`] records it).
///
/// [`Versions::Any`] lets a worker resume an instance that another definition started, as long
/// as its own definition has the task the instance stands at; [`Versions::Only`] pins it to
/// the instances of one version, as Step Functions runs an execution on the version it started
/// with and Temporal's pinned workflows stay on their build.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum Versions {
    /// Every version.
    #[default]
    Any,
    /// Only the instances whose definition has this version (`None`: a definition without
    /// one).
    Only(Option<String>),
}

impl Versions {
    /// Whether an instance whose definition has `version` is among these.
    #[must_use]
    pub fn admit(&self, version: Option<&str>) -> bool {
        match self {
            Versions::Any => true,
            Versions::Only(only) => only.as_deref() == version,
        }
    }

    /// `Some(version)` when pinned to one (a store's query parameter), `None` for every version.
    #[must_use]
    pub fn pinned(&self) -> Option<Option<&str>> {
        match self {
            Versions::Any => None,
            Versions::Only(only) => Some(only.as_deref()),
        }
    }
}

/// A definition an event matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The definition's name.
    pub definition: String,
    /// The definition's correlation attribute and the event's value for it (`None` when the
    /// event lacks it); `None` for a definition without a correlation token.
    pub correlation: Option<(String, Option<String>)>,
}

/// How an event that no instance received starts one.
#[derive(Debug, Clone, PartialEq)]
pub enum StartPlan {
    /// It creates `instance` at once, with the event in its inbox.
    Now(NewInstance),
    /// It joins the start group of `key` (its correlation values, rendered by the host) as the
    /// event of definition `this`. Once the oldest group of that key that lacks `this` holds one
    /// event of every definition of `needed`, it creates `instance` with the group's events in
    /// its inbox (in arrival order). A group whose last event is older than `timeout` expires
    /// ([`Store::expire_start_groups`](super::Store::expire_start_groups)) and is not completed.
    Group {
        /// The group key.
        key: String,
        /// The definition this event fulfils.
        this: String,
        /// Every definition a group needs.
        needed: Vec<String>,
        /// How long after each of its events the next must arrive.
        timeout: Option<Duration>,
        /// The instance a complete group creates.
        instance: NewInstance,
    },
}

/// What became of one [`Delivery`].
#[derive(Debug, Clone, PartialEq)]
pub enum Routed {
    /// The workflow had already received an event with this `source` and `id`; nothing changed.
    Duplicate {
        /// The stored event's sequence number.
        seq: u64,
    },
    /// Stored in the inboxes of these instances (ascending), which bound any value it bound.
    Delivered {
        /// The stored event's sequence number.
        seq: u64,
        /// The receivers.
        instances: Vec<InstanceId>,
        /// The receivers that became runnable.
        woken: Vec<InstanceId>,
        /// Those of `woken` leased to the worker of [`Delivery::claim`], ascending, with their
        /// records and inboxes; empty without a claim.
        claimed: Vec<Claimed>,
    },
    /// It started this instance (alone, or completing a start group).
    Started {
        /// The stored event's sequence number.
        seq: u64,
        /// The new instance.
        instance: InstanceId,
    },
    /// It joined a start group that still lacks events.
    Grouped {
        /// The stored event's sequence number.
        seq: u64,
    },
    /// Nobody takes it.
    Unmatched {
        /// The stored event's sequence number.
        seq: u64,
        /// Why.
        reason: String,
    },
}

impl Routed {
    /// The stored event's sequence number.
    pub fn seq(&self) -> u64 {
        match self {
            Routed::Duplicate { seq }
            | Routed::Delivered { seq, .. }
            | Routed::Started { seq, .. }
            | Routed::Grouped { seq }
            | Routed::Unmatched { seq, .. } => *seq,
        }
    }
}

/// A produced event waiting to be sent.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxEntry {
    /// Its sequence number in the outbox.
    pub seq: u64,
    /// The instance that produced it.
    pub instance: InstanceId,
    /// The event, with its stable id.
    pub event: Event,
}

/// The youngest age a purge should take (a `before` at least this far in the past): a purged
/// event's `source` and `id` are forgotten, so the same event delivered again is taken as new,
/// and a sender retries within seconds of an answer it lost; under a minute, a retried event
/// could run twice. A worker's retention and `swf purge --older-than` hold to it.
pub const MIN_PURGE_AGE: Duration = Duration::from_secs(60);

/// What [`Store::purge`](super::Store::purge) removes: the instances that ended and the events
/// that arrived before an instant, at most `limit` of each kind per call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurgeFilter {
    /// Only this workflow's (every workflow's when `None`).
    pub workflow: Option<String>,
    /// Only instances that ended, and events received, before this instant.
    pub before: Timestamp,
    /// At most this many instances, and this many events, per call (the oldest first): a
    /// caller purges in rounds until a round removes fewer, so that no transaction grows
    /// with the backlog.
    pub limit: usize,
}

/// What one [`Store::purge`](super::Store::purge) removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Purged {
    /// Ended instances, each with its history and the events it produced.
    pub instances: usize,
    /// Received events that no instance will take any more.
    pub events: usize,
}

impl std::ops::AddAssign for Purged {
    /// Counts another round's removals in.
    fn add_assign(&mut self, round: Purged) {
        self.instances += round.instances;
        self.events += round.events;
    }
}

impl Purged {
    /// Whether another call with `limit` may remove more: this one removed `limit` of a kind.
    /// Never with a limit of 0, which removes nothing (a loop on it would not end).
    pub fn may_have_more(&self, limit: usize) -> bool {
        limit > 0 && (self.instances >= limit || self.events >= limit)
    }
}

/// The most instances [`Store::list`](super::Store::list) returns at once, in the SQL stores: a
/// larger [`ListFilter::limit`] gives this many. Page on with [`ListFilter::before`].
pub const MAX_LIST_LIMIT: usize = 1000;

/// Which instances [`Store::list`](super::Store::list) returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilter {
    /// Only this workflow's.
    pub workflow: Option<String>,
    /// Only those whose definition has a version these admit (a pinned deploy's old version,
    /// say: see [`DurableConfig::pinned`](crate::DurableConfig::pinned)).
    pub versions: Versions,
    /// Only those with one of these statuses (all when empty).
    pub statuses: Vec<Status>,
    /// Only those with an id below this one (for paging, newest first).
    pub before: Option<InstanceId>,
    /// At most this many (a store may cap it: the SQL stores at [`MAX_LIST_LIMIT`]).
    pub limit: usize,
}

/// One line of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceSummary {
    /// Its id.
    pub id: InstanceId,
    /// Its workflow.
    pub workflow: String,
    /// The version of its definition.
    pub version: Option<String>,
    /// Its status.
    pub status: Status,
    /// Its position.
    pub position: String,
    /// Its revision.
    pub revision: u64,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// What kind of transition a history entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HistoryKind {
    /// The instance was created.
    Started,
    /// A step ran and moved it on.
    Stepped,
    /// A step found nothing to do yet and it now waits (its waits or deadline changed).
    Waiting,
    /// It completed.
    Completed,
    /// It failed.
    Failed,
    /// It was cancelled.
    Cancelled,
    /// It was resumed after failing.
    Redriven,
}

impl HistoryKind {
    /// Its name as shown.
    pub const fn as_str(self) -> &'static str {
        match self {
            HistoryKind::Started => "started",
            HistoryKind::Stepped => "stepped",
            HistoryKind::Waiting => "waiting",
            HistoryKind::Completed => "completed",
            HistoryKind::Failed => "failed",
            HistoryKind::Cancelled => "cancelled",
            HistoryKind::Redriven => "redriven",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<HistoryKind> {
        [
            HistoryKind::Started,
            HistoryKind::Stepped,
            HistoryKind::Waiting,
            HistoryKind::Completed,
            HistoryKind::Failed,
            HistoryKind::Cancelled,
            HistoryKind::Redriven,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == name)
    }
}

/// One committed transition, as the history shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    /// The revision the transition created (0 for `Started`).
    pub revision: u64,
    /// When it was committed.
    pub at: Timestamp,
    /// What kind of transition.
    pub kind: HistoryKind,
    /// The position before (empty for `Started`).
    pub from: String,
    /// The position after.
    pub to: String,
    /// The events consumed, as `source id` strings.
    pub consumed: Vec<String>,
    /// The events produced, as `source id` strings.
    pub produced: Vec<String>,
    /// Anything else worth showing (the input, the error, the worker).
    pub detail: Value,
}

/// What went wrong in a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreErrorKind {
    /// The database could not be reached or answered with an error; retrying may help.
    Unavailable,
    /// The database holds data this version cannot read (a newer schema, a broken row).
    Incompatible,
    /// No such instance.
    NotFound,
    /// The instance has ended.
    Ended,
    /// The instance has not failed.
    NotFailed,
    /// A request the store refuses (an invalid URL, a value out of range).
    Invalid,
}

/// An error of a store, with what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    /// What kind of error.
    pub kind: StoreErrorKind,
    /// What happened, in a sentence (the database's own message included).
    pub message: String,
}

impl StoreError {
    /// An error of `kind`.
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A caller loops while a round may have left more: a limit of 0 removes nothing, and
    /// looping on it never ended.
    #[test]
    fn only_a_full_round_may_have_left_more() {
        let purged = |instances, events| Purged { instances, events };
        assert!(purged(2, 0).may_have_more(2));
        assert!(purged(0, 2).may_have_more(2));
        assert!(!purged(1, 1).may_have_more(2));
        assert!(!purged(0, 0).may_have_more(0));
    }

    #[test]
    fn rounds_add_up_per_kind() {
        let mut total = Purged {
            instances: 1,
            events: 2,
        };
        total += Purged {
            instances: 3,
            events: 4,
        };
        assert_eq!((total.instances, total.events), (4, 6));
    }
}
