//! Incoming events: deduplication, routing to instances, start plans and start groups.
//!
//! Workers on many machines may route at once. A correlation value and a start group key are
//! each routed under a transaction-scoped advisory lock, so that two events with a new value do
//! not bind two different waiters, and two events of one group do not open two groups.

use std::collections::BTreeSet;

use deadpool_postgres::{GenericClient, Transaction};
use jiff::Timestamp;

use super::Core;
use super::instances::{Resolved, insert_instance, load, pipeline, resolve, stored_event};
use super::sql::{execute, get, query};
use crate::store::codec::{
    CORRELATION_ATTRIBUTE, EVENT_DEFINITION, deadline, encode_event, instance_id, micros, number,
};
use crate::store::{Delivery, Routed, StartPlan, StoreError, StoredEvent, Target};

/// How often the longest waiter is looked for again when a concurrent delivery bound it first.
const BINDING_RACES: usize = 3;

/// A delivery's names as ids, resolved before the transaction.
struct ResolvedDelivery {
    workflow: i64,
    targets: Vec<ResolvedTarget>,
    start: Option<ResolvedStart>,
}

struct ResolvedTarget {
    definition: i64,
    attribute: Option<i64>,
}

struct ResolvedStart {
    instance: Resolved,
    this: i64,
    needed: Vec<i64>,
}

impl Core {
    /// Stores and routes each delivery, in order, in one transaction.
    pub(super) async fn deliver_all(
        &self,
        deliveries: Vec<Delivery>,
        now: Timestamp,
    ) -> Result<Vec<Routed>, StoreError> {
        let mut client = self.client().await?;
        let mut resolved = Vec::with_capacity(deliveries.len());
        for delivery in &deliveries {
            resolved.push(self.resolve_delivery(&client, delivery, now).await?);
        }
        let transaction = client.transaction().await?;
        let mut routed = Vec::with_capacity(deliveries.len());
        for (delivery, resolved) in deliveries.iter().zip(&resolved) {
            routed.push(deliver_one(&transaction, delivery, resolved, now).await?);
        }
        transaction.commit().await?;
        Ok(routed)
    }

    async fn resolve_delivery<C: GenericClient>(
        &self,
        client: &C,
        delivery: &Delivery,
        now: Timestamp,
    ) -> Result<ResolvedDelivery, StoreError> {
        let workflow = self.names.workflow(client, &delivery.workflow).await?;
        let mut targets = Vec::with_capacity(delivery.targets.len());
        for target in &delivery.targets {
            let definition = self
                .names
                .name(client, workflow, EVENT_DEFINITION, &target.definition)
                .await?;
            let attribute = match &target.correlation {
                Some((attribute, _)) => Some(
                    self.names
                        .name(client, workflow, CORRELATION_ATTRIBUTE, attribute)
                        .await?,
                ),
                None => None,
            };
            targets.push(ResolvedTarget {
                definition,
                attribute,
            });
        }
        let start = match &delivery.start {
            None => None,
            Some(StartPlan::Now(instance)) => Some(ResolvedStart {
                instance: resolve(&self.names, client, instance, now).await?,
                this: 0,
                needed: Vec::new(),
            }),
            Some(StartPlan::Group {
                this,
                needed,
                instance,
                ..
            }) => Some(ResolvedStart {
                instance: resolve(&self.names, client, instance, now).await?,
                this: self
                    .names
                    .name(client, workflow, EVENT_DEFINITION, this)
                    .await?,
                needed: {
                    let needed: Vec<&str> = needed.iter().map(String::as_str).collect();
                    self.names
                        .names(client, workflow, EVENT_DEFINITION, &needed)
                        .await?
                },
            }),
        };
        Ok(ResolvedDelivery {
            workflow,
            targets,
            start,
        })
    }
}

