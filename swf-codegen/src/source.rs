//! Source text and positions: every IR node carries a [`Span`] so that each diagnostic can say
//! `file:line:col`.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A 1-based line and column (in characters) inside one workflow file.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Span {
    pub line: u32,
    pub col: u32,
}

impl Span {
    pub const fn new(line: u32, col: u32) -> Self {
        Span { line, col }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A value together with the position it was written at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(value: T, span: Span) -> Self {
        Spanned { value, span }
    }
}

impl Spanned<String> {
    pub fn as_str(&self) -> &str {
        &self.value
    }
}

/// The largest workflow file the compiler reads, in bytes (16 MiB): larger files are refused
/// with E0145 before any parsing.
pub const MAX_INPUT_BYTES: usize = 16 << 20;

/// Reads a workflow file, at most [`MAX_INPUT_BYTES`] + 1 bytes of it, so that `/dev/zero` or a
/// huge file cannot exhaust memory. A larger file comes back cut after that many bytes (its
/// length says it is too large: parsing refuses it with E0145); a smaller one that is not UTF-8
/// is an `InvalidData` error, as with `std::fs::read_to_string`.
pub fn read_bounded(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let limit = u64::try_from(MAX_INPUT_BYTES)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    if bytes.len() > MAX_INPUT_BYTES {
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    String::from_utf8(bytes).map_err(|error| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the file is not UTF-8 text: {error}"),
        )
    })
}

/// One workflow file: the name diagnostics show for it, and its text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path as the user wrote it (relative to the crate root for the macro and build.rs).
    pub name: String,
    pub text: String,
    /// The dialect the user named; `None` detects it from the file's keys.
    pub dialect: Option<crate::ir::Dialect>,
    /// Where the file is on disk, when `name` is not a path from the current directory (the
    /// macro's and build.rs's names are relative to the crate): the files it references (its
    /// data schemas) are found next to it.
    pub location: Option<std::path::PathBuf>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        SourceFile {
            name: name.into(),
            text: text.into(),
            dialect: None,
            location: None,
        }
    }

    /// The same file, known to be at `path` on disk.
    pub fn with_location(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.location = Some(path.into());
        self
    }

    /// The directory the files this one references are read from.
    pub fn directory(&self) -> std::path::PathBuf {
        let path = self
            .location
            .clone()
            .unwrap_or_else(|| std::path::PathBuf::from(&self.name));
        path.parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default()
    }

    /// The same file, read in `dialect` instead of the detected one.
    pub fn with_dialect(mut self, dialect: Option<crate::ir::Dialect>) -> Self {
        self.dialect = dialect;
        self
    }

    /// The text of a 1-based line, without its line ending.
    pub fn line_text(&self, line: u32) -> Option<&str> {
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        self.text
            .lines()
            .nth(index)
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
    }

    /// Byte offset of a span, for renderers that work in byte ranges.
    pub fn byte_offset(&self, span: Span) -> usize {
        let mut offset = 0;
        for (index, line) in self.text.split_inclusive('\n').enumerate() {
            if index + 1 == span.line as usize {
                let col = span.col.saturating_sub(1) as usize;
                return offset
                    + line
                        .char_indices()
                        .nth(col)
                        .map_or(line.trim_end_matches(['\n', '\r']).len(), |(i, _)| i);
            }
            offset += line.len();
        }
        self.text.len()
    }
}
