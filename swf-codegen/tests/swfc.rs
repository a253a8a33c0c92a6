//! `swfc` as a user runs it: exit statuses, rustc-style and JSON diagnostics, generated code.

mod common;

use std::process::Command;

fn swfc(args: &[&str]) -> (i32, String, String) {
    swfc_in(std::path::Path::new("."), args)
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
    for key in [
        "file",
        "line",
        "column",
        "end_line",
        "end_column",
        "code",
        "severity",
        "message",
    ] {
        assert!(first.get(key).is_some(), "{key} missing in {first}");
    }
    assert_eq!(first["line"], 7);
    assert_eq!(first["column"], 28);
    assert_eq!(first["code"], "E0104");
    assert_eq!(first["severity"], "error");
    // `Nowhere` in `transition: {nextTask: Nowhere}` ends before the closing brace.
    assert_eq!(first["end_line"], 7);
    assert_eq!(first["end_column"], 35);
    // `PT1Q` in `timeDelay: PT1Q`.
    let delay = lines
        .iter()
        .find(|l| l["line"] == 10)
        .expect("the duration's diagnostic");
    assert_eq!(
        (&delay["column"], &delay["end_column"]),
        (&serde_json::json!(16), &serde_json::json!(20)),
        "{delay}"
    );
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

#[test]
fn help_and_version_for_the_tool_and_every_command() {
    let (status, stdout, _) = swfc(&["--help"]);
    assert_eq!(status, 0);
    for word in [
        "check",
        "gen",
        "graph",
        "explain",
        "completions",
        "Exit status",
    ] {
        assert!(stdout.contains(word), "{word} missing in {stdout}");
    }
    for command in ["check", "gen", "graph", "explain", "completions"] {
        let (status, stdout, stderr) = swfc(&[command, "--help"]);
        assert_eq!(status, 0, "{command}: {stderr}");
        assert!(stdout.contains("Usage: swfc"), "{command}: {stdout}");
        let (status, stdout, _) = swfc(&[command, "--version"]);
        assert_eq!(status, 0, "{command}");
        assert!(stdout.contains(env!("CARGO_PKG_VERSION")), "{stdout}");
    }
    let (status, stdout, _) = swfc(&["--version"]);
    assert_eq!(status, 0);
    assert_eq!(stdout.trim(), format!("swfc {}", env!("CARGO_PKG_VERSION")));
    let (_, stdout, _) = swfc(&["check", "--help"]);
    assert!(stdout.contains(".sw.yaml, .sw.yml or .sw.json"), "{stdout}");
}

#[test]
fn exit_codes_are_0_ok_1_diagnostics_2_usage_or_io() {
    let dir = common::scratch("swfc_exit");
    let valid = dir.join("valid.sw.yaml");
    let broken = dir.join("broken.sw.yaml");
    std::fs::write(&valid, common::VALID).expect("write");
    std::fs::write(&broken, common::BROKEN).expect("write");
    let valid = valid.to_str().expect("utf-8");
    let broken = broken.to_str().expect("utf-8");
    assert_eq!(swfc(&["check", valid]).0, 0);
    assert_eq!(swfc(&["check", broken]).0, 1);
    assert_eq!(swfc(&["gen", broken]).0, 1);
    assert_eq!(swfc(&["graph", broken]).0, 1);
    assert_eq!(swfc(&[]).0, 2);
    assert_eq!(swfc(&["check", "--format", "xml", valid]).0, 2);
    assert_eq!(swfc(&["graph", "--format", "png", valid]).0, 2);
    assert_eq!(swfc(&["check", valid, "--bogus"]).0, 2);
    assert_eq!(swfc(&["graph", "/nonexistent/file.sw.yaml"]).0, 2);
    assert_eq!(
        swfc(&["check", dir.join("missing").to_str().expect("utf-8")]).0,
        2
    );
}

#[test]
fn check_of_directories_recurses_and_prints_a_summary() {
    let dir = common::scratch("swfc_dirs");
    std::fs::create_dir_all(dir.join("a/deeper")).expect("mkdir");
    std::fs::create_dir_all(dir.join(".hidden")).expect("mkdir");
    std::fs::write(dir.join("a/one.sw.yaml"), common::VALID).expect("write");
    let second = common::VALID.replace("id: hello", "id: hello-two");
    std::fs::write(dir.join("a/deeper/two.sw.yml"), &second).expect("write");
    std::fs::write(dir.join("a/deeper/three.sw.json"), VALID_JSON).expect("write");
    // Not workflow files by their names, or hidden: skipped.
    std::fs::write(dir.join("a/notes.yaml"), "not: a workflow").expect("write");
    std::fs::write(dir.join(".hidden/x.sw.yaml"), common::BROKEN).expect("write");
    let (status, stdout, stderr) = swfc(&["check", dir.to_str().expect("utf-8")]);
    assert_eq!(status, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("3 file(s) checked: 0 error(s), 0 warning(s)"),
        "{stderr}"
    );
    // In name order: a/deeper/three, a/deeper/two, a/one.
    let three = stderr.find("three.sw.json").expect("three");
    let two = stderr.find("two.sw.yml").expect("two");
    let one = stderr.find("one.sw.yaml").expect("one");
    assert!(three < two && two < one, "{stderr}");

    // A broken file named next to the directory: its errors count in the summary.
    let broken = dir.join("broken.yaml");
    std::fs::write(&broken, common::BROKEN).expect("write");
    let (status, _, stderr) = swfc(&[
        "check",
        dir.join("a").to_str().expect("utf-8"),
        broken.to_str().expect("utf-8"),
    ]);
    assert_eq!(status, 1);
    // The broken file's three errors, and its id `hello` that `a/one.sw.yaml` has too.
    assert!(stderr.contains("4 file(s) checked: 4 error(s)"), "{stderr}");

    // JSON keeps stdout to JSON lines; the summary is on stderr.
    let (_, stdout, stderr) = swfc(&["check", "--format=json", dir.to_str().expect("utf-8")]);
    assert!(
        stdout
            .lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
    );
    assert!(stderr.contains("file(s) checked"), "{stderr}");

    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let (status, _, stderr) = swfc(&["check", empty.to_str().expect("utf-8")]);
    assert_eq!(status, 2);
    assert!(stderr.contains("no workflow file"), "{stderr}");
}

/// The valid workflow as JSON, with its own id.
const VALID_JSON: &str = r#"{"id": "hello-three", "name": "Hello", "version": "1.0",
 "tasks": [{"name": "Greet", "type": "inject", "start": {"kind": "default"},
            "data": {"greeting": "hello"}, "end": {"kind": "default"}}]}"#;

