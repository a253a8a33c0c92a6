//! The inbox of one instance: a bounded buffer of the events routed to it, from which waits take
//! the oldest event that suits them (not simply the oldest event), and the correlation values the
//! instance is bound to, kept under the same lock so that taking an event and binding its values
//! is one step.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cloudevents::Event;
use jiff::Timestamp;
use smallvec::SmallVec;
use tokio::sync::Notify;

use super::definitions::{Accepting, Refusal, Undeliverable};
use super::spec::EventSpec;

/// An event in an inbox, with its sequence number: its arrival number in memory, its stored
/// sequence number under a durable host (which removes it from the store once a committed step
/// consumed it).
#[derive(Debug)]
pub(crate) struct Queued {
    pub(crate) seq: u64,
    /// When it arrived, where that is known (a durable host's stored events): a wait whose
    /// deadline came first does not take it, however late the step that finds it runs.
    pub(crate) arrived_at: Option<Timestamp>,
    /// Boxed: a CloudEvent is some 350 bytes, and the box the router put it in is the one the
    /// step that takes it borrows it from (moved by pointer, not copied at every hand-over).
    pub(crate) event: Box<Event>,
}

impl Queued {
    /// Whether it arrived at or after `until`: a wait with that deadline had ended by then.
    pub(crate) fn arrived_after(&self, until: Option<Timestamp>) -> bool {
        matches!((self.arrived_at, until), (Some(at), Some(until)) if at >= until)
    }
}

/// What the inbox lock protects.
#[derive(Debug, Default)]
pub(crate) struct InboxState {
    /// Events in arrival order (ascending `seq`).
    pub(crate) events: VecDeque<Queued>,
    /// Correlation attribute → value this instance is bound to.
    pub(crate) correlation: Bindings,
    /// Set when the instance ended: deliveries are refused from then on.
    closed: bool,
    /// Which events [`Inbox::deliver`] accepts.
    pub(crate) accepting: Accepting,
    /// How many of `events` are beyond the capacity (offered while it was full), as counted
    /// in the host's [`Spill`].
    spilled: usize,
    /// Set when no event will ever be delivered again (the host's events channel closed): a
    /// wait for events alone can then never end.
    sealed: bool,
    /// Set when a step took the events its state waited for, until the instance next says what
    /// it waits for: a host's router still lists it among the waiters meanwhile (its listening
    /// ends with the step, and the step runs the actions of what it took), but it no longer
    /// waits, so an event offered to it as a waiter is refused ([`Inbox::offer_to_waiter`]).
    took: bool,
    next_seq: u64,
    /// Counts arrivals (deliveries and events put back), so that a driver can tell whether
    /// anything arrived since it last looked.
    pub(crate) arrivals: u64,
    /// Whether takes and bindings are recorded for [`InboxState::drain_taken`]: only a durable
    /// host commits them; anywhere else the records would grow with every event taken.
    records: bool,
    /// The sequence numbers of the events taken since the last [`InboxState::drain_taken`].
    pub(crate) taken: Vec<u64>,
    /// The correlation values bound since the last [`InboxState::drain_taken`].
    pub(crate) bound: Vec<(String, String)>,
}

impl InboxState {
    /// The instance took what its state waited for (see [`InboxState::took`]); a member of a
    /// parallel or foreach task taking its events does not say so, as others may still wait.
    pub(crate) fn took_its_events(&mut self) {
        self.took = true;
    }

    /// The instance says what it waits for again: events reach it as a waiter.
    pub(crate) fn waits_again(&mut self) {
        self.took = false;
    }

    /// Whether an event offered to the instance as a waiter is for it.
    pub(crate) fn waits(&self) -> bool {
        !self.took
    }

    /// Binds `attribute` to `value` unless it is already bound: the value as bound (for the
    /// host's registry to index the instance under, sharing it) when this call bound it.
    pub(crate) fn bind(&mut self, attribute: &'static str, value: &str) -> Option<Arc<str>> {
        if self.correlation.contains_key(attribute) {
            return None;
        }
        let value: Arc<str> = Arc::from(value);
        self.correlation
            .insert(Cow::Borrowed(attribute), Arc::clone(&value));
        if self.records {
            self.bound.push((attribute.to_owned(), value.to_string()));
        }
        Some(value)
    }

