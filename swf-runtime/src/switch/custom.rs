//! The argument of a user-implemented `custom` condition.

use serde_json::Value;

/// What a user's predicate gets for a switch condition with operator `custom`.
///
/// The drafts leave the meaning of `custom` to the implementation and put its details in the
/// condition's `metadata`; the predicate receives everything the condition declares plus what its
/// path selected.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CustomCondition<'a> {
    /// The name of the switch task.
    pub task: &'a str,
    /// The condition's JSONPath, as written (normalized).
    pub path: &'a str,
    /// What the path selected in the task data (`None` when nothing).
    pub selected: Option<&'a Value>,
    /// The condition's `value`.
    pub value: &'a str,
    /// The condition's `metadata` (`null` when it has none).
    pub metadata: &'a Value,
}
