//! Fresh stores for tests: a SQLite file in a temporary directory, and a PostgreSQL schema of
//! the server at `127.0.0.1:5432` (database `test`, user `postgres`, trust authentication).
//!
//! When that server cannot be reached, a PostgreSQL test is skipped with a note on stderr,
//! except in CI (`CI=true`), where it fails: CI must test PostgreSQL for real.

use std::sync::atomic::{AtomicU64, Ordering};

use swf_runtime::store::postgres::PostgresStore;
use swf_runtime::store::sqlite::SqliteStore;

/// The test server.
pub const POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// A SQLite store in a fresh temporary directory (removed when the directory is dropped).
///
/// # Panics
/// When the file cannot be created.
pub async fn sqlite() -> (SqliteStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = SqliteStore::open(dir.path().join("swf.db"))
        .await
        .expect("a SQLite store");
    (store, dir)
}

/// A PostgreSQL schema that is dropped with this value.
pub struct Schema {
    /// Its name.
    pub name: String,
}

static SCHEMAS: AtomicU64 = AtomicU64::new(0);

impl Schema {
    /// A fresh schema name, unique in this process and across processes.
    pub fn fresh() -> Self {
        Self {
            name: format!(
                "swf_it_{}_{}",
                std::process::id(),
                SCHEMAS.fetch_add(1, Ordering::Relaxed)
            ),
        }
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Drop may run inside a runtime, which cannot block on itself: use a thread.
        let dropping = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async {
                if let Ok((client, connection)) =
                    tokio_postgres::connect(POSTGRES_URL, tokio_postgres::NoTls).await
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

/// Whether the test server answers; see the module documentation for what happens when not.
///
/// # Panics
/// In CI, when the server cannot be reached.
pub async fn postgres_available() -> bool {
    match tokio_postgres::connect(POSTGRES_URL, tokio_postgres::NoTls).await {
        Ok(_) => true,
        Err(error) => {
            let why = format!("PostgreSQL at {POSTGRES_URL} cannot be reached: {error}");
            let in_ci = std::env::var("CI").is_ok_and(|ci| ci == "true");
            assert!(!in_ci, "{why} (CI=true: the PostgreSQL tests must run)");
            eprintln!("skipping a PostgreSQL test: {why}");
            false
        }
    }
}

/// A PostgreSQL store in a fresh schema, or `None` when the server is away (outside CI).
///
/// # Panics
/// When the store cannot be opened on a server that answers.
pub async fn postgres() -> Option<(PostgresStore, Schema)> {
    if !postgres_available().await {
        return None;
    }
    let schema = Schema::fresh();
    let store = PostgresStore::open_in_schema(POSTGRES_URL, &schema.name)
        .await
        .expect("a PostgreSQL store");
    Some((store, schema))
}

/// Checks that `history` records each transition once: revisions 0, 1, 2... with none missing
/// or repeated, each transition starting where the one before ended, the first starting the
/// instance and the last completing it. `what` names the instance in messages.
///
/// # Panics
/// When it does not.
pub fn assert_committed_once(history: &[swf_runtime::store::HistoryEntry], what: &str) {
    use swf_runtime::store::HistoryKind;
    let revisions: Vec<u64> = history.iter().map(|entry| entry.revision).collect();
    assert_eq!(
        revisions,
        (0..history.len() as u64).collect::<Vec<_>>(),
        "{what}: each revision committed once"
    );
    for pair in history.windows(2) {
        assert_eq!(pair[0].to, pair[1].from, "{what}: {history:#?}");
    }
    assert_eq!(
        history.first().map(|e| e.kind),
        Some(HistoryKind::Started),
        "{what}"
    );
    assert_eq!(
        history.last().map(|e| e.kind),
        Some(HistoryKind::Completed),
        "{what}"
    );
}
