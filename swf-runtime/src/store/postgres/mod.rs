//! [`PostgresStore`]: a store in a PostgreSQL database, shared by many worker processes.
//!
//! Workers claim instances with `SELECT ... FOR UPDATE SKIP LOCKED` and a lease, so two workers
//! never get the same instance unless its lease expired; a commit is fenced by the revision and
//! the lease (`UPDATE ... WHERE id AND revision AND lease_worker`), so a worker whose lease was
//! taken over cannot overwrite the new holder's work. Statements go through a pool of
//! connections (`deadpool-postgres`), each with its prepared-statement cache. Commits from many
//! callers are grouped into one transaction written with a fixed number of bulk statements
//! (`group`), so that many instances' transitions share one WAL flush.
//!
//! Names (workflows, definitions, event definitions, correlation attributes) are interned once,
//! each in its own short transaction, and cached: they are only ever added.

mod commits;
mod group;
mod instances;
mod names;
mod operations;
mod retention;
mod routing;
mod schema;
mod sql;

#[cfg(test)]
mod tests;

use std::str::FromStr;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use jiff::Timestamp;
use tokio_postgres::NoTls;

use super::codec::{id_column, invalid, timestamp, unavailable};
use super::{
    Claimed, Commit, CommitResult, Definition, Delivery, HistoryEntry, InstanceSummary, ListFilter,
    NewInstance, OutboxEntry, PurgeFilter, Purged, Routed, Store, StoreError, StoredEvent,
    Versions,
};
use crate::host::InstanceId;
use group::CommitQueue;
use names::NameCache;
use std::sync::Arc;

/// Most connections a store opens.
const POOL_SIZE: usize = 16;

/// How long opening a connection may take before the store reports the server unavailable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long data sent on a connection may stay unacknowledged before it is dropped: a server
/// that vanished without closing its connections (a failover to another address, a cut
/// network) fails the calls in flight within a lease rather than after the kernel's retries
/// (some 15 minutes on Linux), while the worker's leases have long expired.
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(30);

/// Keepalive probes of a connection that waits for an answer with nothing unacknowledged:
/// after this much silence, then [`KEEPALIVE_RETRIES`] probes [`KEEPALIVE_INTERVAL`] apart (25 s
/// in all). A live server's kernel answers them, however long its query runs.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_RETRIES: u32 = 3;

/// tokio-postgres's keepalive idle time when a URL sets none: two hours.
const LIBRARY_KEEPALIVE_IDLE: Duration = Duration::from_secs(2 * 60 * 60);

impl From<tokio_postgres::Error> for StoreError {
    fn from(error: tokio_postgres::Error) -> Self {
        match error.as_db_error() {
            Some(db) => {
                let message = format!(
                    "PostgreSQL: {} (SQLSTATE {})",
                    db.message(),
                    db.code().code()
                );
                // Class 22, data exception, and 54, program limit exceeded: the database refuses
                // the data itself (a character its text cannot hold, a number out of range, an
                // index entry too large), which retrying does not change. Classes 28, invalid
                // authorization, and 3D, invalid catalog name: the URL names a user or a
                // database the server does not have, or a wrong password.
                match db.code().code().get(..2) {
                    Some("22" | "54") => invalid(message),
                    Some("28" | "3D") => invalid(format!(
                        "{message}: check the user, password and database the URL names"
                    )),
                    _ => unavailable(message),
                }
            }
            None => unavailable(format!("PostgreSQL: {error}")),
        }
    }
}

impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(error: deadpool_postgres::PoolError) -> Self {
        match error {
            deadpool_postgres::PoolError::Backend(error) => error.into(),
            other => unavailable(format!("PostgreSQL: no connection: {other}")),
        }
    }
}

/// A [`Store`] in a PostgreSQL database. Cloning is cheap and shares the pool.
///
/// Open it inside the tokio runtime that uses it: the connections' tasks and the task that
/// writes grouped commits run there (the latter ends once the last clone is dropped).
#[derive(Clone)]
pub struct PostgresStore {
    core: Core,
    commits: Arc<CommitQueue>,
}

/// The pool and the names cache, which the commit task shares with the store.
#[derive(Clone)]
struct Core {
    pool: Pool,
    names: NameCache,
}

impl Core {
    /// A connection from the pool.
    async fn client(&self) -> Result<Object, StoreError> {
        Ok(self.pool.get().await?)
    }
}

