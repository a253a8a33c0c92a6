//! Commits: each transition fenced by its revision and lease, then written whole.
//!
//! The fencing `UPDATE` comes first and writes nothing when the instance moved on or another
//! worker holds it, so a conflict needs no savepoint. The rest of a transition goes to the server
//! pipelined: one round trip for all of its statements.

use std::collections::HashMap;

use deadpool_postgres::{GenericClient, Transaction};
use jiff::Timestamp;

use super::PostgresStore;
use super::instances::{Pending, Resolved, insert_instance, pipeline, resolve, stored_event};
use super::sql::{execute, get, query, query_opt};
use crate::store::codec::{
    CORRELATION_ATTRIBUTE, EVENT_DEFINITION, conflict_found, encode_event, history_kind_code,
    id_column, json_text, micros, number, number_column, status, status_code, strings_text,
};
use crate::store::{Commit, CommitResult, StoreError};

/// A commit's names as ids, resolved before the transaction.
struct ResolvedCommit {
    waits: Vec<i64>,
    attributes: Vec<i64>,
    children: Vec<Resolved>,
}

impl PostgresStore {
    /// Commits each transition on its own terms, in one transaction.
    pub(super) async fn commit_all(
        &self,
        commits: Vec<Commit>,
        now: Timestamp,
    ) -> Result<Vec<CommitResult>, StoreError> {
        let mut client = self.client().await?;
        let ids = commits
            .iter()
            .map(|commit| id_column(commit.instance))
            .collect::<Result<Vec<_>, _>>()?;
        let workflows: HashMap<i64, i64> = query(
            &client,
            "SELECT id, workflow FROM swf_instance WHERE id = ANY($1)",
            &[&ids],
        )
        .await?
        .iter()
        .map(|row| Ok((get(row, 0)?, get(row, 1)?)))
        .collect::<Result<_, StoreError>>()?;
        let mut resolved = Vec::with_capacity(commits.len());
        for (commit, id) in commits.iter().zip(&ids) {
            resolved.push(match workflows.get(id) {
                Some(&workflow) => Some(self.resolve_commit(&client, workflow, commit, now).await?),
                None => None,
            });
        }
        let transaction = client.transaction().await?;
        let mut results = Vec::with_capacity(commits.len());
        for ((commit, id), resolved) in commits.iter().zip(ids).zip(&resolved) {
            results.push(match resolved {
                Some(resolved) => commit_one(&transaction, commit, id, resolved, now).await?,
                None => CommitResult::Conflict {
                    found: format!("no instance {}", commit.instance),
                },
            });
        }
        transaction.commit().await?;
        Ok(results)
    }

    async fn resolve_commit<C: GenericClient>(
        &self,
        client: &C,
        workflow: i64,
        commit: &Commit,
        now: Timestamp,
    ) -> Result<ResolvedCommit, StoreError> {
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
        Ok(ResolvedCommit {
            waits,
            attributes,
            children,
        })
    }
}

