//! Instances: creating them, reading them back with their inbox, claiming and leasing them.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use deadpool_postgres::GenericClient;
use jiff::Timestamp;
use tokio_postgres::Row;

use super::names::NameCache;
use super::sql::{execute, get, query};
use crate::store::codec::{
    CORRELATION_ATTRIBUTE, EVENT_DEFINITION, deadline, event, history_kind_code, id_column,
    instance_id, invalid, json_text, json_value, micros, number, number_column, status,
    status_code, timestamp, timestamp_opt, unavailable,
};
use crate::store::{
    Claimed, Definition, HistoryKind, InstanceId, InstanceRecord, Lease, NewInstance, StoreError,
    StoredEvent, Versions,
};

/// A statement sent without waiting for the previous one's answer (tokio-postgres pipelines
/// statements that are in flight together on one connection).
pub(super) type Pending<'a> = Pin<Box<dyn Future<Output = Result<u64, StoreError>> + Send + 'a>>;

/// Runs statements together; they must not depend on each other's order.
pub(super) async fn pipeline(pending: Vec<Pending<'_>>) -> Result<(), StoreError> {
    futures_util::future::try_join_all(pending).await?;
    Ok(())
}

/// A new instance's definition, workflow, waits and correlation attributes as ids.
pub(super) struct Resolved {
    definition: i64,
    pub(super) workflow: i64,
    waits: Vec<i64>,
    attributes: Vec<i64>,
}

/// Resolves the names of a new instance (outside the transaction: see [`NameCache`]).
pub(super) async fn resolve<C: GenericClient>(
    names: &NameCache,
    client: &C,
    new: &NewInstance,
    now: Timestamp,
) -> Result<Resolved, StoreError> {
    let (definition, workflow, _) = names.definition(client, &new.definition, now).await?;
    let waits: Vec<&str> = new.waits.iter().map(String::as_str).collect();
    let waits = names
        .names(client, workflow, EVENT_DEFINITION, &waits)
        .await?;
    let attributes: Vec<&str> = new
        .correlation
        .iter()
        .map(|(attribute, _)| attribute.as_str())
        .collect();
    let attributes = names
        .names(client, workflow, CORRELATION_ATTRIBUTE, &attributes)
        .await?;
    Ok(Resolved {
        definition,
        workflow,
        waits,
        attributes,
    })
}

/// The instance of `workflow` created with the start key `key`.
async fn keyed_instance<C: GenericClient>(
    client: &C,
    workflow: i64,
    key: &str,
) -> Result<InstanceId, StoreError> {
    let rows = query(
        client,
        "SELECT id FROM swf_instance WHERE workflow = $1 AND start_key = $2",
        &[&workflow, &key],
    )
    .await?;
    match rows.first() {
        Some(row) => instance_id(get(row, 0)?),
        None => Err(unavailable(format!(
            "PostgreSQL: start key {key:?} was taken, but no instance has it"
        ))),
    }
}