impl PostgresStore {
    /// Opens the store at `url` (`postgres://user@host:port/database`, any setting
    /// tokio-postgres accepts, including `options=-csearch_path%3Dmy_schema` to work in a
    /// schema) and brings its schema up to date.
    ///
    /// # Errors
    /// [`StoreErrorKind::Invalid`](super::StoreErrorKind::Invalid) for a URL that is not one,
    /// or that names a database or user the server does not have (or a wrong password),
    /// [`StoreErrorKind::Unavailable`](super::StoreErrorKind::Unavailable) when the server
    /// cannot be reached, [`StoreErrorKind::Incompatible`](super::StoreErrorKind::Incompatible)
    /// when the database holds a newer schema than this build knows.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_config(config(url)?, None, true).await
    }

    /// Opens the store a `PostgresStore` (a `DurableHost`) created in the database at `url`
    /// (in the schema its `search_path` names first, as [`PostgresStore::open`]), as it is: it
    /// creates nothing and migrates nothing, for tools that operate an existing store (`swf`),
    /// where a mistyped URL must not give another database the store's tables.
    ///
    /// # Errors
    /// As [`PostgresStore::open`];
    /// [`StoreErrorKind::Incompatible`](super::StoreErrorKind::Incompatible) when the database
    /// has no store where the `search_path` looks (no `swf_schema_version` table), or holds a
    /// schema other than this build's (newer, or older and not yet migrated by a host of this
    /// build), and then it is left as it was.
    pub async fn open_existing(url: &str) -> Result<Self, StoreError> {
        Self::open_config(config(url)?, None, false).await
    }

    /// Opens the store in the schema `schema` of the database at `url`, creating the schema when
    /// missing: every connection of the store sets its `search_path` to it (which replaces any
    /// `options` the URL gives). `schema` is an SQL identifier: letters, digits and `_`.
    ///
    /// # Errors
    /// As [`PostgresStore::open`]; [`StoreErrorKind::Invalid`](super::StoreErrorKind::Invalid)
    /// for a schema name that is not a plain identifier.
    pub async fn open_in_schema(url: &str, schema: &str) -> Result<Self, StoreError> {
        let plain = schema
            .chars()
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
            && schema
                .chars()
                .all(|char| char.is_ascii_alphanumeric() || char == '_');
        if !plain {
            return Err(invalid(format!(
                "schema name {schema:?} is not a plain identifier (letters, digits, _)"
            )));
        }
        let mut config = config(url)?;
        config.options(format!("-csearch_path={schema}"));
        Self::open_config(config, Some(schema), true).await
    }

    /// Opens a store with `config`, in `schema` when given (created when missing); `migrate`:
    /// creates the store or brings its schema up to date, else opens only a store of this
    /// build's schema and changes nothing.
    async fn open_config(
        mut config: tokio_postgres::Config,
        schema: Option<&str>,
        migrate: bool,
    ) -> Result<Self, StoreError> {
        with_timeouts(&mut config);
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .build()
            .map_err(|error| unavailable(format!("PostgreSQL: cannot build the pool: {error}")))?;
        let core = Core {
            pool,
            names: NameCache::default(),
        };
        let mut client = core.client().await?;
        if migrate {
            if let Some(schema) = schema {
                schema::create_schema(&mut client, schema).await?;
            }
            schema::migrate(&mut client).await?;
        } else {
            schema::check_existing(&client).await?;
        }
        drop(client);
        Ok(Self {
            commits: Arc::new(CommitQueue::start(core.clone())),
            core,
        })
    }
}

/// `config` with the store's timeouts where the URL sets none (its own settings win).
fn with_timeouts(config: &mut tokio_postgres::Config) {
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(TCP_USER_TIMEOUT);
    }
    if config.get_keepalives() {
        if config.get_keepalives_idle() == LIBRARY_KEEPALIVE_IDLE {
            config.keepalives_idle(KEEPALIVE_IDLE);
        }
        if config.get_keepalives_interval().is_none() {
            config.keepalives_interval(KEEPALIVE_INTERVAL);
        }
        if config.get_keepalives_retries().is_none() {
            config.keepalives_retries(KEEPALIVE_RETRIES);
        }
    }
}

/// The connection settings of `url`.
fn config(url: &str) -> Result<tokio_postgres::Config, StoreError> {
    tokio_postgres::Config::from_str(url)
        .map_err(|error| invalid(format!("not a PostgreSQL URL ({error})")))
}

impl Store for PostgresStore {
    async fn register(
        &self,
        definition: &Definition,
        now: Timestamp,
    ) -> Result<Timestamp, StoreError> {
        let client = self.core.client().await?;
        let (_, _, deployed_at) = self.core.names.definition(&client, definition, now).await?;
        timestamp(deployed_at)
    }

