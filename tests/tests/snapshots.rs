//! Snapshots of generated code: each `snapshots/*.sw.yaml` compiles to exactly the checked-in
//! `snapshots/*.rs` (which `snapshot_code.rs` compiles and runs). After an intended change of the
//! generated code, run `EXPECTORATE=overwrite cargo test -p swf-tests --test snapshots` and review
//! the diff.

use swf_codegen::source::SourceFile;

/// Groups of workflows compiled together (a sub-flow calls another of its group).
const CASES: &[&[&str]] = &[
    &["order"],
    &["filters"],
    &["switches"],
    &["approval"],
    &["nested", "nested_child"],
    &["v01_events"],
    &["kebab_first"],
    &["saga"],
];

/// Each workflow of the group with its generated file.
fn generate(group: &[&str]) -> Vec<(String, String)> {
    let sources: Vec<SourceFile> = group
        .iter()
        .map(|case| {
            let name = format!("snapshots/{case}.sw.yaml");
            let text = std::fs::read_to_string(&name).expect("snapshot workflow is readable");
            SourceFile::new(name, text)
        })
        .collect();
    swf_codegen::compile_all(&sources)
        .into_iter()
        .zip(group.iter().zip(&sources))
        .map(|(compilation, (case, source))| {
            assert!(
                compilation.diagnostics.is_empty(),
                "{}: {:#?}",
                source.name,
                compilation.diagnostics
            );
            let tokens = compilation.tokens.expect("code for a valid workflow");
            let code = swf_codegen::format_file(&source.name, tokens)
                .expect("generated code parses as a file");
            (format!("snapshots/{case}.rs"), code)
        })
        .collect()
}

#[test]
fn generated_code_matches_the_snapshots() {
    for group in CASES {
        for (path, code) in generate(group) {
            expectorate::assert_contents(path, &code);
        }
    }
}

/// The same file gives the same bytes, within a process (no hash-map order leaks into the
/// output) and across processes (the checked-in snapshots were written by another one).
#[test]
fn generation_is_deterministic() {
    for group in CASES {
        let first = generate(group);
        for _ in 0..5 {
            assert_eq!(first, generate(group), "{group:?} changed between two runs");
        }
    }
}
