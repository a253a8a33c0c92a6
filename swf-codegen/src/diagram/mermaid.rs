//! Mermaid flowchart text.

use super::model::{Cluster, Diagram, EdgeKind, Node, NodeKind};
use std::fmt::Write;

pub(super) fn render(diagram: &Diagram) -> String {
    let mut out = String::new();
    // The title as a YAML double-quoted string (JSON's escaping is valid there); Mermaid shows
    // it as HTML too.
    // Mermaid escapes the title itself (`<` would show as `&lt;`): angle brackets become `‹ ›`.
    let title = escape(&diagram.title)
        .replace('\u{2060}', "")
        .replace('<', "‹")
        .replace('>', "›");
    let title = serde_json::Value::String(title);
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

/// Text inside a quoted Mermaid label. Inside quotes Mermaid reads brackets, braces, parens,
/// pipes and `;` as text. A `"` would end the label: it becomes `ʺ` (U+02BA, a straight double
/// prime). What Mermaid or its HTML labels would still take apart is split by an invisible word
/// joiner (U+2060) after its first character: `<` before a tag name (the tag would be dropped),
/// `&` and `#` before `name;` (an entity), a backquote (a Markdown string), `%%` (a directive).
/// Mermaid's own entity codes (`#quot;`) are not used: Mermaid 11, rendered in Chromium, shows
/// them as placeholders such as `ﬂ°quot¶ß`.
pub(super) fn escape(text: &str) -> String {
    const JOINER: char = '\u{2060}';
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (index, &c) in chars.iter().enumerate() {
        let rest = &chars[index + 1..];
        match c {
            '"' => out.push('\u{02BA}'),
            '<' if rest
                .first()
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')) =>
            {
                out.extend(['<', JOINER]);
            }
            '&' | '#' if entity_follows(rest) => out.extend([c, JOINER]),
            '`' => out.extend([JOINER, '`']),
            '%' if rest.first() == Some(&'%') => out.extend(['%', JOINER]),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Whether `name;` follows, which Mermaid would read after a `#` as an entity code.
fn entity_follows(rest: &[char]) -> bool {
    let name = rest
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    name > 0 && rest.get(name) == Some(&';')
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escape_leaves_no_character_mermaid_reads() {
        let escaped = escape("a \"b\" #c; [d] {e} (f) |g| <h> &amp; `i` ; %% 5% x<y");
        assert!(!escaped.contains('"'), "{escaped}");
        for taken in ["#c;", "<h", "&amp;", "%%", "<y"] {
            assert!(!escaped.contains(taken), "{taken} left in {escaped}");
        }
        // Shown as written, apart from the quote.
        assert_eq!(
            escaped.replace('\u{2060}', ""),
            "a ʺbʺ #c; [d] {e} (f) |g| <h> &amp; `i` ; %% 5% x<y"
        );
        assert_eq!(
            escape("#1 [x] {y} (z) |p| ; a < b & c > d"),
            "#1 [x] {y} (z) |p| ; a < b & c > d"
        );
        assert_eq!(escape("ünïcödé"), "ünïcödé");
    }
}
