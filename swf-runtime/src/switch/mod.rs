//! Switch data conditions: the `path` / `operator` / `value` conditions of switch tasks (and the
//! choices of the earlier drafts, lowered to the same operators).

mod condition;
mod custom;
mod described;

pub use condition::{Comparison, ConditionOp, ConditionValue, data_condition};
pub use custom::CustomCondition;
pub use described::{Compare, Operand, Test, choose, take};
