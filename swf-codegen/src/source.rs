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
    /// Where each line of `text` starts, found at the first position asked for: every
    /// diagnostic asks for its own, and scanning the text each time made 10,000 diagnostics
    /// of a 10,000-line file take seconds.
    lines: std::sync::OnceLock<LineStarts>,
}

/// The byte offsets where the lines of a text start, and which text (its address and length)
/// they were found in: `text` is a public field, and a changed text is scanned afresh.
#[derive(Debug, Clone)]
struct LineStarts {
    text: (usize, usize),
    starts: Vec<usize>,
}

impl LineStarts {
    fn of(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(at, _)| at + 1));
        LineStarts {
            text: (text.as_ptr() as usize, text.len()),
            starts,
        }
    }
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        SourceFile {
            name: name.into(),
            text: text.into(),
            dialect: None,
            location: None,
            lines: std::sync::OnceLock::new(),
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

    /// The bytes of a 1-based line (its line ending included) and where they start; `None`
    /// past the last line.
    fn line_bytes(&self, line: u32) -> Option<(usize, &str)> {
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        let text = (self.text.as_ptr() as usize, self.text.len());
        let cached = self.lines.get_or_init(|| LineStarts::of(&self.text));
        let fresh;
        let starts = if cached.text == text {
            &cached.starts
        } else {
            fresh = LineStarts::of(&self.text);
            &fresh.starts
        };
        let start = *starts.get(index)?;
        if start >= self.text.len() {
            return None;
        }
        let end = starts.get(index + 1).copied().unwrap_or(self.text.len());
        Some((start, self.text.get(start..end)?))
    }

    /// The text of a 1-based line, without its line ending.
    pub fn line_text(&self, line: u32) -> Option<&str> {
        let (_, text) = self.line_bytes(line)?;
        let text = text.strip_suffix('\n').unwrap_or(text);
        Some(text.strip_suffix('\r').unwrap_or(text))
    }

    /// Byte offset of a span, for renderers that work in byte ranges.
    pub fn byte_offset(&self, span: Span) -> usize {
        let Some((offset, line)) = self.line_bytes(span.line) else {
            return self.text.len();
        };
        let col = span.col.saturating_sub(1) as usize;
        offset
            + line
                .char_indices()
                .nth(col)
                .map_or(line.trim_end_matches(['\n', '\r']).len(), |(i, _)| i)
    }
}
