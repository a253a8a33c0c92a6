//! `swfc`: check workflow files, print the Rust they compile to, draw them.
//!
//! ```text
//! swfc check [--format human|json] [--dialect D] PATH...   diagnostics, a summary, each file's dialect
//! swfc gen [--dialect D] PATH...                            the generated Rust on stdout
//! swfc graph [--format mermaid|dot|svg] [--dialect D] FILE  a diagram of every scope on stdout
//! swfc explain CODE                                         what a diagnostic code means
//! swfc completions SHELL                                    a shell completion script
//! ```
//!
//! Exit status: 0 when all is well, 1 when a file has errors (diagnostics), 2 for a usage error
//! or a file or directory that cannot be read. `swfc --help` says the same.

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use swf_codegen::diagnostic::{
    CODES, Diagnostics, Severity, render_human, render_json_line_with_end,
};
use swf_codegen::ir::Dialect;
use swf_codegen::source::SourceFile;

const EXIT_STATUS: &str = "\
Exit status:
  0  success (warnings alone do not fail)
  1  a workflow file has errors
  2  usage error, or a file or directory that cannot be read";

const PATHS_HELP: &str = "Workflow files, or directories: a directory is searched recursively for files ending in \
.sw.yaml, .sw.yml or .sw.json (hidden entries and symbolic links to directories are skipped). \
Files named directly are read whatever their name. All the files are compiled together, so a \
sub-flow may call any of them";

/// Check Serverless Workflow files, print the Rust they compile to, draw them.
#[derive(Parser)]
#[command(name = "swfc", version, propagate_version = true, after_help = EXIT_STATUS)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Report every problem in workflow files and directories, then a summary line
    ///
    /// Diagnostics go to stdout (rustc-style, or one JSON object a line with --format json);
    /// each file's dialect and the summary line ("N file(s) checked: E error(s), W warning(s)")
    /// go to stderr.
    #[command(after_help = EXIT_STATUS)]
    Check {
        /// How diagnostics are printed: `json` prints one object a line with `file`, `line`,
        /// `column`, `end_line`, `end_column` (exclusive), `code`, `severity`, `message` and
        /// `help`, then one `{"kind": "dialect", ...}` line a file
        #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
        format: CheckFormat,
        #[command(flatten)]
        dialect: DialectArg,
        #[arg(required = true, value_name = "PATH", help = PATHS_HELP)]
        paths: Vec<PathBuf>,
    },
    /// Print the Rust code workflows compile to
    #[command(after_help = EXIT_STATUS)]
    Gen {
        #[command(flatten)]
        dialect: DialectArg,
        /// A definite path in an action parameter or a comparison that selects nothing fails
        /// the task (a `DataError` naming the path) instead of giving null or false
        #[arg(long)]
        strict_paths: bool,
        #[arg(required = true, value_name = "PATH", help = PATHS_HELP)]
        paths: Vec<PathBuf>,
    },
    /// Draw every scope of a workflow: tasks, transitions, errors, retries, events
    ///
    /// The diagram is printed even when the file has errors (a transition to a missing task is
    /// drawn to a red node); its diagnostics then go to stderr and the exit status is 1.
    /// Checks that need other files (the ids that sub-flows call) are not made.
    #[command(after_help = EXIT_STATUS)]
    Graph {
        /// `mermaid` (a flowchart for Markdown), `dot` (Graphviz) or `svg` (laid out without
        /// graphviz)
        #[arg(long, value_enum, default_value_t = GraphFormat::Mermaid)]
        format: GraphFormat,
        #[command(flatten)]
        dialect: DialectArg,
        /// The workflow file
        file: PathBuf,
    },
    /// Explain a diagnostic code such as E0104
    #[command(after_help = EXIT_STATUS)]
    Explain {
        /// The code, in any case: E0104, w0001
        code: String,
    },
    /// Print a completion script for a shell
    ///
    /// For example `swfc completions bash > ~/.local/share/bash-completion/completions/swfc`,
    /// or `swfc completions fish > ~/.config/fish/completions/swfc.fish`.
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
}

