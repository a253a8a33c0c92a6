//! Reading data schemas next to a workflow file.

use crate::diagnostic::{Code, Diagnostic};
use crate::source::SourceFile;

const WORKFLOW: &str = "\
id: orders
name: Orders
dataInputSchema: REFERENCE
tasks:
  - name: Check
    type: inject
    start: {kind: default}
    dataOutputSchema: schemas/checked.json
    end: {kind: default}
";

/// Compiles the workflow with its input schema named `reference`, in a directory holding
/// `files` (name, text).
fn compiled(reference: &str, files: &[(&str, &str)]) -> (tempfile::TempDir, crate::Compilation) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    std::fs::create_dir_all(dir.path().join("schemas")).expect("a schemas directory");
    std::fs::write(
        dir.path().join("schemas/checked.json"),
        "{\"type\": \"object\"}\n",
    )
    .expect("writes the task's schema");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("writes a schema");
    }
    let path = dir.path().join("orders.sw.yaml");
    let source = SourceFile::new(
        "flows/orders.sw.yaml",
        WORKFLOW.replace("REFERENCE", reference),
    )
    .with_location(path);
    let compilation = crate::compile(&source);
    (dir, compilation)
}

/// The errors, but for the one a build without the `schemas` feature gives for the task's
/// schema (which is fine): the tests that use it hold with the feature and without.
fn errors(compilation: &crate::Compilation) -> Vec<&Diagnostic> {
    compilation
        .diagnostics
        .iter()
        .filter(|d| d.severity == crate::diagnostic::Severity::Error)
        .filter(|d| d.code != Code::SCHEMAS_FEATURE || d.span.line != 8)
        .collect()
}

#[cfg(feature = "schemas")]
#[test]
fn schemas_are_read_next_to_the_workflow_and_embedded() {
    let schema = "{\"type\": \"object\", \"required\": [\"order\"]}";
    let (dir, compilation) = compiled("schemas/order.json", &[("schemas/order.json", schema)]);
    assert!(
        errors(&compilation).is_empty(),
        "{:?}",
        compilation.diagnostics
    );
    let workflow = compilation.workflow.as_ref().expect("parsed");
    let documents = super::documents(workflow);
    let files: Vec<&str> = documents.iter().map(|d| d.file.as_str()).collect();
    assert_eq!(
        files,
        ["flows/schemas/order.json", "flows/schemas/checked.json"]
    );
    assert_eq!(
        super::watched(workflow),
        [
            dir.path().join("schemas/order.json"),
            dir.path().join("schemas/checked.json")
        ]
    );
    let code = compilation.tokens.expect("generated").to_string();
    assert!(
        code.contains("DataSchema :: new (\"flows/schemas/order.json\""),
        "{code}"
    );
    assert!(code.contains("checked_input"), "{code}");
    assert!(code.contains("checked_exit"), "{code}");
    assert!(code.contains("SCHEMAS"), "{code}");
}

#[cfg(feature = "schemas")]
#[test]
fn file_uris_name_files_too() {
    let (_dir, compilation) = compiled(
        "file:schemas/order%20v2.json",
        &[("schemas/order v2.json", "{}")],
    );
    assert!(
        errors(&compilation).is_empty(),
        "{:?}",
        compilation.diagnostics
    );
}

#[test]
fn a_missing_schema_is_reported_at_its_reference() {
    let (_dir, compilation) = compiled("schemas/missing.json", &[]);
    let errors = errors(&compilation);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].code, Code::SCHEMA_UNREADABLE);
    assert_eq!((errors[0].span.line, errors[0].span.col), (3, 18));
    assert!(
        errors[0]
            .message
            .starts_with("cannot read the schema `flows/schemas/missing.json`"),
        "{}",
        errors[0].message
    );
    assert!(compilation.tokens.is_none());
}

#[test]
fn a_remote_schema_is_refused_with_what_to_do() {
    let (_dir, compilation) = compiled("https://example.com/order.json", &[]);
    let errors = errors(&compilation);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].code, Code::SCHEMA_UNREADABLE);
    assert!(
        errors[0].message.contains("never fetched"),
        "{}",
        errors[0].message
    );
    assert!(
        errors[0]
            .help
            .as_deref()
            .is_some_and(|h| h.contains("vendor")),
        "{:?}",
        errors[0].help
    );
}

#[test]
fn a_schema_that_is_not_json_is_refused_with_its_position() {
    let (_dir, compilation) = compiled(
        "schemas/order.json",
        &[("schemas/order.json", "{\"type\": [}\n")],
    );
    let errors = errors(&compilation);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].code, Code::BAD_SCHEMA);
    assert!(
        errors[0].message.contains("flows/schemas/order.json:1:"),
        "{}",
        errors[0].message
    );
}

#[test]
fn a_schema_must_be_an_object_or_a_boolean() {
    let (_dir, compilation) = compiled("schemas/order.json", &[("schemas/order.json", "[1, 2]\n")]);
    let errors = errors(&compilation);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].code, Code::BAD_SCHEMA);
    assert!(
        errors[0].message.contains("is a list"),
        "{}",
        errors[0].message
    );
}

#[cfg(feature = "schemas")]
#[test]
fn a_schema_that_does_not_compile_is_refused_at_the_place_that_is_wrong() {
    let schema = "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"total\": {\"type\": \"numbr\"}\n  }\n}\n";
    let (_dir, compilation) = compiled("schemas/order.json", &[("schemas/order.json", schema)]);
    let errors = errors(&compilation);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].code, Code::BAD_SCHEMA);
    assert!(
        errors[0]
            .message
            .contains("flows/schemas/order.json:4:23 (`/properties/total/type`)"),
        "{}",
        errors[0].message
    );
}

#[cfg(not(feature = "schemas"))]
#[test]
fn without_the_feature_a_schema_is_an_error_that_says_which_feature() {
    let (_dir, compilation) = compiled("schemas/order.json", &[("schemas/order.json", "{}")]);
    let errors = errors(&compilation);
    assert!(!errors.is_empty());
    assert!(
        errors.iter().all(|e| e.code == Code::SCHEMAS_FEATURE),
        "{errors:?}"
    );
    assert!(
        errors[0]
            .help
            .as_deref()
            .is_some_and(|h| h.contains("`schemas` feature")),
        "{:?}",
        errors[0].help
    );
}
