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
    let file = SimpleFile::new(source.name.as_str(), source.text.as_str());
    let config = Config::default();
    let mut out = String::new();
    for diagnostic in diagnostics {
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
    }
    out
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
