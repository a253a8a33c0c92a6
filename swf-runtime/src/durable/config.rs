//! A durable host's settings, and the probe a test uses to stop a worker at a chosen point.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, SystemClock};
use crate::host::InstanceId;

/// The settings of a [`DurableHost`](super::DurableHost).
#[derive(Clone)]
pub struct DurableConfig {
    /// This worker's name, unique among the workers sharing a store: leases name it.
    pub worker: String,
    /// How long a claim lasts without renewal. A worker renews its leases every third of it;
    /// when a worker dies, its instances are taken over once their leases expire.
    pub lease: Duration,
    /// How often an idle worker looks for work that other processes made (events they stored,
    /// instances whose lease expired), in tokio's time (not the workflow clock's). Work this
    /// process makes wakes it at once, and so does a deadline in the store.
    pub poll: Duration,
    /// How many instances one worker steps at once.
    pub max_in_flight: usize,
    /// How many requests of one kind (commits, deliveries, creations) go to the store together,
    /// at most: the store writes each such batch with one disk sync. Also how many instances
    /// (and events) one round of a purge removes.
    pub batch: usize,
    /// How long the store keeps this workflow's instances once they ended (with their history
    /// and produced events), and the events it received once no instance holds them: a
    /// running worker removes older ones every minute
    /// ([`Store::purge`](crate::store::Store::purge)). `None` (the default) keeps everything; a
    /// retention under a minute counts as a minute. The retention is also the window in which
    /// an event delivered twice is known as a duplicate, and after which a start key may start
    /// a new instance.
    pub retention: Option<Duration>,
    /// How many of its latest history entries each instance keeps, besides its first
    /// (`Started`, with the input) and those that say why it failed (`Failed`, `Redriven`):
    /// `None` (the default) keeps them all. An instance that runs long (a loop on events, a
    /// monitor that never ends) otherwise adds an entry per step for as long as it runs, which
    /// no retention removes, since it has not ended. A commit of this worker drops the older
    /// ones in its own transaction, once every `clamp(limit / 8, 1, 64)` commits, so an
    /// instance that steps holds from `limit` to `limit + limit / 8` of them, never more than
    /// `limit + 63`; an instance with a longer history when the limit is set loses at most
    /// [`MAX_TRIMMED_PER_COMMIT`](crate::store::MAX_TRIMMED_PER_COMMIT) of its oldest entries
    /// per such commit, and one that no longer steps keeps what it has.
    pub history_limit: Option<u64>,
    /// Whether this worker steps only the instances that a definition of its own version (the
    /// workflow's `version`) started. `false` (the default): it resumes any instance of its
    /// workflow whose task its definition has, so a release takes over the instances the one
    /// before started, as they stand (and refuses, leaving for an older worker, those at a
    /// task it no longer has). `true`: an instance stays on the version it started with, as a
    /// Step Functions execution does and Temporal's pinned workflows do: during a deploy the
    /// workers of each version run their own instances, and the older version's workers are
    /// retired once `swf list --workflow-version` shows none of its instances left that have not
    /// ended, nor failed ones to redrive. Instances are still started, and events still delivered, by any worker;
    /// an event that wakes an instance of another version wakes it for its own workers. The
    /// version is the one of the definition an instance last ran under: a worker that is not
    /// pinned moves an instance it steps to its own, so the pin holds when every worker of the
    /// workflow is pinned.
    pub pinned: bool,
    /// The wall clock every deadline is read from, leases included: a clock that runs faster
    /// than real time (or a manual one) makes leases expire faster (or never), so workers that
    /// share a store must run on real time.
    pub clock: Arc<dyn Clock>,
    /// Called at each [`ProbePoint`], for tests that stop a worker at a chosen point (and for
    /// counting); nothing by default.
    pub probe: Option<Arc<dyn Fn(ProbePoint) + Send + Sync>>,
}

impl Default for DurableConfig {
    fn default() -> Self {
        Self {
            worker: default_worker_name(),
            lease: Duration::from_secs(30),
            poll: Duration::from_millis(500),
            max_in_flight: 512,
            batch: 512,
            retention: None,
            history_limit: None,
            pinned: false,
            clock: Arc::new(SystemClock),
            probe: None,
        }
    }
}

impl DurableConfig {
    /// Names this worker.
    #[must_use]
    pub fn worker(mut self, name: impl Into<String>) -> Self {
        self.worker = name.into();
        self
    }

    /// Sets the lease length.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Sets how often an idle worker polls the store.
    #[must_use]
    pub fn poll(mut self, poll: Duration) -> Self {
        self.poll = poll;
        self
    }

