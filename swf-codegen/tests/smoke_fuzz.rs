//! A stable smoke run of what a fuzzer checks (issue 9): every workflow file of the repository
//! (the seed corpus) and a fixed-seed, bounded set of mutations of them go through parse,
//! validate and emit. Nothing may panic, `gen` must produce code exactly when `check` finds no
//! error, and that code must parse as Rust. The same seed always gives the same inputs, so a
//! failure is reproducible: the message holds the input.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
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
    exercise_together(&[SourceFile::new(name, text.to_owned())])
}

/// Runs files compiled together through the pipeline; `Err` describes what went wrong.
fn exercise_together(sources: &[SourceFile]) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| {
        swf_codegen::oracle::check_agrees_with_gen(sources)
    }))
    .map_err(|_| "panicked".to_owned())?
    .map(drop)
}

/// The stored corpus of a fuzz target (`fuzz/seeds/<target>`: the minimized corpus of the
/// long runs), as raw inputs: every eighth file in name order (a fixed sample, a few seconds of
/// a debug build), or all of them with `SWF_SMOKE_SEEDS=all`.
fn fuzz_seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    files.sort();
    let every = if std::env::var("SWF_SMOKE_SEEDS").is_ok_and(|all| all == "all") {
        1
    } else {
        8
    };
    files
        .into_iter()
        .step_by(every)
        .filter_map(|path| Some((path.display().to_string(), std::fs::read(&path).ok()?)))
        .collect()
}

/// The fuzz targets' stored corpora, replayed as the targets run them: `check_gen` takes one
/// file, `check_gen_set` up to four separated by NUL bytes. Inputs that are not UTF-8 are
/// skipped, as the targets skip them.
#[test]
fn the_stored_fuzz_corpora_compile_as_check_says() {
    let single = fuzz_seeds("check_gen");
    let sets = fuzz_seeds("check_gen_set");
    assert!(
        !single.is_empty() && !sets.is_empty(),
        "the fuzz corpora are stored"
    );
    for (name, bytes) in single {
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        if let Err(problem) = exercise(&name, text) {
            panic!("{name}: {problem}");
        }
    }
    for (name, bytes) in sets {
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let sources = swf_codegen::oracle::files_of_set(text);
        if let Err(problem) = exercise_together(&sources) {
            panic!("{name}: {problem}");
        }
    }
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

#[path = "support/rng.rs"]
mod rng;

use rng::Rng;

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
