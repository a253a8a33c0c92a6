use crate::source::Span;
use serde::{Deserialize, Serialize};

/// A JSONPath as written, classified at build time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JsonPath {
    /// The text as the user wrote it.
    pub text: String,
    pub kind: PathKind,
    pub span: Span,
    /// Selecting nothing is an error at run time (the strict paths option; definite paths
    /// of parameters and comparisons only, see [`crate::ir::Workflow::make_paths_strict`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PathKind {
    /// Only names and indexes: compiled to a direct accessor, yields the value itself.
    Definite(Vec<PathSegment>),
    /// Wildcards, filters, recursive descent, slices or unions: run by the JSONPath engine,
    /// yields an array of all matches. Holds the text normalized to RFC 9535 syntax.
    Query(String),
    /// Did not parse; a diagnostic has been recorded.
    Invalid,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PathSegment {
    Key(String),
    Index(usize),
    /// `[-n]`: the element `n` (at least 1) places from the end of an array.
    FromEnd(usize),
}

impl JsonPath {
    pub fn is_definite(&self) -> bool {
        matches!(self.kind, PathKind::Definite(_))
    }
}
