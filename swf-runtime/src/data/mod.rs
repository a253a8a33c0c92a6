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

/// A JSON object of `members`, in their order (generated code builds parameters and literal
/// data with it: one call instead of an insert per member).
pub fn object<const N: usize>(members: [(&str, serde_json::Value); N]) -> serde_json::Value {
    let mut map = serde_json::Map::with_capacity(N);
    for (key, value) in members {
        map.insert(key.to_owned(), value);
    }
    serde_json::Value::Object(map)
}
