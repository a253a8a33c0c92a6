//! Mermaid flowchart text.

use super::model::{Cluster, Diagram, EdgeKind, Node, NodeKind};
use std::fmt::Write;

pub(super) fn render(diagram: &Diagram) -> String {
    let mut out = String::new();
    // The title as a YAML double-quoted string (JSON's escaping is valid there).
    let title = serde_json::Value::String(diagram.title.clone());
    let _ = writeln!(out, "---\ntitle: {title}\n---\nflowchart TD");
    cluster_body(&mut out, &diagram.root, 1);
    for node in &diagram.events {
        node_line(&mut out, node, 1);
    }
    for edge in &diagram.edges {
        let arrow = match edge.kind {
            EdgeKind::Next | EdgeKind::Condition | EdgeKind::Default => "-->",
            EdgeKind::Nested => "==>",
            EdgeKind::Error
            | EdgeKind::Retry
            | EdgeKind::Compensation
            | EdgeKind::Produces
            | EdgeKind::Consumes => "-.->",
        };
        match &edge.label {
            Some(label) => {
                let _ = writeln!(
                    out,
                    "    {} {arrow}|\"{}\"| {}",
                    edge.from,
                    escape(label),
                    edge.to
                );
            }
            None => {
                let _ = writeln!(out, "    {} {arrow} {}", edge.from, edge.to);
            }
        }
    }
    for (class, style) in CLASSES {
        let _ = writeln!(out, "    classDef {class} {style}");
    }
    // Edge colours by kind, referring to edges by their position (the order above).
    for kind in EdgeKind::ALL {
        let Some(style) = link_style(kind) else {
            continue;
        };
        let indexes: Vec<String> = diagram
            .edges
            .iter()
            .enumerate()
            .filter(|(_, edge)| edge.kind == kind)
            .map(|(index, _)| index.to_string())
            .collect();
        if !indexes.is_empty() {
            let _ = writeln!(out, "    linkStyle {} {style}", indexes.join(","));
        }
    }
    out
}

const CLASSES: [(&str, &str); 7] = [
    ("startNode", "fill:#1f2937,stroke:#1f2937,color:#ffffff"),
    ("endNode", "fill:#1f2937,stroke:#1f2937,color:#ffffff"),
    ("joinNode", "fill:#e5e7eb,stroke:#6b7280"),
    ("eventNode", "fill:#fef3c7,stroke:#b45309"),
    ("compensationNode", "fill:#ede9fe,stroke:#7c3aed"),
    (
        "missingNode",
        "fill:#fee2e2,stroke:#b91c1c,stroke-dasharray:4 3",
    ),
    ("taskNode", "fill:#ffffff,stroke:#374151"),
];

fn link_style(kind: EdgeKind) -> Option<&'static str> {
    match kind {
        EdgeKind::Error => Some("stroke:#dc2626,color:#dc2626"),
        EdgeKind::Retry => Some("stroke:#d97706,color:#d97706"),
        EdgeKind::Compensation => Some("stroke:#7c3aed,color:#7c3aed"),
        EdgeKind::Produces | EdgeKind::Consumes => Some("stroke:#b45309,color:#b45309"),
        _ => None,
    }
}

fn cluster_body(out: &mut String, cluster: &Cluster, depth: usize) {
    for node in &cluster.nodes {
        node_line(out, node, depth);
    }
    let indent = "    ".repeat(depth);
    for nested in &cluster.clusters {
        let _ = writeln!(
            out,
            "{indent}subgraph {}[\"{}\"]\n{indent}    direction TB",
            nested.id,
            escape(&nested.label)
        );
        cluster_body(out, nested, depth + 1);
        let _ = writeln!(out, "{indent}end");
    }
}

fn node_line(out: &mut String, node: &Node, depth: usize) {
    let text = node
        .lines
        .iter()
        .map(|line| escape(line))
        .collect::<Vec<_>>()
        .join("<br/>");
    let (open, close, class) = match node.kind {
        NodeKind::Start => ("((", "))", "startNode"),
        NodeKind::End => ("(((", ")))", "endNode"),
        NodeKind::Join => ("[\\", "/]", "joinNode"),
        NodeKind::Event => (">", "]", "eventNode"),
        NodeKind::Missing => ("[", "]", "missingNode"),
        NodeKind::Task {
            type_name,
            compensation,
        } => {
            let class = if compensation {
                "compensationNode"
            } else {
                "taskNode"
            };
            let (open, close) = match type_name {
                "switch" => ("{", "}"),
                "delay" => ("{{", "}}"),
                "event" | "callback" => ("([", "])"),
                "subflow" => ("[[", "]]"),
                "parallel" | "foreach" => ("[/", "\\]"),
                "inject" => ("[/", "/]"),
                _ => ("[", "]"),
            };
            (open, close, class)
        }
    };
    let indent = "    ".repeat(depth);
    let _ = writeln!(out, "{indent}{}{open}\"{text}\"{close}:::{class}", node.id);
}

/// Text inside a quoted Mermaid label: the characters Mermaid's parser or its HTML labels read
/// specially become entity codes (`#quot;`, `#35;`), which Mermaid shows as the character.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '&' => out.push_str("#amp;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '#' | '|' | '[' | ']' | '{' | '}' | '(' | ')' | ';' | '`' | '\\' | '%' => {
                let _ = write!(out, "#{};", u32::from(c));
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escape_leaves_no_character_mermaid_reads() {
        let escaped = escape("a \"b\" #c [d] {e} (f) |g| <h> & `i` ; \\ %%");
        for c in [
            '"', '[', ']', '{', '}', '(', ')', '|', '<', '>', '`', '\\', '%',
        ] {
            assert!(!escaped.contains(c), "{c} left in {escaped}");
        }
        assert_eq!(escape("#"), "#35;");
        assert_eq!(escape("x\"y"), "x#quot;y");
        assert_eq!(escape("ünïcödé"), "ünïcödé");
    }
}
