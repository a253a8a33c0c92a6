//! `swfc`: check workflow files and print the Rust they compile to.
//!
//! ```text
//! swfc check [--format human|json] FILE...   diagnostics; exit status 1 on errors
//! swfc gen FILE...                            the generated Rust on stdout
//! swfc explain CODE                           what a diagnostic code means
//! ```

use std::process::ExitCode;
use swf_codegen::diagnostic::{CODES, Severity, render_human, render_json_line};
use swf_codegen::source::SourceFile;

const USAGE: &str = "usage:
  swfc check [--format human|json] FILE...   report every problem in the workflow files
  swfc gen FILE...                            print the Rust code workflows compile to
  swfc explain CODE                           explain a diagnostic code such as E0104";

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

fn read(path: &str) -> Result<SourceFile, ExitCode> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(SourceFile::new(path, text)),
        Err(error) => {
            eprintln!("swfc: cannot read {path}: {error}");
            Err(ExitCode::from(2))
        }
    }
}

fn check(args: &[String]) -> ExitCode {
    let mut format = Format::Human;
    let mut files = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--format" => match iter.next().map(String::as_str) {
                Some("json") => format = Format::Json,
                Some("human") => format = Format::Human,
                _ => return usage_error("--format takes `human` or `json`"),
            },
            "--format=json" => format = Format::Json,
            "--format=human" => format = Format::Human,
            flag if flag.starts_with('-') => {
                return usage_error(&format!("unknown option {flag}"));
            }
            file => files.push(file),
        }
    }
    if files.is_empty() {
        return usage_error("check needs at least one file");
    }
    let mut sources = Vec::new();
    for path in &files {
        match read(path) {
            Ok(source) => sources.push(source),
            Err(code) => return code,
        }
    }
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
            }
            Format::Human => {
                print!("{}", render_human(source, &diagnostics));
                if let Some(workflow) = workflow {
                    eprintln!(
                        "{}: {} ({} task(s))",
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
    if args.is_empty() {
        return usage_error("gen takes one or more files (compiled together)");
    }
    let mut sources = Vec::new();
    for path in args {
        match read(path) {
            Ok(source) => sources.push(source),
            Err(code) => return code,
        }
    }
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
