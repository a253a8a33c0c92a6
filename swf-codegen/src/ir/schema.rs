//! The JSON Schemas a workflow or a task declares for its data (`dataInputSchema`,
//! `dataOutputSchema`): parsed as references, then loaded from their files by
//! [`crate::schema::load`] before validation.

use crate::source::Spanned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The schemas declared for one workflow's or task's data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DataSchemas {
    /// `dataInputSchema`: the data the workflow is started with, or a task's data when it
    /// begins (after its input filter).
    pub input: Option<SchemaRef>,
    /// `dataOutputSchema`: the workflow's output, or a task's data when its work is done
    /// (before its output filter).
    pub output: Option<SchemaRef>,
}

impl DataSchemas {
    pub fn is_empty(&self) -> bool {
        self.input.is_none() && self.output.is_none()
    }

    /// The declared schemas, input first.
    pub fn iter(&self) -> impl Iterator<Item = &SchemaRef> {
        self.input.iter().chain(&self.output)
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut SchemaRef> {
        self.input.iter_mut().chain(&mut self.output)
    }
}

/// One declared schema: the reference as written and, once loaded, the document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchemaRef {
    /// The reference as written: a path relative to the workflow file, or a `file:` URI.
    pub reference: Spanned<String>,
    /// The file the reference names, once resolved (even when it could not be read: a build
    /// watches it, so that creating it rebuilds). Not serialized: it depends on the machine,
    /// and the definition hash must not.
    #[serde(skip)]
    pub path: Option<std::path::PathBuf>,
    /// The document, once [`crate::schema::load`] read it; `None` when it could not (a
    /// diagnostic says why) or has not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<SchemaDocument>,
}

impl SchemaRef {
    pub fn new(reference: Spanned<String>) -> Self {
        SchemaRef {
            reference,
            path: None,
            document: None,
        }
    }
}

/// A schema file read at build time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchemaDocument {
    /// The file as diagnostics name it: the workflow file's directory joined with the
    /// reference.
    pub file: String,
    /// The schema itself.
    pub json: Value,
}
