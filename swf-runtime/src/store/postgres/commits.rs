//! Commits: transitions fenced by revision and lease, written in bulk.
//!
//! A batch is written with a fixed number of statements whatever its size: one `UPDATE ... FROM
//! unnest(...)` fences and updates every instance at once (an instance that moved on or that
//! another worker holds is not updated, which is its whole conflict: nothing else of it is
//! written), then one statement per table writes the rest of the committed transitions, all
//! pipelined. A batch naming an instance twice is written in rounds, one per occurrence, in order.

use std::collections::{HashMap, HashSet};

use deadpool_postgres::{GenericClient, Transaction};
use jiff::Timestamp;

use super::Core;
use super::instances::{Pending, Resolved, insert_instance, pipeline, resolve, stored_event};
use super::sql::{execute, get, query};
use crate::store::codec::{
    CORRELATION_ATTRIBUTE, EVENT_DEFINITION, KEPT_HISTORY_KINDS, clears_inbox_and_bindings,
    conflict_found, encode_event, history_kind_code, id_column, json_text, micros, number,
    number_column, status, status_code, strings_text, trimmed_through,
};
use crate::store::{Commit, CommitResult, MAX_TRIMMED_PER_COMMIT, StoreError, StoredEvent};

/// A commit with its instance id, time, and names as ids (resolved before the transaction).
pub(super) struct Prepared<'a> {
    commit: &'a Commit,
    id: i64,
    now: Timestamp,
    /// `None` when no such instance exists (a conflict).
    names: Option<Names>,
}

struct Names {
    /// The definition the instance runs from now on, when it changes.
    definition: Option<i64>,
    waits: Vec<i64>,
    attributes: Vec<i64>,
    children: Vec<Resolved>,
}

impl Core {
    /// Reads what commits need before their transaction: their instances' workflows, and the ids
    /// of the names they use.
    pub(super) async fn prepare_commits<'a, C: GenericClient>(
        &self,
        client: &C,
        commits: &'a [(Commit, Timestamp)],
    ) -> Result<Vec<Prepared<'a>>, StoreError> {
        let ids = commits
            .iter()
            .map(|(commit, _)| id_column(commit.instance))
            .collect::<Result<Vec<_>, _>>()?;
        let workflows: HashMap<i64, i64> = query(
            client,
            "SELECT id, workflow FROM swf_instance WHERE id = ANY($1)",
            &[&ids],
        )
        .await?
        .iter()
        .map(|row| Ok((get(row, 0)?, get(row, 1)?)))
        .collect::<Result<_, StoreError>>()?;
        let mut prepared = Vec::with_capacity(commits.len());
        for ((commit, now), id) in commits.iter().zip(ids) {
            let now = *now;
            let names = match workflows.get(&id) {
                Some(&workflow) => Some(self.commit_names(client, workflow, commit, now).await?),
                None => None,
            };
            prepared.push(Prepared {
                commit,
                id,
                now,
                names,
            });
        }
        Ok(prepared)
    }

    async fn commit_names<C: GenericClient>(
        &self,
        client: &C,
        workflow: i64,
        commit: &Commit,
        now: Timestamp,
    ) -> Result<Names, StoreError> {
        let waits: Vec<&str> = commit.waits.iter().map(String::as_str).collect();
        let waits = self
            .names
            .names(client, workflow, EVENT_DEFINITION, &waits)
            .await?;
        let attributes: Vec<&str> = commit
            .bind
            .iter()
            .map(|(attribute, _)| attribute.as_str())
            .collect();
        let attributes = self
            .names
            .names(client, workflow, CORRELATION_ATTRIBUTE, &attributes)
            .await?;
        let mut children = Vec::with_capacity(commit.children.len());
        for child in &commit.children {
            children.push(resolve(&self.names, client, child, now).await?);
        }
        let definition = match &commit.definition {
            Some(definition) => Some(self.names.definition(client, definition, now).await?.0),
            None => None,
        };
        Ok(Names {
            definition,
            waits,
            attributes,
            children,
        })
    }
}

