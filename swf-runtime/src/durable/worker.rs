//! The worker loop: claims the instances that have work, steps them concurrently, renews their
//! leases, sends produced events to the sink, and sleeps until the next deadline or event.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::FutureExt;
use jiff::Timestamp;
use tokio::sync::oneshot;
use tokio::task::{AbortHandle, JoinSet};

use super::{DurableHost, EventSink, InFlight, ProbePoint, Report, Shared};
use crate::clock::{after, before};
use crate::host::{InstanceId, Machine};
use crate::store::{Claimed, MIN_PURGE_AGE, PurgeFilter, Purged, Store};

/// The shortest sleep of an idle worker whose store says work is due now but whose claim found
/// none (another worker took it in between): polling again at once would spin.
const MIN_IDLE: Duration = Duration::from_millis(5);

/// How often a worker with a retention removes what outlived it, in tokio's time.
const PURGE_EVERY: Duration = Duration::from_secs(60);

/// How many produced events one round of the outbox sends.
const OUTBOX_BATCH: usize = 256;

/// Why the idle worker woke up.
enum Woke {
    /// A deadline or the poll interval: look in the store.
    Timer,
    /// Work made in this process (or a step ended): look at the local queues.
    Local,
    /// Stop.
    Shutdown,
}

/// Ends what [`DurableHost::run`] started when its future is dropped before it returns
/// (its task aborted, or a `select!` branch that lost): the drivers go with its `JoinSet`, and
/// this aborts the lease renewer (which would keep the leases of the instances they stepped
/// for as long as the process lives) and the outbox sender, tells the purger to stop between
/// two rounds (by dropping `stop_purging`: aborted inside a PostgreSQL transaction, it would
/// leave its rows locked until the rollback runs), and tells starts and deliveries that no
/// worker runs here (which would lease new instances to it). The instances whose steps were
/// cut off, and those handed to the loop that it never stepped, are taken over once their
/// leases expire, as a dead worker's are. After a shutdown that completed, only the latter
/// are left to forget.
struct StopWhenDropped<'a> {
    shared: &'a Shared,
    tasks: [AbortHandle; 2],
    stop_purging: Option<oneshot::Sender<()>>,
}

impl Drop for StopWhenDropped<'_> {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        drop(self.stop_purging.take());
        self.shared.running.store(false, Ordering::Release);
        let mut local = self.shared.local();
        local.in_flight.clear();
        local.woken.clear();
        local.handoff.clear();
    }
}

