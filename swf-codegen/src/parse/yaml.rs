//! Loads YAML (and JSON, a subset of it) into a tree that keeps the position of every node and
//! every key. Built from saphyr's event stream rather than its document type, so that keys keep
//! their order and positions and a key written twice is caught instead of silently replaced.

use crate::diagnostic::{Code, Diagnostics};
use crate::source::Span;
use saphyr::Scalar as CoreScalar;
use saphyr_parser::{Event, Parser, ScalarStyle, Span as YamlSpan};
use serde_json::{Map, Number, Value};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    Scalar(Scalar),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    /// The text as written (without quotes), so `version: 1.0` stays `"1.0"` where a string is
    /// expected.
    pub text: String,
    pub value: ScalarValue,
}

/// A plain scalar resolved with the YAML core schema; quoted scalars are always strings.
#[derive(Debug, Clone, PartialEq)]
pub enum ScalarValue {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer above `i64::MAX` that fits in a `u64`.
    UInt(u64),
    Float(f64),
    Str,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_span: Span,
    pub value: Node,
}

impl Node {
    /// What kind of value this is, in the words the diagnostics use.
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            NodeKind::Scalar(s) => match s.value {
                ScalarValue::Null => "null",
                ScalarValue::Bool(_) => "a boolean",
                ScalarValue::Int(_) | ScalarValue::UInt(_) | ScalarValue::Float(_) => "a number",
                ScalarValue::Str => "a string",
            },
            NodeKind::Seq(_) => "a list",
            NodeKind::Map(_) => "a mapping",
        }
    }

    /// The node as JSON, for data the workflow carries verbatim (inject data, metadata).
    pub fn to_json(&self) -> Value {
        match &self.kind {
            NodeKind::Scalar(s) => match s.value {
                ScalarValue::Null => Value::Null,
                ScalarValue::Bool(b) => Value::Bool(b),
                ScalarValue::Int(i) => Value::Number(i.into()),
                ScalarValue::UInt(u) => Value::Number(u.into()),
                ScalarValue::Float(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
                ScalarValue::Str => Value::String(s.text.clone()),
            },
            NodeKind::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            NodeKind::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), e.value.to_json()))
                    .collect::<Map<String, Value>>(),
            ),
        }
    }
}

fn span_of(span: &YamlSpan) -> Span {
    Span::new(
        u32::try_from(span.start.line()).unwrap_or(u32::MAX),
        u32::try_from(span.start.col() + 1).unwrap_or(u32::MAX),
    )
}

/// Parses one YAML or JSON document. Syntax errors are recorded and give `None`.
pub fn load(text: &str, diags: &mut Diagnostics) -> Option<Node> {
    let mut loader = Loader {
        parser: Parser::new_from_str(text),
        anchors: BTreeMap::new(),
        depth: 0,
        expanded: Size::default(),
        limit_hit: false,
        numbers: Vec::new(),
        tags: Vec::new(),
        reading_key: false,
    };
    let document = loader.document();
    for (span, message, tagged) in std::mem::take(&mut loader.numbers) {
        diags.error(Code::BAD_NUMBER, span, message).help(if tagged {
            "write it as `!!str` to keep it exactly, as a string; JSON data holds 64-bit integers and finite floats"
        } else {
            "quote the number to keep it exactly, as a string; JSON data holds 64-bit integers and finite floats"
        });
    }
    for (span, message, help) in std::mem::take(&mut loader.tags) {
        diags.error(Code::SYNTAX, span, message).help(help);
    }
    match document {
        Ok(Some(node)) => Some(node),
        Ok(None) => {
            diags
                .error(
                    Code::SYNTAX,
                    Span::new(1, 1),
                    "the file holds no workflow definition",
                )
                .help("write the workflow as a YAML or JSON mapping with `id`, `name` and `tasks`");
            None
        }
        Err((span, message)) if loader.limit_hit => {
            diags.error(Code::LIMIT, span, message).help(
                "write the repeated parts out instead of through aliases, or split the workflow into sub-flows",
            );
            None
        }
        Err((span, message)) => {
            diags
                .error(Code::SYNTAX, span, message)
                .help("fix the YAML/JSON syntax at this position");
            None
        }
    }
}

