//! Text no store holds alike. The stores keep an event's source and id, the correlation values
//! an instance is bound to and the start group keys they make as indexed text, and the worker's
//! name with every lease. PostgreSQL's `text` holds no U+0000 (nor does CloudEvents allow it in
//! a string), and an entry of its indexes at most 2,704 bytes (an event's source and id share
//! one). What the stores cannot hold is refused here, on every store alike, before it reaches
//! the store: in a batch of deliveries or creations it would fail the one transaction of every
//! other caller on PostgreSQL, and with an error that says to retry.

use std::collections::BTreeMap;

use cloudevents::{AttributesReader, Data, Event};

use crate::events::event_data;

use crate::store::{Delivery, StoreError, StoreErrorKind};

/// The longest event id, event source, correlation attribute or correlation value the stores
/// take, in bytes: two of them fit one PostgreSQL index entry, whatever their text.
pub const MAX_STORED_KEY_BYTES: usize = 1024;

/// Why U+0000 is refused.
const NUL: &str = "holds the character U+0000, which CloudEvents does not allow in a string \
                   and PostgreSQL cannot store";

/// Why `text`, which the stores index, cannot be stored, if it cannot.
fn fault(text: &str) -> Option<String> {
    if text.contains('\0') {
        Some(String::from(NUL))
    } else if text.len() > MAX_STORED_KEY_BYTES {
        Some(format!(
            "is {} bytes long, and the stores index at most {MAX_STORED_KEY_BYTES} (an entry of a \
             PostgreSQL index holds at most 2,704 bytes)",
            text.len()
        ))
    } else {
        None
    }
}

/// `text` quoted for a message, cut after 40 characters.
fn shown(text: &str) -> String {
    let mut characters = text.chars();
    let start: String = characters.by_ref().take(40).collect();
    let cut = if characters.next().is_some() {
        "…"
    } else {
        ""
    };
    format!("{start:?}{cut}")
}

fn invalid(message: String) -> StoreError {
    StoreError::new(StoreErrorKind::Invalid, message)
}

/// Why the stores could not read `event` back as it is, if they could not: a step that runs
/// again (after a crash, a lease that ran out, on another worker) reads the stored event, and
/// must see the data the first run saw (see [`event_data`]). Deliver it as
/// [`with_json_text_parsed`](crate::events::with_json_text_parsed) makes it, which stores JSON text under a JSON content type as
/// JSON. The CloudEvents SDK writes JSON data as JSON under any content type, but reads it
/// back as JSON only under a JSON one (`application/json`, a `+json` type without parameters;
/// case counts): any other is taken for a string and fails, and an inbox holding such an event
/// would fail every claim of its instance. And it reads bytes without a content type back as
/// JSON, where the event had none.
fn unreadable(event: &Event) -> Option<String> {
    match (event.data(), event.datacontenttype()) {
        // What every producer of JSON events sends, read back as it was written.
        (None, _) | (Some(Data::Json(_)), None | Some("application/json")) => return None,
        _ => {}
    }
    // A body that does not serialize is the store's to report.
    let body = serde_json::to_string(event).ok()?;
    let content_type = event
        .datacontenttype()
        .map_or_else(|| String::from("none"), shown);
    let back = match serde_json::from_str::<Event>(&body) {
        Ok(back) => back,
        Err(error) => {
            return Some(format!(
                "its data is JSON but its content type is {content_type}, under which the \
                 CloudEvents reader takes data for a string ({error}), so no store could read \
                 it back: give it the content type application/json"
            ));
        }
    };
    let (data, stored) = (event_data(event), event_data(&back));
    (data != stored).then(|| {
        format!(
            "a store would give it back with other data: its data reads as {} under its content \
             type ({content_type}), but {} once stored, so a step that ran again after a crash \
             would see other data: give it a content type that says what its data is \
             (application/json for JSON, application/octet-stream for bytes)",
            shown(&data.to_string()),
            shown(&stored.to_string()),
        )
    })
}

