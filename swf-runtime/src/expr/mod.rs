//! The building blocks of compiled expressions.
//!
//! The code generator parses every expression (SpEL subset, JSONPath) at build time and emits Rust
//! code that combines these functions with `&&`, `||` and `!`; nothing is parsed from a string at
//! run time.

mod compare;
mod operand;
mod pattern;

pub(crate) use compare::number_order;
pub use compare::{CompareOp, compare};
pub use operand::{operand_name, operand_path, path_test, truthy};
pub use pattern::{LazyRegex, matches};