#[derive(clap::Args)]
struct DialectArg {
    /// Read every file in this dialect instead of detecting it from each file's keys: first,
    /// second, v0.1 or tasks (the draft numbers 002, 000, 001 and 004 work too)
    #[arg(long, value_name = "D", value_parser = parse_dialect)]
    dialect: Option<Dialect>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CheckFormat {
    Human,
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum GraphFormat {
    Mermaid,
    Dot,
    Svg,
}

fn parse_dialect(name: &str) -> Result<Dialect, String> {
    Dialect::from_name(name).ok_or_else(|| {
        format!(
            "takes one of: {}",
            Dialect::ALL.map(Dialect::name).join(", ")
        )
    })
}

/// Writes a line to stderr, as `eprintln!` does, without its panic (status 101) when stderr
/// cannot be written: a reader that went away (`swfc check ... 2>&1 | head`) ends the messages
/// quietly, as [`emit`] does on stdout, keeping the status; so does any other failure to write
/// there, which has nowhere left to be reported (the status still says how the command went).
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

/// Writes `text` (diagnostics, rendered) to stderr, as [`say!`] does.
fn to_stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // Help and version go to stdout with status 0, usage errors to stderr with 2.
            let _ = error.print();
            return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    match cli.command {
        Command::Check {
            format,
            dialect,
            paths,
        } => check(format, dialect.dialect, &paths),
        Command::Gen {
            dialect,
            strict_paths,
            paths,
        } => generate(dialect.dialect, strict_paths, &paths),
        Command::Graph {
            format,
            dialect,
            file,
        } => graph(format, dialect.dialect, &file),
        Command::Explain { code } => explain(&code),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "swfc", &mut script);
            emit(&script, ExitCode::SUCCESS)
        }
    }
}

/// Writes to stdout; a reader that went away (`swfc gen ... | head`) ends the output quietly,
/// keeping the status.
fn emit(bytes: &[u8], status: ExitCode) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => status,
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => status,
        Err(error) => {
            say!("swfc: cannot write the output: {error}");
            ExitCode::from(2)
        }
    }
}

fn read(path: &Path, dialect: Option<Dialect>) -> Result<SourceFile, ExitCode> {
    let name = path.to_string_lossy();
    match swf_codegen::source::read_bounded(path) {
        // Its location as a path, not its shown name: the files it references (its data
        // schemas) are read next to it, and a name that is not UTF-8 was shown lossily.
        Ok(text) => Ok(SourceFile::new(name, text)
            .with_dialect(dialect)
            .with_location(path)),
        Err(error) => {
            say!("swfc: cannot read {name}: {error}");
            Err(ExitCode::from(2))
        }
    }
}

/// The workflow files the paths name: files as given, directories searched recursively (in
/// name order, so the output is the same on every machine), each file once however it is
/// named (by its canonical path).
fn workflow_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ExitCode> {
    let mut files = Vec::new();
    for path in paths {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                let before = files.len();
                walk(path, &mut files)?;
                if files.len() == before {
                    say!(
                        "swfc: no workflow file (*.sw.yaml, *.sw.yml, *.sw.json) in {}",
                        path.display()
                    );
                    return Err(ExitCode::from(2));
                }
            }
            Ok(_) => files.push(path.clone()),
            Err(error) => {
                say!("swfc: cannot read {}: {error}", path.display());
                return Err(ExitCode::from(2));
            }
        }
    }
    // One file named two ways (`swfc check . order.sw.yaml`, which finds `./order.sw.yaml`)
    // is read once, under the name first given: read twice, its id clashed with itself.
    let mut seen = std::collections::HashSet::with_capacity(files.len());
    let mut unique: Vec<PathBuf> = Vec::with_capacity(files.len());
    for file in files {
        let identity = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
        if seen.insert(identity) {
            unique.push(file);
        }
    }
    Ok(unique)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), ExitCode> {
    let entries = std::fs::read_dir(dir).and_then(|entries| {
        entries
            .map(|entry| entry.and_then(|e| Ok((e.path(), e.file_type()?))))
            .collect::<Result<Vec<_>, _>>()
    });
    let mut entries = entries.map_err(|error| {
        say!("swfc: cannot read the directory {}: {error}", dir.display());
        ExitCode::from(2)
    })?;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, kind) in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        if name.starts_with('.') {
            continue;
        }
        if kind.is_dir() {
            walk(&path, files)?;
        } else if [".sw.yaml", ".sw.yml", ".sw.json"]
            .iter()
            .any(|suffix| name.ends_with(suffix))
        {
            files.push(path);
        }
    }
    Ok(())
}

fn sources(paths: &[PathBuf], dialect: Option<Dialect>) -> Result<Vec<SourceFile>, ExitCode> {
    workflow_files(paths)?
        .iter()
        .map(|path| read(path, dialect))
        .collect()
}

