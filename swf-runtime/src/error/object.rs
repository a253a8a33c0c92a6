//! The runtime error as workflows see it.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::FunctionError;

/// A runtime error in the shape the drafts expose to workflows:
/// `{"error": {"name": …, "message": …, "trace": …}}`.
///
/// Generated code merges [`ErrorObject::wrapped`] into the task data before it evaluates `retry`
/// and `onError` expressions, and evaluates bare names (`name eq 'TimeoutError'`) against
/// [`ErrorObject::to_json`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error name expressions match on, for example [`ErrorObject::TIMEOUT`].
    pub name: String,
    /// A human-readable description of what went wrong.
    pub message: String,
    /// Free-form diagnostic detail; may be empty.
    #[serde(default)]
    pub trace: String,
}

impl ErrorObject {
    /// A user function failed (the name the drafts use in their examples).
    pub const FUNCTION_EXECUTION: &'static str = "FunctionExecutionError";
    /// An action did not complete within its timeout.
    pub const TIMEOUT: &'static str = "TimeoutError";
    /// The data could not be processed: a merge of values of different kinds, a write through a
    /// value that is not an object, a failed JSONPath.
    pub const DATA: &'static str = "DataError";
    /// A transition was refused because its condition was false.
    pub const CONDITION: &'static str = "TransitionConditionError";
    /// The workflow input was refused (it is not a JSON object).
    pub const INVALID_INPUT: &'static str = "InvalidInputError";
    /// The run reached an END state whose status is `FAILURE` (the first draft).
    pub const END_FAILURE: &'static str = "EndStateFailure";

    /// An error with the given name and message and no trace.
    // Cold, as `WorkflowError::new`: made where something failed.
    #[cold]
    pub fn new(name: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            message: message.into(),
            trace: String::new(),
        }
    }

    /// The same error with `trace` as its diagnostic detail.
    #[must_use]
    pub fn with_trace(mut self, trace: impl Into<String>) -> Self {
        self.trace = trace.into();
        self
    }

    /// This error, raised by an `onError` handler (its error data filter, merge or output
    /// filter) while it handled `handled`: its message names the handled error, and its trace,
    /// when it has none of its own, is the handled error's, so the failure that started it is
    /// not lost.
    #[cold]
    #[must_use]
    pub fn while_handling(mut self, handled: &ErrorObject) -> Self {
        self.message = format!("{} (while handling {handled})", self.message);
        if self.trace.is_empty() {
            self.trace.clone_from(&handled.trace);
        }
        self
    }

    /// The error as a JSON object: `{"name": …, "message": …, "trace": …}`.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "message": self.message,
            "trace": self.trace,
        })
    }

    /// The error as the drafts expose it to a task:
    /// `{"error": {"name": …, "message": …, "trace": …}}`.
    pub fn wrapped(&self) -> Value {
        json!({ "error": self.to_json() })
    }
}

impl From<FunctionError> for ErrorObject {
    fn from(err: FunctionError) -> Self {
        Self {
            name: err.name,
            message: err.message,
            trace: err.trace,
        }
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.message)
    }
}

impl std::error::Error for ErrorObject {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handlers_failure_names_the_error_it_handled() {
        let handled = ErrorObject::new("Picky", "picky").with_trace("at charge");
        let failure = ErrorObject::new(ErrorObject::DATA, "cannot merge").while_handling(&handled);
        assert_eq!(failure.name, ErrorObject::DATA);
        assert_eq!(
            failure.message,
            "cannot merge (while handling Picky: picky)"
        );
        assert_eq!(failure.trace, "at charge");
        let traced = ErrorObject::new(ErrorObject::DATA, "cannot merge")
            .with_trace("own")
            .while_handling(&handled);
        assert_eq!(traced.trace, "own");
    }

    #[test]
    fn json_shapes_follow_the_drafts() {
        let err = ErrorObject::new(ErrorObject::FUNCTION_EXECUTION, "denied").with_trace("at x");
        assert_eq!(
            err.to_json(),
            json!({"name": "FunctionExecutionError", "message": "denied", "trace": "at x"})
        );
        assert_eq!(err.wrapped(), json!({"error": err.to_json()}));
    }

    #[test]
    fn serde_round_trips_and_trace_defaults_to_empty() {
        let err = ErrorObject::new(ErrorObject::TIMEOUT, "slow");
        let text = serde_json::to_value(&err).unwrap_or_default();
        assert_eq!(
            serde_json::from_value::<ErrorObject>(text).ok(),
            Some(err.clone())
        );
        let without_trace = json!({"name": "TimeoutError", "message": "slow"});
        assert_eq!(
            serde_json::from_value::<ErrorObject>(without_trace).ok(),
            Some(err)
        );
    }

    #[test]
    fn from_function_error_keeps_every_property() {
        let err = ErrorObject::from(FunctionError::named("Custom", "bad").with_trace("t"));
        assert_eq!(err, ErrorObject::new("Custom", "bad").with_trace("t"));
        assert_eq!(err.to_string(), "Custom: bad");
    }
}
