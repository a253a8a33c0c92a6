//! Snapshots of generated code: each `snapshots/*.sw.yaml` compiles to exactly the checked-in
//! `snapshots/*.rs` (which `snapshot_code.rs` compiles and runs). After an intended change of the
//! generated code, run `EXPECTORATE=overwrite cargo test -p swf-tests --test snapshots` and review
//! the diff.

use swf_codegen::source::SourceFile;

const CASES: &[&str] = &["order", "filters", "switches"];

fn generate(case: &str) -> String {
    let name = format!("snapshots/{case}.sw.yaml");
    let text = std::fs::read_to_string(&name).expect("snapshot workflow is readable");
    let compilation = swf_codegen::compile(&SourceFile::new(name.clone(), text));
    assert!(
        compilation.diagnostics.is_empty(),
        "{name}: {:#?}",
        compilation.diagnostics
    );
    let tokens = compilation.tokens.expect("code for a valid workflow");
    swf_codegen::format_file(&name, tokens).expect("generated code parses as a file")
}

#[test]
fn generated_code_matches_the_snapshots() {
    for case in CASES {
        expectorate::assert_contents(format!("snapshots/{case}.rs"), &generate(case));
    }
}

/// The same file gives the same bytes, within a process (no hash-map order leaks into the
/// output) and across processes (the checked-in snapshots were written by another one).
#[test]
fn generation_is_deterministic() {
    for case in CASES {
        let first = generate(case);
        for _ in 0..5 {
            assert_eq!(first, generate(case), "{case} changed between two runs");
        }
    }
}
