//! Data schemas (`dataInputSchema`, `dataOutputSchema`): the JSON Schemas a workflow declares
//! for its input and output and for its tasks' data, embedded by the compiler and validated
//! with the `jsonschema` crate (feature `schemas`). Each schema is compiled once per process,
//! the first time it is used.
//!
//! A violation is an error object named [`SCHEMA_ERROR`] that says where in the data it is (a
//! JSON pointer), which keyword of the schema failed, and whose data it was; a task's is
//! handled by its retries and onError like any error it raises.

use std::sync::OnceLock;

use serde_json::Value;

use crate::error::{ErrorObject, WorkflowError};
use crate::progress::{Attempt, Progress};

/// The name of the error a schema violation raises.
pub const SCHEMA_ERROR: &str = "DataSchemaError";

/// Whether this build validates data schemas: generated code that embeds one asserts it at
/// compile time, so that a build without the feature fails with a message that says so.
pub const SCHEMAS: bool = cfg!(feature = "schemas");

/// Whose data a schema describes, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaSite<'a> {
    /// The input a workflow instance is started with.
    WorkflowInput,
    /// The output a workflow instance ends with.
    WorkflowOutput,
    /// A task's data when it begins (after its input filter).
    TaskInput(&'a str),
    /// A task's data when its work is done (before its output filter).
    TaskOutput(&'a str),
}

impl std::fmt::Display for SchemaSite<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaSite::WorkflowInput => f.write_str("the workflow's input"),
            SchemaSite::WorkflowOutput => f.write_str("the workflow's output"),
            SchemaSite::TaskInput(task) => write!(f, "the data input of task `{task}`"),
            SchemaSite::TaskOutput(task) => write!(f, "the data output of task `{task}`"),
        }
    }
}

/// One embedded schema: the file it was read from (for messages) and its JSON text.
pub struct DataSchema {
    file: &'static str,
    text: &'static str,
    #[cfg(feature = "schemas")]
    compiled: OnceLock<Result<jsonschema::Validator, String>>,
    #[cfg(not(feature = "schemas"))]
    compiled: OnceLock<()>,
}

impl DataSchema {
    /// The schema of `file`, whose JSON is `text` (the compiler checked that it compiles).
    pub const fn new(file: &'static str, text: &'static str) -> Self {
        DataSchema {
            file,
            text,
            compiled: OnceLock::new(),
        }
    }

    /// The file the schema was read from, as the workflow names it.
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// Checks `data`, the data of `site`, against the schema.
    ///
    /// # Errors
    /// A [`SCHEMA_ERROR`] naming the first violation's JSON pointer and keyword (every
    /// violation is listed in its trace).
    pub fn check(&self, data: &Value, site: SchemaSite<'_>) -> Result<(), ErrorObject> {
        self.violations(data, site)
    }

    #[cfg(feature = "schemas")]
    fn violations(&self, data: &Value, site: SchemaSite<'_>) -> Result<(), ErrorObject> {
        let compiled = self.compiled.get_or_init(|| {
            let schema: Value = serde_json::from_str(self.text).map_err(|e| e.to_string())?;
            jsonschema::validator_for(&schema).map_err(|e| e.to_string())
        });
        let validator = compiled.as_ref().map_err(|problem| {
            ErrorObject::new(
                SCHEMA_ERROR,
                format!(
                    "the schema `{}` of {site} does not compile: {problem}",
                    self.file
                ),
            )
        })?;
        let mut errors = validator.iter_errors(data);
        let Some(first) = errors.next() else {
            return Ok(());
        };
        let describe = |error: &jsonschema::ValidationError<'_>| {
            // The value the keyword refused, where it is short: the whole task data (a root
            // `type` or `oneOf`) in the message and again in the trace of every violation made
            // the error, merged into the data by onError, grow with each pass.
            let what = if is_short(error.instance()) {
                error.to_string()
            } else {
                error.masked().to_string()
            };
            format!(
                "at `{}`: {what} (keyword `{}`)",
                pointer_text(&error.instance_path().to_string()),
                error.kind().keyword()
            )
        };
        let mut trace = describe(&first);
        for error in errors {
            trace.push('\n');
            trace.push_str(&describe(&error));
        }
        Err(ErrorObject::new(
            SCHEMA_ERROR,
            format!(
                "{site} does not match the schema `{}`: {}",
                self.file,
                describe(&first)
            ),
        )
        .with_trace(trace))
    }

    #[cfg(not(feature = "schemas"))]
    fn violations(&self, _data: &Value, site: SchemaSite<'_>) -> Result<(), ErrorObject> {
        // Unreachable from generated code, which asserts `SCHEMAS` at compile time; a direct
        // caller is told, rather than told the data matched.
        let _ = (&self.compiled, self.text);
        Err(ErrorObject::new(
            SCHEMA_ERROR,
            format!(
                "the schema `{}` of {site} cannot be checked: swf-runtime was built without its `schemas` feature",
                self.file
            ),
        ))
    }
}