type LoadResult<T> = Result<T, (Span, String)>;

/// Deeper nesting than any workflow needs; refusing it keeps the recursive loader, lowering and
/// emitters far from the stack's limit on hostile input.
pub const MAX_DEPTH: usize = 64;

/// What aliases may copy into one document, all aliases together: an alias bomb of a few
/// hundred bytes (each level aliasing the previous one ten times) would otherwise expand
/// until memory runs out.
pub const MAX_ALIAS_NODES: usize = 10_000;
/// See [`MAX_ALIAS_NODES`]: the text of the scalars aliases copy, in bytes (16 MiB).
pub const MAX_ALIAS_BYTES: usize = 16 << 20;

/// The size of a node: how many nodes it holds (itself included) and the bytes of its
/// scalars' text and keys.
#[derive(Debug, Clone, Copy, Default)]
struct Size {
    nodes: usize,
    bytes: usize,
}

impl Size {
    fn of(node: &Node) -> Size {
        match &node.kind {
            NodeKind::Scalar(s) => Size {
                nodes: 1,
                bytes: s.text.len(),
            },
            NodeKind::Seq(items) => items
                .iter()
                .fold(Size { nodes: 1, bytes: 0 }, |size, item| {
                    size.plus(Size::of(item))
                }),
            NodeKind::Map(entries) => {
                entries
                    .iter()
                    .fold(Size { nodes: 1, bytes: 0 }, |size, entry| {
                        size.plus(Size::of(&entry.value)).plus(Size {
                            nodes: 1,
                            bytes: entry.key.len(),
                        })
                    })
            }
        }
    }

    fn plus(self, other: Size) -> Size {
        Size {
            nodes: self.nodes.saturating_add(other.nodes),
            bytes: self.bytes.saturating_add(other.bytes),
        }
    }
}

struct Loader<'a> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    /// Each anchor's node and size.
    anchors: BTreeMap<usize, (Node, Size)>,
    depth: usize,
    /// What aliases have copied so far.
    expanded: Size,
    /// The error being returned is a limit (E0145), not a syntax error.
    limit_hit: bool,
    /// Numbers JSON cannot hold exactly (E0146), reported without stopping the load.
    /// Each with whether it was tagged (`!!float`), which quoting does not undo.
    numbers: Vec<(Span, String, bool)>,
    /// Scalars whose core-schema tag does not allow their text (`!!int abc`): where, what, and
    /// what to write instead; reported (E0001) without stopping the load.
    tags: Vec<(Span, String, String)>,
    /// A mapping key is being read: it is text, whatever it looks like.
    reading_key: bool,
}

impl<'a> Loader<'a> {
    fn next(&mut self) -> LoadResult<(Event<'a>, YamlSpan)> {
        match self.parser.next_event() {
            Some(Ok(event)) => Ok(event),
            Some(Err(error)) => {
                let marker = error.marker();
                Err((
                    Span::new(
                        u32::try_from(marker.line()).unwrap_or(u32::MAX),
                        u32::try_from(marker.col() + 1).unwrap_or(u32::MAX),
                    ),
                    format!("invalid YAML: {}", error.info()),
                ))
            }
            None => Err((Span::new(1, 1), "unexpected end of the file".into())),
        }
    }

    fn document(&mut self) -> LoadResult<Option<Node>> {
        let mut root = None;
        loop {
            let (event, span) = self.next()?;
            match event {
                Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
                Event::DocumentStart(_) => {
                    if root.is_some() {
                        return Err((
                            span_of(&span),
                            "the file holds more than one YAML document".into(),
                        ));
                    }
                    let (event, span) = self.next()?;
                    if matches!(event, Event::DocumentEnd) {
                        continue;
                    }
                    root = Some(self.node(event, span)?);
                }
                Event::StreamEnd => return Ok(root),
                other => {
                    return Err((span_of(&span), format!("unexpected YAML event {other:?}")));
                }
            }
        }
    }

