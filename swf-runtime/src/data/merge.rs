//! The merge rules of SEMANTICS.md: how incoming data (an action result without a results path,
//! consumed event data, inject data, error data) combines with the task data.

use std::fmt;

use serde_json::Value;

use super::kind::{article, kind};
use crate::members::{is_compared, member, member_mut};

/// Two values of different kinds met during a merge, so one would have silently replaced the
/// other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeConflict {
    /// The JSON pointer (RFC 6901) of the conflicting place in the task data; empty for the root.
    pub pointer: String,
    /// The kind of value the task data holds there (`object`, `array`, `string`, …).
    pub existing: &'static str,
    /// The kind of value the incoming data holds there.
    pub incoming: &'static str,
}

impl MergeConflict {
    /// Where the conflict happened, for a sentence: ``the root`` or `` `/a/b` ``.
    pub fn location(&self) -> String {
        if self.pointer.is_empty() {
            String::from("the root")
        } else {
            format!("`{}`", self.pointer)
        }
    }
}

impl fmt::Display for MergeConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot merge {} into {} at {}",
            article(self.incoming),
            article(self.existing),
            self.location()
        )
    }
}

impl std::error::Error for MergeConflict {}

/// Merges `incoming` into `target`:
///
/// - objects merge member by member, recursively, the incoming value winning;
/// - arrays concatenate, appending the incoming elements not already present, in order;
/// - an incoming `null` at the top level is a no-op (an action with nothing to return);
/// - a `null` in the target is replaced by whatever comes in;
/// - two scalars (string, number, boolean, incoming `null`): the incoming one wins;
/// - an object or array against a value of another kind is a [`MergeConflict`].
///
/// On conflict `target` is left exactly as it was: the whole merge is checked first.
///
/// # Errors
/// The first [`MergeConflict`] in document order of `incoming`.
pub fn merge(target: &mut Value, incoming: Value) -> Result<(), MergeConflict> {
    if incoming.is_null() {
        return Ok(());
    }
    if let Some(conflict) = find_conflict(target, &incoming) {
        return Err(conflict);
    }
    apply(target, incoming);
    Ok(())
}

/// [`merge`] of an action's result, which is mostly a small object of scalars merged into
/// task data of a few members: such a merge is found free of conflicts by comparing a few keys
/// (see [`meets_no_container`]) rather than by the hashed lookup per incoming member that the
/// check makes otherwise, before the lookup per member that the merge itself makes (issue 10).
/// Other merges (a branch's whole output, event data) seldom fit, and would only pay for
/// the comparison.
///
/// # Errors
/// As [`merge`].
pub fn merge_action_result(target: &mut Value, incoming: Value) -> Result<(), MergeConflict> {
    if meets_no_container(target, &incoming) {
        apply(target, incoming);
        return Ok(());
    }
    merge(target, incoming)
}

/// What [`merge_action_result`] of `incoming` would leave at the top-level member `key` of
/// `target`, taken out of `target` without the rest of the merge being made: for a task whose
/// output filter keeps that member alone, the other members of the result would be merged
/// only to be dropped (a key copied, hashed and entered each: issue 10). What is left of
/// `incoming` is kept for a later copy (see `spare`), as the merge keeps it.
///
/// `Err(incoming)`, with `target` untouched, when the shortcut does not apply: `target` or
/// `incoming` is not an object, `incoming` has no `key` (the filter might then keep the whole
/// merged data), or the merge would meet a conflict (which the caller's merge reports).
pub(crate) fn merged_member(
    target: &mut Value,
    incoming: Value,
    key: &str,
) -> Result<Value, Value> {
    let applies = match (&*target, &incoming) {
        (Value::Object(_), Value::Object(members)) => {
            member(members, key).is_some()
                && (meets_no_container(target, &incoming)
                    || find_conflict(target, &incoming).is_none())
        }
        _ => false,
    };
    let mut members = match incoming {
        Value::Object(members) if applies => members,
        other => return Err(other),
    };
    let value = member_mut(&mut members, key).map_or(Value::Null, std::mem::take);
    super::spare::keep(Value::Object(members));
    let existing = target
        .as_object_mut()
        .and_then(|existing| member_mut(existing, key));
    Ok(match existing {
        // Checked free of conflicts: the two are of one kind, merged as the merge would.
        Some(slot) if is_container(slot) => {
            let mut merged = std::mem::take(slot);
            apply(&mut merged, value);
            merged
        }
        // A scalar or a null there is replaced by whatever comes, as is a member it lacks.
        _ => value,
    })
}