impl std::fmt::Debug for DataSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataSchema")
            .field("file", &self.file)
            .finish()
    }
}

/// Whether `value` written as JSON is at most 80 bytes (written only that far).
#[cfg(feature = "schemas")]
fn is_short(value: &Value) -> bool {
    struct Room(usize);
    impl std::io::Write for Room {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = self
                .0
                .checked_sub(bytes.len())
                .ok_or(std::io::ErrorKind::WriteZero)?;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(Room(80), value).is_ok()
}

/// The root of the data is written `/`, not as the empty pointer.
#[cfg(feature = "schemas")]
fn pointer_text(pointer: &str) -> &str {
    if pointer.is_empty() { "/" } else { pointer }
}

/// The workflow's input, checked against its schema; the input is kept in the error.
///
/// # Errors
/// A [`WorkflowError`] in `start_task` with the violation.
#[allow(
    clippy::result_large_err,
    reason = "as `workflow_input`: the failure is the cold path, once per instance"
)]
pub fn checked_input(
    schema: &DataSchema,
    workflow: &str,
    start_task: &str,
    input: Value,
) -> Result<Value, WorkflowError> {
    match schema.check(&input, SchemaSite::WorkflowInput) {
        Ok(()) => Ok(input),
        Err(error) => Err(WorkflowError::new(workflow, start_task, error, input)),
    }
}

/// A task's attempt, with its data checked against the task's output schema when it is done
/// (`Attempt::Exit`): a violation becomes the attempt's error, which retries and onError handle.
///
/// # Errors
/// The attempt's own error, or the violation.
pub fn checked_exit<P>(
    attempt: Result<Attempt<P>, ErrorObject>,
    schema: &DataSchema,
    data: &Value,
    task: &str,
) -> Result<Attempt<P>, ErrorObject> {
    match attempt {
        Ok(Attempt::Exit(exit)) => schema
            .check(data, SchemaSite::TaskOutput(task))
            .map(|()| Attempt::Exit(exit)),
        other => other,
    }
}

/// The root scope's step, with the output checked against the workflow's output schema when
/// the instance ended in it (`output` reads an ended state's output); `task` is the task the
/// state was at before the step.
///
/// # Errors
/// The step's own error, or a [`WorkflowError`] in `task` with the violation, keeping the
/// output as its data.
#[allow(
    clippy::result_large_err,
    reason = "the step's own result type; the failure is the cold path, once per instance"
)]
pub fn checked_output<S>(
    step: Result<Progress<S>, WorkflowError>,
    schema: &DataSchema,
    workflow: &str,
    task: Option<&str>,
    output: impl Fn(&S) -> Option<&Value>,
) -> Result<Progress<S>, WorkflowError> {
    let Ok(Progress::Ran(state)) = &step else {
        return step;
    };
    match output(state).map(|out| (out, schema.check(out, SchemaSite::WorkflowOutput))) {
        Some((out, Err(error))) => Err(WorkflowError::new(
            workflow,
            task.unwrap_or_default(),
            error,
            out.clone(),
        )),
        _ => step,
    }
}

/// The workflow input as JSON, from the Rust type of its input schema (`run_typed`).
///
/// # Errors
/// A [`WorkflowError`] when the value does not serialize as JSON (a map with keys that are not
/// strings, a float that is not finite).
#[allow(
    clippy::result_large_err,
    reason = "as `run`: the failure is the cold path, once per instance"
)]
pub fn typed_input<T: serde::Serialize>(input: &T, workflow: &str) -> Result<Value, WorkflowError> {
    serde_json::to_value(input).map_err(|error| {
        WorkflowError::new(
            workflow,
            "",
            ErrorObject::new(
                ErrorObject::INVALID_INPUT,
                format!("the typed input of workflow `{workflow}` is not JSON: {error}"),
            ),
            Value::Null,
        )
    })
}

/// The workflow output as the Rust type of its output schema (`run_typed`).
///
/// # Errors
/// A [`WorkflowError`] with a [`SCHEMA_ERROR`] when the output does not fit the type; the
/// output is kept as its data.
#[allow(
    clippy::result_large_err,
    reason = "as `run`: the failure is the cold path, once per instance"
)]
pub fn typed_output<T: serde::de::DeserializeOwned>(
    output: Value,
    workflow: &str,
) -> Result<T, WorkflowError> {
    T::deserialize(&output).map_err(|error| {
        let message = format!("the output of workflow `{workflow}` does not fit its type: {error}");
        WorkflowError::new(
            workflow,
            "",
            ErrorObject::new(SCHEMA_ERROR, message),
            output,
        )
    })
}

