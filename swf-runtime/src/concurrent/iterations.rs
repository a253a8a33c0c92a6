//! The iterations of a foreach task.

use std::future::Future;
use std::time::Duration;

use std::pin::Pin;
use std::task::Poll;

use futures_util::stream::{FuturesUnordered, StreamExt};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::round::{Control, Counted, MemberEnd, RoundEnd, run_member};
use super::{ScopeEnd, ScopeState};
use crate::clock::after;
use crate::error::{ErrorObject, WorkflowError};
use crate::events::Io;
use crate::progress::{Progress, Wait};

/// How many iterations may wait in a round before starting another first returns to the
/// runtime.
const YIELD_AFTER: usize = 1024;

/// The iterations of a foreach task, as the task's state keeps them: how many items there are,
/// which started, the ones running, and the outputs kept so far.
///
/// Saved as its fields, plus the items whose output is `null` (`null_outputs`): in `outputs`
/// a `null` is an iteration not done yet, so without them a `null` output was lost from the
/// collection when the instance was saved and resumed. Read back, it is checked: a saved state
/// whose counts disagree (changed by hand, or a bad migration) is refused with the reason,
/// rather than run into a foreach that waits for ever or writes a short collection.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "Saved<S>")]
pub struct Iterations<S> {
    /// How many items the input collection has.
    total: usize,
    /// How many iterations started (items `0..started`).
    started: usize,
    /// The iterations running, in item order.
    running: Vec<Iteration<S>>,
    /// Per item, the output of its iteration once completed, when the task keeps them.
    outputs: Vec<Option<Value>>,
    /// When the next iteration may start (`timeDelay` after the last one started).
    next_start: Option<Timestamp>,
    /// Set once a completion condition held: no further iteration starts.
    stopped: bool,
    /// The instance's step in which the task started its iterations: their calls' keys count
    /// from it.
    origin: u64,
}

/// [`Iterations`] as read back: its fields, and the items whose output is `null` (written by
/// `Iterations`' own `Serialize`, which leaves out what is empty, `None` or `false`: those
/// default here).
#[derive(Deserialize)]
struct Saved<S> {
    total: usize,
    started: usize,
    running: Vec<Iteration<S>>,
    #[serde(default)]
    outputs: Vec<Option<Value>>,
    #[serde(default)]
    null_outputs: Vec<usize>,
    #[serde(default)]
    next_start: Option<Timestamp>,
    #[serde(default)]
    stopped: bool,
    #[serde(default)]
    origin: u64,
}

impl<S: Serialize> Serialize for Iterations<S> {
    fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        use serde::ser::SerializeStruct;
        let null_outputs: Vec<usize> = self
            .outputs
            .iter()
            .enumerate()
            .filter(|(_, output)| matches!(output, Some(Value::Null)))
            .map(|(item, _)| item)
            .collect();
        // The fields `Saved` reads, written from here: a copy of the outputs (a foreach's
        // million) for every save would cost more than the struct's few lines.
        let mut saved = serializer.serialize_struct("Iterations", 8)?;
        saved.serialize_field("total", &self.total)?;
        saved.serialize_field("started", &self.started)?;
        saved.serialize_field("running", &self.running)?;
        if self.outputs.is_empty() {
            saved.skip_field("outputs")?;
        } else {
            saved.serialize_field("outputs", &self.outputs)?;
        }
        if null_outputs.is_empty() {
            saved.skip_field("null_outputs")?;
        } else {
            saved.serialize_field("null_outputs", &null_outputs)?;
        }
        match &self.next_start {
            Some(next_start) => saved.serialize_field("next_start", next_start)?,
            None => saved.skip_field("next_start")?,
        }
        if self.stopped {
            saved.serialize_field("stopped", &true)?;
        } else {
            saved.skip_field("stopped")?;
        }
        saved.serialize_field("origin", &self.origin)?;
        saved.end()
    }
}

impl<S> TryFrom<Saved<S>> for Iterations<S> {
    type Error = String;