async fn deliver_one(
    transaction: &Transaction<'_>,
    delivery: &Delivery,
    resolved: &ResolvedDelivery,
    now: Timestamp,
) -> Result<Routed, StoreError> {
    let encoded = encode_event(&delivery.event)?;
    let at = micros(now);
    let inserted = query(
        transaction,
        "INSERT INTO swf_event (workflow, source, event_id, received_at, body)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING seq",
        &[
            &resolved.workflow,
            &encoded.source,
            &encoded.id,
            &at,
            &encoded.body,
        ],
    )
    .await?;
    let Some(row) = inserted.first() else {
        let rows = query(
            transaction,
            "SELECT seq FROM swf_event WHERE workflow = $1 AND source = $2 AND event_id = $3",
            &[&resolved.workflow, &encoded.source, &encoded.id],
        )
        .await?;
        let seq: i64 = match rows.first() {
            Some(row) => get(row, 0)?,
            None => {
                return Err(crate::store::codec::unavailable(
                    "PostgreSQL: a duplicate event vanished",
                ));
            }
        };
        return Ok(Routed::Duplicate { seq: number(seq)? });
    };
    let seq: i64 = get(row, 0)?;
    let mut receivers = BTreeSet::new();
    for (target, ids) in delivery.targets.iter().zip(&resolved.targets) {
        receivers.extend(receivers_of(transaction, target, ids).await?);
    }
    let unsigned = number(seq)?;
    if !receivers.is_empty() {
        let definitions: Vec<i64> = resolved
            .targets
            .iter()
            .map(|target| target.definition)
            .collect();
        return receive(
            transaction,
            seq,
            receivers.into_iter().collect(),
            &definitions,
            delivery,
            now,
        )
        .await;
    }
    match (&delivery.start, &resolved.start) {
        (Some(StartPlan::Now(instance)), Some(start)) => Ok(Routed::Started {
            seq: unsigned,
            instance: insert_instance(transaction, instance, &start.instance, &[unsigned], now)
                .await?,
        }),
        (
            Some(StartPlan::Group {
                key,
                timeout,
                instance,
                ..
            }),
            Some(start),
        ) => {
            let expires_at = timeout.map(|timeout| deadline(now, timeout)).transpose()?;
            let group = join_group(
                transaction,
                resolved.workflow,
                key,
                start.this,
                seq,
                at,
                expires_at,
            )
            .await?;
            match complete_group(transaction, group, &start.needed).await? {
                Some(seqs) => Ok(Routed::Started {
                    seq: unsigned,
                    instance: insert_instance(transaction, instance, &start.instance, &seqs, now)
                        .await?,
                }),
                None => Ok(Routed::Grouped { seq: unsigned }),
            }
        }
        _ => Ok(Routed::Unmatched {
            seq: unsigned,
            reason: delivery.unmatched.clone(),
        }),
    }
}

/// The instances that one target reaches (see [`Delivery`] for the rules).
async fn receivers_of(
    transaction: &Transaction<'_>,
    target: &Target,
    ids: &ResolvedTarget,
) -> Result<Vec<i64>, StoreError> {
    // Each receiver's row is locked, and one that a concurrent commit has ended (completed or
    // cancelled: codes 2 and 4) left out: its waits or binding were read before that commit,
    // which removes what this delivery would write (the event would go to an inbox nobody
    // reads, reported delivered; a binding would keep the value for an instance that ended).
    // Under the lock, a commit that ends it comes after and removes it all. A failed one
    // keeps its bindings and inbox for a redrive, so it still receives; a purge locks the
    // rows it removes (skipping those a delivery holds), so the two never cross either: a
    // delivery that waited for a purge finds the row gone and leaves it out.
    let (value, attribute) = match (&target.correlation, ids.attribute) {
        (None, _) | (_, None) => {
            let rows = query(
                transaction,
                "SELECT w.instance FROM swf_wait w JOIN swf_instance i ON i.id = w.instance
                 WHERE w.name = $1 AND i.status NOT IN (2, 4)
                 ORDER BY w.instance FOR NO KEY UPDATE OF i",
                &[&ids.definition],
            )
            .await?;
            return rows.iter().map(|row| get(row, 0)).collect();
        }
        (Some((_, None)), _) => return Ok(Vec::new()),
        (Some((_, Some(value))), Some(attribute)) => (value, attribute),
    };
    execute(
        transaction,
        "SELECT pg_advisory_xact_lock(hashtextextended($2, $1))",
        &[&attribute, value],
    )
    .await?;
    let bound = query(
        transaction,
        "SELECT b.instance FROM swf_binding b JOIN swf_instance i ON i.id = b.instance
         WHERE b.attribute = $1 AND b.value = $2 AND i.status NOT IN (2, 4)
         ORDER BY b.instance FOR NO KEY UPDATE OF i",
        &[&attribute, value],
    )
    .await?;
    if !bound.is_empty() {
        return bound.iter().map(|row| get(row, 0)).collect();
    }
    for _ in 0..BINDING_RACES {
        let longest = query(
            transaction,
            "SELECT w.instance FROM swf_wait w
             WHERE w.name = $1 AND NOT EXISTS (
                 SELECT 1 FROM swf_binding b WHERE b.instance = w.instance AND b.attribute = $2)
             ORDER BY w.since, w.instance LIMIT 1",
            &[&ids.definition, &attribute],
        )
        .await?;
        let Some(row) = longest.first() else {
            return Ok(Vec::new());
        };
        let instance: i64 = get(row, 0)?;
        let live = query(
            transaction,
            "SELECT 1 FROM swf_instance WHERE id = $1 AND status NOT IN (2, 4) FOR NO KEY UPDATE",
            &[&instance],
        )
        .await?;
        if live.is_empty() {
            // It ended since its wait was read; the next look no longer sees that wait.
            continue;
        }
        // Another delivery may have bound it (to another value) since: then try the next one.
        let bound = execute(
            transaction,
            "INSERT INTO swf_binding (instance, attribute, value) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            &[&instance, &attribute, value],
        )
        .await?;
        if bound > 0 {
            return Ok(vec![instance]);
        }
    }
    Ok(Vec::new())
}

