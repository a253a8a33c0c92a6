//! What operators and the outbox sender do: listings, history, cancel, redrive, the outbox.

use std::time::Duration;

use jiff::Timestamp;
use rusqlite::OptionalExtension;

use super::commits::end;
use super::names::find_workflow;
use super::session::Session;
use crate::store::codec::{
    LIST_CAP, deadline, event, history_kind, history_kind_code, id_column, instance_id, json_text,
    json_value, micros, number, number_column, status, status_code, strings, timestamp,
};
use crate::store::{
    HistoryEntry, HistoryKind, InstanceId, InstanceSummary, ListFilter, OutboxEntry, Status,
    StoreError, StoreErrorKind, StoredEvent,
};

/// The instances `filter` selects, newest first.
pub(super) fn list(
    connection: &Session,
    filter: &ListFilter,
) -> Result<Vec<InstanceSummary>, StoreError> {
    let mut sql = String::from(
        "SELECT i.id, w.name, d.version, i.status, i.position, i.revision, i.created_at, i.updated_at
         FROM swf_instance i
         JOIN swf_definition d ON d.id = i.definition
         JOIN swf_workflow w ON w.id = i.workflow WHERE 1",
    );
    let mut values: Vec<rusqlite::types::Value> = Vec::new();
    if let Some(workflow) = &filter.workflow {
        values.push(workflow.clone().into());
        sql.push_str(&format!(" AND w.name = ?{}", values.len()));
    }
    if let Some(version) = filter.versions.pinned() {
        values.push(version.map(str::to_owned).into());
        sql.push_str(&format!(" AND d.version IS ?{}", values.len()));
    }
    if !filter.statuses.is_empty() {
        let codes: Vec<String> = filter
            .statuses
            .iter()
            .map(|status| status_code(*status).to_string())
            .collect();
        sql.push_str(&format!(" AND i.status IN ({})", codes.join(", ")));
    }
    if let Some(before) = filter.before {
        values.push(id_column(before)?.into());
        sql.push_str(&format!(" AND i.id < ?{}", values.len()));
    }
    values.push(
        i64::try_from(filter.limit.min(LIST_CAP))
            .unwrap_or(0)
            .into(),
    );
    sql.push_str(&format!(" ORDER BY i.id DESC LIMIT ?{}", values.len()));
    let mut statement = connection.prepare_built(&sql)?;
    let rows = statement.query_map(rusqlite::params_from_iter(values), |row| {
        Ok((
            row.get::<_, i64>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, Option<String>>(2)?,
            row.get::<_, i64>(3)?,
            row.get::<_, String>(4)?,
            row.get::<_, i64>(5)?,
            row.get::<_, i64>(6)?,
            row.get::<_, i64>(7)?,
        ))
    })?;
    rows.map(|row| {
        let (id, workflow, version, status_column, position, revision, created_at, updated_at) =
            row?;
        Ok(InstanceSummary {
            id: instance_id(id)?,
            workflow,
            version,
            status: status(status_column)?,
            position,
            revision: number(revision)?,
            created_at: timestamp(created_at)?,
            updated_at: timestamp(updated_at)?,
        })
    })
    .collect()
}

/// The history of one instance, oldest first.
pub(super) fn history(
    connection: &Session,
    id: InstanceId,
) -> Result<Vec<HistoryEntry>, StoreError> {
    let mut statement = connection.prepare_cached(
        "SELECT revision, at, kind, from_position, to_position, consumed, produced, detail
         FROM swf_history WHERE instance = ?1 ORDER BY revision",
    )?;
    let rows = statement.query_map([id_column(id)?], |row| {
        Ok((
            row.get::<_, i64>(0)?,
            row.get::<_, i64>(1)?,
            row.get::<_, i64>(2)?,
            row.get::<_, String>(3)?,
            row.get::<_, String>(4)?,
            row.get::<_, String>(5)?,
            row.get::<_, String>(6)?,
            row.get::<_, String>(7)?,
        ))
    })?;
    rows.map(|row| {
        let (revision, at, kind, from, to, consumed, produced, detail) = row?;
        Ok(HistoryEntry {
            revision: number(revision)?,
            at: timestamp(at)?,
            kind: history_kind(kind)?,
            from,
            to,
            consumed: strings(&consumed)?,
            produced: strings(&produced)?,
            detail: json_value(&detail)?,
        })
    })
    .collect()
}

/// The status, revision and position of an instance, or `NotFound`.
fn current(connection: &Session, id: i64) -> Result<(Status, i64, String), StoreError> {
    let found = connection
        .prepare_cached("SELECT status, revision, position FROM swf_instance WHERE id = ?1")?
        .query_row([id], |row| {
            Ok((row.get::<_, i64>(0)?, row.get(1)?, row.get(2)?))
        })
        .optional()?;
    let (status_column, revision, position) = found
        .ok_or_else(|| StoreError::new(StoreErrorKind::NotFound, format!("no instance {id}")))?;
    Ok((status(status_column)?, revision, position))
}

