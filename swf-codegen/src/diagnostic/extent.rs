//! Where a diagnostic's offending token ends: a diagnostic records where it starts, and tools
//! (`swfc check --format json`, editors) want the range.

use super::{Diagnostic, render_json_line};
use crate::source::{SourceFile, Span};

/// The end of the YAML or JSON token that starts at `start`, exclusive: the position just after
/// its last character, on the same line (columns count characters, as in [`Span`]).
///
/// A quoted scalar ends at its closing quote, a flow collection (`{...}`, `[...]`) at its
/// closing bracket; a plain scalar or key runs to the end of the line but stops before `: `, a
/// ` #` comment and, inside a flow collection, before `,`, `}` or `]`. A position past the end
/// of its line (or outside the file) ends where it starts.
pub fn token_end(source: &SourceFile, start: Span) -> Span {
    let Some(line) = source.line_text(start.line) else {
        return start;
    };
    let chars: Vec<char> = line.chars().collect();
    let first = start.col.saturating_sub(1) as usize;
    if first >= chars.len() {
        return start;
    }
    let rest = &chars[first..];
    let length = match rest[0] {
        '"' => quoted(rest, '"'),
        '\'' => quoted(rest, '\''),
        '{' | '[' => bracketed(rest),
        _ => plain(rest, in_flow(&chars[..first])),
    };
    let length = u32::try_from(length).unwrap_or(u32::MAX);
    Span::new(start.line, start.col.max(1).saturating_add(length))
}

/// Length of a quoted scalar, quotes included (to the end of the line when it is not closed).
fn quoted(rest: &[char], quote: char) -> usize {
    let mut index = 1;
    while index < rest.len() {
        let c = rest[index];
        if quote == '"' && c == '\\' {
            index += 2;
            continue;
        }
        if c == quote {
            // `''` inside a single-quoted scalar is an escaped quote.
            if quote == '\'' && rest.get(index + 1) == Some(&'\'') {
                index += 2;
                continue;
            }
            return index + 1;
        }
        index += 1;
    }
    rest.len()
}

/// Length of a flow collection up to its closing bracket (to the end of the line when it is not
/// closed on it).
fn bracketed(rest: &[char]) -> usize {
    let mut depth = 0usize;
    let mut index = 0;
    while index < rest.len() {
        match rest[index] {
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return index + 1;
                }
            }
            quote @ ('"' | '\'') => {
                index += quoted(&rest[index..], quote);
                continue;
            }
            _ => {}
        }
        index += 1;
    }
    rest.len()
}

/// Length of a plain scalar or key, trailing spaces left out.
fn plain(rest: &[char], flow: bool) -> usize {
    let mut end = rest.len();
    for (index, &c) in rest.iter().enumerate() {
        let next = rest.get(index + 1).copied();
        let stop = match c {
            ':' => next.is_none_or(|n| n == ' ' || n == '\t' || (flow && ",}]".contains(n))),
            '#' => index > 0 && matches!(rest[index - 1], ' ' | '\t'),
            ',' | '}' | ']' => flow,
            _ => false,
        };
        if stop && index > 0 {
            end = index;
            break;
        }
    }
    let mut length = end;
    while length > 1 && matches!(rest[length - 1], ' ' | '\t') {
        length -= 1;
    }
    length
}

/// Whether the text before a position leaves a `{` or `[` open (quotes skipped).
fn in_flow(before: &[char]) -> bool {
    let mut depth = 0usize;
    let mut index = 0;
    while index < before.len() {
        match before[index] {
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            quote @ ('"' | '\'') => {
                index += quoted(&before[index..], quote);
                continue;
            }
            '#' if index > 0 && before[index - 1] == ' ' => break,
            _ => {}
        }
        index += 1;
    }
    depth > 0
}

/// [`render_json_line`] with where the offending token ends: `end_line` and `end_column`
/// (exclusive, so a one-character token at column 7 ends at column 8).
/// Where a diagnostic points, start and end (exclusive): the whole token at its span, or the
/// one character it names inside that token ([`Diagnostic::within`]).
pub fn extent(source: &SourceFile, diagnostic: &Diagnostic) -> (Span, Span) {
    let start = diagnostic.span;
    let Some(within) = diagnostic.within else {
        return (start, token_end(source, start));
    };
    // Inside a quoted scalar, the text the message counts in starts after the quote.
    let quoted = source
        .line_text(start.line)
        .and_then(|line| line.chars().nth(start.col.saturating_sub(1) as usize))
        .is_some_and(|c| c == '"' || c == '\'');
    let col = start
        .col
        .saturating_add(u32::from(quoted))
        .saturating_add(within - 1);
    let at = Span::new(start.line, col);
    (at, Span::new(start.line, col.saturating_add(1)))
}