/// Creates an instance with `extra_inbox` in its inbox besides the events it names.
pub(super) async fn insert_instance<C: GenericClient>(
    client: &C,
    new: &NewInstance,
    resolved: &Resolved,
    extra_inbox: &[u64],
    now: Timestamp,
) -> Result<InstanceId, StoreError> {
    if new.status.has_ended() {
        return Err(invalid(format!(
            "an instance cannot be created {}: only runnable or waiting",
            new.status
        )));
    }
    let parent = new.parent.map(id_column).transpose()?;
    let (lease_worker, lease_until) = match &new.lease {
        Some(lease) => (Some(lease.worker.as_str()), Some(micros(lease.until))),
        None => (None, None),
    };
    let at = micros(now);
    // A key another transaction holds waits for it to end: then this inserts nothing when it
    // committed, and the key's instance is read below.
    let rows = query(
        client,
        "INSERT INTO swf_instance (workflow, definition, status, revision, wake_at, lease_worker,
            lease_until, nudged, parent, created_at, updated_at, position, state, start_key)
         VALUES ($1, $2, $3, 0, $4, $5, $6, false, $7, $8, $8, $9, $10, $11)
         ON CONFLICT DO NOTHING RETURNING id",
        &[
            &resolved.workflow,
            &resolved.definition,
            &status_code(new.status),
            &new.wake_at.map(micros),
            &lease_worker,
            &lease_until,
            &parent,
            &at,
            &new.position,
            &new.state,
            &new.start_key,
        ],
    )
    .await?;
    let id: i64 = match (rows.first(), &new.start_key) {
        (Some(row), _) => get(row, 0)?,
        (None, Some(key)) => return keyed_instance(client, resolved.workflow, key).await,
        (None, None) => return Err(invalid("PostgreSQL: an insert returned no id")),
    };
    let values: Vec<&str> = new
        .correlation
        .iter()
        .map(|(_, value)| value.as_str())
        .collect();
    let inbox = new
        .inbox
        .iter()
        .chain(extra_inbox)
        .copied()
        .collect::<BTreeSet<u64>>()
        .into_iter()
        .map(number_column)
        .collect::<Result<Vec<i64>, _>>()?;
    let detail = json_text(&new.detail);
    let started = history_kind_code(HistoryKind::Started);
    pipeline(vec![
        Box::pin(async { execute(
            client,
            "INSERT INTO swf_wait (instance, name, since) SELECT $1, unnest($2::bigint[]), $3
             ON CONFLICT DO NOTHING",
            &[&id, &resolved.waits, &at],
        ).await }),
        Box::pin(async { execute(
            client,
            "INSERT INTO swf_binding (instance, attribute, value)
             SELECT $1, a, v FROM unnest($2::bigint[], $3::text[]) AS b(a, v) ON CONFLICT DO NOTHING",
            &[&id, &resolved.attributes, &values],
        ).await }),
        Box::pin(async { execute(
            client,
            // An event purged meanwhile is left out, and the lock keeps a purge from taking
            // one until this commits (it skips locked events): an inbox never names a missing
            // event.
            "INSERT INTO swf_inbox (instance, seq)
             SELECT $1, e.seq FROM swf_event e WHERE e.seq = ANY($2::bigint[]) FOR KEY SHARE
             ON CONFLICT DO NOTHING",
            &[&id, &inbox],
        ).await }),
        Box::pin(async { execute(
            client,
            "INSERT INTO swf_history (instance, revision, at, kind, from_position, to_position,
                consumed, produced, detail)
             VALUES ($1, 0, $2, $3, '', $4, '[]', '[]', $5)",
            &[&id, &at, &started, &new.position, &detail],
        ).await }),
    ])
    .await?;
    instance_id(id)
}

/// Instances with their inbox, in the order of `ids` (missing ones left out).
pub(super) async fn load<C: GenericClient>(
    client: &C,
    ids: &[i64],
) -> Result<Vec<Claimed>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids_param = ids.to_vec();
    let (records, inboxes) = futures_util::future::try_join(
        query(
            client,
            "SELECT i.id, w.name, d.version, d.hash, i.status, i.state, i.position, i.revision,
                i.wake_at, i.parent, i.lease_worker, i.lease_until, i.outcome, i.created_at,
                i.updated_at,
                ARRAY(SELECT n.name FROM swf_wait x JOIN swf_name n ON n.id = x.name
                      WHERE x.instance = i.id ORDER BY n.name),
                ARRAY(SELECT n.name FROM swf_binding b JOIN swf_name n ON n.id = b.attribute
                      WHERE b.instance = i.id ORDER BY n.name),
                ARRAY(SELECT b.value FROM swf_binding b JOIN swf_name n ON n.id = b.attribute
                      WHERE b.instance = i.id ORDER BY n.name),
                i.start_key
             FROM swf_instance i
             JOIN swf_definition d ON d.id = i.definition
             JOIN swf_workflow w ON w.id = i.workflow
             WHERE i.id = ANY($1)",
            &[&ids_param],
        ),
        query(
            client,
            "SELECT b.instance, e.seq, e.body, e.received_at FROM swf_inbox b
             JOIN swf_event e ON e.seq = b.seq WHERE b.instance = ANY($1) ORDER BY b.instance, b.seq",
            &[&ids_param],
        ),
    )
    .await?;
    let mut inbox_of: HashMap<i64, Vec<StoredEvent>> = HashMap::new();
    for row in &inboxes {
        let event = stored_event(get(row, 1)?, get(row, 2)?, get(row, 3)?)?;
        inbox_of.entry(get(row, 0)?).or_default().push(event);
    }
    let mut record_of = HashMap::with_capacity(records.len());
    for row in &records {
        let record = record(row)?;
        record_of.insert(get::<i64>(row, 0)?, record);
    }
    Ok(ids
        .iter()
        .filter_map(|id| {
            let record = record_of.remove(id)?;
            let inbox = inbox_of.remove(id).unwrap_or_default();
            Some(Claimed { record, inbox })
        })
        .collect())
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

