//! [`SqliteStore`]: a store in one SQLite file, for one host process.
//!
//! One OS thread owns the connection and takes requests from a channel. It commits every request
//! queued in one transaction (group commit: one disk sync for many instances' transitions), each
//! request's failure undoing only its own writes, and answers each once the transaction is
//! durable.
//!
//! The file is in WAL mode with `synchronous = FULL`: a call that returned `Ok` survives a power
//! loss, which the contract needs (the host acknowledges events once `deliver` returns).

mod checkpoint;
mod commits;
mod instances;
mod names;
mod operations;
mod retention;
mod routing;
mod schema;
mod session;
mod worker;

#[cfg(test)]
mod tests;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use rusqlite::Connection;
use tokio::sync::oneshot;

use super::codec::{existing_schema, incompatible, invalid, unavailable};
use super::{
    Claimed, Commit, CommitResult, Definition, Delivery, HistoryEntry, InstanceSummary, ListFilter,
    NewInstance, OutboxEntry, PurgeFilter, Purged, Routed, Store, StoreError, StoreErrorKind,
    StoredEvent, Versions,
};
use crate::host::InstanceId;
use checkpoint::{Checkpointer, Checkpoints};
use worker::{Request, Worker};

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        use rusqlite::{Error, ErrorCode};
        match error {
            Error::FromSqlConversionFailure(..)
            | Error::IntegralValueOutOfRange(..)
            | Error::InvalidColumnType(..) => {
                incompatible(format!("SQLite: a stored row cannot be read: {error}"))
            }
            // Retrying reads the same bytes again: not `Unavailable`.
            _ if matches!(
                error.sqlite_error_code(),
                Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
            ) =>
            {
                incompatible(format!(
                    "SQLite: {error} (the file is damaged, encrypted, or not a database)"
                ))
            }
            // A string or blob over SQLite's length limit: the same request fails again.
            _ if error.sqlite_error_code() == Some(ErrorCode::TooBig) => {
                invalid(format!("SQLite: {error}"))
            }
            other => unavailable(format!("SQLite: {other}")),
        }
    }
}

/// `error`, met while opening the store at `path`, with the path.
fn opening(path: &Path, error: StoreError) -> StoreError {
    let detail = error
        .message
        .strip_prefix("SQLite: ")
        .unwrap_or(&error.message);
    StoreError::new(
        error.kind,
        format!("SQLite: cannot open {}: {detail}", path.display()),
    )
}

/// [`opening`], with what to do, for a file SQLite cannot read as a database (its first
/// statement reads the header: only that fails so).
fn unreadable(path: &Path, error: StoreError) -> StoreError {
    let error = opening(path, error);
    StoreError::new(
        error.kind,
        format!(
            "{}; it was left as it was: give the path of a new file, or of one a `SqliteStore` \
             created",
            error.message
        ),
    )
}

/// Why SQLite could not open or create a file at `path`, when the path itself says so.
fn unopenable(path: &Path) -> Option<StoreError> {
    let shown = path.display();
    if path.is_dir() {
        return Some(invalid(format!(
            "SQLite: cannot open {shown}: it is a directory; give the path of a file (created \
             when missing)"
        )));
    }
    let directory = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())?;
    (!directory.is_dir()).then(|| {
        invalid(format!(
            "SQLite: cannot create {shown}: its directory {} does not exist; create it first",
            directory.display()
        ))
    })
}

/// How a store's file is opened.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// Created when missing, its schema brought up to date ([`SqliteStore::open`]).
    CreateOrMigrate,
    /// Only a store of this build's schema, left as it is ([`SqliteStore::open_existing`]).
    Existing,
}

/// A connection to the store in the existing file at `path`, once the file is known to hold a
/// store of this build's schema; nothing written before.
fn existing(path: &Path) -> Result<Connection, StoreError> {
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_dir() => {
            return Err(invalid(format!(
                "SQLite: cannot open {shown}: it is a directory; give the path of a store's file"
            )));
        }
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(invalid(format!(
                "SQLite: there is no store at {shown} (no such file); check the path (a \
                 DurableHost creates the store when it first opens it)"
            )));
        }
        Err(error) => {
            return Err(unavailable(format!("SQLite: cannot open {shown}: {error}")));
        }
    }
    // Without SQLITE_OPEN_CREATE: a file removed since is not created again.
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
        | rusqlite::OpenFlags::SQLITE_OPEN_URI
        | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection =
        Connection::open_with_flags(path, flags).map_err(|error| opening(path, error.into()))?;
    // Before `configure`, which switches the file to WAL: a file that is not a store is left as
    // it was.
    connection
        .busy_timeout(std::time::Duration::from_secs(5))
        .map_err(|error| opening(path, error.into()))?;
    let left = "it was left as it was: give the path of the store a DurableHost created";
    match schema::existing_version(&connection) {
        Err(error) if error.kind == StoreErrorKind::Incompatible => {
            let error = opening(path, error);
            Err(StoreError::new(
                error.kind,
                format!("{}; {left}", error.message),
            ))
        }
        Err(error) => Err(opening(path, error)),
        Ok(None) => Err(incompatible(format!(
            "SQLite: {shown} holds no swf store (it has no `swf_schema_version` table); {left}"
        ))),
        Ok(Some(version)) => {
            existing_schema("SQLite", version, schema::supported_version())
                .map_err(|error| opening(path, error))?;
            Ok(connection)
        }
    }
}

