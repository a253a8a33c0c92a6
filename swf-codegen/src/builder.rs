//! The build.rs entry point, in the style of prost-build: compile workflow files into
//! `OUT_DIR/<name>.rs`, formatted, with an `@generated` header, written only when changed.

use crate::diagnostic::{Diagnostic, Severity, render_human};
use crate::ir::Dialect;
use crate::pipeline::{compile_all_with, file_stem, format_file};
use crate::source::SourceFile;
use std::fmt;
use std::path::{Path, PathBuf};

/// Compiles workflow files from a build script.
///
/// ```no_run
/// // build.rs
/// swf_codegen::Builder::new()
///     .file("workflows/order.sw.yaml")
///     .compile()
///     .unwrap_or_else(|e| panic!("{e}"));
/// ```
/// and in the crate: `swf_runtime::include_workflow!("order");`
#[derive(Debug, Clone, Default)]
pub struct Builder {
    files: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    root: Option<PathBuf>,
    emit_rerun: bool,
    dialect: Option<Dialect>,
    options: crate::pipeline::Options,
}

/// Everything that stopped a build: every diagnostic of every file, or an I/O problem.
#[derive(Debug)]
pub enum BuildError {
    /// Every diagnostic of every file, and their rendering as `swfc` shows them (the YAML line,
    /// carets under the token, the help).
    Diagnostics(Vec<Diagnostic>, String),
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    Format {
        path: PathBuf,
        error: String,
    },
    NoOutDir,
    /// Two files would be written to the same `OUT_DIR/<name>.rs`.
    SameOutput {
        first: String,
        second: String,
        output: String,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Diagnostics(diagnostics, rendered) => {
                let errors = diagnostics
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                    .count();
                writeln!(f, "{errors} error(s) in workflow files:")?;
                f.write_str(rendered)
            }
            BuildError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            BuildError::Format { path, error } => write!(
                f,
                "{}: the generated code could not be formatted ({error}); please report this",
                path.display()
            ),
            BuildError::SameOutput {
                first,
                second,
                output,
            } => write!(
                f,
                "{first} and {second} would both be written to OUT_DIR/{output}: rename one of the files"
            ),
            BuildError::NoOutDir => write!(
                f,
                "OUT_DIR is not set: call Builder::compile from a build script or set out_dir"
            ),
        }
    }
}

impl std::error::Error for BuildError {}

impl Builder {
    pub fn new() -> Self {
        Builder {
            emit_rerun: true,
            ..Builder::default()
        }
    }

    /// Adds a workflow file, relative to the crate root (CARGO_MANIFEST_DIR) unless absolute.
    /// Diagnostics and the generated code name it as given, but an absolute path under the
    /// root from the root (so that the generated code does not depend on where the crate is).
    pub fn file(mut self, path: impl Into<PathBuf>) -> Self {
        self.files.push(path.into());
        self
    }