    fn node(&mut self, event: Event<'a>, span: YamlSpan) -> LoadResult<Node> {
        let at = span_of(&span);
        if self.depth >= MAX_DEPTH {
            self.limit_hit = true;
            return Err((
                at,
                format!("the document nests deeper than {MAX_DEPTH} levels; flatten it"),
            ));
        }
        self.depth += 1;
        let node = self.node_at_depth(event, at);
        self.depth -= 1;
        node
    }

    fn node_at_depth(&mut self, event: Event<'a>, at: Span) -> LoadResult<Node> {
        let (node, anchor) = match event {
            Event::Scalar(text, style, anchor, tag) => {
                let core_tag = tag
                    .as_deref()
                    .filter(|tag| tag.is_yaml_core_schema())
                    .and_then(|tag| CoreTag::of(&tag.suffix));
                let value = match core_tag {
                    // A key is text, whatever its tag says.
                    Some(core_tag) if !self.reading_key => self.tagged(core_tag, &text, at),
                    _ if style == ScalarStyle::Plain => {
                        match CoreScalar::parse_from_cow_and_metadata(
                            text.clone(),
                            style,
                            tag.as_ref(),
                        ) {
                            Some(CoreScalar::Null) => ScalarValue::Null,
                            Some(CoreScalar::Boolean(b)) => ScalarValue::Bool(b),
                            Some(CoreScalar::Integer(i)) => ScalarValue::Int(i),
                            Some(CoreScalar::FloatingPoint(f)) => {
                                self.float(&text, f.into_inner(), at)
                            }
                            Some(CoreScalar::String(_)) | None => self.maybe_integer(&text, at),
                        }
                    }
                    _ => ScalarValue::Str,
                };
                let scalar = Scalar {
                    text: text.into_owned(),
                    value,
                };
                (
                    Node {
                        kind: NodeKind::Scalar(scalar),
                        span: at,
                    },
                    anchor,
                )
            }
            Event::SequenceStart(anchor, _) => {
                let mut items = Vec::new();
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.node(event, span)?);
                }
                (
                    Node {
                        kind: NodeKind::Seq(items),
                        span: at,
                    },
                    anchor,
                )
            }
            Event::MappingStart(anchor, _) => (self.mapping(at)?, anchor),
            Event::Alias(id) => {
                let Some((node, size)) = self.anchors.get(&id) else {
                    return Err((
                        at,
                        "this alias refers to an anchor that is not defined before it".into(),
                    ));
                };
                let expanded = self.expanded.plus(*size);
                if expanded.nodes > MAX_ALIAS_NODES || expanded.bytes > MAX_ALIAS_BYTES {
                    self.limit_hit = true;
                    return Err((
                        at,
                        format!(
                            "the aliases of this document expand to more than {MAX_ALIAS_NODES} nodes or {} MiB of text",
                            MAX_ALIAS_BYTES >> 20
                        ),
                    ));
                }
                self.expanded = expanded;
                return Ok(node.clone());
            }
            other => return Err((at, format!("unexpected YAML event {other:?}"))),
        };
        if anchor > 0 {
            self.anchors.insert(anchor, (node.clone(), Size::of(&node)));
        }
        Ok(node)
    }

    /// A scalar with one of the core schema's tags (`!!str 02134`, `!!float 1`), quoted or not:
    /// of the tag's type, read from its text by the core schema's rules. Text the tag does not
    /// allow is reported and read as a string.
    fn tagged(&mut self, tag: CoreTag, text: &str, at: Span) -> ScalarValue {
        let value = match tag {
            CoreTag::Str => Some(ScalarValue::Str),
            CoreTag::Null => {
                matches!(text, "" | "~" | "null" | "Null" | "NULL").then_some(ScalarValue::Null)
            }
            CoreTag::Bool => match text {
                "true" | "True" | "TRUE" => Some(ScalarValue::Bool(true)),
                "false" | "False" | "FALSE" => Some(ScalarValue::Bool(false)),
                _ => None,
            },
            CoreTag::Int => core_integer(text).map(|value| self.integer(text, value, at)),
            CoreTag::Float => saphyr::parse_core_schema_fp(text)
                .map(|value| self.finite_float(text, value, true, at)),
        };
        value.unwrap_or_else(|| {
            self.tags.push((
                at,
                format!(
                    "`!!{}` says this scalar is {}, but `{}` is not one",
                    tag.suffix(),
                    tag.what(),
                    crate::syntax::excerpt(text)
                ),
                format!(
                    "write {} (YAML 1.2 core schema), or remove the tag",
                    tag.example()
                ),
            ));
            ScalarValue::Str
        })
    }

    /// A core-schema integer: a `u64` above `i64::MAX`, reported beyond 64 bits.
    fn integer(&mut self, text: &str, value: i128, at: Span) -> ScalarValue {
        if let Ok(value) = i64::try_from(value) {
            return ScalarValue::Int(value);
        }
        if let Ok(value) = u64::try_from(value) {
            return ScalarValue::UInt(value);
        }
        self.numbers.push((
            at,
            format!(
                "the integer `{}` is beyond the 64-bit integers JSON data holds exactly",
                crate::syntax::excerpt(text)
            ),
            true,
        ));
        ScalarValue::Str
    }

    /// A plain scalar the core schema resolved to a float: an integer too large for `i64`
    /// (kept as a `u64` when it fits), or a float, which must be finite. A number JSON cannot
    /// hold is reported and read as a string.
    fn float(&mut self, text: &str, value: f64, at: Span) -> ScalarValue {
        if self.reading_key {
            return ScalarValue::Str;
        }
        if is_decimal_integer(text) {
            return self.maybe_integer(text, at);
        }
        self.finite_float(text, value, false, at)
    }

    /// A float, which must be finite: `.inf`, `.nan` and `1e400` are reported and read as text.
    /// `tagged`: written with `!!float`.
    fn finite_float(&mut self, text: &str, value: f64, tagged: bool, at: Span) -> ScalarValue {
        if value.is_finite() {
            return ScalarValue::Float(value);
        }
        let what = if value.is_nan() {
            "not a number (`.nan`)".to_owned()
        } else if text.trim_start_matches(['-', '+']).starts_with('.') {
            format!("infinite (`{text}`)")
        } else {
            format!("`{text}`, beyond the largest float (about 1.8e308)")
        };
        self.numbers.push((
            at,
            format!("this number is {what}, which JSON data cannot hold"),
            tagged,
        ));
        ScalarValue::Str
    }

    /// A plain scalar that is not a core-schema number: a decimal integer beyond `i64` is a
    /// `u64` when it fits, reported when it does not; anything else is a string.
    fn maybe_integer(&mut self, text: &str, at: Span) -> ScalarValue {
        if self.reading_key || !is_decimal_integer(text) {
            return ScalarValue::Str;
        }
        match text.trim_start_matches('+').parse::<u64>() {
            Ok(value) => ScalarValue::UInt(value),
            Err(_) => {
                self.numbers.push((
                    at,
                    format!(
                        "the integer `{}` is beyond the 64-bit integers JSON data holds exactly",
                        crate::syntax::excerpt(text)
                    ),
                    false,
                ));
                ScalarValue::Str
            }
        }
    }

    fn mapping(&mut self, at: Span) -> LoadResult<Node> {
        let mut entries: Vec<Entry> = Vec::new();
        // Key → its entry: the duplicate check stays linear in the number of keys.
        let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        loop {
            let (event, span) = self.next()?;
            if matches!(event, Event::MappingEnd) {
                break;
            }
            self.reading_key = true;
            let key_node = self.node(event, span);
            self.reading_key = false;
            let key_node = key_node?;
            let key = match &key_node.kind {
                NodeKind::Scalar(s) => s.text.clone(),
                _ => {
                    return Err((
                        key_node.span,
                        "mapping keys must be plain strings, not lists or mappings".into(),
                    ));
                }
            };
            if let Some(first) = seen.get(&key).map(|&index| &entries[index]) {
                return Err((
                    key_node.span,
                    format!(
                        "the key `{key}` is given twice in this mapping (first at line {})",
                        first.key_span.line
                    ),
                ));
            }
            let (event, span) = self.next()?;
            let value = self.node(event, span)?;
            seen.insert(key.clone(), entries.len());
            entries.push(Entry {
                key,
                key_span: key_node.span,
                value,
            });
        }
        Ok(Node {
            kind: NodeKind::Map(entries),
            span: at,
        })
    }
}

