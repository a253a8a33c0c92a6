//! SVG drawn in Rust by `layout-rs` (no graphviz): the same nodes and edges as the other formats.
//!
//! `layout-rs` has no clusters, so a nested scope is shown by its nodes' fill colour (one colour
//! a nesting level) and by its start node, which names the branch or the foreach body; it has
//! boxes, circles and double circles only, so the task type is the second line of each box.

use super::model::{Cluster, Diagram, EdgeKind, Node, NodeKind};
use layout::backends::svg::SVGWriter;
use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::style::{LineStyleKind, StyleAttr};
use layout::std_shapes::render::get_shape_size;
use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
use layout::topo::layout::VisualGraph;
use std::collections::BTreeMap;

/// One font size for everything: `layout-rs` writes one CSS class a size from a hash map, so a
/// single size keeps the output byte-for-byte deterministic.
const FONT_SIZE: usize = 14;

/// Fill colours of the nesting levels: the workflow, then nested scopes.
const LEVEL_FILLS: [&str; 4] = ["#ffffff", "#e0f2fe", "#dcfce7", "#fef9c3"];

pub(super) fn render(diagram: &Diagram) -> String {
    let mut graph = VisualGraph::new(Orientation::TopToBottom);
    let mut handles = BTreeMap::new();
    add_cluster(&mut graph, &mut handles, &diagram.root, 0);
    for node in &diagram.events {
        add_node(&mut graph, &mut handles, node, 0);
    }
    for edge in &diagram.edges {
        let (Some(&from), Some(&to)) = (handles.get(&edge.from), handles.get(&edge.to)) else {
            continue;
        };
        let (color, style) = match edge.kind {
            EdgeKind::Next | EdgeKind::Condition | EdgeKind::Default => {
                ("#374151", LineStyleKind::Normal)
            }
            EdgeKind::Nested => ("#1d4ed8", LineStyleKind::Normal),
            EdgeKind::Error => ("#dc2626", LineStyleKind::Dashed),
            EdgeKind::Retry => ("#d97706", LineStyleKind::Dashed),
            EdgeKind::Compensation => ("#7c3aed", LineStyleKind::Dotted),
            EdgeKind::Produces | EdgeKind::Consumes => ("#b45309", LineStyleKind::Dotted),
        };
        let width = if edge.kind == EdgeKind::Nested { 2 } else { 1 };
        let look = StyleAttr::new(Color::fast(color), width, None, 0, FONT_SIZE);
        let arrow = Arrow::new(
            LineEndKind::None,
            LineEndKind::Arrow,
            style,
            edge.label.as_deref().unwrap_or(""),
            &look,
            &None,
            &None,
        );
        graph.add_edge(arrow, from, to);
    }
    let mut writer = SVGWriter::new();
    graph.do_it(false, false, false, &mut writer);
    tidy(&writer.finalize(), &diagram.title)
}

fn add_cluster(
    graph: &mut VisualGraph,
    handles: &mut BTreeMap<String, layout::adt::dag::NodeHandle>,
    cluster: &Cluster,
    level: usize,
) {
    for node in &cluster.nodes {
        add_node(graph, handles, node, level);
    }
    for nested in &cluster.clusters {
        add_cluster(graph, handles, nested, level + 1);
    }
}

fn add_node(
    graph: &mut VisualGraph,
    handles: &mut BTreeMap<String, layout::adt::dag::NodeHandle>,
    node: &Node,
    level: usize,
) {
    let text = node.lines.join("\n");
    let level_fill = LEVEL_FILLS[level.min(LEVEL_FILLS.len() - 1)];
    let (shape, line, fill, rounded, same_size) = match node.kind {
        NodeKind::Start => {
            // A nested scope's start names the branch or body it starts.
            (ShapeKind::Circle(text), "#1f2937", level_fill, 0, true)
        }
        NodeKind::End => (
            ShapeKind::DoubleCircle(text),
            "#1f2937",
            level_fill,
            0,
            true,
        ),
        NodeKind::Join => (ShapeKind::Box(text), "#6b7280", "#e5e7eb", 15, false),
        NodeKind::Event => (ShapeKind::Box(text), "#b45309", "#fef3c7", 15, false),
        NodeKind::Missing => (ShapeKind::Box(text), "#b91c1c", "#fee2e2", 0, false),
        NodeKind::Task {
            type_name,
            compensation,
        } => {
            let rounded = if matches!(type_name, "event" | "callback") {
                10
            } else {
                0
            };
            let (line, fill) = if compensation {
                ("#7c3aed", "#ede9fe")
            } else {
                ("#374151", level_fill)
            };
            (ShapeKind::Box(text), line, fill, rounded, false)
        }
    };
    // As layout-rs's own DOT builder does: sizes are computed in the flipped orientation.
    let orientation = Orientation::TopToBottom.flip();
    let size = get_shape_size(orientation, &shape, FONT_SIZE, same_size);
    let look = StyleAttr::new(
        Color::fast(line),
        1,
        Some(Color::fast(fill)),
        rounded,
        FONT_SIZE,
    );
    let handle = graph.add_node(Element::create(shape, look, orientation, size));
    handles.insert(node.id.clone(), handle);
}

/// `layout-rs`'s output without its blank lines and indentation (so that it can be pasted into
/// Markdown as one HTML block), with a `<title>` for screen readers and browsers' tooltips.
fn tidy(svg: &str, title: &str) -> String {
    let mut out = String::with_capacity(svg.len());
    let mut titled = false;
    // layout-rs writes the XML declaration and the `<svg>` tag on one line.
    let svg = svg.replacen("?><svg ", "?>\n<svg ", 1);
    // Its `<style>` lists one class a font size in hash-map order: sorted, the bytes are the
    // same on every run.
    let mut styles: Vec<&str> = Vec::new();
    let mut in_style = false;
    for line in svg.lines().map(str::trim).filter(|line| !line.is_empty()) {
        if in_style {
            if line.starts_with("</style>") {
                styles.sort_unstable();
                for style in styles.drain(..) {
                    out.push_str(style);
                    out.push('\n');
                }
                in_style = false;
            } else {
                styles.push(line);
                continue;
            }
        } else if line.ends_with("<style>") {
            in_style = true;
        }
        out.push_str(line);
        out.push('\n');
        if !titled && line.starts_with("<svg ") {
            out.push_str("<title>");
            out.push_str(&xml_text(title));
            out.push_str("</title>\n");
            titled = true;
        }
    }
    out
}

/// Text content for XML: `&`, `<`, `>` and quotes become entities.
pub(super) fn xml_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The SVG ready to be a rustdoc section: no XML declaration, every `id` (and the references to
/// it) prefixed so that two diagrams on one page do not take each other's arrow paths, inside a
/// `<div>` that scrolls sideways when the diagram is wide. Only tags are rewritten, never text:
/// user text is escaped, so it holds no `<` that could be taken for a tag.
pub(super) fn for_rustdoc(svg: &str, prefix: &str) -> String {
    let body = svg
        .lines()
        .filter(|line| !line.starts_with("<?xml"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = String::with_capacity(body.len() + 64);
    out.push_str("<div style=\"overflow-x:auto\">\n");
    let mut rest = body.as_str();
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('>').map_or(rest.len(), |i| open + i + 1);
        let tag = &rest[open..close];
        out.push_str(
            &tag.replace("id=\"", &format!("id=\"{prefix}"))
                .replace("href=\"#", &format!("href=\"#{prefix}"))
                .replace("url(#", &format!("url(#{prefix}")),
        );
        rest = &rest[close..];
    }
    out.push_str(rest);
    out.push_str("\n</div>");
    out
}
