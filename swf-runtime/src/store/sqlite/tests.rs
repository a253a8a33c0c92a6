//! The conformance suite on SQLite, and what only SQLite has: its file and its schema versions.

use std::ffi::c_int;

use tempfile::TempDir;

use super::SqliteStore;
use crate::store::conformance::{
    BACK_TO_VERSION_1, after_migration, assert_newer_schema_refused, at, before_migration,
    conformance_tests,
};
use crate::store::{Definition, Store, StoreError, StoreErrorKind};

/// A fresh store in a temporary directory, removed when the guard drops.
async fn fresh() -> Option<(SqliteStore, TempDir)> {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("store.db"))
        .await
        .unwrap();
    Some((store, directory))
}

conformance_tests!(fresh);

#[tokio::test]
async fn reopening_keeps_the_data_and_applies_nothing() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("store.db");
    let definition = Definition {
        workflow: "wf".to_string(),
        version: None,
        hash: "h".to_string(),
    };
    let store = SqliteStore::open(&path).await.unwrap();
    store.register(&definition, at(1)).await.unwrap();
    drop(store);
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(store.register(&definition, at(9)).await.unwrap(), at(1));
    drop(store);
    let connection = rusqlite::Connection::open(&path).unwrap();
    let versions: Vec<i64> = connection
        .prepare("SELECT version FROM swf_schema_version ORDER BY version")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let expected: Vec<i64> = super::schema::MIGRATIONS
        .iter()
        .map(|(version, _)| *version)
        .collect();
    assert_eq!(versions, expected, "each migration is applied once");
}

/// A store of the release before start keys (schema version 1) is migrated when opened: its
/// instances kept, keyed starts taken.
#[tokio::test]
async fn a_version_1_store_is_migrated() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("store.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let existing = before_migration(&store).await;
    drop(store);
    let connection = rusqlite::Connection::open(&path).unwrap();
    connection.execute_batch(BACK_TO_VERSION_1).unwrap();
    drop(connection);
    let store = SqliteStore::open(&path).await.unwrap();
    after_migration(&store, existing).await;
}

#[tokio::test]
async fn a_newer_schema_is_refused() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("store.db");
    drop(SqliteStore::open(&path).await.unwrap());
    let connection = rusqlite::Connection::open(&path).unwrap();
    connection
        .execute(
            "INSERT INTO swf_schema_version (version, applied_at) VALUES (999, 0)",
            [],
        )
        .unwrap();
    drop(connection);
    assert_newer_schema_refused(SqliteStore::open(&path).await);
}

/// The names of the entries of `directory`, sorted.
fn entries(directory: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A store pointed at the wrong file once failed with "file is not a database", no path, and
/// `Unavailable` ("retrying may help").
#[tokio::test]
async fn a_file_that_is_no_database_is_refused_and_left_as_it_was() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("notes.txt");
    let notes = "Notes, not a database. ".repeat(20);
    std::fs::write(&path, &notes).unwrap();
    let Err(error) = SqliteStore::open(&path).await else {
        panic!("a text file opened as a store");
    };
    assert_eq!(error.kind, StoreErrorKind::Incompatible, "{error}");
    for part in [
        &*path.display().to_string(),
        "not a database",
        "left as it was",
        "give the path of a new file",
    ] {
        assert!(error.message.contains(part), "`{part}` in: {error}");
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), notes);
    assert_eq!(
        entries(directory.path()),
        ["notes.txt"],
        "no log left beside it"
    );
}

#[tokio::test]
async fn a_path_that_cannot_be_a_file_says_why() {
    let directory = tempfile::tempdir().unwrap();
    let Err(error) = SqliteStore::open(directory.path()).await else {
        panic!("a directory opened as a store");
    };
    assert_eq!(error.kind, StoreErrorKind::Invalid, "{error}");
    assert!(error.message.contains("is a directory"), "{error}");
    assert!(
        error
            .message
            .contains(&*directory.path().display().to_string()),
        "{error}"
    );

    let missing = directory.path().join("missing");
    let Err(error) = SqliteStore::open(missing.join("store.db")).await else {
        panic!("a store opened in a directory that does not exist");
    };
    assert_eq!(error.kind, StoreErrorKind::Invalid, "{error}");
    let expected = format!("its directory {} does not exist", missing.display());
    assert!(error.message.contains(&expected), "{error}");
    assert!(entries(directory.path()).is_empty(), "nothing created");
}

/// Errors that fail the same way again are not `Unavailable`.
#[test]
fn errors_retrying_cannot_mend_are_not_unavailable() {
    let failure = |code| -> StoreError {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None).into()
    };
    assert_eq!(
        failure(rusqlite::ffi::SQLITE_TOOBIG).kind,
        StoreErrorKind::Invalid
    );
    for code in [rusqlite::ffi::SQLITE_NOTADB, rusqlite::ffi::SQLITE_CORRUPT] {
        assert_eq!(failure(code).kind, StoreErrorKind::Incompatible);
    }
    for code in [
        rusqlite::ffi::SQLITE_BUSY,
        rusqlite::ffi::SQLITE_FULL,
        rusqlite::ffi::SQLITE_IOERR,
    ] {
        assert_eq!(failure(code).kind, StoreErrorKind::Unavailable);
    }
}