async fn commit_one(
    transaction: &Transaction<'_>,
    commit: &Commit,
    id: i64,
    resolved: &ResolvedCommit,
    now: Timestamp,
) -> Result<CommitResult, StoreError> {
    let expected = number_column(commit.revision)?;
    let ended = commit.status.has_ended();
    let (lease_worker, lease_until) = match commit.lease_until {
        Some(until) if !ended => (Some(commit.worker.as_str()), Some(micros(until))),
        _ => (None, None),
    };
    let at = micros(now);
    // A waiting status becomes runnable when an event it waited for arrived after the claim
    // (`nudged`): the worker could not see it.
    let fenced = query_opt(
        transaction,
        "UPDATE swf_instance SET
            status = CASE WHEN $2::smallint = 1 AND nudged THEN 0::smallint ELSE $2::smallint END,
            revision = revision + 1, wake_at = $3, lease_worker = $4, lease_until = $5,
            nudged = nudged AND NOT $6, updated_at = $7, position = $8, state = $9, outcome = $10
         WHERE id = $1 AND revision = $11 AND lease_worker = $12
         RETURNING revision",
        &[
            &id,
            &status_code(commit.status),
            &if ended {
                None
            } else {
                commit.wake_at.map(micros)
            },
            &lease_worker,
            &lease_until,
            &ended,
            &at,
            &commit.position,
            &commit.state,
            &commit.outcome.as_ref().map(json_text),
            &expected,
            &commit.worker,
        ],
    )
    .await?;
    let Some(fenced) = fenced else {
        return conflict(transaction, commit, id).await;
    };
    let revision: i64 = get(&fenced, 0)?;
    let consumed = commit
        .consumed
        .iter()
        .map(|seq| number_column(*seq))
        .collect::<Result<Vec<_>, _>>()?;
    let produced = commit
        .produced
        .iter()
        .map(|event| encode_event(event).map(|encoded| encoded.body))
        .collect::<Result<Vec<_>, _>>()?;
    let values: Vec<&str> = commit
        .bind
        .iter()
        .map(|(_, value)| value.as_str())
        .collect();
    let history = &commit.history;
    let kind = history_kind_code(history.kind);
    let history_consumed = strings_text(&history.consumed);
    let history_produced = strings_text(&history.produced);
    let detail = json_text(&history.detail);
    let mut statements: Vec<Pending<'_>> = vec![
        Box::pin(async {
            execute(
                transaction,
                "INSERT INTO swf_outbox (instance, body)
             SELECT $1, body FROM unnest($2::text[]) WITH ORDINALITY AS p(body, n) ORDER BY n",
                &[&id, &produced],
            )
            .await
        }),
        Box::pin(async {
            execute(
                transaction,
                "INSERT INTO swf_history (instance, revision, at, kind, from_position, to_position,
                consumed, produced, detail)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                &[
                    &id,
                    &revision,
                    &at,
                    &kind,
                    &history.from,
                    &history.to,
                    &history_consumed,
                    &history_produced,
                    &detail,
                ],
            )
            .await
        }),
    ];
    if ended {
        statements.push(Box::pin(async {
            execute(
                transaction,
                "DELETE FROM swf_wait WHERE instance = $1",
                &[&id],
            )
            .await
        }));
        statements.push(Box::pin(async {
            execute(
                transaction,
                "DELETE FROM swf_binding WHERE instance = $1",
                &[&id],
            )
            .await
        }));
    } else {
        statements.push(Box::pin(async {
            execute(
                transaction,
                "DELETE FROM swf_inbox WHERE instance = $1 AND seq = ANY($2)",
                &[&id, &consumed],
            )
            .await
        }));
        statements.push(Box::pin(async {
            execute(
                transaction,
                "DELETE FROM swf_wait WHERE instance = $1 AND name <> ALL($2)",
                &[&id, &resolved.waits],
            )
            .await
        }));
        // A definition it already waited for keeps its age: the insert leaves that row alone.
        statements.push(Box::pin(async {
            execute(
                transaction,
                "INSERT INTO swf_wait (instance, name, since) SELECT $1, unnest($2::bigint[]), $3
             ON CONFLICT DO NOTHING",
                &[&id, &resolved.waits, &at],
            )
            .await
        }));
        statements.push(Box::pin(async { execute(
            transaction,
            "INSERT INTO swf_binding (instance, attribute, value)
             SELECT $1, a, v FROM unnest($2::bigint[], $3::text[]) AS b(a, v) ON CONFLICT DO NOTHING",
            &[&id, &resolved.attributes, &values],
        ).await }));
    }
    let leftovers = async {
        if !ended {
            return Ok(Vec::new());
        }
        query(
            transaction,
            "WITH gone AS (DELETE FROM swf_inbox WHERE instance = $1 RETURNING seq)
             SELECT e.seq, e.body, e.received_at FROM gone JOIN swf_event e ON e.seq = gone.seq
             WHERE gone.seq <> ALL($2) ORDER BY e.seq",
            &[&id, &consumed],
        )
        .await
    };
    let (leftovers, ()) = futures_util::future::try_join(leftovers, pipeline(statements)).await?;
    let leftovers = leftovers
        .iter()
        .map(|row| stored_event(get(row, 0)?, get(row, 1)?, get(row, 2)?))
        .collect::<Result<Vec<_>, _>>()?;
    let mut children = Vec::with_capacity(commit.children.len());
    for (child, resolved) in commit.children.iter().zip(&resolved.children) {
        let mut child = child.clone();
        child.parent = child.parent.or(Some(commit.instance));
        children.push(insert_instance(transaction, &child, resolved, &[], now).await?);
    }
    Ok(CommitResult::Committed {
        revision: number(revision)?,
        children,
        leftovers,
    })
}

/// The conflict a fenced-off commit reports.
async fn conflict(
    transaction: &Transaction<'_>,
    commit: &Commit,
    id: i64,
) -> Result<CommitResult, StoreError> {
    let row = query_opt(
        transaction,
        "SELECT revision, lease_worker, status FROM swf_instance WHERE id = $1",
        &[&id],
    )
    .await?;
    let found = match row {
        Some(row) => {
            let worker: Option<String> = get(&row, 1)?;
            conflict_found(
                get(&row, 0)?,
                worker.as_deref(),
                status(get::<i16>(&row, 2)?.into())?,
            )
        }
        None => format!("no instance {}", commit.instance),
    };
    Ok(CommitResult::Conflict { found })
}
