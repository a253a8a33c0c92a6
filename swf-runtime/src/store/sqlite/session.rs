//! The store thread's connection, with what it remembers between requests: its prepared
//! statements, and the ids of workflows, definitions and interned names.
//!
//! Those rows are only ever inserted, never changed or deleted, so an id once committed stays
//! right for the life of the file, whichever process added it. An id learned in a transaction
//! that is then rolled back may not exist (or later name another row): the worker forgets
//! everything whenever it rolls back.
//!
//! Statements are kept by the address of their SQL text (a literal in this crate): finding one
//! is a lookup of that address, where rusqlite's own cache hashes and compares the whole text
//! twice per use, on taking the statement and on giving it back (6 to 10% of the store's
//! thread in `perf`, with some 14 statements per event).

use std::cell::{OnceCell, RefCell, RefMut};
use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

use rusqlite::{CachedStatement, Connection, PrepFlags, Statement};

/// How many distinct statements are kept prepared (the store has about 60); any further one
/// goes through rusqlite's cache.
const STATEMENT_SLOTS: usize = 128;

/// The connection of the store's thread, its statements and its memory of names. It lives on
/// the stack of that thread, borrowing what [`Memory`] holds.
pub(super) struct Session<'m, 'c> {
    connection: &'c Connection,
    memory: &'m Memory<'c>,
}

/// What a [`Session`] remembers between requests.
pub(super) struct Memory<'c> {
    known: RefCell<Known>,
    /// Statement slots, filled in the order statements are first used; never moved or removed,
    /// so a statement can be lent out while others are added.
    slots: Vec<OnceCell<RefCell<Statement<'c>>>>,
    /// The address and length of a statement's SQL text → its slot.
    slot_of: RefCell<BTreeMap<(usize, usize), usize>>,
}

impl Memory<'_> {
    pub(super) fn new() -> Self {
        Self {
            known: RefCell::default(),
            slots: (0..STATEMENT_SLOTS).map(|_| OnceCell::new()).collect(),
            slot_of: RefCell::default(),
        }
    }
}

/// A prepared statement lent out by [`Session::prepare_cached`].
pub(super) enum Prepared<'s, 'c> {
    /// Kept in the session's slots.
    Slot(RefMut<'s, Statement<'c>>),
    /// From rusqlite's cache: the slots are full, or the statement is already in use (a
    /// statement used while its own rows are read).
    Cache(CachedStatement<'c>),
}

impl<'c> Deref for Prepared<'_, 'c> {
    type Target = Statement<'c>;

    fn deref(&self) -> &Statement<'c> {
        match self {
            Self::Slot(statement) => statement,
            Self::Cache(statement) => statement,
        }
    }
}

impl<'c> DerefMut for Prepared<'_, 'c> {
    fn deref_mut(&mut self) -> &mut Statement<'c> {
        match self {
            Self::Slot(statement) => statement,
            Self::Cache(statement) => statement,
        }
    }
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

impl<'m, 'c> Session<'m, 'c> {
    pub(super) fn new(connection: &'c Connection, memory: &'m Memory<'c>) -> Self {
        Self { connection, memory }
    }

    /// The statement of `sql`, prepared on its first use and kept. Every result of a statement
    /// is read before the next use of the same text, as rusqlite's statements reset themselves
    /// when their rows are done and every use binds all parameters again.
    ///
    /// # Errors
    /// SQLite's, when the statement does not compile.
    pub(super) fn prepare_cached(&self, sql: &'static str) -> rusqlite::Result<Prepared<'_, 'c>> {
        // With the length: two texts never share both, even should the linker overlap them.
        let key = (sql.as_ptr() as usize, sql.len());
        let slot = {
            let mut slot_of = self.memory.slot_of.borrow_mut();
            let next = slot_of.len();
            *slot_of.entry(key).or_insert(next)
        };
        let Some(slot) = self.memory.slots.get(slot) else {
            return self.connection.prepare_cached(sql).map(Prepared::Cache);
        };
        let cell = match slot.get() {
            Some(cell) => cell,
            None => {
                // Persistent, as rusqlite's cache prepares them: a statement kept for good must
                // not hold the connection's lookaside memory, or SQLite's small allocations go
                // to the general allocator and its mutex (4% more instructions measured).
                let statement = self
                    .connection
                    .prepare_with_flags(sql, PrepFlags::SQLITE_PREPARE_PERSISTENT)?;
                slot.get_or_init(|| RefCell::new(statement))
            }
        };
        match cell.try_borrow_mut() {
            Ok(statement) => Ok(Prepared::Slot(statement)),
            Err(_) => self.connection.prepare_cached(sql).map(Prepared::Cache),
        }
    }

