//! Which instances a host's router delivers an event to: instances indexed by their correlation
//! values, and the waits in progress indexed by the event definitions they wait for. Every
//! lookup is a map access, so routing stays cheap with many thousands of instances.
//!
//! Lock order: the registry lock, then an inbox lock, never the reverse; callers holding an
//! inbox lock release it before taking the registry lock.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cloudevents::Event;
use smallvec::SmallVec;

use super::EventSpec;
use super::inbox::{Inbox, Offered};
use crate::host::{ById, InstanceId};

/// The registry of one host.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    inboxes: ById<Arc<Inbox>>,
    /// Attribute → value → the instances bound to that value, in ascending order: mostly one,
    /// held inline (no allocation to make when an instance binds, none to free when it ends).
    /// In two levels so that a lookup borrows the event's value instead of building a key.
    correlated: Correlated,
    /// Event definition index → wait ticket (in the order waits began) → waiting instance.
    waiting: BTreeMap<usize, BTreeMap<u64, InstanceId>>,
    next_ticket: u64,
}

/// Attribute → value → instances. The attributes are a workflow's few correlation tokens,
/// found by comparing names rather than hashing one more string for every event; the values
/// (any number of them, chosen by whoever sends events) are hashed with foldhash, seeded at
/// random for every map as the default hasher is (so that nobody can choose values that
/// collide without knowing the seed), at a fraction of SipHash's cost for a short value.
#[derive(Debug, Default)]
struct Correlated(Vec<(String, Values)>);

/// Value → the instances bound to it. The key is the value as the instances' inboxes hold it
/// (see `Bindings`): one block for both.
type Values = HashMap<Arc<str>, Bound, foldhash::fast::RandomState>;

/// The instances bound to one value, ascending: mostly one, inline.
type Bound = SmallVec<[InstanceId; 1]>;

impl Correlated {
    fn get(&self, attribute: &str) -> Option<&Values> {
        self.0
            .iter()
            .find(|(name, _)| name == attribute)
            .map(|(_, values)| values)
    }

    fn get_mut(&mut self, attribute: &str) -> Option<&mut Values> {
        self.0
            .iter_mut()
            .find(|(name, _)| name == attribute)
            .map(|(_, values)| values)
    }

    fn get_or_insert(&mut self, attribute: &str) -> &mut Values {
        let at = self
            .0
            .iter()
            .position(|(name, _)| name == attribute)
            .unwrap_or_else(|| {
                self.0.push((attribute.to_owned(), Values::default()));
                self.0.len() - 1
            });
        // In bounds: found or just pushed.
        &mut self.0[at].1
    }

