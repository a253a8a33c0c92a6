//! Instances: creating them, reading them back with their inbox, claiming and leasing them.

use std::collections::BTreeSet;
use std::time::Duration;

use cloudevents::Event;
use jiff::Timestamp;
use rusqlite::{OptionalExtension, Row};

use super::names::{definition_row, find_workflow, name_id, name_of};
use super::session::Session;
use crate::store::codec::{
    CORRELATION_ATTRIBUTE, EVENT_DEFINITION, deadline, event, id_column, instance_id, invalid,
    json_text, json_value, micros, number, number_column, status, status_code, timestamp,
    timestamp_opt,
};
use crate::store::{
    Claimed, Definition, HistoryKind, InstanceId, InstanceRecord, Lease, NewInstance, StoreError,
    StoredEvent, Versions,
};

/// A query of instance rows as [`record_of`] reads them, with `$where` after
/// `FROM swf_instance i`.
macro_rules! select_records {
    ($where:literal) => {
        concat!(
            "SELECT i.id, w.name, d.version, d.hash, i.status, i.state, i.position,
                i.revision, i.wake_at, i.parent, i.lease_worker, i.lease_until, i.outcome,
                i.created_at, i.updated_at, i.start_key
            FROM swf_instance i
            JOIN swf_definition d ON d.id = i.definition
            JOIN swf_workflow w ON w.id = i.workflow ",
            $where
        )
    };
}

/// An event the request stored itself, taken as it is rather than decoded again from its row.
pub(super) struct Stored<'a> {
    pub seq: i64,
    pub event: &'a Event,
}

/// Creates an instance with `extra_inbox` in its inbox besides the events it names.
pub(super) fn insert_instance(
    connection: &Session,
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
    let definition = definition_row(connection, &new.definition, now)?;
    let (workflow, definition) = (definition.workflow, definition.id);
    if let Some(key) = &new.start_key {
        // One writer, in a transaction: nothing can take the key between this and the insert.
        let existing: Option<i64> = connection
            .prepare_cached("SELECT id FROM swf_instance WHERE workflow = ?1 AND start_key = ?2")?
            .query_row((workflow, key), |row| row.get(0))
            .optional()?;
        if let Some(id) = existing {
            return instance_id(id);
        }
    }
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
                lease_worker, lease_until, nudged, parent, created_at, updated_at, position, state,
                start_key)
             VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6, 0, ?7, ?8, ?8, ?9, ?10, ?11)",
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
            new.start_key,
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
            // An event purged meanwhile is left out: an inbox never names a missing event.
            .prepare_cached(
                "INSERT OR IGNORE INTO swf_inbox (instance, seq)
                 SELECT ?1, seq FROM swf_event WHERE seq = ?2",
            )?
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
    connection: &Session,
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
pub(super) fn load(
    connection: &Session,
    id: i64,
    stored: Option<&Stored<'_>>,
) -> Result<Option<Claimed>, StoreError> {
    let Some(record) = read_record(connection, id)? else {
        return Ok(None);
    };
    let waits = waits(connection, id)?;
    hand_over(connection, record, &waits, stored).map(Some)
}

/// An instance as a worker gets it: `record` (its row) with its waits (the definitions of
/// `waits`), its correlation and its inbox (`stored` taken as it is).
pub(super) fn hand_over(
    connection: &Session,
    mut record: InstanceRecord,
    waits: &[i64],
    stored: Option<&Stored<'_>>,
) -> Result<Claimed, StoreError> {
    complete(connection, &mut record, waits)?;
    let inbox = inbox(connection, id_column(record.id)?, stored)?;
    Ok(Claimed { record, inbox })
}

/// The row of an instance: its record without waits and correlation, or `None`.
pub(super) fn read_record(
    connection: &Session,
    id: i64,
) -> Result<Option<InstanceRecord>, StoreError> {
    connection
        .prepare_cached(select_records!("WHERE i.id = ?1"))?
        .query_row([id], record_of)
        .optional()?
        .transpose()
}

/// The ids of the event definitions an instance waits for.
pub(super) fn waits(connection: &Session, id: i64) -> Result<Vec<i64>, StoreError> {
    Ok(connection
        .prepare_cached("SELECT name FROM swf_wait WHERE instance = ?1")?
        .query_map([id], |row| row.get(0))?
        .collect::<Result<_, _>>()?)
}

/// Fills in a record's waits (the definitions of `waits`) and correlation, each sorted by name.
fn complete(
    connection: &Session,
    record: &mut InstanceRecord,
    waits: &[i64],
) -> Result<(), StoreError> {
    let id = id_column(record.id)?;
    record.waits = waits
        .iter()
        .map(|&wait| name_of(connection, wait))
        .collect::<Result<_, _>>()?;
    record.waits.sort();
    let bound: Vec<(i64, String)> = connection
        .prepare_cached("SELECT attribute, value FROM swf_binding WHERE instance = ?1")?
        .query_map([id], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<Result<_, _>>()?;
    record.correlation = bound
        .into_iter()
        .map(|(attribute, value)| Ok((name_of(connection, attribute)?, value)))
        .collect::<Result<_, StoreError>>()?;
    record.correlation.sort();
    Ok(())
}

/// The inbox of an instance, oldest event first; `stored` is taken as it is.
fn inbox(
    connection: &Session,
    id: i64,
    stored: Option<&Stored<'_>>,
) -> Result<Vec<StoredEvent>, StoreError> {
    let mut statement = connection.prepare_cached(
        "SELECT e.seq, e.body, e.received_at FROM swf_inbox b JOIN swf_event e ON e.seq = b.seq
         WHERE b.instance = ?1 ORDER BY b.seq",
    )?;
    let mut rows = statement.query([id])?;
    let mut events = Vec::new();
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let received_at: i64 = row.get(2)?;
        events.push(match stored {
            Some(stored) if stored.seq == seq => StoredEvent {
                seq: number(seq)?,
                event: stored.event.clone(),
                received_at: timestamp(received_at)?,
            },
            _ => stored_event(seq, &row.get::<_, String>(1)?, received_at)?,
        });
    }
    Ok(events)
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
    let start_key: Option<String> = row.get(15)?;
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
            start_key,
        })
    })())
}

