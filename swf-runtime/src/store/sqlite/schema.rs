//! The SQLite schema: numbered migrations applied in order when a store opens.

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OptionalExtension};

use crate::store::StoreError;
use crate::store::codec::{micros, newer_schema};

/// The migrations, in order: `(version, script)`. A released script never changes; a change is
/// a new version.
pub(super) const MIGRATIONS: &[(i64, &str)] = &[(1, VERSION_1), (2, VERSION_2), (3, VERSION_3)];

/// The first schema.
///
/// `due_at` is when an instance can next be claimed: a runnable one from when it last changed, a
/// waiting one at `wake_at`, either not before its lease expires; `NULL` when nothing but an
/// event can give it work. It is computed (never stored in the row) and indexed, so that claims
/// and `next_wake` read one index range however many instances wait.
const VERSION_1: &str = "
CREATE TABLE swf_workflow (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
CREATE TABLE swf_definition (
    id INTEGER PRIMARY KEY,
    workflow INTEGER NOT NULL,
    version TEXT,
    hash TEXT NOT NULL,
    deployed_at INTEGER NOT NULL,
    UNIQUE (workflow, hash)
);
CREATE TABLE swf_name (
    id INTEGER PRIMARY KEY,
    workflow INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    name TEXT NOT NULL,
    UNIQUE (workflow, kind, name)
);
CREATE TABLE swf_instance (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow INTEGER NOT NULL,
    definition INTEGER NOT NULL,
    status INTEGER NOT NULL,
    revision INTEGER NOT NULL,
    wake_at INTEGER,
    lease_worker TEXT,
    lease_until INTEGER,
    nudged INTEGER NOT NULL,
    parent INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    position TEXT NOT NULL,
    state TEXT NOT NULL,
    outcome TEXT,
    due_at INTEGER GENERATED ALWAYS AS (CASE
        WHEN status = 0 THEN max(updated_at, coalesce(lease_until, updated_at))
        WHEN status = 1 AND wake_at IS NOT NULL THEN max(wake_at, coalesce(lease_until, wake_at))
    END) VIRTUAL
);
CREATE INDEX swf_instance_due ON swf_instance (workflow, due_at) WHERE due_at IS NOT NULL;
CREATE TABLE swf_wait (
    instance INTEGER NOT NULL,
    name INTEGER NOT NULL,
    since INTEGER NOT NULL,
    PRIMARY KEY (instance, name)
) WITHOUT ROWID;
CREATE INDEX swf_wait_longest ON swf_wait (name, since);
CREATE TABLE swf_binding (
    instance INTEGER NOT NULL,
    attribute INTEGER NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (instance, attribute)
) WITHOUT ROWID;
CREATE INDEX swf_binding_value ON swf_binding (attribute, value);
CREATE TABLE swf_event (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow INTEGER NOT NULL,
    source TEXT NOT NULL,
    event_id TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE UNIQUE INDEX swf_event_key ON swf_event (workflow, source, event_id);
CREATE TABLE swf_inbox (
    instance INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (instance, seq)
) WITHOUT ROWID;
CREATE TABLE swf_start_group (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow INTEGER NOT NULL,
    key TEXT NOT NULL,
    expires_at INTEGER
);
CREATE INDEX swf_start_group_key ON swf_start_group (workflow, key);
CREATE INDEX swf_start_group_expiry ON swf_start_group (workflow, expires_at)
    WHERE expires_at IS NOT NULL;
CREATE TABLE swf_start_member (
    start_group INTEGER NOT NULL,
    name INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (start_group, name)
) WITHOUT ROWID;
CREATE TABLE swf_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    instance INTEGER NOT NULL,
    body TEXT NOT NULL,
    lease_worker TEXT,
    lease_until INTEGER,
    delivered_at INTEGER
);
CREATE INDEX swf_outbox_pending ON swf_outbox (seq) WHERE delivered_at IS NULL;
CREATE TABLE swf_history (
    instance INTEGER NOT NULL,
    revision INTEGER NOT NULL,
    at INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    from_position TEXT NOT NULL,
    to_position TEXT NOT NULL,
    consumed TEXT NOT NULL,
    produced TEXT NOT NULL,
    detail TEXT NOT NULL,
    PRIMARY KEY (instance, revision)
) WITHOUT ROWID;
";

/// Start keys: the caller's name for a start, so that a start retried after its answer was lost
/// does not start a second instance. Unique per workflow; most instances have none.
const VERSION_2: &str = "
ALTER TABLE swf_instance ADD COLUMN start_key TEXT;
CREATE UNIQUE INDEX swf_instance_start_key ON swf_instance (workflow, start_key)
    WHERE start_key IS NOT NULL;
";

/// Retention ([`Store::purge`](crate::store::Store::purge)): each workflow's ended instances by
/// when they ended and its events by when they arrived; for each event, whether an inbox or a
/// start group holds it; an instance's produced events, to find those not yet delivered and to
/// remove them with it.
const VERSION_3: &str = "
CREATE INDEX swf_instance_ended ON swf_instance (workflow, updated_at) WHERE status >= 2;
CREATE INDEX swf_event_received ON swf_event (workflow, received_at);
CREATE INDEX swf_inbox_event ON swf_inbox (seq);
CREATE INDEX swf_start_member_event ON swf_start_member (seq);
CREATE INDEX swf_outbox_instance ON swf_outbox (instance);
";

/// The newest version this build knows.
pub(super) fn supported_version() -> i64 {
    MIGRATIONS.last().map_or(0, |(version, _)| *version)
}

/// Sets the connection up: WAL, full sync, a busy timeout for other processes' locks.
pub(super) fn configure(connection: &Connection) -> Result<(), StoreError> {
    connection.pragma_update(None, "journal_mode", "WAL")?;
    // FULL: a commit is on disk when it returns. NORMAL may lose the last commits on power loss,
    // which would lose events the host already acknowledged, and buys little with group commit:
    // 14,600 against 13,300 single-commit calls/s measured here (release, 500 concurrent callers).
    connection.pragma_update(None, "synchronous", "FULL")?;
    connection.busy_timeout(std::time::Duration::from_secs(5))?;
    // The store runs about 60 distinct statements; rusqlite keeps 16 prepared by default, so
    // the rest were parsed again at every use (sqlite3RunParser in perf profiles; a trial run of
    // the passivated bench went from 144 to 129 µs of the store thread's CPU per event).
    connection.set_prepared_statement_cache_capacity(128);
    // Without the query planner stability guarantee, SQLite (built with STAT4) re-prepares a
    // cached statement whenever a parameter it consulted while planning gets a new value, which
    // `load`'s statements did at every call (`sqlite3Reprepare` under `sqlite3_step` in perf).
    // Every statement here is an indexed lookup whose plan does not depend on the values.
    connection.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

/// The schema version of the store in the database (0 when its version table is empty), or
/// `None` when the database has no version table: it is not a store. Reads only.
pub(super) fn existing_version(connection: &Connection) -> Result<Option<i64>, StoreError> {
    let has_table: bool = connection.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' \
         AND name = 'swf_schema_version')",
        [],
        |row| row.get(0),
    )?;
    if !has_table {
        return Ok(None);
    }
    let version: Option<i64> =
        connection.query_row("SELECT max(version) FROM swf_schema_version", [], |row| {
            row.get(0)
        })?;
    Ok(Some(version.unwrap_or(0)))
}

/// Applies the migrations the database lacks, in one transaction; refuses a newer database.
pub(super) fn migrate(connection: &mut Connection) -> Result<(), StoreError> {
    let transaction =
        connection.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    transaction.execute_batch(
        "CREATE TABLE IF NOT EXISTS swf_schema_version (
            version INTEGER PRIMARY KEY,
            applied_at INTEGER NOT NULL
        )",
    )?;
    let applied: i64 = transaction
        .query_row("SELECT max(version) FROM swf_schema_version", [], |row| {
            row.get::<_, Option<i64>>(0)
        })
        .optional()?
        .flatten()
        .unwrap_or(0);
    let supported = supported_version();
    if applied > supported {
        return Err(newer_schema("SQLite", applied, supported));
    }
    let now = micros(jiff::Timestamp::now());
    for (version, script) in MIGRATIONS.iter().filter(|(version, _)| *version > applied) {
        transaction.execute_batch(script)?;
        transaction.execute(
            "INSERT INTO swf_schema_version (version, applied_at) VALUES (?1, ?2)",
            (version, now),
        )?;
    }
    transaction.commit()?;
    Ok(())
}
