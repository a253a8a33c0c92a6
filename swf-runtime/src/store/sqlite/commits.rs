//! Commits: each transition checked against its revision and lease, then written whole.

use jiff::Timestamp;
use rusqlite::OptionalExtension;

use super::instances::{bind, insert_instance, stored_event};
use super::names::{definition_row, name_id};
use super::session::Session;
use crate::store::codec::{
    EVENT_DEFINITION, KEPT_HISTORY_KINDS, clears_inbox_and_bindings, conflict_found, encode_event,
    history_kind_code, id_column, json_text, micros, number, number_column, status, status_code,
    strings_text, trimmed_through,
};
use crate::store::{Commit, CommitResult, MAX_TRIMMED_PER_COMMIT, Status, StoreError, StoredEvent};

/// What a commit stores as text, encoded before it reaches the store's thread (which every
/// request waits for).
pub(super) struct CommitTexts {
    outcome: Option<String>,
    produced: Vec<String>,
    history_consumed: String,
    history_produced: String,
    history_detail: String,
}

impl CommitTexts {
    /// The texts of `commit`.
    ///
    /// # Errors
    /// A produced event that cannot be serialized.
    pub(super) fn of(commit: &Commit) -> Result<Self, StoreError> {
        Ok(Self {
            outcome: commit.outcome.as_ref().map(json_text),
            produced: commit
                .produced
                .iter()
                .map(|event| Ok(encode_event(event)?.body))
                .collect::<Result<_, StoreError>>()?,
            history_consumed: strings_text(&commit.history.consumed),
            history_produced: strings_text(&commit.history.produced),
            history_detail: json_text(&commit.history.detail),
        })
    }
}

/// Commits each transition (with its texts) on its own terms; a conflict writes nothing.
pub(super) fn commit_all(
    connection: &Session,
    commits: &[Commit],
    texts: &[CommitTexts],
    now: Timestamp,
) -> Result<Vec<CommitResult>, StoreError> {
    commits
        .iter()
        .zip(texts)
        .map(|(commit, texts)| commit_one(connection, commit, texts, now))
        .collect()
}

fn commit_one(
    connection: &Session,
    commit: &Commit,
    texts: &CommitTexts,
    now: Timestamp,
) -> Result<CommitResult, StoreError> {
    let id = id_column(commit.instance)?;
    let expected = number_column(commit.revision)?;
    let revision = expected + 1;
    let ended = commit.status.has_ended();
    let (lease_worker, lease_until) = match commit.lease_until {
        Some(until) if !ended => (Some(commit.worker.as_str()), Some(micros(until))),
        _ => (None, None),
    };
    let at = micros(now);
    // The check and the write are one statement: the row changes only at the expected revision
    // under this worker's lease. An event the instance waited for that reached its inbox after
    // the worker read it (`nudged`) makes a waiting instance runnable: the worker could not see
    // the event, so the instance must run again rather than wait for it. (No `RETURNING`:
    // SQLite buffers its rows in a temporary b-tree, which costs more than a lookup.)
    let changed = connection
        .prepare_cached(
            "UPDATE swf_instance SET
                status = CASE WHEN ?2 = ?12 AND nudged THEN ?13 ELSE ?2 END,
                revision = ?3, wake_at = ?4, lease_worker = ?5, lease_until = ?6,
                nudged = nudged AND NOT ?7, updated_at = ?8, position = ?9, state = ?10,
                outcome = ?11
             WHERE id = ?1 AND revision = ?14 AND lease_worker = ?15",
        )?
        .execute(rusqlite::params![
            id,
            status_code(commit.status),
            revision,
            if ended {
                None
            } else {
                commit.wake_at.map(micros)
            },
            lease_worker,
            lease_until,
            ended,
            at,
            commit.position,
            commit.state,
            texts.outcome,
            status_code(Status::Waiting),
            status_code(Status::Runnable),
            expected,
            commit.worker,
        ])?;
    if changed == 0 {
        return conflict(connection, commit, id);
    }
    if let Some(definition) = &commit.definition {
        let definition = definition_row(connection, definition, now)?.id;
        connection
            .prepare_cached("UPDATE swf_instance SET definition = ?2 WHERE id = ?1")?
            .execute((id, definition))?;
    }
    let leftovers = if clears_inbox_and_bindings(commit.status) {
        end(connection, id, &commit.consumed)?
    } else if ended {
        // Failed: the step is not committed, so its `consumed` stay in the inbox for the redrive
        // that runs it again. Nothing wakes a failed instance.
        remove_waits(connection, id)?;
        Vec::new()
    } else {
        for seq in &commit.consumed {
            connection
                .prepare_cached("DELETE FROM swf_inbox WHERE instance = ?1 AND seq = ?2")?
                .execute((id, number_column(*seq)?))?;
        }
        let workflow: i64 = connection
            .prepare_cached("SELECT workflow FROM swf_instance WHERE id = ?1")?
            .query_row([id], |row| row.get(0))?;
        replace_waits(connection, workflow, id, &commit.waits, at)?;
        bind(connection, workflow, id, &commit.bind)?;
        Vec::new()
    };
    for body in &texts.produced {
        connection
            .prepare_cached("INSERT INTO swf_outbox (instance, body) VALUES (?1, ?2)")?
            .execute((id, body))?;
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
            texts.history_consumed,
            texts.history_produced,
            texts.history_detail,
        ])?;
    if let Some(through) = commit.trim_history_through {
        // At most `MAX_TRIMMED_PER_COMMIT` revisions from the oldest removable entry: a range
        // of the primary key, where `IN (... ORDER BY revision LIMIT n)` built a table first.
        connection
            .prepare_cached(
                "DELETE FROM swf_history
                 WHERE instance = ?1 AND revision BETWEEN 1 AND ?2 AND kind NOT IN (?3, ?4)
                   AND revision < ?5 + (
                       SELECT MIN(revision) FROM swf_history
                       WHERE instance = ?1 AND revision >= 1 AND kind NOT IN (?3, ?4))",
            )?
            .execute(rusqlite::params![
                id,
                trimmed_through(through, revision),
                history_kind_code(KEPT_HISTORY_KINDS[0]),
                history_kind_code(KEPT_HISTORY_KINDS[1]),
                number_column(MAX_TRIMMED_PER_COMMIT)?,
            ])?;
    }
    Ok(CommitResult::Committed {
        revision: number(revision)?,
        children,
        leftovers,
    })
}

