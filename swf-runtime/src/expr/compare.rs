//! Comparison operators (`eq ne lt le gt ge`, `== != < <= > >=`).

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// A comparison operator of an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// `eq`, `==`
    Eq,
    /// `ne`, `!=`
    Ne,
    /// `lt`, `<`
    Lt,
    /// `le`, `<=`
    Le,
    /// `gt`, `>`
    Gt,
    /// `ge`, `>=`
    Ge,
}

/// Compares two values the way SpEL compares JSON data:
///
/// - numbers numerically, whatever their representation (`1 eq 1.0`);
/// - strings lexicographically, by Unicode code point;
/// - booleans and `null` only for (in)equality;
/// - arrays and objects by structural equality (numbers inside compared numerically, member
///   order ignored), only for (in)equality.
///
/// Values of different kinds are never equal, and an ordering (`lt`, `ge`…) between values that
/// have none is false; `ne` is always the negation of `eq`.
pub fn compare(op: CompareOp, lhs: &Value, rhs: &Value) -> bool {
    let test = |ordering: fn(Ordering) -> bool| order(lhs, rhs).is_some_and(ordering);
    match op {
        CompareOp::Eq => equal(lhs, rhs),
        CompareOp::Ne => !equal(lhs, rhs),
        CompareOp::Lt => test(Ordering::is_lt),
        CompareOp::Le => test(Ordering::is_le),
        CompareOp::Gt => test(Ordering::is_gt),
        CompareOp::Ge => test(Ordering::is_ge),
    }
}

fn order(lhs: &Value, rhs: &Value) -> Option<Ordering> {
    match (lhs, rhs) {
        (Value::Number(a), Value::Number(b)) => number_order(a, b),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        _ => None,
    }
}

/// Orders two numbers, exactly for integers (even beyond the 2^53 that an `f64` holds exactly).
pub(crate) fn number_order(a: &Number, b: &Number) -> Option<Ordering> {
    let integer = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (integer(a), integer(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

fn equal(lhs: &Value, rhs: &Value) -> bool {
    match (lhs, rhs) {
        (Value::Number(a), Value::Number(b)) => number_order(a, b) == Some(Ordering::Equal),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| equal(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, x)| b.get(key).is_some_and(|y| equal(x, y)))
        }
        _ => lhs == rhs,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use CompareOp::*;

    #[test]
    fn numbers_compare_numerically_across_representations() {
        assert!(compare(Eq, &json!(1), &json!(1.0)));
        assert!(compare(Lt, &json!(2), &json!(10)));
        assert!(compare(Ge, &json!(-1), &json!(-1.5)));
        assert!(compare(Gt, &json!(u64::MAX), &json!(i64::MAX)));
        assert!(compare(
            Ne,
            &json!(9_007_199_254_740_993_u64),
            &json!(9_007_199_254_740_992_u64)
        ));
        assert!(compare(Le, &json!(0.5), &json!(1)));
    }

    #[test]
    fn strings_compare_lexicographically() {
        assert!(compare(Lt, &json!("apple"), &json!("banana")));
        assert!(compare(Lt, &json!("10"), &json!("9")));
        assert!(compare(Eq, &json!("MANAGER"), &json!("MANAGER")));
        assert!(compare(Ne, &json!("a"), &json!("A")));
    }

    #[test]
    fn booleans_and_null_only_compare_for_equality() {
        assert!(compare(Eq, &json!(true), &json!(true)));
        assert!(compare(Ne, &json!(true), &json!(false)));
        assert!(compare(Eq, &Value::Null, &Value::Null));
        assert!(!compare(Lt, &json!(false), &json!(true)));
        assert!(!compare(Ge, &Value::Null, &Value::Null));
    }

    #[test]
    fn different_kinds_are_unequal_and_unordered() {
        assert!(!compare(Eq, &json!(1), &json!("1")));
        assert!(compare(Ne, &json!(1), &json!("1")));
        assert!(!compare(Lt, &json!(1), &json!("2")));
        assert!(!compare(Gt, &json!("2"), &json!(1)));
        assert!(!compare(Eq, &Value::Null, &json!(false)));
    }

    #[test]
    fn containers_compare_structurally() {
        assert!(compare(
            Eq,
            &json!([1, {"a": 2.0}]),
            &json!([1.0, {"a": 2}])
        ));
        assert!(compare(
            Eq,
            &json!({"a": 1, "b": 2}),
            &json!({"b": 2, "a": 1})
        ));
        assert!(compare(Ne, &json!([1, 2]), &json!([2, 1])));
        assert!(compare(Ne, &json!({"a": 1}), &json!({"a": 1, "b": null})));
        assert!(!compare(Lt, &json!([1]), &json!([2])));
    }
}
