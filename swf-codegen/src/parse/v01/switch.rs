//! SWITCH states: `choices` (single, `and`, `or`, `not`) over the state's data, and `default`.

use super::V01;
use crate::diagnostic::Code;
use crate::ir::{Comparison, DataCondition, DataTest, Operator, Switch, SwitchConditions};
use crate::parse::reader::{self, MapReader};
use crate::parse::yaml::{Entry, Node, NodeKind};
use crate::source::Span;

/// The draft's operators, matched regardless of case.
const OPERATORS: &[(&str, Operator)] = &[
    ("Exists", Operator::Exists),
    ("Equals", Operator::Equals),
    ("LessThan", Operator::LessThan),
    ("LessThanEquals", Operator::LessThanOrEquals),
    ("GreaterThan", Operator::GreaterThan),
    ("GreaterThanEquals", Operator::GreaterThanOrEquals),
];

const COMBINATORS: &[&str] = &["and", "or", "not"];

const COMPARISON_KEYS: &[&str] = &["path", "value", "operator"];

impl V01<'_> {
    pub(super) fn switch(&mut self, map: &mut MapReader<'_>) -> Switch {
        let choices = map
            .take(&["choices"])
            .map(|n| self.choices(n))
            .unwrap_or_default();
        let default = map.take(&["default"]).and_then(|n| self.transition(n));
        Switch {
            conditions: SwitchConditions::Data(choices),
            default,
            event_timeout: None,
        }
    }

    fn choices(&mut self, node: &Node) -> Vec<DataCondition> {
        reader::list(node, "choices", self.cx.diags)
            .iter()
            .filter_map(|item| self.choice(item))
            .collect()
    }

    /// `{path, value, operator, transition}`, or `{and|or: [comparisons], transition}`, or
    /// `{not: comparison, transition}`.
    ///
    /// A choice whose test cannot be read (its problem is reported) is kept as a test that never
    /// holds, so that validation does not also report the switch as having no choices.
    fn choice(&mut self, node: &Node) -> Option<DataCondition> {
        let mut map = MapReader::new(node, "choice", self.cx.diags)?;
        let combinators: Vec<(&'static str, &Entry)> = COMBINATORS
            .iter()
            .filter_map(|word| map.take_entry(&[*word]).map(|e| (*word, e)))
            .collect();
        let transition = map.take(&["transition"]).and_then(|n| self.transition(n));
        let metadata = map.verbatim(&["metadata"]);
        let span = map.span();
        let test = match combinators.as_slice() {
            [] => self.comparison_fields(&mut map).map(DataTest::Compare),
            [(word, entry), rest @ ..] => {
                for (extra, entry) in rest {
                    self.not_allowed(
                        entry.key_span,
                        format!(
                            "this choice is already an `{word}` choice; it cannot also be `{extra}`"
                        ),
                        "write one choice per `and`, `or` or `not`; to combine them, give each \
                         its own transition",
                    );
                }
                for key in COMPARISON_KEYS {
                    if let Some(misplaced) = map.take_entry(&[*key]) {
                        self.not_allowed(
                            misplaced.key_span,
                            format!("`{key}` does not belong on an `{word}` choice"),
                            &format!(
                                "in an `{word}` choice, `path`, `value` and `operator` belong \
                                 inside {}",
                                if *word == "not" {
                                    "`not: {path, value, operator}`"
                                } else {
                                    "each item of the list: `- {path, value, operator}`"
                                }
                            ),
                        );
                    }
                }
                self.combined(word, &entry.value)
            }
        };
        map.finish(self.cx.diags);
        Some(DataCondition {
            test: test.unwrap_or(DataTest::Any(Vec::new())),
            transition,
            metadata,
            span,
        })
    }

    fn combined(&mut self, word: &str, node: &Node) -> Option<DataTest> {
        if word == "not" {
            let inner = self.comparison(node)?;
            return Some(DataTest::Not(Box::new(DataTest::Compare(inner))));
        }
        let items = reader::list(node, word, self.cx.diags);
        if items.is_empty() && matches!(node.kind, NodeKind::Seq(_)) {
            // An empty `and` would always hold and an empty `or` never: surely a mistake.
            self.cx
                .diags
                .error(
                    Code::INVALID_VALUE,
                    node.span,
                    format!("`{word}` holds no comparison"),
                )
                .help("list at least one comparison: `{path, value, operator}`");
            return None;
        }
        // Every item is read (and its problems reported) even after one fails.
        let tests: Vec<Option<Comparison>> = items.iter().map(|i| self.comparison(i)).collect();
        let tests: Option<Vec<DataTest>> = tests
            .into_iter()
            .map(|t| t.map(DataTest::Compare))
            .collect();
        let tests = tests?;
        Some(if word == "and" {
            DataTest::All(tests)
        } else {
            DataTest::Any(tests)
        })
    }

    /// `{path, value, operator}`: an item of an `and`/`or` list, or the operand of `not`.
    fn comparison(&mut self, node: &Node) -> Option<Comparison> {
        let mut map = MapReader::new(node, "comparison", self.cx.diags)?;
        let comparison = self.comparison_fields(&mut map);
        map.finish(self.cx.diags);
        comparison
    }

    /// `path`, `value` and `operator` read from `map`. A missing `path` or `value` is left to
    /// validation, which knows which operators need a value.
    fn comparison_fields(&mut self, map: &mut MapReader<'_>) -> Option<Comparison> {
        let span: Span = map.span();
        let path = map.take(&["path"]).and_then(|n| self.cx.path(n, "path"));
        let value = map
            .take(&["value"])
            .and_then(|n| reader::string(n, "value", self.cx.diags));
        let operator = map
            .require(&["operator"])
            .and_then(|n| reader::enumerated(n, "choice operator", OPERATORS, self.cx.diags))?;
        Some(Comparison {
            path,
            value,
            operator,
            span,
        })
    }
}
