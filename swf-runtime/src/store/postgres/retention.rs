//! Retention: removing the instances that ended and the events nothing holds any more.

use deadpool_postgres::Transaction;

use super::sql::{execute, get, query};
use crate::store::codec::{micros, unknown_workflow};
use crate::store::{PurgeFilter, Purged, StoreError};

/// Removes what `filter` selects (see [`Store::purge`](crate::store::Store::purge)), one
/// workflow after another, each read along its own index range.
pub(super) async fn purge(
    transaction: &Transaction<'_>,
    filter: &PurgeFilter,
) -> Result<Purged, StoreError> {
    let before = micros(filter.before);
    let rows = match &filter.workflow {
        Some(name) => {
            query(
                transaction,
                "SELECT id FROM swf_workflow WHERE name = $1",
                &[name],
            )
            .await?
        }
        None => query(transaction, "SELECT id FROM swf_workflow ORDER BY id", &[]).await?,
    };
    if let (Some(name), true) = (&filter.workflow, rows.is_empty()) {
        return Err(unknown_workflow(name));
    }
    let mut purged = Purged::default();
    for row in &rows {
        let workflow: i64 = get(row, 0)?;
        let room = limit(filter.limit.saturating_sub(purged.instances));
        let ended = ended(transaction, workflow, before, room).await?;
        purged.instances += ended;
        let room = limit(filter.limit.saturating_sub(purged.events));
        purged.events += unheld_events(transaction, workflow, before, room).await?;
    }
    Ok(purged)
}

/// Removes the `room` instances of `workflow` that ended first before `before` and have sent
/// every event they produced, with their history and produced events; returns how many.
async fn ended(
    transaction: &Transaction<'_>,
    workflow: i64,
    before: i64,
    room: i64,
) -> Result<usize, StoreError> {
    // `status >= 2`: completed, failed or cancelled, written as the ended-instance index's own
    // condition so that the planner reads that index. The rows are locked, skipping those
    // another transaction holds (a redrive, another purge), and read again once locked: an
    // instance redriven meanwhile no longer matches.
    let rows = query(
        transaction,
        "WITH ended AS (
            SELECT i.id FROM swf_instance i
            WHERE i.workflow = $1 AND i.status >= 2 AND i.updated_at < $2
              AND NOT EXISTS (SELECT 1 FROM swf_outbox o
                              WHERE o.instance = i.id AND o.delivered_at IS NULL)
            ORDER BY i.updated_at LIMIT $3
            FOR UPDATE OF i SKIP LOCKED
         )
         DELETE FROM swf_instance i USING ended WHERE i.id = ended.id RETURNING i.id",
        &[&workflow, &before, &room],
    )
    .await?;
    let ids = rows
        .iter()
        .map(|row| get::<i64>(row, 0))
        .collect::<Result<Vec<_>, _>>()?;
    if !ids.is_empty() {
        for sql in [
            "DELETE FROM swf_history WHERE instance = ANY($1)",
            "DELETE FROM swf_outbox WHERE instance = ANY($1)",
            // What a failed instance kept for a redrive (its inbox and bindings); the others
            // hold none of these but may, written by an older release.
            "DELETE FROM swf_inbox WHERE instance = ANY($1)",
            "DELETE FROM swf_wait WHERE instance = ANY($1)",
            "DELETE FROM swf_binding WHERE instance = ANY($1)",
        ] {
            execute(transaction, sql, &[&ids]).await?;
        }
    }
    Ok(ids.len())
}

/// Removes the `room` events of `workflow` received first before `before` that no inbox and
/// no start group holds; returns how many.
async fn unheld_events(
    transaction: &Transaction<'_>,
    workflow: i64,
    before: i64,
    room: i64,
) -> Result<usize, StoreError> {
    // A delivery never adds an old event to an inbox or a start group (an event received
    // again is a duplicate, not stored): an event found unheld stays unheld.
    let removed = execute(
        transaction,
        "DELETE FROM swf_event WHERE seq IN (
            SELECT e.seq FROM swf_event e
            WHERE e.workflow = $1 AND e.received_at < $2
              AND NOT EXISTS (SELECT 1 FROM swf_inbox x WHERE x.seq = e.seq)
              AND NOT EXISTS (SELECT 1 FROM swf_start_member m WHERE m.seq = e.seq)
            ORDER BY e.received_at LIMIT $3
            FOR UPDATE OF e SKIP LOCKED)",
        &[&workflow, &before, &room],
    )
    .await?;
    Ok(usize::try_from(removed).unwrap_or(usize::MAX))
}

fn limit(room: usize) -> i64 {
    i64::try_from(room).unwrap_or(i64::MAX)
}