    /// Sets how many instances this worker steps at once (at least 1).
    #[must_use]
    pub fn max_in_flight(mut self, max: usize) -> Self {
        self.max_in_flight = max.max(1);
        self
    }

    /// Sets the largest batch sent to the store (at least 1).
    #[must_use]
    pub fn batch(mut self, batch: usize) -> Self {
        self.batch = batch.max(1);
        self
    }

    /// Sets how long ended instances and events no instance holds are kept (see
    /// [`DurableConfig::retention`]).
    #[must_use]
    pub fn retention(mut self, retention: Duration) -> Self {
        self.retention = Some(retention);
        self
    }

    /// Keeps only each instance's first history entry, those that say why it failed, and its
    /// latest `limit` (at least 1; see [`DurableConfig::history_limit`]).
    #[must_use]
    pub fn history_limit(mut self, limit: u64) -> Self {
        self.history_limit = Some(limit.max(1));
        self
    }

    /// Through which revision a commit that makes `revision` drops the history (see
    /// [`Commit::trim_history_through`](crate::store::Commit::trim_history_through)): once
    /// every `clamp(limit / 8, 1, 64)` commits, so that with a limit of 16 and more most
    /// commits delete nothing.
    pub(super) fn history_trim(&self, revision: u64) -> Option<u64> {
        let limit = self.history_limit?;
        let every = (limit / 8).clamp(1, 64);
        (revision > limit && revision.is_multiple_of(every)).then(|| revision - limit)
    }

    /// Steps only the instances its own version started (see [`DurableConfig::pinned`]).
    #[must_use]
    pub fn pinned(mut self) -> Self {
        self.pinned = true;
        self
    }

    /// Sets the wall clock.
    #[must_use]
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Calls `probe` at every [`ProbePoint`].
    #[must_use]
    pub fn probe(mut self, probe: impl Fn(ProbePoint) + Send + Sync + 'static) -> Self {
        self.probe = Some(Arc::new(probe));
        self
    }

    pub(super) fn at(&self, point: ProbePoint) {
        if let Some(probe) = &self.probe {
            probe(point);
        }
    }
}

impl fmt::Debug for DurableConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DurableConfig")
            .field("worker", &self.worker)
            .field("lease", &self.lease)
            .field("poll", &self.poll)
            .field("max_in_flight", &self.max_in_flight)
            .field("batch", &self.batch)
            .field("retention", &self.retention)
            .field("history_limit", &self.history_limit)
            .field("pinned", &self.pinned)
            .finish_non_exhaustive()
    }
}

/// `worker-<pid>-<start instant>`: unique among the processes of one machine and, with its
/// start instant, across restarts.
fn default_worker_name() -> String {
    let started = jiff::Timestamp::now().as_microsecond();
    format!("worker-{}-{started:x}", std::process::id())
}

/// A point in a durable host's work, as [`DurableConfig::probe`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProbePoint {
    /// About to step an instance at this revision.
    Step(InstanceId, u64),
    /// A step ran; its transition is about to be committed.
    Commit(InstanceId, u64),
    /// The transition to this revision was committed.
    Committed(InstanceId, u64),
    /// Incoming events are stored; the host is about to acknowledge them to their sender.
    Stored,
    /// A produced event (outbox sequence number) was handed to the sink; it is about to be
    /// marked delivered.
    Sent(u64),
}

#[cfg(test)]
mod tests {
    use super::DurableConfig;

    /// The revisions at which a commit trims, and through which, for the first `revisions`.
    fn trims(config: &DurableConfig, revisions: u64) -> Vec<(u64, u64)> {
        (1..=revisions)
            .filter_map(|revision| Some((revision, config.history_trim(revision)?)))
            .collect()
    }

    #[test]
    fn a_history_limit_trims_every_eighth_of_it() {
        assert!(trims(&DurableConfig::default(), 1_000).is_empty());
        let sixteen = DurableConfig::default().history_limit(16);
        assert_eq!(trims(&sixteen, 22), [(18, 2), (20, 4), (22, 6)]);
        // At most every 64th commit, and at least every commit.
        let large = DurableConfig::default().history_limit(10_000);
        assert_eq!(
            trims(&large, 10_200),
            [(10_048, 48), (10_112, 112), (10_176, 176)]
        );
        let one = DurableConfig::default().history_limit(0);
        assert_eq!(
            one.history_limit,
            Some(1),
            "at least one entry besides the first"
        );
        assert_eq!(trims(&one, 3), [(2, 1), (3, 2)]);
    }
}
