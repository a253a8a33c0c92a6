//! Parsers for the small languages embedded in workflow files: JSONPath, expressions, durations
//! and regular expressions.
//!
//! Every parser takes the text, the [`Span`](crate::source::Span) where that text starts in the
//! workflow file and the [`Diagnostics`](crate::diagnostic::Diagnostics) collector. Problems are
//! recorded there, never returned, and an IR value is always produced (an `Invalid` variant or a
//! zero length), so one bad path does not hide the problems that follow it.

pub mod duration;
pub mod expr;
pub mod jsonpath;
pub mod regex;
