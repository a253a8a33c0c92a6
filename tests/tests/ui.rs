//! Compile-fail cases: each `ui/*.rs` invokes `workflow!` on a broken workflow file, and its
//! `.stderr` shows the diagnostics with their YAML positions. Regenerate the expected output with
//! `TRYBUILD=overwrite cargo test -p swf-tests --test ui` and review the diff.

#[test]
fn compile_fail() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*.rs");
}
