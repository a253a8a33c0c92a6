//! The conformance suite on SQLite, and what only SQLite has: its file and its schema versions.

use tempfile::TempDir;

use super::SqliteStore;
use crate::store::conformance::{assert_newer_schema_refused, at, conformance_tests};
use crate::store::{Definition, Store};

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
