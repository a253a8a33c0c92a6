//! The transition graph of each scope.
//!
//! A [`ScopeGraph`] holds the facts later stages need about one scope (the workflow, a parallel
//! branch or a foreach body): which task starts it, where each transition leads, what can be
//! reached and which cycles never reach an end. It records facts only; `validate` turns them into
//! diagnostics and `emit` uses them to lay out the state machine.

mod scope_graph;

pub use scope_graph::{ScopeGraph, Unresolved};
