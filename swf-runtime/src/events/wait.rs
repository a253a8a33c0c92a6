//! Waiting for events: [`Io::wait_any`] and [`Io::wait_all`].

use std::collections::BTreeMap;
use std::pin::{Pin, pin};
use std::time::Duration;

use cloudevents::Event;
use tokio::sync::futures::Notified;
use tokio::time::Instant;

use super::inbox::Queued;
use super::io::HostLink;
use super::registry;
use super::{EVENT_ERROR, EventSpec, Io};
use crate::error::ErrorObject;

impl Io {
    /// Waits until the inbox holds an event of one of the definitions `events[i]` for `i` in
    /// `wanted` that agrees with this instance's correlation, for at most `timeout` (tokio
    /// time; `None` waits as long as it takes).
    ///
    /// An event agrees when, for a definition with a correlation token, it carries that
    /// attribute and the instance is bound to the same value or to none (then it binds the
    /// instance). The oldest agreeing event is taken; if it suits several wanted definitions,
    /// the first in `wanted` order is reported. While waiting, a hosted instance is registered
    /// as waiting for `wanted`, so that its host routes uncorrelated events to it.
    ///
    /// Returns the index of the definition in `events` and the event, or `None` when the
    /// timeout elapsed first.
    ///
    /// # Errors
    /// An `EventError` when `wanted` is empty or names no definition of `events`: a bug of the
    /// code generator, reported rather than waited on forever.
    pub async fn wait_any(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        timeout: Option<Duration>,
    ) -> Result<Option<(usize, Event)>, ErrorObject> {
        let specs = resolve(events, wanted)?;
        if specs.is_empty() {
            return Err(ErrorObject::new(
                EVENT_ERROR,
                "a wait for any of no events can never end",
            ));
        }
        let deadline = deadline(timeout);
        let _waiting = WaitGuard::begin(self, &specs);
        loop {
            let mut arrived = pin!(self.inner.inbox.arrived());
            arrived.as_mut().enable();
            if let Some(found) = self.take_any(&specs) {
                return Ok(Some(found));
            }
            if !arrival_before(arrived, deadline).await {
                return Ok(None);
            }
        }
    }

    /// Waits until one event of each definition `events[i]` for `i` in `wanted` has arrived,
    /// in any order, all agreeing with this instance's correlation (see [`Io::wait_any`]; each
    /// event taken binds the values it carries, so later ones must agree with it), for at most
    /// `timeout` from the call.
    ///
    /// Returns the definition indexes and events in `wanted` order, or `None` when the timeout
    /// elapsed first. The events taken before a timeout (or before the wait is cancelled) are
    /// put back into the inbox at their places; the correlation values they bound stay bound,
    /// as the events stay with this instance.
    ///
    /// # Errors
    /// An `EventError` when `wanted` names no definition of `events`.
    pub async fn wait_all(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        timeout: Option<Duration>,
    ) -> Result<Option<Vec<(usize, Event)>>, ErrorObject> {
        self.wait_until(
            events,
            wanted,
            &|arrived| arrived.iter().all(|a| *a),
            timeout,
        )
        .await
    }

    /// Waits until `holds` is true of which definitions `events[i]` for `i` in `wanted` have an
    /// event (`arrived[k]` for `wanted[k]`), taking the events as they arrive, with the
    /// correlation rules of [`Io::wait_any`], for at most `timeout` from the call. This is the
    /// earlier drafts' condition over event names: `(a or b) and c`.
    ///
    /// Returns the definition indexes and events taken, in `wanted` order, or `None` when the
    /// timeout elapsed first (the events taken so far are put back, as by [`Io::wait_all`]).
    ///
    /// # Errors
    /// An `EventError` when `wanted` names no definition of `events`, or when `holds` cannot
    /// become true even with every event (the wait could never end).
    pub async fn wait_until(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        holds: &(dyn Fn(&[bool]) -> bool + Sync),
        timeout: Option<Duration>,
    ) -> Result<Option<Vec<(usize, Event)>>, ErrorObject> {
        let specs = resolve(events, wanted)?;
        Ok(self
            .wait_slots(&specs, holds, timeout)
            .await?
            .map(|mut taken| taken.finish(&specs, None)))
    }

