//! [`AnyStore`]: the store a URL names, among those this build has.

use std::path::PathBuf;
use std::time::Duration;

use jiff::Timestamp;

use super::{
    Claimed, Commit, CommitResult, Definition, Delivery, HistoryEntry, InstanceSummary, ListFilter,
    NewInstance, OutboxEntry, PurgeFilter, Purged, Routed, Store, StoreError, StoreErrorKind,
    StoredEvent, Versions,
};
use crate::host::InstanceId;

/// One of the stores this build has (cargo features `sqlite` and `postgres`), chosen by URL
/// (see [`AnyStore::open`]). It implements [`Store`] by handing each call to the store it holds.
#[derive(Clone)]
#[non_exhaustive]
pub enum AnyStore {
    /// A SQLite file.
    #[cfg(feature = "sqlite")]
    Sqlite(super::sqlite::SqliteStore),
    /// A PostgreSQL database.
    #[cfg(feature = "postgres")]
    Postgres(super::postgres::PostgresStore),
}

/// Where a URL says the store is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

/// Reads a store URL (see [`AnyStore::open`]).
fn locate(url: &str) -> Result<Location, StoreError> {
    if let Some(path) = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
    {
        if path.is_empty() {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                format!("{url:?} names no file"),
            ));
        }
        return Ok(Location::Sqlite(PathBuf::from(path)));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok(Location::Postgres(url.to_string()));
    }
    let is_sqlite_file = [".db", ".sqlite", ".sqlite3"]
        .iter()
        .any(|extension| url.len() > extension.len() && url.ends_with(extension));
    if is_sqlite_file && !url.contains("://") {
        return Ok(Location::Sqlite(PathBuf::from(url)));
    }
    Err(StoreError::new(
        StoreErrorKind::Invalid,
        format!(
            "{url:?} is not a store URL: use sqlite:PATH, a file ending in .db or .sqlite, or \
             postgres://user@host/database"
        ),
    ))
}

/// The refusal of a store whose cargo feature this build lacks.
#[cfg(not(all(feature = "sqlite", feature = "postgres")))]
fn feature_off(kind: &str, feature: &str) -> StoreError {
    StoreError::new(
        StoreErrorKind::Invalid,
        format!(
            "this build has no {kind} store: build swf-runtime with the cargo feature `{feature}`"
        ),
    )
}

impl AnyStore {
    /// Opens the store `url` names:
    ///
    /// - `sqlite:PATH`, `sqlite://PATH`, or a plain path ending in `.db`, `.sqlite` or `.sqlite3`:
    ///   a SQLite file (created when missing), with feature `sqlite`;
    /// - `postgres://...` or `postgresql://...`: a PostgreSQL database, with feature `postgres`
    ///   (see `PostgresStore::open` for schemas).
    ///
    /// # Errors
    /// [`StoreErrorKind::Invalid`] for anything else, or for a store whose feature this build
    /// lacks (the message names the feature); else whatever opening that store reports.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        match locate(url)? {
            #[cfg(feature = "sqlite")]
            Location::Sqlite(path) => {
                Ok(Self::Sqlite(super::sqlite::SqliteStore::open(path).await?))
            }
            #[cfg(not(feature = "sqlite"))]
            Location::Sqlite(_) => Err(feature_off("SQLite", "sqlite")),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => Ok(Self::Postgres(
                super::postgres::PostgresStore::open(&url).await?,
            )),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(_) => Err(feature_off("PostgreSQL", "postgres")),
        }
    }

    /// Opens the store `url` names (as [`AnyStore::open`]) only if it exists and has this
    /// build's schema, and changes nothing in it to open it: no file created, no table, no
    /// migration, no switch to WAL. What `swf` opens: a mistyped path or URL, or another
    /// application's database, is refused instead of getting an empty store.
    ///
    /// # Errors
    /// As [`AnyStore::open`]; see `SqliteStore::open_existing` and
    /// `PostgresStore::open_existing` for the stores that are not there or not of this build.
    pub async fn open_existing(url: &str) -> Result<Self, StoreError> {
        match locate(url)? {
            #[cfg(feature = "sqlite")]
            Location::Sqlite(path) => Ok(Self::Sqlite(
                super::sqlite::SqliteStore::open_existing(path).await?,
            )),
            #[cfg(not(feature = "sqlite"))]
            Location::Sqlite(_) => Err(feature_off("SQLite", "sqlite")),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => Ok(Self::Postgres(
                super::postgres::PostgresStore::open_existing(&url).await?,
            )),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(_) => Err(feature_off("PostgreSQL", "postgres")),
        }
    }
}

/// Hands a call to the store held.
macro_rules! dispatch {
    ($self:ident, $store:ident => $call:expr) => {
        match *$self {
            #[cfg(feature = "sqlite")]
            AnyStore::Sqlite(ref $store) => $call.await,
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(ref $store) => $call.await,
        }
    };
}

// Without any store feature the enum has no variant, and the arguments go unused.
#[cfg_attr(
    not(any(feature = "sqlite", feature = "postgres")),
    allow(unused_variables)
)]
impl Store for AnyStore {
    async fn register(
        &self,
        definition: &Definition,
        now: Timestamp,
    ) -> Result<Timestamp, StoreError> {
        dispatch!(self, store => store.register(definition, now))
    }

    async fn create(
        &self,
        instances: Vec<NewInstance>,
        now: Timestamp,
    ) -> Result<Vec<InstanceId>, StoreError> {
        dispatch!(self, store => store.create(instances, now))
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
        dispatch!(self, store => store.claim(workflow, versions, worker, now, lease, limit))
    }

