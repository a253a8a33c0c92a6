//! The router: where each incoming event goes (see [`Host`](super::Host) for the rules).

use std::sync::Arc;

use cloudevents::Event;
use serde_json::{Map, Value};
use smallvec::SmallVec;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::starting::{Offer, Starting};
use super::{InstanceId, Machine, Parked, Shared};
use crate::events::{Offered, lock_registry};

/// The definitions an event matches: mostly one.
type Matching = SmallVec<[usize; 4]>;

const NOBODY: &str = "no instance is waiting for it and it does not start one";
const CLOSED: &str = "the events channel closed before the other starting events arrived";

/// What woke the router.
enum Wake {
    /// Boxed as it leaves the channel: the box goes to the instance's inbox and on to the step
    /// that takes the event, which borrows it from there (a CloudEvent is some 350 bytes, and
    /// moved by value it was copied at every hand-over).
    Event(Box<Event>),
    Closed,
    Deadline,
}

impl Wake {
    fn received(event: Event) -> Self {
        Self::Event(Box::new(event))
    }
}

impl<M: Machine> Shared<M> {
    /// Routes events from `incoming` until it closes, then gives back the starting events still
    /// waiting for their group.
    pub(super) async fn serve(self: Arc<Self>, mut incoming: mpsc::Receiver<Event>) {
        let mut starting = self.machine.start_on_events().map(Starting::new);
        let mut activate = self.activator();
        loop {
            let deadline = starting.as_ref().and_then(Starting::next_deadline);
            let wake = match deadline {
                None => incoming.recv().await.map_or(Wake::Closed, Wake::received),
                Some(deadline) => tokio::select! {
                    biased;
                    received = incoming.recv() => received.map_or(Wake::Closed, Wake::received),
                    () = tokio::time::sleep_until(deadline) => Wake::Deadline,
                },
            };
            // Groups whose timeout elapsed go first, so a late event never completes one. Only
            // looked for when a group has a deadline (the router alone adds groups), and the
            // reason only written when one expired: this runs for every event.
            if let Some(starting) = starting.as_mut().filter(|_| deadline.is_some()) {
                let expired = starting.expire(Instant::now());
                if !expired.is_empty() {
                    let reason = starting.timeout_reason();
                    for event in expired {
                        self.report(event, reason.clone()).await;
                    }
                }
            }
            match wake {
                Wake::Event(event) => {
                    // Only when full inboxes' overflows hold their limit, all together.
                    self.spill.room().await;
                    self.route(event, starting.as_mut(), &mut activate).await;
                }
                Wake::Deadline => {}
                Wake::Closed => break,
            }
        }
        if let Some(starting) = starting.as_mut() {
            for event in starting.drain() {
                self.report(event, String::from(CLOSED)).await;
            }
        }
        // No event will come: instances waiting for events alone can never go on.
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        let inboxes = lock_registry(&self.registry).inboxes();
        for inbox in inboxes {
            inbox.seal();
        }
        // After the seal: every instance parked before it, or parking now, sees it.
        self.wake_all();
    }

    async fn route(
        self: &Arc<Self>,
        event: Box<Event>,
        starting: Option<&mut Starting>,
        activate: &mut (impl FnMut(InstanceId, Box<Parked<M::State>>) + Send),
    ) {
        let matching: Matching = (0..self.events.len())
            .filter(|&index| {
                self.events
                    .get(index)
                    .is_some_and(|spec| spec.matches(&event))
            })
            .collect();
        if matching.is_empty() {
            let reason = crate::events::matches_no_definition(
                self.machine.workflow_id(),
                self.events,
                &event,
            );
            return self.report(*event, reason).await;
        }
        let mut receivers = lock_registry(&self.registry).receivers(self.events, &event, &matching);
        // The last receiver (mostly the only one) gets the event itself, not a copy.
        let last = receivers.pop();
        let mut delivered = false;
        for receiver in receivers {
            // Never waits for one instance: a full inbox keeps the event in its overflow.
            // Refused only by an instance that ended meanwhile, or, offered as a waiter, one
            // whose step took what it waited for.
            if matches!(
                receiver.offer(event.clone()),
                Offered::Queued | Offered::Spilled
            ) {
                delivered = true;
                if let Some(parked) = self.unpark(receiver.instance) {
                    activate(receiver.instance, parked);
                }
            }
        }
        let event = match last {
            None => *event,
            Some(receiver) => match receiver.offer(event) {
                Offered::Closed(back) | Offered::NotWaiting(back) => *back,
                Offered::Queued | Offered::Spilled => {
                    if let Some(parked) = self.unpark(receiver.instance) {
                        activate(receiver.instance, parked);
                    }
                    return;
                }
            },
        };
        if delivered {
            return;
        }
        let offer = match starting {
            Some(starting) => starting.offer(event, &matching, self.events, Instant::now()),
            None => Offer::NotStarting(event),
        };
        match offer {
            Offer::NotStarting(event) => {
                let reason = self.why_not_received(&event, &matching);
                self.report(event, reason).await;
            }
            Offer::Refused(event, reason) => self.report(event, reason).await,
            Offer::Held => {}
            Offer::Start {
                correlation,
                events,
            } => {
                let input = Value::Object(Map::new());
                match self.create(input, correlation, events) {
                    Ok((id, parked)) => activate(id, parked),
                    Err((refusal, events)) => {
                        let reason = format!("it would start an instance, but {}", refusal.error());
                        for event in events {
                            self.report(event, reason.clone()).await;
                        }
                    }
                }
            }
        }
    }

    /// Why an event that matches the definitions `matching` reached no instance.
    fn why_not_received(&self, event: &Event, matching: &[usize]) -> String {
        let lacking: Vec<&str> = matching
            .iter()
            .filter_map(|&index| self.events.get(index))
            .map(|spec| {
                spec.correlation
                    .filter(|_| spec.correlation_value(event).is_none())
            })
            .collect::<Option<Vec<&str>>>()
            .unwrap_or_default();
        match lacking.first() {
            // Every definition it matches needs an attribute it lacks: that is the reason.
            Some(attribute) => format!("it lacks the correlation attribute `{attribute}`"),
            None => String::from(NOBODY),
        }
    }
}
