//! Diagnostics: every problem found in a workflow file, with its position, a stable code and what
//! to do about it. Stages push into a [`Diagnostics`] collector and never stop at the first problem.

mod codes;
mod extent;
mod render;

pub use codes::{CODES, Code, CodeInfo};
pub use extent::{extent, render_json_line_with_end, token_end};
pub use render::{render_human, render_human_each, render_json_line};

use crate::source::Span;
use serde::Serialize;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem at one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub file: String,
    pub span: Span,
    pub message: String,
    /// What the user should change.
    pub help: Option<String>,
    /// The 1-based character, inside the token at `span`, that the message names (where a
    /// JSONPath stops parsing): renderings point at it alone rather than at the whole token.
    pub within: Option<u32>,
}

impl Diagnostic {
    /// `file:line:col: error[E0104]: message (help)`, the single-line form used by the macro and
    /// the build.rs error.
    pub fn one_line(&self) -> String {
        let mut out = format!(
            "{}:{}:{}: {}[{}]: {}",
            self.file,
            self.span.line,
            self.span.col,
            self.severity_word(),
            self.code.0,
            self.message
        );
        if let Some(help) = &self.help {
            out.push_str("\n  help: ");
            out.push_str(help);
        }
        out
    }

    pub fn severity_word(&self) -> &'static str {
        match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.one_line())
    }
}

/// Collects the diagnostics of one file (serde's `Ctxt` pattern): nothing is fatal until the end.
#[derive(Debug, Clone)]
pub struct Diagnostics {
    file: String,
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn new(file: impl Into<String>) -> Self {
        Diagnostics {
            file: file.into(),
            items: Vec::new(),
        }
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    /// Records an error; returns a builder-like handle so a `help` can be attached.
    pub fn error(&mut self, code: Code, span: Span, message: impl Into<String>) -> &mut Diagnostic {
        self.push(Severity::Error, code, span, message)
    }

    pub fn warning(
        &mut self,
        code: Code,
        span: Span,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        self.push(Severity::Warning, code, span, message)
    }

    fn push(
        &mut self,
        severity: Severity,
        code: Code,
        span: Span,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        self.items.push(Diagnostic {
            code,
            severity,
            file: self.file.clone(),
            span,
            message: message.into(),
            help: None,
            within: None,
        });
        let last = self.items.len() - 1;
        &mut self.items[last]
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn items(&self) -> &[Diagnostic] {
        &self.items
    }

    /// The diagnostics recorded after the first `start` ones, to amend them.
    pub(crate) fn recorded_since(&mut self, start: usize) -> &mut [Diagnostic] {
        let start = start.min(self.items.len());
        &mut self.items[start..]
    }

    /// All diagnostics in file order (line, then column, then code), so output is stable; a
    /// diagnostic found twice (a workflow-level handler lowered into every task) is kept once.
    pub fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.items
            .sort_by(|a, b| (a.span, a.code.0, &a.message).cmp(&(b.span, b.code.0, &b.message)));
        self.items.dedup();
        self.items
    }
}

impl Diagnostic {
    /// Attaches what the user should do.
    pub fn help(&mut self, help: impl Into<String>) -> &mut Self {
        self.help = Some(help.into());
        self
    }

    /// Points at the `at`th character (1-based) of the token at the diagnostic's span.
    pub fn within(&mut self, at: usize) -> &mut Self {
        self.within = u32::try_from(at).ok().filter(|&at| at > 0);
        self
    }
}