    async fn claim_ids(
        &self,
        ids: &[InstanceId],
        versions: &Versions,
        worker: &str,
        now: Timestamp,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError> {
        dispatch!(self, store => store.claim_ids(ids, versions, worker, now, lease))
    }

    async fn renew(
        &self,
        ids: &[InstanceId],
        worker: &str,
        until: Timestamp,
    ) -> Result<Vec<InstanceId>, StoreError> {
        dispatch!(self, store => store.renew(ids, worker, until))
    }

    async fn commit(
        &self,
        commits: Vec<Commit>,
        now: Timestamp,
    ) -> Result<Vec<CommitResult>, StoreError> {
        dispatch!(self, store => store.commit(commits, now))
    }

    async fn deliver(
        &self,
        deliveries: Vec<Delivery>,
        now: Timestamp,
    ) -> Result<Vec<Routed>, StoreError> {
        dispatch!(self, store => store.deliver(deliveries, now))
    }

    async fn expire_start_groups(
        &self,
        workflow: &str,
        now: Timestamp,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        dispatch!(self, store => store.expire_start_groups(workflow, now))
    }

    async fn next_wake(
        &self,
        workflow: &str,
        versions: &Versions,
        now: Timestamp,
    ) -> Result<Option<Timestamp>, StoreError> {
        dispatch!(self, store => store.next_wake(workflow, versions, now))
    }

    async fn claim_outbox(
        &self,
        workflow: &str,
        worker: &str,
        now: Timestamp,
        lease: Duration,
        limit: usize,
    ) -> Result<Vec<OutboxEntry>, StoreError> {
        dispatch!(self, store => store.claim_outbox(workflow, worker, now, lease, limit))
    }

    async fn mark_delivered(&self, seqs: &[u64], now: Timestamp) -> Result<(), StoreError> {
        dispatch!(self, store => store.mark_delivered(seqs, now))
    }

    async fn list(&self, filter: &ListFilter) -> Result<Vec<InstanceSummary>, StoreError> {
        dispatch!(self, store => store.list(filter))
    }

    async fn instance(&self, id: InstanceId) -> Result<Option<Claimed>, StoreError> {
        dispatch!(self, store => store.instance(id))
    }

    async fn history(&self, id: InstanceId) -> Result<Vec<HistoryEntry>, StoreError> {
        dispatch!(self, store => store.history(id))
    }

    async fn cancel(
        &self,
        id: InstanceId,
        reason: &str,
        now: Timestamp,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        dispatch!(self, store => store.cancel(id, reason, now))
    }

    async fn redrive(&self, id: InstanceId, now: Timestamp) -> Result<(), StoreError> {
        dispatch!(self, store => store.redrive(id, now))
    }

    async fn purge(&self, filter: &PurgeFilter) -> Result<Purged, StoreError> {
        dispatch!(self, store => store.purge(filter))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_their_store() {
        let sqlite = |path: &str| Ok(Location::Sqlite(PathBuf::from(path)));
        assert_eq!(locate("sqlite:data/swf.db"), sqlite("data/swf.db"));
        assert_eq!(locate("sqlite:///var/lib/swf"), sqlite("/var/lib/swf"));
        assert_eq!(locate("sqlite://relative.file"), sqlite("relative.file"));
        assert_eq!(locate("/tmp/swf.sqlite"), sqlite("/tmp/swf.sqlite"));
        assert_eq!(locate("swf.db"), sqlite("swf.db"));
        let postgres = "postgres://postgres@127.0.0.1/test";
        assert_eq!(
            locate(postgres),
            Ok(Location::Postgres(postgres.to_string()))
        );
        assert_eq!(
            locate("postgresql://host/db"),
            Ok(Location::Postgres("postgresql://host/db".to_string()))
        );
        for refused in [
            "",
            "sqlite:",
            "mysql://host/db",
            "swf.txt",
            ".db",
            "http://x/y.db",
        ] {
            let error = locate(refused).err();
            assert_eq!(
                error.map(|error| error.kind),
                Some(StoreErrorKind::Invalid),
                "{refused:?}"
            );
        }
    }

    #[cfg(not(feature = "postgres"))]
    #[tokio::test]
    async fn a_store_without_its_feature_names_the_feature() {
        let error = AnyStore::open("postgres://localhost/db")
            .await
            .err()
            .unwrap();
        assert_eq!(error.kind, StoreErrorKind::Invalid);
        assert!(error.message.contains("`postgres`"), "{error}");
    }

    #[cfg(not(feature = "sqlite"))]
    #[tokio::test]
    async fn a_sqlite_url_without_its_feature_names_the_feature() {
        let error = AnyStore::open("sqlite:x.db").await.err().unwrap();
        assert_eq!(error.kind, StoreErrorKind::Invalid);
        assert!(error.message.contains("`sqlite`"), "{error}");
    }

    /// The whole conformance suite through the dispatch, on SQLite.
    #[cfg(feature = "sqlite")]
    mod on_sqlite {
        use super::AnyStore;
        use crate::store::conformance::conformance_tests;

        async fn fresh() -> Option<(AnyStore, tempfile::TempDir)> {
            let directory = tempfile::tempdir().unwrap();
            let url = format!("sqlite:{}", directory.path().join("any.db").display());
            let store = AnyStore::open(&url).await.unwrap();
            assert!(matches!(store, AnyStore::Sqlite(_)));
            Some((store, directory))
        }

        conformance_tests!(fresh);
    }
}