/// Writes an operator's transition: a new status and revision, and its history entry. A
/// cancelled instance's outcome is that entry's detail (the reason: how it ended, which
/// `DurableHost::wait` answers); a redriven one has none.
fn operate(
    connection: &Session,
    id: i64,
    revision: i64,
    position: &str,
    kind: HistoryKind,
    detail: &serde_json::Value,
    now: Timestamp,
) -> Result<(), StoreError> {
    let (new_status, outcome) = if kind == HistoryKind::Cancelled {
        (Status::Cancelled, Some(json_text(detail)))
    } else {
        (Status::Runnable, None)
    };
    let at = micros(now);
    connection
        .prepare_cached(
            "UPDATE swf_instance SET status = ?2, revision = ?3, wake_at = NULL, lease_worker = NULL,
                lease_until = NULL, nudged = 0, updated_at = ?4, outcome = ?5
             WHERE id = ?1",
        )?
        .execute((id, status_code(new_status), revision + 1, at, outcome))?;
    connection
        .prepare_cached(
            "INSERT INTO swf_history (instance, revision, at, kind, from_position, to_position,
                consumed, produced, detail)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5, '[]', '[]', ?6)",
        )?
        .execute((
            id,
            revision + 1,
            at,
            history_kind_code(kind),
            position,
            json_text(detail),
        ))?;
    Ok(())
}

/// Cancels an instance that has not ended; returns its inbox's events.
pub(super) fn cancel(
    connection: &Session,
    id: InstanceId,
    reason: &str,
    now: Timestamp,
) -> Result<Vec<StoredEvent>, StoreError> {
    let id = id_column(id)?;
    let (status, revision, position) = current(connection, id)?;
    // A failed instance may be cancelled: it gives up its redrive and what it kept for it.
    if matches!(status, Status::Completed | Status::Cancelled) {
        return Err(StoreError::new(
            StoreErrorKind::Ended,
            format!("instance {id} has ended ({status})"),
        ));
    }
    let detail = serde_json::json!({ "reason": reason });
    operate(
        connection,
        id,
        revision,
        &position,
        HistoryKind::Cancelled,
        &detail,
        now,
    )?;
    end(connection, id, &[])
}

/// Resumes a failed instance from its last committed state.
pub(super) fn redrive(
    connection: &Session,
    id: InstanceId,
    now: Timestamp,
) -> Result<(), StoreError> {
    let id = id_column(id)?;
    let (status, revision, position) = current(connection, id)?;
    if status != Status::Failed {
        return Err(StoreError::new(
            StoreErrorKind::NotFailed,
            format!("instance {id} has not failed ({status})"),
        ));
    }
    operate(
        connection,
        id,
        revision,
        &position,
        HistoryKind::Redriven,
        &serde_json::json!({}),
        now,
    )
}

/// Claims the events instances of `workflow` produced and that are not yet delivered, oldest
/// first.
pub(super) fn claim_outbox(
    connection: &Session,
    workflow: &str,
    worker: &str,
    now: Timestamp,
    lease: Duration,
    limit: usize,
) -> Result<Vec<OutboxEntry>, StoreError> {
    let Some(workflow) = find_workflow(connection, workflow)? else {
        return Ok(Vec::new());
    };
    let until = deadline(now, lease)?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows: Vec<(i64, i64, String)> = connection
        .prepare_cached(
            "SELECT o.seq, o.instance, o.body FROM swf_outbox o
             JOIN swf_instance i ON i.id = o.instance
             WHERE o.delivered_at IS NULL AND (o.lease_until IS NULL OR o.lease_until < ?1)
               AND i.workflow = ?3
             ORDER BY o.seq LIMIT ?2",
        )?
        .query_map((micros(now), limit, workflow), |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?
        .collect::<Result<_, _>>()?;
    let mut entries = Vec::with_capacity(rows.len());
    for (seq, instance, body) in rows {
        connection
            .prepare_cached(
                "UPDATE swf_outbox SET lease_worker = ?2, lease_until = ?3 WHERE seq = ?1",
            )?
            .execute((seq, worker, until))?;
        entries.push(OutboxEntry {
            seq: number(seq)?,
            instance: instance_id(instance)?,
            event: event(&body)?,
        });
    }
    Ok(entries)
}

/// Marks produced events as delivered.
pub(super) fn mark_delivered(
    connection: &Session,
    seqs: &[u64],
    now: Timestamp,
) -> Result<(), StoreError> {
    for seq in seqs {
        connection
            .prepare_cached(
                "UPDATE swf_outbox SET delivered_at = ?2, lease_worker = NULL, lease_until = NULL
                 WHERE seq = ?1",
            )?
            .execute((number_column(*seq)?, micros(now)))?;
    }
    Ok(())
}
