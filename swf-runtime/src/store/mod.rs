//! Durable instances: the contract between the durable host and a store.
//!
//! A store keeps, for the workflows of one or more hosts: the instances (each its serialized
//! state, a revision, a status, when it must wake, a lease), the events received (deduplicated
//! by `source` and `id`), each instance's inbox, the correlation values each instance is bound
//! to, what each waiting instance waits for, the outbox of produced events, and the history of
//! committed transitions. Everything the host does to an instance is one call that is one
//! transaction: a crash loses a whole call or none of it.
//!
//! The store knows nothing of any compiled workflow: states are JSON text that the host
//! serializes, positions are display strings, and routing works on definition names and
//! correlation values that the host computes from the workflow's event definitions.
//!
//! Implementations: `sqlite::SqliteStore` (feature `sqlite`, an embedded file)
//! and `postgres::PostgresStore` (feature `postgres`, shared by many worker
//! processes). Both pass the same conformance suite (`store::conformance`). [`AnyStore`] opens
//! whichever of them a URL names (`sqlite:PATH`, `postgres://...`).

mod any;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod codec;
#[cfg(all(test, any(feature = "sqlite", feature = "postgres")))]
mod conformance;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "sqlite")]
pub mod sqlite;
mod types;

pub use any::AnyStore;
pub use types::*;

use std::future::Future;
use std::time::Duration;

use jiff::Timestamp;

use crate::host::InstanceId;

