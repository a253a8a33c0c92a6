//! Running nested scopes concurrently: the branches of a parallel task and the iterations of a
//! foreach task.
//!
//! Generated code hands in futures that borrow the machine and the instance's [`Io`](crate::Io),
//! so they are not `'static` and cannot be spawned: they are polled together on the instance's
//! own task (`FuturesUnordered`), which also makes cancelling the rest a matter of dropping them.

mod branches;
mod foreach;

pub use branches::{Joined, ScopeFuture, join_branches};
pub use foreach::{Iterated, for_each};

use serde_json::Value;

/// How a nested scope (a branch, an iteration, a sub-flow) ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ScopeEnd {
    /// It reached an end of kind `default` (or `event`) with this output.
    Completed(Value),
    /// It reached an end of kind `terminate` with this output: the whole instance ends.
    Terminated(Value),
}
