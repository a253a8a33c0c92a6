//! Which draft a file is written against, from the keys only one draft uses (the tell-tale keys
//! of `spec/README.md`). A file whose keys belong to two drafts is reported key by key, so that
//! a kebab-case key in a camelCase file is an error at that key rather than a cascade of
//! unknown keys.

use super::yaml::{Entry, Node, NodeKind, ScalarValue};
use crate::diagnostic::{Code, Diagnostics};
use crate::ir::Dialect;
use crate::source::Span;

/// The three spellings the drafts come in; the two kebab-case drafts are told apart afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Kebab,
    V01,
    Tasks,
}

impl Family {
    fn label(self) -> &'static str {
        match self {
            Family::Kebab => "the kebab-case drafts (first and second)",
            Family::V01 => "v0.1",
            Family::Tasks => "the tasks draft",
        }
    }

    fn spelling_help(self) -> &'static str {
        match self {
            Family::Kebab => {
                "the kebab-case drafts spell keys with dashes: `next-state`, `action-mode`, `starts-at`, `trigger-defs`"
            }
            Family::V01 => {
                "v0.1 spells keys in camelCase: `startsAt`, `triggers`, `eventActions`, `transition: {nextState: ...}`, `filter`"
            }
            Family::Tasks => {
                "the tasks draft spells keys in camelCase: `tasks`, `events`, `eventsActions`, `eventRefs`, `transition: {nextTask: ...}`"
            }
        }
    }
}

/// Keys that only the kebab-case drafts use, anywhere in the file.
const KEBAB_KEYS: &[&str] = &[
    "trigger-defs",
    "starts-at",
    "next-state",
    "action-mode",
    "event-expression",
    "time-delay",
    "wait-for-completion",
    "correlation-token",
    "exec-status",
    "retry-interval",
    "max-retry",
    "schema-version",
];

/// Keys that only v0.1 uses at the top level.
const V01_TOP_KEYS: &[&str] = &["startsAt", "triggers"];

/// Keys that only v0.1 uses below the top level. (`filter` is not one: the kebab-case drafts'
/// InputPath/ResultPath/OutputPath are written in a `filter` too.)
const V01_KEYS: &[&str] = &["eventActions", "loop", "completionCondition"];

/// Keys that only the tasks draft uses at the top level.
const TASKS_TOP_KEYS: &[&str] = &["tasks", "events"];

/// Keys that only the tasks draft uses below the top level.
const TASKS_KEYS: &[&str] = &[
    "eventsActions",
    "eventRefs",
    "nextTask",
    "taskDataFilter",
    "stateDataFilter",
    "dataConditions",
    "eventConditions",
    "actionDataFilter",
    "eventDataFilter",
    "errorDataFilter",
    "produceEvent",
    "maxAttempts",
    "inputParameter",
];

/// Keys whose content is the user's data, never read for tell-tales.
const OPAQUE_KEYS: &[&str] = &["metadata", "extensions", "parameters", "inject", "data"];

/// One tell-tale key found in the file.
#[derive(Debug, Clone)]
struct Marker {
    family: Family,
    key: String,
    span: Span,
    /// A top-level key: the strongest sign of a dialect.
    top: bool,
    /// Told apart from another dialect's key by its case only (`functionref` vs `functionRef`):
    /// keys match regardless of case, so such a key never makes a file mixed.
    case_only: bool,
}

/// The dialect of the file rooted at `root`: `explicit` when the user named one, else the one its
/// tell-tale keys show. `None` (with the errors recorded) when the keys of several dialects are
/// mixed or none is found.
pub(super) fn dialect(
    root: &Node,
    explicit: Option<Dialect>,
    diags: &mut Diagnostics,
) -> Option<Dialect> {
    if explicit.is_some() {
        return explicit;
    }
    let mut markers = Vec::new();
    collect(root, true, &mut markers);
    let winner = winner(&markers);
    let Some(winner) = winner else {
        if has_top_key(root, "states") {
            // A first-draft file whose states are all END states (`start: true`, `type: END`)
            // has no kebab-case key: its start flag and END type tell it.
            if first_draft_signs(root) {
                return Some(Dialect::First);
            }
            // The tasks draft in its "state" spelling has no key the others lack.
            return Some(Dialect::Tasks);
        }
        diags
            .error(
                Code::NO_DIALECT,
                root.span,
                "this file matches none of the draft dialects",
            )
            .help(
                "a workflow has `tasks` or `states` (with `startsAt` in v0.1, `starts-at` in the second draft); \
                 or name the dialect explicitly: `first`, `second`, `v0.1` or `tasks`",
            );
        return None;
    };
    let witness = markers.iter().find(|m| m.family == winner)?;
    let mut mixed = false;
    for marker in markers
        .iter()
        .filter(|m| m.family != winner && !m.case_only)
    {
        mixed = true;
        diags
            .error(
                Code::MIXED_DIALECT,
                marker.span,
                format!(
                    "`{}` is a key of {}, but this file is written in {} (see `{}` at {}:{})",
                    marker.key,
                    marker.family.label(),
                    winner.label(),
                    witness.key,
                    witness.span.line,
                    witness.span.col
                ),
            )
            .help(format!(
                "{}; if the file is meant to be in {}, name that dialect explicitly",
                winner.spelling_help(),
                marker.family.label()
            ));
    }
    if mixed {
        return None;
    }
    Some(match winner {
        Family::Tasks => Dialect::Tasks,
        Family::V01 => Dialect::V01,
        Family::Kebab => kebab_draft(root),
    })
}

