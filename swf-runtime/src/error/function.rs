//! The error a user-implemented function returns.

use std::fmt;

use super::ErrorObject;

/// The failure of a user-implemented function.
///
/// It carries the three properties the drafts give every runtime error, so a function can choose
/// the `name` that `onError` and `retry` expressions match on (for example
/// `name eq 'PermissionDenied'`). Most implementations only need [`FunctionError::new`] or
/// [`FunctionError::from_error`], which use the drafts' `FunctionExecutionError` name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionError {
    /// The error name workflows match on, `FunctionExecutionError` unless chosen otherwise.
    pub name: String,
    /// A human-readable description of what went wrong.
    pub message: String,
    /// Free-form diagnostic detail (a stack trace, the chain of causes); may be empty.
    pub trace: String,
}

impl FunctionError {
    /// A `FunctionExecutionError` with the given message and no trace.
    pub fn new(message: impl Into<String>) -> Self {
        Self::named(ErrorObject::FUNCTION_EXECUTION, message)
    }

    /// An error with a name of the function's choosing, for workflows to match on.
    pub fn named(name: impl Into<String>, message: impl Into<String>) -> Self {
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

    /// A `FunctionExecutionError` built from any Rust error: its message is the error's display
    /// text and its trace lists the chain of sources, one `caused by:` line each, so the cause of
    /// an I/O or HTTP failure is not lost when it crosses into the workflow.
    pub fn from_error(err: &dyn std::error::Error) -> Self {
        let mut trace = String::new();
        let mut source = err.source();
        while let Some(cause) = source {
            if !trace.is_empty() {
                trace.push('\n');
            }
            trace.push_str("caused by: ");
            trace.push_str(&cause.to_string());
            source = cause.source();
        }
        Self::new(err.to_string()).with_trace(trace)
    }
}

impl fmt::Display for FunctionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.message)
    }
}

/// `?` on any Rust error inside a function: it becomes a `FunctionExecutionError` with the
/// error's message and its chain of causes (see [`FunctionError::from_error`]).
///
/// ```
/// # use swf_runtime::{FunctionError, Value, json};
/// fn read_order(path: &str) -> Result<Value, FunctionError> {
///     let text = std::fs::read_to_string(path)?; // std::io::Error
///     let order: Value = serde_json::from_str(&text)?; // serde_json::Error
///     Ok(json!({"order": order}))
/// }
/// let error = read_order("/no/such/file").unwrap_err();
/// assert_eq!(error.name, "FunctionExecutionError");
/// ```
///
/// For the same reason `FunctionError` is not itself a `std::error::Error` (as with
/// `anyhow::Error`, the two impls would overlap); its `Display` says what it is.
impl<E: std::error::Error> From<E> for FunctionError {
    fn from(error: E) -> Self {
        Self::from_error(&error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|inner| inner as _)
        }
    }

    #[test]
    fn new_uses_the_drafts_error_name() {
        let err = FunctionError::new("disk full");
        assert_eq!(err.name, "FunctionExecutionError");
        assert_eq!(err.message, "disk full");
        assert_eq!(err.trace, "");
        assert_eq!(err.to_string(), "FunctionExecutionError: disk full");
    }

    #[test]
    fn named_and_with_trace_keep_what_the_function_chose() {
        let err = FunctionError::named("PermissionDenied", "no write access").with_trace("at main");
        assert_eq!(err.name, "PermissionDenied");
        assert_eq!(err.message, "no write access");
        assert_eq!(err.trace, "at main");
    }

    #[test]
    fn from_error_lists_the_source_chain() {
        let err = Layer(
            "request failed",
            Some(Box::new(Layer(
                "connection reset",
                Some(Box::new(Layer("EPIPE", None))),
            ))),
        );
        let converted = FunctionError::from_error(&err);
        assert_eq!(converted.name, "FunctionExecutionError");
        assert_eq!(converted.message, "request failed");
        assert_eq!(
            converted.trace,
            "caused by: connection reset\ncaused by: EPIPE"
        );
    }

    #[test]
    fn the_question_mark_converts_any_error_with_its_causes() {
        fn fails() -> Result<(), Layer> {
            Err(Layer(
                "request failed",
                Some(Box::new(Layer("EPIPE", None))),
            ))
        }
        fn function() -> Result<u32, FunctionError> {
            fails()?;
            Ok(1)
        }
        let converted = function().unwrap_err();
        assert_eq!(converted.name, "FunctionExecutionError");
        assert_eq!(converted.message, "request failed");
        assert_eq!(converted.trace, "caused by: EPIPE");
    }

    #[test]
    fn from_error_without_sources_has_an_empty_trace() {
        let converted = FunctionError::from_error(&Layer("boom", None));
        assert_eq!(converted.trace, "");
    }
}
