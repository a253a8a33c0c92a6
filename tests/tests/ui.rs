//! Compile-fail cases: each `ui/*.rs` invokes `workflow!` on a broken workflow file, and its
//! `.stderr` shows the diagnostics with their YAML positions. Regenerate the expected output with
//! `TRYBUILD=overwrite cargo test -p swf-tests --test ui` and review the diff.

use std::path::Path;

#[test]
fn compile_fail() {
    copy_workflows_into_the_trybuild_project();
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*.rs");
}

/// trybuild builds the cases in its own crate, `<target dir>/tests/trybuild/swf-tests`, and the
/// macro reads workflow files relative to the crate it expands in. The cases name their files
/// `ui/<name>.sw.yaml`, so this puts them there: the cases and their `.stderr` are the same
/// whatever the target directory (`CARGO_TARGET_DIR` included).
fn copy_workflows_into_the_trybuild_project() {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory holds tmp/");
    let into = target.join("tests/trybuild/swf-tests/ui");
    std::fs::create_dir_all(&into).expect("the trybuild project's ui directory");
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui");
    for entry in std::fs::read_dir(&from).expect("tests/ui") {
        let path = entry.expect("an entry of tests/ui").path();
        let is_workflow = path
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.ends_with(".yaml") || name.ends_with(".json"));
        if is_workflow {
            let name = path.file_name().expect("a file name");
            std::fs::copy(&path, into.join(name)).expect("a workflow copied");
        }
    }
}