/// The family the markers show: the only one with top-level keys if there is one, else the one
/// with the most keys (case-only keys count only when there is nothing else); on a tie the later
/// draft.
fn winner(markers: &[Marker]) -> Option<Family> {
    const ORDER: [Family; 3] = [Family::Kebab, Family::V01, Family::Tasks];
    let with_top: Vec<Family> = ORDER
        .into_iter()
        .filter(|family| markers.iter().any(|m| m.family == *family && m.top))
        .collect();
    if let [only] = with_top[..] {
        return Some(only);
    }
    let plain = markers.iter().any(|m| !m.case_only);
    let count = |family: Family| {
        markers
            .iter()
            .filter(|m| m.family == family && (m.case_only != plain))
            .count()
    };
    // `max_by_key` keeps the last of equals: the later draft.
    ORDER
        .into_iter()
        .filter(|family| count(*family) > 0)
        .max_by_key(|family| count(*family))
}

/// The second draft names its start with `starts-at`; the first marks it with `start: true` and
/// has END states. A file with neither is read as the second draft (which also has an `id`).
fn kebab_draft(root: &Node) -> Dialect {
    if has_top_key(root, "starts-at") {
        Dialect::Second
    } else if first_draft_signs(root) {
        Dialect::First
    } else {
        Dialect::Second
    }
}

fn first_draft_signs(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Map(entries) => entries.iter().any(|entry| {
            let start_flag = entry.key.eq_ignore_ascii_case("start")
                && matches!(&entry.value.kind, NodeKind::Scalar(s) if matches!(s.value, ScalarValue::Bool(_)));
            let end_state = entry.key.eq_ignore_ascii_case("type")
                && matches!(&entry.value.kind, NodeKind::Scalar(s) if s.text.eq_ignore_ascii_case("end"));
            start_flag
                || end_state
                || (!is_opaque(entry) && first_draft_signs(&entry.value))
        }),
        NodeKind::Seq(items) => items.iter().any(first_draft_signs),
        NodeKind::Scalar(_) => false,
    }
}

fn has_top_key(root: &Node, key: &str) -> bool {
    matches!(&root.kind, NodeKind::Map(entries) if entries.iter().any(|e| e.key.eq_ignore_ascii_case(key)))
}

fn is_opaque(entry: &Entry) -> bool {
    OPAQUE_KEYS
        .iter()
        .any(|k| k.eq_ignore_ascii_case(&entry.key))
}

fn collect(node: &Node, top: bool, out: &mut Vec<Marker>) {
    match &node.kind {
        NodeKind::Map(entries) => {
            for entry in entries {
                if let Some((family, case_only)) = family_of(entry, top) {
                    out.push(Marker {
                        family,
                        key: entry.key.clone(),
                        span: entry.key_span,
                        top,
                        case_only,
                    });
                }
                if !is_opaque(entry) {
                    collect(&entry.value, false, out);
                }
            }
        }
        NodeKind::Seq(items) => items.iter().for_each(|item| collect(item, false, out)),
        NodeKind::Scalar(_) => {}
    }
}