    fn push(&mut self, event: Box<Event>) {
        let seq = self.next_seq;
        self.next_seq += 1;
        if self.events.capacity() == 0 {
            // One slot, not the four a first push reserves: an instance mostly holds one event
            // at a time.
            self.events.reserve_exact(1);
        }
        self.events.push_back(Queued {
            seq,
            arrived_at: None,
            event,
        });
        self.arrivals += 1;
    }

    /// Removes the event at `position`, recording that it was taken.
    pub(crate) fn take(&mut self, position: usize) -> Option<Queued> {
        let queued = self.events.remove(position)?;
        crate::trace::event_consumed(&queued.event);
        if self.records {
            self.taken.push(queued.seq);
        }
        Some(queued)
    }

    /// Whether [`Inbox::seal`] was called.
    pub(crate) fn is_sealed(&self) -> bool {
        self.sealed
    }

    /// The events taken and the values bound since the last call.
    pub(crate) fn drain_taken(&mut self) -> (Vec<u64>, Vec<(String, String)>) {
        (
            std::mem::take(&mut self.taken),
            std::mem::take(&mut self.bound),
        )
    }
}

/// The correlation values an instance is bound to (attribute → value): a few pairs at most,
/// sorted by attribute, mostly one and then held in the inbox itself (a one-pair `BTreeMap`
/// allocates a node of eleven pairs, about 540 bytes; a vector, a block of its own). An
/// attribute is the workflow's own correlation token, borrowed, unless it was read back (from
/// a store, a caller's map). A value is shared with the host's registry, which indexes the
/// instance under it, so the router's comparison of an event's value with the registry's key
/// reads the line that the instance's check of the event reads next. What an instance owns,
/// in blocks and in lines, is what a host pays for most when events arrive in no particular
/// order (issue 10: glibc freeing the blocks in a random order, and the misses of reading
/// them): a waiting instance held three blocks more before (the vector, the attribute, the
/// registry's copy of the value).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Bindings(SmallVec<[(Cow<'static, str>, Arc<str>); 1]>);

impl Bindings {
    /// The value bound to `attribute`.
    pub(crate) fn get(&self, attribute: &str) -> Option<&str> {
        self.shared(attribute).map(|value| &**value)
    }

    /// The value bound to `attribute`, as the registry shares it.
    pub(crate) fn shared(&self, attribute: &str) -> Option<&Arc<str>> {
        self.position(attribute)
            .ok()
            .and_then(|at| self.0.get(at))
            .map(|(_, value)| value)
    }

    /// Whether `attribute` is bound.
    pub(crate) fn contains_key(&self, attribute: &str) -> bool {
        self.position(attribute).is_ok()
    }

    /// Binds `attribute` to `value` unless it is bound already; true when this call bound it.
    pub(crate) fn insert(&mut self, attribute: Cow<'static, str>, value: Arc<str>) -> bool {
        match self.position(&attribute) {
            Ok(_) => false,
            Err(at) => {
                self.0.insert(at, (attribute, value));
                true
            }
        }
    }

    /// The pairs, by attribute.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Arc<str>)> {
        self.0
            .iter()
            .map(|(attribute, value)| (&**attribute, value))
    }

    /// The pairs as a map.
    pub(crate) fn to_map(&self) -> BTreeMap<String, String> {
        self.0
            .iter()
            .map(|(attribute, value)| (attribute.to_string(), value.to_string()))
            .collect()
    }

    fn position(&self, attribute: &str) -> Result<usize, usize> {
        self.0
            .binary_search_by(|(bound, _)| (**bound).cmp(attribute))
    }
}

impl<A: Into<Cow<'static, str>>> From<BTreeMap<A, String>> for Bindings {
    fn from(map: BTreeMap<A, String>) -> Self {
        // Most instances are bound to nothing: not even an empty map's iterator is made.
        if map.is_empty() {
            return Self::default();
        }
        // A map iterates in key order: the pairs are sorted.
        Self(
            map.into_iter()
                .map(|(attribute, value)| (attribute.into(), Arc::from(value)))
                .collect(),
        )
    }
}