/// A record from the row [`load`] reads.
fn record(row: &Row) -> Result<InstanceRecord, StoreError> {
    let lease_worker: Option<String> = get(row, 10)?;
    let lease_until: Option<i64> = get(row, 11)?;
    let lease = match (lease_worker, lease_until) {
        (Some(worker), Some(until)) => Some(Lease {
            worker,
            until: timestamp(until)?,
        }),
        _ => None,
    };
    let attributes: Vec<String> = get(row, 16)?;
    let values: Vec<String> = get(row, 17)?;
    let outcome: Option<String> = get(row, 12)?;
    Ok(InstanceRecord {
        id: instance_id(get(row, 0)?)?,
        definition: Definition {
            workflow: get(row, 1)?,
            version: get(row, 2)?,
            hash: get(row, 3)?,
        },
        status: status(get::<i16>(row, 4)?.into())?,
        state: get(row, 5)?,
        position: get(row, 6)?,
        revision: number(get(row, 7)?)?,
        wake_at: timestamp_opt(get(row, 8)?)?,
        waits: get(row, 15)?,
        correlation: attributes.into_iter().zip(values).collect(),
        parent: get::<Option<i64>>(row, 9)?.map(instance_id).transpose()?,
        lease,
        outcome: outcome.as_deref().map(json_value).transpose()?,
        created_at: timestamp(get(row, 13)?)?,
        updated_at: timestamp(get(row, 14)?)?,
        start_key: get(row, 18)?,
    })
}

/// Claims up to `limit` instances of `workflow` that have work, due earliest first. Rows another
/// claim holds are skipped, never waited for.
pub(super) async fn claim<C: GenericClient>(
    client: &C,
    workflow: i64,
    versions: &Versions,
    worker: &str,
    now: Timestamp,
    lease: Duration,
    limit: usize,
) -> Result<Vec<Claimed>, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let (pinned, version) = version_columns(versions);
    let rows = query(
        client,
        "WITH picked AS (
            SELECT id, due_at FROM swf_instance
            WHERE workflow = $1 AND due_at IS NOT NULL AND due_at <= $2
              AND (lease_until IS NULL OR lease_until < $2)
              AND (NOT $6 OR (SELECT d.version FROM swf_definition d
                              WHERE d.id = swf_instance.definition) IS NOT DISTINCT FROM $7)
            ORDER BY due_at, id LIMIT $3
            FOR UPDATE SKIP LOCKED)
         UPDATE swf_instance i SET lease_worker = $4, lease_until = $5, nudged = false
         FROM picked WHERE i.id = picked.id
         RETURNING i.id, picked.due_at",
        &[
            &workflow,
            &micros(now),
            &limit,
            &worker,
            &deadline(now, lease)?,
            &pinned,
            &version,
        ],
    )
    .await?;
    load(client, &in_due_order(&rows)?).await
}