/// Puts the event in the receivers' inboxes, wakes those waiting for one of its definitions and
/// leases the woken to the delivery's [`WakeClaim`](crate::store::WakeClaim), if any.
async fn receive(
    transaction: &Transaction<'_>,
    seq: i64,
    receivers: Vec<i64>,
    definitions: &[i64],
    delivery: &Delivery,
    now: Timestamp,
) -> Result<Routed, StoreError> {
    let at = micros(now);
    let woken_rows = async {
        query(
            transaction,
            "UPDATE swf_instance i SET status = 0, updated_at = $3, nudged = true
             WHERE i.id = ANY($1) AND i.status = 1
               AND EXISTS (SELECT 1 FROM swf_wait w WHERE w.instance = i.id AND w.name = ANY($2))
             RETURNING i.id",
            &[&receivers, &definitions, &at],
        )
        .await
    };
    // `nudged` tells a commit in flight that its worker did not see this event: whatever the
    // instance waited for when the step began, the step may end waiting for this one.
    let others = pipeline(vec![
        Box::pin(async {
            execute(
            transaction,
            "INSERT INTO swf_inbox (instance, seq) SELECT unnest($1::bigint[]), $2 ON CONFLICT DO NOTHING",
            &[&receivers, &seq],
        ).await
        }),
        Box::pin(async {
            execute(
                transaction,
                "UPDATE swf_instance i SET nudged = true WHERE i.id = ANY($1) AND NOT i.nudged",
                &[&receivers],
            )
            .await
        }),
    ]);
    let (woken_rows, ()) = futures_util::future::try_join(woken_rows, others).await?;
    let mut woken = woken_rows
        .iter()
        .map(|row| get(row, 0))
        .collect::<Result<Vec<i64>, _>>()?;
    woken.sort_unstable();
    let claimed = match &delivery.claim {
        Some(claim) if !woken.is_empty() && claim.limit > 0 => {
            // The woken rows are locked by this transaction already: no other worker can
            // lease them in between. Leasing hands the inbox, this event included, to the
            // worker: not nudged.
            let (pinned, version) = super::instances::version_columns(&claim.versions);
            let leased = query(
                transaction,
                "WITH picked AS (
                    SELECT id FROM swf_instance
                    WHERE id = ANY($1) AND (lease_until IS NULL OR lease_until < $2)
                      AND (NOT $6 OR (SELECT d.version FROM swf_definition d
                                      WHERE d.id = swf_instance.definition)
                                     IS NOT DISTINCT FROM $7)
                    ORDER BY id LIMIT $3)
                 UPDATE swf_instance i SET lease_worker = $4, lease_until = $5, nudged = false
                 FROM picked WHERE i.id = picked.id
                 RETURNING i.id",
                &[
                    &woken,
                    &at,
                    &i64::try_from(claim.limit).unwrap_or(i64::MAX),
                    &claim.worker,
                    &deadline(now, claim.lease)?,
                    &pinned,
                    &version,
                ],
            )
            .await?;
            let mut ids = leased
                .iter()
                .map(|row| get(row, 0))
                .collect::<Result<Vec<i64>, _>>()?;
            ids.sort_unstable();
            let mut loaded = load(transaction, &ids).await?;
            loaded.sort_by_key(|claimed| claimed.record.id);
            loaded
        }
        _ => Vec::new(),
    };
    Ok(Routed::Delivered {
        seq: number(seq)?,
        instances: receivers
            .into_iter()
            .map(instance_id)
            .collect::<Result<_, _>>()?,
        woken: woken
            .into_iter()
            .map(instance_id)
            .collect::<Result<_, _>>()?,
        claimed,
    })
}

