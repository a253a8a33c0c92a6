//! The data of a consumed event, as the JSON that is merged into the task data.

use cloudevents::{AttributesReader, Data, Event};
use serde_json::Value;

/// The data of `event` as JSON, `null` when it has none:
///
/// - JSON data as it is;
/// - text data as a JSON string, unless the event declares a JSON content type
///   (`application/json`, `text/json`, `…+json`) and the text parses as JSON: then the parsed
///   value (a producer that built the event from serialized JSON meant JSON);
/// - binary data parsed as JSON when the event declares a JSON content type and it parses;
///   as a JSON string when it declares a text type (`text/*`), or a JSON one that does not
///   parse, and the bytes are UTF-8 (a text body in the HTTP binary mode arrives as bytes:
///   the same event in the structured mode is a string); otherwise `null`, because other
///   bytes have no JSON form without choosing an encoding, and a workflow cannot filter or
///   merge opaque bytes anyway.
pub fn event_data(event: &Event) -> Value {
    let content_type = event.datacontenttype();
    let json = content_type.is_some_and(is_json_content_type);
    match event.data() {
        None => Value::Null,
        Some(Data::Json(value)) => value.clone(),
        Some(Data::String(text)) => {
            let parsed = json.then(|| serde_json::from_str(text).ok()).flatten();
            parsed.unwrap_or_else(|| Value::String(text.clone()))
        }
        Some(Data::Binary(bytes)) => {
            let parsed = json.then(|| serde_json::from_slice(bytes).ok()).flatten();
            parsed.unwrap_or_else(|| {
                let text = json || content_type.is_some_and(is_text_content_type);
                text.then(|| std::str::from_utf8(bytes).ok())
                    .flatten()
                    .map_or(Value::Null, |text| Value::String(text.to_owned()))
            })
        }
    }
}

/// Whether `content_type` is a text type (`text/plain`, `text/csv; charset=utf-8`...).
fn is_text_content_type(content_type: &str) -> bool {
    content_type
        .trim_start()
        .get(..5)
        .is_some_and(|kind| kind.eq_ignore_ascii_case("text/"))
}

/// `event` with its text data parsed when [`event_data`] reads it as JSON (a JSON content type
/// and text that parses): the form whose CloudEvents JSON, read back, gives the same data. The
/// text itself would be written as a JSON string, which the reader takes for a string.
pub(crate) fn with_json_text_parsed(mut event: Event) -> Event {
    let parsed = match event.data() {
        Some(Data::String(text)) if event.datacontenttype().is_some_and(is_json_content_type) => {
            serde_json::from_str::<Value>(text).ok()
        }
        _ => None,
    };
    if let Some(value) = parsed {
        event.set_data_unchecked(value);
    }
    event
}

/// The content types the CloudEvents JSON format treats as JSON.
fn is_json_content_type(content_type: &str) -> bool {
    // Compared without a lower-cased copy: this runs for every event consumed.
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    let suffix = essence
        .len()
        .checked_sub("+json".len())
        .and_then(|at| essence.get(at..));
    essence.eq_ignore_ascii_case("application/json")
        || essence.eq_ignore_ascii_case("text/json")
        || suffix.is_some_and(|suffix| suffix.eq_ignore_ascii_case("+json"))
}

#[cfg(test)]
mod tests {
    use cloudevents::{EventBuilder, EventBuilderV10};
    use serde_json::json;

    use super::*;

    fn event(content_type: Option<&str>, data: Option<Data>) -> Event {
        let mut event = EventBuilderV10::new()
            .id("1")
            .source("test")
            .ty("t")
            .build()
            .unwrap_or_default();
        if let Some(data) = data {
            match content_type {
                Some(content_type) => {
                    event.set_data(content_type, data);
                }
                None => {
                    event.set_data_unchecked(data);
                }
            }
        }
        event
    }

    #[test]
    fn json_data_is_taken_as_it_is() {
        let data = Data::Json(json!({"value": "80bpm"}));
        assert_eq!(
            event_data(&event(Some("application/json"), Some(data))),
            json!({"value": "80bpm"})
        );
        assert_eq!(event_data(&event(None, None)), Value::Null);
    }

    #[test]
    fn text_is_a_string_unless_declared_json() {
        let text = || Some(Data::String(String::from(r#"{"a": 1}"#)));
        assert_eq!(
            event_data(&event(Some("text/plain"), text())),
            json!(r#"{"a": 1}"#)
        );
        assert_eq!(event_data(&event(None, text())), json!(r#"{"a": 1}"#));
        assert_eq!(
            event_data(&event(
                Some("application/cloudevents+json; charset=utf-8"),
                text()
            )),
            json!({"a": 1})
        );
        let broken = Some(Data::String(String::from("{oops")));
        assert_eq!(
            event_data(&event(Some("application/json"), broken)),
            json!("{oops")
        );
    }

    #[test]
    fn bytes_are_json_only_when_declared_so() {
        let bytes = || Some(Data::Binary(b"[1, 2]".to_vec()));
        assert_eq!(
            event_data(&event(Some("Application/JSON"), bytes())),
            json!([1, 2])
        );
        assert_eq!(
            event_data(&event(Some("application/octet-stream"), bytes())),
            Value::Null
        );
        let invalid = Some(Data::Binary(vec![0xff, 0xfe]));
        assert_eq!(
            event_data(&event(Some("application/json"), invalid.clone())),
            Value::Null
        );
        assert_eq!(event_data(&event(Some("text/plain"), invalid)), Value::Null);
    }

    /// A text body arriving as bytes (the HTTP binary mode) is the text, as the same event in
    /// the structured mode is: it was `null`, and a merge of `null` changed nothing, so the
    /// payload vanished without an error.
    #[test]
    fn text_bytes_are_the_text() {
        let bytes = |text: &str| Some(Data::Binary(text.as_bytes().to_vec()));
        for content_type in ["text/plain", "Text/CSV; charset=utf-8"] {
            assert_eq!(
                event_data(&event(Some(content_type), bytes("a,b"))),
                json!("a,b"),
                "{content_type}"
            );
        }
        assert_eq!(
            event_data(&event(Some("application/json"), bytes("not json"))),
            json!("not json"),
            "as JSON text that does not parse is"
        );
        assert_eq!(
            event_data(&event(Some("application/octet-stream"), bytes("a,b"))),
            Value::Null
        );
    }
}
