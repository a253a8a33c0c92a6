//! Instances: creating them, reading them back with their inbox, claiming and leasing them.

use std::collections::BTreeSet;
use std::time::Duration;

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Row};

use super::names::{definition_id, find_workflow, name_id};
use crate::store::codec::{
    CORRELATION_ATTRIBUTE, EVENT_DEFINITION, deadline, event, id_column, instance_id, invalid,
    json_text, json_value, micros, number, number_column, status, status_code, timestamp,
    timestamp_opt,
};
use crate::store::{
    Claimed, Definition, HistoryKind, InstanceId, InstanceRecord, Lease, NewInstance, StoreError,
    StoredEvent,
};

/// The columns [`record_of`] reads, after `FROM swf_instance i`.
const RECORD_COLUMNS: &str =
    "SELECT i.id, w.name, d.version, d.hash, i.status, i.state, i.position,
    i.revision, i.wake_at, i.parent, i.lease_worker, i.lease_until, i.outcome, i.created_at,
    i.updated_at
FROM swf_instance i
JOIN swf_definition d ON d.id = i.definition
JOIN swf_workflow w ON w.id = i.workflow";

/// Creates an instance with `extra_inbox` in its inbox besides the events it names.
pub(super) fn insert_instance(
    connection: &Connection,
    new: &NewInstance,
    extra_inbox: &[u64],
    now: Timestamp,
) -> Result<InstanceId, StoreError> {
    if new.status.has_ended() {
        return Err(invalid(format!(
            "an instance cannot be created {}: only runnable or waiting",
            new.status
        )));
    }
    let (definition, _) = definition_id(connection, &new.definition, now)?;
    let workflow: i64 = connection
        .prepare_cached("SELECT workflow FROM swf_definition WHERE id = ?1")?
        .query_row([definition], |row| row.get(0))?;
    let parent = new.parent.map(id_column).transpose()?;
    let (lease_worker, lease_until) = match &new.lease {
        Some(lease) => (Some(lease.worker.as_str()), Some(micros(lease.until))),
        None => (None, None),
    };
    let at = micros(now);
    // The rowid of the insert rather than `RETURNING`, which SQLite buffers in a temporary
    // b-tree.
    connection
        .prepare_cached(
            "INSERT INTO swf_instance (workflow, definition, status, revision, wake_at,
                lease_worker, lease_until, nudged, parent, created_at, updated_at, position, state)
             VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6, 0, ?7, ?8, ?8, ?9, ?10)",
        )?
        .execute(rusqlite::params![
            workflow,
            definition,
            status_code(new.status),
            new.wake_at.map(micros),
            lease_worker,
            lease_until,
            parent,
            at,
            new.position,
            new.state,
        ])?;
    let id = connection.last_insert_rowid();
    for wait in &new.waits {
        let name = name_id(connection, workflow, EVENT_DEFINITION, wait)?;
        connection
            .prepare_cached(
                "INSERT OR IGNORE INTO swf_wait (instance, name, since) VALUES (?1, ?2, ?3)",
            )?
            .execute((id, name, at))?;
    }
    bind(connection, workflow, id, &new.correlation)?;
    let inbox: BTreeSet<u64> = new.inbox.iter().chain(extra_inbox).copied().collect();
    for seq in inbox {
        connection
            .prepare_cached("INSERT OR IGNORE INTO swf_inbox (instance, seq) VALUES (?1, ?2)")?
            .execute((id, number_column(seq)?))?;
    }
    connection
        .prepare_cached(
            "INSERT INTO swf_history (instance, revision, at, kind, from_position, to_position,
                consumed, produced, detail)
             VALUES (?1, 0, ?2, ?3, '', ?4, '[]', '[]', ?5)",
        )?
        .execute((
            id,
            at,
            crate::store::codec::history_kind_code(HistoryKind::Started),
            &new.position,
            json_text(&new.detail),
        ))?;
    instance_id(id)
}

