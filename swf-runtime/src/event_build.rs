//! Building the events a workflow consumes, for callers and tests: the generated `<Id>Event`
//! enums call these.

use cloudevents::{Event, EventBuilder, EventBuilderV10};
use serde_json::Value;

use crate::error::ErrorObject;
use crate::events::{EVENT_ERROR, EventSpec};

impl EventSpec {
    /// A CloudEvent 1.0 of this definition (its source and type) with `id` and JSON `data`
    /// (no data when `data` is `null`).
    ///
    /// # Errors
    /// An `EventError` when the event cannot be built.
    pub fn event(&self, id: &str, data: Value) -> Result<Event, ErrorObject> {
        self.build(id, None, data)
    }

    /// Like [`event`](Self::event), carrying `value` in the definition's correlation attribute
    /// (as an extension attribute, or as `subject` when that is the attribute).
    ///
    /// # Errors
    /// An `EventError` when the event cannot be built, or when the definition has no
    /// correlation token.
    pub fn correlated_event(
        &self,
        id: &str,
        value: &str,
        data: Value,
    ) -> Result<Event, ErrorObject> {
        let Some(attribute) = self.correlation else {
            return Err(ErrorObject::new(
                EVENT_ERROR,
                format!(
                    "event `{}` has no correlationToken to carry `{value}`",
                    self.name
                ),
            ));
        };
        self.build(id, Some((attribute, value)), data)
    }

    fn build(
        &self,
        id: &str,
        correlation: Option<(&str, &str)>,
        data: Value,
    ) -> Result<Event, ErrorObject> {
        let mut builder = EventBuilderV10::new()
            .id(id)
            .source(self.source)
            .ty(self.event_type);
        if !data.is_null() {
            builder = builder.data("application/json", data);
        }
        if let Some((attribute, value)) = correlation {
            builder = match attribute {
                "subject" => builder.subject(value),
                extension => builder.extension(extension, value),
            };
        }
        builder.build().map_err(|error| {
            ErrorObject::new(
                EVENT_ERROR,
                format!("cannot build event `{}`: {error}", self.name),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::events::event_data;

    const HEART: EventSpec = EventSpec {
        name: "HeartRateReadingEvent",
        source: "hospitalMonitorSystem",
        event_type: "com.hospital.patient.heartRateMonitor",
        correlation: Some("patientId"),
    };

    #[test]
    fn built_events_match_their_definition_and_carry_the_correlation() {
        let event = HEART
            .correlated_event("A234", "PID-12345", json!({"value": "80bpm"}))
            .expect("valid event");
        assert!(HEART.matches(&event));
        assert_eq!(
            HEART.correlation_value(&event).as_deref(),
            Some("PID-12345")
        );
        assert_eq!(event_data(&event), json!({"value": "80bpm"}));
        let uncorrelated = EventSpec {
            correlation: None,
            ..HEART
        };
        assert!(
            uncorrelated
                .correlated_event("B1", "PID-1", Value::Null)
                .is_err()
        );
        assert_eq!(
            event_data(&uncorrelated.event("B2", Value::Null).expect("valid")),
            Value::Null
        );
    }
}
