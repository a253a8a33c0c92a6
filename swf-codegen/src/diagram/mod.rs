//! Diagrams of a workflow: every scope drawn from the same [`ScopeGraph`](crate::graph::ScopeGraph)
//! the validator walks, as Mermaid, Graphviz DOT or (with the `svg` feature) SVG laid out in Rust.
//!
//! A stage after `validate`, beside `emit`: it reads the IR and never changes it. The output is
//! deterministic (document order, no hash-map iteration), and every user string is escaped for
//! its format.
//!
//! What is drawn: a start and an end node for every scope; each task with its type (shape and
//! second line); transitions, conditional ones labelled with their condition and the switch
//! default labelled `default`; onError transitions (red, dashed), retries (orange loops),
//! compensation (purple, dotted); parallel branches and foreach bodies as clusters entered from
//! their task and left through its join node; events consumed and produced as event nodes.

mod dot;
mod mermaid;
mod model;
#[cfg(feature = "svg")]
mod svg;

pub use model::{Cluster, Diagram, Edge, EdgeKind, Node, NodeKind};

use crate::ir::Workflow;

/// A Mermaid flowchart (`flowchart TD`) of the workflow.
pub fn mermaid(workflow: &Workflow) -> String {
    mermaid::render(&Diagram::new(workflow))
}

/// A Graphviz DOT digraph of the workflow; nested scopes are `cluster_` subgraphs.
pub fn dot(workflow: &Workflow) -> String {
    dot::render(&Diagram::new(workflow))
}

/// A standalone SVG document of the workflow, laid out by `layout-rs` (no graphviz needed).
///
/// Fails only if the layout engine panics, which it should not; the message says so.
#[cfg(feature = "svg")]
pub fn svg(workflow: &Workflow) -> Result<String, String> {
    let diagram = Diagram::new(workflow);
    // layout-rs asserts on its invariants; a failed layout must not take a compiler down.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| svg::render(&diagram)))
        .map_err(|_| "the SVG layout failed; the Mermaid and DOT formats still work".to_owned())
}

/// The SVG as a rustdoc section: Markdown that renders the diagram inline on docs.rs, without
/// scripts (an HTML `<div>` holding the `<svg>`, no blank line inside, ids prefixed with the
/// workflow id so that several diagrams can share a page). Put it in the generated type's doc
/// after a blank line: `#[doc = ""] #[doc = #section]`.
#[cfg(feature = "svg")]
pub fn svg_for_rustdoc(workflow: &Workflow) -> Result<String, String> {
    let prefix: String = workflow
        .id
        .value
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    svg(workflow).map(|svg| svg::for_rustdoc(&svg, &format!("swf-{prefix}-")))
}
