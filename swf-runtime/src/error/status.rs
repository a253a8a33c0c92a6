//! The execution status the drafts report on a workflow's result (`execStatus` in v0.1,
//! `exec-status` and END states' `status` in the kebab-case drafts).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ErrorObject, WorkflowError};

/// How a run ended: `Success` for an output, else what kind of failure halted it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ExecStatus {
    /// The run reached an end (an END state with status `SUCCESS`, or any other end).
    Success,
    /// The run halted on an error, or reached an END state with status `FAILURE`.
    Fail,
    /// The run halted because something did not complete in time (a `TimeoutError`).
    Timeout,
    /// The run never started: its input was refused.
    Invalid,
}

impl ExecStatus {
    /// The status of a run's result.
    pub fn of(result: &Result<Value, WorkflowError>) -> ExecStatus {
        match result {
            Ok(_) => ExecStatus::Success,
            Err(error) => error.status(),
        }
    }

    /// The word v0.1 uses: `Success`, `Fail`, `Timeout` or `Invalid`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecStatus::Success => "Success",
            ExecStatus::Fail => "Fail",
            ExecStatus::Timeout => "Timeout",
            ExecStatus::Invalid => "Invalid",
        }
    }
}

impl fmt::Display for ExecStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl WorkflowError {
    /// The execution status this failure reports.
    pub fn status(&self) -> ExecStatus {
        match self.error().name.as_str() {
            ErrorObject::TIMEOUT => ExecStatus::Timeout,
            ErrorObject::INVALID_INPUT => ExecStatus::Invalid,
            _ => ExecStatus::Fail,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn failed(name: &str) -> Result<Value, WorkflowError> {
        Err(WorkflowError::new(
            "w",
            "t",
            ErrorObject::new(name, "m"),
            json!({}),
        ))
    }

    #[test]
    fn each_outcome_has_its_status() {
        assert_eq!(ExecStatus::of(&Ok(json!({}))), ExecStatus::Success);
        assert_eq!(ExecStatus::of(&failed("TimeoutError")), ExecStatus::Timeout);
        assert_eq!(
            ExecStatus::of(&failed(ErrorObject::INVALID_INPUT)),
            ExecStatus::Invalid
        );
        assert_eq!(ExecStatus::of(&failed("DataError")), ExecStatus::Fail);
        assert_eq!(
            ExecStatus::of(&failed(ErrorObject::END_FAILURE)),
            ExecStatus::Fail
        );
        assert_eq!(ExecStatus::Timeout.to_string(), "Timeout");
    }
}