/// Claims those of `ids` that have work and no live lease.
pub(super) async fn claim_ids<C: GenericClient>(
    client: &C,
    ids: &[InstanceId],
    versions: &Versions,
    worker: &str,
    now: Timestamp,
    lease: Duration,
) -> Result<Vec<Claimed>, StoreError> {
    let ids = ids
        .iter()
        .map(|id| id_column(*id))
        .collect::<Result<Vec<_>, _>>()?;
    let (pinned, version) = version_columns(versions);
    let rows = query(
        client,
        "WITH picked AS (
            SELECT id, due_at FROM swf_instance
            WHERE id = ANY($1) AND due_at IS NOT NULL AND due_at <= $2
              AND (lease_until IS NULL OR lease_until < $2)
              AND (NOT $5 OR (SELECT d.version FROM swf_definition d
                              WHERE d.id = swf_instance.definition) IS NOT DISTINCT FROM $6)
            FOR UPDATE SKIP LOCKED)
         UPDATE swf_instance i SET lease_worker = $3, lease_until = $4, nudged = false
         FROM picked WHERE i.id = picked.id
         RETURNING i.id, picked.due_at",
        &[
            &ids,
            &micros(now),
            &worker,
            &deadline(now, lease)?,
            &pinned,
            &version,
        ],
    )
    .await?;
    load(client, &in_due_order(&rows)?).await
}

/// The ids of `(id, due_at)` rows, due earliest first.
fn in_due_order(rows: &[Row]) -> Result<Vec<i64>, StoreError> {
    let mut due = rows
        .iter()
        .map(|row| Ok((get::<i64>(row, 1)?, get::<i64>(row, 0)?)))
        .collect::<Result<Vec<_>, StoreError>>()?;
    due.sort_unstable();
    Ok(due.into_iter().map(|(_, id)| id).collect())
}

/// Extends `worker`'s leases; returns the ids it still held.
pub(super) async fn renew<C: GenericClient>(
    client: &C,
    ids: &[InstanceId],
    worker: &str,
    until: Timestamp,
) -> Result<Vec<InstanceId>, StoreError> {
    let columns = ids
        .iter()
        .map(|id| id_column(*id))
        .collect::<Result<Vec<_>, _>>()?;
    let rows = query(
        client,
        "UPDATE swf_instance SET lease_until = $3 WHERE id = ANY($1) AND lease_worker = $2 RETURNING id",
        &[&columns, &worker, &micros(until)],
    )
    .await?;
    let held: BTreeSet<i64> = rows
        .iter()
        .map(|row| get(row, 0))
        .collect::<Result<_, _>>()?;
    // In the caller's order.
    Ok(ids
        .iter()
        .zip(columns)
        .filter(|(_, column)| held.contains(column))
        .map(|(id, _)| *id)
        .collect())
}

/// When an instance of `workflow` next has work or a lease expires.
pub(super) async fn next_wake<C: GenericClient>(
    client: &C,
    workflow: i64,
    versions: &Versions,
) -> Result<Option<Timestamp>, StoreError> {
    let (pinned, version) = version_columns(versions);
    // In due order, not `min()`: the index gives the first due row of the version at once.
    let rows = query(
        client,
        "SELECT due_at FROM swf_instance
         WHERE workflow = $1 AND due_at IS NOT NULL
           AND (NOT $2 OR (SELECT d.version FROM swf_definition d
                           WHERE d.id = swf_instance.definition) IS NOT DISTINCT FROM $3)
         ORDER BY due_at LIMIT 1",
        &[&workflow, &pinned, &version],
    )
    .await?;
    match rows.first() {
        Some(row) => timestamp_opt(get(row, 0)?),
        None => Ok(None),
    }
}

/// A [`Versions`] as the two parameters the queries test: pinned or not, and the version.
pub(super) fn version_columns(versions: &Versions) -> (bool, Option<&str>) {
    match versions.pinned() {
        Some(version) => (true, version),
        None => (false, None),
    }
}
