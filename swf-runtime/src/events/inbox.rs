//! The inbox of one instance: a bounded buffer of the events routed to it, from which waits take
//! the oldest event that suits them (not simply the oldest event), and the correlation values the
//! instance is bound to, kept under the same lock so that taking an event and binding its values
//! is one step.

use std::collections::{BTreeMap, VecDeque};
use std::pin::pin;
use std::sync::{Mutex, MutexGuard, PoisonError};

use cloudevents::Event;
use tokio::sync::Notify;

/// An event in an inbox, with its sequence number: its arrival number in memory, its stored
/// sequence number under a durable host (which removes it from the store once a committed step
/// consumed it).
#[derive(Debug)]
pub(crate) struct Queued {
    pub(crate) seq: u64,
    pub(crate) event: Event,
}

/// What the inbox lock protects.
#[derive(Debug, Default)]
pub(crate) struct InboxState {
    /// Events in arrival order (ascending `seq`).
    pub(crate) events: VecDeque<Queued>,
    /// Correlation attribute → value this instance is bound to.
    pub(crate) correlation: BTreeMap<String, String>,
    /// Set when the instance ended: deliveries are refused from then on.
    closed: bool,
    next_seq: u64,
    /// Counts arrivals (deliveries and events put back), so that a driver can tell whether
    /// anything arrived since it last looked.
    pub(crate) arrivals: u64,
    /// The sequence numbers of the events taken since the last [`InboxState::drain_taken`].
    pub(crate) taken: Vec<u64>,
    /// The correlation values bound since the last [`InboxState::drain_taken`].
    pub(crate) bound: Vec<(String, String)>,
}

impl InboxState {
    /// Binds `attribute` to `value` unless it is already bound; true when this call bound it.
    pub(crate) fn bind(&mut self, attribute: &str, value: &str) -> bool {
        if self.correlation.contains_key(attribute) {
            return false;
        }
        self.correlation
            .insert(attribute.to_owned(), value.to_owned());
        self.bound.push((attribute.to_owned(), value.to_owned()));
        true
    }

    fn push(&mut self, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.events.push_back(Queued { seq, event });
        self.arrivals += 1;
    }

    /// Removes the event at `position`, recording that it was taken.
    pub(crate) fn take(&mut self, position: usize) -> Option<Queued> {
        let queued = self.events.remove(position)?;
        self.taken.push(queued.seq);
        Some(queued)
    }

    /// The events taken and the values bound since the last call.
    pub(crate) fn drain_taken(&mut self) -> (Vec<u64>, Vec<(String, String)>) {
        (
            std::mem::take(&mut self.taken),
            std::mem::take(&mut self.bound),
        )
    }
}

/// An instance's inbox. Deliveries wait while it holds `capacity` events (back-pressure on
/// whoever delivers); waits are woken by `arrived` and deliveries by `freed`.
#[derive(Debug)]
pub(crate) struct Inbox {
    state: Mutex<InboxState>,
    arrived: Notify,
    freed: Notify,
    capacity: usize,
}

impl Inbox {
    /// An inbox of at least one slot, holding `initial` (which may exceed the capacity: they are
    /// the events an instance is created from) and bound to `correlation`.
    pub(crate) fn new(
        capacity: usize,
        correlation: BTreeMap<String, String>,
        initial: Vec<Event>,
    ) -> Self {
        let mut state = InboxState {
            correlation,
            ..InboxState::default()
        };
        for event in initial {
            state.push(event);
        }
        Self::holding(state, capacity)
    }

    /// An inbox holding events that a store keeps, with their stored sequence numbers (in
    /// arrival order), bound to `correlation`.
    pub(crate) fn stored(
        capacity: usize,
        correlation: BTreeMap<String, String>,
        events: Vec<(u64, Event)>,
    ) -> Self {
        let next_seq = events.last().map_or(0, |(seq, _)| seq + 1);
        let state = InboxState {
            correlation,
            events: events
                .into_iter()
                .map(|(seq, event)| Queued { seq, event })
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
    /// The event, when the instance has ended.
    pub(crate) async fn deliver(&self, event: Event) -> Result<(), Event> {
        loop {
            // Registered before the check, so a slot freed in between still wakes us.
            let mut freed = pin!(self.freed.notified());
            freed.as_mut().enable();
            {
                let mut state = self.lock();
                if state.closed {
                    return Err(event);
                }
                if state.events.len() < self.capacity {
                    state.push(event);
                    drop(state);
                    self.arrived.notify_waiters();
                    return Ok(());
                }
            }
            freed.await;
        }
    }

    /// Refuses further deliveries and returns the events nobody took, in arrival order.
    pub(crate) fn close(&self) -> Vec<Event> {
        let leftovers = {
            let mut state = self.lock();
            state.closed = true;
            std::mem::take(&mut state.events)
        };
        // Deliveries waiting for room must now see the inbox closed.
        self.freed.notify_waiters();
        leftovers.into_iter().map(|queued| queued.event).collect()
    }

    /// Wakes deliveries waiting for room, after a wait took events.
    pub(crate) fn notify_freed(&self) {
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

    #[tokio::test(start_paused = true)]
    async fn a_full_inbox_makes_delivery_wait_for_room() {
        let inbox = std::sync::Arc::new(Inbox::new(1, BTreeMap::new(), Vec::new()));
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
    async fn closing_refuses_waiting_and_later_deliveries() {
        let inbox = std::sync::Arc::new(Inbox::new(1, BTreeMap::new(), vec![event("1")]));
        let closer = inbox.clone();
        tokio::spawn(async move {
            sleep(Duration::from_secs(1)).await;
            let leftovers: Vec<String> = closer.close().iter().map(|e| e.id().to_owned()).collect();
            assert_eq!(leftovers, ["1"]);
        });
        let refused = inbox.deliver(event("2")).await;
        assert_eq!(
            refused.map_err(|e| e.id().to_owned()),
            Err(String::from("2"))
        );
        assert!(inbox.deliver(event("3")).await.is_err());
    }

    #[test]
    fn binding_keeps_the_first_value() {
        let inbox = Inbox::new(0, BTreeMap::new(), Vec::new());
        let mut state = inbox.lock();
        assert!(state.bind("patientId", "1"));
        assert!(!state.bind("patientId", "2"));
        assert_eq!(
            state.correlation.get("patientId").map(String::as_str),
            Some("1")
        );
    }
}
