//! Retention: removing the instances that ended and the events nothing holds any more.

use crate::store::codec::{micros, unknown_workflow};
use crate::store::{PurgeFilter, Purged, StoreError};

use super::session::Session;

/// The instances of workflow `?3` that ended before `?1` and have sent every event they
/// produced, the `?2` that ended first. `status >= 2` (completed, failed or cancelled) is the
/// ended-instance index's own condition, so that the planner reads that index.
pub(super) const ENDED: &str = "SELECT i.id FROM swf_instance i
    WHERE i.workflow = ?3 AND i.status >= 2 AND i.updated_at < ?1
      AND NOT EXISTS (SELECT 1 FROM swf_outbox o WHERE o.instance = i.id AND o.delivered_at IS NULL)
    ORDER BY i.updated_at LIMIT ?2";

/// Removes the `?2` events of workflow `?3` received first before `?1` that no inbox and no
/// start group holds.
pub(super) const UNHELD_EVENTS: &str = "DELETE FROM swf_event WHERE seq IN (
    SELECT e.seq FROM swf_event e
    WHERE e.workflow = ?3 AND e.received_at < ?1
      AND NOT EXISTS (SELECT 1 FROM swf_inbox x WHERE x.seq = e.seq)
      AND NOT EXISTS (SELECT 1 FROM swf_start_member m WHERE m.seq = e.seq)
    ORDER BY e.received_at LIMIT ?2)";

/// Removes what `filter` selects (see [`Store::purge`](crate::store::Store::purge)), one
/// workflow after another, each read along its own index range.
pub(super) fn purge(connection: &Session, filter: &PurgeFilter) -> Result<Purged, StoreError> {
    let before = micros(filter.before);
    let workflows: Vec<i64> = match &filter.workflow {
        Some(name) => {
            let found: Vec<i64> = connection
                .prepare_cached("SELECT id FROM swf_workflow WHERE name = ?1")?
                .query_map([name], |row| row.get(0))?
                .collect::<Result<_, _>>()?;
            if found.is_empty() {
                return Err(unknown_workflow(name));
            }
            found
        }
        None => connection
            .prepare_cached("SELECT id FROM swf_workflow ORDER BY id")?
            .query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?,
    };
    let mut purged = Purged::default();
    for workflow in workflows {
        let room = filter.limit.saturating_sub(purged.instances);
        let ended: Vec<i64> = connection
            .prepare_cached(ENDED)?
            .query_map((before, limit(room), workflow), |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        for id in &ended {
            for sql in [
                "DELETE FROM swf_history WHERE instance = ?1",
                "DELETE FROM swf_outbox WHERE instance = ?1",
                // What a failed instance kept for a redrive (its inbox and bindings); the
                // others hold none of these but may, written by an older release.
                "DELETE FROM swf_inbox WHERE instance = ?1",
                "DELETE FROM swf_wait WHERE instance = ?1",
                "DELETE FROM swf_binding WHERE instance = ?1",
                "DELETE FROM swf_instance WHERE id = ?1",
            ] {
                connection.prepare_cached(sql)?.execute([id])?;
            }
        }
        purged.instances += ended.len();
        let room = filter.limit.saturating_sub(purged.events);
        purged.events +=
            connection
                .prepare_cached(UNHELD_EVENTS)?
                .execute((before, limit(room), workflow))?;
    }
    Ok(purged)
}

fn limit(room: usize) -> i64 {
    i64::try_from(room).unwrap_or(i64::MAX)
}
