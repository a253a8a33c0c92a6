//! Event definitions as generated code declares them, and how an incoming event is matched to one.

use std::borrow::Cow;

use cloudevents::event::{AttributeValue, ExtensionValue};
use cloudevents::{AttributesReader, Event};

/// One event definition of a workflow (`events:` in the tasks draft), declared by generated code
/// as a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventSpec {
    /// The definition's `name`, unique in the workflow.
    pub name: &'static str,
    /// The CloudEvent `source` an event must have to match.
    pub source: &'static str,
    /// The CloudEvent `type` an event must have to match.
    pub event_type: &'static str,
    /// The definition's `correlationToken`: the name of the context attribute whose value ties
    /// an event to one workflow instance.
    pub correlation: Option<&'static str>,
}

impl EventSpec {
    /// Whether `event` is an occurrence of this definition: its source and type are the
    /// definition's, exactly.
    pub fn matches(&self, event: &Event) -> bool {
        event.source() == self.source && event.ty() == self.event_type
    }

    /// The value of this definition's correlation attribute in `event`, rendered as a string;
    /// `None` when the definition has no correlation token or the event lacks the attribute.
    /// See [`context_attribute`].
    pub fn correlation_value(&self, event: &Event) -> Option<String> {
        self.correlation_text(event).map(Cow::into_owned)
    }

    /// [`EventSpec::correlation_value`], borrowed from the event when it is text there (the
    /// router and the inbox compare it for every event; only binding it needs a copy).
    pub(crate) fn correlation_text<'e>(&self, event: &'e Event) -> Option<Cow<'e, str>> {
        attribute_text(event, self.correlation?)
    }
}

/// The value of the context attribute `name` of `event`, rendered as a string: an extension
/// attribute of that name, else a standard one (`id`, `source`, `type`, `subject`, `time`,
/// `datacontenttype`, `dataschema`, `specversion`). Never the data: the draft defines a context
/// attribute as any attribute except the payload.
///
/// CloudEvents requires attribute names in lower case and the HTTP binding lower-cases them in
/// transit, while the draft's example token is `patientId`; so when no attribute has exactly that
/// name, one that differs only in ASCII case is accepted (the first in alphabetical order, should
/// there be several).
pub fn context_attribute(event: &Event, name: &str) -> Option<String> {
    attribute_text(event, name).map(Cow::into_owned)
}

/// [`context_attribute`], borrowed when the attribute is text.
fn attribute_text<'e>(event: &'e Event, name: &str) -> Option<Cow<'e, str>> {
    if let Some(value) = extension(event, name) {
        return Some(match value {
            ExtensionValue::String(text) => Cow::Borrowed(text.as_str()),
            other => Cow::Owned(other.to_string()),
        });
    }
    if let Some((_, value)) = event.iter_attributes().find(|(key, _)| *key == name) {
        return Some(match value {
            AttributeValue::String(text) => Cow::Borrowed(text),
            AttributeValue::URIRef(text) => Cow::Borrowed(text.as_str()),
            other => Cow::Owned(other.to_string()),
        });
    }
    let mut folded: Vec<(&str, String)> = event
        .iter()
        .filter(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(key, value)| (key, value.to_string()))
        .collect();
    folded.sort();
    folded
        .into_iter()
        .next()
        .map(|(_, value)| Cow::Owned(value))
}

/// How many extensions an event may have for [`extension`] to compare their names rather than
/// hash the one looked for.
const FEW_EXTENSIONS: usize = 8;

/// The extension `name` of `event`, as [`Event::extension`] finds it. An event has a few
/// extensions, mostly: comparing their names costs less than hashing `name` with the SipHash of
/// the event's map, and the router and the step that takes the event both look it up. Only an
/// event with more extensions than that is looked up in its map.
fn extension<'e>(event: &'e Event, name: &str) -> Option<&'e ExtensionValue> {
    let mut extensions = event.iter_extensions();
    for (key, value) in extensions.by_ref().take(FEW_EXTENSIONS) {
        if key == name {
            return Some(value);
        }
    }
    match extensions.next() {
        None => None,
        Some(_) => event.extension(name),
    }
}

/// Why `event` reaches no instance of `workflow` when it matches none of its definitions
/// `specs`: its source and type, and the definition closest to it.
pub(crate) fn matches_no_definition(workflow: &str, specs: &[EventSpec], event: &Event) -> String {
    format!(
        "it matches no event definition of `{workflow}` (its source is `{}` and its type `{}`){}",
        event.source(),
        event.ty(),
        closest(specs, event)
            .map(|spec| format!(
                "; the closest is `{}` (source `{}`, type `{}`)",
                spec.name, spec.source, spec.event_type
            ))
            .unwrap_or_default()
    )
}