/// An instance's inbox. [`Inbox::deliver`] waits while it holds `capacity` events
/// (back-pressure on whoever delivers); [`Inbox::offer`] never waits: an event beyond the
/// capacity is kept all the same (waits see it like any other) and counted in a [`Spill`] that
/// the host shares among its instances. Waits are woken by `arrived` and deliveries by `freed`.
#[derive(Debug)]
pub(crate) struct Inbox {
    state: Mutex<InboxState>,
    arrived: Notify,
    freed: Notify,
    capacity: usize,
    spill: Option<Arc<Spill>>,
}

/// The events a host's inboxes hold beyond their capacity, all instances together: the router
/// waits for room only when this reaches its limit, never for one instance.
#[derive(Debug)]
pub(crate) struct Spill {
    held: AtomicUsize,
    limit: usize,
    room: Notify,
}

impl Spill {
    /// A spill that lets the inboxes hold `limit` events (at least 1) beyond their capacity.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            held: AtomicUsize::new(0),
            limit: limit.max(1),
            room: Notify::new(),
        }
    }

    /// Waits while the inboxes hold their limit beyond their capacity.
    pub(crate) async fn room(&self) {
        loop {
            let mut room = pin!(self.room.notified());
            room.as_mut().enable();
            if self.held.load(Ordering::Acquire) < self.limit {
                return;
            }
            room.await;
        }
    }

    fn add(&self) {
        self.held.fetch_add(1, Ordering::AcqRel);
    }

    fn release(&self, count: usize) {
        if count > 0 {
            self.held.fetch_sub(count, Ordering::AcqRel);
            self.room.notify_waiters();
        }
    }
}

/// What became of an offered event.
#[derive(Debug, PartialEq)]
pub(crate) enum Offered {
    /// In the inbox, within its capacity.
    Queued,
    /// In the inbox, beyond its capacity (counted in the spill).
    Spilled,
    /// Refused: the instance has ended. The event is given back in its box.
    Closed(Box<Event>),
    /// Refused: offered to the instance as a waiter, but its step has already taken what it
    /// waited for. The event is given back in its box.
    NotWaiting(Box<Event>),
}

impl Inbox {
    /// An inbox of at least one slot, holding `initial` (which may exceed the capacity: they are
    /// the events an instance is created from) and bound to `correlation`, accepting every
    /// event (a host's router checks them).
    pub(crate) fn new(
        capacity: usize,
        correlation: impl Into<Bindings>,
        initial: Vec<Event>,
    ) -> Self {
        Self::accepting(capacity, correlation, initial, Accepting::Routed)
    }

    /// [`Inbox::new`], accepting only the events `accepting` accepts. Made in place: a
    /// standalone `Io` makes one for every run, most of them bound to nothing and holding
    /// nothing (issue 10: the conversions of an empty map and list, and a move of the whole
    /// inbox to set what it accepts, were a quarter of a short run's `Io`).
    pub(crate) fn accepting(
        capacity: usize,
        correlation: impl Into<Bindings>,
        initial: Vec<Event>,
        accepting: Accepting,
    ) -> Self {
        let mut state = InboxState {
            accepting,
            correlation: correlation.into(),
            ..InboxState::default()
        };
        // Checked first: even an empty list's iterator is made and dropped (measured: 0.3% of
        // a one-call run's instructions).
        if !initial.is_empty() {
            for event in initial {
                state.push(Box::new(event));
            }
        }
        Self::holding(state, capacity)
    }

    /// An inbox holding events that a store keeps, with their stored sequence numbers and
    /// arrival times (in arrival order), bound to `correlation`.
    pub(crate) fn stored(
        capacity: usize,
        correlation: impl Into<Bindings>,
        events: Vec<(u64, Timestamp, Event)>,
    ) -> Self {
        let next_seq = events.last().map_or(0, |(seq, _, _)| seq + 1);
        let state = InboxState {
            correlation: correlation.into(),
            records: true,
            events: events
                .into_iter()
                .map(|(seq, arrived_at, event)| Queued {
                    seq,
                    arrived_at: Some(arrived_at),
                    event: Box::new(event),
                })
                .collect(),
            next_seq,
            ..InboxState::default()
        };
        Self::holding(state, capacity)
    }

    fn holding(state: InboxState, capacity: usize) -> Self {
        Self {
            state: Mutex::new(state),
            arrived: Notify::new(),
            freed: Notify::new(),
            capacity: capacity.max(1),
            spill: None,
        }
    }

