//! Operands and truth of expressions: JSONPath operands (`$.error.name`,
//! `#jsonPath(data, '$..user.title')`), bare names (`name`), and JSONPath used as a condition.

use serde_json::Value;

use crate::error::ErrorObject;
use crate::path::JsonPath;

/// Whether a value counts as true in a condition: everything but `null` and `false`.
pub fn truthy(value: &Value) -> bool {
    !matches!(value, Value::Null | Value::Bool(false))
}

/// The value of a JSONPath operand.
///
/// A definite path gives the value, or `null` when absent. A query gives its only match when it
/// has exactly one, so that `#jsonPath(data, '$..user.title') eq 'MANAGER'` compares the title
/// itself; otherwise the array of all matches (empty when none).
///
/// # Errors
/// A `DataError` when the query engine fails.
pub fn operand_path(path: &JsonPath, data: &Value) -> Result<Value, ErrorObject> {
    let found = path.matches(data)?;
    Ok(match (path.is_definite(), found.as_slice()) {
        (true, []) => Value::Null,
        (_, [only]) => (*only).clone(),
        _ => Value::Array(found.into_iter().cloned().collect()),
    })
}

/// The value of a bare name, resolved against the object the expression is evaluated on (the
/// error object for `onError`, for example): the member with that name, or `null`.
pub fn operand_name(scope: &Value, name: &str) -> Value {
    scope.get(name).cloned().unwrap_or(Value::Null)
}

/// A JSONPath used as a condition (expression language `jsonpath`): true when it selects at
/// least one value that is neither `false` nor `null`.
///
/// # Errors
/// A `DataError` when the query engine fails.
pub fn path_test(path: &JsonPath, data: &Value) -> Result<bool, ErrorObject> {
    Ok(path.matches(data)?.into_iter().any(truthy))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::expr::{CompareOp, compare};
    use crate::path::Segment;

    static ERROR_NAME: JsonPath = JsonPath::definite(
        "$.error.name",
        &[Segment::Key("error"), Segment::Key("name")],
    );
    static TITLES: JsonPath = JsonPath::query("$..user.title");
    static DONE: JsonPath = JsonPath::query("$.orders[*].done");

    #[test]
    fn truthiness() {
        assert!(!truthy(&Value::Null));
        assert!(!truthy(&json!(false)));
        for value in [json!(true), json!(0), json!(""), json!([]), json!({})] {
            assert!(truthy(&value), "{value}");
        }
    }

    #[test]
    fn definite_operands() {
        let data = json!({"error": {"name": "FunctionExecutionError"}});
        assert_eq!(
            operand_path(&ERROR_NAME, &data),
            Ok(json!("FunctionExecutionError"))
        );
        assert_eq!(operand_path(&ERROR_NAME, &json!({})), Ok(Value::Null));
    }

    #[test]
    fn a_query_with_one_match_is_that_match() {
        let data = json!({"applicant": {"user": {"title": "MANAGER"}}});
        let title = operand_path(&TITLES, &data).unwrap_or_default();
        assert!(compare(CompareOp::Eq, &title, &json!("MANAGER")));
    }

    #[test]
    fn a_query_with_zero_or_many_matches_is_an_array() {
        let data = json!({"a": {"user": {"title": "X"}}, "b": {"user": {"title": "Y"}}});
        assert_eq!(operand_path(&TITLES, &data), Ok(json!(["X", "Y"])));
        assert_eq!(operand_path(&TITLES, &json!({})), Ok(json!([])));
    }

    #[test]
    fn names_resolve_against_the_scope() {
        let error = json!({"name": "TimeoutError", "message": "slow"});
        assert_eq!(operand_name(&error, "name"), json!("TimeoutError"));
        assert_eq!(operand_name(&error, "code"), Value::Null);
        assert_eq!(operand_name(&json!("not an object"), "name"), Value::Null);
    }

    #[test]
    fn path_tests_need_a_value_other_than_false_or_null() {
        assert_eq!(
            path_test(&ERROR_NAME, &json!({"error": {"name": "E"}})),
            Ok(true)
        );
        assert_eq!(
            path_test(&ERROR_NAME, &json!({"error": {"name": null}})),
            Ok(false)
        );
        assert_eq!(path_test(&ERROR_NAME, &json!({})), Ok(false));
        let orders = |done: Value| json!({"orders": [{"done": false}, {"done": done}]});
        assert_eq!(path_test(&DONE, &orders(json!(false))), Ok(false));
        assert_eq!(path_test(&DONE, &orders(json!(true))), Ok(true));
        assert_eq!(path_test(&DONE, &json!({"orders": []})), Ok(false));
    }
}
