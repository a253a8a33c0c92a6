//! Retention: removing the instances that ended and the events nothing holds any more.

use deadpool_postgres::Transaction;
use tokio_postgres::types::ToSql;

use super::sql::{execute, get, query};
use crate::store::codec::micros;
use crate::store::{PurgeFilter, Purged, StoreError};

/// Removes what `filter` selects (see [`Store::purge`](crate::store::Store::purge)).
pub(super) async fn purge(
    transaction: &Transaction<'_>,
    filter: &PurgeFilter,
) -> Result<Purged, StoreError> {
    let before = micros(filter.before);
    let limit = i64::try_from(filter.limit).unwrap_or(i64::MAX);
    let params: [&(dyn ToSql + Sync); 3] = [&before, &limit, &filter.workflow];
    // `status >= 2`: completed, failed or cancelled, written as the ended-instance index's own
    // condition so that the planner reads that index. The rows are locked, skipping those
    // another transaction holds (a redrive, another purge), and read again once locked: an
    // instance redriven meanwhile no longer matches.
    let rows = query(
        transaction,
        "WITH ended AS (
            SELECT i.id FROM swf_instance i
            WHERE i.status >= 2 AND i.updated_at < $1
              AND ($3::text IS NULL
                   OR i.workflow = (SELECT id FROM swf_workflow WHERE name = $3::text))
              AND NOT EXISTS (SELECT 1 FROM swf_outbox o
                              WHERE o.instance = i.id AND o.delivered_at IS NULL)
            ORDER BY i.updated_at LIMIT $2
            FOR UPDATE OF i SKIP LOCKED
         )
         DELETE FROM swf_instance i USING ended WHERE i.id = ended.id RETURNING i.id",
        &params,
    )
    .await?;
    let ended = rows
        .iter()
        .map(|row| get::<i64>(row, 0))
        .collect::<Result<Vec<_>, _>>()?;
    if !ended.is_empty() {
        for sql in [
            "DELETE FROM swf_history WHERE instance = ANY($1)",
            "DELETE FROM swf_outbox WHERE instance = ANY($1)",
            // An ended instance holds none of these; removed in case a store written by an
            // older release left some.
            "DELETE FROM swf_inbox WHERE instance = ANY($1)",
            "DELETE FROM swf_wait WHERE instance = ANY($1)",
            "DELETE FROM swf_binding WHERE instance = ANY($1)",
        ] {
            execute(transaction, sql, &[&ended]).await?;
        }
    }
    // A delivery never adds an old event to an inbox or a start group (an event received
    // again is a duplicate, not stored): an event found unheld stays unheld.
    let events = execute(
        transaction,
        "DELETE FROM swf_event WHERE seq IN (
            SELECT e.seq FROM swf_event e
            WHERE e.received_at < $1
              AND ($3::text IS NULL
                   OR e.workflow = (SELECT id FROM swf_workflow WHERE name = $3::text))
              AND NOT EXISTS (SELECT 1 FROM swf_inbox x WHERE x.seq = e.seq)
              AND NOT EXISTS (SELECT 1 FROM swf_start_member m WHERE m.seq = e.seq)
            ORDER BY e.received_at LIMIT $2
            FOR UPDATE OF e SKIP LOCKED)",
        &params,
    )
    .await?;
    Ok(Purged {
        instances: ended.len(),
        events: usize::try_from(events).unwrap_or(usize::MAX),
    })
}