    /// The same inbox, counting what it holds beyond its capacity in `spill`.
    #[must_use]
    pub(crate) fn spilling_into(mut self, spill: Arc<Spill>) -> Self {
        self.spill = Some(spill);
        self
    }

    /// Appends `event` without waiting, also beyond the capacity (see [`Spill`]).
    pub(crate) fn offer(&self, event: Box<Event>) -> Offered {
        self.offer_unless(event, false)
    }

    /// [`Inbox::offer`] to an instance chosen because it waits for the event's definition (not
    /// because it is bound to the event's correlation value): refused once its step has taken
    /// what it waited for, so that the event goes to the other waiters or starts an instance.
    /// Checked under the lock the step takes its events under, so no event slips in between.
    pub(crate) fn offer_to_waiter(&self, event: Box<Event>) -> Offered {
        self.offer_unless(event, true)
    }

    fn offer_unless(&self, event: Box<Event>, waiting_only: bool) -> Offered {
        let offered = {
            let mut state = self.lock();
            if state.closed {
                return Offered::Closed(event);
            }
            if waiting_only && !state.waits() {
                return Offered::NotWaiting(event);
            }
            state.push(event);
            if state.events.len() > self.capacity {
                state.spilled += 1;
                Offered::Spilled
            } else {
                Offered::Queued
            }
        };
        if matches!(offered, Offered::Spilled)
            && let Some(spill) = &self.spill
        {
            spill.add();
        }
        self.arrived.notify_waiters();
        offered
    }

    /// Gives back to the spill what this inbox no longer holds beyond its capacity.
    fn unspill(&self, state: &mut InboxState) {
        let beyond = state.events.len().saturating_sub(self.capacity);
        if state.spilled > beyond {
            if let Some(spill) = &self.spill {
                spill.release(state.spilled - beyond);
            }
            state.spilled = beyond;
        }
    }

    /// The state, under the lock. Every critical section leaves it consistent before anything
    /// that could panic, so a poisoned lock still guards valid data.
    pub(crate) fn lock(&self) -> MutexGuard<'_, InboxState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends `event`, waiting while the inbox is full.
    ///
    /// # Errors
    /// The event, when the instance has ended or the event matches none of the definitions the
    /// inbox knows (checked under the lock that [`Inbox::learn`] takes, so that no event slips
    /// between a check and the learning).
    pub(crate) async fn deliver(&self, event: Event) -> Result<(), Undeliverable> {
        loop {
            // Registered before the check, so a slot freed in between still wakes us.
            let mut freed = pin!(self.freed.notified());
            freed.as_mut().enable();
            {
                let mut state = self.lock();
                if state.closed {
                    return Err(Undeliverable {
                        event,
                        reason: Refusal::Ended,
                    });
                }
                if let Some(reason) = state.accepting.refusal(&event) {
                    return Err(Undeliverable { event, reason });
                }
                if state.events.len() < self.capacity {
                    state.push(Box::new(event));
                    drop(state);
                    self.arrived.notify_waiters();
                    return Ok(());
                }
            }
            freed.await;
        }
    }

    /// Learns the event definitions of `workflow`; when the events held so far were unchecked,
    /// removes and returns those that match none of them, in arrival order.
    pub(crate) fn learn(&self, workflow: &'static str, specs: &[EventSpec]) -> Vec<Undeliverable> {
        let refused = {
            let mut state = self.lock();
            if !state.accepting.learn(workflow, specs) {
                return Vec::new();
            }
            let held = std::mem::take(&mut state.events);
            let mut refused = Vec::new();
            for queued in held {
                match state.accepting.refusal(&queued.event) {
                    None => state.events.push_back(queued),
                    Some(reason) => refused.push(Undeliverable {
                        event: *queued.event,
                        reason,
                    }),
                }
            }
            refused
        };
        if !refused.is_empty() {
            self.notify_freed();
        }
        refused
    }

    /// Refuses further deliveries and returns the events nobody took, in arrival order.
    pub(crate) fn close(&self) -> Vec<Event> {
        let leftovers = {
            let mut state = self.lock();
            state.closed = true;
            let leftovers = std::mem::take(&mut state.events);
            self.unspill(&mut state);
            leftovers
        };
        // Deliveries waiting for room must now see the inbox closed.
        self.freed.notify_waiters();
        leftovers.into_iter().map(|queued| *queued.event).collect()
    }

