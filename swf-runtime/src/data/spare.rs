//! Small objects kept for the next copy of the same kind (issue 10).
//!
//! The runtime copies small maps over and over: a foreach iteration's copy of the input its
//! task's iterations share (see [`SharedData`](crate::collection::SharedData)), six blocks
//! for `{"items": [placeholder], "item": null}` and about a thousand instructions, and each
//! call's copy of its made arguments object (see
//! [`Arguments`](crate::arguments::Arguments)). And it frees as many: what an output filter
//! leaves of the task data, and an action's result once merged into it. Those are kept here,
//! their values dropped, and the next copy is written over one: `clone_from` reuses its
//! table, its entries and its keys' buffers, so a copy allocates only the members that are
//! themselves arrays, objects or strings.
//!
//! Most copies are made over an object of the same members: a foreach iteration's input over
//! the last iteration's data, a call's arguments over the last call's result remainder of the
//! same function. Such a copy writes only the values, leaving the table and the keys as they
//! are; and a kept object keeps the buffers of its short arrays and strings (their elements
//! and text dropped), which the values are then copied into. So an iteration whose data holds
//! a shared array's placeholder (see [`SharedData`](crate::collection::SharedData)) or a
//! short string element copies it without allocating (issue 10).
//!
//! Kept per thread (a copy is made where the task runs, and no lock is taken), a few at most,
//! each of at most [`MEMBERS`] members with short keys. Only a map whose entries were reserved
//! far beyond its members (a function's own `Map::with_capacity`) holds more than that, and
//! serde_json's map does not tell its capacity.

use std::cell::RefCell;

use serde_json::{Map, Value};

/// How many objects a thread keeps.
pub(crate) const KEPT: usize = 4;

/// The most members a kept object may have: iteration data is a handful.
const MEMBERS: usize = 8;

/// The longest key buffer a kept object may hold, in bytes.
const KEY_CAPACITY: usize = 64;

/// The most elements a kept member's array buffer may have room for (a larger one is freed).
const ARRAY_CAPACITY: usize = 8;

/// The longest string buffer a kept member may hold, in bytes (a longer one is freed).
const STRING_CAPACITY: usize = 64;

thread_local! {
    static SPARE: RefCell<Vec<Map<String, Value>>> = const { RefCell::new(Vec::new()) };
}

/// Keeps `value` for a later [`copy`], when it is a small object and this thread has room;
/// drops it otherwise. Its members' values are dropped now: only the keys, the entries, the
/// table and the empty buffers of short arrays and strings are kept, so no task data outlives
/// its instance here (and no large collection stays in memory).
pub(crate) fn keep(value: Value) {
    let Value::Object(mut members) = value else {
        return;
    };
    if members.len() > MEMBERS || members.keys().any(|key| key.capacity() > KEY_CAPACITY) {
        return;
    }
    for member in members.values_mut() {
        empty(member);
    }
    // `Err`: the thread is ending and its spare objects are gone; the map is dropped.
    let _ = SPARE.try_with(|spare| {
        let mut spare = spare.borrow_mut();
        if spare.len() < KEPT {
            spare.push(members);
        }
    });
}

/// A copy of `base`, written over an object kept by [`keep`] when there is one.
pub(crate) fn copy(base: &Map<String, Value>) -> Map<String, Value> {
    match SPARE.try_with(|spare| spare.borrow_mut().pop()) {
        Ok(Some(mut spare)) => {
            if spare.len() == base.len() && spare.keys().eq(base.keys()) {
                // The same keys in the same order: the table and the keys are already the
                // base's (hashed by the spare's own hasher, which it keeps).
                for (slot, value) in spare.values_mut().zip(base.values()) {
                    copy_into(slot, value);
                }
            } else {
                spare.clone_from(base);
            }
            spare
        }
        Ok(None) | Err(_) => base.clone(),
    }
}

/// Drops what `member` holds, keeping the buffer of a short array or string (emptied) for
/// [`copy_into`]; anything else becomes `null`.
fn empty(member: &mut Value) {
    match member {
        Value::Array(elements) if elements.capacity() <= ARRAY_CAPACITY => {
            super::release_elements(elements);
        }
        Value::String(text) if text.capacity() <= STRING_CAPACITY => text.clear(),
        other => super::overwrite(other, Value::Null),
    }
}

/// Writes a copy of `value` over `slot`, into the buffer `slot` holds when both are arrays
/// or both strings (serde_json's `Value::clone_from` would allocate a new one).
fn copy_into(slot: &mut Value, value: &Value) {
    match (slot, value) {
        (Value::Array(slot), Value::Array(value)) => {
            // Pushed one by one: `clone_from` over the emptied buffer went through its
            // generic truncate, clone-over and extend, 130 instructions for the one element
            // of a shared array's placeholder (issue 10); `extend_from_slice` measured 61 more
            // per foreach iteration than this loop (2026-11-29).
            super::release_elements(slot);
            slot.reserve(value.len());
            for element in value {
                slot.push(element.clone());
            }
        }
        (Value::String(slot), Value::String(value)) => slot.clone_from(value),
        (slot, value) => super::overwrite(slot, value.clone()),
    }
}

