//! Workflows, definitions and interned names: small tables that rows refer to by integer.

use rusqlite::OptionalExtension;

use super::session::Session;
use crate::store::codec::micros;
use crate::store::{Definition, StoreError};

/// The id of `workflow`, if it is known.
pub(super) fn find_workflow(
    connection: &Session,
    workflow: &str,
) -> Result<Option<i64>, StoreError> {
    if let Some(id) = connection.known_workflow(workflow) {
        return Ok(Some(id));
    }
    let found = connection
        .prepare_cached("SELECT id FROM swf_workflow WHERE name = ?1")?
        .query_row([workflow], |row| row.get(0))
        .optional()?;
    if let Some(id) = found {
        connection.learn_workflow(workflow, id);
    }
    Ok(found)
}

/// The id of `workflow`, added when new.
pub(super) fn workflow_id(connection: &Session, workflow: &str) -> Result<i64, StoreError> {
    if let Some(id) = find_workflow(connection, workflow)? {
        return Ok(id);
    }
    connection
        .prepare_cached("INSERT INTO swf_workflow (name) VALUES (?1)")?
        .execute([workflow])?;
    let id = connection.last_insert_rowid();
    connection.learn_workflow(workflow, id);
    Ok(id)
}

/// A definition's row: its id, its workflow's and its first deployment.
pub(super) struct DefinitionRow {
    pub id: i64,
    pub workflow: i64,
    pub deployed_at: i64,
}

/// The row of `definition`, registered at `now` when new.
pub(super) fn definition_row(
    connection: &Session,
    definition: &Definition,
    now: jiff::Timestamp,
) -> Result<DefinitionRow, StoreError> {
    let workflow = workflow_id(connection, &definition.workflow)?;
    let (id, deployed_at) = match connection.known_definition(workflow, &definition.hash) {
        Some(known) => known,
        None => {
            let found = find_definition(connection, workflow, definition, now)?;
            connection.learn_definition(workflow, &definition.hash, found);
            found
        }
    };
    Ok(DefinitionRow {
        id,
        workflow,
        deployed_at,
    })
}

/// The id and first deployment of `definition` of `workflow`, registered at `now` when new.
fn find_definition(
    connection: &Session,
    workflow: i64,
    definition: &Definition,
    now: jiff::Timestamp,
) -> Result<(i64, i64), StoreError> {
    let found = connection
        .prepare_cached(
            "SELECT id, deployed_at FROM swf_definition WHERE workflow = ?1 AND hash = ?2",
        )?
        .query_row((workflow, &definition.hash), |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .optional()?;
    if let Some(found) = found {
        return Ok(found);
    }
    let deployed_at = micros(now);
    connection
        .prepare_cached(
            "INSERT INTO swf_definition (workflow, version, hash, deployed_at) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute((workflow, &definition.version, &definition.hash, deployed_at))?;
    Ok((connection.last_insert_rowid(), deployed_at))
}

/// The name whose id is `id`.
pub(super) fn name_of(connection: &Session, id: i64) -> Result<String, StoreError> {
    if let Some(name) = connection.known_name_of(id) {
        return Ok(name);
    }
    let (workflow, kind, name): (i64, i16, String) = connection
        .prepare_cached("SELECT workflow, kind, name FROM swf_name WHERE id = ?1")?
        .query_row([id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
    connection.learn_name(workflow, kind, &name, id);
    Ok(name)
}

/// The id of the name `name` of `kind` in `workflow`, if it is known.
pub(super) fn find_name(
    connection: &Session,
    workflow: i64,
    kind: i16,
    name: &str,
) -> Result<Option<i64>, StoreError> {
    if let Some(id) = connection.known_name(workflow, kind, name) {
        return Ok(Some(id));
    }
    let found = connection
        .prepare_cached("SELECT id FROM swf_name WHERE workflow = ?1 AND kind = ?2 AND name = ?3")?
        .query_row((workflow, kind, name), |row| row.get(0))
        .optional()?;
    if let Some(id) = found {
        connection.learn_name(workflow, kind, name, id);
    }
    Ok(found)
}

/// The id of the name `name` of `kind` in `workflow`, added when new.
pub(super) fn name_id(
    connection: &Session,
    workflow: i64,
    kind: i16,
    name: &str,
) -> Result<i64, StoreError> {
    if let Some(id) = find_name(connection, workflow, kind, name)? {
        return Ok(id);
    }
    connection
        .prepare_cached("INSERT INTO swf_name (workflow, kind, name) VALUES (?1, ?2, ?3)")?
        .execute((workflow, kind, name))?;
    let id = connection.last_insert_rowid();
    connection.learn_name(workflow, kind, name, id);
    Ok(id)
}
