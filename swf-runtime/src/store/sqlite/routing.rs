//! Incoming events: deduplication, routing to instances, start plans and start groups.

use std::collections::BTreeSet;

use jiff::Timestamp;
use rusqlite::OptionalExtension;

use super::instances::{Stored, hand_over, insert_instance, read_record, stored_event, waits};
use super::names::{find_workflow, name_id, workflow_id};
use super::session::Session;
use crate::store::codec::{
    CORRELATION_ATTRIBUTE, EVENT_DEFINITION, EncodedEvent, deadline, incompatible, instance_id,
    micros, number, status, status_code, timestamp,
};
use crate::store::{Delivery, Lease, Routed, StartPlan, Status, StoreError, StoredEvent, Target};

/// Stores and routes each delivery (its event encoded in `encoded`), in order.
pub(super) fn deliver_all(
    connection: &Session,
    deliveries: &[Delivery],
    encoded: &[EncodedEvent],
    now: Timestamp,
) -> Result<Vec<Routed>, StoreError> {
    deliveries
        .iter()
        .zip(encoded)
        .map(|(delivery, encoded)| deliver_one(connection, delivery, encoded, now))
        .collect()
}

fn deliver_one(
    connection: &Session,
    delivery: &Delivery,
    encoded: &EncodedEvent,
    now: Timestamp,
) -> Result<Routed, StoreError> {
    let workflow = workflow_id(connection, &delivery.workflow)?;
    let at = micros(now);
    // Inserting first and looking only on a conflict costs one statement per new event, the
    // common case, instead of two. (The rowid of the insert rather than `RETURNING`, which
    // SQLite buffers in a temporary b-tree.)
    let inserted = connection
        .prepare_cached(
            "INSERT INTO swf_event (workflow, source, event_id, received_at, body)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
        )?
        .execute((workflow, &encoded.source, &encoded.id, at, &encoded.body))?;
    let seq = connection.last_insert_rowid();
    if inserted == 0 {
        let seq: i64 = connection
            .prepare_cached(
                "SELECT seq FROM swf_event WHERE workflow = ?1 AND source = ?2 AND event_id = ?3",
            )?
            .query_row((workflow, &encoded.source, &encoded.id), |row| row.get(0))?;
        return Ok(Routed::Duplicate { seq: number(seq)? });
    }
    let mut definitions = Vec::with_capacity(delivery.targets.len());
    let mut receivers = BTreeSet::new();
    for target in &delivery.targets {
        let definition = name_id(connection, workflow, EVENT_DEFINITION, &target.definition)?;
        definitions.push(definition);
        receivers.extend(receivers_of(connection, workflow, definition, target)?);
    }
    if !receivers.is_empty() {
        return receive(connection, seq, &receivers, &definitions, delivery, now);
    }
    let unsigned = number(seq)?;
    match &delivery.start {
        Some(StartPlan::Now(instance)) => Ok(Routed::Started {
            seq: unsigned,
            instance: insert_instance(connection, instance, &[unsigned], now)?,
        }),
        Some(StartPlan::Group {
            key,
            this,
            needed,
            timeout,
            instance,
        }) => {
            let expires_at = timeout.map(|timeout| deadline(now, timeout)).transpose()?;
            let group = join_group(connection, workflow, key, this, seq, at, expires_at)?;
            match complete_group(connection, workflow, group, needed)? {
                Some(seqs) => Ok(Routed::Started {
                    seq: unsigned,
                    instance: insert_instance(connection, instance, &seqs, now)?,
                }),
                None => Ok(Routed::Grouped { seq: unsigned }),
            }
        }
        None => Ok(Routed::Unmatched {
            seq: unsigned,
            reason: delivery.unmatched.clone(),
        }),
    }
}