impl<M: Machine, S: Store> DurableHost<M, S> {
    /// Runs this worker until `shutdown` completes: claims the instances of this workflow that
    /// have work (those created or woken here at once, the others as the store says, every
    /// [`DurableConfig::poll`](super::DurableConfig::poll) at the latest), steps each until it
    /// waits or ends, committing every transition, and sends produced events to `sink` once
    /// their transition is committed. Several workers may run on one store, in one process or
    /// in many.
    ///
    /// On shutdown it stops claiming, lets each step in progress finish and commit (releasing
    /// its instance to any worker), and returns. A store that fails is reported
    /// ([`Report::StoreFailed`]) and tried again; it never ends the loop. Dropping the future
    /// instead (aborting its task) stops it at once, as if the process had died: the steps in
    /// progress are dropped, and their instances are taken over once their leases expire.
    pub async fn run<K: EventSink>(&self, sink: K, shutdown: impl Future<Output = ()>) {
        self.inner.shared.stopping.store(false, Ordering::Release);
        self.inner.shared.running.store(true, Ordering::Release);
        let mut shutdown = pin!(shutdown);
        let mut drivers: JoinSet<(InstanceId, u64)> = JoinSet::new();
        let renewer = tokio::spawn(self.clone().renew_leases());
        let outbox = tokio::spawn(self.clone().send_produced(sink));
        // The purger is told to stop rather than aborted: aborted in a PostgreSQL transaction,
        // it would leave the rollback queued and the rows it locked locked.
        let (stop_purging, purging_stopped) = oneshot::channel();
        let purger =
            self.inner.config.retention.map(|retention| {
                tokio::spawn(self.clone().purge_expired(retention, purging_stopped))
            });
        let mut dropped = StopWhenDropped {
            shared: &self.inner.shared,
            tasks: [renewer.abort_handle(), outbox.abort_handle()],
            stop_purging: Some(stop_purging),
        };
        let mut look_in_store = true;
        loop {
            while let Some(done) = drivers.try_join_next() {
                self.finished(done);
            }
            let free = self
                .inner
                .config
                .max_in_flight
                .saturating_sub(drivers.len());
            let mut claimed = Vec::new();
            if free > 0 {
                claimed = self.claim_local(free).await;
                let room = free - claimed.len();
                if room > 0 && look_in_store {
                    let asked = room.min(self.inner.config.batch);
                    let found = self.claim_from_store(asked).await;
                    // A full claim means more may be waiting: look again without sleeping.
                    // (Full is what was asked: a batch, when there is room for more.)
                    look_in_store = found.len() == asked;
                    claimed.extend(found);
                }
            }
            let stepping = !claimed.is_empty();
            for instance in claimed {
                self.spawn_driver(&mut drivers, instance);
            }
            if stepping {
                continue;
            }
            match self.idle(&mut drivers, free, shutdown.as_mut()).await {
                Woke::Timer => look_in_store = true,
                Woke::Local => {}
                Woke::Shutdown => break,
            }
        }
        self.inner.shared.stopping.store(true, Ordering::Release);
        while let Some(done) = drivers.join_next().await {
            self.finished(done);
        }
        self.inner.shared.running.store(false, Ordering::Release);
        renewer.abort();
        drop(dropped.stop_purging.take());
        if let Some(purger) = purger {
            let _ = purger.await;
        }
        // The outbox sends what the last steps produced, then ends.
        self.inner.produced.notify_one();
        let _ = outbox.await;
    }

    /// Instances created here (already leased to this worker) and instances woken here,
    /// claimed by id: at most `room`.
    async fn claim_local(&self, room: usize) -> Vec<Claimed> {
        let (mut claimed, woken) = {
            let mut local = self.local();
            let handed = local.handoff.len().min(room);
            let claimed: Vec<Claimed> = local.handoff.drain(..handed).collect();
            let woken_room = room - claimed.len();
            let woken: Vec<InstanceId> = local.woken.iter().copied().take(woken_room).collect();
            for id in &woken {
                local.woken.remove(id);
            }
            (claimed, woken)
        };
        if woken.is_empty() {
            return claimed;
        }
        let now = self.now();
        match self
            .inner
            .store
            .claim_ids(
                &woken,
                &self.inner.versions,
                &self.inner.config.worker,
                now,
                self.inner.config.lease,
            )
            .await
        {
            Ok(found) => claimed.extend(found),
            Err(error) => {
                self.report(Report::StoreFailed {
                    during: "claim",
                    error,
                });
                // They stay runnable in the store: a later poll finds them.
            }
        }
        claimed
    }

    async fn claim_from_store(&self, limit: usize) -> Vec<Claimed> {
        let now = self.now();
        let config = &self.inner.config;
        match self
            .inner
            .store
            .claim(
                &self.inner.definition.workflow,
                &self.inner.versions,
                &config.worker,
                now,
                config.lease,
                limit,
            )
            .await
        {
            Ok(found) => found,
            Err(error) => {
                self.report(Report::StoreFailed {
                    during: "claim",
                    error,
                });
                Vec::new()
            }
        }
    }

