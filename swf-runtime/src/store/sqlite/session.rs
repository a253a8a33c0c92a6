//! The store thread's connection, with what it remembers between requests: the ids of
//! workflows, definitions and interned names.
//!
//! Those rows are only ever inserted, never changed or deleted, so an id once committed stays
//! right for the life of the file, whichever process added it. An id learned in a transaction
//! that is then rolled back may not exist (or later name another row): the worker forgets
//! everything whenever it rolls back.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Deref;

use rusqlite::Connection;

/// The connection of the store's thread and its memory of names.
pub(super) struct Session {
    connection: Connection,
    known: RefCell<Known>,
}

/// Ids looked up or added so far.
#[derive(Default)]
struct Known {
    /// Workflow name → id.
    workflows: BTreeMap<String, i64>,
    /// (workflow, kind) → name → id.
    names: BTreeMap<(i64, i16), BTreeMap<String, i64>>,
    /// Name id → name.
    names_by_id: BTreeMap<i64, String>,
    /// Workflow → definition hash → (id, deployed_at).
    definitions: BTreeMap<i64, BTreeMap<String, (i64, i64)>>,
}

impl Session {
    pub(super) fn new(connection: Connection) -> Self {
        Self {
            connection,
            known: RefCell::default(),
        }
    }

    /// Forgets every id: the transaction that may have added some was rolled back.
    pub(super) fn forget(&self) {
        *self.known.borrow_mut() = Known::default();
    }

    pub(super) fn known_workflow(&self, workflow: &str) -> Option<i64> {
        self.known.borrow().workflows.get(workflow).copied()
    }

    pub(super) fn learn_workflow(&self, workflow: &str, id: i64) {
        self.known
            .borrow_mut()
            .workflows
            .insert(workflow.to_string(), id);
    }

    pub(super) fn known_name(&self, workflow: i64, kind: i16, name: &str) -> Option<i64> {
        let known = self.known.borrow();
        known.names.get(&(workflow, kind))?.get(name).copied()
    }

    pub(super) fn known_name_of(&self, id: i64) -> Option<String> {
        self.known.borrow().names_by_id.get(&id).cloned()
    }

    pub(super) fn learn_name(&self, workflow: i64, kind: i16, name: &str, id: i64) {
        let mut known = self.known.borrow_mut();
        known
            .names
            .entry((workflow, kind))
            .or_default()
            .insert(name.to_string(), id);
        known.names_by_id.insert(id, name.to_string());
    }

    pub(super) fn known_definition(&self, workflow: i64, hash: &str) -> Option<(i64, i64)> {
        let known = self.known.borrow();
        known.definitions.get(&workflow)?.get(hash).copied()
    }

    pub(super) fn learn_definition(&self, workflow: i64, hash: &str, found: (i64, i64)) {
        self.known
            .borrow_mut()
            .definitions
            .entry(workflow)
            .or_default()
            .insert(hash.to_string(), found);
    }
}

impl Deref for Session {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        &self.connection
    }
}
