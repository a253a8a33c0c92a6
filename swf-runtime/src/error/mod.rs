//! The three error types of the runtime, one per audience.
//!
//! - [`FunctionError`] is what a user's function implementation returns;
//! - [`ErrorObject`] is the runtime error as workflows see it (`{"error": {...}}`), the value that
//!   `retry` and `onError` expressions and error data filters are evaluated against;
//! - [`WorkflowError`] is what a caller of `run` gets when an instance halts on an unhandled error.

mod function;
mod object;
mod status;
mod workflow;

pub use function::FunctionError;
pub use object::ErrorObject;
pub use status::ExecStatus;
pub use workflow::WorkflowError;
