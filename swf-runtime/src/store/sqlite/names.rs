//! Workflows, definitions and interned names: small tables that rows refer to by integer.

use rusqlite::{Connection, OptionalExtension};

use crate::store::codec::micros;
use crate::store::{Definition, StoreError};

/// The id of `workflow`, if it is known.
pub(super) fn find_workflow(
    connection: &Connection,
    workflow: &str,
) -> Result<Option<i64>, StoreError> {
    Ok(connection
        .prepare_cached("SELECT id FROM swf_workflow WHERE name = ?1")?
        .query_row([workflow], |row| row.get(0))
        .optional()?)
}

/// The id of `workflow`, added when new.
pub(super) fn workflow_id(connection: &Connection, workflow: &str) -> Result<i64, StoreError> {
    if let Some(id) = find_workflow(connection, workflow)? {
        return Ok(id);
    }
    connection
        .prepare_cached("INSERT INTO swf_workflow (name) VALUES (?1)")?
        .execute([workflow])?;
    Ok(connection.last_insert_rowid())
}

/// The id and first deployment of `definition`, registered at `now` when new.
pub(super) fn definition_id(
    connection: &Connection,
    definition: &Definition,
    now: jiff::Timestamp,
) -> Result<(i64, i64), StoreError> {
    let workflow = workflow_id(connection, &definition.workflow)?;
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

/// The id of the name `name` of `kind` in `workflow`, if it is known.
pub(super) fn find_name(
    connection: &Connection,
    workflow: i64,
    kind: i16,
    name: &str,
) -> Result<Option<i64>, StoreError> {
    Ok(connection
        .prepare_cached("SELECT id FROM swf_name WHERE workflow = ?1 AND kind = ?2 AND name = ?3")?
        .query_row((workflow, kind, name), |row| row.get(0))
        .optional()?)
}

/// The id of the name `name` of `kind` in `workflow`, added when new.
pub(super) fn name_id(
    connection: &Connection,
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
    Ok(connection.last_insert_rowid())
}
