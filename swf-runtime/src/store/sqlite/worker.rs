//! The one thread that owns the SQLite connection and commits requests in groups.
//!
//! Requests queue on a channel. The thread takes every request queued (up to
//! [`MAX_GROUP`]) and runs them in one transaction, so that they share one disk sync. One
//! request's failure must undo only its own writes: the group first runs without savepoints
//! (they cost a statement journal of every page a request touches), and when a request fails
//! the whole transaction is rolled back and the group runs again with each request in its own
//! savepoint. Requests are therefore pure functions of the connection, safe to run twice.
//! Replies go out once the transaction committed: a request is answered `Ok` only when it is
//! durable.

use std::sync::mpsc::{Receiver, Sender};
use std::thread::JoinHandle;

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::session::{Memory, Session};
use crate::store::StoreError;
use crate::store::codec::unavailable;

/// Most requests committed in one transaction, which bounds how long a reply may wait.
const MAX_GROUP: usize = 512;

/// One request: work on the connection, and whom to answer.
pub(super) trait Job: Send {
    /// Runs the work inside the group's transaction, replacing the outcome of any earlier run;
    /// `false` when it failed.
    fn run(&mut self, connection: &Session) -> bool;

    /// Answers the caller; `failure` is set when the group's transaction could not commit.
    fn answer(self: Box<Self>, failure: Option<&StoreError>);
}

/// The answer to a request: its outcome, and its work handed back so that what the work holds
/// (the events and states it wrote) is freed by the caller, not by the store's thread, which
/// every request waits for.
pub(super) type Answer<T, F> = (Result<T, StoreError>, F);

/// A request whose work returns a `T`.
pub(super) struct Request<T, F> {
    work: F,
    outcome: Option<Result<T, StoreError>>,
    reply: oneshot::Sender<Answer<T, F>>,
}

impl<T, F> Request<T, F> {
    /// A request doing `work` and answering on `reply`.
    pub(super) fn new(work: F, reply: oneshot::Sender<Answer<T, F>>) -> Self {
        Self {
            work,
            outcome: None,
            reply,
        }
    }
}

impl<T, F> Job for Request<T, F>
where
    T: Send,
    F: Fn(&Session) -> Result<T, StoreError> + Send,
{
    fn run(&mut self, connection: &Session) -> bool {
        let outcome = (self.work)(connection);
        let succeeded = outcome.is_ok();
        self.outcome = Some(outcome);
        succeeded
    }

    fn answer(self: Box<Self>, failure: Option<&StoreError>) {
        let outcome = match (self.outcome, failure) {
            (Some(Err(error)), _) => Err(error),
            (_, Some(failure)) => Err(failure.clone()),
            (Some(outcome), None) => outcome,
            (None, None) => Err(unavailable("a SQLite request did not run")),
        };
        // The caller may have stopped waiting; then nobody needs the answer.
        let _ = self.reply.send((outcome, self.work));
    }
}

/// The sending half and the thread; dropping it stops the thread once it finished its queue.
pub(super) struct Worker {
    sender: Option<Sender<Box<dyn Job>>>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts the thread that owns `connection`.
    pub(super) fn start(connection: Connection, name: String) -> Result<Self, StoreError> {
        let (sender, receiver) = std::sync::mpsc::channel::<Box<dyn Job>>();
        let thread = std::thread::Builder::new()
            .name(name)
            .spawn(move || serve(&connection, &receiver))
            .map_err(|error| unavailable(format!("cannot start the SQLite thread: {error}")))?;
        Ok(Self {
            sender: Some(sender),
            thread: Some(thread),
        })
    }

    /// Queues a job.
    pub(super) fn send(&self, job: Box<dyn Job>) -> Result<(), StoreError> {
        let stopped = || unavailable("the SQLite store's thread has stopped");
        self.sender
            .as_ref()
            .ok_or_else(stopped)?
            .send(job)
            .map_err(|_| stopped())
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop after the requests already queued; joining
        // it closes the database before the store is gone (a reopen then finds it closed).
        drop(self.sender.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread's loop: one transaction per group of queued requests.
fn serve(connection: &Connection, receiver: &Receiver<Box<dyn Job>>) {
    // Declared after the connection it borrows, dropped before it.
    let memory = Memory::new();
    let connection = Session::new(connection, &memory);
    while let Ok(first) = receiver.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match receiver.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let failure = run_group(&connection, &mut group).err();
        for job in group {
            job.answer(failure.as_ref());
        }
    }
}

/// Runs a group in one transaction: without savepoints while every job succeeds, else again
/// with each job in its own savepoint.
fn run_group(connection: &Session, group: &mut [Box<dyn Job>]) -> Result<(), StoreError> {
    execute(connection, "BEGIN IMMEDIATE")?;
    let mut isolated = false;
    for job in group.iter_mut() {
        if !job.run(connection) {
            isolated = true;
            break;
        }
    }
    if isolated {
        // The failed job may have written part of its work: undo the whole group, then run
        // it again so that each job's failure undoes only its own writes.
        rollback(connection);
        execute(connection, "BEGIN IMMEDIATE")?;
        for job in group.iter_mut() {
            if let Err(error) = run_in_savepoint(connection, job.as_mut()) {
                rollback(connection);
                return Err(error);
            }
        }
    }
    if let Err(error) = execute(connection, "COMMIT") {
        rollback(connection);
        return Err(error);
    }
    Ok(())
}

/// Runs one job in a savepoint, rolled back when the job fails.
fn run_in_savepoint(connection: &Session, job: &mut dyn Job) -> Result<(), StoreError> {
    execute(connection, "SAVEPOINT request")?;
    if !job.run(connection) {
        connection.forget();
        execute(connection, "ROLLBACK TO request")?;
    }
    execute(connection, "RELEASE request")
}

/// Rolls the transaction back, forgetting the ids it may have added. (An error may have ended
/// the transaction already: then there is nothing to undo.)
fn rollback(connection: &Session) {
    connection.forget();
    let _ = execute(connection, "ROLLBACK");
}

/// Runs a statement without parameters through the statement cache.
fn execute(connection: &Session, sql: &'static str) -> Result<(), StoreError> {
    connection.prepare_cached(sql)?.execute([])?;
    Ok(())
}