/// A [`Store`] in one SQLite file. Cloning is cheap and shares the store; dropping the last
/// clone finishes the queued requests, stops the thread and closes the file.
#[derive(Clone)]
pub struct SqliteStore {
    threads: Arc<Threads>,
}

/// The store's threads. Fields drop in order: the store's thread finishes its queue and closes
/// its connection first; only then is the checkpointer stopped, so that its connection is the
/// last to close and deletes the log.
struct Threads {
    worker: Worker,
    _checkpointer: Checkpointer,
}

impl SqliteStore {
    /// Opens the store in the file at `path` (created when missing) and brings its schema up to
    /// date.
    ///
    /// # Errors
    /// [`StoreErrorKind::Invalid`] when `path` is a directory or its directory does not exist;
    /// [`StoreErrorKind::Incompatible`] when the file is not a database (or is damaged) or holds
    /// a newer schema than this build knows, and then it is left as it was;
    /// [`StoreErrorKind::Unavailable`] when the file cannot be opened or written otherwise.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path.as_ref(), Checkpoints::default()).await
    }

    /// Opens the store a `SqliteStore` (a `DurableHost`) created in the file at `path`, as it
    /// is: it creates nothing and migrates nothing, for tools that operate an existing store
    /// (`swf`), where a mistyped path must not leave a new store behind, nor another
    /// application's database be given the store's tables.
    ///
    /// # Errors
    /// [`StoreErrorKind::Invalid`] when there is no file at `path` (or it is a directory);
    /// [`StoreErrorKind::Incompatible`] when the file is not a database, is a database without
    /// a store (no `swf_schema_version` table), or holds a schema other than this build's
    /// (newer, or older and not yet migrated by a host of this build), and then it is left as
    /// it was; [`StoreErrorKind::Unavailable`] when the file cannot be opened otherwise.
    pub async fn open_existing(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_as(path.as_ref(), Checkpoints::default(), Opening::Existing).await
    }

    async fn open_with(path: &Path, checkpoints: Checkpoints) -> Result<Self, StoreError> {
        Self::open_as(path, checkpoints, Opening::CreateOrMigrate).await
    }

    async fn open_as(
        path: &Path,
        checkpoints: Checkpoints,
        mode: Opening,
    ) -> Result<Self, StoreError> {
        let path = path.to_path_buf();
        // Opening and migrating touch the disk: keep them off the async threads.
        let (connection, checkpointer) = tokio::task::spawn_blocking(move || {
            let mut connection = match mode {
                Opening::CreateOrMigrate => Connection::open(&path).map_err(|error| {
                    unopenable(&path).unwrap_or_else(|| opening(&path, error.into()))
                })?,
                Opening::Existing => existing(&path)?,
            };
            // SQLite reads the file at its first statement: a file that is no database fails
            // here, untouched.
            schema::configure(&connection).map_err(|error| match error.kind {
                StoreErrorKind::Incompatible => unreadable(&path, error),
                _ => opening(&path, error),
            })?;
            if mode == Opening::CreateOrMigrate {
                schema::migrate(&mut connection).map_err(|error| opening(&path, error))?;
            }
            let checkpointer = Checkpointer::start(&path, &mut connection, checkpoints)?;
            Ok::<_, StoreError>((connection, checkpointer))
        })
        .await
        .map_err(|error| unavailable(format!("SQLite: opening failed: {error}")))??;
        let worker = Worker::start(connection, "swf-sqlite".to_string())?;
        Ok(Self {
            threads: Arc::new(Threads {
                worker,
                _checkpointer: checkpointer,
            }),
        })
    }

    /// Runs `work` on the store's thread, in the next group's transaction.
    async fn call<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        // `Fn`: the store's thread runs a group of requests again when one of them fails.
        F: Fn(&session::Session) -> Result<T, StoreError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        self.threads
            .worker
            .send(Box::new(Request::new(work, reply)))?;
        let (outcome, work) = answer
            .await
            .map_err(|_| unavailable("the SQLite store's thread stopped before answering"))?;
        drop(work);
        outcome
    }
}

