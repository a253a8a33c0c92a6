//! Graphviz DOT text: nested scopes are `cluster_` subgraphs.

use super::model::{Cluster, Diagram, EdgeKind, Node, NodeKind};
use std::fmt::Write;

pub(super) fn render(diagram: &Diagram) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", quote(&diagram.title));
    let _ = writeln!(
        out,
        "    graph [label=\"{}\", labelloc=t, fontname=\"Helvetica\", rankdir=TB];",
        quote(&diagram.title)
    );
    out.push_str(
        "    node [fontname=\"Helvetica\", fontsize=11, shape=box, style=\"filled\", fillcolor=\"#ffffff\"];\n",
    );
    out.push_str("    edge [fontname=\"Helvetica\", fontsize=10];\n");
    cluster_body(&mut out, &diagram.root, 1);
    for node in &diagram.events {
        node_line(&mut out, node, 1);
    }
    for edge in &diagram.edges {
        let mut attrs: Vec<String> = Vec::new();
        if let Some(label) = &edge.label {
            attrs.push(format!("label=\"{}\"", quote(label)));
        }
        let style = match edge.kind {
            EdgeKind::Next | EdgeKind::Condition => None,
            EdgeKind::Default => Some("style=bold"),
            EdgeKind::Nested => Some("penwidth=2"),
            EdgeKind::Error => Some("color=\"#dc2626\", fontcolor=\"#dc2626\", style=dashed"),
            EdgeKind::Retry => Some("color=\"#d97706\", fontcolor=\"#d97706\", style=dashed"),
            EdgeKind::Compensation => {
                Some("color=\"#7c3aed\", fontcolor=\"#7c3aed\", style=dotted")
            }
            EdgeKind::Produces | EdgeKind::Consumes => Some("color=\"#b45309\", style=dotted"),
        };
        attrs.extend(style.map(str::to_owned));
        let attrs = if attrs.is_empty() {
            String::new()
        } else {
            format!(" [{}]", attrs.join(", "))
        };
        let _ = writeln!(out, "    \"{}\" -> \"{}\"{attrs};", edge.from, edge.to);
    }
    out.push_str("}\n");
    out
}

fn cluster_body(out: &mut String, cluster: &Cluster, depth: usize) {
    for node in &cluster.nodes {
        node_line(out, node, depth);
    }
    let indent = "    ".repeat(depth);
    for nested in &cluster.clusters {
        let _ = writeln!(
            out,
            "{indent}subgraph \"cluster_{}\" {{\n{indent}    label=\"{}\";\n{indent}    style=\"rounded,dashed\";\n{indent}    color=\"#6b7280\";",
            nested.id,
            quote(&nested.label)
        );
        cluster_body(out, nested, depth + 1);
        let _ = writeln!(out, "{indent}}}");
    }
}

fn node_line(out: &mut String, node: &Node, depth: usize) {
    let label = node
        .lines
        .iter()
        .map(|line| quote(line))
        .collect::<Vec<_>>()
        .join("\\n");
    let attrs = match node.kind {
        NodeKind::Start => {
            "shape=circle, fillcolor=\"#1f2937\", fontcolor=\"#ffffff\", width=0.3".to_owned()
        }
        NodeKind::End => {
            "shape=doublecircle, fillcolor=\"#1f2937\", fontcolor=\"#ffffff\", width=0.3".to_owned()
        }
        NodeKind::Join => "shape=invtrapezium, fillcolor=\"#e5e7eb\"".to_owned(),
        NodeKind::Event => "shape=cds, fillcolor=\"#fef3c7\", color=\"#b45309\"".to_owned(),
        NodeKind::Missing => {
            "shape=box, style=\"filled,dashed\", fillcolor=\"#fee2e2\", color=\"#b91c1c\""
                .to_owned()
        }
        NodeKind::Task {
            type_name,
            compensation,
        } => {
            let shape = match type_name {
                "switch" => "shape=diamond",
                "delay" => "shape=hexagon",
                "event" | "callback" => "shape=box, style=\"rounded,filled\"",
                "subflow" => "shape=box, peripheries=2",
                "parallel" | "foreach" => "shape=trapezium",
                "inject" => "shape=parallelogram",
                _ => "shape=box",
            };
            if compensation {
                format!("{shape}, fillcolor=\"#ede9fe\", color=\"#7c3aed\"")
            } else {
                shape.to_owned()
            }
        }
    };
    let indent = "    ".repeat(depth);
    let _ = writeln!(out, "{indent}\"{}\" [label=\"{label}\", {attrs}];", node.id);
}

/// Text inside a DOT double-quoted string: only `"` and `\` are special there (a backslash
/// would start an escape such as `\n` or `\N`).
pub(super) fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quote_escapes_quotes_and_backslashes() {
        assert_eq!(quote(r#"a "b" \n c"#), r#"a \"b\" \\n c"#);
        assert_eq!(quote("x\ny"), "x y");
    }
}