    /// No event will be delivered any more: wakes the waits, which see it.
    pub(crate) fn seal(&self) {
        self.lock().sealed = true;
        self.arrived.notify_waiters();
    }

    /// Whether [`Inbox::seal`] was called.
    pub(crate) fn is_sealed(&self) -> bool {
        self.lock().sealed
    }

    /// Wakes deliveries waiting for room, after a wait took events.
    pub(crate) fn notify_freed(&self) {
        {
            let mut state = self.lock();
            self.unspill(&mut state);
            if state.events.is_empty() && state.events.capacity() > 0 {
                // An instance waits far longer than it holds events: an empty inbox keeps no
                // buffer (a few hundred bytes per instance, times every waiting instance).
                state.events = VecDeque::new();
            }
        }
        self.freed.notify_waiters();
    }

    /// The notification of the next arrival; enable it before checking the inbox.
    pub(crate) fn arrived(&self) -> tokio::sync::futures::Notified<'_> {
        self.arrived.notified()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use cloudevents::{AttributesReader, EventBuilder, EventBuilderV10};
    use tokio::time::{Instant, sleep};

    use super::*;

    fn event(id: &str) -> Event {
        EventBuilderV10::new()
            .id(id)
            .source("s")
            .ty("t")
            .build()
            .unwrap_or_default()
    }

    fn ids(inbox: &Inbox) -> Vec<String> {
        inbox
            .lock()
            .events
            .iter()
            .map(|queued| queued.event.id().to_owned())
            .collect()
    }

    const SPEC: EventSpec = EventSpec {
        name: "T",
        source: "s",
        event_type: "t",
        correlation: None,
    };

    fn other(id: &str) -> Event {
        EventBuilderV10::new()
            .id(id)
            .source("s")
            .ty("u")
            .build()
            .unwrap_or_default()
    }