/// True when `incoming` is a small object of scalars and no key of it names a container in
/// the small object `target` (small: searched by comparing keys, see `members`): the merge
/// then meets no conflict (a scalar conflicts only with a container).
fn meets_no_container(target: &Value, incoming: &Value) -> bool {
    let (Value::Object(existing), Value::Object(members)) = (target, incoming) else {
        return false;
    };
    is_compared(existing)
        && is_compared(members)
        && !members.values().any(is_container)
        && existing
            .iter()
            .filter(|(_, value)| is_container(value))
            .all(|(key, _)| members.keys().all(|member| member != key))
}

fn is_container(value: &Value) -> bool {
    matches!(value, Value::Object(_) | Value::Array(_))
}

/// The first conflict the merge of `incoming` into `target` would meet, its pointer relative
/// to `target` (written only once a conflict is found: a merge without one allocates nothing).
fn find_conflict(target: &Value, incoming: &Value) -> Option<MergeConflict> {
    match (target, incoming) {
        (Value::Null, _) | (Value::Array(_), Value::Array(_)) => None,
        (Value::Object(existing), Value::Object(members)) => {
            members.iter().find_map(|(key, value)| {
                let mut conflict = find_conflict(member(existing, key)?, value)?;
                let mut pointer = String::with_capacity(key.len() + 1 + conflict.pointer.len());
                push_token(&mut pointer, key);
                pointer.push_str(&conflict.pointer);
                conflict.pointer = pointer;
                Some(conflict)
            })
        }
        (existing, value) if !is_container(existing) && !is_container(value) => None,
        (existing, value) => Some(MergeConflict {
            pointer: String::new(),
            existing: kind(existing),
            incoming: kind(value),
        }),
    }
}

/// Appends `/key` to a JSON pointer, escaping `~` and `/` as RFC 6901 requires.
fn push_token(pointer: &mut String, key: &str) {
    pointer.push('/');
    for c in key.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            _ => pointer.push(c),
        }
    }
}

/// Performs a merge that [`find_conflict`] found free of conflicts.
fn apply(target: &mut Value, incoming: Value) {
    match (target, incoming) {
        (Value::Object(existing), Value::Object(mut members)) => {
            if is_compared(existing) && is_compared(&members) {
                // Mostly an action's result merged into task data of a few members: its values
                // are moved out, and the object, keys and all, is kept for a later copy (see
                // `spare`), which saves more than the copy of a key it makes for a member the
                // target lacks.
                for (key, value) in &mut members {
                    let value = std::mem::take(value);
                    match member_mut(existing, key) {
                        Some(slot) => merge_member(slot, value),
                        None => {
                            existing.insert(key.clone(), value);
                        }
                    }
                }
                super::spare::keep(Value::Object(members));
                return;
            }
            for (key, value) in members {
                // A member already there is found without hashing in a small object (see
                // `members`); otherwise one lookup per member, whether it is there or not.
                if is_compared(existing)
                    && let Some(slot) = member_mut(existing, &key)
                {
                    merge_member(slot, value);
                    continue;
                }
                match existing.entry(key) {
                    serde_json::map::Entry::Occupied(inner) => apply(inner.into_mut(), value),
                    serde_json::map::Entry::Vacant(place) => {
                        place.insert(value);
                    }
                }
            }
        }
        (Value::Array(existing), Value::Array(elements)) => {
            append_missing_values(existing, elements)
        }
        (slot, value) => super::overwrite(slot, value),
    }
}

/// Merges `value` into the member `slot` the target already has, a merge checked free of
/// conflicts.
fn merge_member(slot: &mut Value, value: Value) {
    if is_container(slot) {
        apply(slot, value);
    } else {
        // Checked: a scalar (or null) there is replaced by whatever comes.
        super::overwrite(slot, value);
    }
}

