//! Commits: each transition checked against its revision and lease, then written whole.

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension};

use super::instances::{bind, inbox, insert_instance};
use super::names::{definition_id, name_id};
use crate::store::codec::{
    EVENT_DEFINITION, conflict_found, encode_event, history_kind_code, id_column, json_text,
    micros, number, number_column, status, status_code, strings_text,
};
use crate::store::{Commit, CommitResult, Status, StoreError, StoredEvent};

/// Commits each transition on its own terms; a conflict writes nothing.
pub(super) fn commit_all(
    connection: &Connection,
    commits: &[Commit],
    now: Timestamp,
) -> Result<Vec<CommitResult>, StoreError> {
    commits
        .iter()
        .map(|commit| commit_one(connection, commit, now))
        .collect()
}

/// The columns a commit checks and keeps.
struct Current {
    revision: i64,
    lease_worker: Option<String>,
    status: i64,
    nudged: bool,
    workflow: i64,
}

fn commit_one(
    connection: &Connection,
    commit: &Commit,
    now: Timestamp,
) -> Result<CommitResult, StoreError> {
    let id = id_column(commit.instance)?;
    let current = connection
        .prepare_cached("SELECT revision, lease_worker, status, nudged, workflow FROM swf_instance WHERE id = ?1")?
        .query_row([id], |row| {
            Ok(Current {
                revision: row.get(0)?,
                lease_worker: row.get(1)?,
                status: row.get(2)?,
                nudged: row.get(3)?,
                workflow: row.get(4)?,
            })
        })
        .optional()?;
    let Some(current) = current else {
        return Ok(CommitResult::Conflict {
            found: format!("no instance {}", commit.instance),
        });
    };
    let expected = number_column(commit.revision)?;
    if current.revision != expected
        || current.lease_worker.as_deref() != Some(commit.worker.as_str())
    {
        return Ok(CommitResult::Conflict {
            found: conflict_found(
                current.revision,
                current.lease_worker.as_deref(),
                status(current.status)?,
            ),
        });
    }
    let revision = expected + 1;
    // An event the instance waited for reached its inbox after the worker read it: the worker
    // could not see it, so the instance must run again rather than wait for it.
    let new_status = if commit.status == Status::Waiting && current.nudged {
        Status::Runnable
    } else {
        commit.status
    };
    let ended = new_status.has_ended();
    let (lease_worker, lease_until) = match commit.lease_until {
        Some(until) if !ended => (Some(commit.worker.as_str()), Some(micros(until))),
        _ => (None, None),
    };
    let at = micros(now);
    connection
        .prepare_cached(
            "UPDATE swf_instance SET status = ?2, revision = ?3, wake_at = ?4, lease_worker = ?5,
                lease_until = ?6, nudged = ?7, updated_at = ?8, position = ?9, state = ?10,
                outcome = ?11
             WHERE id = ?1",
        )?
        .execute(rusqlite::params![
            id,
            status_code(new_status),
            revision,
            if ended {
                None
            } else {
                commit.wake_at.map(micros)
            },
            lease_worker,
            lease_until,
            current.nudged && !ended,
            at,
            commit.position,
            commit.state,
            commit.outcome.as_ref().map(json_text),
        ])?;
    if let Some(definition) = &commit.definition {
        let (definition, _) = definition_id(connection, definition, now)?;
        connection
            .prepare_cached("UPDATE swf_instance SET definition = ?2 WHERE id = ?1")?
            .execute((id, definition))?;
    }
    for seq in &commit.consumed {
        connection
            .prepare_cached("DELETE FROM swf_inbox WHERE instance = ?1 AND seq = ?2")?
            .execute((id, number_column(*seq)?))?;
    }
    let leftovers = if ended {
        end(connection, id)?
    } else {
        replace_waits(connection, current.workflow, id, &commit.waits, at)?;
        bind(connection, current.workflow, id, &commit.bind)?;
        Vec::new()
    };
    for produced in &commit.produced {
        let encoded = encode_event(produced)?;
        connection
            .prepare_cached("INSERT INTO swf_outbox (instance, body) VALUES (?1, ?2)")?
            .execute((id, encoded.body))?;
    }
    let mut children = Vec::with_capacity(commit.children.len());
    for child in &commit.children {
        let mut child = child.clone();
        child.parent = child.parent.or(Some(commit.instance));
        children.push(insert_instance(connection, &child, &[], now)?);
    }
    let history = &commit.history;
    connection
        .prepare_cached(
            "INSERT INTO swf_history (instance, revision, at, kind, from_position, to_position,
                consumed, produced, detail)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?
        .execute(rusqlite::params![
            id,
            revision,
            at,
            history_kind_code(history.kind),
            history.from,
            history.to,
            strings_text(&history.consumed),
            strings_text(&history.produced),
            json_text(&history.detail),
        ])?;
    Ok(CommitResult::Committed {
        revision: number(revision)?,
        children,
        leftovers,
    })
}

/// Replaces the waits of an instance; a definition it already waited for keeps its age.
fn replace_waits(
    connection: &Connection,
    workflow: i64,
    id: i64,
    waits: &[String],
    at: i64,
) -> Result<(), StoreError> {
    let mut wanted = Vec::with_capacity(waits.len());
    for wait in waits {
        wanted.push(name_id(connection, workflow, EVENT_DEFINITION, wait)?);
    }
    let current: Vec<i64> = connection
        .prepare_cached("SELECT name FROM swf_wait WHERE instance = ?1")?
        .query_map([id], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    for name in current.iter().filter(|name| !wanted.contains(name)) {
        connection
            .prepare_cached("DELETE FROM swf_wait WHERE instance = ?1 AND name = ?2")?
            .execute((id, name))?;
    }
    for name in wanted.iter().filter(|name| !current.contains(name)) {
        connection
            .prepare_cached(
                "INSERT OR IGNORE INTO swf_wait (instance, name, since) VALUES (?1, ?2, ?3)",
            )?
            .execute((id, name, at))?;
    }
    Ok(())
}

/// Removes what an ended instance no longer needs: its waits, bindings and inbox, whose events
/// are returned.
pub(super) fn end(connection: &Connection, id: i64) -> Result<Vec<StoredEvent>, StoreError> {
    let leftovers = inbox(connection, id)?;
    connection
        .prepare_cached("DELETE FROM swf_inbox WHERE instance = ?1")?
        .execute([id])?;
    connection
        .prepare_cached("DELETE FROM swf_wait WHERE instance = ?1")?
        .execute([id])?;
    connection
        .prepare_cached("DELETE FROM swf_binding WHERE instance = ?1")?
        .execute([id])?;
    Ok(leftovers)
}