    /// Waits, as [`Io::wait_until`] does, until the condition of one of `entries` holds (the
    /// earlier drafts' event state: each entry with its condition over event names); the first
    /// entry in order whose condition holds wins.
    ///
    /// Returns that entry's index and the events it names (`uses`: positions in `wanted`), in
    /// `wanted` order. Events taken while waiting that it does not name are put back into the
    /// inbox at their places, for a later wait. `None` when the timeout elapsed first.
    ///
    /// # Errors
    /// As [`Io::wait_until`].
    pub async fn wait_entries(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        entries: &[EventEntry<'_>],
        timeout: Option<Duration>,
    ) -> Result<Option<(usize, Vec<(usize, Event)>)>, ErrorObject> {
        let specs = resolve(events, wanted)?;
        let first_holding = |present: &[bool]| entries.iter().position(|e| (e.holds)(present));
        let any = |present: &[bool]| first_holding(present).is_some();
        let Some(mut taken) = self.wait_slots(&specs, &any, timeout).await? else {
            return Ok(None);
        };
        let present: Vec<bool> = taken.slots.iter().map(Option::is_some).collect();
        let Some(entry) = first_holding(&present) else {
            return Ok(None);
        };
        let uses = entries.get(entry).map_or(&[][..], |e| e.uses);
        Ok(Some((entry, taken.finish(&specs, Some(uses)))))
    }

    /// Takes events into one slot per entry of `specs` until `holds` is true of which slots are
    /// filled; `None` when the timeout elapsed first. The slots go back into the inbox when the
    /// returned guard is dropped, except those `Taken::finish` takes out.
    async fn wait_slots<'s>(
        &'s self,
        specs: &[(usize, &'static EventSpec)],
        holds: &(dyn Fn(&[bool]) -> bool + Sync),
        timeout: Option<Duration>,
    ) -> Result<Option<Taken<'s>>, ErrorObject> {
        if !holds(&vec![true; specs.len()]) {
            return Err(ErrorObject::new(
                EVENT_ERROR,
                "the events awaited can never satisfy the condition",
            ));
        }
        let deadline = deadline(timeout);
        let mut waiting = WaitGuard::begin(self, specs);
        let mut taken = Taken {
            io: self,
            slots: specs.iter().map(|_| None).collect(),
        };
        loop {
            let mut arrived = pin!(self.inner.inbox.arrived());
            arrived.as_mut().enable();
            let took = self.take_missing(specs, &mut taken.slots);
            let present: Vec<bool> = taken.slots.iter().map(Option::is_some).collect();
            if holds(&present) {
                return Ok(Some(taken));
            }
            let missing: Vec<usize> = specs
                .iter()
                .zip(&taken.slots)
                .filter(|(_, slot)| slot.is_none())
                .map(|((index, _), _)| *index)
                .collect();
            if took {
                waiting.narrow(&missing);
            }
            if !arrival_before(arrived, deadline).await {
                return Ok(None);
            }
        }
    }

    /// Takes the oldest event that suits one of `specs`, binding the values it carries.
    fn take_any(&self, specs: &[(usize, &EventSpec)]) -> Option<(usize, Event)> {
        let (index, event, bound) = {
            let mut guard = self.inner.inbox.lock();
            let state = &mut *guard;
            let (position, index, fit) =
                state
                    .events
                    .iter()
                    .enumerate()
                    .find_map(|(position, queued)| {
                        specs.iter().find_map(|&(index, spec)| {
                            fit(spec, &queued.event, &state.correlation)
                                .map(|fit| (position, index, fit))
                        })
                    })?;
            let queued = state.events.remove(position)?;
            let bound = fit.filter(|(attribute, value)| state.bind(attribute, value));
            (index, queued.event, bound)
        };
        self.inner.inbox.notify_freed();
        if let Some((attribute, value)) = bound {
            self.index(attribute, &value);
        }
        Some((index, event))
    }

    /// Fills the empty slots (one per entry of `specs`) with the oldest suitable events, binding
    /// as it goes; true when it took any.
    fn take_missing(&self, specs: &[(usize, &EventSpec)], slots: &mut [Option<Queued>]) -> bool {
        let mut bound = Vec::new();
        let mut took = false;
        {
            let mut guard = self.inner.inbox.lock();
            let state = &mut *guard;
            let mut position = 0;
            while position < state.events.len() && slots.iter().any(Option::is_none) {
                let hit = state.events.get(position).and_then(|queued| {
                    specs
                        .iter()
                        .zip(slots.iter())
                        .enumerate()
                        .filter(|(_, (_, slot))| slot.is_none())
                        .find_map(|(slot, (&(_, spec), _))| {
                            fit(spec, &queued.event, &state.correlation).map(|fit| (slot, fit))
                        })
                });
                let Some((slot, fit)) = hit else {
                    position += 1;
                    continue;
                };
                if let Some((attribute, value)) = fit
                    && state.bind(attribute, &value)
                {
                    bound.push((attribute, value));
                }
                if let Some(place) = slots.get_mut(slot) {
                    *place = state.events.remove(position);
                    took = true;
                }
            }
        }
        if took {
            self.inner.inbox.notify_freed();
        }
        for (attribute, value) in bound {
            self.index(attribute, &value);
        }
        took
    }
}

/// Whether `spec` accepts `event` for an instance bound to `correlation`: `None` if not, else
/// the correlation value the event would bind (attribute, value), if the definition has a token.
fn fit(
    spec: &EventSpec,
    event: &Event,
    correlation: &BTreeMap<String, String>,
) -> Option<Option<(&'static str, String)>> {
    if !spec.matches(event) {
        return None;
    }
    let Some(attribute) = spec.correlation else {
        return Some(None);
    };
    let value = spec.correlation_value(event)?;
    match correlation.get(attribute) {
        Some(bound) if *bound != value => None,
        _ => Some(Some((attribute, value))),
    }
}

/// The definitions `wanted` names, with their indexes.
fn resolve(
    events: &'static [EventSpec],
    wanted: &[usize],
) -> Result<Vec<(usize, &'static EventSpec)>, ErrorObject> {
    wanted
        .iter()
        .map(|&index| {
            events.get(index).map(|spec| (index, spec)).ok_or_else(|| {
                ErrorObject::new(
                    EVENT_ERROR,
                    format!(
                        "a wait names event definition #{index}, but the workflow has {}",
                        events.len()
                    ),
                )
            })
        })
        .collect()
}

/// When a wait of `timeout` from now ends; `None` for no timeout (or one beyond tokio's range).
fn deadline(timeout: Option<Duration>) -> Option<Instant> {
    timeout.and_then(|timeout| Instant::now().checked_add(timeout))
}

/// Waits for `arrived` until `deadline`; false when the deadline came first.
async fn arrival_before(arrived: Pin<&mut Notified<'_>>, deadline: Option<Instant>) -> bool {
    match deadline {
        None => {
            arrived.await;
            true
        }
        Some(deadline) => tokio::time::timeout_at(deadline, arrived).await.is_ok(),
    }
}

/// A hosted instance's registration as waiting for some definitions, undone on drop (also when
/// the wait is cancelled).
struct WaitGuard<'a> {
    link: Option<&'a HostLink>,
    ticket: u64,
    specs: Vec<usize>,
}