/// Adds the event to the oldest live group of `key` that lacks `this` (a new one when none
/// does); returns the group.
async fn join_group(
    transaction: &Transaction<'_>,
    workflow: i64,
    key: &str,
    this: i64,
    seq: i64,
    at: i64,
    expires_at: Option<i64>,
) -> Result<i64, StoreError> {
    execute(
        transaction,
        "SELECT pg_advisory_xact_lock(hashtextextended($2, $1))",
        &[&workflow, &key],
    )
    .await?;
    let open = query(
        transaction,
        "SELECT g.id FROM swf_start_group g
         WHERE g.workflow = $1 AND g.key = $2 AND (g.expires_at IS NULL OR g.expires_at >= $3)
           AND NOT EXISTS (SELECT 1 FROM swf_start_member m WHERE m.start_group = g.id AND m.name = $4)
         ORDER BY g.id LIMIT 1",
        &[&workflow, &key, &at, &this],
    )
    .await?;
    let group: i64 = match open.first() {
        Some(row) => {
            let group = get(row, 0)?;
            execute(
                transaction,
                "UPDATE swf_start_group SET expires_at = $2 WHERE id = $1",
                &[&group, &expires_at],
            )
            .await?;
            group
        }
        None => {
            let rows = query(
                transaction,
                "INSERT INTO swf_start_group (workflow, key, expires_at) VALUES ($1, $2, $3) RETURNING id",
                &[&workflow, &key, &expires_at],
            )
            .await?;
            match rows.first() {
                Some(row) => get(row, 0)?,
                None => {
                    return Err(crate::store::codec::unavailable(
                        "PostgreSQL: an insert returned no id",
                    ));
                }
            }
        }
    };
    execute(
        transaction,
        "INSERT INTO swf_start_member (start_group, name, seq) VALUES ($1, $2, $3)",
        &[&group, &this, &seq],
    )
    .await?;
    Ok(group)
}

/// When the group holds an event of every `needed` definition: removes it and returns its
/// events' seqs in arrival order.
async fn complete_group(
    transaction: &Transaction<'_>,
    group: i64,
    needed: &[i64],
) -> Result<Option<Vec<u64>>, StoreError> {
    let members = query(
        transaction,
        "SELECT name, seq FROM swf_start_member WHERE start_group = $1 ORDER BY seq",
        &[&group],
    )
    .await?
    .iter()
    .map(|row| Ok((get::<i64>(row, 0)?, get::<i64>(row, 1)?)))
    .collect::<Result<Vec<_>, StoreError>>()?;
    if !needed
        .iter()
        .all(|definition| members.iter().any(|(name, _)| name == definition))
    {
        return Ok(None);
    }
    pipeline(vec![
        Box::pin(async {
            execute(
                transaction,
                "DELETE FROM swf_start_member WHERE start_group = $1",
                &[&group],
            )
            .await
        }),
        Box::pin(async {
            execute(
                transaction,
                "DELETE FROM swf_start_group WHERE id = $1",
                &[&group],
            )
            .await
        }),
    ])
    .await?;
    members
        .into_iter()
        .map(|(_, seq)| number(seq))
        .collect::<Result<_, _>>()
        .map(Some)
}

/// Removes the groups of `workflow` whose last event is older than their timeout; returns their
/// events, oldest first.
pub(super) async fn expire_start_groups<C: GenericClient>(
    client: &C,
    workflow: i64,
    now: Timestamp,
) -> Result<Vec<StoredEvent>, StoreError> {
    let rows = query(
        client,
        "WITH expired AS (
            DELETE FROM swf_start_group WHERE workflow = $1 AND expires_at IS NOT NULL AND expires_at < $2
            RETURNING id),
         members AS (
            DELETE FROM swf_start_member m USING expired WHERE m.start_group = expired.id RETURNING m.seq)
         SELECT e.seq, e.body, e.received_at FROM members JOIN swf_event e ON e.seq = members.seq
         ORDER BY e.seq",
        &[&workflow, &micros(now)],
    )
    .await?;
    rows.iter()
        .map(|row| stored_event(get(row, 0)?, get(row, 1)?, get(row, 2)?))
        .collect()
}