/// Commits prepared transitions in `transaction`; results in the order of `prepared`.
pub(super) async fn commit_prepared(
    transaction: &Transaction<'_>,
    prepared: &[Prepared<'_>],
) -> Result<Vec<CommitResult>, StoreError> {
    let mut results: Vec<Option<CommitResult>> = vec![None; prepared.len()];
    let mut remaining: Vec<usize> = (0..prepared.len()).collect();
    while !remaining.is_empty() {
        // Each round takes the first occurrence of each instance still to commit.
        let mut seen = HashSet::new();
        let (round, later): (Vec<usize>, Vec<usize>) = remaining
            .iter()
            .partition(|&&index| seen.insert(prepared[index].id));
        for (index, result) in commit_round(transaction, prepared, &round).await? {
            results[index] = Some(result);
        }
        remaining = later;
    }
    results
        .into_iter()
        .map(|result| {
            result.ok_or_else(|| crate::store::codec::unavailable("a commit got no result"))
        })
        .collect()
}

/// Commits transitions of distinct instances.
async fn commit_round(
    transaction: &Transaction<'_>,
    prepared: &[Prepared<'_>],
    round: &[usize],
) -> Result<Vec<(usize, CommitResult)>, StoreError> {
    let fenced = fence(transaction, prepared, round).await?;
    let committed: Vec<usize> = round
        .iter()
        .copied()
        .filter(|index| fenced.contains_key(&prepared[*index].id))
        .collect();
    let conflicted: Vec<i64> = round
        .iter()
        .map(|index| prepared[*index].id)
        .filter(|id| !fenced.contains_key(id))
        .collect();
    let (found, mut leftovers, ()) = futures_util::future::try_join3(
        conflicts(transaction, &conflicted),
        end(transaction, prepared, &committed),
        write(transaction, prepared, &committed, &fenced),
    )
    .await?;
    let mut results = Vec::with_capacity(round.len());
    for &index in round {
        let entry = &prepared[index];
        let Some(&revision) = fenced.get(&entry.id) else {
            let found = found
                .get(&entry.id)
                .cloned()
                .unwrap_or_else(|| format!("no instance {}", entry.commit.instance));
            results.push((index, CommitResult::Conflict { found }));
            continue;
        };
        if let Some(definition) = entry.names.as_ref().and_then(|names| names.definition) {
            execute(
                transaction,
                "UPDATE swf_instance SET definition = $2 WHERE id = $1",
                &[&entry.id, &definition],
            )
            .await?;
        }
        let mut children = Vec::with_capacity(entry.commit.children.len());
        if let Some(names) = &entry.names {
            for (child, resolved) in entry.commit.children.iter().zip(&names.children) {
                let mut child = child.clone();
                child.parent = child.parent.or(Some(entry.commit.instance));
                children
                    .push(insert_instance(transaction, &child, resolved, &[], entry.now).await?);
            }
        }
        results.push((
            index,
            CommitResult::Committed {
                revision: number(revision)?,
                children,
                leftovers: leftovers.remove(&entry.id).unwrap_or_default(),
            },
        ));
    }
    Ok(results)
}

/// Updates every instance still at its commit's revision and leased to its worker; returns
/// their new revisions. A waiting status becomes runnable when an event the instance waited for
/// arrived after its claim (`nudged`): the worker could not see it.
async fn fence(
    transaction: &Transaction<'_>,
    prepared: &[Prepared<'_>],
    round: &[usize],
) -> Result<HashMap<i64, i64>, StoreError> {
    let mut ids = Vec::with_capacity(round.len());
    let mut revisions = Vec::with_capacity(round.len());
    let mut workers = Vec::with_capacity(round.len());
    let mut statuses = Vec::with_capacity(round.len());
    let mut wakes = Vec::with_capacity(round.len());
    let mut lease_workers = Vec::with_capacity(round.len());
    let mut lease_untils = Vec::with_capacity(round.len());
    let mut ended = Vec::with_capacity(round.len());
    let mut ats = Vec::with_capacity(round.len());
    let mut positions = Vec::with_capacity(round.len());
    let mut states = Vec::with_capacity(round.len());
    let mut outcomes = Vec::with_capacity(round.len());
    for &index in round {
        let Prepared {
            commit, id, now, ..
        } = &prepared[index];
        let has_ended = commit.status.has_ended();
        let lease = commit.lease_until.filter(|_| !has_ended);
        ids.push(*id);
        revisions.push(number_column(commit.revision)?);
        workers.push(commit.worker.as_str());
        statuses.push(status_code(commit.status));
        wakes.push(commit.wake_at.filter(|_| !has_ended).map(micros));
        lease_workers.push(lease.map(|_| commit.worker.as_str()));
        lease_untils.push(lease.map(micros));
        ended.push(has_ended);
        ats.push(micros(*now));
        positions.push(commit.position.as_str());
        states.push(commit.state.as_str());
        outcomes.push(commit.outcome.as_ref().map(json_text));
    }
    let rows = query(
        transaction,
        "UPDATE swf_instance i SET
            status = CASE WHEN c.status = 1 AND i.nudged THEN 0::smallint ELSE c.status END,
            revision = i.revision + 1, wake_at = c.wake_at, lease_worker = c.lease_worker,
            lease_until = c.lease_until, nudged = i.nudged AND NOT c.ended, updated_at = c.at,
            position = c.position, state = c.state, outcome = c.outcome
         FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::smallint[], $5::bigint[],
                     $6::text[], $7::bigint[], $8::bool[], $9::bigint[], $10::text[], $11::text[],
                     $12::text[])
            AS c(id, revision, worker, status, wake_at, lease_worker, lease_until, ended, at,
                 position, state, outcome)
         WHERE i.id = c.id AND i.revision = c.revision AND i.lease_worker = c.worker
         RETURNING i.id, i.revision",
        &[
            &ids,
            &revisions,
            &workers,
            &statuses,
            &wakes,
            &lease_workers,
            &lease_untils,
            &ended,
            &ats,
            &positions,
            &states,
            &outcomes,
        ],
    )
    .await?;
    rows.iter()
        .map(|row| Ok((get(row, 0)?, get(row, 1)?)))
        .collect()
}

/// What each fenced-off instance is at now.
async fn conflicts(
    transaction: &Transaction<'_>,
    ids: &[i64],
) -> Result<HashMap<i64, String>, StoreError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = query(
        transaction,
        "SELECT id, revision, lease_worker, status FROM swf_instance WHERE id = ANY($1)",
        &[&ids],
    )
    .await?;
    rows.iter()
        .map(|row| {
            let worker: Option<String> = get(row, 2)?;
            let found = conflict_found(
                get(row, 1)?,
                worker.as_deref(),
                status(get::<i16>(row, 3)?.into())?,
            );
            Ok((get(row, 0)?, found))
        })
        .collect()
}

/// Empties the inboxes of the instances that completed or were cancelled; returns the events
/// they never consumed. (A failed instance keeps its inbox for a redrive.)
async fn end(
    transaction: &Transaction<'_>,
    prepared: &[Prepared<'_>],
    committed: &[usize],
) -> Result<HashMap<i64, Vec<StoredEvent>>, StoreError> {
    let mut ended = Vec::new();
    let (mut consumed_by, mut consumed) = (Vec::new(), Vec::new());
    for &index in committed {
        let entry = &prepared[index];
        if !clears_inbox_and_bindings(entry.commit.status) {
            continue;
        }
        ended.push(entry.id);
        for seq in &entry.commit.consumed {
            consumed_by.push(entry.id);
            consumed.push(number_column(*seq)?);
        }
    }
    if ended.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = query(
        transaction,
        "WITH gone AS (DELETE FROM swf_inbox WHERE instance = ANY($1) RETURNING instance, seq)
         SELECT gone.instance, e.seq, e.body, e.received_at FROM gone
         JOIN swf_event e ON e.seq = gone.seq
         WHERE NOT EXISTS (
             SELECT 1 FROM unnest($2::bigint[], $3::bigint[]) AS c(instance, seq)
             WHERE c.instance = gone.instance AND c.seq = gone.seq)
         ORDER BY gone.instance, e.seq",
        &[&ended, &consumed_by, &consumed],
    )
    .await?;
    let mut leftovers: HashMap<i64, Vec<StoredEvent>> = HashMap::new();
    for row in &rows {
        let event = stored_event(get(row, 1)?, get(row, 2)?, get(row, 3)?)?;
        leftovers.entry(get(row, 0)?).or_default().push(event);
    }
    Ok(leftovers)
}

/// Columns of many rows, one vector per column.
#[derive(Default)]
struct Rows {
    /// Instances that ended: their waits go.
    ended: Vec<i64>,
    /// Those of them that completed or were cancelled: their bindings go too.
    unbound: Vec<i64>,
    live: Vec<i64>,
    consumed: (Vec<i64>, Vec<i64>),
    waits: (Vec<i64>, Vec<i64>, Vec<i64>),
    bindings: (Vec<i64>, Vec<i64>, Vec<String>),
    outbox: (Vec<i64>, Vec<String>),
    history: HistoryRows,
    /// Instances and the last revision of the history entries they drop.
    trimmed: (Vec<i64>, Vec<i64>),
}

#[derive(Default)]
struct HistoryRows {
    instance: Vec<i64>,
    revision: Vec<i64>,
    at: Vec<i64>,
    kind: Vec<i16>,
    from: Vec<String>,
    to: Vec<String>,
    consumed: Vec<String>,
    produced: Vec<String>,
    detail: Vec<String>,
}

/// Writes the rest of the committed transitions: one statement per table, pipelined.
async fn write(
    transaction: &Transaction<'_>,
    prepared: &[Prepared<'_>],
    committed: &[usize],
    revisions: &HashMap<i64, i64>,
) -> Result<(), StoreError> {
    let rows = rows(prepared, committed, revisions)?;
    let mut statements: Vec<Pending<'_>> = Vec::new();
    let history = &rows.history;
    statements.push(Box::pin(async {
        execute(
            transaction,
            "INSERT INTO swf_history (instance, revision, at, kind, from_position, to_position,
                consumed, produced, detail)
             SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::smallint[],
                                  $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])",
            &[
                &history.instance,
                &history.revision,
                &history.at,
                &history.kind,
                &history.from,
                &history.to,
                &history.consumed,
                &history.produced,
                &history.detail,
            ],
        )
        .await
    }));
    if !rows.trimmed.0.is_empty() {
        // A range of the primary key, at most `MAX_TRIMMED_PER_COMMIT` revisions from each
        // instance's oldest removable entry: half the planning time of a `LATERAL (... LIMIT
        // n)` join (0.15 against 0.33 ms), which every commit pays.
        statements.push(Box::pin(async {
            let kept = KEPT_HISTORY_KINDS.map(history_kind_code).to_vec();
            let at_most = number_column(MAX_TRIMMED_PER_COMMIT)?;
            execute(
                transaction,
                "DELETE FROM swf_history h
                 USING unnest($1::bigint[], $2::bigint[]) AS t(instance, through)
                 WHERE h.instance = t.instance AND h.revision BETWEEN 1 AND t.through
                   AND h.kind <> ALL($3::smallint[])
                   AND h.revision < $4 + (
                       SELECT min(revision) FROM swf_history m
                       WHERE m.instance = t.instance AND m.revision >= 1
                         AND m.kind <> ALL($3::smallint[]))",
                &[&rows.trimmed.0, &rows.trimmed.1, &kept, &at_most],
            )
            .await
        }));
    }
    if !rows.outbox.0.is_empty() {
        statements.push(Box::pin(async {
            execute(
                transaction,
                "INSERT INTO swf_outbox (instance, body)
                 SELECT instance, body FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY
                    AS p(instance, body, n)
                 ORDER BY n",
                &[&rows.outbox.0, &rows.outbox.1],
            )
            .await
        }));
    }
    if !rows.ended.is_empty() {
        statements.push(Box::pin(async {
            execute(
                transaction,
                "DELETE FROM swf_wait WHERE instance = ANY($1)",
                &[&rows.ended],
            )
            .await
        }));
    }
    if !rows.unbound.is_empty() {
        statements.push(Box::pin(async {
            execute(
                transaction,
                "DELETE FROM swf_binding WHERE instance = ANY($1)",
                &[&rows.unbound],
            )
            .await
        }));
    }
    if !rows.consumed.0.is_empty() {
        statements.push(Box::pin(async {
            execute(
                transaction,
                "DELETE FROM swf_inbox b USING unnest($1::bigint[], $2::bigint[]) AS c(instance, seq)
                 WHERE b.instance = c.instance AND b.seq = c.seq",
                &[&rows.consumed.0, &rows.consumed.1],
            )
            .await
        }));
    }
    if !rows.live.is_empty() {
        // The waits are replaced; one it already had keeps its age (the insert leaves it alone).
        statements.push(Box::pin(async {
            execute(
                transaction,
                "DELETE FROM swf_wait w WHERE w.instance = ANY($1) AND NOT EXISTS (
                     SELECT 1 FROM unnest($2::bigint[], $3::bigint[]) AS n(instance, name)
                     WHERE n.instance = w.instance AND n.name = w.name)",
                &[&rows.live, &rows.waits.0, &rows.waits.1],
            )
            .await
        }));
    }
    if !rows.waits.0.is_empty() {
        statements.push(Box::pin(async {
            execute(
                transaction,
                "INSERT INTO swf_wait (instance, name, since)
                 SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[])
                 ON CONFLICT DO NOTHING",
                &[&rows.waits.0, &rows.waits.1, &rows.waits.2],
            )
            .await
        }));
    }
    if !rows.bindings.0.is_empty() {
        statements.push(Box::pin(async {
            execute(
                transaction,
                "INSERT INTO swf_binding (instance, attribute, value)
                 SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[]) ON CONFLICT DO NOTHING",
                &[&rows.bindings.0, &rows.bindings.1, &rows.bindings.2],
            )
            .await
        }));
    }
    pipeline(statements).await
}

