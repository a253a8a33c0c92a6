//! Evaluating one data condition.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::{Number, Value};

use crate::error::ErrorObject;
use crate::expr::{LazyRegex, matches, number_order};

/// The operator of a data condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConditionOp {
    /// The path selects something.
    Exists,
    /// The path selects nothing.
    NotExists,
    /// The path selects nothing, or `null`.
    Null,
    /// The path selects something other than `null`.
    NotNull,
    /// The selection equals the value.
    Equals,
    /// The selection does not equal the value (or nothing is selected).
    NotEquals,
    /// The selection is less than the value.
    LessThan,
    /// The selection is less than or equal to the value.
    LessThanOrEquals,
    /// The selection is greater than the value.
    GreaterThan,
    /// The selection is greater than or equal to the value.
    GreaterThanOrEquals,
    /// The selection matches the regular expression in the value.
    Matches,
    /// The selection does not match the regular expression (or nothing is selected).
    NotMatches,
}

/// How a data condition compares the selection with its `value` string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Comparison {
    /// Numerically when both are numbers (the selection is a JSON number and the value parses as
    /// one), otherwise as strings.
    Auto,
    /// Always as strings: the second draft's `StrEQ`, `StrLT`… operators.
    Strings,
}

/// A data condition's `value`, with the number it reads as (if it does), so that the number is
/// parsed once, by the code generator, not at every evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct ConditionValue<'a> {
    text: &'a str,
    number: Option<Number>,
}

impl<'a> ConditionValue<'a> {
    /// A value that does not read as a number.
    pub fn text(text: &'a str) -> Self {
        Self { text, number: None }
    }

    /// A value that reads as this integer.
    pub fn integer(text: &'a str, number: i64) -> Self {
        Self {
            text,
            number: Some(Number::from(number)),
        }
    }

    /// A value that reads as this integer, above `i64::MAX`.
    pub fn unsigned(text: &'a str, number: u64) -> Self {
        Self {
            text,
            number: Some(Number::from(number)),
        }
    }

    /// A value that reads as this finite number.
    pub fn float(text: &'a str, number: f64) -> Self {
        Self {
            text,
            number: Number::from_f64(number),
        }
    }

    /// The value `text`, read as a number if it is one: exactly for integers, else as a
    /// finite `f64` (what the code generator does at build time).
    pub fn parse(text: &'a str) -> Self {
        Self {
            text,
            number: parse_number(text),
        }
    }

    /// The value as written.
    pub fn as_str(&self) -> &'a str {
        self.text
    }
}

/// Evaluates a data condition on `selected`, what the condition's path selected (`None` when
/// nothing).
///
/// Compared as strings, a string selection is used as itself and any other as its JSON text.
/// An ordering or equality test on nothing is false (so `NotEquals` on nothing is true), as is a
/// `Matches` on nothing. `regex` is the value compiled by the code generator, required for the
/// two regular-expression operators.
///
/// # Errors
/// A `DataError` when a regular-expression operator gets no regular expression, or the regular
/// expression does not compile.
pub fn data_condition(
    op: ConditionOp,
    comparison: Comparison,
    selected: Option<&Value>,
    value: &ConditionValue<'_>,
    regex: Option<&LazyRegex>,
) -> Result<bool, ErrorObject> {
    let ordered = |test: fn(Ordering) -> bool| order(comparison, selected, value).is_some_and(test);
    Ok(match op {
        ConditionOp::Exists => selected.is_some(),
        ConditionOp::NotExists => selected.is_none(),
        ConditionOp::Null => selected.is_none_or(Value::is_null),
        ConditionOp::NotNull => selected.is_some_and(|found| !found.is_null()),
        ConditionOp::Equals => ordered(Ordering::is_eq),
        ConditionOp::NotEquals => !ordered(Ordering::is_eq),
        ConditionOp::LessThan => ordered(Ordering::is_lt),
        ConditionOp::LessThanOrEquals => ordered(Ordering::is_le),
        ConditionOp::GreaterThan => ordered(Ordering::is_gt),
        ConditionOp::GreaterThanOrEquals => ordered(Ordering::is_ge),
        ConditionOp::Matches => regex_match(regex, selected, value.text)?,
        ConditionOp::NotMatches => !regex_match(regex, selected, value.text)?,
    })
}

/// How the selection orders against the condition's value; `None` when nothing is selected.
fn order(
    comparison: Comparison,
    selected: Option<&Value>,
    value: &ConditionValue<'_>,
) -> Option<Ordering> {
    let selected = selected?;
    if comparison == Comparison::Auto
        && let (Value::Number(number), Some(parsed)) = (selected, &value.number)
    {
        return number_order(number, parsed);
    }
    let text: Cow<'_, str> = match selected {
        Value::String(text) => Cow::Borrowed(text),
        other => Cow::Owned(other.to_string()),
    };
    Some(text.as_ref().cmp(value.text))
}

/// The condition's value as a number: exactly for integers, else as a finite `f64`.
fn parse_number(value: &str) -> Option<Number> {
    if let Ok(integer) = value.parse::<i64>() {
        return Some(Number::from(integer));
    }
    if let Ok(integer) = value.parse::<u64>() {
        return Some(Number::from(integer));
    }
    // `from_f64` refuses NaN and infinities, which `str::parse` accepts ("NaN", "inf").
    value.parse::<f64>().ok().and_then(Number::from_f64)
}

