//! A stable smoke run of what a fuzzer checks (issue 9): every workflow file of the repository
//! (the seed corpus) and a fixed-seed, bounded set of mutations of them go through parse,
//! validate and emit. Nothing may panic, `gen` must produce code exactly when `check` finds no
//! error, and that code must parse as Rust. The same seed always gives the same inputs, so a
//! failure is reproducible: the message holds the input.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use swf_codegen::diagnostic::Severity;
use swf_codegen::source::SourceFile;

/// Every `*.sw.yaml` / `*.sw.json` under the workspace, sorted.
fn corpus() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            Some((path.display().to_string(), text))
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                collect(&path, out);
            }
        } else if name.ends_with(".sw.yaml") || name.ends_with(".sw.json") {
            out.push(path);
        }
    }
}

/// Runs one input through the pipeline; `Err` describes what went wrong.
fn exercise(name: &str, text: &str) -> Result<(), String> {
    let source = SourceFile::new(name, text.to_owned());
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let (_, diags) = swf_codegen::check(&source);
        let errors = diags.items().iter().any(|d| d.severity == Severity::Error);
        let compiled = swf_codegen::compile(&source);
        (errors, compiled)
    }));
    let (errors, compiled) = outcome.map_err(|_| "panicked".to_owned())?;
    if compiled.tokens.is_some() == errors {
        return Err(format!(
            "check found errors: {errors}, gen produced code: {}",
            compiled.tokens.is_some()
        ));
    }
    if let Some(tokens) = compiled.tokens {
        if tokens.to_string().contains("compile_error") {
            return Err("gen emitted compile_error! for what check accepted".into());
        }
        swf_codegen::format_file(name, tokens).map_err(|e| format!("not Rust: {e}"))?;
    }
    Ok(())
}

#[test]
fn the_corpus_compiles_as_check_says() {
    let corpus = corpus();
    assert!(
        corpus.len() > 50,
        "the corpus is the repository's workflows"
    );
    for (name, text) in &corpus {
        if let Err(problem) = exercise(name, text) {
            panic!("{name}: {problem}");
        }
    }
}

/// xorshift64*: small, deterministic, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % u64::try_from(n.max(1)).unwrap_or(1)).unwrap_or(0)
    }
}

/// What mutations insert: YAML structure, aliases, hostile names and numbers, dialect keys.
const TOKENS: &[&str] = &[
    "&a ",
    "*a",
    ": ",
    "- ",
    "[",
    "]",
    "{",
    "}",
    "\"",
    "'",
    "\n",
    "\r",
    "\t",
    "  ",
    "#",
    "1e400",
    ".nan",
    "-.inf",
    "18446744073709551616",
    "0",
    "-1",
    "\"\"",
    "3d-printer",
    "Completed",
    "type",
    "self",
    "*/",
    "\"#",
    "nextTask: \"\"",
    "next-state: ''",
    "type: switch",
    "type: parallel",
    "type: foreach",
    "start: {kind: default}",
    "end: true",
    "transition: {nextTask: x}",
    "$.a-b",
    "$..x",
    "$[?(@.a > 1)]",
    "PT0S",
    "R5/PT1S",
    "~",
    "null",
    "true",
    "compensatedBy: x",
    "usedForCompensation: true",
];

fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut out = text.to_owned();
    for _ in 0..1 + rng.below(3) {
        let boundary = |s: &str, at: usize| {
            let mut at = at.min(s.len());
            while !s.is_char_boundary(at) {
                at -= 1;
            }
            at
        };
        let at = boundary(&out, rng.below(out.len() + 1));
        match rng.below(5) {
            0 => out.insert_str(at, TOKENS[rng.below(TOKENS.len())]),
            1 => {
                let end = boundary(&out, at + rng.below(40));
                out.replace_range(at..end, "");
            }
            2 => {
                let lines: Vec<&str> = out.lines().collect();
                if !lines.is_empty() {
                    let line = lines[rng.below(lines.len())].to_owned();
                    out.insert_str(at, &format!("{line}\n"));
                }
            }
            3 => {
                let mut lines: Vec<&str> = out.lines().collect();
                if lines.len() > 1 {
                    let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                    lines.swap(a, b);
                }
                out = lines.join("\n");
            }
            _ => out.truncate(at),
        }
    }
    out
}

/// A bounded mutation run with a fixed seed: set `SWF_SMOKE_MUTATIONS` to run more.
#[test]
fn mutations_of_the_corpus_never_panic_and_check_agrees_with_gen() {
    let corpus = corpus();
    let runs: usize = std::env::var("SWF_SMOKE_MUTATIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let mut rng = Rng(0x5EED_0009_u64);
    for run in 0..runs {
        let (name, text) = &corpus[rng.below(corpus.len())];
        let mutated = mutate(text, &mut rng);
        if let Err(problem) = exercise(name, &mutated) {
            panic!("mutation {run} of {name}: {problem}\n--- input ---\n{mutated}\n---");
        }
    }
}
