//! Regular expressions (`matches` in expressions and switch conditions), compiled at build time so
//! a pattern that cannot compile is a compile error instead of a failure in production.

use crate::diagnostic::{Code, Diagnostics};
use crate::source::Span;

/// Compiles `pattern` with the `regex` crate and records a `BAD_REGEX` diagnostic when it does
/// not compile. Returns whether the pattern is usable.
pub fn check(pattern: &str, span: Span, diags: &mut Diagnostics) -> bool {
    match ::regex::Regex::new(pattern) {
        Ok(_) => true,
        Err(err) => {
            diags
                .error(
                    Code::BAD_REGEX,
                    span,
                    format!(
                        "regular expression `{}` does not compile: {}",
                        super::excerpt(pattern),
                        describe(&err)
                    ),
                )
                .help(
                    "patterns use the `regex` crate's syntax (Perl-like, without look-around or \
                     back-references); escape special characters with `\\`, for example \
                     `^Func.*` or `^\\w+Exception$`",
                );
            false
        }
    }
}

/// One line describing the error. The `regex` crate renders syntax errors over several lines
/// (the pattern, a caret line and `error: ...`); diagnostics are one line each, so keep the
/// `error:` text and turn the caret into a character position.
fn describe(err: &::regex::Error) -> String {
    let rendered = err.to_string();
    let reason = rendered
        .lines()
        .find_map(|line| line.trim_start().strip_prefix("error: "));
    let Some(reason) = reason else {
        return rendered.split_whitespace().collect::<Vec<_>>().join(" ");
    };
    match caret_position(&rendered) {
        Some(at) => format!("{reason} at character {at}"),
        None => reason.to_string(),
    }
}

/// The 1-based character the first caret points at. The pattern line and the caret line share
/// the same indentation, so the caret's column relative to the pattern line is the position.
fn caret_position(rendered: &str) -> Option<usize> {
    let lines: Vec<&str> = rendered.lines().collect();
    let caret_line = lines.iter().position(|l| l.trim_start().starts_with('^'))?;
    let pattern_line = lines.get(caret_line.checked_sub(1)?)?;
    let indent = pattern_line.chars().take_while(|c| *c == ' ').count();
    let caret = lines[caret_line].chars().position(|c| c == '^')?;
    Some(caret.checked_sub(indent)? + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pattern: &str) -> (bool, Diagnostics) {
        let mut diags = Diagnostics::new("wf.yaml");
        let ok = check(pattern, Span::new(3, 7), &mut diags);
        (ok, diags)
    }

    #[test]
    fn accepts_the_drafts_patterns() {
        for pattern in ["^Func.*", r"^\w+Exception$", "a|b", ""] {
            let (ok, diags) = run(pattern);
            assert!(ok, "{pattern}");
            assert!(diags.items().is_empty());
        }
    }

    #[test]
    fn reports_syntax_errors_on_one_line_with_position() {
        let (ok, diags) = run("ab(c");
        assert!(!ok);
        let d = &diags.items()[0];
        assert_eq!(d.code, Code::BAD_REGEX);
        assert_eq!(d.span, Span::new(3, 7));
        assert_eq!(
            d.message,
            "regular expression `ab(c` does not compile: unclosed group at character 3"
        );
        assert!(d.help.as_deref().unwrap().contains("regex"));
    }

    #[test]
    fn reports_unsupported_features() {
        let (ok, diags) = run("(?=x)");
        assert!(!ok);
        let message = &diags.items()[0].message;
        assert!(message.contains("look-around"), "{message}");
        assert!(!message.contains('\n'));
    }

    #[test]
    fn reports_patterns_that_are_too_big() {
        let (ok, diags) = run(r"\w{1000}{1000}");
        assert!(!ok);
        assert!(!diags.items()[0].message.contains('\n'));
    }
}
