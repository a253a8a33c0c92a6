//! Taking events from an instance's inbox: [`Io::take_any`], [`Io::take_all`],
//! [`Io::take_until`] and [`Io::take_entries`]. None of them waits: a step that finds nothing
//! to take reports what it waits for, and its driver waits (see [`Io::wait_for`]).
//!
//! Each takes the deadline of the wait (`until`): an event known to have arrived at or after
//! it (a durable host's stored events carry their arrival) is left in the inbox, since the
//! wait had ended by then. So a step that runs late, after workers were down past the
//! deadline, times out as the wait did, rather than taking what came too late.

use std::borrow::Cow;
use std::sync::Arc;

use cloudevents::Event;
use jiff::Timestamp;

use super::inbox::{Bindings, InboxState};
use super::{EVENT_ERROR, EventSpec, Io};
use crate::error::ErrorObject;

/// One entry of an earlier draft's event state, for [`Io::take_entries`].
pub struct EventEntry<'a> {
    /// Its condition over which of the wanted definitions have an event (`arrived[k]` for
    /// `wanted[k]`).
    pub holds: &'a (dyn Fn(&[bool]) -> bool + Sync),
    /// The positions in `wanted` of the definitions it names: the events it takes.
    pub uses: &'a [usize],
}

impl Io {
    /// Takes the oldest event in the inbox of one of the definitions `events[i]` for `i` in
    /// `wanted` that agrees with this instance's correlation; `None` when there is none.
    ///
    /// An event agrees when, for a definition with a correlation token, it carries that
    /// attribute and the instance is bound to the same value or to none (then it binds the
    /// instance). If it suits several wanted definitions, the first in `wanted` order is
    /// reported. Returns the index of the definition in `events` and the event, in the box the
    /// host's router put it in (not moved again on its way to the step that takes it). An event
    /// known to have arrived at or after `until`, the wait's deadline, is not taken (see the
    /// module); nor by the other `take_*`.
    ///
    /// # Errors
    /// An `EventError` when `wanted` is empty or names no definition of `events`: a bug of the
    /// code generator, reported rather than waited on forever.
    pub fn take_any(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        until: Option<Timestamp>,
    ) -> Result<Option<(usize, Box<Event>)>, ErrorObject> {
        // Checked, not collected: this runs for every event an instance takes.
        if let Some(&index) = wanted.iter().find(|&&index| events.get(index).is_none()) {
            return Err(unknown_definition(index, events));
        }
        if wanted.is_empty() {
            return Err(ErrorObject::new(
                EVENT_ERROR,
                "a wait for any of no events can never end",
            ));
        }
        let specs = || {
            wanted
                .iter()
                .filter_map(|&index| events.get(index).map(|spec| (index, spec)))
        };
        let marks = self.marks_taking();
        let taken = {
            let mut guard = self.inner.inbox().lock();
            let state = &mut *guard;
            let found = state
                .events
                .iter()
                .enumerate()
                .filter(|(_, queued)| !queued.arrived_after(until))
                .find_map(|(position, queued)| {
                    specs().find_map(|(index, spec)| {
                        fit(spec, &queued.event, &state.correlation)
                            .map(|fit| (position, index, fit))
                    })
                });
            found.and_then(|(position, index, fit)| {
                let queued = state.take(position)?;
                if marks {
                    state.took_its_events();
                }
                let bound = fit.and_then(|(attribute, value)| {
                    state
                        .bind(attribute, &value)
                        .map(|value| (attribute, value))
                });
                Some((index, queued.event, bound))
            })
        };
        let Some((index, event, bound)) = taken else {
            return Ok(None);
        };
        self.inner.inbox().notify_freed();
        if let Some((attribute, value)) = bound {
            self.index(attribute, &value);
        }
        Ok(Some((index, event)))
    }

    /// Takes one event of each definition `events[i]` for `i` in `wanted`, all agreeing with
    /// this instance's correlation (each event taken binds the values it carries, so the others
    /// must agree with it), or nothing when the inbox does not hold them all.
    ///
    /// Returns the definition indexes and events in `wanted` order.
    ///
    /// # Errors
    /// An `EventError` when `wanted` names no definition of `events`.
    pub fn take_all(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        until: Option<Timestamp>,
    ) -> Result<Option<Vec<(usize, Event)>>, ErrorObject> {
        self.take_until(events, wanted, &|arrived| arrived.iter().all(|a| *a), until)
    }

    /// Takes events of the definitions `events[i]` for `i` in `wanted` (the oldest suitable
    /// ones, with the correlation rules of [`Io::take_all`]) once `holds` is true of which
    /// definitions have one (`arrived[k]` for `wanted[k]`); nothing while it is not. This is the
    /// earlier drafts' condition over event names: `(a or b) and c`.
    ///
    /// # Errors
    /// An `EventError` when `wanted` names no definition of `events`, or when `holds` cannot
    /// become true even with every event (the wait could never end).
    pub fn take_until(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        holds: &(dyn Fn(&[bool]) -> bool + Sync),
        until: Option<Timestamp>,
    ) -> Result<Option<Vec<(usize, Event)>>, ErrorObject> {
        let specs = resolve(events, wanted)?;
        satisfiable(&specs, holds)?;
        let all: Vec<usize> = (0..specs.len()).collect();
        Ok(self
            .take_slots(
                &specs,
                &|present| holds(present).then(|| (0, all.clone())),
                until,
            )
            .map(|(_, taken)| taken))
    }