/// Appends to `existing` the elements of `incoming` it does not hold yet, in order: the merge
/// of two arrays.
pub(crate) fn append_missing_values(existing: &mut Vec<Value>, incoming: Vec<Value>) {
    // Seeded only when fingerprints are needed: most merges are short work, scanned.
    let state = std::cell::OnceCell::new();
    append_missing(existing, incoming, |element| {
        fingerprint(
            state.get_or_init(foldhash::fast::RandomState::default),
            element,
        )
    });
}

/// Up to how many comparisons (elements held × elements coming) the elements are found by a
/// scan of the array; above, by their fingerprints.
const SCAN_LIMIT: usize = 4096;

/// Appends to `existing` the elements of `incoming` it does not hold yet, in order.
///
/// The incoming elements that repeat `existing` from its start, position by position, are
/// present by definition and are skipped after one comparison each: that is what a merge of
/// the task data with a copy of itself plus results meets (a parallel branch's output merged
/// back, an iteration's). The others are looked for by a scan of the array while that is short
/// work, else among the elements of the same `fingerprint` (equal elements must have equal
/// fingerprints; equal fingerprints are only candidates): a scan per element made merging
/// large arrays quadratic (results gathered page by page into the task data).
fn append_missing<T: PartialEq>(
    existing: &mut Vec<T>,
    incoming: Vec<T>,
    fingerprint: impl Fn(&T) -> u64,
) {
    let mut incoming = incoming.into_iter().peekable();
    for held in existing.iter() {
        if incoming.next_if(|element| element == held).is_none() {
            break;
        }
    }
    if existing.len().saturating_mul(incoming.len()) <= SCAN_LIMIT {
        for element in incoming {
            if !existing.contains(&element) {
                existing.push(element);
            }
        }
        return;
    }
    // Fingerprint → the positions in `existing` of the elements that have it.
    let mut positions: std::collections::HashMap<u64, Vec<usize>, foldhash::fast::RandomState> =
        std::collections::HashMap::with_capacity_and_hasher(
            existing.len() + incoming.len(),
            foldhash::fast::RandomState::default(),
        );
    for (position, held) in existing.iter().enumerate() {
        positions
            .entry(fingerprint(held))
            .or_default()
            .push(position);
    }
    for element in incoming {
        let same = positions.entry(fingerprint(&element)).or_default();
        if same.iter().any(|&position| existing[position] == element) {
            continue;
        }
        same.push(existing.len());
        existing.push(element);
    }
}

