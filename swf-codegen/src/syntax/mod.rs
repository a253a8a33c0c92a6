//! Parsers for the small languages embedded in workflow files: JSONPath, expressions, durations
//! and regular expressions.
//!
//! Every parser takes the text, the [`Span`](crate::source::Span) where that text starts in the
//! workflow file and the [`Diagnostics`](crate::diagnostic::Diagnostics) collector. Problems are
//! recorded there, never returned, and an IR value is always produced (an `Invalid` variant or a
//! zero length), so one bad path does not hide the problems that follow it.

pub mod duration;
pub mod expr;
pub mod interval;
pub mod jsonpath;
pub mod regex;

use std::borrow::Cow;

/// The text as quoted in a diagnostic message: whole when short, else its beginning, so that a
/// pathological input cannot produce a pathological message.
pub(crate) fn excerpt(text: &str) -> Cow<'_, str> {
    const MAX_CHARS: usize = 80;
    match text.char_indices().nth(MAX_CHARS) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn excerpts_long_text() {
        assert_eq!(super::excerpt("$.a"), "$.a");
        let long = "é".repeat(100);
        assert_eq!(super::excerpt(&long), format!("{}…", "é".repeat(80)));
    }
}