/// A durable store of workflow instances. Cloning is cheap and shares the store.
///
/// Every method is one transaction. Methods taking a batch (`commit`, `deliver`) apply each
/// element on its own terms (one element's conflict does not undo another's commit) but write
/// them together, so that many instances' transitions share one disk sync (group commit).
pub trait Store: Clone + Send + Sync + 'static {
    /// Records that a host runs `definition` and returns when that definition was first
    /// deployed (the instant duration-only schedules count from), which later calls with the
    /// same workflow id and hash return unchanged.
    fn register(
        &self,
        definition: &Definition,
        now: Timestamp,
    ) -> impl Future<Output = Result<Timestamp, StoreError>> + Send;

    /// Creates instances. Each gets a fresh id (increasing, never reused), revision 0 and a
    /// `Started` history entry. The events named in `inbox` (already stored by `deliver`, and
    /// not purged since: a purged one is left out) go into its inbox, its correlation values
    /// are bound. An instance whose `start_key` an instance of its workflow already has (stored
    /// before, or earlier in `instances`) is not created: its id is that instance's, which is
    /// left as it is.
    fn create(
        &self,
        instances: Vec<NewInstance>,
        now: Timestamp,
    ) -> impl Future<Output = Result<Vec<InstanceId>, StoreError>> + Send;

    /// Claims up to `limit` instances of `workflow` that have work: status `Runnable`, or
    /// `Waiting` with `wake_at <= now`, whose lease is absent or expired (`until < now`), and
    /// whose definition's version `versions` admits. Each is leased to `worker` until
    /// `now + lease` and returned with its inbox (oldest event first). Instances due earliest
    /// come first. Two concurrent claims never return the same instance unless its lease
    /// expired in between.
    fn claim(
        &self,
        workflow: &str,
        versions: &Versions,
        worker: &str,
        now: Timestamp,
        lease: Duration,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<Claimed>, StoreError>> + Send;

    /// Claims the instances `ids` (those of them that have work, no live lease and a version
    /// `versions` admits, as [`Store::claim`]), for a host that knows which instances an event
    /// just woke.
    fn claim_ids(
        &self,
        ids: &[InstanceId],
        versions: &Versions,
        worker: &str,
        now: Timestamp,
        lease: Duration,
    ) -> impl Future<Output = Result<Vec<Claimed>, StoreError>> + Send;

    /// Extends `worker`'s leases of `ids` to `until`; returns the ids whose lease it still held.
    fn renew(
        &self,
        ids: &[InstanceId],
        worker: &str,
        until: Timestamp,
    ) -> impl Future<Output = Result<Vec<InstanceId>, StoreError>> + Send;

    /// Commits transitions, each atomically and only if its instance is still at
    /// [`Commit::revision`] and leased to [`Commit::worker`]: the new state, status, wake time
    /// and waits; the correlation bindings; the consumed inbox events removed; the produced
    /// events appended to the outbox; the child instances created; one history entry, and the
    /// older ones [`Commit::trim_history_through`] names removed. The revision becomes
    /// `revision + 1`. Results are in the order of `commits`.
    ///
    /// A transition to `Completed` or `Cancelled` removes the instance's waits, bindings and
    /// inbox, and returns the events it never took ([`CommitResult::Committed`]'s
    /// `leftovers`). One to `Failed` removes only its waits: the failed step is not committed,
    /// so the instance keeps its inbox (the events that step consumed included:
    /// [`Commit::consumed`] removes nothing then) and its bindings, which a redrive needs.
    fn commit(
        &self,
        commits: Vec<Commit>,
        now: Timestamp,
    ) -> impl Future<Output = Result<Vec<CommitResult>, StoreError>> + Send;

    /// Stores incoming events and routes them (see [`Delivery`] for the rules), in order. An
    /// event whose `source` and `id` the workflow already received is not stored again and
    /// is reported as a duplicate. When this returns `Ok`, every event is durable: the host may
    /// acknowledge it.
    fn deliver(
        &self,
        deliveries: Vec<Delivery>,
        now: Timestamp,
    ) -> impl Future<Output = Result<Vec<Routed>, StoreError>> + Send;

    /// Removes the start groups of `workflow` whose last event is older than their timeout and
    /// returns their events, which no instance will take.
    fn expire_start_groups(
        &self,
        workflow: &str,
        now: Timestamp,
    ) -> impl Future<Output = Result<Vec<StoredEvent>, StoreError>> + Send;

    /// The earliest instant at which an instance of `workflow` (of a version `versions` admits)
    /// without a live lease has work (`now` or earlier when one is runnable), or at which a
    /// lease expires; `None` when no instance has anything to do. A host sleeps until then (or
    /// until it is told of new work).
    fn next_wake(
        &self,
        workflow: &str,
        versions: &Versions,
        now: Timestamp,
    ) -> impl Future<Output = Result<Option<Timestamp>, StoreError>> + Send;

    /// Claims up to `limit` events that instances of `workflow` produced and that are not yet
    /// delivered, oldest first, leased to `worker` until `now + lease` (so that two workers do
    /// not send the same event at once; an expired lease makes it claimable again: delivery is
    /// at least once). Each workflow's events go to the sink of a worker of that workflow, not
    /// of whichever workflow's worker asks first.
    fn claim_outbox(
        &self,
        workflow: &str,
        worker: &str,
        now: Timestamp,
        lease: Duration,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<OutboxEntry>, StoreError>> + Send;

    /// Marks produced events as delivered: they are not claimed again.
    fn mark_delivered(
        &self,
        seqs: &[u64],
        now: Timestamp,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The instances that `filter` selects, newest first.
    fn list(
        &self,
        filter: &ListFilter,
    ) -> impl Future<Output = Result<Vec<InstanceSummary>, StoreError>> + Send;

    /// One instance, with its inbox; `None` when there is no such instance.
    fn instance(
        &self,
        id: InstanceId,
    ) -> impl Future<Output = Result<Option<Claimed>, StoreError>> + Send;

    /// The history of one instance, oldest first: every entry but those a commit's
    /// [`trim_history_through`](Commit::trim_history_through) removed (a gap in the revisions).
    fn history(
        &self,
        id: InstanceId,
    ) -> impl Future<Output = Result<Vec<HistoryEntry>, StoreError>> + Send;

    /// Cancels an instance that has not completed or been cancelled: status `Cancelled`, its
    /// lease, waits, bindings and inbox removed, its revision increased (so that a worker
    /// stepping it cannot commit), `{"reason": reason}` as its outcome and a `Cancelled`
    /// history entry with `reason`. Returns the events left in its inbox, which it will never
    /// take.
    ///
    /// A failed instance may be cancelled: it gives up its redrive, and the inbox and bindings
    /// it kept for one (while it keeps them, the events of its correlation values reach it,
    /// not a new instance, see [`Delivery`]).
    ///
    /// # Errors
    /// [`StoreErrorKind::NotFound`], or [`StoreErrorKind::Ended`] for an instance that
    /// completed or was cancelled.
    fn cancel(
        &self,
        id: InstanceId,
        reason: &str,
        now: Timestamp,
    ) -> impl Future<Output = Result<Vec<StoredEvent>, StoreError>> + Send;

    /// Removes, at most `filter.limit` of each kind, one workflow after another and the oldest
    /// first in each:
    /// - instances that ended (completed, failed or cancelled) before `filter.before`, with
    ///   their history, the events they produced and what a failed one kept (its inbox and
    ///   bindings), except one whose produced events are not all delivered yet (it goes once
    ///   they are). A purged instance's start key is free again;
    /// - events received before `filter.before` that no inbox (a failed instance's included)
    ///   and no start group holds. A purged event's `source` and `id` are no longer known: the
    ///   same event delivered again is taken as new, so the retention is also the window in
    ///   which duplicates are caught.
    ///
    /// Instances that have not ended are never touched, however old. Give a `before` at least
    /// [`MIN_PURGE_AGE`] in the past (it says why).
    ///
    /// # Errors
    /// [`StoreErrorKind::NotFound`] when `filter.workflow` names a workflow the store has never
    /// seen.
    fn purge(
        &self,
        filter: &PurgeFilter,
    ) -> impl Future<Output = Result<Purged, StoreError>> + Send;

    /// Resumes a failed instance from its last committed state (the failed step runs again):
    /// status `Runnable`, outcome cleared, revision increased, a `Redriven` history entry. Its
    /// inbox is as its failed commit left it (the events the failed step took are there to take
    /// again), with the events its bindings routed to it since (see [`Delivery`]).
    ///
    /// # Errors
    /// [`StoreErrorKind::NotFound`], or [`StoreErrorKind::NotFailed`] for an instance that is not
    /// `Failed`.
    fn redrive(
        &self,
        id: InstanceId,
        now: Timestamp,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}
