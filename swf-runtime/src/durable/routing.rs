//! How a durable host asks the store to route an incoming event: which of the workflow's
//! definitions it matches (with its correlation values), whether it starts an instance, and
//! why nobody takes it when nobody does. The store applies the rules (see
//! [`Delivery`](crate::store::Delivery)) under its indexes, in the same transaction that stores
//! the event.

use cloudevents::Event;
use serde_json::Value;

use super::DurableHost;
use crate::events::EventSpec;
use crate::host::Machine;
use crate::progress::Wait;
use crate::store::{Delivery, NewInstance, StartPlan, Status, Store, Target};

impl<M: Machine, S: Store> DurableHost<M, S> {
    /// The delivery of `event`: its targets, its start plan, and why it cannot start an
    /// instance should it be a starting event that cannot. Why it reaches nobody otherwise is
    /// left empty: rendering it for every event cost a tenth of the host's thread, and it is
    /// needed only when the store finds no taker ([`DurableHost::unmatched_reason`]).
    pub(super) fn delivery(&self, event: Event) -> Delivery {
        let specs = self.inner.machine.events();
        let matching = self.matching(&event);
        let targets = matching
            .iter()
            .filter_map(|&index| specs.get(index))
            .map(|spec| Target {
                definition: spec.name.to_owned(),
                correlation: spec
                    .correlation
                    .map(|attribute| (attribute.to_owned(), spec.correlation_value(&event))),
            })
            .collect();
        let (start, unmatched) = match self.start_plan(&event, &matching) {
            Ok(plan) => (plan, String::new()),
            Err(refusal) => (None, refusal),
        };
        Delivery {
            workflow: self.inner.definition.workflow.clone(),
            event,
            targets,
            start,
            unmatched,
            claim: None,
        }
    }

    /// How `event` (matching the definitions `matching`) starts an instance when nobody takes
    /// it: `None` when it is not a starting event.
    ///
    /// # Errors
    /// Why a starting event cannot start one (it lacks a correlation value, the scheduled start
    /// is outside its window).
    fn start_plan(&self, event: &Event, matching: &[usize]) -> Result<Option<StartPlan>, String> {
        let machine = &self.inner.machine;
        let Some(on) = machine.start_on_events() else {
            return Ok(None);
        };
        let specs = machine.events();
        let starting: Vec<&EventSpec> = on
            .events
            .iter()
            .filter(|index| matching.contains(index))
            .filter_map(|&index| specs.get(index))
            .collect();
        let Some(this) = starting.first() else {
            return Ok(None);
        };
        let mut correlation = Vec::new();
        for spec in &starting {
            let Some(attribute) = spec.correlation else {
                continue;
            };
            let Some(value) = spec.correlation_value(event) else {
                return Err(format!(
                    "it starts instances of `{}` but lacks the correlation attribute `{attribute}` \
                     of event definition `{}`",
                    machine.workflow_id(),
                    spec.name
                ));
            };
            if !correlation.iter().any(|(bound, _)| bound == attribute) {
                correlation.push((attribute.to_owned(), value));
            }
        }
        correlation.sort();
        let instance = self
            .new_instance(Value::Object(serde_json::Map::new()), correlation.clone())
            .map_err(|refusal| {
                format!(
                    "it would start an instance of `{}`, which refuses to start: {}",
                    machine.workflow_id(),
                    refusal.error()
                )
            })?;
        if on.exclusive {
            return Ok(Some(StartPlan::Now(instance)));
        }
        let key = correlation
            .iter()
            .map(|(attribute, value)| format!("{attribute}={value}"))
            .collect::<Vec<_>>()
            .join("&");
        Ok(Some(StartPlan::Group {
            key,
            this: this.name.to_owned(),
            needed: on
                .events
                .iter()
                .filter_map(|&index| specs.get(index))
                .map(|spec| spec.name.to_owned())
                .collect(),
            timeout: on.timeout,
            instance,
        }))
    }

    /// The indexes of the workflow's definitions `event` matches, in document order.
    fn matching(&self, event: &Event) -> Vec<usize> {
        let specs = self.inner.machine.events();
        (0..specs.len())
            .filter(|&index| specs.get(index).is_some_and(|spec| spec.matches(event)))
            .collect()
    }

    /// Why `event` reaches nobody, once the store said it does: the reason its delivery
    /// carried (a starting event that cannot start), else which definitions it matched and
    /// with which correlation values.
    pub(super) fn unmatched_reason(&self, event: &Event, carried: &mut String) {
        if carried.is_empty() {
            *carried = self.no_taker(event, &self.matching(event));
        }
    }

    /// Why `event` (matching the definitions `matching`) reaches nobody.
    fn no_taker(&self, event: &Event, matching: &[usize]) -> String {
        let specs = self.inner.machine.events();
        let workflow = self.inner.machine.workflow_id();
        if matching.is_empty() {
            return crate::events::matches_no_definition(workflow, specs, event);
        }
        let names: Vec<String> = matching
            .iter()
            .filter_map(|&index| specs.get(index))
            .map(|spec| match spec.correlation {
                Some(attribute) => match spec.correlation_value(event) {
                    Some(value) => format!("`{}` ({attribute} `{value}`)", spec.name),
                    None => format!("`{}` (it lacks {attribute})", spec.name),
                },
                None => format!("`{}`", spec.name),
            })
            .collect();
        format!(
            "no instance of `{workflow}` waits for {} or is bound to its correlation value",
            names.join(", ")
        )
    }

    /// A runnable instance of this workflow created from `input`, bound to `correlation`.
    pub(super) fn new_instance(
        &self,
        input: Value,
        correlation: Vec<(String, String)>,
    ) -> Result<NewInstance, crate::error::WorkflowError> {
        let io = self.io_for(0, "start", Vec::new(), &correlation);
        let state = self.inner.machine.start(input.clone(), &io)?;
        let encoded = super::codec::encode(&state).map_err(|message| {
            crate::error::WorkflowError::new(
                self.inner.machine.workflow_id(),
                "",
                crate::error::ErrorObject::new(super::DURABLE_ERROR, message),
                input.clone(),
            )
        })?;
        Ok(NewInstance {
            definition: self.inner.definition.clone(),
            state: encoded,
            position: crate::concurrent::ScopeState::position(&state),
            status: Status::Runnable,
            wake_at: None,
            waits: Vec::new(),
            correlation,
            inbox: Vec::new(),
            parent: None,
            lease: None,
            detail: serde_json::json!({ "input": input }),
            start_key: None,
        })
    }

    /// The names of the workflow's definitions among those `wait` waits for: the host routes
    /// by its workflow's definitions (a sub-flow's own definitions count where they are the
    /// same).
    pub(super) fn wait_names(&self, wait: &Wait) -> Vec<String> {
        let specs = self.inner.machine.events();
        wait.events
            .iter()
            .filter(|spec| specs.contains(spec))
            .map(|spec| spec.name.to_owned())
            .collect()
    }
}