    /// Forgets `attribute` once no value of it is bound.
    fn forget_if_unbound(&mut self, attribute: &str) {
        self.0
            .retain(|(name, values)| name != attribute || !values.is_empty());
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The instances an event goes to: mostly one.
pub(crate) type Receivers = SmallVec<[Receiver; 2]>;

/// An instance an event goes to.
#[derive(Debug)]
pub(crate) struct Receiver {
    pub(crate) instance: InstanceId,
    pub(crate) inbox: Arc<Inbox>,
    /// Chosen only because it waits for the event's definition (no correlation token), not
    /// by a value it is bound to: offered with [`Inbox::offer_to_waiter`].
    pub(crate) as_waiter: bool,
}

impl Receiver {
    /// Offers `event` to the instance, as a waiter or by value.
    pub(crate) fn offer(&self, event: Box<Event>) -> Offered {
        if self.as_waiter {
            self.inbox.offer_to_waiter(event)
        } else {
            self.inbox.offer(event)
        }
    }
}

/// A registry shared by a host's router and its instances.
pub(crate) type SharedRegistry = Arc<Mutex<Registry>>;

/// Locks a shared registry. Its critical sections do not panic between related updates, so a
/// poisoned lock still guards a consistent registry.
pub(crate) fn lock(registry: &Mutex<Registry>) -> MutexGuard<'_, Registry> {
    registry.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Registry {
    /// Adds a live instance, indexed under the correlation values its inbox already holds.
    pub(crate) fn insert(&mut self, instance: InstanceId, inbox: Arc<Inbox>) {
        for (attribute, value) in inbox.lock().correlation.iter() {
            self.index_value(instance, attribute, value);
        }
        self.inboxes.insert(instance, inbox);
    }

    /// The inboxes of the live instances.
    pub(crate) fn inboxes(&self) -> Vec<Arc<Inbox>> {
        self.inboxes.values().cloned().collect()
    }

    /// Removes an instance that ended, with its correlation entries and any wait left behind.
    pub(crate) fn remove(&mut self, instance: InstanceId) -> Option<Arc<Inbox>> {
        let inbox = self.inboxes.remove(&instance)?;
        for (attribute, value) in inbox.lock().correlation.iter() {
            let Some(values) = self.correlated.get_mut(attribute) else {
                continue;
            };
            if let Some(instances) = values.get_mut(&**value) {
                instances.retain(|other| *other != instance);
                if instances.is_empty() {
                    values.remove(&**value);
                }
            }
            self.correlated.forget_if_unbound(attribute);
        }
        // Its waits are not looked for (that would scan every wait registered, for every
        // instance that ends): they end with their guards, which a host drops before the
        // instance ends. A wait left by a guard that outlived its instance is harmless until
        // that guard drops: `receivers` and `bind_oldest_waiter` pass over waiters without an
        // inbox here (the latter ends their waits).
        Some(inbox)
    }

    /// Whether it holds nothing at all: no instance, no correlation entry, no wait.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.inboxes.is_empty() && self.correlated.is_empty() && self.waiting.is_empty()
    }

    /// Records that `instance` bound `attribute` to `value` (as its inbox holds it).
    pub(crate) fn index(&mut self, instance: InstanceId, attribute: &str, value: &Arc<str>) {
        if self.inboxes.contains_key(&instance) {
            self.index_value(instance, attribute, value);
        }
    }

    fn index_value(&mut self, instance: InstanceId, attribute: &str, value: &Arc<str>) {
        let values = self.correlated.get_or_insert(attribute);
        match values.get_mut(&**value) {
            Some(instances) => add(instances, instance),
            None => {
                values.insert(Arc::clone(value), smallvec::smallvec![instance]);
            }
        }
    }

    /// Registers a wait of `instance` for the definitions `specs` (index, correlation token);
    /// the ticket orders waits by age.
    ///
    /// A wait for a correlated definition is only registered while the instance is not bound
    /// for its attribute: once bound, its events reach it by value, so the waiting lists hold
    /// only the instances that may still be bound, and finding one stays cheap.
    pub(crate) fn begin_wait(
        &mut self,
        instance: InstanceId,
        specs: &[(usize, Option<&str>)],
    ) -> u64 {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        // Read under the inbox's lock (registry, then inbox: the lock order), not copied out.
        let state = self.inboxes.get(&instance).map(|inbox| inbox.lock());
        let bound = |attribute: &str| {
            state
                .as_ref()
                .is_some_and(|state| state.correlation.contains_key(attribute))
        };
        for &(spec, token) in specs {
            if token.is_some_and(bound) {
                continue;
            }
            self.waiting
                .entry(spec)
                .or_default()
                .insert(ticket, instance);
        }
        ticket
    }

    /// Unregisters the wait `ticket` for the definitions `specs`.
    pub(crate) fn end_wait(&mut self, ticket: u64, specs: &[usize]) {
        for spec in specs {
            if let Some(waits) = self.waiting.get_mut(spec) {
                waits.remove(&ticket);
                if waits.is_empty() {
                    self.waiting.remove(spec);
                }
            }
        }
    }

    /// The instances to deliver `event` to, given the definitions it matches (`matching`, indexes
    /// into `events`), in instance order:
    ///
    /// - for a definition with a correlation token and an event carrying value `v` for it: every
    ///   instance bound to `v`; if there is none, the instance that has waited longest for that
    ///   definition among those not yet bound for that attribute, which is bound to `v` here (so
    ///   that the next event with another value goes to another instance);
    /// - for a definition without a token: every instance waiting for it.
    ///
    /// An event lacking the correlation attribute of a definition is not delivered for it: no
    /// wait could accept it.
    pub(crate) fn receivers(
        &mut self,
        events: &[EventSpec],
        event: &Event,
        matching: &[usize],
    ) -> Receivers {
        // Ids with whether each was chosen by a value (bound, or bound here).
        let mut chosen: SmallVec<[(InstanceId, bool); 4]> = SmallVec::new();
        for &index in matching {
            let Some(spec) = events.get(index) else {
                continue;
            };
            match spec.correlation {
                None => chosen.extend(self.waiters(index).map(|id| (id, false))),
                Some(attribute) => {
                    let Some(value) = spec.correlation_text(event) else {
                        continue;
                    };
                    let bound = self
                        .correlated
                        .get(attribute)
                        .and_then(|values| values.get(value.as_ref()));
                    match bound {
                        Some(bound) if !bound.is_empty() => {
                            chosen.extend(bound.iter().map(|&id| (id, true)));
                        }
                        _ => {
                            let waiter = self.bind_oldest_waiter(index, attribute, &value);
                            chosen.extend(waiter.map(|id| (id, true)));
                        }
                    }
                }
            }
        }
        // By value first where an instance was chosen both ways: a value it is bound to
        // reaches it whether it waits or not.
        chosen.sort_unstable_by_key(|&(id, by_value)| (id, !by_value));
        chosen.dedup_by_key(|&mut (id, _)| id);
        chosen
            .into_iter()
            .filter_map(|(instance, by_value)| {
                Some(Receiver {
                    instance,
                    inbox: self.inboxes.get(&instance)?.clone(),
                    as_waiter: !by_value,
                })
            })
            .collect()
    }

    fn waiters(&self, spec: usize) -> impl Iterator<Item = InstanceId> + '_ {
        self.waiting
            .get(&spec)
            .into_iter()
            .flat_map(|waits| waits.values().copied())
    }

