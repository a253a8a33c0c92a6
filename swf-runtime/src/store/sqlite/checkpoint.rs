//! Checkpoints on a thread of their own.
//!
//! In WAL mode every commit appends the pages it changed to the log; a checkpoint copies them
//! back into the database file and syncs it. SQLite's automatic checkpoint does that on the
//! connection that committed, after its commit, once the log holds 1,000 pages: on the store's
//! thread, which every request waits for. With a million instances each group of commits
//! touches a few thousand pages, so nearly every group paid a checkpoint (the copies and a
//! second sync) before the next group could start.
//!
//! Here the store's connection only counts: after each commit SQLite tells it how many pages
//! the log holds, and past [`Checkpoints::start_at`] it wakes a second thread, which checkpoints
//! on a connection of its own while the store's thread goes on. Such a (passive) checkpoint
//! never blocks the writer. The log starts over at a commit that finds it entirely copied, so it
//! stays near the pages of a few groups; should the checkpointer ever fall behind by
//! [`Checkpoints::force_at`] pages, the store's thread checkpoints itself, as SQLite would have.

use std::ffi::c_int;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender};
use std::thread::JoinHandle;

use rusqlite::Connection;
use rusqlite::hooks::Wal;
use rusqlite::wal::CheckpointMode;

use super::schema;
use crate::store::StoreError;
use crate::store::codec::unavailable;

/// When the log is checkpointed, in pages (of 4 KiB by default).
#[derive(Clone, Copy, Debug)]
pub(super) struct Checkpoints {
    /// The log size from which each commit wakes the checkpointer.
    pub start_at: c_int,
    /// The log size from which the store's thread checkpoints itself.
    pub force_at: c_int,
}

impl Default for Checkpoints {
    fn default() -> Self {
        // 16 MiB: large enough that pages changed by several groups (the event table, the
        // history, index pages near their ends) are copied once rather than once per group.
        // 256 MiB: the log's bound if the checkpointer cannot keep up.
        Self {
            start_at: 4_096,
            force_at: 65_536,
        }
    }
}

/// The checkpointing thread; dropping it stops the thread and waits for it to end. Drop it
/// only once the store's connection is closed: the hook on that connection holds the other
/// sending end of the thread's channel, and the thread ends when both are gone.
pub(super) struct Checkpointer {
    /// Keeps the thread (and its connection) alive until the store's connection has closed.
    /// Without it the thread saw its channel close while the store's connection was still
    /// closing (`sqlite3_close` frees client data, the hook among them, before it closes the
    /// file), closed its own at the same time, and each connection could find the other still
    /// open, so that neither deleted the log (seen once in CI).
    stop: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Opens a second connection to the file at `path` (already in WAL mode), starts the thread
    /// that checkpoints on it and hooks `store` (the store's connection) to wake it.
    pub(super) fn start(
        path: &Path,
        store: &mut Connection,
        checkpoints: Checkpoints,
    ) -> Result<Self, StoreError> {
        let connection = Connection::open(path).map_err(|error| {
            unavailable(format!("SQLite: cannot open {}: {error}", path.display()))
        })?;
        schema::configure(&connection)?;
        // One wake-up pending is enough: the checkpoint it starts copies whatever is in the log.
        let (wake, woken) = std::sync::mpsc::sync_channel::<()>(1);
        let stop = wake.clone();
        // Installing a hook replaces SQLite's automatic checkpoint on this connection.
        store.wal_hook(Some(move |wal: &mut Wal, pages: c_int| {
            if pages >= checkpoints.force_at {
                // Passive, like SQLite's own; busy when the checkpointer is at it, which is as
                // good. Never an error: the commit that called this hook has happened, and an
                // error here would report it as failed.
                let _ = wal.checkpoint();
            } else if pages >= checkpoints.start_at {
                // Full: a wake-up is already pending. Disconnected: the thread failed to start
                // or ended; the forced checkpoint above still bounds the log.
                let _ = wake.try_send(());
            }
            Ok(())
        }))?;
        let thread = std::thread::Builder::new()
            .name("swf-sqlite-checkpoint".to_string())
            .spawn(move || checkpoint_when_woken(&connection, &woken))
            .map_err(|error| {
                unavailable(format!(
                    "cannot start the SQLite checkpoint thread: {error}"
                ))
            })?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread's loop. A failed checkpoint (busy, or the disk) is left for the next wake-up or
/// for the store's thread: the log only grows meanwhile, nothing is lost.
fn checkpoint_when_woken(connection: &Connection, woken: &Receiver<()>) {
    while woken.recv().is_ok() {
        let _ = connection.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE);
    }
}
