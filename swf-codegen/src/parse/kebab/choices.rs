//! SWITCH states: `choices` and `default`. The second draft writes a choice as one of
//! `single`/`and`/`or`/`not` holding a list of comparisons; the first as a `condition` that
//! nests `and`/`or`/`not` freely.

use super::{Kebab, placeholder_transition};
use crate::diagnostic::Code;
use crate::ir::{
    Comparison, DataCondition, DataTest, Operator, Switch, SwitchConditions, Transition,
};
use crate::parse::reader::{self, MapReader};
use crate::parse::yaml::{Entry, Node, NodeKind};
use crate::source::{Span, Spanned};

/// An operator and whether its value must be a number (the second draft's `EQ`, `LT`, ...).
type OperatorWord = (Operator, bool);

/// The second draft's operators, then the v0.1 names that the first draft uses (and that
/// implementations of the second draft's era wrote too). Matched regardless of case.
const OPERATORS: &[(&str, OperatorWord)] = &[
    ("EQ", (Operator::Equals, true)),
    ("LT", (Operator::LessThan, true)),
    ("LTEQ", (Operator::LessThanOrEquals, true)),
    ("GT", (Operator::GreaterThan, true)),
    ("GTEQ", (Operator::GreaterThanOrEquals, true)),
    ("StrEQ", (Operator::StrEquals, false)),
    ("StrLT", (Operator::StrLessThan, false)),
    ("StrLTEQ", (Operator::StrLessThanOrEquals, false)),
    ("StrGT", (Operator::StrGreaterThan, false)),
    ("StrGTEQ", (Operator::StrGreaterThanOrEquals, false)),
    ("Exists", (Operator::Exists, false)),
    ("Equals", (Operator::Equals, false)),
    ("LessThan", (Operator::LessThan, false)),
    ("LessThanEquals", (Operator::LessThanOrEquals, false)),
    ("GreaterThan", (Operator::GreaterThan, false)),
    ("GreaterThanEquals", (Operator::GreaterThanOrEquals, false)),
];

/// The keys that combine comparisons in a choice (second draft) or a condition (first).
const COMBINATORS: &[&str] = &["single", "and", "or", "not"];