/// Replaces the waits of an instance; a definition it already waited for keeps its age.
fn replace_waits(
    connection: &Session,
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

/// What a commit that changed nothing found: the instance's revision, lease and status.
fn conflict(connection: &Session, commit: &Commit, id: i64) -> Result<CommitResult, StoreError> {
    let current: Option<(i64, Option<String>, i64)> = connection
        .prepare_cached("SELECT revision, lease_worker, status FROM swf_instance WHERE id = ?1")?
        .query_row([id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .optional()?;
    let found = match current {
        Some((revision, lease_worker, code)) => {
            conflict_found(revision, lease_worker.as_deref(), status(code)?)
        }
        None => format!("no instance {}", commit.instance),
    };
    Ok(CommitResult::Conflict { found })
}

/// Removes what a completed or cancelled instance no longer needs: its waits, bindings and
/// inbox. Returns the events of its inbox other than `consumed` (those its last step took),
/// oldest first: it will never take them.
pub(super) fn end(
    connection: &Session,
    id: i64,
    consumed: &[u64],
) -> Result<Vec<StoredEvent>, StoreError> {
    // Only the leftovers (rare) are read in full.
    let removed: Vec<i64> = connection
        .prepare_cached("SELECT seq FROM swf_inbox WHERE instance = ?1")?
        .query_map([id], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    if !removed.is_empty() {
        connection
            .prepare_cached("DELETE FROM swf_inbox WHERE instance = ?1")?
            .execute([id])?;
    }
    let mut leftovers = Vec::new();
    for seq in removed {
        if consumed.contains(&number(seq)?) {
            continue;
        }
        let (body, received_at): (String, i64) = connection
            .prepare_cached("SELECT body, received_at FROM swf_event WHERE seq = ?1")?
            .query_row([seq], |row| Ok((row.get(0)?, row.get(1)?)))?;
        leftovers.push(stored_event(seq, &body, received_at)?);
    }
    leftovers.sort_by_key(|event| event.seq);
    remove_waits(connection, id)?;
    connection
        .prepare_cached("DELETE FROM swf_binding WHERE instance = ?1")?
        .execute([id])?;
    Ok(leftovers)
}

fn remove_waits(connection: &Session, id: i64) -> Result<(), StoreError> {
    connection
        .prepare_cached("DELETE FROM swf_wait WHERE instance = ?1")?
        .execute([id])?;
    Ok(())
}
