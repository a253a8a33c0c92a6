//! JSONPath, compiled once per process.
//!
//! The code generator validates and normalizes every path at build time and splits them in two:
//! definite paths (only names and indexes, Jayway's "definite" paths) become a list of
//! [`Segment`]s walked directly, without the query engine; every other path (filters, wildcards,
//! recursive descent, slices, unions) is a query run by `jsonpath-rust`, parsed the first time it
//! is used and then reused for the life of the process.

mod render;
mod select;
mod write;

use std::fmt;
use std::sync::OnceLock;

use jsonpath_rust::parser::model::JpQuery;

/// One step of a definite path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Segment {
    /// The member of an object with this name.
    Key(&'static str),
    /// The element of an array at this index.
    Index(usize),
    /// The element of an array this many places from its end (`[-1]`: the last).
    FromEnd(usize),
}

impl Segment {
    /// The element of `items` this index segment names, if there is one.
    fn element(self, items: &[serde_json::Value]) -> Option<&serde_json::Value> {
        items.get(self.position(items.len())?)
    }

    /// [`Segment::element`], for changing it.
    fn element_mut(self, items: &mut [serde_json::Value]) -> Option<&mut serde_json::Value> {
        let position = self.position(items.len())?;
        items.get_mut(position)
    }

    /// Where in an array of `len` elements this index segment points; `None` past either end,
    /// or for a key.
    fn position(self, len: usize) -> Option<usize> {
        match self {
            Segment::Index(index) => (index < len).then_some(index),
            Segment::FromEnd(from_end) => len.checked_sub(from_end),
            Segment::Key(_) => None,
        }
    }
}

/// A JSONPath from a workflow definition, usable in a `static`.
pub struct JsonPath {
    /// The normalized RFC 9535 text, kept for error messages.
    text: &'static str,
    kind: Kind,
    /// A definite path that selects nothing is an error rather than nothing (the compiler's
    /// strict paths option, for parameters and comparisons).
    strict: bool,
}

enum Kind {
    Definite(&'static [Segment]),
    /// Parsed on first use. A parse failure is kept as text so that every later use reports it
    /// again instead of panicking; it cannot happen for paths the code generator emitted, since
    /// it parses them with the same crate at build time.
    Query(OnceLock<Result<JpQuery, String>>),
}

// `JsonPath` values live in `static`s shared by every task running on any thread.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<JsonPath>();
};

impl JsonPath {
    /// A path made only of names and indexes; `segments` is empty for `$`.
    pub const fn definite(text: &'static str, segments: &'static [Segment]) -> Self {
        Self {
            text,
            kind: Kind::Definite(segments),
            strict: false,
        }
    }

    /// [`definite`](Self::definite), strict: when it selects nothing, reading through it is a
    /// `DataError` that names the path and the members the data has where it stops, instead of
    /// nothing (`null` for a parameter, a false comparison).
    pub const fn definite_strict(text: &'static str, segments: &'static [Segment]) -> Self {
        Self {
            text,
            kind: Kind::Definite(segments),
            strict: true,
        }
    }

    /// A path that may select any number of values, run by the query engine.
    pub const fn query(text: &'static str) -> Self {
        Self {
            text,
            kind: Kind::Query(OnceLock::new()),
            strict: false,
        }
    }

    /// The path as written (normalized), for messages.
    pub fn text(&self) -> &'static str {
        self.text
    }

    /// Whether this path selects at most one value and can be written to.
    pub fn is_definite(&self) -> bool {
        matches!(self.kind, Kind::Definite(_))
    }

    /// The member name of a path of one name (`$.item`), which writes a top-level member.
    pub(crate) fn top_level_key(&self) -> Option<&'static str> {
        match self.kind {
            Kind::Definite([Segment::Key(key)]) => Some(key),
            _ => None,
        }
    }
}

impl fmt::Debug for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            Kind::Definite(_) => "definite",
            Kind::Query(_) => "query",
        };
        f.debug_struct("JsonPath")
            .field("text", &self.text)
            .field("kind", &kind)
            .finish()
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static ROOT: JsonPath = JsonPath::definite("$", &[]);
    static FILTER: JsonPath = JsonPath::query("$[?@.a]");

    #[test]
    fn paths_work_as_statics() {
        assert!(ROOT.is_definite());
        assert!(!FILTER.is_definite());
        assert_eq!(FILTER.text(), "$[?@.a]");
        assert_eq!(FILTER.to_string(), "$[?@.a]");
        assert_eq!(
            format!("{FILTER:?}"),
            r#"JsonPath { text: "$[?@.a]", kind: "query" }"#
        );
    }
}
