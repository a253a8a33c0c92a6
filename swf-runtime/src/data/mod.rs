//! Task data handling: filters that select parts of the data and the merge rules that combine
//! action results, event data, inject data and error data with it.

mod filter;
pub(crate) mod kind;
mod merge;
mod report;
pub(crate) mod spare;

pub use filter::{
    data_with_error, filter_in_place, filter_output, select_input, select_or_null,
    write_result_then_filter,
};
pub(crate) use merge::append_missing_values;
pub use report::{merge_data, merge_result, merge_result_then_filter};

/// Writes `value` over `slot`. The drop of a `Value` is an outlined function (it recurses into
/// arrays and objects), called on every assignment even when the old value is a null, a
/// boolean or a number, which hold nothing to free: about 25 instructions each time, and most
/// slots written on the hot paths hold one (a foreach element's, an argument's, a merged or
/// emptied member's; issue 10). Those are forgotten instead, which frees nothing that a drop
/// would have freed: `needs_drop` is false for serde_json's `Number` unless its
/// `arbitrary_precision` feature makes it hold text, and then numbers are dropped.
#[inline]
pub(crate) fn overwrite(slot: &mut serde_json::Value, value: serde_json::Value) {
    release(std::mem::replace(slot, value));
}

/// Drops `value`, without calling the outlined drop for a null, a boolean or a number (see
/// [`overwrite`]).
#[inline]
pub(crate) fn release(value: serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Null | Value::Bool(_) => std::mem::forget(value),
        Value::Number(_) if !std::mem::needs_drop::<serde_json::Number>() => {
            std::mem::forget(value);
        }
        other => drop(other),
    }
}

/// Empties `elements`, keeping its buffer, without the outlined drop for the scalars among
/// them (see [`release`]).
#[inline]
pub(crate) fn release_elements(elements: &mut Vec<serde_json::Value>) {
    while let Some(element) = elements.pop() {
        release(element);
    }
}

/// A JSON object of `members`, in their order (generated code builds parameters and literal
/// data with it: one call instead of an insert per member).
pub fn object<const N: usize>(members: [(&str, serde_json::Value); N]) -> serde_json::Value {
    let mut map = serde_json::Map::with_capacity(N);
    for (key, value) in members {
        map.insert(key.to_owned(), value);
    }
    serde_json::Value::Object(map)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::overwrite;

    /// Whatever a slot held (a scalar forgotten, a string, array or object dropped), it holds
    /// what was written over it.
    #[test]
    fn a_slot_written_over_holds_the_new_value_whatever_it_held() {
        let kinds = [
            Value::Null,
            json!(true),
            json!(7),
            json!(-2.5),
            json!("text"),
            json!([1, "two", [3]]),
            json!({"a": {"b": [1]}}),
        ];
        for old in &kinds {
            for new in &kinds {
                let mut slot = old.clone();
                overwrite(&mut slot, new.clone());
                assert_eq!(&slot, new, "{new} written over {old}");
            }
        }
    }
}
