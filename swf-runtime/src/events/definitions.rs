//! What a standalone [`Io`](super::Io) knows of its workflow's event definitions, so that an
//! event no wait of the workflow can ever take is given back at once instead of sitting in the
//! inbox while the run waits forever; and the error that gives it back.

use std::fmt;

use cloudevents::{AttributesReader, Event};

use super::spec::{EventSpec, matches_no_definition};

/// Which events an inbox accepts.
#[derive(Debug, Clone, Default)]
pub(crate) enum Accepting {
    /// Any event: a host routed it by the workflow's definitions already.
    #[default]
    Routed,
    /// Any event for now: the run has not told the inbox its definitions yet. They are checked
    /// when it does ([`Accepting::learn`]), and the events that match none are given back then.
    Unchecked,
    /// The events that match one of the workflow's definitions.
    Defined(Definitions),
}

/// The event definitions of a workflow, with those of the sub-flows it called so far with the
/// same `Io`.
#[derive(Debug, Clone)]
pub(crate) struct Definitions {
    /// The workflow the instance runs (named in messages).
    workflow: &'static str,
    specs: Vec<EventSpec>,
}

impl Definitions {
    pub(crate) fn new(workflow: &'static str, specs: &[EventSpec]) -> Self {
        Self {
            workflow,
            specs: specs.to_vec(),
        }
    }

    /// Why `event` is refused, or `None` when it matches a definition.
    pub(crate) fn refusal(&self, event: &Event) -> Option<Refusal> {
        if self.specs.iter().any(|spec| spec.matches(event)) {
            return None;
        }
        Some(Refusal::MatchesNoDefinition(matches_no_definition(
            self.workflow,
            &self.specs,
            event,
        )))
    }

    fn add(&mut self, specs: &[EventSpec]) {
        for spec in specs {
            if !self.specs.contains(spec) {
                self.specs.push(*spec);
            }
        }
    }
}

impl Accepting {
    /// Why `event` is refused, or `None` when it is accepted.
    pub(crate) fn refusal(&self, event: &Event) -> Option<Refusal> {
        match self {
            Accepting::Routed | Accepting::Unchecked => None,
            Accepting::Defined(definitions) => definitions.refusal(event),
        }
    }

    /// Learns the definitions of `workflow` (a run or a sub-flow starting on this inbox).
    /// True when the events accepted so far were unchecked and must now be checked.
    pub(crate) fn learn(&mut self, workflow: &'static str, specs: &[EventSpec]) -> bool {
        match self {
            Accepting::Routed => false,
            Accepting::Unchecked => {
                *self = Accepting::Defined(Definitions::new(workflow, specs));
                true
            }
            Accepting::Defined(definitions) => {
                definitions.add(specs);
                false
            }
        }
    }
}

/// Why an event was not delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The instance has ended: nothing will take the event.
    Ended,
    /// The event matches none of the workflow's event definitions, so no wait of the
    /// workflow can take it. The message names its source and type and the closest definition.
    MatchesNoDefinition(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Ended => f.write_str("the instance has ended"),
            Refusal::MatchesNoDefinition(message) => f.write_str(message),
        }
    }
}

/// An event [`Io::deliver`](super::Io::deliver) gives back, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Undeliverable {
    /// The event, unchanged.
    pub event: Event,
    /// Why it was not delivered.
    pub reason: Refusal,
}

impl fmt::Display for Undeliverable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "event `{}` was not delivered: {}",
            self.event.id(),
            self.reason
        )
    }
}

impl std::error::Error for Undeliverable {}
