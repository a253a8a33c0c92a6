//! Stepping one claimed instance: step, commit, and go on while it has work and this worker
//! holds it.

use cloudevents::{AttributesReader, Event};
use jiff::Timestamp;
use serde_json::{Value, json};
use tracing::Instrument;

use super::codec;
use super::{DurableHost, Ended, ProbePoint, Report};
use crate::clock::after;
use crate::concurrent::{ScopeEnd, ScopeState};
use crate::error::{ErrorObject, WorkflowError};
use crate::events::ChildStart;
use crate::host::Machine;
use crate::progress::Progress;
use crate::store::{
    Claimed, Commit, CommitResult, Definition, HistoryEntry, HistoryKind, InstanceRecord,
    NewInstance, Status, Store, StoredEvent,
};

/// What a step did besides moving the state: the inbox events it took, the correlation values
/// it bound, the events it produced, the sub-flows it started detached.
struct Effects {
    consumed: Vec<u64>,
    bound: Vec<(String, String)>,
    produced: Vec<Event>,
    children: Vec<ChildStart>,
}

/// What a step left to do with the instance after its commit.
enum Then<T> {
    /// Step it again at once, from this state.
    Continue(T),
    /// It waits, or this worker lets it go: drop it.
    Release,
    /// It ended.
    Ended(Ended),
}

/// What one step of an instance makes of the store's record.
struct Transition<T> {
    commit: Commit,
    then: Then<T>,
}

/// What a claim keeps of a commit it sent, to go on from the committed state.
struct AfterCommit {
    consumed: Vec<u64>,
    bind: Vec<(String, String)>,
    definition: Option<Definition>,
    /// Only when the claim steps the instance again.
    state_and_position: Option<(String, String)>,
    status: Status,
}

impl<M: Machine, S: Store> DurableHost<M, S> {
    /// Steps the claimed instance until it waits, ends, or this worker loses it, in a
    /// `workflow` span (one per claim: a waiting instance is not in memory).
    pub(super) async fn drive(&self, claimed: Claimed) {
        let span = crate::trace::workflow_span(&self.inner.machine.info(), || {
            claimed.record.id.to_string()
        });
        self.drive_claimed(claimed).instrument(span).await;
    }