impl<'a> WaitGuard<'a> {
    fn begin(io: &'a Io, wanted: &[(usize, &EventSpec)]) -> Self {
        let mut tokens: Vec<(usize, Option<&str>)> = wanted
            .iter()
            .map(|&(index, spec)| (index, spec.correlation))
            .collect();
        tokens.sort_unstable();
        tokens.dedup();
        let link = io.inner.link.as_ref();
        let ticket = link.map_or(0, |link| {
            registry::lock(&link.registry).begin_wait(link.instance, &tokens)
        });
        Self {
            link,
            ticket,
            specs: tokens.into_iter().map(|(index, _)| index).collect(),
        }
    }

    /// Stops waiting for the definitions not in `missing`, keeping the wait's age.
    fn narrow(&mut self, missing: &[usize]) {
        let (keep, done): (Vec<usize>, Vec<usize>) =
            self.specs.iter().partition(|spec| missing.contains(spec));
        if let Some(link) = self.link {
            registry::lock(&link.registry).end_wait(self.ticket, &done);
        }
        self.specs = keep;
    }
}

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        if let Some(link) = self.link {
            registry::lock(&link.registry).end_wait(self.ticket, &self.specs);
        }
    }
}

/// The events a `wait_all` took so far, put back into the inbox unless the wait completes.
struct Taken<'a> {
    io: &'a Io,
    slots: Vec<Option<Queued>>,
}

impl Taken<'_> {
    /// Takes out the events of the slots at `keep` (all of them for `None`), with their
    /// definitions' indexes; the others go back into the inbox when `self` is dropped.
    fn finish(
        &mut self,
        specs: &[(usize, &EventSpec)],
        keep: Option<&[usize]>,
    ) -> Vec<(usize, Event)> {
        specs
            .iter()
            .zip(self.slots.iter_mut())
            .enumerate()
            .filter(|(position, _)| keep.is_none_or(|keep| keep.contains(position)))
            .filter_map(|(_, (&(index, _), slot))| slot.take().map(|queued| (index, queued.event)))
            .collect()
    }
}

/// One entry of an earlier draft's event state, for [`Io::wait_entries`].
pub struct EventEntry<'a> {
    /// Its condition over which of the wanted definitions have an event (`arrived[k]` for
    /// `wanted[k]`).
    pub holds: &'a (dyn Fn(&[bool]) -> bool + Sync),
    /// The positions in `wanted` of the definitions it names: the events it takes.
    pub uses: &'a [usize],
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let taken: Vec<Queued> = std::mem::take(&mut self.slots)
            .into_iter()
            .flatten()
            .collect();
        self.io.inner.inbox.put_back(taken);
    }
}