    /// Binds the longest-waiting instance for `spec` that has no value for the key's attribute.
    /// An instance already bound to that very value qualifies too: it bound itself while taking
    /// an event and is about to index the value (it releases its inbox lock first). Waiters
    /// found bound to another value leave the list for good, as they will only ever receive
    /// this definition's events by value; a waiter whose step has taken what it waited for is
    /// passed over and stays listed until its step ends its listening.
    fn bind_oldest_waiter(
        &mut self,
        spec: usize,
        attribute: &'static str,
        value: &str,
    ) -> Option<InstanceId> {
        let mut after = None;
        let chosen = loop {
            let (ticket, instance) = self
                .waiting
                .get(&spec)
                .and_then(|waits| match after {
                    None => waits.first_key_value(),
                    Some(after) => waits.range(after + 1..).next(),
                })
                .map(|(&ticket, &instance)| (ticket, instance))?;
            // The value as the instance holds it, if it suits (bound now, or already); `None`
            // for a waiter that no longer waits.
            let suits = self.inboxes.get(&instance).map(|inbox| {
                let mut state = inbox.lock();
                if !state.waits() {
                    return None;
                }
                Some(state.bind(attribute, value).or_else(|| {
                    state
                        .correlation
                        .shared(attribute)
                        .filter(|bound| &***bound == value)
                        .cloned()
                }))
            });
            match suits {
                Some(Some(Some(shared))) => break (instance, shared),
                Some(None) => after = Some(ticket),
                Some(Some(None)) | None => self.end_wait(ticket, &[spec]),
            }
        };
        let (chosen, value) = chosen;
        self.index_value(chosen, attribute, &value);
        Some(chosen)
    }
}

/// Adds `instance` to the ascending `instances`, once.
fn add(instances: &mut Bound, instance: InstanceId) {
    if let Err(at) = instances.binary_search(&instance) {
        instances.insert(at, instance);
    }
}

#[cfg(test)]
mod tests {
    use cloudevents::{EventBuilder, EventBuilderV10};

    use super::*;