/// The rows the committed transitions write, column by column.
fn rows(
    prepared: &[Prepared<'_>],
    committed: &[usize],
    revisions: &HashMap<i64, i64>,
) -> Result<Rows, StoreError> {
    let mut rows = Rows::default();
    for &index in committed {
        let Prepared {
            commit,
            id,
            now,
            names,
        } = &prepared[index];
        let id = *id;
        for event in &commit.produced {
            rows.outbox.0.push(id);
            rows.outbox.1.push(encode_event(event)?.body);
        }
        let revision = revisions.get(&id).copied().unwrap_or_default();
        if let Some(through) = commit.trim_history_through {
            rows.trimmed.0.push(id);
            rows.trimmed.1.push(trimmed_through(through, revision));
        }
        let history = &mut rows.history;
        history.instance.push(id);
        history.revision.push(revision);
        history.at.push(micros(*now));
        history.kind.push(history_kind_code(commit.history.kind));
        history.from.push(commit.history.from.clone());
        history.to.push(commit.history.to.clone());
        history
            .consumed
            .push(strings_text(&commit.history.consumed));
        history
            .produced
            .push(strings_text(&commit.history.produced));
        history.detail.push(json_text(&commit.history.detail));
        if commit.status.has_ended() {
            // A failed step is not committed: its `consumed` stay in the inbox for the redrive
            // that runs it again.
            rows.ended.push(id);
            if clears_inbox_and_bindings(commit.status) {
                rows.unbound.push(id);
            }
            continue;
        }
        rows.live.push(id);
        for seq in &commit.consumed {
            rows.consumed.0.push(id);
            rows.consumed.1.push(number_column(*seq)?);
        }
        let Some(names) = names else {
            continue;
        };
        for wait in &names.waits {
            rows.waits.0.push(id);
            rows.waits.1.push(*wait);
            rows.waits.2.push(micros(*now));
        }
        for (attribute, (_, value)) in names.attributes.iter().zip(&commit.bind) {
            rows.bindings.0.push(id);
            rows.bindings.1.push(*attribute);
            rows.bindings.2.push(value.clone());
        }
    }
    Ok(rows)
}