    fn spawn_driver(&self, drivers: &mut JoinSet<(InstanceId, u64)>, claimed: Claimed) {
        let id = claimed.record.id;
        let driver = {
            let mut local = self.local();
            local.drivers += 1;
            let driver = local.drivers;
            let in_flight = InFlight {
                driver,
                mailbox: Vec::new(),
            };
            local.in_flight.insert(id, in_flight);
            driver
        };
        let host = self.clone();
        drivers.spawn(async move {
            // A panic in the workflow's own code (a function's panic is already an error of
            // its task) must not lose track of the instance: its lease expires and a worker
            // steps it again.
            if let Err(payload) = AssertUnwindSafe(host.drive(claimed)).catch_unwind().await {
                host.report(Report::StepPanicked {
                    instance: id,
                    message: crate::action::panic_message(payload.as_ref()),
                });
            }
            (id, driver)
        });
    }

    fn finished(&self, done: Result<(InstanceId, u64), tokio::task::JoinError>) {
        // Drivers are never aborted and catch their panics: a join error cannot happen.
        if let Ok((id, driver)) = done {
            let mut local = self.local();
            // A newer driver of the instance keeps its entry (its lease renewed, its mailbox).
            if local
                .in_flight
                .get(&id)
                .is_some_and(|in_flight| in_flight.driver == driver)
            {
                local.in_flight.remove(&id);
            }
        }
    }

    /// Sleeps until there may be work: a deadline in the store (when there is room to step
    /// more), the poll interval, work made here, a step finishing (when full), or shutdown.
    async fn idle(
        &self,
        drivers: &mut JoinSet<(InstanceId, u64)>,
        free: usize,
        shutdown: std::pin::Pin<&mut impl Future<Output = ()>>,
    ) -> Woke {
        let now = self.now();
        let mut until = None;
        if free > 0 {
            self.expire_start_groups(now).await;
            match self
                .inner
                .store
                .next_wake(&self.inner.definition.workflow, &self.inner.versions, now)
                .await
            {
                Ok(Some(at)) => until = Some(at.max(after(now, MIN_IDLE))),
                Ok(None) => {}
                Err(error) => self.report(Report::StoreFailed {
                    during: "next_wake",
                    error,
                }),
            }
        }
        let work = self.inner.work.notified();
        // Deadlines are the workflow clock's; polling for other processes' work is not: it
        // runs on tokio's time (a test's manual clock must not stop it).
        let deadline = async {
            match until {
                Some(until) => self.inner.config.clock.sleep_until(until).await,
                None => std::future::pending().await,
            }
        };
        let poll = tokio::time::sleep(self.inner.config.poll);
        let step_done = async {
            if drivers.is_empty() {
                std::future::pending::<()>().await;
            }
            if let Some(done) = drivers.join_next().await {
                self.finished(done);
            }
        };
        tokio::select! {
            () = shutdown => Woke::Shutdown,
            () = work => Woke::Local,
            () = step_done => Woke::Local,
            () = deadline => Woke::Timer,
            () = poll => Woke::Timer,
        }
    }

    /// Reports the events of start groups that timed out.
    async fn expire_start_groups(&self, now: Timestamp) {
        let non_exclusive = self
            .inner
            .machine
            .start_on_events()
            .is_some_and(|on| !on.exclusive && on.timeout.is_some());
        if !non_exclusive {
            return;
        }
        match self
            .inner
            .store
            .expire_start_groups(&self.inner.definition.workflow, now)
            .await
        {
            Ok(expired) => {
                for stored in expired {
                    self.report(Report::Unmatched {
                        event: Box::new(stored.event),
                        reason: String::from(
                            "the other events needed to start an instance with it did not \
                             arrive in time",
                        ),
                    });
                }
            }
            Err(error) => self.report(Report::StoreFailed {
                during: "expire_start_groups",
                error,
            }),
        }
    }