#[tokio::test]
async fn claims_and_routing_use_the_indexes() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("store.db");
    drop(SqliteStore::open(&path).await.unwrap());
    let connection = rusqlite::Connection::open(&path).unwrap();
    let plan = |sql: &str| -> String {
        let mut statement = connection
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap();
        let details: Vec<String> = statement
            .query_map([], |row| row.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        details.join("; ")
    };
    let claim = plan(
        "SELECT id FROM swf_instance WHERE workflow = 1 AND due_at IS NOT NULL AND due_at <= 5
         AND (lease_until IS NULL OR lease_until < 5) ORDER BY due_at, id LIMIT 3",
    );
    assert!(claim.contains("swf_instance_due"), "{claim}");
    assert!(
        !claim.contains("TEMP B-TREE"),
        "claims read in index order: {claim}"
    );
    let longest = plan(
        "SELECT w.instance FROM swf_wait w WHERE w.name = 1 AND NOT EXISTS (
         SELECT 1 FROM swf_binding b WHERE b.instance = w.instance AND b.attribute = 2)
         ORDER BY w.since, w.instance LIMIT 1",
    );
    assert!(longest.contains("swf_wait_longest"), "{longest}");
    let bound = plan("SELECT instance FROM swf_binding WHERE attribute = 1 AND value = 'v'");
    assert!(bound.contains("swf_binding_value"), "{bound}");
    let outbox = plan(
        "SELECT seq FROM swf_outbox WHERE delivered_at IS NULL AND (lease_until IS NULL OR lease_until < 1)
         ORDER BY seq LIMIT 3",
    );
    assert!(outbox.contains("swf_outbox_pending"), "{outbox}");
}

/// Registers `count` definitions, each in a call (a transaction) of its own.
async fn write_transactions(store: &SqliteStore, count: usize) {
    for i in 0..count {
        let definition = Definition {
            workflow: format!("wf-{i}"),
            version: None,
            hash: "h".to_string(),
        };
        store.register(&definition, at(1)).await.unwrap();
    }
}

fn file_length(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map_or(0, |metadata| metadata.len())
}

#[tokio::test]
async fn the_checkpointer_copies_the_log_into_the_file_while_the_store_runs() {
    use super::checkpoint::Checkpoints;
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("store.db");
    let checkpoints = Checkpoints {
        start_at: 8,
        force_at: c_int::MAX,
    };
    let store = SqliteStore::open_with(&path, checkpoints).await.unwrap();
    // The schema's pages sit in the log until something checkpoints them.
    let before = file_length(&path);
    write_transactions(&store, 20).await;
    // The checkpointer's thread works on its own time: wait for it, bounded.
    for _ in 0..1_000 {
        if file_length(&path) > before {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!(
        "the database file stayed at {before} bytes: nothing checkpointed the log ({} bytes)",
        file_length(&directory.path().join("store.db-wal"))
    );
}

#[tokio::test]
async fn a_log_the_checkpointer_leaves_behind_is_checkpointed_by_the_stores_thread() {
    use super::checkpoint::Checkpoints;
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("store.db");
    // The checkpointer is never woken: only the store's own bound can copy the log.
    let checkpoints = Checkpoints {
        start_at: c_int::MAX,
        force_at: 8,
    };
    let store = SqliteStore::open_with(&path, checkpoints).await.unwrap();
    let before = file_length(&path);
    write_transactions(&store, 20).await;
    // Done on the store's thread after a commit, before it answered: no waiting.
    assert!(file_length(&path) > before, "the log was not checkpointed");
}

#[tokio::test]
async fn dropping_the_store_closes_both_connections_and_removes_the_log() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("store.db");
    let store = SqliteStore::open(&path).await.unwrap();
    write_transactions(&store, 3).await;
    assert!(directory.path().join("store.db-wal").exists());
    drop(store);
    // The last connection to close checkpoints the log and deletes it: both are closed once the
    // drop returns.
    assert!(!directory.path().join("store.db-wal").exists());
}

/// A purge reads the retention indexes, not the whole tables: on a store of millions of rows,
/// a scan would hold the one writer for seconds at every round.
#[tokio::test]
async fn purges_read_the_retention_indexes() {
    let (store, directory) = fresh().await.unwrap();
    drop(store);
    let connection = rusqlite::Connection::open(directory.path().join("store.db")).unwrap();
    let plan = |sql: &str| -> String {
        connection
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map((0, 10, 1), |row| row.get::<_, String>(3))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
            .join("\n")
    };
    let ended = plan(super::retention::ENDED);
    for index in ["swf_instance_ended", "swf_outbox_instance"] {
        assert!(ended.contains(index), "{index} unused:\n{ended}");
    }
    let events = plan(super::retention::UNHELD_EVENTS);
    for index in [
        "swf_event_received",
        "swf_inbox_event",
        "swf_start_member_event",
    ] {
        assert!(events.contains(index), "{index} unused:\n{events}");
    }
}