#[cfg(all(test, feature = "schemas"))]
mod tests {
    use super::*;
    use serde_json::json;

    static ORDER: DataSchema = DataSchema::new(
        "schemas/order.json",
        r#"{"type":"object","properties":{"order":{"type":"object","properties":{"total":{"type":"number"}},"required":["total"]}},"required":["order"]}"#,
    );

    #[test]
    fn matching_data_passes() {
        assert_eq!(
            ORDER.check(&json!({"order": {"total": 5}}), SchemaSite::WorkflowInput),
            Ok(())
        );
    }

    #[test]
    fn a_violation_names_the_pointer_the_keyword_and_whose_data_it_is() {
        let error = ORDER
            .check(
                &json!({"order": {"total": "999"}}),
                SchemaSite::TaskInput("Check"),
            )
            .expect_err("a string total is refused");
        assert_eq!(error.name, SCHEMA_ERROR);
        assert!(
            error.message.starts_with(
                "the data input of task `Check` does not match the schema `schemas/order.json`: at `/order/total`:"
            ),
            "{}",
            error.message
        );
        assert!(
            error.message.ends_with("(keyword `type`)"),
            "{}",
            error.message
        );
    }

    /// A violation shows the value it refused when it is short, and says `value` for a long
    /// one: the whole data, refused by a root keyword, was copied into the message and again
    /// into the trace.
    #[test]
    fn a_long_refused_value_is_not_copied_into_the_error() {
        let long = json!({"order": {"total": 1, "lines": vec!["a line of the order"; 50]}});
        let error = ORDER
            .check(&json!([long]), SchemaSite::WorkflowOutput)
            .expect_err("an array is not an object");
        assert!(
            !error.message.contains("a line of the order"),
            "{}",
            error.message
        );
        assert!(
            !error.trace.contains("a line of the order"),
            "{}",
            error.trace
        );
        assert!(
            error.message.contains("value is not of type"),
            "{}",
            error.message
        );
        let short = ORDER
            .check(&json!([1]), SchemaSite::WorkflowOutput)
            .expect_err("an array is not an object");
        assert!(
            short.message.contains("[1] is not of type"),
            "{}",
            short.message
        );
    }

    #[test]
    fn every_violation_is_in_the_trace_and_the_root_is_written_as_a_slash() {
        let error = ORDER
            .check(&json!([]), SchemaSite::WorkflowOutput)
            .expect_err("an array is not an object");
        assert!(error.message.contains("at `/`"), "{}", error.message);
        let strings = DataSchema::new(
            "s.json",
            r#"{"properties":{"a":{"type":"string"},"b":{"type":"string"}}}"#,
        );
        let two = strings
            .check(&json!({"a": 1, "b": 2}), SchemaSite::WorkflowInput)
            .expect_err("neither is a string");
        assert_eq!(two.trace.lines().count(), 2, "{}", two.trace);
        assert!(two.trace.contains("at `/b`"), "{}", two.trace);
    }

    #[test]
    fn an_input_violation_keeps_the_input() {
        let Err(error) = checked_input(&ORDER, "orders", "Check", json!({"orders": []})) else {
            panic!("the input lacks `order`");
        };
        assert_eq!(error.task(), "Check");
        assert_eq!(error.data(), &json!({"orders": []}));
        assert_eq!(error.error().name, SCHEMA_ERROR);
    }

    #[test]
    fn only_a_finished_attempt_is_checked() {
        let data = json!({});
        let stay: Result<Attempt<()>, ErrorObject> = Ok(Attempt::Stay((), None));
        assert!(matches!(
            checked_exit(stay, &ORDER, &data, "T"),
            Ok(Attempt::Stay((), None))
        ));
        let exit: Result<Attempt<()>, ErrorObject> = Ok(Attempt::Exit(2));
        let error = checked_exit(exit, &ORDER, &data, "T").expect_err("`order` is missing");
        assert!(error.message.contains("`T`"), "{}", error.message);
        assert!(
            error.message.contains("keyword `required`"),
            "{}",
            error.message
        );
    }

    #[test]
    fn a_schema_is_compiled_once() {
        let schema = DataSchema::new("s.json", r#"{"type":"integer"}"#);
        assert!(schema.check(&json!(1), SchemaSite::WorkflowInput).is_ok());
        let first = schema.compiled.get().map(|c| c.is_ok());
        assert!(
            schema
                .check(&json!("x"), SchemaSite::WorkflowInput)
                .is_err()
        );
        assert_eq!(first, Some(true));
    }
}