/// Binds correlation values; an attribute already bound keeps its value.
pub(super) fn bind(
    connection: &Connection,
    workflow: i64,
    instance: i64,
    values: &[(String, String)],
) -> Result<(), StoreError> {
    for (attribute, value) in values {
        let attribute = name_id(connection, workflow, CORRELATION_ATTRIBUTE, attribute)?;
        connection
            .prepare_cached(
                "INSERT OR IGNORE INTO swf_binding (instance, attribute, value) VALUES (?1, ?2, ?3)",
            )?
            .execute((instance, attribute, value))?;
    }
    Ok(())
}

/// One instance with its inbox, or `None`.
pub(super) fn load(connection: &Connection, id: i64) -> Result<Option<Claimed>, StoreError> {
    let sql = format!("{RECORD_COLUMNS} WHERE i.id = ?1");
    let Some(mut record) = connection
        .prepare_cached(&sql)?
        .query_row([id], record_of)
        .optional()?
        .transpose()?
    else {
        return Ok(None);
    };
    let mut waits = connection.prepare_cached(
        "SELECT n.name FROM swf_wait w JOIN swf_name n ON n.id = w.name WHERE w.instance = ?1
         ORDER BY n.name",
    )?;
    record.waits = waits
        .query_map([id], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    let mut correlation = connection.prepare_cached(
        "SELECT n.name, b.value FROM swf_binding b JOIN swf_name n ON n.id = b.attribute
         WHERE b.instance = ?1 ORDER BY n.name",
    )?;
    record.correlation = correlation
        .query_map([id], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let inbox = inbox(connection, id)?;
    Ok(Some(Claimed { record, inbox }))
}

/// The inbox of an instance, oldest event first.
pub(super) fn inbox(connection: &Connection, id: i64) -> Result<Vec<StoredEvent>, StoreError> {
    let mut statement = connection.prepare_cached(
        "SELECT e.seq, e.body, e.received_at FROM swf_inbox b JOIN swf_event e ON e.seq = b.seq
         WHERE b.instance = ?1 ORDER BY b.seq",
    )?;
    let rows = statement.query_map([id], |row| {
        Ok((
            row.get::<_, i64>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, i64>(2)?,
        ))
    })?;
    rows.map(|row| {
        let (seq, body, received_at) = row?;
        stored_event(seq, &body, received_at)
    })
    .collect()
}

/// A stored event from its columns.
pub(super) fn stored_event(
    seq: i64,
    body: &str,
    received_at: i64,
) -> Result<StoredEvent, StoreError> {
    Ok(StoredEvent {
        seq: number(seq)?,
        event: event(body)?,
        received_at: timestamp(received_at)?,
    })
}

/// A record from the columns of [`RECORD_COLUMNS`] (waits and correlation left empty).
fn record_of(row: &Row<'_>) -> rusqlite::Result<Result<InstanceRecord, StoreError>> {
    let id: i64 = row.get(0)?;
    let workflow: String = row.get(1)?;
    let version: Option<String> = row.get(2)?;
    let hash: String = row.get(3)?;
    let status_column: i64 = row.get(4)?;
    let state: String = row.get(5)?;
    let position: String = row.get(6)?;
    let revision: i64 = row.get(7)?;
    let wake_at: Option<i64> = row.get(8)?;
    let parent: Option<i64> = row.get(9)?;
    let lease_worker: Option<String> = row.get(10)?;
    let lease_until: Option<i64> = row.get(11)?;
    let outcome: Option<String> = row.get(12)?;
    let created_at: i64 = row.get(13)?;
    let updated_at: i64 = row.get(14)?;
    Ok((|| {
        let lease = match (lease_worker, lease_until) {
            (Some(worker), Some(until)) => Some(Lease {
                worker,
                until: timestamp(until)?,
            }),
            _ => None,
        };
        Ok(InstanceRecord {
            id: instance_id(id)?,
            definition: Definition {
                workflow,
                version,
                hash,
            },
            status: status(status_column)?,
            state,
            position,
            revision: number(revision)?,
            wake_at: timestamp_opt(wake_at)?,
            waits: Vec::new(),
            correlation: Vec::new(),
            parent: parent.map(instance_id).transpose()?,
            lease,
            outcome: outcome.as_deref().map(json_value).transpose()?,
            created_at: timestamp(created_at)?,
            updated_at: timestamp(updated_at)?,
        })
    })())
}

/// Claims up to `limit` instances of `workflow` that have work, due earliest first.
pub(super) fn claim(
    connection: &Connection,
    workflow: &str,
    worker: &str,
    now: Timestamp,
    lease: Duration,
    limit: usize,
) -> Result<Vec<Claimed>, StoreError> {
    let Some(workflow) = find_workflow(connection, workflow)? else {
        return Ok(Vec::new());
    };
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let ids: Vec<i64> = connection
        .prepare_cached(
            "SELECT id FROM swf_instance
             WHERE workflow = ?1 AND due_at IS NOT NULL AND due_at <= ?2
               AND (lease_until IS NULL OR lease_until < ?2)
             ORDER BY due_at, id LIMIT ?3",
        )?
        .query_map((workflow, micros(now), limit), |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    lease_all(connection, &ids, worker, deadline(now, lease)?)
}

/// Claims those of `ids` that have work and no live lease.
pub(super) fn claim_ids(
    connection: &Connection,
    ids: &[InstanceId],
    worker: &str,
    now: Timestamp,
    lease: Duration,
) -> Result<Vec<Claimed>, StoreError> {
    let mut claimable = Vec::with_capacity(ids.len());
    let unique: BTreeSet<InstanceId> = ids.iter().copied().collect();
    for id in unique {
        let id = id_column(id)?;
        let found = connection
            .prepare_cached(
                "SELECT id FROM swf_instance
                 WHERE id = ?1 AND due_at IS NOT NULL AND due_at <= ?2
                   AND (lease_until IS NULL OR lease_until < ?2)",
            )?
            .query_row((id, micros(now)), |row| row.get::<_, i64>(0))
            .optional()?;
        claimable.extend(found);
    }
    lease_all(connection, &claimable, worker, deadline(now, lease)?)
}

/// Leases `ids` to `worker` until `until` and reads them back. Claiming hands the inbox to the
/// worker, so it clears `nudged` (events that arrive from now on set it again).
fn lease_all(
    connection: &Connection,
    ids: &[i64],
    worker: &str,
    until: i64,
) -> Result<Vec<Claimed>, StoreError> {
    let mut claimed = Vec::with_capacity(ids.len());
    for &id in ids {
        connection
            .prepare_cached(
                "UPDATE swf_instance SET lease_worker = ?2, lease_until = ?3, nudged = 0 WHERE id = ?1",
            )?
            .execute((id, worker, until))?;
        claimed.extend(load(connection, id)?);
    }
    Ok(claimed)
}

/// Extends `worker`'s leases; returns the ids it still held.
pub(super) fn renew(
    connection: &Connection,
    ids: &[InstanceId],
    worker: &str,
    until: Timestamp,
) -> Result<Vec<InstanceId>, StoreError> {
    let mut held = Vec::with_capacity(ids.len());
    for &id in ids {
        let changed = connection
            .prepare_cached(
                "UPDATE swf_instance SET lease_until = ?3 WHERE id = ?1 AND lease_worker = ?2",
            )?
            .execute((id_column(id)?, worker, micros(until)))?;
        if changed > 0 {
            held.push(id);
        }
    }
    Ok(held)
}

/// When an instance of `workflow` next has work or a lease expires.
pub(super) fn next_wake(
    connection: &Connection,
    workflow: &str,
) -> Result<Option<Timestamp>, StoreError> {
    let Some(workflow) = find_workflow(connection, workflow)? else {
        return Ok(None);
    };
    let due: Option<i64> = connection
        .prepare_cached(
            "SELECT min(due_at) FROM swf_instance WHERE workflow = ?1 AND due_at IS NOT NULL",
        )?
        .query_row([workflow], |row| row.get(0))?;
    timestamp_opt(due)
}
