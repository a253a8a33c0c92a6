//! What operators and the outbox sender do: listings, history, cancel, redrive, the outbox.

use std::time::Duration;

use deadpool_postgres::{GenericClient, Transaction};
use jiff::Timestamp;
use tokio_postgres::types::ToSql;

use super::instances::stored_event;
use super::sql::{execute, get, query, query_opt};
use crate::store::codec::{
    LIST_CAP, deadline, event, history_kind, history_kind_code, id_column, instance_id, json_text,
    json_value, micros, number, number_column, status, status_code, strings, timestamp,
};
use crate::store::{
    HistoryEntry, HistoryKind, InstanceId, InstanceSummary, ListFilter, OutboxEntry, Status,
    StoreError, StoreErrorKind, StoredEvent,
};

/// The instances `filter` selects, newest first.
pub(super) async fn list<C: GenericClient>(
    client: &C,
    filter: &ListFilter,
) -> Result<Vec<InstanceSummary>, StoreError> {
    let statuses: Vec<i16> = filter
        .statuses
        .iter()
        .map(|status| status_code(*status))
        .collect();
    let before = filter.before.map(id_column).transpose()?;
    let limit = i64::try_from(filter.limit.min(LIST_CAP)).unwrap_or(0);
    let (pinned, version) = super::instances::version_columns(&filter.versions);
    let params: [&(dyn ToSql + Sync); 6] = [
        &filter.workflow,
        &statuses,
        &before,
        &limit,
        &pinned,
        &version,
    ];
    let rows = query(
        client,
        "SELECT i.id, w.name, d.version, i.status, i.position, i.revision, i.created_at, i.updated_at
         FROM swf_instance i
         JOIN swf_definition d ON d.id = i.definition
         JOIN swf_workflow w ON w.id = i.workflow
         WHERE ($1::text IS NULL OR w.name = $1)
           AND (cardinality($2::smallint[]) = 0 OR i.status = ANY($2))
           AND ($3::bigint IS NULL OR i.id < $3)
           AND (NOT $5 OR d.version IS NOT DISTINCT FROM $6::text)
         ORDER BY i.id DESC LIMIT $4",
        &params,
    )
    .await?;
    rows.iter()
        .map(|row| {
            Ok(InstanceSummary {
                id: instance_id(get(row, 0)?)?,
                workflow: get(row, 1)?,
                version: get(row, 2)?,
                status: status(get::<i16>(row, 3)?.into())?,
                position: get(row, 4)?,
                revision: number(get(row, 5)?)?,
                created_at: timestamp(get(row, 6)?)?,
                updated_at: timestamp(get(row, 7)?)?,
            })
        })
        .collect()
}

/// The history of one instance, oldest first.
pub(super) async fn history<C: GenericClient>(
    client: &C,
    id: InstanceId,
) -> Result<Vec<HistoryEntry>, StoreError> {
    let rows = query(
        client,
        "SELECT revision, at, kind, from_position, to_position, consumed, produced, detail
         FROM swf_history WHERE instance = $1 ORDER BY revision",
        &[&id_column(id)?],
    )
    .await?;
    rows.iter()
        .map(|row| {
            Ok(HistoryEntry {
                revision: number(get(row, 0)?)?,
                at: timestamp(get(row, 1)?)?,
                kind: history_kind(get::<i16>(row, 2)?.into())?,
                from: get(row, 3)?,
                to: get(row, 4)?,
                consumed: strings(get(row, 5)?)?,
                produced: strings(get(row, 6)?)?,
                detail: json_value(get(row, 7)?)?,
            })
        })
        .collect()
}

/// The status, revision and position of an instance, locked, or `NotFound`.
async fn current(
    transaction: &Transaction<'_>,
    id: i64,
) -> Result<(Status, i64, String), StoreError> {
    let row = query_opt(
        transaction,
        "SELECT status, revision, position FROM swf_instance WHERE id = $1 FOR UPDATE",
        &[&id],
    )
    .await?
    .ok_or_else(|| StoreError::new(StoreErrorKind::NotFound, format!("no instance {id}")))?;
    Ok((
        status(get::<i16>(&row, 0)?.into())?,
        get(&row, 1)?,
        get(&row, 2)?,
    ))
}

/// Writes an operator's transition: a new status and revision, and its history entry. A
/// cancelled instance's outcome is that entry's detail (the reason: how it ended, which
/// `DurableHost::wait` answers); a redriven one has none.
async fn operate(
    transaction: &Transaction<'_>,
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
    let next = revision + 1;
    execute(
        transaction,
        "UPDATE swf_instance SET status = $2, revision = $3, wake_at = NULL, lease_worker = NULL,
            lease_until = NULL, nudged = false, updated_at = $4, outcome = $5
         WHERE id = $1",
        &[&id, &status_code(new_status), &next, &at, &outcome],
    )
    .await?;
    execute(
        transaction,
        "INSERT INTO swf_history (instance, revision, at, kind, from_position, to_position,
            consumed, produced, detail)
         VALUES ($1, $2, $3, $4, $5, $5, '[]', '[]', $6)",
        &[
            &id,
            &next,
            &at,
            &history_kind_code(kind),
            &position,
            &json_text(detail),
        ],
    )
    .await?;
    Ok(())
}

