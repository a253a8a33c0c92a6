//! The PostgreSQL schema: numbered migrations applied in order when a store opens.

use deadpool_postgres::Client;

use super::sql::{execute, get, query};
use crate::store::StoreError;
use crate::store::codec::{existing_schema, incompatible, micros, newer_schema};

/// The migrations, in order: `(version, script)`. A released script never changes; a change is
/// a new version.
pub(super) const MIGRATIONS: &[(i64, &str)] = &[(1, VERSION_1), (2, VERSION_2), (3, VERSION_3)];

/// The lock that serializes migrations of workers opening the same database at once (the
/// second key is the schema's name, so that different schemas migrate independently).
const MIGRATION_LOCK: i32 = 0x5357_4631;

/// The first schema.
///
/// `due_at` is when an instance can next be claimed: a runnable one from when it last changed, a
/// waiting one at `wake_at`, either not before its lease expires; `NULL` when nothing but an
/// event can give it work. It is generated and indexed, so that claims and `next_wake` read one
/// index range however many instances wait. Columns are ordered widest first (no padding).
const VERSION_1: &str = "
CREATE TABLE swf_workflow (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL UNIQUE
);
CREATE TABLE swf_definition (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workflow bigint NOT NULL,
    deployed_at bigint NOT NULL,
    version text,
    hash text NOT NULL,
    UNIQUE (workflow, hash)
);
CREATE TABLE swf_name (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workflow bigint NOT NULL,
    kind smallint NOT NULL,
    name text NOT NULL,
    UNIQUE (workflow, kind, name)
);
CREATE TABLE swf_instance (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workflow bigint NOT NULL,
    definition bigint NOT NULL,
    revision bigint NOT NULL,
    wake_at bigint,
    lease_until bigint,
    parent bigint,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    due_at bigint GENERATED ALWAYS AS (CASE
        WHEN status = 0 THEN greatest(updated_at, lease_until)
        WHEN status = 1 AND wake_at IS NOT NULL THEN greatest(wake_at, lease_until)
    END) STORED,
    status smallint NOT NULL,
    nudged boolean NOT NULL,
    lease_worker text,
    position text NOT NULL,
    state text NOT NULL,
    outcome text
);
CREATE INDEX swf_instance_due ON swf_instance (workflow, due_at, id) WHERE due_at IS NOT NULL;
CREATE TABLE swf_wait (
    instance bigint NOT NULL,
    name bigint NOT NULL,
    since bigint NOT NULL,
    PRIMARY KEY (instance, name)
);
CREATE INDEX swf_wait_longest ON swf_wait (name, since, instance);
CREATE TABLE swf_binding (
    instance bigint NOT NULL,
    attribute bigint NOT NULL,
    value text NOT NULL,
    PRIMARY KEY (instance, attribute)
);
CREATE INDEX swf_binding_value ON swf_binding (attribute, value);
CREATE TABLE swf_event (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workflow bigint NOT NULL,
    received_at bigint NOT NULL,
    source text NOT NULL,
    event_id text NOT NULL,
    body text NOT NULL,
    UNIQUE (workflow, source, event_id)
);
CREATE TABLE swf_inbox (
    instance bigint NOT NULL,
    seq bigint NOT NULL,
    PRIMARY KEY (instance, seq)
);
CREATE TABLE swf_start_group (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workflow bigint NOT NULL,
    expires_at bigint,
    key text NOT NULL
);
CREATE INDEX swf_start_group_key ON swf_start_group (workflow, key, id);
CREATE INDEX swf_start_group_expiry ON swf_start_group (workflow, expires_at)
    WHERE expires_at IS NOT NULL;
CREATE TABLE swf_start_member (
    start_group bigint NOT NULL,
    name bigint NOT NULL,
    seq bigint NOT NULL,
    PRIMARY KEY (start_group, name)
);
CREATE TABLE swf_outbox (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    instance bigint NOT NULL,
    lease_until bigint,
    delivered_at bigint,
    lease_worker text,
    body text NOT NULL
);
CREATE INDEX swf_outbox_pending ON swf_outbox (seq) WHERE delivered_at IS NULL;
CREATE TABLE swf_history (
    instance bigint NOT NULL,
    revision bigint NOT NULL,
    at bigint NOT NULL,
    kind smallint NOT NULL,
    from_position text NOT NULL,
    to_position text NOT NULL,
    consumed text NOT NULL,
    produced text NOT NULL,
    detail text NOT NULL,
    PRIMARY KEY (instance, revision)
);
";

