//! The conformance suite on PostgreSQL, each test in a fresh schema of the server at
//! `127.0.0.1:5432` (database `test`, user `postgres`).

use std::sync::atomic::{AtomicU64, Ordering};

use super::PostgresStore;
use crate::store::conformance::{
    BACK_TO_VERSION_1, after_migration, assert_newer_schema_refused, at, before_migration,
    conformance_tests, delivery,
};
use crate::store::{Definition, Store, StoreErrorKind};

/// The test server.
const URL: &str = "postgres://postgres@127.0.0.1:5432/test";

static SCHEMAS: AtomicU64 = AtomicU64::new(0);

/// Drops its schema when dropped (also when a check panicked).
struct Schema {
    name: String,
}

impl Drop for Schema {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Drop runs inside the test's runtime, which cannot block on itself: use a thread. (The
        // tests run on a multi-threaded runtime, so that the store's connections can still close
        // while this waits.)
        let dropping = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                if let Ok((client, connection)) =
                    tokio_postgres::connect(URL, tokio_postgres::NoTls).await
                {
                    tokio::spawn(connection);
                    let _ = client
                        .batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
                        .await;
                }
            });
        });
        let _ = dropping.join();
    }
}

/// Whether the test server answers. When it does not: with `CI=true` the test fails (CI must
/// test PostgreSQL), elsewhere it is skipped with a note on stderr.
async fn server_available() -> bool {
    match tokio_postgres::connect(URL, tokio_postgres::NoTls).await {
        Ok(_) => true,
        Err(error) => {
            let why = format!("PostgreSQL at {URL} cannot be reached: {error}");
            if std::env::var("CI").is_ok_and(|ci| ci == "true") {
                panic!("{why} (CI=true: the PostgreSQL tests must run)");
            }
            eprintln!("skipping a PostgreSQL test: {why}");
            false
        }
    }
}

/// A fresh schema's name.
fn schema_name() -> String {
    format!(
        "swf_t_{}_{}",
        std::process::id(),
        SCHEMAS.fetch_add(1, Ordering::Relaxed)
    )
}

/// A store in a fresh schema, or `None` when the server is away (outside CI).
async fn fresh() -> Option<(PostgresStore, Schema)> {
    if !server_available().await {
        return None;
    }
    let schema = Schema {
        name: schema_name(),
    };
    let store = PostgresStore::open_in_schema(URL, &schema.name)
        .await
        .unwrap();
    Some((store, schema))
}

conformance_tests!(fresh);

