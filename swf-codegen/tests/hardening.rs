//! Regressions of issue 9 (hardening): inputs on which `check` and `gen` disagreed, forms of the
//! drafts that were refused, one problem reported several times. Each test names the defect.

use swf_codegen::diagnostic::Diagnostic;
use swf_codegen::source::SourceFile;

/// The codes of `check`'s errors and warnings for `text`, in order.
fn codes(name: &str, text: &str) -> Vec<&'static str> {
    diagnostics(name, text).iter().map(|d| d.code.0).collect()
}

fn diagnostics(name: &str, text: &str) -> Vec<Diagnostic> {
    let source = SourceFile::new(name, text.to_owned());
    let (_, diags) = swf_codegen::check(&source);
    let checked = diags.into_sorted();
    // `gen` never disagrees with `check`: code exactly when there are no errors.
    let compiled = swf_codegen::compile(&source);
    let errors = checked
        .iter()
        .any(|d| d.severity == swf_codegen::diagnostic::Severity::Error);
    assert_eq!(compiled.tokens.is_some(), !errors, "{checked:#?}");
    if let Some(tokens) = compiled.tokens {
        assert!(
            !tokens.to_string().contains("compile_error"),
            "check accepted what gen cannot compile"
        );
    }
    checked
}

/// `nextTask: ""` passed `check` in every dialect, then `gen` emitted `compile_error!`.
#[test]
fn empty_transition_targets_are_refused_in_every_dialect() {
    let tasks = "id: e\nname: e\nversion: '1.0'\ntasks:\n  - name: A\n    type: inject\n    start: {kind: default}\n    data: {}\n    transition: {nextTask: \"\"}\n";
    let states = "id: e\nname: e\nversion: '1.0'\nstates:\n  - name: A\n    type: inject\n    start: {kind: default}\n    data: {}\n    transition: {nextState: ''}\n";
    let v01 = "id: e\nname: e\nversion: '1.0'\nstartsAt: A\nstates:\n  - name: A\n    type: RELAY\n    transition: {nextState: ''}\n";
    let second = "id: e\nname: e\nstarts-at: A\nstates:\n  - name: A\n    type: DELAY\n    time-delay: PT1S\n    next-state: \"\"\n";
    for (name, text) in [
        ("tasks.yaml", tasks),
        ("states.yaml", states),
        ("v01.yaml", v01),
        ("second.yaml", second),
    ] {
        let found = diagnostics(name, text);
        let codes: Vec<_> = found.iter().map(|d| d.code.0).collect();
        assert_eq!(codes, vec!["E0124"], "{name}: {found:#?}");
        assert!(found[0].message.contains("is empty"), "{name}");
    }
}