    fn try_from(saved: Saved<S>) -> Result<Self, String> {
        let Saved {
            total,
            started,
            running,
            mut outputs,
            null_outputs,
            next_start,
            stopped,
            origin,
        } = saved;
        if started > total {
            return Err(format!(
                "a foreach's saved state says {started} of its {total} iterations started"
            ));
        }
        if !outputs.is_empty() && outputs.len() != total {
            return Err(format!(
                "a foreach's saved state keeps {} outputs for its {total} items",
                outputs.len()
            ));
        }
        let mut after = None;
        for iteration in &running {
            if iteration.item >= started || after.is_some_and(|after| iteration.item <= after) {
                return Err(format!(
                    "a foreach's saved state has item {} running out of order, or not among the \
                     {started} that started",
                    iteration.item
                ));
            }
            after = Some(iteration.item);
        }
        for item in null_outputs {
            match outputs.get_mut(item) {
                Some(output @ None) => *output = Some(Value::Null),
                _ => {
                    return Err(format!(
                        "a foreach's saved state has a null output for item {item}, which has \
                         another or none"
                    ));
                }
            }
        }
        Ok(Self {
            total,
            started,
            running,
            outputs,
            next_start,
            stopped,
            origin,
        })
    }
}

/// One running iteration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iteration<S> {
    /// The position of its item in the input collection.
    pub item: usize,
    /// Where its body is.
    pub state: S,
    /// How many of its steps ran: its calls' keys count from it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub steps: u32,
}

fn is_zero(count: &u32) -> bool {
    *count == 0
}

impl<S: ScopeState> Iterations<S> {
    /// No iteration started yet over `total` items; `keep_outputs` when the task writes them
    /// (`outputCollection`, or a loop's completion condition). `origin` is the instance's step
    /// in which the task starts them (see [`step_origin`](crate::action::step_origin)).
    pub fn new(total: usize, keep_outputs: bool, origin: u64) -> Self {
        Self {
            total,
            started: 0,
            running: Vec::new(),
            outputs: if keep_outputs {
                vec![None; total]
            } else {
                Vec::new()
            },
            next_start: None,
            stopped: false,
            origin,
        }
    }

    /// The item whose iteration may start now, with `occupied` iterations running: at most `max`
    /// run at once (0: no limit), after the time delay, while items remain and no completion
    /// condition held.
    fn next_to_start(&self, occupied: usize, max: usize, io: &Io) -> Option<usize> {
        let due = self.next_start.is_none_or(|at| io.now() >= at);
        (self.has_room(occupied, max) && due).then_some(self.started)
    }

    /// Whether another iteration could start (now or after the time delay).
    fn has_room(&self, occupied: usize, max: usize) -> bool {
        (max == 0 || occupied < max) && !self.stopped && self.started < self.total
    }

    /// Starts the next item's iteration at `state`; the one after it may start `delay` later.
    fn start(&mut self, io: &Io, delay: Option<Duration>) -> usize {
        let item = self.started;
        self.started += 1;
        self.next_start = delay.map(|delay| after(io.now(), delay));
        item
    }

    /// An item whose iteration completed at once (its body's start is not active).
    fn skip(&mut self, output: Value, io: &Io, delay: Option<Duration>) {
        let item = self.start(io, delay);
        self.keep(item, output);
    }

    fn keep(&mut self, item: usize, output: Value) {
        if let Some(slot) = self.outputs.get_mut(item) {
            *slot = Some(output);
        }
    }

    /// Whether every iteration that will run has completed.
    pub fn finished(&self) -> bool {
        self.running.is_empty() && (self.stopped || self.started >= self.total)
    }

    /// The outputs kept, in item order.
    pub fn into_outputs(mut self) -> Vec<Value> {
        // Items that never ran (a completion condition held) have none.
        self.outputs.retain(Option::is_some);
        // Collected in place (an `Option<Value>` is a `Value`'s size): `flatten` collected into
        // a new vector grown from empty, eight reallocations for a thousand items (issue 10).
        self.outputs
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect()
    }

