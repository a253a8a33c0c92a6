//! The machine type's documentation shows the workflow's diagram when asked (the macro asks),
//! and only then: `swfc gen`, the snapshot tests and big workflows get none.
#![cfg(feature = "svg")]

use swf_codegen::source::SourceFile;
use swf_codegen::{DIAGRAM_DOC_MAX_TASKS, Options, compile_all, compile_all_with};

const ORDER: &str = include_str!("../../tests/snapshots/order.sw.yaml");

fn generated(source: &SourceFile, options: Options) -> String {
    let compiled = compile_all_with(std::slice::from_ref(source), options);
    compiled[0].tokens.as_ref().expect("code").to_string()
}

#[test]
fn the_machine_type_documents_its_diagram_when_asked() {
    let source = SourceFile::new("order.sw.yaml", ORDER);
    let code = generated(
        &source,
        Options {
            diagram_docs: true,
            ..Options::default()
        },
    );
    let at = code
        .find("pub struct OrderWorkflow")
        .expect("the machine type");
    let docs = &code[..at];
    let svg = docs.rfind("<svg").expect("an inline SVG before the type");
    assert!(
        docs[svg..].contains("CheckInventory"),
        "the tasks are drawn"
    );
    assert!(docs[svg..].contains("</svg>"));

    let plain = compile_all(std::slice::from_ref(&source));
    let plain = plain[0].tokens.as_ref().unwrap().to_string();
    assert!(!plain.contains("<svg"), "not unless asked");
}

#[test]
fn a_workflow_too_big_to_read_in_one_picture_gets_none() {
    let mut yaml = String::from("id: big\nname: Big\nversion: '1'\ntasks:\n");
    let count = DIAGRAM_DOC_MAX_TASKS + 1;
    for i in 0..count {
        yaml.push_str(&format!(
            "  - name: T{i}\n    type: inject\n    data: {{}}\n"
        ));
        if i == 0 {
            yaml.push_str("    start: {kind: default}\n");
        }
        if i + 1 == count {
            yaml.push_str("    end: {kind: default}\n");
        } else {
            yaml.push_str(&format!("    transition: {{nextTask: T{}}}\n", i + 1));
        }
    }
    let source = SourceFile::new("big.sw.yaml", yaml);
    let code = generated(
        &source,
        Options {
            diagram_docs: true,
            ..Options::default()
        },
    );
    assert!(!code.contains("<svg"));
}
