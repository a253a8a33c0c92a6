//! `swfc`: check workflow files and print the Rust they compile to.
//!
//! ```text
//! swfc check [--format human|json] [--dialect D] FILE...   diagnostics and each file's dialect
//! swfc gen [--dialect D] FILE...                            the generated Rust on stdout
//! swfc explain CODE                                         what a diagnostic code means
//! ```
//!
//! The dialect of each file is detected from its keys unless `--dialect` names it (`first`,
//! `second`, `v0.1` or `tasks`) for every file given.

use std::process::ExitCode;
use swf_codegen::diagnostic::{CODES, Severity, render_human, render_json_line};
use swf_codegen::ir::Dialect;
use swf_codegen::source::SourceFile;

const USAGE: &str = "usage:
  swfc check [--format human|json] [--dialect D] FILE...   report every problem in the workflow files
  swfc gen [--dialect D] FILE...                            print the Rust code workflows compile to
  swfc explain CODE                                         explain a diagnostic code such as E0104
the dialect (first, second, v0.1, tasks) is detected from each file's keys unless --dialect names it";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Human,
    Json,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("check") => check(&args[1..]),
        Some("gen") => generate(&args[1..]),
        Some("explain") => explain(&args[1..]),
        Some("--help" | "-h" | "help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => usage_error("expected a command"),
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("swfc: {message}\n{USAGE}");
    ExitCode::from(2)
}

fn read(path: &str, dialect: Option<Dialect>) -> Result<SourceFile, ExitCode> {
    match swf_codegen::source::read_bounded(std::path::Path::new(path)) {
        Ok(text) => Ok(SourceFile::new(path, text).with_dialect(dialect)),
        Err(error) => {
            eprintln!("swfc: cannot read {path}: {error}");
            Err(ExitCode::from(2))
        }
    }
}

/// The options and files of `check` and `gen`.
struct Invocation {
    format: Format,
    dialect: Option<Dialect>,
    sources: Vec<SourceFile>,
}

fn parse_invocation(args: &[String], allow_format: bool) -> Result<Invocation, ExitCode> {
    let mut format = Format::Human;
    let mut dialect = None;
    let mut files = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value)),
            _ => (arg.as_str(), None),
        };
        match flag {
            "--format" if allow_format => {
                match inline.or_else(|| iter.next().map(String::as_str)) {
                    Some("json") => format = Format::Json,
                    Some("human") => format = Format::Human,
                    _ => return Err(usage_error("--format takes `human` or `json`")),
                }
            }
            "--dialect" => {
                let name = inline.or_else(|| iter.next().map(String::as_str));
                match name.and_then(Dialect::from_name) {
                    Some(named) => dialect = Some(named),
                    None => {
                        return Err(usage_error(&format!(
                            "--dialect takes one of: {}",
                            Dialect::ALL.map(Dialect::name).join(", ")
                        )));
                    }
                }
            }
            flag if flag.starts_with('-') => {
                return Err(usage_error(&format!("unknown option {flag}")));
            }
            file => files.push(file),
        }
    }
    if files.is_empty() {
        return Err(usage_error("give at least one workflow file"));
    }
    let sources = files
        .iter()
        .map(|path| read(path, dialect))
        .collect::<Result<_, _>>()?;
    Ok(Invocation {
        format,
        dialect,
        sources,
    })
}

fn check(args: &[String]) -> ExitCode {
    let Invocation {
        format,
        dialect,
        sources,
    } = match parse_invocation(args, true) {
        Ok(invocation) => invocation,
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
            Format::Json => {
                for diagnostic in &diagnostics {
                    println!("{}", render_json_line(diagnostic));
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
                    println!("{line}");
                }
            }
            Format::Human => {
                print!("{}", render_human(source, &diagnostics));
                if let Some(workflow) = workflow {
                    eprintln!(
                        "{}: {} ({how}), {} top-level task(s)",
                        source.name,
                        workflow.dialect.label(),
                        workflow.scope.tasks.len()
                    );
                }
            }
        }
    }
    if format == Format::Human {
        eprintln!("{errors} error(s), {warnings} warning(s)");
    }
    if errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn generate(args: &[String]) -> ExitCode {
    let sources = match parse_invocation(args, false) {
        Ok(invocation) => invocation.sources,
        Err(code) => return code,
    };
    let compilations = swf_codegen::compile_all(&sources);
    let mut failed = false;
    for (compilation, source) in compilations.iter().zip(&sources) {
        if compilation.has_errors() {
            eprint!("{}", render_human(source, &compilation.diagnostics));
            failed = true;
        }
    }
    if failed {
        return ExitCode::FAILURE;
    }
    for (compilation, source) in compilations.into_iter().zip(&sources) {
        let Some(tokens) = compilation.tokens else {
            return ExitCode::FAILURE;
        };
        match swf_codegen::format_file(&source.name, tokens) {
            Ok(code) => print!("{code}"),
            Err(error) => {
                eprintln!(
                    "swfc: the generated code could not be formatted ({error}); please report this"
                );
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

fn explain(args: &[String]) -> ExitCode {
    let [code] = args else {
        return usage_error("explain takes one code");
    };
    match CODES.iter().find(|c| c.code.0.eq_ignore_ascii_case(code)) {
        Some(info) => {
            println!("{}: {}\n\n{}", info.code.0, info.title, info.explanation);
            ExitCode::SUCCESS
        }
        None => {
            let last = CODES.last().map_or("", |c| c.code.0);
            eprintln!("swfc: no diagnostic code {code}; codes run from E0001 to {last}");
            ExitCode::from(2)
        }
    }
}