    const EVENTS: &[EventSpec] = &[
        EventSpec {
            name: "Reading",
            source: "monitor",
            event_type: "reading",
            correlation: Some("patientid"),
        },
        EventSpec {
            name: "Alarm",
            source: "monitor",
            event_type: "alarm",
            correlation: None,
        },
    ];

    fn event(ty: &str, patient: Option<&str>) -> Event {
        let builder = EventBuilderV10::new().id("1").source("monitor").ty(ty);
        let builder = match patient {
            Some(patient) => builder.extension("patientid", patient),
            None => builder,
        };
        builder.build().unwrap_or_default()
    }

    fn inbox(correlation: &[(&str, &str)]) -> Arc<Inbox> {
        let correlation: std::collections::BTreeMap<String, String> = correlation
            .iter()
            .map(|(a, v)| ((*a).to_owned(), (*v).to_owned()))
            .collect();
        Arc::new(Inbox::new(4, correlation, Vec::new()))
    }

    fn same(left: &[Receiver], right: &[&Arc<Inbox>]) -> bool {
        left.len() == right.len()
            && left
                .iter()
                .zip(right)
                .all(|(l, r)| Arc::ptr_eq(&l.inbox, r))
    }

    #[test]
    fn correlated_events_reach_the_instances_bound_to_their_value() {
        let mut registry = Registry::default();
        let (one, two) = (inbox(&[("patientid", "1")]), inbox(&[("patientid", "2")]));
        registry.insert(InstanceId::new(1), one.clone());
        registry.insert(InstanceId::new(2), two.clone());
        let to_two = registry.receivers(EVENTS, &event("reading", Some("2")), &[0]);
        assert!(same(&to_two, &[&two]));
        assert!(
            registry
                .receivers(EVENTS, &event("reading", Some("3")), &[0])
                .is_empty()
        );
        assert!(
            registry
                .receivers(EVENTS, &event("reading", None), &[0])
                .is_empty()
        );
        registry.remove(InstanceId::new(2));
        assert!(
            registry
                .receivers(EVENTS, &event("reading", Some("2")), &[0])
                .is_empty()
        );
    }

    /// The registry's key for a value is the value the instance's inbox holds, not a copy:
    /// bound when the instance was made, when the router bound a waiter, or by the instance
    /// taking an event.
    #[test]
    fn a_value_is_held_once_for_the_inbox_and_the_registry() {
        let key = |registry: &Registry, value: &str| {
            let values = registry.correlated.get("patientid")?;
            values.get_key_value(value).map(|(key, _)| Arc::clone(key))
        };
        let held = |inbox: &Arc<Inbox>| inbox.lock().correlation.shared("patientid").cloned();
        let mut registry = Registry::default();
        let made = inbox(&[("patientid", "1")]);
        registry.insert(InstanceId::new(1), made.clone());
        let waiter = inbox(&[]);
        registry.insert(InstanceId::new(2), waiter.clone());
        registry.begin_wait(InstanceId::new(2), &[(0, Some("patientid"))]);
        registry.receivers(EVENTS, &event("reading", Some("2")), &[0]);
        let taker = inbox(&[]);
        registry.insert(InstanceId::new(3), taker.clone());
        let bound = taker.lock().bind("patientid", "3");
        registry.index(
            InstanceId::new(3),
            "patientid",
            &bound.unwrap_or_else(|| Arc::from("")),
        );
        for (inbox, value) in [(&made, "1"), (&waiter, "2"), (&taker, "3")] {
            let (Some(key), Some(held)) = (key(&registry, value), held(inbox)) else {
                panic!("value {value} is not both indexed and bound");
            };
            assert!(Arc::ptr_eq(&key, &held), "value {value} is held twice");
        }
    }

