//! Events that create instances, for a workflow whose start task is an event task.
//!
//! With `exclusive: true` each starting event creates an instance. With `exclusive: false` one
//! event of each starting definition is needed: events wait in groups, keyed by the correlation
//! values they carry (a single key when the definitions have no token), until a group is
//! complete. Per the tasks draft, a group's timeout starts with its first event and restarts
//! with each further one; a group that times out creates nothing and gives its events back.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use cloudevents::Event;
use tokio::time::Instant;

use super::StartOnEvents;
use crate::events::EventSpec;

/// Correlation attribute → value.
type Key = BTreeMap<&'static str, String>;

/// What to do with an event offered to [`Starting`].
#[derive(Debug)]
pub(super) enum Offer {
    /// None of its definitions starts instances.
    NotStarting(Event),
    /// It cannot start one, for this reason.
    Refused(Event, String),
    /// It joined a group that waits for the other starting events.
    Held,
    /// Create an instance bound to `correlation`, with `events` in its inbox (arrival order).
    Start {
        correlation: Key,
        events: Vec<Event>,
    },
}

/// The starting rules of one workflow and the groups of events waiting to start an instance.
#[derive(Debug)]
pub(super) struct Starting {
    on: StartOnEvents,
    groups: BTreeMap<u64, Group>,
    /// Key → its groups, oldest first.
    by_key: BTreeMap<Key, VecDeque<u64>>,
    deadlines: BTreeSet<(Instant, u64)>,
    next_group: u64,
}

#[derive(Debug)]
struct Group {
    key: Key,
    /// Per entry of `StartOnEvents::events`: whether the group has that event.
    filled: Vec<bool>,
    events: Vec<Event>,
    deadline: Option<Instant>,
}

impl Starting {
    pub(super) fn new(on: StartOnEvents) -> Self {
        Self {
            on,
            groups: BTreeMap::new(),
            by_key: BTreeMap::new(),
            deadlines: BTreeSet::new(),
            next_group: 0,
        }
    }

    /// Offers `event`, which matches the definitions `matching` (indexes into `specs`), at `now`.
    pub(super) fn offer(
        &mut self,
        event: Event,
        matching: &[usize],
        specs: &[EventSpec],
        now: Instant,
    ) -> Offer {
        let positions: Vec<usize> = (0..self.on.events.len())
            .filter(|&position| {
                self.on
                    .events
                    .get(position)
                    .is_some_and(|index| matching.contains(index))
            })
            .collect();
        if positions.is_empty() {
            return Offer::NotStarting(event);
        }
        let mut key = Key::new();
        for spec in positions
            .iter()
            .filter_map(|&position| self.on.events.get(position))
            .filter_map(|&index| specs.get(index))
        {
            let Some(attribute) = spec.correlation else {
                continue;
            };
            let Some(value) = spec.correlation_value(&event) else {
                let reason = format!(
                    "it lacks the correlation attribute `{attribute}` of event definition `{}`",
                    spec.name
                );
                return Offer::Refused(event, reason);
            };
            key.insert(attribute, value);
        }
        if self.on.exclusive {
            return Offer::Start {
                correlation: key,
                events: vec![event],
            };
        }
        self.join(key, &positions, event, now)
    }

    /// Adds `event` to the oldest group of `key` that lacks one of its `positions`, or to a new
    /// group; starts an instance if that completes the group.
    fn join(&mut self, key: Key, positions: &[usize], event: Event, now: Instant) -> Offer {
        let lacking = |group: &Group| {
            positions
                .iter()
                .copied()
                .find(|&position| !group.filled.get(position).copied().unwrap_or(true))
        };
        let existing = self.by_key.get(&key).and_then(|ids| {
            ids.iter().copied().find_map(|id| {
                let position = lacking(self.groups.get(&id)?)?;
                Some((id, position))
            })
        });
        let (id, position) = existing.unwrap_or_else(|| {
            let id = self.next_group;
            self.next_group += 1;
            let group = Group {
                key: key.clone(),
                filled: vec![false; self.on.events.len()],
                events: Vec::new(),
                deadline: None,
            };
            self.groups.insert(id, group);
            self.by_key.entry(key).or_default().push_back(id);
            (id, positions.first().copied().unwrap_or_default())
        });
        let deadline = self.on.timeout.and_then(|timeout| now.checked_add(timeout));
        let Some(group) = self.groups.get_mut(&id) else {
            return Offer::Held;
        };
        if let Some(slot) = group.filled.get_mut(position) {
            *slot = true;
        }
        group.events.push(event);
        if let Some(old) = group.deadline.take() {
            self.deadlines.remove(&(old, id));
        }
        group.deadline = deadline;
        if let Some(deadline) = deadline {
            self.deadlines.insert((deadline, id));
        }
        if group.filled.iter().all(|&filled| filled) {
            let group = self.remove(id);
            return group.map_or(Offer::Held, |group| Offer::Start {
                correlation: group.key,
                events: group.events,
            });
        }
        Offer::Held
    }

    /// The events of the groups whose timeout elapsed at `now`, oldest deadline first, each
    /// group's in arrival order.
    pub(super) fn expire(&mut self, now: Instant) -> Vec<Event> {
        let due: Vec<u64> = self
            .deadlines
            .iter()
            .take_while(|(deadline, _)| *deadline <= now)
            .map(|&(_, id)| id)
            .collect();
        due.into_iter()
            .filter_map(|id| self.remove(id))
            .flat_map(|group| group.events)
            .collect()
    }

