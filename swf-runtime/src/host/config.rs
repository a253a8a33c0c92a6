//! A host's settings and the channels it talks to its user through.

use std::fmt;
use std::sync::Arc;

use cloudevents::Event;
use serde_json::Value;
use tokio::sync::mpsc;

use super::InstanceId;
use crate::clock::{Clock, SystemClock};
use crate::error::WorkflowError;
use crate::events::DEFAULT_INBOX_CAPACITY;

/// The settings of a [`Host`](crate::Host). Every capacity is at least 1 (a 0 counts as 1); a
/// full channel makes its sender wait (back-pressure), nothing is dropped. A full inbox does not
/// make the router wait: see `overflow_capacity`.
#[derive(Clone)]
pub struct HostConfig {
    /// Capacity of [`HostChannels::events`].
    pub events_capacity: usize,
    /// Capacity of [`HostChannels::produced`].
    pub produced_capacity: usize,
    /// Capacity of [`HostChannels::unmatched`].
    pub unmatched_capacity: usize,
    /// Capacity of [`HostChannels::outcomes`].
    pub outcomes_capacity: usize,
    /// How many events each instance's inbox holds before routing waits for it. An instance
    /// that is sent more correlated events than this without consuming them holds up routing
    /// until it consumes one or ends. A state takes the events it awaits together once they are
    /// all in the inbox, so keep this above the most events one state awaits at once.
    pub inbox_capacity: usize,
    /// How many events the overflows of full inboxes hold, all instances together. An event
    /// for an instance whose inbox is full waits in that instance's overflow (in order) while
    /// the router goes on with the next event, so one slow instance never holds up the others;
    /// only when the overflows hold this many does the router wait for room.
    pub overflow_capacity: usize,
    /// The wall clock scheduled starts are checked against; the host's deployment instant is
    /// its time when the host is created.
    pub clock: Arc<dyn Clock>,
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            events_capacity: 1024,
            produced_capacity: 1024,
            unmatched_capacity: 1024,
            outcomes_capacity: 1024,
            inbox_capacity: DEFAULT_INBOX_CAPACITY,
            overflow_capacity: 65_536,
            clock: Arc::new(SystemClock),
        }
    }
}

impl fmt::Debug for HostConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostConfig")
            .field("events_capacity", &self.events_capacity)
            .field("produced_capacity", &self.produced_capacity)
            .field("unmatched_capacity", &self.unmatched_capacity)
            .field("outcomes_capacity", &self.outcomes_capacity)
            .field("inbox_capacity", &self.inbox_capacity)
            .field("overflow_capacity", &self.overflow_capacity)
            .finish_non_exhaustive()
    }
}

/// The user's ends of a host's channels.
///
/// Dropping a receiver declines what it carries: the host then discards it instead of waiting
/// for room. Keep reading the others, or the host (and the instances sending to them) waits.
#[derive(Debug)]
pub struct HostChannels {
    /// Where the user sends incoming events; [`Host::run`](crate::Host::run) returns once every
    /// sender is dropped and the instances have ended.
    pub events: mpsc::Sender<Event>,
    /// The events instances produce, in the order they produce them.
    pub produced: mpsc::Receiver<Event>,
    /// Incoming events no instance consumed, each with the reason.
    pub unmatched: mpsc::Receiver<Unmatched>,
    /// How each instance ended, once.
    pub outcomes: mpsc::Receiver<Outcome>,
}

/// An incoming event that no instance consumed.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmatched {
    /// The event.
    pub event: Event,
    /// Why nobody consumed it, for example `matches no event definition`.
    pub reason: String,
}

/// How one instance ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Which instance.
    pub instance: InstanceId,
    /// Its output, or the error that halted it.
    pub result: Result<Value, WorkflowError>,
}

/// The four channels of a host, both ends.
pub(super) struct Channels {
    pub(super) user: HostChannels,
    pub(super) events: mpsc::Receiver<Event>,
    pub(super) produced: mpsc::Sender<Event>,
    pub(super) unmatched: mpsc::Sender<Unmatched>,
    pub(super) outcomes: mpsc::Sender<Outcome>,
}

impl Channels {
    pub(super) fn new(config: &HostConfig) -> Self {
        let (events_tx, events) = mpsc::channel(config.events_capacity.max(1));
        let (produced, produced_rx) = mpsc::channel(config.produced_capacity.max(1));
        let (unmatched, unmatched_rx) = mpsc::channel(config.unmatched_capacity.max(1));
        let (outcomes, outcomes_rx) = mpsc::channel(config.outcomes_capacity.max(1));
        Self {
            user: HostChannels {
                events: events_tx,
                produced: produced_rx,
                unmatched: unmatched_rx,
                outcomes: outcomes_rx,
            },
            events,
            produced,
            unmatched,
            outcomes,
        }
    }
}