    /// Where the running iterations are (`[item]/position`).
    pub fn positions(&self) -> impl Iterator<Item = String> + '_ {
        self.running
            .iter()
            .map(|iteration| format!("[{}]/{}", iteration.item, iteration.state.position()))
    }

    /// What the running iterations listen for, and when the next one may start.
    pub fn listening(&self, max: usize) -> Wait {
        let mut wait = Wait::default();
        for iteration in &self.running {
            wait.merge(&iteration.state.listening());
        }
        let room = max == 0 || self.running.len() < max;
        if room && !self.stopped && self.started < self.total {
            wait.merge(&Wait {
                until: self.next_start,
                events: Vec::new(),
            });
        }
        wait
    }

    /// Runs a round of the iterations (see `round`): every running iteration
    /// steps until it waits or ends, concurrently, and iterations start as room and the time
    /// delay allow (`begin(item)` is an item's first state, or its output when its body's start
    /// is not active) while the round runs. `step(item, state)` runs one step of the body. A
    /// completed iteration leaves the running ones (its output kept); `done` tells whether a
    /// completion condition holds for its output (then no further iteration starts). It ends
    /// early, dropping the rest, when one terminates or fails.
    ///
    /// # Errors
    /// The first failure of an iteration, of starting one, or of the completion condition.
    #[allow(
        clippy::too_many_arguments,
        reason = "the foreach task's settings, as generated"
    )]
    pub async fn round<B, F, Fut>(
        &mut self,
        io: &Io,
        max: usize,
        delay: Option<Duration>,
        begin: B,
        step: F,
        done: &(dyn Fn(&Value) -> Result<bool, ErrorObject> + Sync),
    ) -> Result<RoundEnd, ErrorObject>
    where
        B: Fn(usize) -> Result<Result<S, Value>, ErrorObject>,
        F: Fn(usize, S) -> Fut,
        Fut: Future<Output = Result<Progress<S>, WorkflowError>>,
    {
        let control = Control::new();
        let origin = self.origin;
        let member = |item: usize, state: S, mut steps: u32| {
            let (control, step) = (&control, &step);
            async move {
                let counted = Counted {
                    origin,
                    steps: &mut steps,
                };
                let end = run_member(state, io, control, counted, |state| step(item, state)).await;
                (item, end, steps)
            }
        };
        let mut members = FuturesUnordered::new();
        for iteration in std::mem::take(&mut self.running) {
            control.join();
            members.push(crate::boxed::pinned!(member(
                iteration.item,
                iteration.state,
                iteration.steps
            )));
        }
        let mut ran = false;
        // While it starts iterations, the round counts as a member itself, so that the ones
        // already started, all waiting, do not end it before the rest have started.
        let mut starting = false;
        // The box of the last iteration that ended in its first poll, for the next one: most
        // iterations end there, and each would otherwise allocate and free a box of the same
        // size (issue 10).
        let mut spare = None;
        loop {
            // One iteration at a time, then those that completed leave: an iteration that
            // completed has freed its memory before the next one takes the same sizes (64 at a
            // time outgrew glibc's per-thread cache of freed blocks, 7 per size: half of the
            // allocations of the foreach bench took the allocator's slow path).
            if let Some(item) = self.next_to_start(members.len() + self.running.len(), max, io) {
                ran = true;
                match begin(item)? {
                    Err(output) => self.skip(output, io, delay),
                    Ok(state) => {
                        self.start(io, delay);
                        if !starting {
                            starting = control.join();
                        }
                        if control.join() {
                            // Polled once here first: an iteration that does not wait ends
                            // at once, never taking a place among the members (their queue
                            // and wakers cost more than its body).
                            let mut started = match spare.take() {
                                Some(mut boxed) => {
                                    // Drops the ended future in place, and writes this one there.
                                    Pin::set(&mut boxed, member(item, state, 0));
                                    boxed
                                }
                                None => crate::boxed::pinned!(member(item, state, 0)),
                            };
                            match super::poll_once(started.as_mut()).await {
                                Poll::Ready((item, end, steps)) => {
                                    spare = Some(started);
                                    if let Some(end) =
                                        self.settle(item, end, steps, done, &mut ran)?
                                    {
                                        return Ok(end);
                                    }
                                    // A million iterations that never wait must not keep the
                                    // other instances on this thread waiting.
                                    tokio::task::consume_budget().await;
                                }
                                Poll::Pending => members.push(started),
                            }
                        } else {
                            // Everyone waits already: it runs in the next round.
                            self.running.push(Iteration {
                                item,
                                state,
                                steps: 0,
                            });
                        }
                    }
                }
            }
            if self
                .next_to_start(members.len() + self.running.len(), max, io)
                .is_some()
            {
                // Iterations that completed leave before more start: a collection of a million
                // items never has more than the waiting ones alive at a time. None to ask when
                // none waits (most iterations end in their first poll): an empty set's poll
                // still registers the waker, about a hundred instructions per item (issue 10).
                while !members.is_empty()
                    && let Poll::Ready(Some((item, end, steps))) =
                        super::poll_once(std::pin::pin!(members.next())).await
                {
                    if let Some(end) = self.settle(item, end, steps, done, &mut ran)? {
                        return Ok(end);
                    }
                }
                if members.len() >= YIELD_AFTER {
                    // The ones left may be out of the runtime's cooperative budget, which only
                    // a return to the runtime renews.
                    tokio::task::yield_now().await;
                }
                continue;
            }
            if starting {
                starting = false;
                control.leave();
            }
            if members.is_empty() {
                break;
            }
            let next_start = self
                .next_start
                .filter(|_| self.has_room(members.len() + self.running.len(), max));
            let ended = tokio::select! {
                ended = members.next() => ended,
                () = sleep_until(io, next_start), if next_start.is_some() && !control.is_over() => None,
            };
            let Some((item, end, steps)) = ended else {
                continue;
            };
            if let Some(end) = self.settle(item, end, steps, done, &mut ran)? {
                return Ok(end);
            }
        }
        self.running
            .sort_unstable_by_key(|iteration| iteration.item);
        Ok(if ran {
            RoundEnd::Ran
        } else {
            RoundEnd::Waiting(self.listening(max))
        })
    }
}