    /// When the next group times out.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.first().map(|&(deadline, _)| deadline)
    }

    /// Every event still waiting in a group, oldest group first.
    pub(super) fn drain(&mut self) -> Vec<Event> {
        self.deadlines.clear();
        self.by_key.clear();
        std::mem::take(&mut self.groups)
            .into_values()
            .flat_map(|group| group.events)
            .collect()
    }

    /// Why the events of a group that timed out did not start an instance.
    pub(super) fn timeout_reason(&self) -> String {
        let timeout = self
            .on
            .timeout
            .map(crate::iso::duration)
            .unwrap_or_default();
        format!("the other starting events did not arrive within {timeout}")
    }

    fn remove(&mut self, id: u64) -> Option<Group> {
        let group = self.groups.remove(&id)?;
        if let Some(deadline) = group.deadline {
            self.deadlines.remove(&(deadline, id));
        }
        if let Some(ids) = self.by_key.get_mut(&group.key) {
            ids.retain(|&other| other != id);
            if ids.is_empty() {
                self.by_key.remove(&group.key);
            }
        }
        Some(group)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use cloudevents::{AttributesReader, EventBuilder, EventBuilderV10};

    use super::*;

    const SPECS: &[EventSpec] = &[
        EventSpec {
            name: "A",
            source: "s",
            event_type: "a",
            correlation: Some("orderid"),
        },
        EventSpec {
            name: "B",
            source: "s",
            event_type: "b",
            correlation: Some("orderid"),
        },
    ];

    const ALL: StartOnEvents = StartOnEvents {
        events: &[0, 1],
        exclusive: false,
        timeout: Some(Duration::from_secs(120)),
    };

    fn event(ty: &str, id: &str, order: Option<&str>) -> Event {
        let builder = EventBuilderV10::new().id(id).source("s").ty(ty);
        let builder = match order {
            Some(order) => builder.extension("orderid", order),
            None => builder,
        };
        builder.build().unwrap_or_default()
    }

    fn matching(event: &Event) -> Vec<usize> {
        (0..SPECS.len())
            .filter(|&index| SPECS.get(index).is_some_and(|spec| spec.matches(event)))
            .collect()
    }

    fn offer(starting: &mut Starting, event: Event, at: Instant) -> Offer {
        let matching = matching(&event);
        starting.offer(event, &matching, SPECS, at)
    }

    fn ids(events: &[Event]) -> Vec<&str> {
        events.iter().map(AttributesReader::id).collect()
    }

    #[test]
    fn groups_complete_per_correlation_value() {
        let now = Instant::now();
        let mut starting = Starting::new(ALL);
        assert!(matches!(
            offer(&mut starting, event("a", "a1", Some("1")), now),
            Offer::Held
        ));
        assert!(matches!(
            offer(&mut starting, event("a", "a2", Some("2")), now),
            Offer::Held
        ));
        assert!(matches!(
            offer(&mut starting, event("a", "a1'", Some("1")), now),
            Offer::Held
        ));
        let Offer::Start {
            correlation,
            events,
        } = offer(&mut starting, event("b", "b1", Some("1")), now)
        else {
            panic!("order 1 has both events");
        };
        assert_eq!(correlation.get("orderid").map(String::as_str), Some("1"));
        assert_eq!(ids(&events), ["a1", "b1"]);
        let Offer::Start { events, .. } = offer(&mut starting, event("b", "b1'", Some("1")), now)
        else {
            panic!("the second group of order 1 completes too");
        };
        assert_eq!(ids(&events), ["a1'", "b1'"]);
        assert_eq!(ids(&starting.drain()), ["a2"]);
    }

    #[test]
    fn the_timeout_restarts_with_each_event() {
        let start = Instant::now();
        let at = |secs| start + Duration::from_secs(secs);
        let on = StartOnEvents {
            events: &[0, 1, 0],
            ..ALL
        };
        let mut starting = Starting::new(on);
        assert!(matches!(
            offer(&mut starting, event("a", "a", Some("1")), at(0)),
            Offer::Held
        ));
        assert_eq!(starting.next_deadline(), Some(at(120)));
        assert!(matches!(
            offer(&mut starting, event("b", "b", Some("1")), at(100)),
            Offer::Held
        ));
        assert_eq!(starting.next_deadline(), Some(at(220)));
        assert!(starting.expire(at(219)).is_empty());
        assert_eq!(ids(&starting.expire(at(220))), ["a", "b"]);
        assert_eq!(starting.next_deadline(), None);
        assert_eq!(
            starting.timeout_reason(),
            "the other starting events did not arrive within PT2M"
        );
    }

    #[test]
    fn exclusive_starts_at_once_and_uncorrelated_or_lacking_events_say_why() {
        let mut starting = Starting::new(StartOnEvents {
            exclusive: true,
            ..ALL
        });
        let now = Instant::now();
        assert!(matches!(
            offer(&mut starting, event("a", "a", Some("7")), now),
            Offer::Start { events, .. } if events.len() == 1
        ));
        let Offer::Refused(_, reason) = offer(&mut starting, event("b", "b", None), now) else {
            panic!("the event lacks its correlation attribute");
        };
        assert_eq!(
            reason,
            "it lacks the correlation attribute `orderid` of event definition `B`"
        );
        let Offer::NotStarting(_) = starting.offer(event("c", "c", None), &[], SPECS, now) else {
            panic!("an event of no starting definition starts nothing");
        };
    }
}
