//! States as the store keeps them: JSON text naming tasks and branches by their names in the
//! definition (never by generated identifiers), so that a state saved by one build resumes
//! under another as long as its position exists there.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::store::{Definition, InstanceRecord};

/// `state` as stored.
///
/// # Errors
/// What serde reports (nothing a generated state can cause).
pub(super) fn encode<T: Serialize>(state: &T) -> Result<String, String> {
    serde_json::to_string(state).map_err(|err| format!("the state cannot be saved: {err}"))
}

/// The state of `record`, for a worker that runs `definition`.
///
/// A state saved by the same definition always loads. One saved by another definition of the
/// same workflow (a new release) loads when every task and branch it names still exists there
/// with the same kind; otherwise the worker refuses it, untouched, with the reason.
///
/// # Errors
/// Why this worker cannot resume the instance, and what to do.
pub(super) fn decode<T: DeserializeOwned>(
    record: &InstanceRecord,
    definition: &Definition,
) -> Result<T, String> {
    serde_json::from_str(&record.state).map_err(|err| {
        let saved_by = describe(&record.definition);
        if record.definition.hash == definition.hash {
            format!(
                "instance {} cannot be read by the definition that saved it ({saved_by}): {err}; \
                 the stored state is damaged",
                record.id
            )
        } else {
            format!(
                "instance {} was saved at `{}` by {saved_by}, and that position does not exist \
                 in the definition this worker runs ({}): {err}. Run a worker built with the \
                 instance's definition until the instance has ended, or cancel it",
                record.id,
                record.position,
                describe(definition)
            )
        }
    })
}

/// `workflow `id` version v (definition hash h)`.
fn describe(definition: &Definition) -> String {
    match &definition.version {
        Some(version) => format!(
            "workflow `{}` version {version} (definition {})",
            definition.workflow, definition.hash
        ),
        None => format!(
            "workflow `{}` (definition {})",
            definition.workflow, definition.hash
        ),
    }
}