/// The byte range of [`extent`], never empty when the file has a character there.
pub(crate) fn byte_range(source: &SourceFile, diagnostic: &Diagnostic) -> (usize, usize) {
    let (start, end) = extent(source, diagnostic);
    let start = source.byte_offset(start);
    let end = source.byte_offset(end);
    if end > start {
        (start, end)
    } else {
        (start, (start + 1).min(source.text.len()).max(start))
    }
}

pub fn render_json_line_with_end(source: &SourceFile, diagnostic: &Diagnostic) -> String {
    let (start, end) = extent(source, diagnostic);
    let line = render_json_line(diagnostic);
    match serde_json::from_str::<serde_json::Value>(&line) {
        Ok(serde_json::Value::Object(mut object)) => {
            object.insert("line".into(), start.line.into());
            object.insert("column".into(), start.col.into());
            object.insert("end_line".into(), end.line.into());
            object.insert("end_column".into(), end.col.into());
            serde_json::Value::Object(object).to_string()
        }
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(line: &str, col: u32) -> u32 {
        let source = SourceFile::new("f.yaml", format!("first: line\n{line}\n"));
        let end = token_end(&source, Span::new(2, col));
        assert_eq!(end.line, 2);
        end.col
    }

    #[test]
    fn a_jsonpath_error_points_at_the_character_it_names() {
        let source = SourceFile::new("f.yaml", "a: \"$.x[?(@.y <]\"\nb: $.x[?(@.y <]\n");
        let mut diagnostics = super::super::Diagnostics::new("f.yaml");
        let quoted = diagnostics
            .error(super::super::Code::BAD_JSONPATH, Span::new(1, 4), "m")
            .within(12)
            .clone();
        let plain = diagnostics
            .error(super::super::Code::BAD_JSONPATH, Span::new(2, 4), "m")
            .within(12)
            .clone();
        // `]`, the 12th character of the path, after the opening quote in the first line.
        assert_eq!(
            extent(&source, &quoted),
            (Span::new(1, 16), Span::new(1, 17))
        );
        assert_eq!(
            extent(&source, &plain),
            (Span::new(2, 15), Span::new(2, 16))
        );
        let (start, end) = byte_range(&source, &plain);
        assert_eq!(&source.text[start..end], "]");
        let (start, end) = byte_range(&source, &quoted);
        assert_eq!(&source.text[start..end], "]");
    }

    #[test]
    fn plain_scalars_stop_at_flow_punctuation_keys_and_comments() {
        assert_eq!(end("    transition: {nextTask: Nowhere}", 28), 35);
        assert_eq!(end("    timeDelay: PT1Q", 16), 20);
        assert_eq!(end("    timeDelay: PT1Q   # soon", 16), 20);
        assert_eq!(end("    unknownKey: 3", 5), 15);
        assert_eq!(end("  body: name eq 'X'", 9), 20);
        assert_eq!(end("  - [a, b]", 6), 7);
        assert_eq!(end("  url: http://x:80/a", 8), 21);
    }

    #[test]
    fn quoted_scalars_and_collections_end_at_their_closing_character() {
        assert_eq!(end(r#"  body: "a \" b", x"#, 9), 17);
        assert_eq!(end("  body: 'it''s' # c", 9), 16);
        assert_eq!(end("  data: {a: [1, 2], b: '}'}", 9), 28);
        assert_eq!(end("  data: {open", 9), 14);
    }

    #[test]
    fn positions_outside_the_text_end_where_they_start() {
        assert_eq!(end("short", 40), 40);
        let source = SourceFile::new("f.yaml", "a: b\n");
        assert_eq!(token_end(&source, Span::new(9, 3)), Span::new(9, 3));
        assert_eq!(token_end(&source, Span::new(1, 1)), Span::new(1, 2));
    }
}