#[test]
fn graph_prints_every_format() {
    let dir = common::scratch("swfc_graph");
    let file = dir.join("hello.sw.yaml");
    std::fs::write(&file, common::VALID).expect("write");
    let path = file.to_str().expect("utf-8");
    let (status, mermaid, stderr) = swfc(&["graph", path]);
    assert_eq!(status, 0, "{stderr}");
    assert!(mermaid.contains("flowchart TD"), "{mermaid}");
    assert!(mermaid.contains("Greet<br/>inject"), "{mermaid}");
    let (status, dot, _) = swfc(&["graph", "--format", "dot", path]);
    assert_eq!(status, 0);
    assert!(dot.starts_with("digraph \"Hello\" {"), "{dot}");
    let (status, svg, _) = swfc(&["graph", "--format=svg", path]);
    assert_eq!(status, 0);
    assert!(
        svg.contains("<svg ") && svg.contains(">Greet</tspan>"),
        "{svg}"
    );

    // A broken file is still drawn (the missing target in red); the status says it has errors.
    let broken = dir.join("broken.sw.yaml");
    std::fs::write(&broken, common::BROKEN).expect("write");
    let (status, mermaid, stderr) = swfc(&["graph", broken.to_str().expect("utf-8")]);
    assert_eq!(status, 1);
    assert!(mermaid.contains("Nowhere<br/>(no such task)"), "{mermaid}");
    assert!(stderr.contains("error[E0104]"), "{stderr}");
}