fn regex_match(
    regex: Option<&LazyRegex>,
    selected: Option<&Value>,
    value: &str,
) -> Result<bool, ErrorObject> {
    let Some(regex) = regex else {
        return Err(ErrorObject::new(
            ErrorObject::DATA,
            format!(
                "the condition with value `{value}` matches a regular expression but none was \
                 compiled for it"
            ),
        ));
    };
    match selected {
        Some(found) => matches(regex, found),
        // Still compiled, so a broken pattern is reported whatever the data.
        None => matches(regex, &Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use Comparison::{Auto, Strings};
    use ConditionOp::*;

    fn check(
        op: ConditionOp,
        comparison: Comparison,
        selected: Option<&Value>,
        value: &str,
    ) -> bool {
        data_condition(
            op,
            comparison,
            selected,
            &ConditionValue::parse(value),
            None,
        )
        .unwrap_or_else(|err| panic!("{err}"))
    }

    #[test]
    fn presence_operators() {
        let null = Value::Null;
        let zero = json!(0);
        assert!(check(Exists, Auto, Some(&null), ""));
        assert!(!check(Exists, Auto, None, ""));
        assert!(check(NotExists, Auto, None, ""));
        assert!(check(Null, Auto, None, ""));
        assert!(check(Null, Auto, Some(&null), ""));
        assert!(!check(Null, Auto, Some(&zero), ""));
        assert!(check(NotNull, Auto, Some(&zero), ""));
        assert!(!check(NotNull, Auto, Some(&null), ""));
        assert!(!check(NotNull, Auto, None, ""));
    }

    #[test]
    fn numbers_compare_numerically_when_both_sides_are_numbers() {
        let nine = json!(9);
        assert!(check(LessThan, Auto, Some(&nine), "10"));
        assert!(check(Equals, Auto, Some(&json!(10.0)), "10"));
        assert!(check(Equals, Auto, Some(&json!(10)), "1e1"));
        assert!(check(GreaterThanOrEquals, Auto, Some(&json!(2.5)), "2.5"));
        assert!(check(LessThanOrEquals, Auto, Some(&json!(-3)), "-3"));
        assert!(check(
            GreaterThan,
            Auto,
            Some(&json!(u64::MAX)),
            "18446744073709551614"
        ));
    }

    #[test]
    fn otherwise_they_compare_as_strings() {
        // A numeric-looking string selection is still a string: "9" > "10" as text.
        assert!(check(GreaterThan, Auto, Some(&json!("9")), "10"));
        assert!(check(Equals, Auto, Some(&json!("John")), "John"));
        assert!(check(LessThan, Auto, Some(&json!("Anna")), "John"));
        // A number against a value that is not one compares as JSON text.
        assert!(
            check(Equals, Auto, Some(&json!(10)), "10")
                && !check(Equals, Auto, Some(&json!(10)), "ten")
        );
        assert!(check(Equals, Auto, Some(&json!(true)), "true"));
        assert!(check(Equals, Auto, Some(&json!([1, 2])), "[1,2]"));
        // NaN and infinities are not numbers here.
        assert!(!check(Equals, Auto, Some(&json!(1)), "NaN"));
        assert!(check(LessThan, Auto, Some(&json!(1)), "inf"));
    }

    #[test]
    fn string_comparisons_never_compare_numerically() {
        let nine = json!(9);
        assert!(check(GreaterThan, Strings, Some(&nine), "10"));
        assert!(!check(Equals, Strings, Some(&json!(10.0)), "10"));
        assert!(check(Equals, Strings, Some(&json!(10)), "10"));
    }

    #[test]
    fn comparisons_on_nothing_are_false_and_not_equals_is_their_negation() {
        for op in [
            Equals,
            LessThan,
            LessThanOrEquals,
            GreaterThan,
            GreaterThanOrEquals,
        ] {
            assert!(!check(op, Auto, None, "1"), "{op:?}");
        }
        assert!(check(NotEquals, Auto, None, "1"));
        assert!(check(NotEquals, Auto, Some(&json!(2)), "1"));
        assert!(!check(NotEquals, Auto, Some(&json!(1.0)), "1"));
    }

    #[test]
    fn regular_expressions() {
        static EMAIL: LazyRegex = LazyRegex::new(r"(?i)\b[A-Z0-9._%+-]+@[A-Z0-9.-]+\.[A-Z]{2,}\b");
        let value = r"\b[A-Z0-9._%+-]+@[A-Z0-9.-]+\.[A-Z]{2,}\b";
        let email = json!("john@example.com");
        let other = json!("nope");
        let value = ConditionValue::parse(value);
        let run = |op, selected| data_condition(op, Auto, selected, &value, Some(&EMAIL));
        assert_eq!(run(Matches, Some(&email)), Ok(true));
        assert_eq!(run(NotMatches, Some(&email)), Ok(false));
        assert_eq!(run(Matches, Some(&other)), Ok(false));
        assert_eq!(run(Matches, None), Ok(false));
        assert_eq!(run(NotMatches, None), Ok(true));
    }

    #[test]
    fn a_regex_operator_without_a_regex_is_a_data_error() {
        for op in [Matches, NotMatches] {
            let Err(err) = data_condition(
                op,
                Auto,
                Some(&json!("x")),
                &ConditionValue::parse("x+"),
                None,
            ) else {
                panic!("{op:?} needs a regular expression");
            };
            assert_eq!(err.name, ErrorObject::DATA);
        }
    }
}
