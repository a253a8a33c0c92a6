//! Task data handling: filters that select parts of the data and the merge rules that combine
//! action results, event data, inject data and error data with it.

mod filter;
pub(crate) mod kind;
mod merge;
mod report;

pub use filter::{data_with_error, filter_in_place, select_input, select_or_null};
pub use report::{merge_data, merge_result};