/// `Invalid` when the event of `delivery` has U+0000 in its id, its source, or a value of the
/// correlation attributes of the definitions it matches, or one of them is longer than
/// [`MAX_STORED_KEY_BYTES`], or its data could not be read back ([`unreadable`]).
pub(super) fn refuse_unstorable_event(delivery: &Delivery) -> Result<(), StoreError> {
    let event = &delivery.event;
    let (id, source) = (event.id(), event.source().as_str());
    let found = fault(id)
        .map(|why| format!("its id {why}"))
        .or_else(|| fault(source).map(|why| format!("its source {why}")))
        .or_else(|| unreadable(event))
        .or_else(|| {
            delivery
                .targets
                .iter()
                .find_map(|target| match &target.correlation {
                    Some((attribute, Some(value))) => fault(value)
                        .map(|why| format!("its correlation attribute `{attribute}` {why}")),
                    _ => None,
                })
        });
    match found {
        Some(what) => Err(invalid(format!(
            "the event {} from {} is refused: {what}",
            shown(id),
            shown(source)
        ))),
        None => Ok(()),
    }
}

/// `Invalid` when an attribute or a value of `correlation` (an instance's from its start) has
/// U+0000 or is longer than [`MAX_STORED_KEY_BYTES`].
pub(super) fn refuse_unstorable_correlation(
    correlation: &BTreeMap<String, String>,
) -> Result<(), StoreError> {
    for (attribute, value) in correlation {
        if let Some(why) = fault(attribute).or_else(|| fault(value)) {
            return Err(invalid(format!(
                "the correlation {} = {} is refused: it {why}",
                shown(attribute),
                shown(value)
            )));
        }
    }
    Ok(())
}

/// `Invalid` when a start key has U+0000 or is longer than [`MAX_STORED_KEY_BYTES`] (the
/// stores index it).
pub(super) fn refuse_unstorable_start_key(key: &str) -> Result<(), StoreError> {
    match fault(key) {
        Some(why) => Err(invalid(format!(
            "the start key {} is refused: it {why}",
            shown(key)
        ))),
        None => Ok(()),
    }
}

/// `Invalid` when the worker's name `worker` (written with every lease it takes) has U+0000:
/// every claim and commit of such a worker would fail on PostgreSQL.
pub(super) fn refuse_unstorable_worker(worker: &str) -> Result<(), StoreError> {
    if worker.contains('\0') {
        return Err(invalid(format!(
            "the worker name {} is refused: it {NUL}",
            shown(worker)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use cloudevents::{EventBuilder, EventBuilderV10};
    use serde_json::json;

    use super::*;
    use crate::events::with_json_text_parsed;

    fn event(content_type: Option<&str>, data: Data) -> Event {
        let mut event = EventBuilderV10::new()
            .id("1")
            .source("s")
            .ty("t")
            .build()
            .unwrap_or_default();
        match content_type {
            Some(content_type) => drop(event.set_data(content_type, data)),
            None => drop(event.set_data_unchecked(data)),
        }
        event
    }

    /// Every event delivered is stored in the form that reads back with the data a step saw,
    /// or refused: text under a JSON content type is stored as its JSON; bytes without a
    /// content type (none to a step, JSON to the reader) and JSON under a text type are
    /// refused.
    #[test]
    fn an_event_is_stored_as_it_reads_or_refused() {
        let text = |text: &str| Data::String(text.to_owned());
        let stored = [
            event(Some("application/json"), text(r#"{"total": 5}"#)),
            event(Some("application/json"), text("not json")),
            event(Some("application/ld+json"), text("[1, 2]")),
            event(None, text("plain")),
            event(Some("text/plain"), text(r#"{"total": 5}"#)),
            event(Some("text/plain"), Data::Binary(b"bytes".to_vec())),
            event(
                Some("application/json"),
                Data::Binary(br#"{"a": 1}"#.to_vec()),
            ),
            event(None, Data::Json(json!({"a": 1}))),
            event(Some("application/json"), Data::Json(json!("text"))),
        ];
        for event in stored {
            let event = with_json_text_parsed(event);
            assert_eq!(unreadable(&event), None, "{event}");
        }
        let refused = [
            (
                event(None, Data::Binary(br#"{"a": 1}"#.to_vec())),
                r#"reads as "null" under its content type (none), but "{\"a\":1}" once stored"#,
            ),
            (
                event(Some("text/plain"), Data::Json(json!({"a": 1}))),
                "under which the CloudEvents reader takes data for a string",
            ),
        ];
        for (event, why) in refused {
            let event = with_json_text_parsed(event);
            let message = unreadable(&event).unwrap_or_default();
            assert!(message.contains(why), "{message}");
        }
    }
}
