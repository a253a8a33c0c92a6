//! What the durable benchmarks share: a probe that counts commits and times them, the
//! process's memory, the size of a store.

#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use swf_runtime::{Discard, DurableConfig, DurableHost, Machine, ProbePoint};

/// Counts the bytes currently allocated; a bench makes it its global allocator (`#[global_allocator]
/// static ALLOCATOR: common::Counting = common::Counting;`) and reads [`live_bytes`].
pub struct Counting;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// The number in environment variable `name` (`1_000_000` allowed), else `default`.
pub fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// The bytes allocated now, under [`Counting`].
pub fn live_bytes() -> isize {
    LIVE_BYTES.load(Ordering::Relaxed)
}

/// A durable host's worker loop running in the background until [`Worker::stop`].
pub struct Worker {
    stop: tokio::sync::oneshot::Sender<()>,
    done: tokio::task::JoinHandle<()>,
}

impl Worker {
    /// Runs `host`'s worker loop, its produced events discarded.
    pub fn start<M: Machine, S: Store>(host: &DurableHost<M, S>) -> Self {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let host = host.clone();
        let done = tokio::spawn(async move {
            host.run(Discard, async {
                let _ = stopped.await;
            })
            .await;
        });
        Self { stop, done }
    }

    /// Stops the loop and waits for it to end.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.done.await.expect("the worker");
    }
}

/// Counts the transitions a durable host commits and, when asked, times each commit (from the
/// moment the step is about to be committed to the moment the store answered).
#[derive(Default)]
pub struct Commits {
    committed: AtomicU64,
    timing: AtomicBool,
    started: Mutex<Option<Instant>>,
    latencies: Mutex<Vec<Duration>>,
}

impl Commits {
    /// A fresh counter.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// `config` with this counter as its probe.
    pub fn probe(self: &Arc<Self>, config: DurableConfig) -> DurableConfig {
        let commits = Arc::clone(self);
        config.probe(move |point| commits.at(point))
    }

    fn at(&self, point: ProbePoint) {
        match point {
            ProbePoint::Commit(..) if self.timing.load(Ordering::Relaxed) => {
                *self.started.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
            }
            ProbePoint::Committed(..) => {
                if self.timing.load(Ordering::Relaxed) {
                    let started = self
                        .started
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .take();
                    if let Some(started) = started {
                        self.latencies
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(started.elapsed());
                    }
                }
                self.committed.fetch_add(1, Ordering::Release);
            }
            _ => {}
        }
    }

    /// Transitions committed so far (instance creations not counted: they are not probed).
    pub fn committed(&self) -> u64 {
        self.committed.load(Ordering::Acquire)
    }