    async fn drive_claimed(&self, claimed: Claimed) {
        let Claimed {
            mut record,
            mut inbox,
        } = claimed;
        let mut state: M::State = match codec::decode(&record, &self.inner.definition) {
            Ok(state) => state,
            Err(reason) => {
                self.report(Report::Refused {
                    instance: record.id,
                    reason,
                });
                return;
            }
        };
        loop {
            self.take_mailbox(&record, &mut inbox);
            self.inner
                .config
                .at(ProbePoint::Step(record.id, record.revision));
            let io = self.io_for(
                record.revision,
                &record.id.to_string(),
                inbox
                    .iter()
                    .map(|e| (e.seq, e.received_at, e.event.clone()))
                    .collect(),
                &record.correlation,
            );
            let span = crate::trace::task_span(&state);
            let stepped = self.inner.machine.step(state, &io).instrument(span).await;
            let (consumed, bound) = io.drain_taken();
            let effects = Effects {
                consumed,
                bound,
                produced: io.take_produced(),
                children: io.take_children(),
            };
            let now = self.now();
            let transition = self.transition(&record, stepped, &inbox, effects, now);
            let Transition { commit, then } = transition;
            self.inner
                .config
                .at(ProbePoint::Commit(record.id, record.revision));
            let produced_any = !commit.produced.is_empty();
            // The commit goes to the store whole; what the next step of this claim needs is
            // taken first (the state and position only when there is a next step here).
            let continues = matches!(then, Then::Continue(_)) && commit.lease_until.is_some();
            let after = AfterCommit {
                consumed: commit.consumed.clone(),
                bind: commit.bind.clone(),
                definition: commit.definition.clone(),
                state_and_position: continues
                    .then(|| (commit.state.clone(), commit.position.clone())),
                status: commit.status,
            };
            let result = self.inner.commits.ask(commit).await;
            match result {
                Err(error) => {
                    // Not committed: the lease expires and a worker runs the step again.
                    self.report(Report::StoreFailed {
                        during: "commit",
                        error,
                    });
                    return;
                }
                Ok(CommitResult::Conflict { found }) => {
                    self.report(Report::Conflict {
                        instance: record.id,
                        found,
                    });
                    return;
                }
                Ok(CommitResult::Committed {
                    revision,
                    leftovers,
                    ..
                }) => {
                    self.inner
                        .config
                        .at(ProbePoint::Committed(record.id, revision));
                    if produced_any {
                        self.inner.produced.notify_one();
                    }
                    // Only a completed instance gives events up: a failed one keeps its inbox
                    // for a redrive.
                    for left in leftovers {
                        self.report(Report::Unmatched {
                            event: Box::new(left.event),
                            reason: format!(
                                "instance {} of `{}` ended without taking it",
                                record.id, self.inner.definition.workflow
                            ),
                        });
                    }
                    inbox.retain(|event| !after.consumed.contains(&event.seq));
                    for (attribute, value) in after.bind {
                        if !record.correlation.iter().any(|(a, _)| *a == attribute) {
                            record.correlation.push((attribute, value));
                        }
                    }
                    record.revision = revision;
                    if let Some(definition) = after.definition {
                        record.definition = definition;
                    }
                    if let Some((state, position)) = after.state_and_position {
                        record.state = state;
                        record.position = position;
                    }
                    record.status = after.status;
                    match then {
                        Then::Continue(next) if continues => state = next,
                        Then::Continue(_) | Then::Release => return,
                        Then::Ended(ended) => {
                            crate::trace::record_ended(&ended);
                            self.report(Report::Ended {
                                instance: record.id,
                                ended,
                            });
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Moves the events delivered in this process to the instance while it was stepped into
    /// its inbox, in arrival order. (Only events this claim cannot have read from the store
    /// reach its mailbox: see `DurableHost::routed`.)
    fn take_mailbox(&self, record: &InstanceRecord, inbox: &mut Vec<StoredEvent>) {
        let arrived = self
            .local()
            .in_flight
            .get_mut(&record.id)
            .map(|in_flight| std::mem::take(&mut in_flight.mailbox))
            .unwrap_or_default();
        for event in arrived {
            if !inbox.iter().any(|known| known.seq == event.seq) {
                inbox.push(event);
            }
        }
        inbox.sort_by_key(|event| event.seq);
    }

    /// The commit of one step's outcome, and what follows it.
    fn transition(
        &self,
        record: &InstanceRecord,
        stepped: Result<Progress<M::State>, WorkflowError>,
        inbox: &[StoredEvent],
        effects: Effects,
        now: Timestamp,
    ) -> Transition<M::State> {
        let Effects {
            consumed,
            bound,
            produced,
            children,
        } = effects;
        let names = |seqs: &[u64]| -> Vec<String> {
            inbox
                .iter()
                .filter(|event| seqs.contains(&event.seq))
                .map(|event| describe(&event.event))
                .collect()
        };
        let mut commit = Commit {
            instance: record.id,
            worker: self.inner.config.worker.clone(),
            revision: record.revision,
            // Set below: the new state, or the last committed one when the step failed.
            state: String::new(),
            // A worker of another release that resumed the instance runs it from now on.
            definition: (record.definition != self.inner.definition)
                .then(|| self.inner.definition.clone()),
            position: record.position.clone(),
            status: Status::Runnable,
            wake_at: None,
            waits: Vec::new(),
            bind: Vec::new(),
            consumed: Vec::new(),
            produced: Vec::new(),
            children: Vec::new(),
            outcome: None,
            lease_until: None,
            trim_history_through: self.inner.config.history_trim(record.revision + 1),
            history: HistoryEntry {
                revision: 0,
                at: now,
                kind: HistoryKind::Stepped,
                from: record.position.clone(),
                to: record.position.clone(),
                consumed: names(&consumed),
                produced: produced.iter().map(describe).collect(),
                detail: Value::Null,
            },
        };
        let stepped = stepped.and_then(|progress| {
            let (state, waits) = match &progress {
                Progress::Ran(state) => (state, Vec::new()),
                // Stored as waiting, it would never be woken: failed instead, its last
                // committed state kept.
                Progress::Waiting(state, wait) if wait.is_forever() => {
                    let data = serde_json::to_value(state).unwrap_or(Value::Null);
                    let workflow = &self.inner.definition.workflow;
                    return Err(crate::drive::waits_for_nothing(workflow, state, data));
                }
                Progress::Waiting(state, wait) => {
                    let waits = self.wait_names(wait);
                    // Waiting only for a sub-flow's own events, which no delivery routes
                    // here: it would be stored waiting for ever.
                    if wait.until.is_none() && waits.is_empty() {
                        let data = serde_json::to_value(state).unwrap_or(Value::Null);
                        let workflow = &self.inner.definition.workflow;
                        return Err(crate::drive::waits_for_unroutable(
                            workflow, state, wait, data,
                        ));
                    }
                    (state, waits)
                }
            };
            match codec::encode(state) {
                Ok(text) => Ok((progress, text, waits)),
                Err(message) => Err(self.host_failure(record, message)),
            }
        });
        let then = match stepped {
            Ok((progress, text, waits)) => {
                commit.children = children
                    .into_iter()
                    .map(|child| self.child_instance(record, &bound, child))
                    .collect();
                commit.consumed = consumed;
                commit.bind = bound;
                commit.produced = produced;
                match progress {
                    Progress::Ran(next) => {
                        commit.position = next.position();
                        commit.history.to = commit.position.clone();
                        commit.state = text;
                        match next.end() {
                            Ok(end) => {
                                let terminated = matches!(end, ScopeEnd::Terminated(_));
                                let output = end.into_output();
                                commit.status = Status::Completed;
                                commit.outcome = Some(output.clone());
                                commit.history.kind = HistoryKind::Completed;
                                commit.history.detail = json!({ "terminated": terminated });
                                Then::Ended(Ended::Completed(output))
                            }
                            Err(next) => {
                                if !self.stopping() {
                                    commit.lease_until = Some(after(now, self.inner.config.lease));
                                }
                                Then::Continue(next)
                            }
                        }
                    }
                    Progress::Waiting(same, wait) => {
                        commit.position = same.position();
                        commit.history.to = commit.position.clone();
                        commit.state = text;
                        commit.status = Status::Waiting;
                        commit.wake_at = wait.until;
                        commit.waits = waits;
                        commit.history.kind = HistoryKind::Waiting;
                        commit.history.detail = json!({
                            "until": wait.until.map(|until| until.to_string()),
                            "events": commit.waits,
                        });
                        Then::Release
                    }
                }
            }
            Err(error) => {
                // The failed step is not committed: the instance keeps its last committed state,
                // and the store its inbox (what the step consumed included) and bindings, from
                // which a redrive runs the step again.
                commit.history.consumed = Vec::new();
                commit.history.produced = Vec::new();
                commit.state = record.state.clone();
                commit.status = Status::Failed;
                commit.outcome = Some(serde_json::to_value(&error).unwrap_or(Value::Null));
                commit.history.kind = HistoryKind::Failed;
                commit.history.detail = json!({
                    "task": error.task(),
                    "error": error.error().to_json(),
                });
                Then::Ended(Ended::Failed(error))
            }
        };
        Transition { commit, then }
    }

    /// The instance of a sub-flow the step started detached: runnable, bound to the values
    /// this instance is bound to, its parent this instance.
    fn child_instance(
        &self,
        record: &InstanceRecord,
        bound: &[(String, String)],
        child: ChildStart,
    ) -> NewInstance {
        let mut correlation = record.correlation.clone();
        correlation.extend(bound.iter().cloned());
        NewInstance {
            definition: child.definition,
            state: child.state,
            position: child.position,
            status: Status::Runnable,
            wake_at: None,
            waits: Vec::new(),
            correlation,
            inbox: Vec::new(),
            parent: Some(record.id),
            lease: None,
            detail: json!({ "parent": record.id, "position": record.position }),
            start_key: None,
        }
    }

    pub(super) fn stopping(&self) -> bool {
        self.inner
            .shared
            .stopping
            .load(std::sync::atomic::Ordering::Acquire)
    }

    fn host_failure(&self, record: &InstanceRecord, message: String) -> WorkflowError {
        WorkflowError::new(
            self.inner.definition.workflow.clone(),
            record.position.clone(),
            ErrorObject::new(super::DURABLE_ERROR, message),
            Value::Null,
        )
    }
}

/// `source id`, as the history names an event.
fn describe(event: &Event) -> String {
    format!("{} {}", event.source(), event.id())
}
