//! The promises the compiler is held to on any input, in one place for the tests and fuzz
//! targets that check them (issue 9): `gen` produces code exactly when `check` finds no error,
//! that code holds no `compile_error!` and parses as Rust. (That nothing panics is the caller's
//! to check: a fuzzer wants the panic itself, a test catches it.)

use crate::diagnostic::Severity;
use crate::source::SourceFile;

/// Checks and compiles `sources` together; the formatted code of each file (`None` for a file
/// with errors), or which promise was broken.
///
/// # Errors
/// A description of the broken promise, naming the file.
pub fn check_agrees_with_gen(sources: &[SourceFile]) -> Result<Vec<Option<String>>, String> {
    let checked = crate::check_all(sources);
    let compiled = crate::compile_all(sources);
    let mut code = Vec::with_capacity(sources.len());
    for ((source, (_, diags)), compilation) in sources.iter().zip(&checked).zip(compiled) {
        let name = &source.name;
        let errors = diags.items().iter().any(|d| d.severity == Severity::Error);
        let Some(tokens) = compilation.tokens else {
            if !errors {
                return Err(format!(
                    "{name}: check found no error, gen produced no code"
                ));
            }
            code.push(None);
            continue;
        };
        if errors {
            return Err(format!("{name}: check found errors, gen produced code"));
        }
        if tokens.to_string().contains("compile_error") {
            return Err(format!(
                "{name}: gen emitted compile_error! for what check accepted"
            ));
        }
        let text =
            crate::format_file(name, tokens).map_err(|e| format!("{name}: not Rust: {e}"))?;
        code.push(Some(text));
    }
    Ok(code)
}

/// The files of a fuzz input holding several (`check_gen_set`): up to four, separated by NUL
/// bytes, named `file0.sw.yaml`, `file1.sw.yaml`...
pub fn files_of_set(text: &str) -> Vec<SourceFile> {
    text.split('\0')
        .take(4)
        .enumerate()
        .map(|(index, part)| SourceFile::new(format!("file{index}.sw.yaml"), part.to_owned()))
        .collect()
}