    /// Waits until at least `count` transitions were committed in all.
    pub async fn until(&self, count: u64) {
        while self.committed() < count {
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
    }

    /// Times each commit from now on (only meaningful with one instance stepping at a time).
    pub fn time_commits(&self, on: bool) {
        self.timing.store(on, Ordering::Relaxed);
    }

    /// The commit times recorded so far, emptied.
    pub fn take_latencies(&self) -> Vec<Duration> {
        std::mem::take(
            &mut *self
                .latencies
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}

/// The median of `samples` (sorted in place); zero when empty.
pub fn median(samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// A field of `/proc/self/status` in bytes (`VmRSS`, `VmHWM`), or 0 where there is none.
pub fn proc_status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| {
            let rest = line.strip_prefix(field)?.strip_prefix(':')?;
            let kib: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(0)
}

/// The size of the SQLite file at `path` and of its write-ahead log.
pub fn sqlite_bytes(path: &Path) -> (u64, u64) {
    let size = |path: &Path| std::fs::metadata(path).map_or(0, |meta| meta.len());
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    (size(path), size(Path::new(&wal)))
}

/// The bytes of every table of PostgreSQL schema `schema`, with its indexes and TOAST.
pub async fn postgres_bytes(url: &str, schema: &str) -> u64 {
    let Ok((client, connection)) = tokio_postgres::connect(url, tokio_postgres::NoTls).await else {
        return 0;
    };
    tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relkind = 'r'",
            &[&schema],
        )
        .await;
    row.map_or(0, |row| u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
}

/// `n` with thousands separators.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `bytes` in MiB.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Calls of one store method: how many, how many items they carried, how long they took.
#[derive(Default)]
pub struct MethodStats {
    calls: AtomicU64,
    items: AtomicU64,
    nanos: AtomicU64,
}

/// A store that counts and times the calls the host makes, for the timing breakdown.
#[derive(Clone)]
pub struct Counted<S> {
    inner: S,
    stats: Arc<[MethodStats; 8]>,
}

const METHODS: [&str; 8] = [
    "create",
    "claim",
    "claim_ids",
    "commit",
    "deliver",
    "next_wake",
    "claim_outbox",
    "other",
];

impl<S: Store> Counted<S> {
    /// Counts the calls to `inner`.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            stats: Arc::default(),
        }
    }

    /// Forgets what was counted.
    pub fn reset(&self) {
        for stats in self.stats.iter() {
            stats.calls.store(0, Ordering::Relaxed);
            stats.items.store(0, Ordering::Relaxed);
            stats.nanos.store(0, Ordering::Relaxed);
        }
    }

    /// One line per method called: calls, items per call, mean time per call.
    pub fn breakdown(&self) -> String {
        let mut out = String::new();
        for (name, stats) in METHODS.iter().zip(self.stats.iter()) {
            let calls = stats.calls.load(Ordering::Relaxed);
            if calls == 0 {
                continue;
            }
            let items = stats.items.load(Ordering::Relaxed);
            let nanos = stats.nanos.load(Ordering::Relaxed);
            out.push_str(&format!(
                "  {name:<12} {calls:>8} calls, {:>7.1} items/call, {:>8.0} µs/call, {:>7.2} s in all\n",
                items as f64 / calls as f64,
                nanos as f64 / calls as f64 / 1000.0,
                nanos as f64 / 1e9,
            ));
        }
        out
    }

    async fn timed<T>(
        &self,
        method: usize,
        items: usize,
        call: impl std::future::Future<Output = T>,
    ) -> T {
        let started = Instant::now();
        let answer = call.await;
        let stats = &self.stats[method];
        stats.calls.fetch_add(1, Ordering::Relaxed);
        stats.items.fetch_add(items as u64, Ordering::Relaxed);
        stats
            .nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        answer
    }
}

use swf_runtime::InstanceId;
use swf_runtime::Timestamp;
use swf_runtime::store::{
    Claimed, Commit, CommitResult, Definition, Delivery, HistoryEntry, InstanceSummary, ListFilter,
    NewInstance, OutboxEntry, PurgeFilter, Purged, Routed, Store, StoreError, StoredEvent,
    Versions,
};

impl<S: Store> Store for Counted<S> {
    async fn register(
        &self,
        definition: &Definition,
        now: Timestamp,
    ) -> Result<Timestamp, StoreError> {
        self.timed(7, 1, self.inner.register(definition, now)).await
    }
    async fn create(
        &self,
        instances: Vec<NewInstance>,
        now: Timestamp,
    ) -> Result<Vec<InstanceId>, StoreError> {
        let n = instances.len();
        self.timed(0, n, self.inner.create(instances, now)).await
    }
    async fn claim(
        &self,
        workflow: &str,
        versions: &Versions,
        worker: &str,
        now: Timestamp,
        lease: Duration,
        limit: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        let claim = self
            .inner
            .claim(workflow, versions, worker, now, lease, limit);
        let claimed = self.timed(1, 0, claim).await;
        if let Ok(claimed) = &claimed {
            self.stats[1]
                .items
                .fetch_add(claimed.len() as u64, Ordering::Relaxed);
        }
        claimed
    }
    async fn claim_ids(
        &self,
        ids: &[InstanceId],
        versions: &Versions,
        worker: &str,
        now: Timestamp,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError> {
        let claim = self.inner.claim_ids(ids, versions, worker, now, lease);
        self.timed(2, ids.len(), claim).await
    }
    async fn renew(
        &self,
        ids: &[InstanceId],
        worker: &str,
        until: Timestamp,
    ) -> Result<Vec<InstanceId>, StoreError> {
        self.timed(7, ids.len(), self.inner.renew(ids, worker, until))
            .await
    }
    async fn commit(
        &self,
        commits: Vec<Commit>,
        now: Timestamp,
    ) -> Result<Vec<CommitResult>, StoreError> {
        let n = commits.len();
        self.timed(3, n, self.inner.commit(commits, now)).await
    }
    async fn deliver(
        &self,
        deliveries: Vec<Delivery>,
        now: Timestamp,
    ) -> Result<Vec<Routed>, StoreError> {
        let n = deliveries.len();
        self.timed(4, n, self.inner.deliver(deliveries, now)).await
    }
    async fn expire_start_groups(
        &self,
        workflow: &str,
        now: Timestamp,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.timed(7, 1, self.inner.expire_start_groups(workflow, now))
            .await
    }
    async fn next_wake(
        &self,
        workflow: &str,
        versions: &Versions,
        now: Timestamp,
    ) -> Result<Option<Timestamp>, StoreError> {
        self.timed(5, 1, self.inner.next_wake(workflow, versions, now))
            .await
    }
    async fn claim_outbox(
        &self,
        workflow: &str,
        worker: &str,
        now: Timestamp,
        lease: Duration,
        limit: usize,
    ) -> Result<Vec<OutboxEntry>, StoreError> {
        self.timed(
            6,
            1,
            self.inner.claim_outbox(workflow, worker, now, lease, limit),
        )
        .await
    }
    async fn mark_delivered(&self, seqs: &[u64], now: Timestamp) -> Result<(), StoreError> {
        self.timed(7, seqs.len(), self.inner.mark_delivered(seqs, now))
            .await
    }
    async fn list(&self, filter: &ListFilter) -> Result<Vec<InstanceSummary>, StoreError> {
        self.inner.list(filter).await
    }
    async fn instance(&self, id: InstanceId) -> Result<Option<Claimed>, StoreError> {
        self.inner.instance(id).await
    }
    async fn history(&self, id: InstanceId) -> Result<Vec<HistoryEntry>, StoreError> {
        self.inner.history(id).await
    }
    async fn cancel(
        &self,
        id: InstanceId,
        reason: &str,
        now: Timestamp,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.inner.cancel(id, reason, now).await
    }
    async fn redrive(&self, id: InstanceId, now: Timestamp) -> Result<(), StoreError> {
        self.inner.redrive(id, now).await
    }

    async fn purge(&self, filter: &PurgeFilter) -> Result<Purged, StoreError> {
        self.inner.purge(filter).await
    }
}

/// Prints to stderr the first reports of a durable host that are not ends (conflicts, store
/// failures, refusals, panics, unmatched events): a run that has any is not a clean
/// measurement. Returns the count of such reports, updated as they come.
pub fn watch_reports(
    mut reports: tokio::sync::broadcast::Receiver<swf_runtime::Report>,
) -> Arc<AtomicU64> {
    let count = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&count);
    tokio::spawn(async move {
        loop {
            match reports.recv().await {
                Ok(swf_runtime::Report::Ended { .. }) => {}
                Ok(report) => {
                    if counted.fetch_add(1, Ordering::Relaxed) < 10 {
                        eprintln!("report: {report:?}");
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    count
}

/// CPU time (user + system) used so far by this process's thread named `name`, or zero when
/// there is none (Linux: `/proc/self/task/*/stat`).
pub fn thread_cpu(name: &str) -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    for task in tasks.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim() == name {
            return stat_cpu(&task.path().join("stat"));
        }
    }
    Duration::ZERO
}

/// CPU time (user + system) used so far by this whole process, every thread counted.
pub fn process_cpu() -> Duration {
    stat_cpu(Path::new("/proc/self/stat"))
}

/// The CPU time (user + system) in a `stat` file of `/proc`, zero when it cannot be read.
fn stat_cpu(path: &Path) -> Duration {
    // SAFETY: sysconf has no preconditions.
    let ticks = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(100);
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    // The fields after the command (which is in parentheses): state is field 3, utime 14.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return Duration::ZERO;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11).and_then(|f| f.parse().ok()).unwrap_or(0);
    let stime: u64 = fields.get(12).and_then(|f| f.parse().ok()).unwrap_or(0);
    Duration::from_millis((utime + stime) * 1000 / ticks.max(1))
}
