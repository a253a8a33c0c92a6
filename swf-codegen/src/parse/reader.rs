//! Typed, position-aware access to YAML mappings. A [`MapReader`] hands out the keys a front end
//! asks for (regardless of case, under any of their spellings) and, when finished, reports every
//! key nobody asked for with the closest known key as a suggestion.

use super::yaml::{Entry, Node, NodeKind, ScalarValue};
use crate::diagnostic::{Code, Diagnostics};
use crate::source::{Span, Spanned};
use serde_json::Value;
use std::collections::HashMap;

/// Keys whose content is kept verbatim and never interpreted.
const VERBATIM_KEYS: &[&str] = &["metadata", "extensions"];

pub struct MapReader<'a> {
    /// What the mapping is, for messages: "task", "action", "retry definition", ...
    what: &'static str,
    node: &'a Node,
    entries: &'a [Entry],
    used: Vec<bool>,
    known: Vec<&'static str>,
    missing: Vec<&'static str>,
    /// `(second, first)`: entries that give a field already taken under another of its
    /// spellings (`tasks` and `states`), reported by `finish`.
    respelled: Vec<(usize, usize)>,
}

impl<'a> MapReader<'a> {
    /// Starts reading `node` as a mapping; a node of another kind is reported and gives `None`.
    pub fn new(node: &'a Node, what: &'static str, diags: &mut Diagnostics) -> Option<Self> {
        match &node.kind {
            NodeKind::Map(entries) => {
                check_case_duplicates(entries, what, diags);
                Some(MapReader {
                    what,
                    node,
                    entries,
                    used: vec![false; entries.len()],
                    known: Vec::new(),
                    missing: Vec::new(),
                    respelled: Vec::new(),
                })
            }
            _ => {
                diags
                    .error(
                        Code::WRONG_TYPE,
                        node.span,
                        format!(
                            "expected a mapping for this {what}, found {}",
                            node.kind_name()
                        ),
                    )
                    .help(format!("write the {what} as `key: value` pairs"));
                None
            }
        }
    }

    pub fn span(&self) -> Span {
        self.node.span
    }