    /// Takes, as [`Io::take_until`] does, the events of the first of `entries` (in order) whose
    /// condition holds: the earlier drafts' event state, each entry with its condition over
    /// event names. Events the entry does not name stay in the inbox, for a later wait.
    ///
    /// Returns that entry's index and the events it names (`uses`: positions in `wanted`), in
    /// `wanted` order; `None` while no entry's condition holds.
    ///
    /// # Errors
    /// As [`Io::take_until`].
    pub fn take_entries(
        &self,
        events: &'static [EventSpec],
        wanted: &[usize],
        entries: &[EventEntry<'_>],
        until: Option<Timestamp>,
    ) -> Result<Option<(usize, Taken)>, ErrorObject> {
        let specs = resolve(events, wanted)?;
        satisfiable(&specs, &|present| {
            entries.iter().any(|e| (e.holds)(present))
        })?;
        let decide = |present: &[bool]| {
            let entry = entries.iter().position(|e| (e.holds)(present))?;
            entries.get(entry).map(|e| (entry, e.uses.to_vec()))
        };
        Ok(self.take_slots(&specs, &decide, until))
    }

    /// Fills one slot per entry of `specs` with the oldest suitable events, in arrival order,
    /// binding tentatively as it goes, until `decide` says which slots to take (and a tag for
    /// the caller); then takes those events (binding what they carry) and leaves the others.
    /// Nothing changes when `decide` never says.
    fn take_slots(
        &self,
        specs: &[(usize, &'static EventSpec)],
        decide: &Decide<'_>,
        until: Option<Timestamp>,
    ) -> Option<(usize, Taken)> {
        let marks = self.marks_taking();
        let (taken, bound) = {
            let mut guard = self.inner.inbox().lock();
            let state = &mut *guard;
            let (positions, (tag, keep)) = choose(state, specs, decide, until)?;
            let (events, bound) = take_chosen(state, specs, &positions, &keep);
            if marks {
                state.took_its_events();
            }
            ((tag, events), bound)
        };
        self.inner.inbox().notify_freed();
        for (attribute, value) in bound {
            self.index(attribute, &value);
        }
        Some(taken)
    }
}

impl Io {
    /// Whether a take here marks that the instance took what it waited for
    /// ([`InboxState::took_its_events`]): only a host's router reads it, and a member of a
    /// parallel or foreach task does not say it for its siblings.
    fn marks_taking(&self) -> bool {
        self.is_hosted() && !crate::action::in_nested_scope()
    }
}

/// Which slots to take, given which are filled: a tag for the caller and the slots.
type Decide<'a> = dyn Fn(&[bool]) -> Option<Decision> + 'a;

/// A tag for the caller (the entry taken) and the slots to take.
type Decision = (usize, Vec<usize>);

/// Events taken, each with the index of its definition.
type Taken = Vec<(usize, Event)>;

/// Correlation values bound (attribute, value as the inbox holds it).
type Bound = Vec<(&'static str, Arc<str>)>;

/// The most correlation values [`choose`] tries one by one, when binding the first value it met
/// left no set complete.
const VALUES_TRIED: usize = 64;

/// The inbox positions filling each slot (`None`: empty) when `decide` first says which slots
/// to take, and what it said.
///
/// Events are taken in arrival order, each binding the values it carries for the next, so an
/// unbound instance is bound to the first value met. When that leaves no set complete, each
/// other value the inbox holds (of the first [`VALUES_TRIED`]) is tried in turn: with
/// heart-rate readings of patients 1 and 2 and a blood pressure of patient 2, a wait for both
/// takes patient 2's pair rather than waiting on patient 1's.
fn choose(
    state: &InboxState,
    specs: &[(usize, &EventSpec)],
    decide: &Decide<'_>,
    until: Option<Timestamp>,
) -> Option<(Vec<Option<usize>>, Decision)> {
    if let Some(found) = choose_under(state, specs, decide, until, state.correlation.clone()) {
        return Some(found);
    }
    let mut tried: Vec<(&'static str, String)> = Vec::new();
    for queued in &state.events {
        if queued.arrived_after(until) {
            continue;
        }
        for (_, spec) in specs {
            let Some(Some(value)) = fit(spec, &queued.event, &state.correlation) else {
                continue;
            };
            if tried.contains(&value) {
                continue;
            }
            if tried.len() == VALUES_TRIED {
                return None;
            }
            let mut correlation = state.correlation.clone();
            correlation.insert(Cow::Borrowed(value.0), Arc::from(value.1.as_str()));
            tried.push(value);
            if let Some(found) = choose_under(state, specs, decide, until, correlation) {
                return Some(found);
            }
        }
    }
    None
}

/// [`choose`] with the values of `correlation` bound.
fn choose_under(
    state: &InboxState,
    specs: &[(usize, &EventSpec)],
    decide: &Decide<'_>,
    until: Option<Timestamp>,
    mut correlation: Bindings,
) -> Option<(Vec<Option<usize>>, Decision)> {
    let mut positions: Vec<Option<usize>> = vec![None; specs.len()];
    // A condition that holds with no event at all (a wait for nothing) is met at once.
    if let Some(keep) = decide(&vec![false; specs.len()]) {
        return Some((positions, keep));
    }
    for (position, queued) in state.events.iter().enumerate() {
        if queued.arrived_after(until) {
            continue;
        }
        let hit = specs
            .iter()
            .zip(&positions)
            .enumerate()
            .filter(|(_, (_, slot))| slot.is_none())
            .find_map(|(slot, (&(_, spec), _))| {
                fit(spec, &queued.event, &correlation).map(|fit| (slot, fit))
            });
        let Some((slot, fit)) = hit else {
            continue;
        };
        if let Some((attribute, value)) = fit {
            correlation.insert(Cow::Borrowed(attribute), Arc::from(value));
        }
        if let Some(place) = positions.get_mut(slot) {
            *place = Some(position);
        }
        let present: Vec<bool> = positions.iter().map(Option::is_some).collect();
        if let Some(keep) = decide(&present) {
            return Some((positions, keep));
        }
        if positions.iter().all(Option::is_some) {
            return None;
        }
    }
    None
}

/// Takes the events of the slots `keep` (positions into `positions`), binding what they carry;
/// returns the events (definition index and event, in slot order) and the values bound.
fn take_chosen(
    state: &mut InboxState,
    specs: &[(usize, &'static EventSpec)],
    positions: &[Option<usize>],
    keep: &[usize],
) -> (Taken, Bound) {
    let mut chosen: Vec<(usize, usize)> = keep
        .iter()
        .filter_map(|&slot| positions.get(slot).copied().flatten().map(|p| (slot, p)))
        .collect();
    // Remove from the back so that earlier positions stay valid.
    chosen.sort_unstable_by_key(|&(_, position)| std::cmp::Reverse(position));
    let mut taken: Vec<(usize, usize, Event)> = Vec::new();
    for (slot, position) in chosen {
        if let Some(queued) = state.take(position) {
            taken.push((slot, specs.get(slot).map_or(0, |s| s.0), *queued.event));
        }
    }
    taken.sort_unstable_by_key(|(slot, _, _)| *slot);
    let mut bound = Vec::new();
    for (slot, _, event) in &taken {
        let Some(&(_, spec)) = specs.get(*slot) else {
            continue;
        };
        if let Some(attribute) = spec.correlation
            && let Some(value) = spec.correlation_text(event)
            && let Some(value) = state.bind(attribute, &value)
        {
            bound.push((attribute, value));
        }
    }
    let events = taken
        .into_iter()
        .map(|(_, index, event)| (index, event))
        .collect();
    (events, bound)
}

/// An error when `holds` is false even with an event of every definition.
fn satisfiable(
    specs: &[(usize, &'static EventSpec)],
    holds: &dyn Fn(&[bool]) -> bool,
) -> Result<(), ErrorObject> {
    if holds(&vec![true; specs.len()]) {
        Ok(())
    } else {
        Err(ErrorObject::new(
            EVENT_ERROR,
            "the events awaited can never satisfy the condition",
        ))
    }
}

/// Whether `spec` accepts `event` for an instance bound to `correlation`: `None` if not, else
/// the correlation value the event would bind (attribute, value), if the definition has a token
/// for which the instance is not bound yet.
pub(super) fn fit(
    spec: &EventSpec,
    event: &Event,
    correlation: &Bindings,
) -> Option<Option<(&'static str, String)>> {
    if !spec.matches(event) {
        return None;
    }
    let Some(attribute) = spec.correlation else {
        return Some(None);
    };
    let value = spec.correlation_text(event)?;
    match correlation.get(attribute) {
        Some(bound) if *bound != value => None,
        Some(_) => Some(None),
        None => Some(Some((attribute, value.into_owned()))),
    }
}

/// The definitions `wanted` names, with their indexes.
pub(super) fn resolve(
    events: &'static [EventSpec],
    wanted: &[usize],
) -> Result<Vec<(usize, &'static EventSpec)>, ErrorObject> {
    wanted
        .iter()
        .map(|&index| {
            events
                .get(index)
                .map(|spec| (index, spec))
                .ok_or_else(|| unknown_definition(index, events))
        })
        .collect()
}

fn unknown_definition(index: usize, events: &[EventSpec]) -> ErrorObject {
    ErrorObject::new(
        EVENT_ERROR,
        format!(
            "a wait names event definition #{index}, but the workflow has {}",
            events.len()
        ),
    )
}