impl Store for SqliteStore {
    async fn register(
        &self,
        definition: &Definition,
        now: Timestamp,
    ) -> Result<Timestamp, StoreError> {
        let definition = definition.clone();
        let deployed_at = self
            .call(move |connection| names::definition_row(connection, &definition, now))
            .await?
            .deployed_at;
        super::codec::timestamp(deployed_at)
    }

    async fn create(
        &self,
        instances: Vec<NewInstance>,
        now: Timestamp,
    ) -> Result<Vec<InstanceId>, StoreError> {
        self.call(move |connection| {
            instances
                .iter()
                .map(|instance| instances::insert_instance(connection, instance, &[], now))
                .collect()
        })
        .await
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
        let (workflow, versions, worker) =
            (workflow.to_string(), versions.clone(), worker.to_string());
        self.call(move |connection| {
            instances::claim(connection, &workflow, &versions, &worker, now, lease, limit)
        })
        .await
    }

    async fn claim_ids(
        &self,
        ids: &[InstanceId],
        versions: &Versions,
        worker: &str,
        now: Timestamp,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError> {
        let (ids, versions, worker) = (ids.to_vec(), versions.clone(), worker.to_string());
        self.call(move |connection| {
            instances::claim_ids(connection, &ids, &versions, &worker, now, lease)
        })
        .await
    }

    async fn renew(
        &self,
        ids: &[InstanceId],
        worker: &str,
        until: Timestamp,
    ) -> Result<Vec<InstanceId>, StoreError> {
        let (ids, worker) = (ids.to_vec(), worker.to_string());
        self.call(move |connection| instances::renew(connection, &ids, &worker, until))
            .await
    }

    async fn commit(
        &self,
        commits: Vec<Commit>,
        now: Timestamp,
    ) -> Result<Vec<CommitResult>, StoreError> {
        let texts = commits
            .iter()
            .map(commits::CommitTexts::of)
            .collect::<Result<Vec<_>, _>>()?;
        self.call(move |connection| commits::commit_all(connection, &commits, &texts, now))
            .await
    }

    async fn deliver(
        &self,
        deliveries: Vec<Delivery>,
        now: Timestamp,
    ) -> Result<Vec<Routed>, StoreError> {
        // Encoded here, on the caller's thread: the store's thread is what every request waits
        // for.
        let encoded = deliveries
            .iter()
            .map(|delivery| super::codec::encode_event(&delivery.event))
            .collect::<Result<Vec<_>, _>>()?;
        self.call(move |connection| routing::deliver_all(connection, &deliveries, &encoded, now))
            .await
    }

    async fn expire_start_groups(
        &self,
        workflow: &str,
        now: Timestamp,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let workflow = workflow.to_string();
        self.call(move |connection| routing::expire_start_groups(connection, &workflow, now))
            .await
    }

    async fn next_wake(
        &self,
        workflow: &str,
        versions: &Versions,
        _now: Timestamp,
    ) -> Result<Option<Timestamp>, StoreError> {
        let (workflow, versions) = (workflow.to_string(), versions.clone());
        self.call(move |connection| instances::next_wake(connection, &workflow, &versions))
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
        let (workflow, worker) = (workflow.to_string(), worker.to_string());
        self.call(move |connection| {
            operations::claim_outbox(connection, &workflow, &worker, now, lease, limit)
        })
        .await
    }

    async fn mark_delivered(&self, seqs: &[u64], now: Timestamp) -> Result<(), StoreError> {
        let seqs = seqs.to_vec();
        self.call(move |connection| operations::mark_delivered(connection, &seqs, now))
            .await
    }

    async fn list(&self, filter: &ListFilter) -> Result<Vec<InstanceSummary>, StoreError> {
        let filter = filter.clone();
        self.call(move |connection| operations::list(connection, &filter))
            .await
    }

    async fn instance(&self, id: InstanceId) -> Result<Option<Claimed>, StoreError> {
        self.call(move |connection| instances::load(connection, super::codec::id_column(id)?, None))
            .await
    }

    async fn history(&self, id: InstanceId) -> Result<Vec<HistoryEntry>, StoreError> {
        self.call(move |connection| operations::history(connection, id))
            .await
    }

    async fn cancel(
        &self,
        id: InstanceId,
        reason: &str,
        now: Timestamp,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let reason = reason.to_string();
        self.call(move |connection| operations::cancel(connection, id, &reason, now))
            .await
    }

    async fn purge(&self, filter: &PurgeFilter) -> Result<Purged, StoreError> {
        let filter = filter.clone();
        self.call(move |connection| retention::purge(connection, &filter))
            .await
    }

    async fn redrive(&self, id: InstanceId, now: Timestamp) -> Result<(), StoreError> {
        self.call(move |connection| operations::redrive(connection, id, now))
            .await
    }
}
