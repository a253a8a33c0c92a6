//! Looking up an object's members. serde_json's map hashes the key of every lookup with
//! SipHash, about a hundred instructions for a short key, while task data, arguments and
//! results mostly have a handful of members: comparing the keys of an object that small finds
//! the member sooner (issue 10: 4.5% of the instructions of ten sequential calls).

use serde_json::{Map, Value};

/// Objects of up to this many members are searched by comparing keys.
const COMPARED: usize = 8;

/// Whether `object` is searched by comparing keys.
pub(crate) fn is_compared(object: &Map<String, Value>) -> bool {
    object.len() <= COMPARED
}

/// The member `key` of `object`.
// `inline`: a few comparisons, called on every path read and merge; left to itself, rustc
// made it a call in some builds and not in others (issue 10: 0.5% of seq10's instructions).
#[inline]
pub(crate) fn member<'o>(object: &'o Map<String, Value>, key: &str) -> Option<&'o Value> {
    if is_compared(object) {
        return object
            .iter()
            .find_map(|(name, value)| (name == key).then_some(value));
    }
    object.get(key)
}

/// The member `key` of `object`, to change.
#[inline]
pub(crate) fn member_mut<'o>(
    object: &'o mut Map<String, Value>,
    key: &str,
) -> Option<&'o mut Value> {
    if is_compared(object) {
        return object
            .iter_mut()
            .find_map(|(name, value)| (name == key).then_some(value));
    }
    object.get_mut(key)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Small objects (compared) and large ones (hashed) find the same members.
    #[test]
    fn small_and_large_objects_find_the_same_members() {
        for size in [0, 1, COMPARED, COMPARED + 1, 40] {
            let mut object: Map<String, Value> =
                (0..size).map(|i| (format!("k{i}"), json!(i))).collect();
            for i in 0..=size {
                let key = format!("k{i}");
                assert_eq!(member(&object, &key), object.get(&key), "{size}: {key}");
                let expected = object.get(&key).cloned();
                assert_eq!(member_mut(&mut object, &key).map(|v| v.clone()), expected);
            }
            assert_eq!(member(&object, "k"), None);
            if let Some(value) = member_mut(&mut object, "k0") {
                *value = json!("changed");
                assert_eq!(object.get("k0"), Some(&json!("changed")));
            }
        }
    }
}