fn check(format: CheckFormat, dialect: Option<Dialect>, paths: &[PathBuf]) -> ExitCode {
    let sources = match sources(paths, dialect) {
        Ok(sources) => sources,
        Err(code) => return code,
    };
    let how = if dialect.is_some() {
        "named"
    } else {
        "detected"
    };
    // Checked together, so that sub-flows resolve among the files given.
    let mut errors = 0;
    let mut warnings = 0;
    let mut out = String::new();
    for ((workflow, diags), source) in swf_codegen::check_all(&sources).into_iter().zip(&sources) {
        let diagnostics = diags.into_sorted();
        errors += diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        warnings += diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count();
        match format {
            CheckFormat::Json => {
                for diagnostic in &diagnostics {
                    out.push_str(&render_json_line_with_end(source, diagnostic));
                    out.push('\n');
                }
                if let Some(workflow) = workflow {
                    let line = serde_json::json!({
                        "kind": "dialect",
                        "file": source.name,
                        "dialect": workflow.dialect.name(),
                        "dialect_label": workflow.dialect.label(),
                        "how": how,
                        "id": workflow.id.value,
                    });
                    out.push_str(&format!("{line}\n"));
                }
            }
            CheckFormat::Human => {
                out.push_str(&render_human(source, &diagnostics));
                if let Some(workflow) = workflow {
                    say!(
                        "{}: {} ({how}), {} top-level task(s)",
                        source.name,
                        workflow.dialect.label(),
                        workflow.scope.tasks.len()
                    );
                }
            }
        }
    }
    let status = if errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    };
    let status = emit(out.as_bytes(), status);
    say!(
        "{} file(s) checked: {errors} error(s), {warnings} warning(s)",
        sources.len()
    );
    status
}

fn generate(dialect: Option<Dialect>, strict_paths: bool, paths: &[PathBuf]) -> ExitCode {
    let sources = match sources(paths, dialect) {
        Ok(sources) => sources,
        Err(code) => return code,
    };
    let options = swf_codegen::Options {
        strict_paths,
        ..swf_codegen::Options::default()
    };
    let compilations = swf_codegen::compile_all_with(&sources, options);
    let mut failed = false;
    for (compilation, source) in compilations.iter().zip(&sources) {
        if compilation.has_errors() {
            to_stderr(&render_human(source, &compilation.diagnostics));
            failed = true;
        }
    }
    if failed {
        return ExitCode::FAILURE;
    }
    let mut out = String::new();
    for (compilation, source) in compilations.into_iter().zip(&sources) {
        let Some(tokens) = compilation.tokens else {
            return ExitCode::FAILURE;
        };
        match swf_codegen::format_file(&source.name, tokens) {
            Ok(code) => out.push_str(&code),
            Err(error) => {
                say!(
                    "swfc: the generated code could not be formatted ({error}); please report this"
                );
                return ExitCode::FAILURE;
            }
        }
    }
    emit(out.as_bytes(), ExitCode::SUCCESS)
}

fn graph(format: GraphFormat, dialect: Option<Dialect>, file: &Path) -> ExitCode {
    let source = match read(file, dialect) {
        Ok(source) => source,
        Err(code) => return code,
    };
    // The file's own checks (the same scope graphs the compiler validates); the checks across
    // files need the other files and do not change the drawing.
    let mut diags = Diagnostics::new(&source.name);
    let workflow = swf_codegen::parse::parse(&source, &mut diags);
    if let Some(workflow) = &workflow {
        swf_codegen::validate::validate(workflow, &mut diags);
    }
    let failed = diags.has_errors();
    let diagnostics = diags.into_sorted();
    to_stderr(&render_human(&source, &diagnostics));
    let Some(workflow) = workflow else {
        return ExitCode::FAILURE;
    };
    let text = match format {
        GraphFormat::Mermaid => swf_codegen::diagram::mermaid(&workflow),
        GraphFormat::Dot => swf_codegen::diagram::dot(&workflow),
        GraphFormat::Svg => match swf_codegen::diagram::svg(&workflow) {
            Ok(svg) => svg,
            Err(message) => {
                say!("swfc: {message}; please report this");
                return ExitCode::FAILURE;
            }
        },
    };
    let status = if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    };
    emit(text.as_bytes(), status)
}

fn explain(code: &str) -> ExitCode {
    match CODES.iter().find(|c| c.code.0.eq_ignore_ascii_case(code)) {
        Some(info) => {
            let text = format!("{}: {}\n\n{}\n", info.code.0, info.title, info.explanation);
            emit(text.as_bytes(), ExitCode::SUCCESS)
        }
        None => {
            let last = CODES.last().map_or("", |c| c.code.0);
            say!("swfc: no diagnostic code {code}; codes run from E0001 to {last}");
            ExitCode::from(2)
        }
    }
}
