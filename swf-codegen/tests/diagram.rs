//! Diagrams: snapshots of the Mermaid and DOT text for representative workflows, and the SVG
//! parsed as XML with every task's name found in its text. After an intended change of the
//! drawing, run `EXPECTORATE=overwrite cargo test -p swf-codegen --test diagram` and review the
//! diff.

use swf_codegen::diagnostic::Diagnostics;
use swf_codegen::ir::Workflow;
use swf_codegen::source::SourceFile;

/// Snapshot name and workflow file (relative to this crate): a retry, a delay, an event, a
/// parallel, a foreach and a produced event; compensation; event switches and callbacks; nested
/// scopes; data switches; the first draft; action retries; v0.1 events; hostile names.
const CASES: &[(&str, &str)] = &[
    ("order", "../tests/workflows/durable/order.sw.yaml"),
    ("saga", "../tests/snapshots/saga.sw.yaml"),
    ("approval", "../tests/snapshots/approval.sw.yaml"),
    ("nested", "../tests/snapshots/nested.sw.yaml"),
    ("switches", "../tests/snapshots/switches.sw.yaml"),
    ("kebab_first", "../tests/snapshots/kebab_first.sw.yaml"),
    (
        "action_retries",
        "../tests/workflows/earlier/action_retries.sw.yaml",
    ),
    ("v01_events", "../tests/snapshots/v01_events.sw.yaml"),
    ("hostile", "tests/diagrams/hostile.sw.yaml"),
];

/// The workflow as `swfc graph` reads it: parsed and checked on its own.
fn workflow(path: &str) -> Workflow {
    let text = std::fs::read_to_string(path).expect("workflow file is readable");
    let source = SourceFile::new(path, text);
    let mut diags = Diagnostics::new(path);
    let workflow = swf_codegen::parse::parse(&source, &mut diags).expect("the workflow parses");
    swf_codegen::validate::validate(&workflow, &mut diags);
    workflow
}

#[test]
fn mermaid_and_dot_match_the_snapshots() {
    for (name, path) in CASES {
        let workflow = workflow(path);
        expectorate::assert_contents(
            format!("tests/diagrams/{name}.mmd"),
            &swf_codegen::diagram::mermaid(&workflow),
        );
        expectorate::assert_contents(
            format!("tests/diagrams/{name}.dot"),
            &swf_codegen::diagram::dot(&workflow),
        );
    }
}

#[test]
fn drawing_is_deterministic() {
    for (_, path) in CASES {
        let workflow = workflow(path);
        let first = swf_codegen::diagram::dot(&workflow);
        for _ in 0..5 {
            assert_eq!(swf_codegen::diagram::dot(&workflow), first);
        }
        #[cfg(feature = "svg")]
        {
            let svg = swf_codegen::diagram::svg(&workflow).expect("svg");
            assert!(
                swf_codegen::diagram::svg(&workflow).expect("svg") == svg,
                "{path}"
            );
        }
    }
}

#[test]
fn mermaid_labels_hold_no_character_mermaid_reads() {
    let text = swf_codegen::diagram::mermaid(&workflow("tests/diagrams/hostile.sw.yaml"));
    for line in text.lines().skip(4) {
        // Inside the quotes of a label: no tag but our line breaks, no entity.
        let mut parts = line.split('"');
        let _outside = parts.next();
        while let Some(inside) = parts.next() {
            let inside = inside.replace("<br/>", "");
            for taken in ["<W", "<t", "<f"] {
                assert!(!inside.contains(taken), "{taken} in {inside:?} ({line})");
            }
            let _outside = parts.next();
        }
        assert_eq!(
            line.matches('"').count() % 2,
            0,
            "unbalanced quotes: {line}"
        );
    }
}

#[test]
fn dot_strings_are_closed_on_every_line() {
    let text = swf_codegen::diagram::dot(&workflow("tests/diagrams/hostile.sw.yaml"));
    for line in text.lines() {
        // Drop escaped characters, then the quotes left must pair up.
        let bare = line.replace("\\\\", "").replace("\\\"", "");
        assert_eq!(
            bare.matches('"').count() % 2,
            0,
            "unbalanced quotes: {line}"
        );
    }
}