    /// A statement whose text is built at run time, through rusqlite's cache.
    ///
    /// # Errors
    /// SQLite's, when the statement does not compile.
    pub(super) fn prepare_built(&self, sql: &str) -> rusqlite::Result<CachedStatement<'c>> {
        self.connection.prepare_cached(sql)
    }

    /// Forgets every id: the transaction that may have added some was rolled back.
    pub(super) fn forget(&self) {
        *self.memory.known.borrow_mut() = Known::default();
    }

    pub(super) fn known_workflow(&self, workflow: &str) -> Option<i64> {
        self.memory.known.borrow().workflows.get(workflow).copied()
    }

    pub(super) fn learn_workflow(&self, workflow: &str, id: i64) {
        self.memory
            .known
            .borrow_mut()
            .workflows
            .insert(workflow.to_string(), id);
    }

    pub(super) fn known_name(&self, workflow: i64, kind: i16, name: &str) -> Option<i64> {
        let known = self.memory.known.borrow();
        known.names.get(&(workflow, kind))?.get(name).copied()
    }

    pub(super) fn known_name_of(&self, id: i64) -> Option<String> {
        self.memory.known.borrow().names_by_id.get(&id).cloned()
    }

    pub(super) fn learn_name(&self, workflow: i64, kind: i16, name: &str, id: i64) {
        let mut known = self.memory.known.borrow_mut();
        known
            .names
            .entry((workflow, kind))
            .or_default()
            .insert(name.to_string(), id);
        known.names_by_id.insert(id, name.to_string());
    }

    pub(super) fn known_definition(&self, workflow: i64, hash: &str) -> Option<(i64, i64)> {
        let known = self.memory.known.borrow();
        known.definitions.get(&workflow)?.get(hash).copied()
    }

    pub(super) fn learn_definition(&self, workflow: i64, hash: &str, found: (i64, i64)) {
        self.memory
            .known
            .borrow_mut()
            .definitions
            .entry(workflow)
            .or_default()
            .insert(hash.to_string(), found);
    }
}

impl Deref for Session<'_, '_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.connection
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(session: &Session<'_, '_>, sql: &'static str) -> i64 {
        session
            .prepare_cached(sql)
            .unwrap()
            .query_row([], |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn a_statement_in_use_is_lent_again_from_rusqlites_cache() {
        let connection = Connection::open_in_memory().unwrap();
        let memory = Memory::new();
        let session = Session::new(&connection, &memory);
        let mut outer = session.prepare_cached("SELECT 1").unwrap();
        assert!(matches!(outer, Prepared::Slot(_)));
        let mut rows = outer.query([]).unwrap();
        // The same text while the first one's rows are read.
        let inner = session.prepare_cached("SELECT 1").unwrap();
        assert!(matches!(inner, Prepared::Cache(_)));
        drop(inner);
        assert_eq!(rows.next().unwrap().unwrap().get::<_, i64>(0).unwrap(), 1);
        drop(rows);
        drop(outer);
        assert!(matches!(
            session.prepare_cached("SELECT 1").unwrap(),
            Prepared::Slot(_)
        ));
        assert_eq!(one(&session, "SELECT 1"), 1);
    }

    #[test]
    fn statements_beyond_the_slots_still_run() {
        let connection = Connection::open_in_memory().unwrap();
        let memory = Memory::new();
        let session = Session::new(&connection, &memory);
        let texts: Vec<&'static str> = (0..=STATEMENT_SLOTS)
            .map(|i| format!("SELECT {i}").leak() as &'static str)
            .collect();
        for (i, sql) in texts.iter().enumerate() {
            assert_eq!(one(&session, sql), i64::try_from(i).unwrap());
        }
        // The last one found every slot taken; the first still has its own.
        assert!(matches!(
            session.prepare_cached(texts[STATEMENT_SLOTS]).unwrap(),
            Prepared::Cache(_)
        ));
        assert!(matches!(
            session.prepare_cached(texts[0]).unwrap(),
            Prepared::Slot(_)
        ));
        assert_eq!(one(&session, texts[0]), 0);
    }
}