/// A hash of `value` that agrees with its equality: objects hash alike whatever the order of
/// their members, and `0.0` like `-0.0`.
fn fingerprint(state: &foldhash::fast::RandomState, value: &Value) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut hasher = state.build_hasher();
    match value {
        Value::Null => 0u8.hash(&mut hasher),
        Value::Bool(flag) => (1u8, flag).hash(&mut hasher),
        Value::Number(number) => {
            if let Some(unsigned) = number.as_u64() {
                (2u8, unsigned).hash(&mut hasher);
            } else if let Some(signed) = number.as_i64() {
                (3u8, signed).hash(&mut hasher);
            } else {
                let float = number.as_f64().unwrap_or_default();
                let bits = if float == 0.0 { 0 } else { float.to_bits() };
                (4u8, bits).hash(&mut hasher);
            }
        }
        Value::String(text) => (5u8, text).hash(&mut hasher),
        Value::Array(items) => {
            (6u8, items.len()).hash(&mut hasher);
            for item in items {
                fingerprint(state, item).hash(&mut hasher);
            }
        }
        Value::Object(members) => {
            // A sum: the same whatever the order the members come in.
            let members = members.iter().fold(0u64, |sum, (key, member)| {
                sum.wrapping_add(state.hash_one((key, fingerprint(state, member))))
            });
            (7u8, members).hash(&mut hasher);
        }
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn merged(mut target: Value, incoming: Value) -> Result<Value, MergeConflict> {
        merge(&mut target, incoming).map(|()| target)
    }

    /// A small incoming object is merged member by member without being taken apart (it is
    /// then kept for a later copy): the same values, in the same order, as the merge of a
    /// large one or into a large target, which take it apart.
    #[test]
    fn small_objects_merge_as_large_ones_do() {
        let target = json!({"total": 1, "list": [1, 2], "deep": {"a": 1, "b": [3]}, "gone": null});
        let incoming = json!({"list": [2, 4], "new": {"x": [1]}, "total": 5,
            "deep": {"b": [3, 5], "c": true}, "gone": "x"});
        let expected = json!({"total": 5, "list": [1, 2, 4],
            "deep": {"a": 1, "b": [3, 5], "c": true}, "gone": "x", "new": {"x": [1]}});
        let keys = |value: &Value| {
            value
                .as_object()
                .map(|m| m.keys().cloned().collect::<Vec<_>>())
        };
        let padded = |value: &Value| {
            let mut value = value.clone();
            for i in 0..COMPARED_PADDING {
                value[format!("p{i}")] = json!(i);
            }
            value
        };

        let before = crate::data::spare::kept_here();
        let small = merged(target.clone(), incoming.clone()).expect("merges");
        assert_eq!(small, expected);
        assert_eq!(keys(&small), keys(&expected));
        // The incoming object and its member `deep`, while the thread has room.
        assert_eq!(
            crate::data::spare::kept_here(),
            (before + 2).min(crate::data::spare::KEPT)
        );

        // A large incoming object: its padding comes after the rest.
        let large = merged(target.clone(), padded(&incoming)).expect("merges");
        assert_eq!(large, padded(&expected));
        assert_eq!(keys(&large), keys(&padded(&expected)));

        // A large target: its padding stays before what the merge adds.
        let large = merged(padded(&target), incoming).expect("merges");
        let expected_large = {
            let mut value = padded(&target);
            for key in ["total", "list", "deep", "gone"] {
                value[key] = expected[key].clone();
            }
            value["new"] = expected["new"].clone();
            value
        };
        assert_eq!(large, expected_large);
        assert_eq!(keys(&large), keys(&expected_large));
    }

    /// Members enough to make an object large (searched by hashing, see `members`).
    const COMPARED_PADDING: usize = 9;

    #[test]
    fn objects_merge_recursively_and_incoming_wins() {
        let target = json!({"customer": {"name": "John", "age": 30}, "keep": 1});
        let incoming = json!({"customer": {"age": 31, "city": "Rome"}, "new": [1]});
        assert_eq!(
            merged(target, incoming),
            Ok(json!({
                "customer": {"name": "John", "age": 31, "city": "Rome"},
                "keep": 1,
                "new": [1]
            }))
        );
    }

    #[test]
    fn member_order_is_kept_and_new_members_come_last() {
        let result = merged(json!({"b": 1, "a": 2}), json!({"c": 3, "a": 4}));
        let keys: Vec<String> = result
            .ok()
            .and_then(|value| value.as_object().map(|map| map.keys().cloned().collect()))
            .unwrap_or_default();
        assert_eq!(keys, ["b", "a", "c"]);
    }

    #[test]
    fn arrays_concatenate_keeping_unique_elements() {
        let target = json!({"breads": ["baguette", "rye"]});
        let incoming = json!({"breads": ["rye", "pita", "pita", {"x": 1}]});
        assert_eq!(
            merged(target, incoming),
            Ok(json!({"breads": ["baguette", "rye", "pita", {"x": 1}]}))
        );
        assert_eq!(merged(json!([1, 2]), json!([2, 3])), Ok(json!([1, 2, 3])));
    }

    /// An element that counts the comparisons made with it.
    #[derive(Debug)]
    struct Counted<'c>(u32, &'c std::cell::Cell<usize>);

    impl PartialEq for Counted<'_> {
        fn eq(&self, other: &Self) -> bool {
            self.1.set(self.1.get() + 1);
            self.0 == other.0
        }
    }

    /// The numbers of `range`, each counting its comparisons in `comparisons`.
    fn counted(
        range: std::ops::Range<u32>,
        comparisons: &std::cell::Cell<usize>,
    ) -> Vec<Counted<'_>> {
        range.map(|n| Counted(n, comparisons)).collect()
    }

    /// A branch's output merged back holds the task data's arrays whole, then what it added:
    /// that costs a comparison per element, not a scan per element (quadratic: 500,500 here).
    #[test]
    fn an_array_merged_with_itself_plus_more_costs_one_comparison_per_element() {
        let comparisons = std::cell::Cell::new(0);
        let numbers = |range| counted(range, &comparisons);
        let mut existing = numbers(0..1000);
        let mut incoming = numbers(0..1000);
        incoming.extend(numbers(1000..1002));
        incoming.push(Counted(5, &comparisons));
        append_missing(&mut existing, incoming, |element| u64::from(element.0));
        let held: Vec<u32> = existing.iter().map(|element| element.0).collect();
        assert_eq!(held, (0..1002).collect::<Vec<_>>());
        // 1,000 for the repeated start, then (3 × 1,000 is short work) a scan of the 1,000
        // (and the one appended before) for each of the three others: 1000, 1001, and 5
        // found at its place.
        assert_eq!(comparisons.get(), 1000 + 1000 + 1001 + 6);
    }

    /// Results gathered page by page: each page merged into a large array costs a comparison
    /// per candidate of the same fingerprint, not a scan of the array (2,000,000 here).
    #[test]
    fn large_arrays_merge_in_linear_time() {
        let comparisons = std::cell::Cell::new(0);
        let numbers = |range| counted(range, &comparisons);
        let mut existing = numbers(0..2000);
        let mut incoming = numbers(2000..3000);
        incoming.extend(numbers(10..20));
        incoming.extend(numbers(2500..2510));
        // Every third fingerprint is shared by three numbers: candidates, not matches.
        append_missing(&mut existing, incoming, |element| u64::from(element.0 / 3));
        let held: Vec<u32> = existing.iter().map(|element| element.0).collect();
        assert_eq!(held, (0..3000).collect::<Vec<_>>());
        assert!(
            comparisons.get() < 5000,
            "{} comparisons",
            comparisons.get()
        );
    }

    /// The fingerprints' way and the scan's agree, on arrays with repeats, objects in another
    /// member order, numbers of every kind and nested values.
    #[test]
    fn fingerprints_find_what_a_scan_finds() {
        let palette = [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(-1),
            json!(1.5),
            json!(0.0),
            json!(-0.0),
            json!(u64::MAX),
            json!("a"),
            json!([1, 2]),
            json!([2, 1]),
            json!({"a": 1, "b": [2]}),
            json!({"b": [2], "a": 1}),
            json!({"a": 1}),
            json!({"a": {"b": null}}),
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut pick = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            palette[usize::try_from(state >> 33).unwrap_or(0) % palette.len()].clone()
        };
        for _ in 0..20 {
            let existing: Vec<Value> = (0..80).map(|_| pick()).collect();
            let incoming: Vec<Value> = (0..80).map(|_| pick()).collect();
            let mut scanned = existing.clone();
            for element in incoming.clone() {
                if !scanned.contains(&element) {
                    scanned.push(element);
                }
            }
            let mut merged = Value::Array(existing);
            apply(&mut merged, Value::Array(incoming));
            assert_eq!(merged, Value::Array(scanned));
        }
    }

    #[test]
    fn a_start_that_differs_falls_back_to_a_scan_per_element() {
        assert_eq!(
            merged(json!([1, 2, 3]), json!([1, 3, 2, 4, 4])),
            Ok(json!([1, 2, 3, 4]))
        );
        assert_eq!(
            merged(json!([1, 2]), json!([1, 2, 1, 2, 3])),
            Ok(json!([1, 2, 3]))
        );
        assert_eq!(merged(json!([]), json!([7, 7])), Ok(json!([7])));
        assert_eq!(merged(json!([1, 1]), json!([1])), Ok(json!([1, 1])));
    }

    #[test]
    fn nulls_and_scalars() {
        assert_eq!(merged(json!({"a": 1}), Value::Null), Ok(json!({"a": 1})));
        assert_eq!(merged(Value::Null, json!({"a": 1})), Ok(json!({"a": 1})));
        assert_eq!(merged(Value::Null, json!("text")), Ok(json!("text")));
        assert_eq!(
            merged(json!({"a": null}), json!({"a": [1]})),
            Ok(json!({"a": [1]}))
        );
        assert_eq!(
            merged(json!({"a": "x"}), json!({"a": 2})),
            Ok(json!({"a": 2}))
        );
        assert_eq!(
            merged(json!({"a": true}), json!({"a": null})),
            Ok(json!({"a": null}))
        );
        assert_eq!(merged(json!(1), json!("one")), Ok(json!("one")));
    }

    #[test]
    fn containers_against_other_kinds_conflict_with_a_pointer() {
        assert_eq!(
            merged(json!({"a": {"b": {"c": 1}}}), json!({"a": {"b": "text"}})),
            Err(MergeConflict {
                pointer: "/a/b".into(),
                existing: "object",
                incoming: "string"
            })
        );
        assert_eq!(
            merged(json!({"a/b": {"~": [1]}}), json!({"a/b": {"~": {"x": 1}}})),
            Err(MergeConflict {
                pointer: "/a~1b/~0".into(),
                existing: "array",
                incoming: "object"
            })
        );
        assert_eq!(
            merged(json!({"a": 1}), json!({"a": [1]})),
            Err(MergeConflict {
                pointer: "/a".into(),
                existing: "number",
                incoming: "array"
            })
        );
        assert_eq!(
            merged(json!({"a": {}}), json!({"a": null})),
            Err(MergeConflict {
                pointer: "/a".into(),
                existing: "object",
                incoming: "null"
            })
        );
        assert_eq!(
            merged(json!({}), json!("hello")),
            Err(MergeConflict {
                pointer: String::new(),
                existing: "object",
                incoming: "string"
            })
        );
    }

    /// The shortcut for action results (small objects of scalars) merges exactly as `merge`
    /// does, conflicts included.
    #[test]
    fn an_action_result_merges_as_any_data() {
        let wide: serde_json::Map<String, Value> =
            (0..12).map(|i| (format!("k{i}"), json!(i))).collect();
        let cases = [
            (
                json!({"total": 1, "list": [1]}),
                json!({"total": 2, "n": 3}),
            ),
            (json!({"list": [1], "item": 4}), json!({"n": 8})),
            (json!({"a": {}}), json!({"a": null})),
            (json!({"a": [1], "b": 2}), json!({"b": 3, "a": "x"})),
            (json!({"a": 1}), json!({"a": [2]})),
            (json!({"a": 1}), json!({"a": {"b": 2}})),
            (json!({"a": {"b": 1}}), json!({"a": {"c": 2}})),
            (json!({}), json!("text")),
            (json!([1]), json!({"a": 1})),
            (json!({"a": 1}), Value::Null),
            (Value::Object(wide.clone()), json!({"k3": "x", "new": true})),
            (json!({"k3": [1]}), Value::Object(wide)),
        ];
        for (target, incoming) in cases {
            let expected = merged(target.clone(), incoming.clone());
            let mut shortcut = target.clone();
            let got =
                merge_action_result(&mut shortcut, incoming.clone()).map(|()| shortcut.clone());
            assert_eq!(got, expected, "{target} <- {incoming}");
            if got.is_err() {
                assert_eq!(shortcut, target, "a conflict leaves the target untouched");
            }
        }
    }

    #[test]
    fn a_conflict_leaves_the_target_untouched() {
        let mut target = json!({"first": {"x": 1}, "second": {"y": 2}});
        let before = target.clone();
        let incoming = json!({"first": {"x": 5, "z": 6}, "second": [1]});
        assert!(merge(&mut target, incoming).is_err());
        assert_eq!(target, before);
    }

    #[test]
    fn conflicts_display_kinds_and_place() {
        let root = MergeConflict {
            pointer: String::new(),
            existing: "object",
            incoming: "string",
        };
        assert_eq!(
            root.to_string(),
            "cannot merge a string into an object at the root"
        );
        let nested = MergeConflict {
            pointer: "/a".into(),
            existing: "array",
            incoming: "null",
        };
        assert_eq!(
            nested.to_string(),
            "cannot merge null into an array at `/a`"
        );
    }
}