impl Kebab<'_> {
    pub(super) fn switch(&mut self, map: &mut MapReader<'_>) -> Switch {
        // A missing `choices` or `default` is reported here; the placeholders keep validation
        // from reporting it again in other words.
        let conditions = match map.require(&["choices"]) {
            Some(n) => self.choices(n),
            None => vec![never(map.span(), Some(placeholder_transition(map.span())))],
        };
        let default = match map.require(&["default"]) {
            Some(n) => self.next_state(n),
            None => Some(placeholder_transition(map.span())),
        };
        Switch {
            conditions: SwitchConditions::Data(conditions),
            default,
            event_timeout: None,
        }
    }

    fn choices(&mut self, node: &Node) -> Vec<DataCondition> {
        let mut out = Vec::new();
        for item in reader::list(node, "choices", self.cx.diags) {
            let Some(mut map) = MapReader::new(item, "choice", self.cx.diags) else {
                continue;
            };
            let test = if self.second() {
                self.choice_test(&mut map)
            } else if let Some(inline) = inline_condition(item) {
                // The choice written with its condition inline (`{path, value, operator,
                // next-state}`, `{and: [...], next-state}`), as the first draft's choice schema
                // (`allOf` of the condition and `next-state`) and the 2019 implementations do.
                for key in INLINE_KEYS {
                    map.take(&[key]);
                }
                self.condition(&inline)
            } else {
                map.require(&["condition"]).and_then(|n| self.condition(n))
            };
            let transition = match map.require(&["next-state"]) {
                Some(n) => self.next_state(n),
                None => Some(placeholder_transition(map.span())),
            };
            let metadata = map.verbatim(&["metadata"]);
            let span = map.span();
            map.finish(self.cx.diags);
            // A choice whose test is wrong (and reported) stays, never holding, so that the
            // switch does not also look empty.
            out.push(match test {
                Some(test) => DataCondition {
                    test,
                    transition,
                    metadata,
                    span,
                },
                None => never(span, transition),
            });
        }
        out
    }

    /// The second draft's choice: exactly one of `single`, `and`, `or`, `not`, each a list of
    /// comparisons. `not` holds when none of its comparisons does.
    fn choice_test(&mut self, map: &mut MapReader<'_>) -> Option<DataTest> {
        let mut found: Vec<&Entry> = COMBINATORS
            .iter()
            .filter_map(|key| map.take_entry(&[key]))
            .collect();
        // The one written first counts; the others are the mistake.
        found.sort_by_key(|e| e.key_span);
        let Some((entry, extra)) = found.split_first() else {
            self.cx
                .diags
                .error(
                    Code::MISSING_FIELD,
                    map.span(),
                    "this choice has none of `single`, `and`, `or`, `not`",
                )
                .help(
                    "write the choice's comparisons under one of them, such as \
                     `single: [{path: $.age, operator: GTEQ, value: '18'}]`",
                );
            return None;
        };
        for other in extra {
            self.cx
                .diags
                .error(
                    Code::INVALID_VALUE,
                    other.key_span,
                    format!(
                        "a choice has one of `single`, `and`, `or`, `not`, but this one has both \
                         `{}` and `{}`",
                        entry.key, other.key
                    ),
                )
                .help("split it into two choices, each with its own `next-state`");
        }
        let items = reader::list(&entry.value, &entry.key, self.cx.diags);
        if items.is_empty() {
            self.cx
                .diags
                .error(
                    Code::INVALID_VALUE,
                    entry.value.span,
                    format!("`{}` holds no comparison", entry.key),
                )
                .help("list at least one comparison: `{path, operator, value}`");
            return None;
        }
        let key = entry.key.to_ascii_lowercase();
        if key == "single"
            && let Some(second) = items.get(1)
        {
            self.cx
                .diags
                .error(
                    Code::INVALID_VALUE,
                    second.span,
                    format!(
                        "`single` holds exactly one comparison, but this one holds {}",
                        items.len()
                    ),
                )
                .help(
                    "use `and` if all of them must hold, or `or` if any of them may, or split \
                     them into several choices",
                );
        }
        let comparisons: Vec<DataTest> = items
            .iter()
            .filter_map(|item| self.comparison(item))
            .map(DataTest::Compare)
            .collect();
        if comparisons.len() != items.len() {
            return None;
        }
        Some(match key.as_str() {
            "single" => comparisons.into_iter().next()?,
            "and" => DataTest::All(comparisons),
            "or" => DataTest::Any(comparisons),
            _ => DataTest::Not(Box::new(DataTest::Any(comparisons))),
        })
    }

    /// The first draft's condition: a comparison, or `and`/`or` over a list of conditions, or
    /// `not` over one, nested freely.
    fn condition(&mut self, node: &Node) -> Option<DataTest> {
        let combines = match &node.kind {
            NodeKind::Map(entries) => entries.iter().any(|e| {
                COMBINATORS[1..]
                    .iter()
                    .any(|key| key.eq_ignore_ascii_case(&e.key))
            }),
            _ => false,
        };
        if !combines {
            return self.comparison(node).map(DataTest::Compare);
        }
        let mut map = MapReader::new(node, "condition", self.cx.diags)?;
        let mut found: Vec<&Entry> = COMBINATORS[1..]
            .iter()
            .filter_map(|key| map.take_entry(&[key]))
            .collect();
        // The one written first counts; the others are the mistake.
        found.sort_by_key(|e| e.key_span);
        map.finish(self.cx.diags);
        let (entry, extra) = found.split_first()?;
        for other in extra {
            self.cx
                .diags
                .error(
                    Code::INVALID_VALUE,
                    other.key_span,
                    format!(
                        "a condition has one of `and`, `or`, `not`, but this one has both `{}` \
                         and `{}`",
                        entry.key, other.key
                    ),
                )
                .help(format!(
                    "nest them: put the `{}` condition inside the `{}` one, or the other way round",
                    other.key, entry.key
                ));
        }
        let key = entry.key.to_ascii_lowercase();
        if key == "not" {
            return self
                .condition(&entry.value)
                .map(|inner| DataTest::Not(Box::new(inner)));
        }
        let items = reader::list(&entry.value, &entry.key, self.cx.diags);
        if items.is_empty() {
            self.cx
                .diags
                .error(
                    Code::INVALID_VALUE,
                    entry.value.span,
                    format!("`{}` holds no condition", entry.key),
                )
                .help(
                    "list at least one condition: `{path, operator, value}`, `and`, `or` or `not`",
                );
            return None;
        }
        let conditions: Vec<DataTest> = items
            .iter()
            .filter_map(|item| self.condition(item))
            .collect();
        if conditions.len() != items.len() {
            return None;
        }
        Some(if key == "and" {
            DataTest::All(conditions)
        } else {
            DataTest::Any(conditions)
        })
    }

    /// `{path, value, operator}`. A missing `path` or `value` is reported by validation, which
    /// knows which operators need a value.
    fn comparison(&mut self, node: &Node) -> Option<Comparison> {
        let mut map = MapReader::new(node, "comparison", self.cx.diags)?;
        let path = map.take(&["path"]).and_then(|n| self.cx.path(n, "path"));
        let value = map
            .take(&["value"])
            .and_then(|n| reader::string(n, "value", self.cx.diags));
        let operator = map
            .require(&["operator"])
            .and_then(|n| reader::enumerated(n, "choice operator", OPERATORS, self.cx.diags));
        let span = map.span();
        map.finish(self.cx.diags);
        let operator = operator?;
        let (op, numeric) = operator.value;
        match &value {
            Some(value) if numeric && !is_number(&value.value) => {
                self.cx
                    .diags
                    .error(
                        Code::INVALID_VALUE,
                        value.span,
                        format!(
                            "`{}` compares numbers, but `{}` is not a number",
                            operator_word(op),
                            value.value
                        ),
                    )
                    .help(format!(
                        "write a number, or compare text with `Str{}`",
                        operator_word(op)
                    ));
            }
            _ => {}
        }
        Some(Comparison {
            path,
            value,
            operator: Spanned::new(op, operator.span),
            span,
        })
    }
}