    async fn create(
        &self,
        instances: Vec<NewInstance>,
        now: Timestamp,
    ) -> Result<Vec<InstanceId>, StoreError> {
        let mut client = self.core.client().await?;
        let mut resolved = Vec::with_capacity(instances.len());
        for instance in &instances {
            resolved.push(instances::resolve(&self.core.names, &client, instance, now).await?);
        }
        let transaction = client.transaction().await?;
        let mut ids = Vec::with_capacity(instances.len());
        for (instance, resolved) in instances.iter().zip(&resolved) {
            ids.push(instances::insert_instance(&transaction, instance, resolved, &[], now).await?);
        }
        transaction.commit().await?;
        Ok(ids)
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
        let mut client = self.core.client().await?;
        let Some(workflow) = self.core.names.find_workflow(&client, workflow).await? else {
            return Ok(Vec::new());
        };
        let transaction = client.transaction().await?;
        let claimed =
            instances::claim(&transaction, workflow, versions, worker, now, lease, limit).await?;
        transaction.commit().await?;
        Ok(claimed)
    }

    async fn claim_ids(
        &self,
        ids: &[InstanceId],
        versions: &Versions,
        worker: &str,
        now: Timestamp,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError> {
        let mut client = self.core.client().await?;
        let transaction = client.transaction().await?;
        let claimed = instances::claim_ids(&transaction, ids, versions, worker, now, lease).await?;
        transaction.commit().await?;
        Ok(claimed)
    }

    async fn renew(
        &self,
        ids: &[InstanceId],
        worker: &str,
        until: Timestamp,
    ) -> Result<Vec<InstanceId>, StoreError> {
        let client = self.core.client().await?;
        instances::renew(&client, ids, worker, until).await
    }

    async fn commit(
        &self,
        commits: Vec<Commit>,
        now: Timestamp,
    ) -> Result<Vec<CommitResult>, StoreError> {
        self.commits.commit(commits, now).await
    }

    async fn deliver(
        &self,
        deliveries: Vec<Delivery>,
        now: Timestamp,
    ) -> Result<Vec<Routed>, StoreError> {
        self.core.deliver_all(deliveries, now).await
    }

    async fn expire_start_groups(
        &self,
        workflow: &str,
        now: Timestamp,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let client = self.core.client().await?;
        let Some(workflow) = self.core.names.find_workflow(&client, workflow).await? else {
            return Ok(Vec::new());
        };
        routing::expire_start_groups(&client, workflow, now).await
    }

    async fn next_wake(
        &self,
        workflow: &str,
        versions: &Versions,
        _now: Timestamp,
    ) -> Result<Option<Timestamp>, StoreError> {
        let client = self.core.client().await?;
        let Some(workflow) = self.core.names.find_workflow(&client, workflow).await? else {
            return Ok(None);
        };
        instances::next_wake(&client, workflow, versions).await
    }

    async fn claim_outbox(
        &self,
        workflow: &str,
        worker: &str,
        now: Timestamp,
        lease: Duration,
        limit: usize,
    ) -> Result<Vec<OutboxEntry>, StoreError> {
        let client = self.core.client().await?;
        let Some(workflow) = self.core.names.find_workflow(&client, workflow).await? else {
            return Ok(Vec::new());
        };
        operations::claim_outbox(&client, workflow, worker, now, lease, limit).await
    }

    async fn mark_delivered(&self, seqs: &[u64], now: Timestamp) -> Result<(), StoreError> {
        let client = self.core.client().await?;
        operations::mark_delivered(&client, seqs, now).await
    }

    async fn list(&self, filter: &ListFilter) -> Result<Vec<InstanceSummary>, StoreError> {
        let client = self.core.client().await?;
        operations::list(&client, filter).await
    }

    async fn instance(&self, id: InstanceId) -> Result<Option<Claimed>, StoreError> {
        let client = self.core.client().await?;
        let id = id_column(id)?;
        Ok(instances::load(&client, &[id]).await?.pop())
    }

    async fn history(&self, id: InstanceId) -> Result<Vec<HistoryEntry>, StoreError> {
        let client = self.core.client().await?;
        operations::history(&client, id).await
    }

    async fn cancel(
        &self,
        id: InstanceId,
        reason: &str,
        now: Timestamp,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let mut client = self.core.client().await?;
        let transaction = client.transaction().await?;
        let leftovers = operations::cancel(&transaction, id, reason, now).await?;
        transaction.commit().await?;
        Ok(leftovers)
    }

    async fn purge(&self, filter: &PurgeFilter) -> Result<Purged, StoreError> {
        let mut client = self.core.client().await?;
        let transaction = client.transaction().await?;
        let purged = retention::purge(&transaction, filter).await?;
        transaction.commit().await?;
        Ok(purged)
    }

    async fn redrive(&self, id: InstanceId, now: Timestamp) -> Result<(), StoreError> {
        let mut client = self.core.client().await?;
        let transaction = client.transaction().await?;
        operations::redrive(&transaction, id, now).await?;
        transaction.commit().await?;
        Ok(())
    }
}