/// Start keys: the caller's name for a start, so that a start retried after its answer was lost
/// does not start a second instance. Unique per workflow; most instances have none.
const VERSION_2: &str = "
ALTER TABLE swf_instance ADD COLUMN start_key text;
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
fn supported_version() -> i64 {
    MIGRATIONS.last().map_or(0, |(version, _)| *version)
}

/// Creates the schema `name` (a checked identifier) when missing, under the migration lock: two
/// workers creating it at once would otherwise collide on PostgreSQL's catalog.
pub(super) async fn create_schema(client: &mut Client, name: &str) -> Result<(), StoreError> {
    let transaction = client.transaction().await?;
    execute(
        &transaction,
        "SELECT pg_advisory_xact_lock($1, hashtext($2))",
        &[&MIGRATION_LOCK, &name],
    )
    .await?;
    transaction
        .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {name}"))
        .await?;
    transaction.commit().await?;
    Ok(())
}

/// Refuses a database without a store where its `search_path` looks (no `swf_schema_version`
/// table), or whose store's schema is not this build's. Reads only.
pub(super) async fn check_existing(client: &Client) -> Result<(), StoreError> {
    let rows = query(
        client,
        "SELECT to_regclass('swf_schema_version') IS NOT NULL, current_database(), \
         current_setting('search_path')",
        &[],
    )
    .await?;
    let Some(row) = rows.first() else {
        return Err(incompatible("PostgreSQL: the server answered no row"));
    };
    let (has_table, database, search_path): (bool, String, String) =
        (get(row, 0)?, get(row, 1)?, get(row, 2)?);
    if !has_table {
        return Err(incompatible(format!(
            "PostgreSQL: the database `{database}` holds no swf store where its search_path \
             ({search_path}) looks: it has no `swf_schema_version` table; it was left as it \
             was: check the URL (its database, and `options=-csearch_path%3DSCHEMA` for a \
             store in a schema of its own), or start a DurableHost on it first, which creates \
             the store"
        )));
    }
    let rows = query(client, "SELECT max(version) FROM swf_schema_version", &[]).await?;
    let found = match rows.first() {
        Some(row) => get::<Option<i64>>(row, 0)?.unwrap_or(0),
        None => 0,
    };
    existing_schema("PostgreSQL", found, supported_version())
}

/// Applies the migrations the database lacks, in one transaction under an advisory lock;
/// refuses a newer database.
pub(super) async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let transaction = client.transaction().await?;
    execute(
        &transaction,
        "SELECT pg_advisory_xact_lock($1, hashtext(coalesce(current_schema(), '')))",
        &[&MIGRATION_LOCK],
    )
    .await?;
    transaction
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS swf_schema_version (
                version bigint PRIMARY KEY,
                applied_at bigint NOT NULL
            )",
        )
        .await?;
    let rows = query(
        &transaction,
        "SELECT max(version) FROM swf_schema_version",
        &[],
    )
    .await?;
    let applied: i64 = match rows.first() {
        Some(row) => get::<Option<i64>>(row, 0)?.unwrap_or(0),
        None => 0,
    };
    let supported = supported_version();
    if applied > supported {
        // Ended here rather than on drop: a dropped transaction's rollback is only queued, and
        // the connection would hold its locks until the pool closes it.
        transaction.rollback().await?;
        return Err(newer_schema("PostgreSQL", applied, supported));
    }
    let now = micros(jiff::Timestamp::now());
    for (version, script) in MIGRATIONS.iter().filter(|(version, _)| *version > applied) {
        transaction.batch_execute(script).await?;
        execute(
            &transaction,
            "INSERT INTO swf_schema_version (version, applied_at) VALUES ($1, $2)",
            &[version, &now],
        )
        .await?;
    }
    transaction.commit().await?;
    Ok(())
}