    /// Renews the leases of the instances stepped here and of those leased to this worker that
    /// wait for a free slot, every third of the lease.
    async fn renew_leases(self) {
        let config = &self.inner.config;
        let every = config.lease / 3;
        loop {
            tokio::time::sleep(every).await;
            let ids: Vec<InstanceId> = {
                let local = self.local();
                let handed = local.handoff.iter().map(|claimed| claimed.record.id);
                local.in_flight.keys().copied().chain(handed).collect()
            };
            if ids.is_empty() {
                continue;
            }
            let until = after(self.now(), config.lease);
            if let Err(error) = self.inner.store.renew(&ids, &config.worker, until).await {
                self.report(Report::StoreFailed {
                    during: "renew",
                    error,
                });
            }
            // An instance whose lease was not renewed was taken over: its step's commit will
            // conflict and be dropped.
        }
    }

    /// Removes this workflow's instances that ended longer than `retention` ago (at least
    /// [`MIN_PURGE_AGE`]) and the events that no instance holds, at once and then every
    /// [`PURGE_EVERY`], in rounds of at most
    /// [`DurableConfig::batch`](super::DurableConfig::batch) (each a call of its own, so that
    /// steps go on between them), until `stop` is dropped: between two rounds, never inside one.
    async fn purge_expired(self, retention: Duration, mut stop: oneshot::Receiver<()>) {
        let retention = retention.max(MIN_PURGE_AGE);
        // `batch` is a public field: at least one, or no round would remove anything.
        let limit = self.inner.config.batch.max(1);
        loop {
            let filter = PurgeFilter {
                workflow: Some(self.inner.definition.workflow.clone()),
                before: before(self.now(), retention),
                limit,
            };
            let mut swept = Purged::default();
            loop {
                if stop.try_recv() != Err(oneshot::error::TryRecvError::Empty) {
                    return;
                }
                match self.inner.store.purge(&filter).await {
                    Ok(purged) => {
                        swept += purged;
                        if !purged.may_have_more(limit) {
                            break;
                        }
                    }
                    Err(error) => {
                        self.report(Report::StoreFailed {
                            during: "purge",
                            error,
                        });
                        break;
                    }
                }
            }
            if swept != Purged::default() {
                self.report(Report::Purged { purged: swept });
            }
            tokio::select! {
                _ = &mut stop => return,
                () = tokio::time::sleep(PURGE_EVERY) => {}
            }
        }
    }

    /// Sends committed produced events to `sink`, oldest first, marking each delivered once
    /// the sink took it; once the worker stops, until none is left.
    async fn send_produced<K: EventSink>(self, sink: K) {
        let config = &self.inner.config;
        loop {
            let produced = self.inner.produced.notified();
            let now = self.now();
            let entries = match self
                .inner
                .store
                .claim_outbox(
                    &self.inner.definition.workflow,
                    &config.worker,
                    now,
                    config.lease,
                    OUTBOX_BATCH,
                )
                .await
            {
                Ok(entries) => entries,
                Err(error) => {
                    self.report(Report::StoreFailed {
                        during: "claim_outbox",
                        error,
                    });
                    Vec::new()
                }
            };
            if entries.is_empty() {
                if self.stopping() {
                    return;
                }
                let sleep = tokio::time::sleep(config.poll);
                tokio::select! {
                    () = produced => {}
                    () = sleep => {}
                }
                continue;
            }
            let mut sent = Vec::with_capacity(entries.len());
            let mut failed = false;
            for entry in &entries {
                match sink.send(&entry.event).await {
                    Ok(()) => {
                        config.at(ProbePoint::Sent(entry.seq));
                        sent.push(entry.seq);
                    }
                    Err(message) => {
                        self.report(Report::SinkFailed {
                            seq: entry.seq,
                            message,
                        });
                        // Keep the order: the rest goes again after the lease expires.
                        failed = true;
                        break;
                    }
                }
            }
            if let Err(error) = self.inner.store.mark_delivered(&sent, self.now()).await {
                self.report(Report::StoreFailed {
                    during: "mark_delivered",
                    error,
                });
            }
            if failed && self.stopping() {
                // What the sink refused stays in the outbox for the next worker.
                return;
            }
        }
    }
}