    /// Learning the definitions removes the unchecked events that match none (giving them
    /// back in order) and frees their room for a delivery waiting meanwhile.
    #[tokio::test(start_paused = true)]
    async fn learning_gives_back_the_held_events_that_match_nothing() {
        let inbox = std::sync::Arc::new(Inbox::accepting(
            2,
            Bindings::default(),
            Vec::new(),
            Accepting::Unchecked,
        ));
        assert!(inbox.deliver(other("x")).await.is_ok());
        assert!(inbox.deliver(event("1")).await.is_ok());
        let waiting = tokio::spawn({
            let inbox = inbox.clone();
            async move { inbox.deliver(event("2")).await }
        });
        tokio::task::yield_now().await;
        let refused = inbox.learn("w", &[SPEC]);
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].event.id(), "x");
        assert!(waiting.await.is_ok_and(|delivered| delivered.is_ok()));
        assert_eq!(ids(&inbox), ["1", "2"]);
        let again = inbox.deliver(other("y")).await.expect_err("refused");
        assert!(matches!(again.reason, Refusal::MatchesNoDefinition(_)));
        assert!(inbox.learn("w", &[]).is_empty(), "learnt once");
    }

    /// A host's inbox takes what its router sends.
    #[tokio::test]
    async fn a_routed_inbox_accepts_any_event() {
        let inbox = Inbox::new(2, Bindings::default(), Vec::new());
        assert!(inbox.learn("w", &[SPEC]).is_empty());
        assert!(inbox.deliver(other("x")).await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_inbox_makes_delivery_wait_for_room() {
        let inbox = std::sync::Arc::new(Inbox::new(1, Bindings::default(), Vec::new()));
        assert!(inbox.deliver(event("1")).await.is_ok());
        let taker = inbox.clone();
        tokio::spawn(async move {
            sleep(Duration::from_secs(3)).await;
            taker.lock().events.pop_front();
            taker.notify_freed();
        });
        let started = Instant::now();
        assert!(inbox.deliver(event("2")).await.is_ok());
        assert_eq!(started.elapsed(), Duration::from_secs(3));
        assert_eq!(ids(&inbox), ["2"]);
    }

    #[tokio::test(start_paused = true)]
    async fn offers_beyond_the_capacity_are_kept_and_counted_until_taken() {
        let spill = Arc::new(Spill::new(1));
        let inbox = Inbox::new(1, Bindings::default(), Vec::new()).spilling_into(spill.clone());
        assert_eq!(inbox.offer(Box::new(event("1"))), Offered::Queued);
        assert_eq!(inbox.offer(Box::new(event("2"))), Offered::Spilled);
        assert_eq!(ids(&inbox), ["1", "2"], "both are there for waits to see");
        let room = tokio::time::timeout(Duration::from_secs(1), spill.room()).await;
        assert!(room.is_err(), "the spill is at its limit: the router waits");
        inbox.lock().take(0);
        inbox.notify_freed();
        spill.room().await;
        assert_eq!(inbox.offer(Box::new(event("3"))), Offered::Spilled);
        assert_eq!(inbox.close().len(), 2);
        spill.room().await;
        assert!(matches!(inbox.offer(Box::new(event("4"))), Offered::Closed(e) if e.id() == "4"));
    }

    #[tokio::test(start_paused = true)]
    async fn closing_refuses_waiting_and_later_deliveries() {
        let inbox = std::sync::Arc::new(Inbox::new(1, Bindings::default(), vec![event("1")]));
        let closer = inbox.clone();
        tokio::spawn(async move {
            sleep(Duration::from_secs(1)).await;
            let leftovers: Vec<String> = closer.close().iter().map(|e| e.id().to_owned()).collect();
            assert_eq!(leftovers, ["1"]);
        });
        let refused = inbox.deliver(event("2")).await;
        assert_eq!(
            refused.map_err(|e| e.event.id().to_owned()),
            Err(String::from("2"))
        );
        assert!(inbox.deliver(event("3")).await.is_err());
    }

    #[test]
    fn an_emptied_inbox_keeps_no_buffer_and_records_takes_only_for_a_store() {
        let inbox = Inbox::new(64, Bindings::default(), vec![event("1"), event("2")]);
        {
            let mut state = inbox.lock();
            assert!(state.take(0).is_some() && state.take(0).is_some());
            assert!(state.bind("orderId", "7").is_some());
            assert_eq!(state.drain_taken(), (Vec::new(), Vec::new()));
        }
        inbox.notify_freed();
        assert_eq!(
            inbox.lock().events.capacity(),
            0,
            "a waiting instance holds no buffer"
        );

        let stored = Inbox::stored(
            64,
            Bindings::default(),
            vec![(5, Timestamp::UNIX_EPOCH, event("5"))],
        );
        let mut state = stored.lock();
        assert!(state.take(0).is_some());
        assert!(state.bind("orderId", "7").is_some());
        let bound = vec![(String::from("orderId"), String::from("7"))];
        assert_eq!(state.drain_taken(), (vec![5], bound));
    }

    #[test]
    fn bindings_stay_sorted_and_keep_the_first_value() {
        let mut bindings = Bindings::default();
        assert!(bindings.insert(Cow::Borrowed("b"), Arc::from("2")));
        assert!(bindings.insert(Cow::Owned(String::from("a")), Arc::from("1")));
        assert!(!bindings.insert(Cow::Borrowed("b"), Arc::from("3")));
        assert_eq!(bindings.get("b"), Some("2"));
        assert!(bindings.contains_key("a") && !bindings.contains_key("c"));
        let map = bindings.to_map();
        assert_eq!(Bindings::from(map.clone()), bindings);
        let pairs: Vec<(&str, &str)> = bindings
            .iter()
            .map(|(attribute, value)| (attribute, &**value))
            .collect();
        let expected: Vec<(&str, &str)> = map
            .iter()
            .map(|(attribute, value)| (attribute.as_str(), value.as_str()))
            .collect();
        assert_eq!(pairs, expected);
    }

    #[test]
    fn binding_keeps_the_first_value() {
        let inbox = Inbox::new(0, Bindings::default(), Vec::new());
        let mut state = inbox.lock();
        assert_eq!(state.bind("patientId", "1").as_deref(), Some("1"));
        assert_eq!(state.bind("patientId", "2"), None);
        assert_eq!(state.correlation.get("patientId"), Some("1"));
    }
}
