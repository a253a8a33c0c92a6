//! Data-condition switches described by data: the generated code writes a switch's conditions
//! as a `static` list of [`Test`]s and [`choose`] evaluates them, so the code that evaluates a
//! condition is compiled once, not once per switch (issue 10, point 4; see `calls` for the
//! same done for operation tasks).

use std::cmp::Ordering;
use std::convert::Infallible;

use serde_json::{Number, Value};

use super::condition::{Comparison, ConditionOp, ConditionValue, data_condition};
use crate::error::{ErrorObject, WorkflowError};
use crate::expr::{LazyRegex, number_order};
use crate::path::JsonPath;
use crate::progress::Attempt;

/// A data condition's `value`, with the number it reads as, read by the code generator.
#[derive(Debug, Clone, Copy)]
pub enum Operand {
    /// A value that does not read as a number.
    Text(&'static str),
    /// A value that reads as this integer.
    Integer(&'static str, i64),
    /// A value that reads as this integer, above `i64::MAX`.
    Unsigned(&'static str, u64),
    /// A value that reads as this finite number.
    Float(&'static str, f64),
}

impl Operand {
    /// The value as [`data_condition`] takes it.
    #[must_use]
    pub fn value(self) -> ConditionValue<'static> {
        match self {
            Operand::Text(text) => ConditionValue::text(text),
            Operand::Integer(text, number) => ConditionValue::integer(text, number),
            Operand::Unsigned(text, number) => ConditionValue::unsigned(text, number),
            Operand::Float(text, number) => ConditionValue::float(text, number),
        }
    }
}

/// One comparison of a data condition: what `path` selects against `value` with `op`.
#[derive(Debug, Clone, Copy)]
pub struct Compare {
    op: ConditionOp,
    comparison: Comparison,
    path: &'static JsonPath,
    value: Operand,
    /// The value compiled as a regular expression, for `Matches` and `NotMatches`.
    regex: Option<&'static LazyRegex>,
}

impl Compare {
    /// What `path` selects, compared with `value` by `op` (`comparison` says how).
    #[must_use]
    pub const fn new(
        op: ConditionOp,
        comparison: Comparison,
        path: &'static JsonPath,
        value: Operand,
    ) -> Self {
        Self {
            op,
            comparison,
            path,
            value,
            regex: None,
        }
    }

    /// The same comparison with its value compiled as a regular expression.
    #[must_use]
    pub const fn regex(self, regex: &'static LazyRegex) -> Self {
        Self {
            regex: Some(regex),
            ..self
        }
    }

    fn holds(&self, data: &Value) -> Result<bool, ErrorObject> {
        // Most conditions compare a number that a plain path names with a number: read without
        // a `Result` or a `Cow`, compared without the condition's value made (issue 10: 270
        // instructions of a switch and one call's 7,500, against 30 for the test by hand).
        if let Some(selected) = self.path.infallible_ref(data)
            && let Some(held) = self.number_test(selected)
        {
            return Ok(held);
        }
        self.holds_in_general(data)
    }

    /// Whether an ordering or an equality test of `selected` against a number holds, as
    /// [`data_condition`] decides it when both are numbers; `None` for any other test,
    /// selection or operand.
    fn number_test(&self, selected: Option<&Value>) -> Option<bool> {
        let (Comparison::Auto, Some(Value::Number(number))) = (self.comparison, selected) else {
            return None;
        };
        let test: fn(Ordering) -> bool = match self.op {
            ConditionOp::Equals | ConditionOp::NotEquals => Ordering::is_eq,
            ConditionOp::LessThan => Ordering::is_lt,
            ConditionOp::LessThanOrEquals => Ordering::is_le,
            ConditionOp::GreaterThan => Ordering::is_gt,
            ConditionOp::GreaterThanOrEquals => Ordering::is_ge,
            _ => return None,
        };
        let order = match self.value {
            // Two integers of `i64`: what `number_order` compares as `i128`s.
            Operand::Integer(_, operand) => match number.as_i64() {
                Some(selected) => Some(selected.cmp(&operand)),
                None => number_order(number, &Number::from(operand)),
            },
            Operand::Unsigned(_, operand) => number_order(number, &Number::from(operand)),
            Operand::Float(_, operand) => number_order(number, &Number::from_f64(operand)?),
            Operand::Text(_) => return None,
        };
        let held = order.is_some_and(test);
        Some(if self.op == ConditionOp::NotEquals {
            !held
        } else {
            held
        })
    }

    fn holds_in_general(&self, data: &Value) -> Result<bool, ErrorObject> {
        let selected = self.path.select_ref(data)?;
        data_condition(
            self.op,
            self.comparison,
            selected.as_deref(),
            &self.value.value(),
            self.regex,
        )
    }
}

/// A data condition: a comparison, or comparisons combined as the workflow writes them.
#[derive(Debug, Clone, Copy)]
pub enum Test {
    /// One comparison.
    Compare(Compare),
    /// Every test holds (evaluated in order, stopping at the first that does not).
    All(&'static [Test]),
    /// Some test holds (evaluated in order, stopping at the first that does).
    Any(&'static [Test]),
    /// The test does not hold.
    Not(&'static Test),
}

impl Test {
    /// What `path` selects compared with `value` by `op`, as numbers where both read as
    /// numbers (see [`Comparison::Auto`]): the form the generated code writes, one line per
    /// comparison where the formatter allows.
    #[must_use]
    pub const fn compare(op: ConditionOp, path: &'static JsonPath, value: Operand) -> Self {
        Test::Compare(Compare::new(op, Comparison::Auto, path, value))
    }

    /// The same comparison made between texts (the `str*` operators); any other test as it is.
    #[must_use]
    pub const fn strings(self) -> Self {
        match self {
            Test::Compare(compare) => Test::Compare(Compare {
                comparison: Comparison::Strings,
                ..compare
            }),
            other => other,
        }
    }

    /// The same comparison with its value compiled as a regular expression (`Matches`,
    /// `NotMatches`); any other test as it is.
    #[must_use]
    pub const fn regex(self, regex: &'static LazyRegex) -> Self {
        match self {
            Test::Compare(compare) => Test::Compare(compare.regex(regex)),
            other => other,
        }
    }

    /// Whether the test holds for `data`.
    ///
    /// # Errors
    /// A path that cannot be evaluated, or a regular expression that does not compile.
    pub fn holds(&self, data: &Value) -> Result<bool, ErrorObject> {
        match self {
            Test::Compare(compare) => compare.holds(data),
            Test::All(tests) => {
                for test in *tests {
                    if !test.holds(data)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Test::Any(tests) => {
                for test in *tests {
                    if test.holds(data)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Test::Not(test) => Ok(!test.holds(data)?),
        }
    }
}

/// The exit a data-condition switch takes for `data`: the position of the first of
/// `conditions` that holds, else the default's (`conditions.len()`).
///
/// # Errors
/// As [`Test::holds`], for the first condition that fails to evaluate.
pub fn choose(
    conditions: &'static [Test],
    data: &Value,
) -> Result<Attempt<Infallible>, ErrorObject> {
    exit(conditions, data).map(Attempt::Exit)
}

/// [`choose`] for a switch that has no retry or onError: the exit taken and the data, or the
/// run's failure with the data (workflow `workflow`, task `task`).
///
/// # Errors
/// As [`choose`], as the run's failure.
pub fn take(
    conditions: &'static [Test],
    data: Value,
    workflow: &'static str,
    task: &'static str,
) -> Result<(usize, Value), WorkflowError> {
    match exit(conditions, &data) {
        Ok(exit) => Ok((exit, data)),
        Err(error) => Err(WorkflowError::new(workflow, task, error, data)),
    }
}

fn exit(conditions: &'static [Test], data: &Value) -> Result<usize, ErrorObject> {
    for (exit, condition) in conditions.iter().enumerate() {
        if condition.holds(data)? {
            return Ok(exit);
        }
    }
    Ok(conditions.len())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::path::Segment;

    static PATH_N: JsonPath = JsonPath::definite("$.n", &[Segment::Key("n")]);
    static PATH_NAME: JsonPath = JsonPath::definite("$.name", &[Segment::Key("name")]);
    static PATH_BAD: JsonPath = JsonPath::query("$[?(@.a ==");
    static STARTS_WITH_A: LazyRegex = LazyRegex::new("^a");

    const fn n(op: ConditionOp, value: Operand) -> Test {
        Test::compare(op, &PATH_N, value)
    }

    #[test]
    fn the_first_condition_that_holds_is_taken_else_the_default() {
        static CONDITIONS: [Test; 3] = [
            n(ConditionOp::GreaterThan, Operand::Integer("10", 10)),
            Test::All(&[
                n(ConditionOp::GreaterThanOrEquals, Operand::Float("1.5", 1.5)),
                Test::Not(&n(ConditionOp::Equals, Operand::Unsigned("3", 3))),
            ]),
            Test::Any(&[
                Test::compare(ConditionOp::Matches, &PATH_NAME, Operand::Text("^a"))
                    .strings()
                    .regex(&STARTS_WITH_A),
                n(ConditionOp::Equals, Operand::Text("x")),
            ]),
        ];
        let exit = |data| match choose(&CONDITIONS, &data) {
            Ok(Attempt::Exit(exit)) => exit,
            other => panic!("{other:?}"),
        };
        assert_eq!(exit(json!({"n": 11})), 0);
        assert_eq!(exit(json!({"n": 2})), 1);
        assert_eq!(exit(json!({"n": 3, "name": "abc"})), 2);
        assert_eq!(exit(json!({"n": 3, "name": "bc"})), 3);
        assert_eq!(exit(json!({})), 3);
    }

    /// A number compared with a number the short way decides as the general way does, for
    /// every operator, operand and selection (integers on both sides of `i64::MAX`, fractions,
    /// numbers written as text, other kinds, nothing), strict paths and string comparisons
    /// included.
    #[test]
    fn a_number_test_decides_as_the_general_one() {
        static PATH_N_STRICT: JsonPath = JsonPath::definite_strict("$.n", &[Segment::Key("n")]);
        const OPS: [ConditionOp; 12] = [
            ConditionOp::Exists,
            ConditionOp::NotExists,
            ConditionOp::Null,
            ConditionOp::NotNull,
            ConditionOp::Equals,
            ConditionOp::NotEquals,
            ConditionOp::LessThan,
            ConditionOp::LessThanOrEquals,
            ConditionOp::GreaterThan,
            ConditionOp::GreaterThanOrEquals,
            ConditionOp::Matches,
            ConditionOp::NotMatches,
        ];
        let operands = [
            Operand::Integer("5", 5),
            Operand::Integer("-3", -3),
            Operand::Integer("9223372036854775807", i64::MAX),
            Operand::Unsigned("18446744073709551615", u64::MAX),
            Operand::Float("5.5", 5.5),
            Operand::Float("-0.25", -0.25),
            Operand::Text("5"),
            Operand::Text("abc"),
        ];
        let selections = [
            json!({"n": 5}),
            json!({"n": -3}),
            json!({"n": 6}),
            json!({"n": 5.5}),
            json!({"n": 5.0}),
            json!({"n": -0.25}),
            json!({"n": i64::MAX}),
            json!({"n": u64::MAX}),
            json!({"n": 9_223_372_036_854_775_808_u64}),
            json!({"n": -1e300}),
            json!({"n": "5"}),
            json!({"n": "abc"}),
            json!({"n": null}),
            json!({"n": [5]}),
            json!({}),
            json!(7),
        ];
        let mut short = 0;
        for op in OPS {
            for operand in operands {
                for (path, kind) in [(&PATH_N, "plain"), (&PATH_N_STRICT, "strict")] {
                    for comparison in [Comparison::Auto, Comparison::Strings] {
                        let compare =
                            Compare::new(op, comparison, path, operand).regex(&STARTS_WITH_A);
                        for data in &selections {
                            let general = compare.holds_in_general(data);
                            assert_eq!(
                                compare.holds(data),
                                general,
                                "{op:?} {operand:?} {comparison:?} {kind} on {data}"
                            );
                            let selected = path.infallible_ref(data).flatten();
                            if let Some(held) = compare.number_test(selected) {
                                assert_eq!(Ok(held), general, "{op:?} {operand:?} on {data}");
                                short += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(short > 300, "the short way decided {short} of them");
    }

    #[test]
    fn a_condition_that_cannot_be_evaluated_fails_the_switch() {
        static CONDITIONS: [Test; 2] = [
            n(ConditionOp::Equals, Operand::Integer("1", 1)),
            Test::compare(ConditionOp::Exists, &PATH_BAD, Operand::Text("")),
        ];
        assert!(matches!(
            choose(&CONDITIONS, &json!({"n": 1})),
            Ok(Attempt::Exit(0))
        ));
        assert!(choose(&CONDITIONS, &json!({"n": 2})).is_err());
        assert_eq!(
            take(&CONDITIONS, json!({"n": 1}), "w", "S").unwrap(),
            (0, json!({"n": 1}))
        );
        let failure = take(&CONDITIONS, json!({"n": 2}), "w", "S").unwrap_err();
        assert_eq!((failure.workflow(), failure.task()), ("w", "S"));
        assert_eq!(failure.data(), &json!({"n": 2}));
    }
}