#[test]
fn every_workflow_of_the_tests_is_drawn_in_every_format() {
    let mut files = Vec::new();
    for dir in ["../tests/snapshots", "../tests/workflows"] {
        collect(std::path::Path::new(dir), &mut files);
    }
    assert!(files.len() > 50, "found {} workflow files", files.len());
    for file in files {
        let path = file.to_str().expect("utf-8 path");
        let text = std::fs::read_to_string(path).expect("readable");
        let source = SourceFile::new(path, text);
        let mut diags = Diagnostics::new(path);
        let Some(workflow) = swf_codegen::parse::parse(&source, &mut diags) else {
            continue;
        };
        assert!(swf_codegen::diagram::mermaid(&workflow).starts_with("---\n"));
        assert!(swf_codegen::diagram::dot(&workflow).ends_with("}\n"));
        #[cfg(feature = "svg")]
        {
            let svg = swf_codegen::diagram::svg(&workflow).expect("layout");
            roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{path}: {e}"));
        }
    }
}

fn collect(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("directory")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out);
        } else if path.to_string_lossy().ends_with(".sw.yaml") {
            out.push(path);
        }
    }
}

#[cfg(feature = "svg")]
mod svg {
    use super::*;
    use swf_codegen::ir::Scope;

    /// Every task name of every scope, in document order.
    fn task_names(scope: &Scope, out: &mut Vec<String>) {
        for task in &scope.tasks {
            out.push(task.name.value.clone());
            for nested in task.nested_scopes() {
                task_names(nested, out);
            }
        }
    }

    /// The text of every `<text>` element, one entry a line of text (a `<tspan>`).
    fn texts(document: &roxmltree::Document) -> Vec<String> {
        let mut out = Vec::new();
        for node in document.descendants() {
            if node.has_tag_name("tspan") || node.has_tag_name("textPath") {
                out.push(node.text().unwrap_or("").to_owned());
            }
        }
        out
    }

    #[test]
    fn the_svg_parses_and_shows_every_task_of_every_scope() {
        for (name, path) in CASES {
            let workflow = workflow(path);
            let svg = swf_codegen::diagram::svg(&workflow).expect("layout");
            let document = roxmltree::Document::parse(&svg)
                .unwrap_or_else(|error| panic!("{name}: the SVG is not XML: {error}"));
            let root = document.root_element();
            assert_eq!(root.tag_name().name(), "svg", "{name}");
            let title = root
                .children()
                .find(|n| n.has_tag_name("title"))
                .and_then(|n| n.text());
            assert_eq!(title, Some(workflow.name.value.as_str()), "{name}");
            let texts = texts(&document);
            let mut names = Vec::new();
            task_names(&workflow.scope, &mut names);
            assert!(!names.is_empty(), "{name}");
            for task in names {
                assert!(
                    texts.contains(&task),
                    "{name}: task {task:?} not drawn; texts: {texts:?}"
                );
            }
            for event in &workflow.events {
                let mentioned = swf_codegen::diagram::mermaid(&workflow)
                    .contains(&format!("{}<br/>", event.name.value));
                if mentioned {
                    assert!(texts.contains(&event.name.value), "{name}: event");
                }
            }
            // Start and end nodes of the workflow's scope.
            assert!(texts.iter().any(|t| t == "start") && texts.iter().any(|t| t == "end"));
        }
    }

    #[test]
    fn hostile_text_comes_out_as_written() {
        let workflow = workflow("tests/diagrams/hostile.sw.yaml");
        let svg = swf_codegen::diagram::svg(&workflow).expect("layout");
        let document = roxmltree::Document::parse(&svg).expect("XML");
        let texts = texts(&document);
        for expected in [
            "Start \"here\" #1",
            "<Weird> & [task]",
            "graph {x}",
            "$.a == x\"y]|z",
            "Ev \"one\" <1>",
        ] {
            assert!(texts.iter().any(|t| t == expected), "{expected}: {texts:?}");
        }
    }

    #[test]
    fn the_rustdoc_section_is_one_html_block_with_prefixed_ids() {
        let workflow = workflow("../tests/workflows/durable/order.sw.yaml");
        let section = swf_codegen::diagram::svg_for_rustdoc(&workflow).expect("layout");
        assert!(section.starts_with("<div"), "{section}");
        assert!(!section.contains("<?xml"));
        assert!(
            !section.lines().any(|line| line.trim().is_empty()),
            "a blank line would end the HTML block in Markdown"
        );
        let document = roxmltree::Document::parse(&section).expect("XML");
        for node in document.descendants() {
            if let Some(id) = node.attribute("id") {
                assert!(id.starts_with("swf-durable-order-"), "{id}");
            }
            if let Some(href) = node.attribute("href") {
                assert!(href.starts_with("#swf-durable-order-"), "{href}");
            }
        }
        // The arrow paths that labels follow are still found under their new ids.
        assert!(section.contains("href=\"#swf-durable-order-arrow0\""));
        assert!(section.contains("id=\"swf-durable-order-arrow0\""));
    }
}
