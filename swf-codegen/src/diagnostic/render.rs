//! Rendering diagnostics for people (rustc style, with the offending YAML line) and for tools
//! (one JSON object per line).

use super::{Diagnostic, Severity};
use crate::source::SourceFile;
use codespan_reporting::diagnostic::{Diagnostic as Report, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Config};

/// Renders diagnostics the way rustc does, with the source line and carets under the whole
/// offending token (see [`token_end`](super::token_end)).
pub fn render_human(source: &SourceFile, diagnostics: &[Diagnostic]) -> String {
    render_human_each(source, diagnostics).concat()
}

/// [`render_human`], each diagnostic on its own (the macro gives each its compile error). The
/// file's lines are found once for all of them.
pub fn render_human_each(source: &SourceFile, diagnostics: &[Diagnostic]) -> Vec<String> {
    let file = SimpleFile::new(source.name.as_str(), source.text.as_str());
    let config = Config::default();
    let mut rendered = Vec::with_capacity(diagnostics.len());
    for diagnostic in diagnostics {
        let mut out = String::new();
        let (start, end) = super::extent::byte_range(source, diagnostic);
        let report = match diagnostic.severity {
            Severity::Error => Report::error(),
            Severity::Warning => Report::warning(),
        }
        .with_code(diagnostic.code.0)
        .with_message(&diagnostic.message)
        .with_labels(vec![Label::primary((), start..end)])
        .with_notes(
            diagnostic
                .help
                .iter()
                .map(|help| format!("help: {help}"))
                .collect(),
        );
        let emitted = term::emit_into_string(&config, &file, &report);
        match emitted {
            Ok(text) => out.push_str(&text),
            // The renderer only fails on spans outside the file; fall back to the plain form.
            Err(_) => {
                out.push_str(&diagnostic.one_line());
                out.push('\n');
            }
        }
        rendered.push(out);
    }
    rendered
}

/// One JSON object: file, line, column, code, severity, message (and help when there is one).
pub fn render_json_line(diagnostic: &Diagnostic) -> String {
    let mut object = serde_json::Map::new();
    object.insert("file".into(), diagnostic.file.clone().into());
    object.insert("line".into(), diagnostic.span.line.into());
    object.insert("column".into(), diagnostic.span.col.into());
    object.insert("code".into(), diagnostic.code.0.into());
    object.insert(
        "severity".into(),
        match diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
        .into(),
    );
    object.insert("message".into(), diagnostic.message.clone().into());
    if let Some(help) = &diagnostic.help {
        object.insert("help".into(), help.clone().into());
    }
    serde_json::Value::Object(object).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{Code, Diagnostics};
    use crate::source::Span;

    /// Each diagnostic's position is found from the file's lines, found once: scanning the
    /// text for each one made 40,000 diagnostics of a 40,000-line file take minutes.
    #[test]
    fn many_diagnostics_of_a_long_file_render_in_linear_time() {
        const LINES: u32 = 40_000;
        let text: String = (0..LINES)
            .map(|line| format!("key{line}: value\n"))
            .collect();
        let source = SourceFile::new("long.sw.yaml", text);
        let mut diagnostics = Diagnostics::new("long.sw.yaml");
        for line in 1..=LINES {
            diagnostics.error(Code::UNKNOWN_KEY, Span::new(line, 1), "unknown key");
        }
        let rendered = render_human_each(&source, diagnostics.items());
        assert_eq!(rendered.len(), LINES as usize);
        assert!(rendered[LINES as usize - 1].contains("key39999: value"));
        assert!(rendered[0].contains("long.sw.yaml:1:1"), "{}", rendered[0]);
        let last = Span::new(LINES, 8);
        assert_eq!(source.line_text(LINES), Some("key39999: value"));
        assert_eq!(source.line_text(LINES + 1), None);
        assert_eq!(
            source.byte_offset(last),
            source.text.len() - "key39999: value\n".len() + 7
        );
    }
}