    /// A waiter whose step took what it waited for (and now runs its actions) is passed over:
    /// a value binds the next waiter, and an event for its definition without a token is
    /// refused by it, until it says what it waits for again. It stays listed meanwhile.
    #[test]
    fn a_waiter_that_took_its_events_no_longer_receives_as_a_waiter() {
        let mut registry = Registry::default();
        let (busy, idle) = (inbox(&[]), inbox(&[]));
        registry.insert(InstanceId::new(1), busy.clone());
        registry.insert(InstanceId::new(2), idle.clone());
        registry.begin_wait(InstanceId::new(1), &[(0, Some("patientid")), (1, None)]);
        registry.begin_wait(InstanceId::new(2), &[(0, Some("patientid"))]);
        busy.lock().took_its_events();
        let to = registry.receivers(EVENTS, &event("reading", Some("5")), &[0]);
        assert!(same(&to, &[&idle]), "instance 2 is bound instead");
        assert!(!to[0].as_waiter, "bound, it receives by value");
        assert_eq!(busy.lock().correlation.get("patientid"), None);
        assert!(registry.waiters(0).any(|id| id == InstanceId::new(1)));
        let alarm = || Box::new(event("alarm", None));
        let to = registry.receivers(EVENTS, &alarm(), &[1]);
        assert!(same(&to, &[&busy]) && to[0].as_waiter);
        assert!(matches!(to[0].offer(alarm()), Offered::NotWaiting(_)));
        assert!(busy.lock().events.is_empty());
        busy.lock().waits_again();
        assert_eq!(to[0].offer(alarm()), Offered::Queued);
        let to = registry.receivers(EVENTS, &event("reading", Some("6")), &[0]);
        assert!(
            same(&to, &[&busy]),
            "waiting again, it is bound to the next value"
        );
    }

    #[test]
    fn an_unbound_value_binds_the_longest_waiting_unbound_instance() {
        let mut registry = Registry::default();
        let (bound, first, second) = (inbox(&[("patientid", "9")]), inbox(&[]), inbox(&[]));
        registry.insert(InstanceId::new(1), bound.clone());
        registry.insert(InstanceId::new(2), second.clone());
        registry.insert(InstanceId::new(3), first.clone());
        let reading = [(0, Some("patientid"))];
        registry.begin_wait(InstanceId::new(1), &reading);
        registry.begin_wait(InstanceId::new(3), &reading);
        registry.begin_wait(InstanceId::new(2), &reading);
        assert_eq!(
            registry.waiters(0).collect::<Vec<_>>(),
            [InstanceId::new(3), InstanceId::new(2)],
            "instance 1 is bound: readings reach it by value"
        );
        let to = registry.receivers(EVENTS, &event("reading", Some("5")), &[0]);
        assert!(
            same(&to, &[&first]),
            "instance 3 began waiting before instance 2"
        );
        let to = registry.receivers(EVENTS, &event("reading", Some("6")), &[0]);
        assert!(same(&to, &[&second]));
        let to = registry.receivers(EVENTS, &event("reading", Some("5")), &[0]);
        assert!(same(&to, &[&first]));
        assert!(
            registry
                .receivers(EVENTS, &event("reading", Some("7")), &[0])
                .is_empty()
        );
        assert!(
            registry.waiters(0).next().is_none(),
            "bound waiters left the list when passed over"
        );
        assert_eq!(second.lock().correlation.get("patientid"), Some("6"));
    }

    #[test]
    fn uncorrelated_events_reach_every_waiting_instance_once() {
        let mut registry = Registry::default();
        let (one, two, idle) = (inbox(&[]), inbox(&[]), inbox(&[]));
        registry.insert(InstanceId::new(1), one.clone());
        registry.insert(InstanceId::new(2), two.clone());
        registry.insert(InstanceId::new(3), idle);
        let first = registry.begin_wait(InstanceId::new(2), &[(1, None)]);
        registry.begin_wait(InstanceId::new(1), &[(0, Some("patientid")), (1, None)]);
        registry.begin_wait(InstanceId::new(2), &[(1, None)]);
        let to = registry.receivers(EVENTS, &event("alarm", None), &[1]);
        assert!(same(&to, &[&one, &two]));
        registry.end_wait(first, &[1]);
        let to = registry.receivers(EVENTS, &event("alarm", None), &[1]);
        assert!(
            same(&to, &[&one, &two]),
            "instance 2 still has another wait"
        );
    }
}