/// Cancels an instance that has not ended; returns its inbox's events.
pub(super) async fn cancel(
    transaction: &Transaction<'_>,
    id: InstanceId,
    reason: &str,
    now: Timestamp,
) -> Result<Vec<StoredEvent>, StoreError> {
    let id = id_column(id)?;
    let (status, revision, position) = current(transaction, id).await?;
    // A failed instance may be cancelled: it gives up its redrive and what it kept for it.
    if matches!(status, Status::Completed | Status::Cancelled) {
        return Err(StoreError::new(
            StoreErrorKind::Ended,
            format!("instance {id} has ended ({status})"),
        ));
    }
    let detail = serde_json::json!({ "reason": reason });
    operate(
        transaction,
        id,
        revision,
        &position,
        HistoryKind::Cancelled,
        &detail,
        now,
    )
    .await?;
    execute(
        transaction,
        "DELETE FROM swf_wait WHERE instance = $1",
        &[&id],
    )
    .await?;
    execute(
        transaction,
        "DELETE FROM swf_binding WHERE instance = $1",
        &[&id],
    )
    .await?;
    let rows = query(
        transaction,
        "WITH gone AS (DELETE FROM swf_inbox WHERE instance = $1 RETURNING seq)
         SELECT e.seq, e.body, e.received_at FROM gone JOIN swf_event e ON e.seq = gone.seq
         ORDER BY e.seq",
        &[&id],
    )
    .await?;
    rows.iter()
        .map(|row| stored_event(get(row, 0)?, get(row, 1)?, get(row, 2)?))
        .collect()
}

/// Resumes a failed instance from its last committed state.
pub(super) async fn redrive(
    transaction: &Transaction<'_>,
    id: InstanceId,
    now: Timestamp,
) -> Result<(), StoreError> {
    let id = id_column(id)?;
    let (status, revision, position) = current(transaction, id).await?;
    if status != Status::Failed {
        return Err(StoreError::new(
            StoreErrorKind::NotFailed,
            format!("instance {id} has not failed ({status})"),
        ));
    }
    operate(
        transaction,
        id,
        revision,
        &position,
        HistoryKind::Redriven,
        &serde_json::json!({}),
        now,
    )
    .await
}

/// Claims produced events not yet delivered, oldest first; rows another claim holds are skipped.
pub(super) async fn claim_outbox<C: GenericClient>(
    client: &C,
    workflow: i64,
    worker: &str,
    now: Timestamp,
    lease: Duration,
    limit: usize,
) -> Result<Vec<OutboxEntry>, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = query(
        client,
        "WITH picked AS (
            SELECT o.seq FROM swf_outbox o
            WHERE o.delivered_at IS NULL AND (o.lease_until IS NULL OR o.lease_until < $1)
              AND EXISTS (SELECT 1 FROM swf_instance i WHERE i.id = o.instance AND i.workflow = $5)
            ORDER BY o.seq LIMIT $2 FOR UPDATE OF o SKIP LOCKED)
         UPDATE swf_outbox o SET lease_worker = $3, lease_until = $4
         FROM picked WHERE o.seq = picked.seq
         RETURNING o.seq, o.instance, o.body",
        &[
            &micros(now),
            &limit,
            &worker,
            &deadline(now, lease)?,
            &workflow,
        ],
    )
    .await?;
    let mut entries = rows
        .iter()
        .map(|row| {
            Ok(OutboxEntry {
                seq: number(get(row, 0)?)?,
                instance: instance_id(get(row, 1)?)?,
                event: event(get(row, 2)?)?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    entries.sort_by_key(|entry| entry.seq);
    Ok(entries)
}

/// Marks produced events as delivered.
pub(super) async fn mark_delivered<C: GenericClient>(
    client: &C,
    seqs: &[u64],
    now: Timestamp,
) -> Result<(), StoreError> {
    let seqs = seqs
        .iter()
        .map(|seq| number_column(*seq))
        .collect::<Result<Vec<_>, _>>()?;
    execute(
        client,
        "UPDATE swf_outbox SET delivered_at = $2, lease_worker = NULL, lease_until = NULL
         WHERE seq = ANY($1)",
        &[&seqs, &micros(now)],
    )
    .await?;
    Ok(())
}