/// Claims up to `limit` instances of `workflow` that have work, due earliest first.
pub(super) fn claim(
    connection: &Session,
    workflow: &str,
    versions: &Versions,
    worker: &str,
    now: Timestamp,
    lease: Duration,
    limit: usize,
) -> Result<Vec<Claimed>, StoreError> {
    let Some(workflow) = find_workflow(connection, workflow)? else {
        return Ok(Vec::new());
    };
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let (pinned, version) = version_columns(versions);
    let ids: Vec<i64> = connection
        .prepare_cached(
            "SELECT id FROM swf_instance
             WHERE workflow = ?1 AND due_at IS NOT NULL AND due_at <= ?2
               AND (lease_until IS NULL OR lease_until < ?2)
               AND (NOT ?4 OR (SELECT d.version FROM swf_definition d
                               WHERE d.id = swf_instance.definition) IS ?5)
             ORDER BY due_at, id LIMIT ?3",
        )?
        .query_map((workflow, micros(now), limit, pinned, version), |row| {
            row.get(0)
        })?
        .collect::<Result<_, _>>()?;
    let mut records = Vec::with_capacity(ids.len());
    for id in ids {
        records.extend(read_record(connection, id)?);
    }
    lease_all(connection, records, worker, deadline(now, lease)?)
}

/// Claims those of `ids` that have work and no live lease.
pub(super) fn claim_ids(
    connection: &Session,
    ids: &[InstanceId],
    versions: &Versions,
    worker: &str,
    now: Timestamp,
    lease: Duration,
) -> Result<Vec<Claimed>, StoreError> {
    let mut claimable = Vec::with_capacity(ids.len());
    let unique: BTreeSet<InstanceId> = ids.iter().copied().collect();
    for id in unique {
        let found = connection
            .prepare_cached(select_records!(
                "WHERE i.id = ?1 AND i.due_at IS NOT NULL AND i.due_at <= ?2
                   AND (i.lease_until IS NULL OR i.lease_until < ?2)"
            ))?
            .query_row((id_column(id)?, micros(now)), record_of)
            .optional()?
            .transpose()?
            .filter(|record| versions.admit(record.definition.version.as_deref()));
        claimable.extend(found);
    }
    lease_all(connection, claimable, worker, deadline(now, lease)?)
}

/// Leases the instances of `records` (their rows as just read) to `worker` until `until` and
/// completes them with their waits, correlation and inbox. Claiming hands the inbox to the
/// worker, so it clears `nudged` (events that arrive from now on set it again).
fn lease_all(
    connection: &Session,
    records: Vec<InstanceRecord>,
    worker: &str,
    until: i64,
) -> Result<Vec<Claimed>, StoreError> {
    let mut claimed = Vec::with_capacity(records.len());
    for mut record in records {
        let id = id_column(record.id)?;
        connection
            .prepare_cached(
                "UPDATE swf_instance SET lease_worker = ?2, lease_until = ?3, nudged = 0 WHERE id = ?1",
            )?
            .execute((id, worker, until))?;
        record.lease = Some(Lease {
            worker: worker.to_string(),
            until: timestamp(until)?,
        });
        let waits = waits(connection, id)?;
        claimed.push(hand_over(connection, record, &waits, None)?);
    }
    Ok(claimed)
}

/// Extends `worker`'s leases; returns the ids it still held.
pub(super) fn renew(
    connection: &Session,
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
    connection: &Session,
    workflow: &str,
    versions: &Versions,
) -> Result<Option<Timestamp>, StoreError> {
    let Some(workflow) = find_workflow(connection, workflow)? else {
        return Ok(None);
    };
    let (pinned, version) = version_columns(versions);
    // In due order, not `min()`: the index gives the first due row of the version at once,
    // where `min()` under the version's test would read every due row.
    let due: Option<i64> = connection
        .prepare_cached(
            "SELECT due_at FROM swf_instance
             WHERE workflow = ?1 AND due_at IS NOT NULL
               AND (NOT ?2 OR (SELECT d.version FROM swf_definition d
                               WHERE d.id = swf_instance.definition) IS ?3)
             ORDER BY due_at LIMIT 1",
        )?
        .query_row((workflow, pinned, version), |row| row.get(0))
        .optional()?;
    timestamp_opt(due)
}

/// A [`Versions`] as the two parameters the queries test: pinned or not, and the version
/// (`IS` compares a missing version as equal to a missing one).
pub(super) fn version_columns(versions: &Versions) -> (bool, Option<&str>) {
    match versions.pinned() {
        Some(version) => (true, version),
        None => (false, None),
    }
}