/// The YAML core schema's tags for scalars (`!!str`, `!!int`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CoreTag {
    Str,
    Int,
    Float,
    Bool,
    Null,
}

impl CoreTag {
    fn of(suffix: &str) -> Option<CoreTag> {
        Some(match suffix {
            "str" => CoreTag::Str,
            "int" => CoreTag::Int,
            "float" => CoreTag::Float,
            "bool" => CoreTag::Bool,
            "null" => CoreTag::Null,
            _ => return None,
        })
    }

    fn suffix(self) -> &'static str {
        match self {
            CoreTag::Str => "str",
            CoreTag::Int => "int",
            CoreTag::Float => "float",
            CoreTag::Bool => "bool",
            CoreTag::Null => "null",
        }
    }

    fn what(self) -> &'static str {
        match self {
            CoreTag::Str => "a string",
            CoreTag::Int => "an integer",
            CoreTag::Float => "a float",
            CoreTag::Bool => "a boolean",
            CoreTag::Null => "null",
        }
    }

    fn example(self) -> &'static str {
        match self {
            CoreTag::Str => "any text",
            CoreTag::Int => "an integer such as `42`, `-7`, `0o17` or `0x1F`",
            CoreTag::Float => "a float such as `1`, `-2.5`, `1e3` or `.5`",
            CoreTag::Bool => "`true` or `false`",
            CoreTag::Null => "`null`, `~` or nothing",
        }
    }
}