/// The definition whose source and type are closest to `event`'s (same source or same type
/// first), for a message.
fn closest<'a>(specs: &'a [EventSpec], event: &Event) -> Option<&'a EventSpec> {
    specs.iter().max_by_key(|spec| {
        (
            u8::from(spec.source == event.source()) + u8::from(spec.event_type == event.ty()),
            common_prefix(spec.event_type, event.ty()) + common_prefix(spec.source, event.source()),
        )
    })
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use cloudevents::{EventBuilder, EventBuilderV10};
    use serde_json::json;

    use super::*;

    const HEART_RATE: EventSpec = EventSpec {
        name: "HeartRateReadingEvent",
        source: "hospitalMonitorSystem",
        event_type: "com.hospital.patient.heartRateMonitor",
        correlation: Some("patientId"),
    };

    fn reading() -> Event {
        EventBuilderV10::new()
            .id("A234-1234-1234")
            .source("hospitalMonitorSystem")
            .ty("com.hospital.patient.heartRateMonitor")
            .subject("HeartRateReading")
            .time("2020-01-05T17:31:00Z")
            .extension("patientId", "PID-12345")
            .extension("priority", 3_i64)
            .extension("urgent", true)
            .data("application/json", json!({"value": "80bpm"}))
            .build()
            .unwrap_or_default()
    }

    #[test]
    fn source_and_type_must_both_match() {
        let event = reading();
        assert!(HEART_RATE.matches(&event));
        let other_source = EventSpec {
            source: "otherSystem",
            ..HEART_RATE
        };
        assert!(!other_source.matches(&event));
        let other_type = EventSpec {
            event_type: "com.hospital.patient.bloodPressureMonitor",
            ..HEART_RATE
        };
        assert!(!other_type.matches(&event));
    }

    #[test]
    fn correlation_reads_extensions_then_standard_attributes() {
        let event = reading();
        assert_eq!(
            HEART_RATE.correlation_value(&event).as_deref(),
            Some("PID-12345")
        );
        assert_eq!(context_attribute(&event, "priority").as_deref(), Some("3"));
        assert_eq!(context_attribute(&event, "urgent").as_deref(), Some("true"));
        assert_eq!(
            context_attribute(&event, "subject").as_deref(),
            Some("HeartRateReading")
        );
        assert_eq!(
            context_attribute(&event, "id").as_deref(),
            Some("A234-1234-1234")
        );
        assert_eq!(
            context_attribute(&event, "time").as_deref(),
            Some("2020-01-05T17:31:00+00:00")
        );
        assert_eq!(context_attribute(&event, "data"), None);
        assert_eq!(context_attribute(&event, "missing"), None);
        let uncorrelated = EventSpec {
            correlation: None,
            ..HEART_RATE
        };
        assert_eq!(uncorrelated.correlation_value(&event), None);
    }

    #[test]
    fn an_event_with_many_extensions_is_looked_up_in_its_map() {
        let mut event = reading();
        for n in 0..FEW_EXTENSIONS * 2 {
            event.set_extension(&format!("ext{n}"), n.to_string().as_str());
        }
        assert_eq!(
            HEART_RATE.correlation_value(&event).as_deref(),
            Some("PID-12345")
        );
        let last = FEW_EXTENSIONS * 2 - 1;
        assert_eq!(
            context_attribute(&event, &format!("ext{last}")),
            Some(last.to_string())
        );
        assert_eq!(context_attribute(&event, "absent"), None);
    }

    #[test]
    fn a_lower_cased_attribute_still_correlates() {
        // What an HTTP binary-mode transport makes of `patientId`.
        let mut event = reading();
        event.remove_extension("patientId");
        event.set_extension("patientid", "PID-777");
        assert_eq!(
            HEART_RATE.correlation_value(&event).as_deref(),
            Some("PID-777")
        );
        event.set_extension("PATIENTID", "PID-000");
        assert_eq!(
            HEART_RATE.correlation_value(&event).as_deref(),
            Some("PID-000"),
            "several candidates: the first in alphabetical order, whatever the hash order"
        );
        event.set_extension("patientId", "PID-12345");
        assert_eq!(
            HEART_RATE.correlation_value(&event).as_deref(),
            Some("PID-12345")
        );
    }
}