    /// Where to write the generated files; defaults to `OUT_DIR`.
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The directory relative paths start from; defaults to `CARGO_MANIFEST_DIR`, else the
    /// current directory.
    pub fn root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.root = Some(dir.into());
        self
    }

    /// Reads every file in `dialect` instead of detecting each one's from its keys.
    pub fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = Some(dialect);
        self
    }

    /// Whether the machine type's documentation shows the workflow's diagram (off by default;
    /// needs this crate's `svg` feature). See [`Options::diagram_docs`](crate::Options).
    pub fn diagram_docs(mut self, on: bool) -> Self {
        self.options.diagram_docs = on;
        self
    }

    /// Strict paths (off by default): see [`Options::strict_paths`](crate::Options).
    pub fn strict_paths(mut self, on: bool) -> Self {
        self.options.strict_paths = on;
        self
    }

    /// Whether to print `cargo:rerun-if-changed` lines (on by default).
    pub fn emit_rerun_if_changed(mut self, emit: bool) -> Self {
        self.emit_rerun = emit;
        self
    }

    /// Compiles every file, together (a sub-flow may call any of them); writes each one's code
    /// to `OUT_DIR/<name>.rs` only if it changed. Returns the paths
    /// written (or left as they were), or every diagnostic of every file.
    pub fn compile(self) -> Result<Vec<PathBuf>, BuildError> {
        let out_dir = match self
            .out_dir
            .clone()
            .or_else(|| std::env::var_os("OUT_DIR").map(PathBuf::from))
        {
            Some(dir) => dir,
            None => return Err(BuildError::NoOutDir),
        };
        let root = self
            .root
            .clone()
            .or_else(|| std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from))
            .unwrap_or_default();
        let mut sources = Vec::new();
        for file in &self.files {
            let full = if file.is_absolute() {
                file.clone()
            } else {
                root.join(file)
            };
            if self.emit_rerun {
                println!("cargo:rerun-if-changed={}", full.display());
            }
            let text = crate::source::read_bounded(&full).map_err(|error| BuildError::Io {
                path: full.clone(),
                error,
            })?;
            sources.push(
                SourceFile::new(shown_name(file, &root), text)
                    .with_dialect(self.dialect)
                    .with_location(&full),
            );
        }
        // Each file is written to `<stem>.rs`: two files with one stem would overwrite each other.
        for (index, source) in sources.iter().enumerate() {
            let stem = file_stem(&source.name);
            if let Some(first) = sources[..index].iter().find(|s| file_stem(&s.name) == stem) {
                return Err(BuildError::SameOutput {
                    first: first.name.clone(),
                    second: source.name.clone(),
                    output: format!("{stem}.rs"),
                });
            }
        }
        // Compiled together, so that sub-flows can call any of them.
        let mut problems = Vec::new();
        let mut rendered = String::new();
        let mut outputs = Vec::new();
        for (compilation, source) in compile_all_with(&sources, self.options)
            .into_iter()
            .zip(&sources)
        {
            if self.emit_rerun {
                for schema in compilation.workflow.iter().flat_map(crate::schema::watched) {
                    println!("cargo:rerun-if-changed={}", schema.display());
                }
            }
            let has_errors = compilation.has_errors();
            rendered.push_str(&render_human(source, &compilation.diagnostics));
            problems.extend(compilation.diagnostics);
            let Some(tokens) = compilation.tokens.filter(|_| !has_errors) else {
                continue;
            };
            let out_path = out_dir.join(format!("{}.rs", file_stem(&source.name)));
            let content =
                format_file(&source.name, tokens).map_err(|error| BuildError::Format {
                    path: out_path.clone(),
                    error: error.to_string(),
                })?;
            write_if_changed(&out_path, &content)?;
            outputs.push(out_path);
        }
        if problems.iter().any(|d| d.severity == Severity::Error) {
            return Err(BuildError::Diagnostics(problems, rendered));
        }
        for warning in &problems {
            if self.emit_rerun {
                println!("cargo:warning={}", warning.one_line().replace('\n', " "));
            }
        }
        Ok(outputs)
    }
}

/// The name a file is shown by (in diagnostics and in the generated code: its header, its data
/// schemas' names): as given, but from the root when it is an absolute path under the root, so
/// that the generated code is the same on every machine and in every checkout.
fn shown_name(file: &Path, root: &Path) -> String {
    let under_root = || -> Option<PathBuf> {
        if let Ok(relative) = file.strip_prefix(root) {
            return Some(relative.to_path_buf());
        }
        // A root given relative to the current directory, or through a symbolic link.
        let root = std::fs::canonicalize(root).ok()?;
        let file = std::fs::canonicalize(file).ok()?;
        file.strip_prefix(root).ok().map(Path::to_path_buf)
    };
    let relative = if file.is_absolute() {
        under_root().filter(|relative| !relative.as_os_str().is_empty())
    } else {
        None
    };
    relative
        .as_deref()
        .unwrap_or(file)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Writing an unchanged file would make cargo rebuild everything that includes it.
fn write_if_changed(path: &Path, content: &str) -> Result<(), BuildError> {
    if std::fs::read_to_string(path).is_ok_and(|existing| existing == content) {
        return Ok(());
    }
    std::fs::write(path, content).map_err(|error| BuildError::Io {
        path: path.to_path_buf(),
        error,
    })
}