/// An integer as the YAML core schema writes it: decimal (`-45`, `+6`), octal (`0o17`) or
/// hexadecimal (`0x1F`); wider than 64 bits is still an integer (`i128` holds what a `u64` or
/// an `i64` can, the rest is refused by the caller).
fn core_integer(text: &str) -> Option<i128> {
    let digits = |text: &str, radix: u32| {
        (!text.is_empty() && text.chars().all(|c| c.is_digit(radix)))
            .then(|| i128::from_str_radix(text, radix).unwrap_or(i128::MAX))
    };
    if let Some(octal) = text.strip_prefix("0o") {
        return digits(octal, 8);
    }
    if let Some(hex) = text.strip_prefix("0x") {
        return digits(hex, 16);
    }
    let (negative, decimal) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let value = digits(decimal, 10)?;
    Some(if negative { -value } else { value })
}

/// `123`, `-45`, `+6`: what the YAML core schema reads as a decimal integer.
fn is_decimal_integer(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_ok(text: &str) -> Node {
        let mut diags = Diagnostics::new("t.yaml");
        let node = load(text, &mut diags).expect("loads");
        assert!(!diags.has_errors(), "{:?}", diags.items());
        node
    }

    #[test]
    fn keeps_positions_of_keys_and_values() {
        let node = load_ok("id: x\ntasks:\n  - name: a\n    type: inject\n");
        let NodeKind::Map(entries) = &node.kind else {
            panic!("mapping expected")
        };
        assert_eq!(entries[1].key, "tasks");
        assert_eq!(entries[1].key_span, Span::new(2, 1));
        let NodeKind::Seq(items) = &entries[1].value.kind else {
            panic!("list expected")
        };
        let NodeKind::Map(task) = &items[0].kind else {
            panic!("mapping expected")
        };
        assert_eq!(task[1].key_span, Span::new(4, 5));
        assert_eq!(task[1].value.span, Span::new(4, 11));
    }

    #[test]
    fn json_is_accepted_with_positions() {
        let node = load_ok("{\n  \"id\": \"x\",\n  \"n\": 3\n}");
        let NodeKind::Map(entries) = &node.kind else {
            panic!("mapping expected")
        };
        assert_eq!(entries[1].key_span, Span::new(3, 3));
        assert_eq!(node.to_json(), serde_json::json!({"id": "x", "n": 3}));
    }

    #[test]
    fn scalars_resolve_with_the_core_schema_but_keep_their_text() {
        let node = load_ok("a: 1.0\nb: 'true'\nc: true\nd: ~\n");
        assert_eq!(
            node.to_json(),
            serde_json::json!({"a": 1.0, "b": "true", "c": true, "d": null})
        );
        let NodeKind::Map(entries) = &node.kind else {
            panic!("mapping expected")
        };
        let NodeKind::Scalar(s) = &entries[0].value.kind else {
            panic!("scalar expected")
        };
        assert_eq!(s.text, "1.0");
    }

    #[test]
    fn duplicate_keys_are_errors_with_both_lines() {
        let mut diags = Diagnostics::new("t.yaml");
        assert!(load("a: 1\nb: 2\na: 3\n", &mut diags).is_none());
        let d = &diags.items()[0];
        assert_eq!(d.code, Code::SYNTAX);
        assert_eq!(d.span, Span::new(3, 1));
        assert!(d.message.contains("line 1"), "{}", d.message);
    }

    #[test]
    fn syntax_errors_have_positions() {
        let mut diags = Diagnostics::new("t.yaml");
        assert!(load("a: [1, 2\nb: 3\n", &mut diags).is_none());
        assert_eq!(diags.items()[0].code, Code::SYNTAX);
        assert!(diags.items()[0].span.line >= 1);
    }

    #[test]
    fn aliases_copy_their_anchor() {
        let node = load_ok("a: &x {k: 1}\nb: *x\n");
        assert_eq!(
            node.to_json(),
            serde_json::json!({"a": {"k": 1}, "b": {"k": 1}})
        );
    }

    #[test]
    fn absurd_nesting_is_refused_not_a_stack_overflow() {
        let mut diags = Diagnostics::new("t.yaml");
        // saphyr-parser refuses extreme nesting itself; 100 levels get through to our limit.
        let text = format!("a: {}{}", "[".repeat(100), "]".repeat(100));
        assert!(load(&text, &mut diags).is_none());
        assert!(
            diags.items()[0].message.contains("nests deeper"),
            "{:?}",
            diags.items()
        );
        assert_eq!(diags.items()[0].code, Code::LIMIT);
    }

    /// A few hundred bytes whose aliases expand tenfold per level once grew until the process
    /// was killed.
    #[test]
    fn alias_bombs_are_refused_within_the_budget() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut previous = 'a';
        for level in 1..9u8 {
            let name = char::from(b'a' + level);
            let items = vec![format!("*{previous}"); 10].join(", ");
            text.push_str(&format!("{name}: &{name} [{items}]\n"));
            previous = name;
        }
        let mut diags = Diagnostics::new("bomb.yaml");
        assert!(load(&text, &mut diags).is_none());
        let d = &diags.items()[0];
        assert_eq!(d.code, Code::LIMIT, "{d:?}");
        assert!(d.message.contains("aliases"), "{}", d.message);
        assert_eq!(d.span.line, 4);
    }

    #[test]
    fn aliases_within_the_budget_still_expand() {
        let text = "r: &r {interval: PT1S, maxAttempts: 3}\nuse: [*r, *r, *r, *r]\n";
        let node = load_ok(text);
        assert_eq!(
            node.to_json()["use"][3]["maxAttempts"],
            serde_json::json!(3)
        );
    }

    /// Integers beyond i64/u64 and 1e400, .inf, .nan became `null` or lost digits silently.
    #[test]
    fn numbers_json_cannot_hold_are_refused_and_u64_is_kept() {
        let text = "a: 18446744073709551615\nb: 123456789012345678901234567890\nc: -9223372036854775809\nd: 1e400\ne: .inf\nf: -.Inf\ng: .nan\nh: 1.5\n1e400: key\n";
        let mut diags = Diagnostics::new("n.yaml");
        let node = load(text, &mut diags).expect("loads");
        let lines: Vec<u32> = diags.items().iter().map(|d| d.span.line).collect();
        assert_eq!(lines, vec![2, 3, 4, 5, 6, 7], "{:?}", diags.items());
        assert!(diags.items().iter().all(|d| d.code == Code::BAD_NUMBER));
        assert_eq!(node.to_json()["a"], serde_json::json!(u64::MAX));
        assert_eq!(node.to_json()["h"], serde_json::json!(1.5));
        assert_eq!(node.to_json()["1e400"], serde_json::json!("key"));
    }

    /// `!!str 02134` was the number 2134, `!!str -5` and `!!float -5` a false E0146, and
    /// `!!float 1` an integer.
    #[test]
    fn core_schema_tags_decide_the_type() {
        let text = "a: !!str 02134\nb: !!str -5\nc: !!float -5\nd: !!float 1\ne: !!int 0x1F\n\
                    f: !!bool False\ng: !!null ~\nh: !!str true\ni: !!int \"7\"\nj: !!float .5\n\
                    k: !!int -9223372036854775808\nl: !!int 18446744073709551615\nm: !!int 0o17\n\
                    n: !!str\no: !!null\np: !!timestamp 2001-12-14\nq: !custom 12\n!!int key: 1\n";
        let node = load_ok(text);
        assert_eq!(
            node.to_json(),
            serde_json::json!({
                "a": "02134", "b": "-5", "c": -5.0, "d": 1.0, "e": 31, "f": false, "g": null,
                "h": "true", "i": 7, "j": 0.5, "k": i64::MIN, "l": u64::MAX, "m": 15, "n": "",
                "o": null, "p": "2001-12-14", "q": 12, "key": 1
            })
        );
        let NodeKind::Map(entries) = &node.kind else {
            panic!("mapping expected")
        };
        let scalar = |index: usize| match &entries[index].value.kind {
            NodeKind::Scalar(s) => s.clone(),
            other => panic!("scalar expected: {other:?}"),
        };
        // As written, and of the tag's type.
        assert_eq!(scalar(0).text, "02134");
        assert_eq!(scalar(0).value, ScalarValue::Str);
        assert_eq!(scalar(3).value, ScalarValue::Float(1.0));
        assert_eq!(scalar(2).value, ScalarValue::Float(-5.0));
    }

    #[test]
    fn text_a_core_schema_tag_does_not_allow_is_refused() {
        let text = "a: !!float abc\nb: !!int 1.5\nc: !!bool yes\nd: !!null nil\n\
                    e: !!float 1e400\nf: !!int 99999999999999999999\ng: !!float .nan\n";
        let mut diags = Diagnostics::new("t.yaml");
        let node = load(text, &mut diags).expect("loads");
        let mut found: Vec<(u32, Code)> = diags
            .items()
            .iter()
            .map(|d| (d.span.line, d.code))
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                (1, Code::SYNTAX),
                (2, Code::SYNTAX),
                (3, Code::SYNTAX),
                (4, Code::SYNTAX),
                (5, Code::BAD_NUMBER),
                (6, Code::BAD_NUMBER),
                (7, Code::BAD_NUMBER),
            ],
            "{:#?}",
            diags.items()
        );
        let first = diags
            .items()
            .iter()
            .find(|d| d.span.line == 1)
            .expect("line 1");
        assert_eq!(first.span, Span::new(1, 4));
        assert_eq!(
            first.message,
            "`!!float` says this scalar is a float, but `abc` is not one"
        );
        assert!(
            first
                .help
                .as_deref()
                .unwrap_or("")
                .contains("remove the tag"),
            "{first:?}"
        );
        let tagged_number = diags
            .items()
            .iter()
            .find(|d| d.span.line == 5)
            .expect("line 5");
        assert!(
            tagged_number
                .help
                .as_deref()
                .unwrap_or("")
                .contains("`!!str`"),
            "{tagged_number:?}"
        );
        // Each is read as the text it holds.
        assert_eq!(node.to_json()["a"], serde_json::json!("abc"));
        assert_eq!(node.to_json()["e"], serde_json::json!("1e400"));
    }

    #[test]
    fn many_keys_in_one_mapping_load() {
        let text: String = (0..20_000).map(|i| format!("k{i}: {i}\n")).collect();
        let node = load_ok(&text);
        assert_eq!(node.to_json()["k19999"], serde_json::json!(19999));
        let mut diags = Diagnostics::new("t.yaml");
        assert!(load(&format!("{text}k7: again\n"), &mut diags).is_none());
        assert!(diags.items()[0].message.contains("`k7`"));
    }

    #[test]
    fn empty_file_is_an_error() {
        let mut diags = Diagnostics::new("t.yaml");
        assert!(load("", &mut diags).is_none());
        assert!(diags.has_errors());
    }
}
