//! How both SQL stores encode records in columns: one encoding, so that the two stores agree.
//!
//! - Instants are `i64` microseconds since the Unix epoch (PostgreSQL's own precision), durations
//!   `i64` microseconds.
//! - Statuses and history kinds are small integers (their index in lifecycle order), which keeps
//!   the rows and the partial indexes on them compact.
//! - Events are their CloudEvents JSON text; values (outcomes, details) are JSON text.
//! - Names (event definitions, correlation attributes) are interned per workflow in a small table
//!   and referenced by integer, so that waits and bindings need not repeat the workflow.

use std::time::Duration;

use cloudevents::{AttributesReader, Event};
use jiff::Timestamp;
use serde_json::Value;

use super::{HistoryKind, InstanceId, Status, StoreError, StoreErrorKind};

/// The kind of an interned name: an event definition.
pub(crate) const EVENT_DEFINITION: i16 = 0;
/// The kind of an interned name: a correlation attribute.
pub(crate) const CORRELATION_ATTRIBUTE: i16 = 1;

/// Most rows [`Store::list`](super::Store::list) returns at once.
pub(crate) const LIST_CAP: usize = super::MAX_LIST_LIMIT;

/// The history kinds in the order of their codes.
const HISTORY_KINDS: [HistoryKind; 7] = [
    HistoryKind::Started,
    HistoryKind::Stepped,
    HistoryKind::Waiting,
    HistoryKind::Completed,
    HistoryKind::Failed,
    HistoryKind::Cancelled,
    HistoryKind::Redriven,
];

/// A broken row: data this build cannot read.
pub(crate) fn incompatible(message: impl Into<String>) -> StoreError {
    StoreError::new(StoreErrorKind::Incompatible, message)
}

/// A request the store refuses.
pub(crate) fn invalid(message: impl Into<String>) -> StoreError {
    StoreError::new(StoreErrorKind::Invalid, message)
}

/// The database failed or cannot be reached.
pub(crate) fn unavailable(message: impl Into<String>) -> StoreError {
    StoreError::new(StoreErrorKind::Unavailable, message)
}

/// The refusal to open a database whose schema is newer than this build's.
pub(crate) fn newer_schema(database: &str, found: i64, supported: i64) -> StoreError {
    incompatible(format!(
        "the {database} database has schema version {found}, but this build of swf supports \
         versions up to {supported}: use a newer swf"
    ))
}

/// Whether a tool that neither creates nor migrates a store (`swf`) may work on one whose
/// schema has version `found` (0: the version table is empty): only this build's.
pub(crate) fn existing_schema(
    database: &str,
    found: i64,
    supported: i64,
) -> Result<(), StoreError> {
    if found > supported {
        return Err(newer_schema(database, found, supported));
    }
    if found < supported {
        return Err(incompatible(format!(
            "the {database} database has schema version {found}, older than this build of swf's \
             ({supported}), and was left as it was: start a DurableHost of this build on it \
             first (it brings the schema up to date), or use the swf of the build that wrote it"
        )));
    }
    Ok(())
}

/// An instant as stored.
pub(crate) fn micros(at: Timestamp) -> i64 {
    at.as_microsecond()
}

/// A stored instant.
pub(crate) fn timestamp(micros: i64) -> Result<Timestamp, StoreError> {
    Timestamp::from_microsecond(micros).map_err(|error| {
        incompatible(format!(
            "a stored instant ({micros} µs) is out of range: {error}"
        ))
    })
}

/// An optional stored instant.
pub(crate) fn timestamp_opt(micros: Option<i64>) -> Result<Option<Timestamp>, StoreError> {
    micros.map(timestamp).transpose()
}

/// `now + lease` as stored.
pub(crate) fn deadline(now: Timestamp, lease: Duration) -> Result<i64, StoreError> {
    i64::try_from(lease.as_micros())
        .ok()
        .and_then(|lease| micros(now).checked_add(lease))
        .ok_or_else(|| invalid(format!("a lease of {lease:?} is out of range")))
}

/// An instance id as stored.
pub(crate) fn id_column(id: InstanceId) -> Result<i64, StoreError> {
    i64::try_from(id.get()).map_err(|_| invalid(format!("instance id {id} is out of range")))
}

/// A stored instance id.
pub(crate) fn instance_id(column: i64) -> Result<InstanceId, StoreError> {
    u64::try_from(column)
        .map(InstanceId::new)
        .map_err(|_| incompatible(format!("a stored instance id ({column}) is negative")))
}

/// A sequence number or revision as stored.
pub(crate) fn number_column(number: u64) -> Result<i64, StoreError> {
    i64::try_from(number).map_err(|_| invalid(format!("number {number} is out of range")))
}

/// A stored sequence number or revision.
pub(crate) fn number(column: i64) -> Result<u64, StoreError> {
    u64::try_from(column)
        .map_err(|_| incompatible(format!("a stored number ({column}) is negative")))
}

/// A status as stored.
pub(crate) fn status_code(status: Status) -> i16 {
    match status {
        Status::Runnable => 0,
        Status::Waiting => 1,
        Status::Completed => 2,
        Status::Failed => 3,
        Status::Cancelled => 4,
    }
}