/// The instances that one target reaches (see [`Delivery`] for the rules).
fn receivers_of(
    connection: &Session,
    workflow: i64,
    definition: i64,
    target: &Target,
) -> Result<Vec<i64>, StoreError> {
    match &target.correlation {
        None => Ok(connection
            .prepare_cached("SELECT instance FROM swf_wait WHERE name = ?1")?
            .query_map([definition], |row| row.get(0))?
            .collect::<Result<_, _>>()?),
        Some((_, None)) => Ok(Vec::new()),
        Some((attribute, Some(value))) => {
            let attribute = name_id(connection, workflow, CORRELATION_ATTRIBUTE, attribute)?;
            let bound: Vec<i64> = connection
                .prepare_cached(
                    "SELECT instance FROM swf_binding WHERE attribute = ?1 AND value = ?2",
                )?
                .query_map((attribute, value), |row| row.get(0))?
                .collect::<Result<_, _>>()?;
            if !bound.is_empty() {
                return Ok(bound);
            }
            let longest: Option<i64> = connection
                .prepare_cached(
                    "SELECT w.instance FROM swf_wait w
                     WHERE w.name = ?1 AND NOT EXISTS (
                         SELECT 1 FROM swf_binding b WHERE b.instance = w.instance AND b.attribute = ?2)
                     ORDER BY w.since, w.instance LIMIT 1",
                )?
                .query_row((definition, attribute), |row| row.get(0))
                .optional()?;
            if let Some(instance) = longest {
                connection
                    .prepare_cached(
                        "INSERT INTO swf_binding (instance, attribute, value) VALUES (?1, ?2, ?3)",
                    )?
                    .execute((instance, attribute, value))?;
            }
            Ok(longest.into_iter().collect())
        }
    }
}

/// Puts the event in the receivers' inboxes, wakes those waiting for one of its definitions and
/// leases the woken to the delivery's [`WakeClaim`](crate::store::WakeClaim), if any: one update
/// of each receiver's row.
fn receive(
    connection: &Session,
    seq: i64,
    receivers: &BTreeSet<i64>,
    definitions: &[i64],
    delivery: &Delivery,
    now: Timestamp,
) -> Result<Routed, StoreError> {
    let at = micros(now);
    let mut instances = Vec::with_capacity(receivers.len());
    let mut woken = Vec::new();
    let mut claimed = Vec::new();
    let mut room = delivery.claim.as_ref().map_or(0, |claim| claim.limit);
    let lease_until = delivery
        .claim
        .as_ref()
        .map(|claim| deadline(now, claim.lease))
        .transpose()?;
    for &receiver in receivers {
        connection
            .prepare_cached("INSERT OR IGNORE INTO swf_inbox (instance, seq) VALUES (?1, ?2)")?
            .execute((receiver, seq))?;
        let id = instance_id(receiver)?;
        instances.push(id);
        let waits = waits(connection, receiver)?;
        let waits_for_it = waits.iter().any(|wait| definitions.contains(wait));
        // While this delivery may lease what it wakes, the whole row is read at once: the
        // record it hands over is that row with the lease.
        let record = match (&delivery.claim, lease_until) {
            (Some(_), Some(_)) if room > 0 && waits_for_it => {
                Some(read_record(connection, receiver)?.ok_or_else(|| {
                    incompatible(format!("instance {id} has waits or bindings but no row"))
                })?)
            }
            _ => None,
        };
        let (status_now, lease) = match &record {
            Some(record) => (
                record.status,
                record.lease.as_ref().map(|lease| micros(lease.until)),
            ),
            None => {
                let (code, lease): (i64, Option<i64>) = connection
                    .prepare_cached("SELECT status, lease_until FROM swf_instance WHERE id = ?1")?
                    .query_row([receiver], |row| Ok((row.get(0)?, row.get(1)?)))?;
                (status(code)?, lease)
            }
        };
        let wakes = status_now == Status::Waiting && waits_for_it;
        let free = lease.is_none_or(|until| until < at);
        match (&delivery.claim, lease_until, record) {
            (Some(claim), Some(until), Some(mut record))
                if wakes && free && claim.versions.admit(record.definition.version.as_deref()) =>
            {
                // Leasing hands the inbox, this event included, to the worker: not nudged.
                connection
                    .prepare_cached(
                        "UPDATE swf_instance SET status = ?2, updated_at = ?3, nudged = 0,
                            lease_worker = ?4, lease_until = ?5
                         WHERE id = ?1",
                    )?
                    .execute((
                        receiver,
                        status_code(Status::Runnable),
                        at,
                        &claim.worker,
                        until,
                    ))?;
                room -= 1;
                record.status = Status::Runnable;
                record.updated_at = timestamp(at)?;
                record.lease = Some(Lease {
                    worker: claim.worker.clone(),
                    until: timestamp(until)?,
                });
                let stored = Stored {
                    seq,
                    event: &delivery.event,
                };
                claimed.push(hand_over(connection, record, &waits, Some(&stored))?);
            }
            // `nudged` tells a commit in flight that its worker did not see this event:
            // whatever the instance waited for when the step began, the step may end waiting
            // for this one.
            _ if wakes => {
                connection
                    .prepare_cached(
                        "UPDATE swf_instance SET status = ?2, updated_at = ?3, nudged = 1
                         WHERE id = ?1",
                    )?
                    .execute((receiver, status_code(Status::Runnable), at))?;
            }
            _ => {
                connection
                    .prepare_cached("UPDATE swf_instance SET nudged = 1 WHERE id = ?1")?
                    .execute([receiver])?;
            }
        }
        if wakes {
            woken.push(id);
        }
    }
    Ok(Routed::Delivered {
        seq: number(seq)?,
        instances,
        woken,
        claimed,
    })
}