/// The definition of the workflow `wf`.
fn definition() -> Definition {
    Definition {
        workflow: "wf".to_string(),
        version: None,
        hash: "h".to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopening_keeps_the_data_and_applies_nothing() {
    let Some((store, schema)) = fresh().await else {
        return;
    };
    let definition = definition();
    store.register(&definition, at(1)).await.unwrap();
    drop(store);
    let store = PostgresStore::open_in_schema(URL, &schema.name)
        .await
        .unwrap();
    assert_eq!(store.register(&definition, at(9)).await.unwrap(), at(1));
    let client = store.core.client().await.unwrap();
    let versions: Vec<i64> = client
        .query(
            "SELECT version FROM swf_schema_version ORDER BY version",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    let expected: Vec<i64> = super::schema::MIGRATIONS
        .iter()
        .map(|(version, _)| *version)
        .collect();
    assert_eq!(versions, expected, "each migration is applied once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_opens_migrate_once() {
    if !server_available().await {
        return;
    }
    let schema = Schema {
        name: schema_name(),
    };
    let opens: Vec<_> = (0..4)
        .map(|_| {
            let name = schema.name.clone();
            tokio::spawn(async move { PostgresStore::open_in_schema(URL, &name).await.map(|_| ()) })
        })
        .collect();
    for open in opens {
        open.await.unwrap().unwrap();
    }
    let store = PostgresStore::open_in_schema(URL, &schema.name)
        .await
        .unwrap();
    let client = store.core.client().await.unwrap();
    let count: i64 = client
        .query_one("SELECT count(*) FROM swf_schema_version", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        count,
        i64::try_from(super::schema::MIGRATIONS.len()).unwrap()
    );
}

/// A store of the release before start keys (schema version 1) is migrated when opened: its
/// instances kept, keyed starts taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_1_store_is_migrated() {
    let Some((store, schema)) = fresh().await else {
        return;
    };
    let existing = before_migration(&store).await;
    let client = store.core.client().await.unwrap();
    client.batch_execute(BACK_TO_VERSION_1).await.unwrap();
    drop(client);
    drop(store);
    let store = PostgresStore::open_in_schema(URL, &schema.name)
        .await
        .unwrap();
    after_migration(&store, existing).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_schema_is_refused() {
    let Some((store, schema)) = fresh().await else {
        return;
    };
    store
        .core
        .client()
        .await
        .unwrap()
        .batch_execute("INSERT INTO swf_schema_version (version, applied_at) VALUES (999, 0)")
        .await
        .unwrap();
    drop(store);
    assert_newer_schema_refused(PostgresStore::open_in_schema(URL, &schema.name).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urls_and_schema_names_are_checked() {
    let error = PostgresStore::open("postgres://[bad").await.err().unwrap();
    assert_eq!(error.kind, crate::store::StoreErrorKind::Invalid, "{error}");
    let error = PostgresStore::open_in_schema(URL, "x; DROP TABLE y")
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind, crate::store::StoreErrorKind::Invalid, "{error}");
}

/// Data the database itself refuses (SQLSTATE class 22: a U+0000 its text cannot hold; class
/// 54: an index entry larger than it takes) is `Invalid`, not `Unavailable`: retrying the same
/// request cannot help. (The durable host refuses such events before they reach any store;
/// this is what a store user calling it directly gets.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_the_database_refuses_is_invalid_not_unavailable() {
    let Some((store, _schema)) = fresh().await else {
        return;
    };
    let definition = definition();
    store.register(&definition, at(1)).await.unwrap();
    let error = store
        .deliver(vec![delivery("wf", "e\u{0}", Vec::new())], at(2))
        .await
        .expect_err("PostgreSQL's text holds no U+0000");
    assert_eq!(error.kind, StoreErrorKind::Invalid, "{}", error.message);
    assert!(
        error.message.contains("SQLSTATE 22021"),
        "{}",
        error.message
    );
    // Letters that do not compress, beyond the 2,704 bytes of an index entry.
    let mut state: u32 = 0x9E37_79B9;
    let long: String = (0..4_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            char::from(b'a' + u8::try_from(state % 26).unwrap())
        })
        .collect();
    let error = store
        .deliver(vec![delivery("wf", &long, Vec::new())], at(3))
        .await
        .expect_err("an index entry holds at most 2,704 bytes");
    assert_eq!(error.kind, StoreErrorKind::Invalid, "{}", error.message);
    assert!(
        error.message.contains("SQLSTATE 54000"),
        "{}",
        error.message
    );
}

/// A URL naming a database or a user the server lacks is a mistake in the URL: retrying the
/// same one does not mend it.
#[tokio::test]
async fn a_url_naming_what_the_server_lacks_is_invalid() {
    if !server_available().await {
        return;
    }
    for (url, named, code) in [
        (
            "postgres://postgres@127.0.0.1:5432/swf_no_such_database",
            "swf_no_such_database",
            "SQLSTATE 3D000",
        ),
        (
            "postgres://swf_no_such_user@127.0.0.1:5432/test",
            "swf_no_such_user",
            "SQLSTATE 28000",
        ),
    ] {
        let Err(error) = PostgresStore::open(url).await else {
            panic!("{url} opened");
        };
        assert_eq!(error.kind, StoreErrorKind::Invalid, "{}", error.message);
        for part in [named, code, "check the user, password and database"] {
            assert!(
                error.message.contains(part),
                "`{part}` in: {}",
                error.message
            );
        }
    }
}

/// A server that vanishes without closing its connections is noticed within a lease: the store
/// sets keepalives and a TCP user timeout where the URL sets none, and keeps the URL's own.
#[test]
fn connections_notice_a_vanished_server_unless_the_url_says_otherwise() {
    use std::time::Duration;
    let seconds = Duration::from_secs;
    let mut plain = super::config(URL).unwrap();
    super::with_timeouts(&mut plain);
    assert_eq!(plain.get_connect_timeout(), Some(&seconds(5)));
    assert_eq!(plain.get_tcp_user_timeout(), Some(&seconds(30)));
    assert!(plain.get_keepalives());
    assert_eq!(plain.get_keepalives_idle(), seconds(10));
    assert_eq!(plain.get_keepalives_interval(), Some(seconds(5)));
    assert_eq!(plain.get_keepalives_retries(), Some(3));

    let mut own = super::config(&format!(
        "{URL}?connect_timeout=2&tcp_user_timeout=7&keepalives_idle=60&keepalives_interval=2\
         &keepalives_retries=9"
    ))
    .unwrap();
    super::with_timeouts(&mut own);
    assert_eq!(own.get_connect_timeout(), Some(&seconds(2)));
    assert_eq!(own.get_tcp_user_timeout(), Some(&seconds(7)));
    assert_eq!(own.get_keepalives_idle(), seconds(60));
    assert_eq!(own.get_keepalives_interval(), Some(seconds(2)));
    assert_eq!(own.get_keepalives_retries(), Some(9));

    let mut off = super::config(&format!("{URL}?keepalives=0")).unwrap();
    super::with_timeouts(&mut off);
    assert!(!off.get_keepalives());
    assert_eq!(off.get_keepalives_interval(), None);
}

/// A delivery that read an instance's wait or binding just before a commit ended it, or a purge
/// removed it (the other transaction still open, holding the instance's row), must not put
/// the event in its inbox or bind the value to it once that transaction is in: it reached an
/// instance that had ended (reported delivered, never taken; held for ever in the inbox of one
/// that was gone), and its binding kept the value from every later instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_racing_the_end_of_its_receiver_reaches_nobody() {
    let Some((store, schema)) = fresh().await else {
        return;
    };
    let (client, connection) = tokio_postgres::connect(URL, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .batch_execute(&format!("SET search_path TO {}", schema.name))
        .await
        .unwrap();
    // A commit completing an instance found by its binding (rule 1) and one found by its wait
    // (rule 2, which binds it); a purge of a failed instance, which keeps its binding.
    for (case, bound, failed) in [
        ("completed, bound", true, false),
        ("completed, waiting", false, false),
        ("failed, purged", true, true),
    ] {
        let instance = crate::store::NewInstance {
            definition: definition(),
            state: "{}".to_string(),
            position: "Wait".to_string(),
            status: crate::store::Status::Waiting,
            wake_at: None,
            waits: vec!["Paid".to_string()],
            correlation: if bound {
                vec![("orderId".to_string(), "o-1".to_string())]
            } else {
                Vec::new()
            },
            inbox: Vec::new(),
            parent: None,
            lease: None,
            detail: serde_json::json!({"input": {}}),
            start_key: None,
        };
        let id = store.create(vec![instance], at(0)).await.unwrap()[0];
        let row = i64::try_from(id.get()).unwrap();
        if failed {
            // What a failed commit leaves: no waits, the binding kept.
            client
                .execute("UPDATE swf_instance SET status = 3 WHERE id = $1", &[&row])
                .await
                .unwrap();
            client
                .execute("DELETE FROM swf_wait WHERE instance = $1", &[&row])
                .await
                .unwrap();
        }
        // What the commit or the purge does first: the instance's row (updated or locked),
        // then what hangs from it.
        client.batch_execute("BEGIN").await.unwrap();
        let first = if failed {
            "SELECT id FROM swf_instance WHERE id = $1 FOR UPDATE"
        } else {
            "UPDATE swf_instance SET status = 2 WHERE id = $1"
        };
        client.execute(first, &[&row]).await.unwrap();
        for then in [
            "DELETE FROM swf_wait WHERE instance = $1",
            "DELETE FROM swf_binding WHERE instance = $1",
            "DELETE FROM swf_inbox WHERE instance = $1",
        ] {
            client.execute(then, &[&row]).await.unwrap();
        }
        if failed {
            client
                .execute("DELETE FROM swf_instance WHERE id = $1", &[&row])
                .await
                .unwrap();
        }
        let target = crate::store::Target {
            definition: "Paid".to_string(),
            correlation: Some(("orderId".to_string(), Some("o-1".to_string()))),
        };
        let delivering = tokio::spawn({
            let store = store.clone();
            let event = format!("e-{row}");
            async move {
                store
                    .deliver(vec![delivery("wf", &event, vec![target])], at(1))
                    .await
            }
        });
        // Once the delivery waits for this transaction, it has read the wait or the binding.
        let this: i32 = client
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .unwrap()
            .get(0);
        let mut waited = false;
        for _ in 0..1_000 {
            let blocked: i64 = client
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
                    &[&this],
                )
                .await
                .unwrap()
                .get(0);
            if blocked > 0 {
                waited = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(
            waited,
            "{case}: the delivery never waited for the ending transaction"
        );
        client.batch_execute("COMMIT").await.unwrap();
        let routed = delivering.await.unwrap().unwrap();
        assert!(
            matches!(routed[0], crate::store::Routed::Unmatched { .. }),
            "{case}: {routed:?}"
        );
        let left: i64 = client
            .query_one(
                "SELECT (SELECT count(*) FROM swf_binding WHERE instance = $1)
                      + (SELECT count(*) FROM swf_inbox WHERE instance = $1)",
                &[&row],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(
            left, 0,
            "{case}: a binding or inbox row of an ended instance"
        );
    }
}