    /// Takes the value of the first of `spellings` present (matched regardless of case).
    pub fn take(&mut self, spellings: &[&'static str]) -> Option<&'a Node> {
        self.take_entry(spellings).map(|e| &e.value)
    }

    /// Like [`take`](Self::take), with the key's own position. A later key that gives the same
    /// field again is taken too: under the same spelling in another case it is reported as a
    /// duplicate already, under another spelling `finish` reports it.
    pub fn take_entry(&mut self, spellings: &[&'static str]) -> Option<&'a Entry> {
        self.known.extend_from_slice(spellings);
        let entries = self.entries;
        let spelt = |entry: &Entry| spellings.iter().any(|s| s.eq_ignore_ascii_case(&entry.key));
        let first = entries.iter().position(spelt)?;
        self.used[first] = true;
        for (index, entry) in entries.iter().enumerate().skip(first + 1) {
            if spelt(entry) {
                self.used[index] = true;
                if !entry.key.eq_ignore_ascii_case(&entries[first].key) {
                    self.respelled.push((index, first));
                }
            }
        }
        entries.get(first)
    }

    /// A required key. Its absence is reported when the reader finishes, unless an unknown key
    /// there is a likely misspelling of it (that one report says what to rename).
    pub fn require(&mut self, spellings: &[&'static str]) -> Option<&'a Node> {
        let found = self.take(spellings);
        if found.is_none() {
            self.missing.push(spellings[0]);
        }
        found
    }

    /// Marks a key as known and kept verbatim (metadata, extensions, schemas).
    pub fn verbatim(&mut self, spellings: &[&'static str]) -> Option<Value> {
        self.take(spellings).map(Node::to_json)
    }

    /// Reports the required keys that are missing, but not the keys nobody asked for: for a
    /// mapping whose kind is unknown (an unknown task type), whose keys no schema can judge.
    pub fn finish_missing_only(mut self, diags: &mut Diagnostics) {
        self.used.iter_mut().for_each(|used| *used = true);
        self.finish(diags);
    }

    /// Reports every key nobody asked for, suggesting the closest known one, then every required
    /// key that is missing and was not suggested as a rename.
    pub fn finish(self, diags: &mut Diagnostics) {
        for &(second, first) in &self.respelled {
            let (Some(second), Some(first)) = (self.entries.get(second), self.entries.get(first))
            else {
                continue;
            };
            diags
                .error(
                    Code::DUPLICATE_KEY,
                    second.key_span,
                    format!(
                        "the same field is given twice in this {}: as `{}` (at line {}) and as \
                         `{}`",
                        self.what, first.key, first.key_span.line, second.key
                    ),
                )
                .help(format!(
                    "`{}` and `{}` are two spellings of one field: keep one of them",
                    first.key, second.key
                ));
        }
        let mut suggested: Vec<&str> = Vec::new();
        for (entry, used) in self.entries.iter().zip(&self.used) {
            if *used
                || VERBATIM_KEYS
                    .iter()
                    .any(|k| k.eq_ignore_ascii_case(&entry.key))
            {
                continue;
            }
            let diagnostic = diags.error(
                Code::UNKNOWN_KEY,
                entry.key_span,
                format!("unknown key `{}` in this {}", entry.key, self.what),
            );
            match closest(&entry.key, &self.known) {
                Some(suggestion) => {
                    suggested.push(suggestion);
                    diagnostic.message = format!(
                        "unknown key `{}` in this {}: did you mean `{suggestion}`?",
                        entry.key, self.what
                    );
                    diagnostic.help(format!("rename `{}` to `{suggestion}`", entry.key));
                }
                None => {
                    let mut known = self.known.clone();
                    known.sort_unstable();
                    known.dedup();
                    diagnostic.help(format!(
                        "the keys of a {} are: {}",
                        self.what,
                        known.join(", ")
                    ));
                }
            }
        }
        for key in &self.missing {
            if suggested.contains(key) {
                continue;
            }
            diags
                .error(
                    Code::MISSING_FIELD,
                    self.node.span,
                    format!("this {} has no `{key}`", self.what),
                )
                .help(format!("add `{key}` to the {}", self.what));
        }
    }
}

/// DUPLICATE_KEY at each key that repeats an earlier one regardless of case, in document order.
/// The lowercased key → its first entry: linear in the number of keys, as a huge mapping must be.
fn check_case_duplicates(entries: &[Entry], what: &str, diags: &mut Diagnostics) {
    let mut firsts: HashMap<String, &Entry> = HashMap::with_capacity(entries.len());
    for entry in entries {
        let first = *firsts
            .entry(entry.key.to_ascii_lowercase())
            .or_insert(entry);
        if !std::ptr::eq(first, entry) {
            diags
                .error(
                    Code::DUPLICATE_KEY,
                    entry.key_span,
                    format!(
                        "`{}` is given twice in this {what} (as `{}` at line {})",
                        entry.key, first.key, first.key_span.line
                    ),
                )
                .help("keys are compared regardless of case: keep one of them");
        }
    }
}

/// The known word closest to `word`, if it is close enough to be a likely typo.
pub fn closest<'k>(word: &str, known: &[&'k str]) -> Option<&'k str> {
    let lower = word.to_ascii_lowercase();
    known
        .iter()
        .map(|k| (strsim::jaro_winkler(&lower, &k.to_ascii_lowercase()), *k))
        .filter(|(score, _)| *score >= 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

// Typed conversions. Each reports a value of the wrong kind and gives `None`.

/// A string; numbers and booleans are taken as the text written (`version: 1.0` is "1.0").
pub fn string(node: &Node, what: &str, diags: &mut Diagnostics) -> Option<Spanned<String>> {
    match &node.kind {
        NodeKind::Scalar(s) if s.value != ScalarValue::Null => {
            Some(Spanned::new(s.text.clone(), node.span))
        }
        _ => {
            wrong_type(node, what, "a string", diags);
            None
        }
    }
}

/// The task a transition names (`nextTask`, `nextState`, `next-state`): a string that is not
/// empty. An empty one is reported (E0124) and comes back empty, which the rest of the
/// compiler reads as a target already reported: `check` refuses what `gen` cannot compile.
pub fn target(node: &Node, what: &str, diags: &mut Diagnostics) -> Option<Spanned<String>> {
    let target = string(node, what, diags)?;
    if target.value.is_empty() {
        diags
            .error(
                Code::INVALID_VALUE,
                node.span,
                format!("`{what}` is empty: it must name the task that runs next"),
            )
            .help("write the name (or id) of a task of the same scope, or end here instead");
    }
    Some(target)
}

/// Reports an operation (task or state) without its `actions` key. The key is required, but may
/// hold an empty list: the drafts' schemas set no minimum.
pub fn missing_actions(span: Span, what: &str, diags: &mut Diagnostics) {
    diags
        .error(
            Code::MISSING_FIELD,
            span,
            format!("this {what} has no `actions`"),
        )
        .help(
            "add `actions` with the functions it calls, such as `actions: [{functionRef: {refName: ...}}]`, \
             or `actions: []` when it calls none",
        );
}

pub fn boolean(node: &Node, what: &str, diags: &mut Diagnostics) -> Option<bool> {
    match &node.kind {
        NodeKind::Scalar(s) => match s.value {
            ScalarValue::Bool(b) => Some(b),
            // JSON written by hand sometimes quotes booleans; accept them in any case.
            ScalarValue::Str if s.text.eq_ignore_ascii_case("true") => Some(true),
            ScalarValue::Str if s.text.eq_ignore_ascii_case("false") => Some(false),
            _ => {
                wrong_type(node, what, "true or false", diags);
                None
            }
        },
        _ => {
            wrong_type(node, what, "true or false", diags);
            None
        }
    }
}

pub fn unsigned(node: &Node, what: &str, diags: &mut Diagnostics) -> Option<Spanned<u64>> {
    let parsed = match &node.kind {
        NodeKind::Scalar(s) => match s.value {
            ScalarValue::Int(i) => u64::try_from(i).ok(),
            ScalarValue::UInt(u) => Some(u),
            ScalarValue::Str => s.text.trim().parse::<u64>().ok(),
            _ => None,
        },
        _ => None,
    };
    if parsed.is_none() {
        wrong_type(node, what, "a whole number of at least 0", diags);
    }
    parsed.map(|n| Spanned::new(n, node.span))
}

pub fn list<'a>(node: &'a Node, what: &str, diags: &mut Diagnostics) -> &'a [Node] {
    match &node.kind {
        NodeKind::Seq(items) => items,
        _ => {
            wrong_type(node, what, "a list", diags);
            &[]
        }
    }
}

pub fn wrong_type(node: &Node, what: &str, expected: &str, diags: &mut Diagnostics) {
    diags
        .error(
            Code::WRONG_TYPE,
            node.span,
            format!("`{what}` must be {expected}, found {}", node.kind_name()),
        )
        .help(format!("write `{what}` as {expected}"));
}

/// An enumerated word matched regardless of case (and of `_`/`-`), e.g. `Sequential`.
pub fn enumerated<T: Copy>(
    node: &Node,
    what: &str,
    choices: &[(&'static str, T)],
    diags: &mut Diagnostics,
) -> Option<Spanned<T>> {
    let text = string(node, what, diags)?;
    let wanted = normalize_word(&text.value);
    if let Some((_, value)) = choices
        .iter()
        .find(|(word, _)| normalize_word(word) == wanted)
    {
        return Some(Spanned::new(*value, node.span));
    }
    let words: Vec<&str> = choices.iter().map(|(w, _)| *w).collect();
    let diagnostic = diags.error(
        Code::UNKNOWN_VALUE,
        node.span,
        format!("`{}` is not a valid {what}", text.value),
    );
    match closest(&text.value, &words) {
        Some(s) => diagnostic.help(format!(
            "did you mean `{s}`? (one of: {})",
            words.join(", ")
        )),
        None => diagnostic.help(format!("use one of: {}", words.join(", "))),
    };
    None
}

fn normalize_word(word: &str) -> String {
    word.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::yaml::load;

    fn node(text: &str) -> Node {
        load(text, &mut Diagnostics::new("t.yaml")).expect("loads")
    }

    #[test]
    fn unknown_keys_get_a_did_you_mean() {
        let n = node("nextTak: b\n");
        let mut diags = Diagnostics::new("t.yaml");
        let mut reader = MapReader::new(&n, "transition", &mut diags).expect("mapping");
        assert!(reader.take(&["nextTask", "nextState"]).is_none());
        reader.finish(&mut diags);
        let d = &diags.items()[0];
        assert_eq!(d.code, Code::UNKNOWN_KEY);
        assert!(
            d.message.contains("did you mean `nextTask`"),
            "{}",
            d.message
        );
        assert_eq!(d.span, Span::new(1, 1));
    }

    #[test]
    fn keys_match_regardless_of_case_and_metadata_is_free() {
        let n = node("ActionMode: x\nmetadata: {a: 1}\n");
        let mut diags = Diagnostics::new("t.yaml");
        let mut reader = MapReader::new(&n, "task", &mut diags).expect("mapping");
        assert!(reader.take(&["actionMode"]).is_some());
        reader.finish(&mut diags);
        assert!(diags.items().is_empty(), "{:?}", diags.items());
    }

    #[test]
    fn same_key_in_two_cases_is_reported() {
        let n = node("name: a\nNAME: b\n");
        let mut diags = Diagnostics::new("t.yaml");
        MapReader::new(&n, "task", &mut diags).expect("mapping");
        assert_eq!(diags.items()[0].code, Code::DUPLICATE_KEY);
    }

    #[test]
    fn one_field_under_two_spellings_is_reported_at_the_second() {
        let n = node("dataOutputPath: $.a\nid: x\ndataInputPath: $.b\n");
        let mut diags = Diagnostics::new("t.yaml");
        let mut reader = MapReader::new(&n, "event data filter", &mut diags).expect("mapping");
        let taken = reader.take(&["dataOutputPath", "dataInputPath"]);
        assert_eq!(taken.map(|n| n.span), Some(Span::new(1, 17)));
        reader.take(&["id"]);
        reader.finish(&mut diags);
        let [d] = diags.items() else {
            panic!("one diagnostic: {:#?}", diags.items())
        };
        assert_eq!((d.code, d.span), (Code::DUPLICATE_KEY, Span::new(3, 1)));
        assert_eq!(
            d.message,
            "the same field is given twice in this event data filter: as `dataOutputPath` (at \
             line 1) and as `dataInputPath`"
        );
        assert!(!d.message.contains("unknown key"));
        assert!(
            d.help.as_deref().unwrap_or("").contains("keep one of them"),
            "{d:#?}"
        );
    }

    #[test]
    fn a_key_repeated_in_another_case_is_reported_once() {
        let n = node("name: a\nNAME: b\n");
        let mut diags = Diagnostics::new("t.yaml");
        let mut reader = MapReader::new(&n, "task", &mut diags).expect("mapping");
        reader.take(&["name"]);
        reader.finish(&mut diags);
        let codes: Vec<Code> = diags.items().iter().map(|d| d.code).collect();
        assert_eq!(codes, [Code::DUPLICATE_KEY], "{:#?}", diags.items());
    }

    #[test]
    fn case_duplicates_are_found_in_a_huge_mapping_in_document_order() {
        // 200,000 keys: a quadratic check would compare 2·10^10 pairs, far beyond a test's time.
        const KEYS: u32 = 200_000;
        let entry = |key: String, line: u32| Entry {
            key,
            key_span: Span::new(line, 1),
            value: node("0"),
        };
        let mut entries: Vec<Entry> = (1..=KEYS).map(|i| entry(format!("key{i}"), i)).collect();
        entries.push(entry("KEY7".to_owned(), KEYS + 1));
        entries.push(entry("Key3".to_owned(), KEYS + 2));
        entries.push(entry("kEy7".to_owned(), KEYS + 3));
        let map = Node {
            kind: NodeKind::Map(entries),
            span: Span::new(1, 1),
        };
        let mut diags = Diagnostics::new("t.yaml");
        MapReader::new(&map, "workflow definition", &mut diags).expect("mapping");
        let found: Vec<(Code, u32, &str)> = diags
            .items()
            .iter()
            .map(|d| (d.code, d.span.line, d.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    Code::DUPLICATE_KEY,
                    KEYS + 1,
                    "`KEY7` is given twice in this workflow definition (as `key7` at line 7)"
                ),
                (
                    Code::DUPLICATE_KEY,
                    KEYS + 2,
                    "`Key3` is given twice in this workflow definition (as `key3` at line 3)"
                ),
                (
                    Code::DUPLICATE_KEY,
                    KEYS + 3,
                    "`kEy7` is given twice in this workflow definition (as `key7` at line 7)"
                ),
            ]
        );
    }

    #[test]
    fn enumerated_values_ignore_case_and_suggest() {
        let choices = [("sequential", 1), ("parallel", 2)];
        let mut diags = Diagnostics::new("t.yaml");
        let v = enumerated(&node("SEQUENTIAL"), "actionMode", &choices, &mut diags);
        assert_eq!(v.map(|s| s.value), Some(1));
        let v = enumerated(&node("paralel"), "actionMode", &choices, &mut diags);
        assert!(v.is_none());
        assert!(
            diags.items()[0]
                .help
                .as_deref()
                .unwrap_or("")
                .contains("`parallel`")
        );
    }
}