/// Adds the event to the oldest live group of `key` that lacks `this` (a new one when none does);
/// returns the group.
fn join_group(
    connection: &Session,
    workflow: i64,
    key: &str,
    this: &str,
    seq: i64,
    at: i64,
    expires_at: Option<i64>,
) -> Result<i64, StoreError> {
    let this = name_id(connection, workflow, EVENT_DEFINITION, this)?;
    let open: Option<i64> = connection
        .prepare_cached(
            "SELECT g.id FROM swf_start_group g
             WHERE g.workflow = ?1 AND g.key = ?2 AND (g.expires_at IS NULL OR g.expires_at >= ?3)
               AND NOT EXISTS (SELECT 1 FROM swf_start_member m WHERE m.start_group = g.id AND m.name = ?4)
             ORDER BY g.id LIMIT 1",
        )?
        .query_row((workflow, key, at, this), |row| row.get(0))
        .optional()?;
    let group = match open {
        Some(group) => {
            connection
                .prepare_cached("UPDATE swf_start_group SET expires_at = ?2 WHERE id = ?1")?
                .execute((group, expires_at))?;
            group
        }
        None => connection
            .prepare_cached(
                "INSERT INTO swf_start_group (workflow, key, expires_at) VALUES (?1, ?2, ?3) RETURNING id",
            )?
            .query_row((workflow, key, expires_at), |row| row.get(0))?,
    };
    connection
        .prepare_cached(
            "INSERT INTO swf_start_member (start_group, name, seq) VALUES (?1, ?2, ?3)",
        )?
        .execute((group, this, seq))?;
    Ok(group)
}

/// When the group holds an event of every `needed` definition: removes it and returns its
/// events' seqs in arrival order.
fn complete_group(
    connection: &Session,
    workflow: i64,
    group: i64,
    needed: &[String],
) -> Result<Option<Vec<u64>>, StoreError> {
    let members: Vec<(i64, i64)> = connection
        .prepare_cached(
            "SELECT name, seq FROM swf_start_member WHERE start_group = ?1 ORDER BY seq",
        )?
        .query_map([group], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for definition in needed {
        let definition = name_id(connection, workflow, EVENT_DEFINITION, definition)?;
        if !members.iter().any(|(name, _)| *name == definition) {
            return Ok(None);
        }
    }
    remove_group(connection, group)?;
    members
        .into_iter()
        .map(|(_, seq)| number(seq))
        .collect::<Result<_, _>>()
        .map(Some)
}

fn remove_group(connection: &Session, group: i64) -> Result<(), StoreError> {
    connection
        .prepare_cached("DELETE FROM swf_start_member WHERE start_group = ?1")?
        .execute([group])?;
    connection
        .prepare_cached("DELETE FROM swf_start_group WHERE id = ?1")?
        .execute([group])?;
    Ok(())
}

/// Removes the groups of `workflow` whose last event is older than their timeout; returns their
/// events, oldest first.
pub(super) fn expire_start_groups(
    connection: &Session,
    workflow: &str,
    now: Timestamp,
) -> Result<Vec<StoredEvent>, StoreError> {
    let Some(workflow) = find_workflow(connection, workflow)? else {
        return Ok(Vec::new());
    };
    let groups: Vec<i64> = connection
        .prepare_cached(
            "SELECT id FROM swf_start_group
             WHERE workflow = ?1 AND expires_at IS NOT NULL AND expires_at < ?2 ORDER BY id",
        )?
        .query_map((workflow, micros(now)), |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    let mut events = Vec::new();
    for group in groups {
        let mut statement = connection.prepare_cached(
            "SELECT e.seq, e.body, e.received_at FROM swf_start_member m
             JOIN swf_event e ON e.seq = m.seq WHERE m.start_group = ?1 ORDER BY m.seq",
        )?;
        let rows = statement.query_map([group], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, i64>(2)?,
            ))
        })?;
        for row in rows {
            let (seq, body, received_at) = row?;
            events.push(stored_event(seq, &body, received_at)?);
        }
        remove_group(connection, group)?;
    }
    events.sort_by_key(|event| event.seq);
    Ok(events)
}