/// How many objects this thread keeps.
#[cfg(test)]
pub(crate) fn kept_here() -> usize {
    SPARE.with_borrow(Vec::len)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn kept() -> Vec<Map<String, Value>> {
        SPARE.with_borrow(Clone::clone)
    }

    /// Nothing kept on this thread (another test may have run on it).
    fn none_kept() {
        SPARE.with_borrow_mut(Vec::clear);
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(members) => members,
            other => panic!("not an object: {other}"),
        }
    }

    /// A copy made over a kept object equals the base, members in the base's order, whatever
    /// the kept object held: more members, fewer, other keys, other kinds.
    #[test]
    fn a_copy_over_a_kept_object_is_the_base() {
        let bases = [
            json!({"items": [-1], "item": null}),
            json!({}),
            json!({"a": {"b": [1, 2, {"c": "d"}]}, "e": "text", "f": 2.5, "g": true}),
            json!({"item": 3, "items": [-1], "total": 7, "n": null, "m": [], "o": {}}),
            // The first one's keys, in its order, holding other kinds and longer values.
            json!({"items": "a text", "item": [1, 2, 3]}),
            json!({"items": (0..20).collect::<Vec<_>>(), "item": "x".repeat(100)}),
            json!({"items": [], "item": {"n": [1]}}),
            // Its keys in the other order.
            json!({"item": [-1], "items": null}),
        ];
        none_kept();
        for left in &bases {
            for base in &bases {
                keep(left.clone());
                assert_eq!(kept().len(), 1, "{left} is kept");
                let base = object(base.clone());
                let copy = copy(&base);
                assert!(kept().is_empty(), "the kept object was used");
                assert_eq!(copy, base);
                // Found by hashing too: the copy took the base's hasher with its hashes.
                for (key, value) in &base {
                    assert_eq!(copy.get(key), Some(value), "{key} in the copy");
                }
                assert!(
                    copy.keys().eq(base.keys()),
                    "{:?} against {:?}",
                    copy.keys().collect::<Vec<_>>(),
                    base.keys().collect::<Vec<_>>()
                );
            }
        }
    }

    /// A copy over a kept object of the same keys writes the base's values into the kept
    /// object's buffers: an iteration's placeholder array and a short string element are
    /// copied without allocating.
    #[test]
    fn a_copy_over_the_same_keys_reuses_the_buffers() {
        none_kept();
        let mut left = json!({"items": [0, 1, 2, 3], "item": "a short text"});
        left["items"].as_array_mut().unwrap().truncate(1);
        let array_buffer = left["items"].as_array().unwrap().as_ptr();
        let string_buffer = left["item"].as_str().unwrap().as_ptr();
        keep(left);
        let base = object(json!({"items": [-1], "item": "other"}));
        let copy = copy(&base);
        assert_eq!(copy, base);
        assert_eq!(copy["items"].as_array().unwrap().as_ptr(), array_buffer);
        assert_eq!(copy["item"].as_str().unwrap().as_ptr(), string_buffer);
    }

    /// A kept object holds none of its values (task data would outlive its instance, and a
    /// large collection would stay in memory), and a thread keeps a few small objects at most.
    #[test]
    fn only_a_few_small_objects_are_kept_and_emptied() {
        none_kept();
        keep(json!({"items": (0..1000).collect::<Vec<_>>(), "name": "x".repeat(100), "n": 2}));
        assert_eq!(
            kept(),
            vec![object(json!({"items": null, "name": null, "n": null}))]
        );
        none_kept();
        // Short arrays and strings keep their buffers, emptied; objects do not.
        keep(json!({"items": [-1, [2]], "name": "ada", "o": {"a": 1}}));
        assert_eq!(
            kept(),
            vec![object(json!({"items": [], "name": "", "o": null}))]
        );
        none_kept();
        for _ in 0..2 * KEPT {
            keep(json!({"a": 1}));
        }
        assert_eq!(kept().len(), KEPT);
        keep(json!([1, 2]));
        keep(json!("text"));
        assert_eq!(kept().len(), KEPT);
        none_kept();
        let many: Map<String, Value> = (0..=MEMBERS).map(|i| (format!("k{i}"), json!(i))).collect();
        keep(Value::Object(many));
        let long_key: Map<String, Value> = [("k".repeat(KEY_CAPACITY + 1), json!(1))]
            .into_iter()
            .collect();
        keep(Value::Object(long_key));
        assert!(kept().is_empty());
        assert_eq!(copy(&object(json!({"a": 1}))), object(json!({"a": 1})));
    }
}
