//! Waiting, outside a step, for what a waiting instance waits for: [`Io::listen`] tells a
//! host's router which events the instance takes, [`Io::wait_for`] sleeps until an event
//! arrives or the deadline comes.

use std::pin::pin;

use super::io::HostLink;
use super::registry;
use super::{EventSpec, Io};
use crate::progress::Wait;

impl Io {
    /// How many events have arrived in the inbox so far. Read it before a step; pass it to
    /// [`Io::wait_for`] so that an event arriving during the step ends the wait at once.
    pub fn arrivals(&self) -> u64 {
        self.inner
            .made_inbox()
            .map_or(0, |inbox| inbox.lock().arrivals)
    }

    /// Where an instance stands whose step, after reading `seen` from [`Io::arrivals`], found
    /// nothing to take and waits for events alone.
    pub(crate) fn since(&self, seen: u64) -> Since {
        let state = self.inner.inbox().lock();
        if state.arrivals != seen {
            Since::Arrived
        } else if state.is_sealed() {
            Since::Sealed
        } else {
            Since::Nothing
        }
    }

    /// Registers with a host's router that this instance listens for the events of `wait`
    /// (nothing for a standalone `Io`), until the returned guard is dropped or changed. A
    /// definition with a correlation token is registered only while the instance is not bound
    /// for its attribute: once bound, its events reach it by value.
    pub fn listen<'a>(&'a self, events: &'static [EventSpec], wait: &Wait) -> Listening<'a> {
        let mut listening = Listening {
            link: self.inner.link.as_ref(),
            io: self,
            events,
            ticket: None,
            specs: Vec::new(),
        };
        listening.update(wait);
        listening
    }

    /// Waits until an event arrives after the reading `seen` of [`Io::arrivals`], or until
    /// `wait.until` comes (by this `Io`'s clock). Returns at once when one already arrived.
    ///
    /// Returns `false` (at once) when nothing can end the wait any more: no deadline, nothing
    /// arrived since `seen`, and the inbox is sealed (its host's events channel closed).
    pub async fn wait_for(&self, wait: &Wait, seen: u64) -> bool {
        let mut arrived = pin!(self.inner.inbox().arrived());
        arrived.as_mut().enable();
        if self.arrivals() != seen {
            return true;
        }
        match wait.until {
            None => {
                if self.inner.inbox().is_sealed() {
                    return false;
                }
                arrived.await;
                // Woken by an arrival, or by the seal.
                self.arrivals() != seen || !self.inner.inbox().is_sealed()
            }
            Some(deadline) => {
                let sleep = self.clock().sleep_until(deadline);
                tokio::select! {
                    () = arrived => {}
                    () = sleep => {}
                }
                true
            }
        }
    }
}

/// What happened since a step read [`Io::arrivals`] (see [`Io::since`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Since {
    /// An event arrived: step again.
    Arrived,
    /// Nothing arrived and nothing will (the host's events channel closed).
    Sealed,
    /// Nothing arrived yet.
    Nothing,
}

/// A registration of what an instance listens for; dropping it ends the registration.
pub struct Listening<'a> {
    link: Option<&'a HostLink>,
    io: &'a Io,
    events: &'static [EventSpec],
    /// The registration's ticket: its age, which decides who waited longest.
    ticket: Option<u64>,
    specs: Vec<usize>,
}

impl Listening<'_> {
    /// Listens for the events of `wait` instead, keeping the registration's age when they are
    /// the same.
    pub fn update(&mut self, wait: &Wait) {
        let Some(link) = self.link else {
            return;
        };
        // The host routes by its workflow's definitions; a sub-flow's own definitions count
        // where they are the same.
        let mut tokens: Vec<(usize, Option<&'static str>)> = {
            let mut state = self.io.inner.inbox().lock();
            state.waits_again();
            wait.events
                .iter()
                .filter_map(|spec| {
                    let index = self.events.iter().position(|own| own == *spec)?;
                    Some((index, spec.correlation))
                })
                .filter(|(_, token)| {
                    token.is_none_or(|attribute| !state.correlation.contains_key(attribute))
                })
                .collect()
        };
        tokens.sort_unstable();
        tokens.dedup();
        let specs: Vec<usize> = tokens.iter().map(|(index, _)| *index).collect();
        if self.ticket.is_some() && specs == self.specs {
            return;
        }
        let mut registry = registry::lock(&link.registry);
        if let Some(ticket) = self.ticket.take() {
            registry.end_wait(ticket, &self.specs);
        }
        self.specs = specs;
        if !self.specs.is_empty() {
            self.ticket = Some(registry.begin_wait(link.instance, &tokens));
        }
    }
}

/// A registration that outlives its [`Listening`] guard: what a host keeps of an instance it
/// parked (holds as data, no task) while it waits, so that the instance keeps its age among the
/// waiters and its events keep reaching it.
#[derive(Debug, Default)]
pub(crate) struct Registration {
    ticket: Option<u64>,
    specs: Vec<usize>,
}

impl Listening<'_> {
    /// Ends the guard but not the registration, which [`Io::resume_listening`] takes back.
    pub(crate) fn detach(mut self) -> Registration {
        Registration {
            ticket: self.ticket.take(),
            specs: std::mem::take(&mut self.specs),
        }
    }
}

impl Io {
    /// The guard of a registration detached by [`Listening::detach`], for the same definitions.
    pub(crate) fn resume_listening(
        &self,
        events: &'static [EventSpec],
        registration: Registration,
    ) -> Listening<'_> {
        Listening {
            link: self.inner.link.as_ref(),
            io: self,
            events,
            ticket: registration.ticket,
            specs: registration.specs,
        }
    }
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        if let (Some(link), Some(ticket)) = (self.link, self.ticket) {
            registry::lock(&link.registry).end_wait(ticket, &self.specs);
        }
    }
}