/// A stored status.
pub(crate) fn status(code: i64) -> Result<Status, StoreError> {
    usize::try_from(code)
        .ok()
        .and_then(|index| Status::ALL.get(index).copied())
        .ok_or_else(|| incompatible(format!("a stored status ({code}) is unknown")))
}

/// A history kind as stored.
pub(crate) fn history_kind_code(kind: HistoryKind) -> i16 {
    let index = HISTORY_KINDS.iter().position(|known| *known == kind);
    // Every kind is in the table, so the fallback is unreachable; it keeps this total.
    index
        .and_then(|index| i16::try_from(index).ok())
        .unwrap_or(i16::MAX)
}

/// Whether a commit to `status` empties the instance's inbox and removes its bindings: a
/// completed or cancelled instance takes no event any more, but a failed one keeps both for a
/// redrive, which runs the failed step again (it must find the events that step took) and may
/// wait for more events of the values it is bound to.
pub(crate) fn clears_inbox_and_bindings(status: Status) -> bool {
    matches!(status, Status::Completed | Status::Cancelled)
}

/// The history entries a trim keeps besides the first: why an instance failed, which its record
/// no longer says once it is redriven.
pub(crate) const KEPT_HISTORY_KINDS: [HistoryKind; 2] =
    [HistoryKind::Failed, HistoryKind::Redriven];

/// The last revision a commit writing `revision` trims, for one asking to trim `through` it:
/// never the entry it writes (a `through` beyond what a column holds trims all before it).
pub(crate) fn trimmed_through(through: u64, revision: i64) -> i64 {
    i64::try_from(through).unwrap_or(i64::MAX).min(revision - 1)
}

/// A stored history kind.
pub(crate) fn history_kind(code: i64) -> Result<HistoryKind, StoreError> {
    usize::try_from(code)
        .ok()
        .and_then(|index| HISTORY_KINDS.get(index).copied())
        .ok_or_else(|| incompatible(format!("a stored history kind ({code}) is unknown")))
}

/// An event as stored, with its `source` and `id` (the key duplicates are detected by).
pub(crate) struct EncodedEvent {
    /// Its `source`.
    pub source: String,
    /// Its `id`.
    pub id: String,
    /// Its CloudEvents JSON.
    pub body: String,
}

/// Encodes an event.
pub(crate) fn encode_event(event: &Event) -> Result<EncodedEvent, StoreError> {
    let body = serde_json::to_string(event).map_err(|error| {
        invalid(format!(
            "event {} cannot be serialized: {error}",
            event.id()
        ))
    })?;
    Ok(EncodedEvent {
        source: event.source().to_string(),
        id: event.id().to_string(),
        body,
    })
}

/// A stored event.
pub(crate) fn event(body: &str) -> Result<Event, StoreError> {
    serde_json::from_str(body)
        .map_err(|error| incompatible(format!("a stored event cannot be read: {error}")))
}

/// A value as stored.
pub(crate) fn json_text(value: &Value) -> String {
    value.to_string()
}

/// A stored value.
pub(crate) fn json_value(text: &str) -> Result<Value, StoreError> {
    serde_json::from_str(text)
        .map_err(|error| incompatible(format!("a stored value is not JSON: {error}")))
}

/// A list of strings as stored (a JSON array).
pub(crate) fn strings_text(strings: &[String]) -> String {
    Value::from(strings.to_vec()).to_string()
}

/// A stored list of strings.
pub(crate) fn strings(text: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text)
        .map_err(|error| incompatible(format!("a stored list of strings cannot be read: {error}")))
}

/// What a conflicting commit found, for [`CommitResult::Conflict`](super::CommitResult).
pub(crate) fn conflict_found(revision: i64, lease_worker: Option<&str>, status: Status) -> String {
    let holder = match lease_worker {
        Some(worker) => format!("leased to {worker}"),
        None => "not leased".to_string(),
    };
    format!("revision {revision}, {holder}, {status}")
}

/// A purge naming a workflow the store has never seen: most likely a typo, which would
/// otherwise purge nothing and say nothing.
pub(crate) fn unknown_workflow(name: &str) -> StoreError {
    StoreError::new(
        StoreErrorKind::NotFound,
        format!("there is no workflow `{name}` in this store: check the workflow id"),
    )
}

#[cfg(test)]
mod tests {
    use super::{json_text, json_value};

    /// Without serde_json's `float_roundtrip`, about one double in ten read back one unit in the
    /// last place off: a resumed instance's numbers drifted at every load, and a keyed start
    /// whose input held one was refused as another input. (The `schemas` feature hid it:
    /// jsonschema turns `float_roundtrip` on.)
    #[test]
    fn stored_numbers_read_back_bit_for_bit() {
        let mut bits = 0x9E37_79B9_7F4A_7C15_u64;
        for _ in 0..10_000 {
            bits ^= bits << 13;
            bits ^= bits >> 7;
            bits ^= bits << 17;
            let number = f64::from_bits(bits);
            if !number.is_finite() {
                continue;
            }
            let text = json_text(&serde_json::json!({ "x": number }));
            let read = json_value(&text).expect("stored JSON")["x"].as_f64();
            assert_eq!(read.map(f64::to_bits), Some(number.to_bits()), "{text}");
        }
    }
}