/// The keys of a condition written inline in a first-draft choice.
const INLINE_KEYS: [&str; 6] = ["path", "value", "operator", "and", "or", "not"];

/// The condition of a first-draft choice written inline, without `condition`: the choice's
/// own keys but `next-state` and `metadata`. `None` when the choice has a `condition` or none
/// of the condition keys.
fn inline_condition(choice: &Node) -> Option<Node> {
    let NodeKind::Map(entries) = &choice.kind else {
        return None;
    };
    let has = |keys: &[&str]| {
        entries
            .iter()
            .any(|e| keys.iter().any(|k| k.eq_ignore_ascii_case(&e.key)))
    };
    if has(&["condition"]) || !has(&INLINE_KEYS) {
        return None;
    }
    let condition = entries
        .iter()
        .filter(|e| INLINE_KEYS.iter().any(|k| k.eq_ignore_ascii_case(&e.key)))
        .cloned()
        .collect();
    Some(Node {
        kind: NodeKind::Map(condition),
        span: choice.span,
    })
}

/// A choice that never holds, standing for one whose mistakes are reported.
fn never(span: Span, transition: Option<Transition>) -> DataCondition {
    DataCondition {
        test: DataTest::Any(Vec::new()),
        transition,
        metadata: None,
        span,
    }
}

fn is_number(text: &str) -> bool {
    text.parse::<f64>().is_ok_and(f64::is_finite)
}

/// The second draft's spelling of a numeric operator, for messages.
fn operator_word(op: Operator) -> &'static str {
    match op {
        Operator::LessThan => "LT",
        Operator::LessThanOrEquals => "LTEQ",
        Operator::GreaterThan => "GT",
        Operator::GreaterThanOrEquals => "GTEQ",
        _ => "EQ",
    }
}