/// The family a key belongs to, and whether only its case tells it apart.
fn family_of(entry: &Entry, top: bool) -> Option<(Family, bool)> {
    let is = |keys: &[&str]| keys.iter().any(|k| k.eq_ignore_ascii_case(&entry.key));
    if is(KEBAB_KEYS) {
        return Some((Family::Kebab, false));
    }
    if is(V01_KEYS) || (top && is(V01_TOP_KEYS)) {
        return Some((Family::V01, false));
    }
    // v0.1 writes `functionref`/`refname` in lower case where the tasks draft writes
    // `functionRef`/`refName`: only the exact spelling tells them apart.
    if entry.key == "functionref" || entry.key == "refname" {
        return Some((Family::V01, true));
    }
    if entry.key == "functionRef" || entry.key == "refName" {
        return Some((Family::Tasks, true));
    }
    if is(TASKS_KEYS) || (top && is(TASKS_TOP_KEYS)) {
        return Some((Family::Tasks, false));
    }
    // `start: {kind: ...}` and `end: {kind: ...}` are the tasks draft's.
    let kinded = matches!(&entry.value.kind, NodeKind::Map(inner) if inner.iter().any(|e| e.key.eq_ignore_ascii_case("kind")));
    if kinded && (entry.key.eq_ignore_ascii_case("start") || entry.key.eq_ignore_ascii_case("end"))
    {
        return Some((Family::Tasks, false));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::yaml::load;

    fn detect(text: &str) -> (Option<Dialect>, Diagnostics) {
        let mut diags = Diagnostics::new("t.yaml");
        let root = load(text, &mut diags).expect("loads");
        (dialect(&root, None, &mut diags), diags)
    }

    #[test]
    fn each_dialect_is_told_by_its_keys() {
        let cases = [
            ("id: a\nname: a\nstates: []\n", Dialect::Tasks),
            ("id: a\ntasks: []\n", Dialect::Tasks),
            ("id: a\nstartsAt: x\nstates: []\n", Dialect::V01),
            ("id: a\nstarts-at: x\nstates: []\n", Dialect::Second),
            (
                "name: a\nstates:\n- name: x\n  type: END\n  start: true\n  next-state: y\n",
                Dialect::First,
            ),
            (
                "name: a\ntrigger-defs: []\nstates:\n- {name: x, start: true}\n",
                Dialect::First,
            ),
        ];
        for (text, expected) in cases {
            let (found, diags) = detect(text);
            assert_eq!(found, Some(expected), "{text}");
            assert!(diags.items().is_empty(), "{:?}", diags.items());
        }
    }

    #[test]
    fn a_kebab_key_in_a_camel_case_file_is_an_error_at_that_key() {
        let text = "id: a\nstartsAt: x\nstates:\n- name: x\n  type: DELAY\n  next-state: y\n";
        let (found, diags) = detect(text);
        assert_eq!(found, None);
        let d = &diags.items()[0];
        assert_eq!(d.code, Code::MIXED_DIALECT);
        assert_eq!(d.span, Span::new(6, 3));
        assert!(d.message.contains("`next-state`"), "{}", d.message);
        assert!(
            d.message.contains("v0.1 (see `startsAt` at 2:1)"),
            "{}",
            d.message
        );
    }

    #[test]
    fn top_level_keys_outweigh_the_case_of_nested_ones() {
        // v0.1 with the tasks draft's casing of `functionRef`/`refName`.
        let text = "id: a\nstartsAt: A\nstates:\n- name: A\n  type: OPERATION\n  \
                    actions: [{functionRef: {refName: f}}, {functionRef: {refName: g}}]\n  end: true\n";
        let (found, diags) = detect(text);
        assert_eq!(found, Some(Dialect::V01));
        assert!(diags.items().is_empty(), "{:?}", diags.items());
    }

    #[test]
    fn a_first_draft_file_with_an_id_is_still_the_first_draft() {
        let text = "id: a\nname: a\nstates:\n- {name: A, type: DELAY, start: true, time-delay: 1, next-state: B}\n\
                    - {name: B, type: END}\n";
        assert_eq!(detect(text).0, Some(Dialect::First));
    }

    #[test]
    fn user_data_is_not_read_for_tell_tales() {
        let text =
            "id: a\ntasks:\n- name: x\n  type: inject\n  data: {starts-at: 1, startsAt: 2}\n";
        assert_eq!(detect(text).0, Some(Dialect::Tasks));
    }

    #[test]
    fn a_file_without_tell_tales_matches_none() {
        let (found, diags) = detect("name: a\n");
        assert_eq!(found, None);
        assert_eq!(diags.items()[0].code, Code::NO_DIALECT);
    }

    #[test]
    fn an_explicit_dialect_wins() {
        let mut diags = Diagnostics::new("t.yaml");
        let root = load("id: a\nstartsAt: x\n", &mut diags).expect("loads");
        assert_eq!(
            dialect(&root, Some(Dialect::Second), &mut diags),
            Some(Dialect::Second)
        );
    }
}