impl<S: ScopeState> Iterations<S> {
    /// Takes in what a member's run in a round ended with; `Some` when the round ends with it.
    fn settle(
        &mut self,
        item: usize,
        end: MemberEnd<S>,
        steps: u32,
        done: &(dyn Fn(&Value) -> Result<bool, ErrorObject> + Sync),
        ran: &mut bool,
    ) -> Result<Option<RoundEnd>, ErrorObject> {
        match end {
            MemberEnd::Failed(failure) => return Err(failure.error().clone()),
            MemberEnd::Waiting(state, _, stepped) => {
                *ran |= stepped;
                self.running.push(Iteration { item, state, steps });
            }
            MemberEnd::Ended(ScopeEnd::Terminated(output)) => {
                return Ok(Some(RoundEnd::Terminated(output)));
            }
            MemberEnd::Ended(ScopeEnd::Completed(output)) => {
                *ran = true;
                if done(&output)? {
                    self.stopped = true;
                }
                self.keep(item, output);
            }
        }
        Ok(None)
    }
}

/// Sleeps until `at` by `io`'s clock (forever without it).
async fn sleep_until(io: &Io, at: Option<Timestamp>) {
    match at {
        Some(at) => io.clock().sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn iterations(started: usize, outputs: Vec<Option<Value>>) -> Iterations<()> {
        Iterations {
            total: 3,
            started,
            running: Vec::new(),
            outputs,
            next_start: None,
            stopped: false,
            origin: 4,
        }
    }

    /// An iteration whose output is `null` keeps it through a save: it was read back as an
    /// iteration not done, and its place in the collection was lost.
    #[test]
    fn a_null_output_survives_a_save() {
        let done = iterations(
            3,
            vec![Some(Value::Null), Some(json!(1)), Some(Value::Null)],
        );
        let saved = serde_json::to_value(&done).unwrap();
        assert_eq!(
            saved,
            json!({
                "total": 3, "started": 3, "running": [],
                "outputs": [null, 1, null], "null_outputs": [0, 2], "origin": 4,
            })
        );
        let back: Iterations<()> = serde_json::from_value(saved).unwrap();
        assert_eq!(back, done);
        // Saved before, with no `null_outputs`: as it was read then.
        let earlier = json!({"total": 3, "started": 1, "running": [], "outputs": [1, null, null]});
        let back: Iterations<()> = serde_json::from_value(earlier).unwrap();
        assert_eq!(back.outputs, [Some(json!(1)), None, None]);
        assert_eq!(back.origin, 0);
        // Nothing kept, nothing written.
        let plain = iterations(0, Vec::new());
        let saved = serde_json::to_value(&plain).unwrap();
        assert_eq!(
            saved,
            json!({"total": 3, "started": 0, "running": [], "origin": 4})
        );
    }

    /// A saved state whose counts disagree is refused, saying what disagrees.
    #[test]
    fn a_saved_state_whose_counts_disagree_is_refused() {
        let refused = |saved: Value| {
            serde_json::from_value::<Iterations<()>>(saved)
                .unwrap_err()
                .to_string()
        };
        let message = refused(json!({"total": 2, "started": 3, "running": []}));
        assert!(
            message.contains("3 of its 2 iterations started"),
            "{message}"
        );
        let message = refused(json!({"total": 2, "started": 0, "running": [], "outputs": [null]}));
        assert!(
            message.contains("keeps 1 outputs for its 2 items"),
            "{message}"
        );
        let running = |items: [usize; 2]| {
            json!({"total": 3, "started": 2, "running": [
                {"item": items[0], "state": null}, {"item": items[1], "state": null},
            ]})
        };
        assert!(serde_json::from_value::<Iterations<()>>(running([0, 1])).is_ok());
        assert!(refused(running([1, 0])).contains("item 0 running out of order"));
        assert!(refused(running([0, 2])).contains("item 2 running out of order"));
        let message = refused(json!({
            "total": 2, "started": 2, "running": [], "outputs": [1, null], "null_outputs": [0],
        }));
        assert!(message.contains("null output for item 0"), "{message}");
    }
}
