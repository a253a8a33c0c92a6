//! Workflows, definitions and interned names, resolved before a transaction starts.
//!
//! Their rows are only ever added, so ids are cached for the life of the store. Each is added
//! in a statement of its own (committed at once, outside the request's transaction): an id
//! cached from a transaction that rolled back would otherwise name nothing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use deadpool_postgres::GenericClient;
use jiff::Timestamp;

use super::sql::{get, query};
use crate::store::codec::{micros, unavailable};
use crate::store::{Definition, StoreError};

/// How often an insert that lost a race to a concurrent one is retried.
const RACES: usize = 3;

/// The ids known to this store.
#[derive(Default, Clone)]
pub(super) struct NameCache {
    known: Arc<Mutex<Known>>,
}

#[derive(Default)]
struct Known {
    workflows: HashMap<String, i64>,
    definitions: HashMap<(i64, String), (i64, i64)>,
    names: HashMap<(i64, i16, String), i64>,
}

impl NameCache {
    fn read<T>(&self, read: impl FnOnce(&Known) -> Option<T>) -> Option<T> {
        read(&self.known.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn write(&self, write: impl FnOnce(&mut Known)) {
        write(&mut self.known.lock().unwrap_or_else(PoisonError::into_inner));
    }

    /// The id of `workflow`, if it exists (read from the database when not cached).
    pub(super) async fn find_workflow<C: GenericClient>(
        &self,
        client: &C,
        workflow: &str,
    ) -> Result<Option<i64>, StoreError> {
        if let Some(id) = self.read(|known| known.workflows.get(workflow).copied()) {
            return Ok(Some(id));
        }
        let rows = query(
            client,
            "SELECT id FROM swf_workflow WHERE name = $1",
            &[&workflow],
        )
        .await?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let id: i64 = get(row, 0)?;
        self.write(|known| {
            known.workflows.insert(workflow.to_string(), id);
        });
        Ok(Some(id))
    }

    /// The id of `workflow`, added when new.
    pub(super) async fn workflow<C: GenericClient>(
        &self,
        client: &C,
        workflow: &str,
    ) -> Result<i64, StoreError> {
        if let Some(id) = self.find_workflow(client, workflow).await? {
            return Ok(id);
        }
        for _ in 0..RACES {
            let rows = query(
                client,
                "WITH added AS (
                    INSERT INTO swf_workflow (name) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id)
                 SELECT id FROM added UNION ALL SELECT id FROM swf_workflow WHERE name = $1",
                &[&workflow],
            )
            .await?;
            if let Some(row) = rows.first() {
                let id: i64 = get(row, 0)?;
                self.write(|known| {
                    known.workflows.insert(workflow.to_string(), id);
                });
                return Ok(id);
            }
        }
        Err(unavailable(format!(
            "PostgreSQL: cannot add workflow {workflow}"
        )))
    }

    /// The id, workflow id and first deployment of `definition`, registered at `now` when new.
    pub(super) async fn definition<C: GenericClient>(
        &self,
        client: &C,
        definition: &Definition,
        now: Timestamp,
    ) -> Result<(i64, i64, i64), StoreError> {
        let workflow = self.workflow(client, &definition.workflow).await?;
        let key = (workflow, definition.hash.clone());
        if let Some((id, deployed_at)) = self.read(|known| known.definitions.get(&key).copied()) {
            return Ok((id, workflow, deployed_at));
        }
        for _ in 0..RACES {
            let rows = query(
                client,
                "WITH added AS (
                    INSERT INTO swf_definition (workflow, version, hash, deployed_at)
                    VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING id, deployed_at)
                 SELECT id, deployed_at FROM added
                 UNION ALL SELECT id, deployed_at FROM swf_definition WHERE workflow = $1 AND hash = $3",
                &[&workflow, &definition.version, &definition.hash, &micros(now)],
            )
            .await?;
            if let Some(row) = rows.first() {
                let found: (i64, i64) = (get(row, 0)?, get(row, 1)?);
                self.write(|known| {
                    known.definitions.insert(key.clone(), found);
                });
                return Ok((found.0, workflow, found.1));
            }
        }
        Err(unavailable(format!(
            "PostgreSQL: cannot add a definition of workflow {}",
            definition.workflow
        )))
    }

    /// The id of the name `name` of `kind` in `workflow`, added when new.
    pub(super) async fn name<C: GenericClient>(
        &self,
        client: &C,
        workflow: i64,
        kind: i16,
        name: &str,
    ) -> Result<i64, StoreError> {
        let key = (workflow, kind, name.to_string());
        if let Some(id) = self.read(|known| known.names.get(&key).copied()) {
            return Ok(id);
        }
        for _ in 0..RACES {
            let rows = query(
                client,
                "WITH added AS (
                    INSERT INTO swf_name (workflow, kind, name) VALUES ($1, $2, $3)
                    ON CONFLICT DO NOTHING RETURNING id)
                 SELECT id FROM added
                 UNION ALL SELECT id FROM swf_name WHERE workflow = $1 AND kind = $2 AND name = $3",
                &[&workflow, &kind, &name],
            )
            .await?;
            if let Some(row) = rows.first() {
                let id: i64 = get(row, 0)?;
                self.write(|known| {
                    known.names.insert(key.clone(), id);
                });
                return Ok(id);
            }
        }
        Err(unavailable(format!(
            "PostgreSQL: cannot add the name {name}"
        )))
    }

    /// The ids of `names` of `kind` in `workflow`, in order.
    pub(super) async fn names<C: GenericClient>(
        &self,
        client: &C,
        workflow: i64,
        kind: i16,
        names: &[&str],
    ) -> Result<Vec<i64>, StoreError> {
        let mut ids = Vec::with_capacity(names.len());
        for name in names {
            ids.push(self.name(client, workflow, kind, name).await?);
        }
        Ok(ids)
    }
}