#[test]
fn completions_for_bash_zsh_and_fish() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef swfc"),
        ("fish", "complete -c swfc"),
    ] {
        let (status, stdout, stderr) = swfc(&["completions", shell]);
        assert_eq!(status, 0, "{shell}: {stderr}");
        assert!(stdout.contains(marker), "{shell}: {stdout}");
        assert!(stdout.contains("graph"), "{shell}");
    }
    assert_eq!(swfc(&["completions", "tcsh"]).0, 2);
}

/// `swfc` run in `dir`.
fn swfc_in(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_swfc"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("swfc runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `cd workflows && swfc check . order.sw.yaml` once read the file twice and reported its id
/// as the id of another file (E0127), with status 1.
#[test]
fn a_file_named_two_ways_is_read_once() {
    let dir = common::scratch("swfc_two_ways");
    std::fs::write(dir.join("hello.sw.yaml"), common::VALID).expect("write");
    std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
    let absolute = dir.join("hello.sw.yaml");
    let absolute = absolute.to_str().expect("utf-8");
    for args in [
        &["check", ".", "hello.sw.yaml"][..],
        &["check", "hello.sw.yaml", "./hello.sw.yaml", absolute],
        &["check", "hello.sw.yaml", "sub/../hello.sw.yaml", "sub/.."],
    ] {
        let (status, stdout, stderr) = swfc_in(&dir, args);
        assert_eq!(status, 0, "{args:?}: {stdout}{stderr}");
        assert!(
            stderr.contains("1 file(s) checked: 0 error(s), 0 warning(s)"),
            "{args:?}: {stderr}"
        );
    }
    // Shown as first named.
    let (_, _, stderr) = swfc_in(&dir, &["check", "hello.sw.yaml", "."]);
    assert!(stderr.starts_with("hello.sw.yaml: "), "{stderr}");
    let (status, code, stderr) = swfc_in(&dir, &["gen", ".", "hello.sw.yaml"]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(code.matches("pub struct HelloWorkflow<F>").count(), 1);
}

/// `swfc ... 2>&1 | head` when the reader is gone: the messages for stderr are lost, not the
/// status (a panic gave 101).
#[test]
fn a_closed_stderr_is_not_a_failure() {
    let dir = common::scratch("swfc_closed_stderr");
    std::fs::write(dir.join("valid.sw.yaml"), common::VALID).expect("write");
    std::fs::write(dir.join("broken.sw.yaml"), common::BROKEN).expect("write");
    for (args, expected) in [
        (&["check", "valid.sw.yaml"][..], 0),
        (&["check", "broken.sw.yaml"], 1),
        (&["gen", "broken.sw.yaml"], 1),
        (&["graph", "broken.sw.yaml"], 1),
        (&["check", "missing.sw.yaml"], 2),
        (&["explain", "E9999"], 2),
        (&["check", "--format", "xml", "valid.sw.yaml"], 2),
    ] {
        // A pipe whose reading end is closed: every write to it fails with a broken pipe.
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let status = Command::new(env!("CARGO_BIN_EXE_swfc"))
            .current_dir(&dir)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(writer)
            .status()
            .expect("swfc runs");
        assert_eq!(status.code(), Some(expected), "{args:?}");
    }
}

/// A workflow in a directory whose name is not UTF-8 reads its data schema next to it: the
/// directory was once taken from the file's shown (lossy) name.
#[cfg(unix)]
#[test]
fn a_schema_next_to_a_workflow_in_a_non_utf8_directory_is_found() {
    use std::os::unix::ffi::OsStrExt;
    let dir = common::scratch("swfc_non_utf8");
    let flows = dir.join(std::ffi::OsStr::from_bytes(b"flows-\xff"));
    std::fs::create_dir_all(&flows).expect("mkdir");
    std::fs::write(flows.join("in.json"), "{\"type\": \"object\"}\n").expect("write");
    let workflow = common::VALID.replace(
        "version: '1.0'\n",
        "version: '1.0'\ndataInputSchema: in.json\n",
    );
    std::fs::write(flows.join("hello.sw.yaml"), workflow).expect("write");
    let output = Command::new(env!("CARGO_BIN_EXE_swfc"))
        .arg("check")
        .arg(&flows)
        .output()
        .expect("swfc runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stderr.contains("1 file(s) checked: 0 error(s)"), "{stderr}");
}
