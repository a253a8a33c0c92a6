//! `swfc` as a user runs it: exit statuses, rustc-style and JSON diagnostics, generated code.

mod common;

use std::process::Command;

fn swfc(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_swfc"))
        .args(args)
        .output()
        .expect("swfc runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn check_prints_every_problem_with_its_yaml_line_and_fails() {
    let dir = common::scratch("swfc_check");
    let file = dir.join("broken.sw.yaml");
    std::fs::write(&file, common::BROKEN).expect("write");
    let (status, stdout, stderr) = swfc(&["check", file.to_str().expect("utf-8 path")]);
    assert_eq!(status, 1, "{stdout}{stderr}");
    assert!(stdout.contains("error[E0104]"), "{stdout}");
    assert!(stdout.contains("error[E0101]"), "{stdout}");
    assert!(stdout.contains("error[E0111]"), "{stdout}");
    // The offending YAML line is shown under its position.
    assert!(stdout.contains("broken.sw.yaml:7:28"), "{stdout}");
    assert!(
        stdout.contains("transition: {nextTask: Nowhere}"),
        "{stdout}"
    );
    assert!(stderr.contains("error(s)"), "{stderr}");
}

#[test]
fn check_json_prints_one_object_per_diagnostic() {
    let dir = common::scratch("swfc_json");
    let file = dir.join("broken.sw.yaml");
    std::fs::write(&file, common::BROKEN).expect("write");
    let (status, stdout, _) = swfc(&["check", "--format", "json", file.to_str().expect("utf-8")]);
    assert_eq!(status, 1);
    let all: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    // Diagnostics, then one line naming the file's dialect.
    let (dialects, lines): (Vec<_>, Vec<_>) = all.into_iter().partition(|l| l["kind"] == "dialect");
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(dialects.len(), 1, "{stdout}");
    assert_eq!(dialects[0]["dialect"], "tasks");
    assert_eq!(dialects[0]["how"], "detected");
    let first = &lines[0];
    for key in ["file", "line", "column", "code", "severity", "message"] {
        assert!(first.get(key).is_some(), "{key} missing in {first}");
    }
    assert_eq!(first["line"], 7);
    assert_eq!(first["column"], 28);
    assert_eq!(first["code"], "E0104");
    assert_eq!(first["severity"], "error");
}

#[test]
fn check_passes_a_valid_file_and_gen_prints_its_code() {
    let dir = common::scratch("swfc_gen");
    let file = dir.join("hello.sw.yaml");
    std::fs::write(&file, common::VALID).expect("write");
    let path = file.to_str().expect("utf-8");
    let (status, stdout, stderr) = swfc(&["check", path]);
    assert_eq!(status, 0, "{stdout}{stderr}");
    assert!(stderr.contains("tasks draft (detected)"), "{stderr}");
    let (status, code, _) = swfc(&["gen", path]);
    assert_eq!(status, 0);
    assert!(code.starts_with("// @generated"), "{code}");
    assert!(code.contains("pub struct HelloWorkflow<F>"), "{code}");
    syn::parse_file(&code).expect("gen prints valid Rust");
}

#[test]
fn the_dialect_can_be_named_for_every_file() {
    let dir = common::scratch("swfc_dialect");
    let file = dir.join("hello.sw.yaml");
    std::fs::write(&file, common::VALID).expect("write");
    let path = file.to_str().expect("utf-8");
    let (status, stdout, stderr) = swfc(&["check", "--dialect", "tasks", path]);
    assert_eq!(status, 0, "{stdout}{stderr}");
    assert!(stderr.contains("tasks draft (named)"), "{stderr}");
    // Read as another dialect, the tasks-draft keys are unknown there.
    let (status, stdout, _) = swfc(&["check", "--dialect=second", path]);
    assert_eq!(status, 1, "{stdout}");
    assert!(stdout.contains("error[E0002]"), "{stdout}");
    let (status, _, stderr) = swfc(&["gen", "--dialect", "fourth", path]);
    assert_eq!(status, 2);
    assert!(stderr.contains("first, second, v0.1, tasks"), "{stderr}");
}

#[test]
fn explain_and_usage_errors() {
    let (status, stdout, _) = swfc(&["explain", "E0104"]);
    assert_eq!(status, 0);
    assert!(
        stdout.contains("transition to a task that does not exist"),
        "{stdout}"
    );
    assert_eq!(swfc(&["explain", "E9999"]).0, 2);
    assert_eq!(swfc(&["check"]).0, 2);
    assert_eq!(swfc(&["frobnicate"]).0, 2);
    assert_eq!(swfc(&["check", "/nonexistent/file.yaml"]).0, 2);
}
