//! The elements a foreach task iterates over.

use serde_json::Value;

use crate::data::kind::with_article;
use crate::error::ErrorObject;
use crate::path::JsonPath;

/// The elements `path` selects in `data` for a foreach task, borrowed: the array a definite path
/// names, or every match of a query (in document order). A definite path naming something else, or
/// nothing, is a `DataError` naming the task and the path.
///
/// # Errors
/// A `DataError` as described, or when the query engine fails.
pub fn collection_refs<'d>(
    path: &JsonPath,
    data: &'d Value,
    task: &str,
    path_text: &str,
) -> Result<Vec<&'d Value>, ErrorObject> {
    if !path.is_definite() {
        return path.matches(data);
    }
    match path.matches(data)?.first() {
        Some(Value::Array(items)) => Ok(items.iter().collect()),
        Some(other) => Err(ErrorObject::new(
            ErrorObject::DATA,
            format!(
                "the inputCollection `{path_text}` of foreach task `{task}` selects {}, not an array",
                with_article(other)
            ),
        )),
        None => Err(ErrorObject::new(
            ErrorObject::DATA,
            format!("the inputCollection `{path_text}` of foreach task `{task}` selects nothing"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::path::Segment;

    static ORDERS: JsonPath = JsonPath::definite("$.orders", &[Segment::Key("orders")]);
    static DONE: JsonPath = JsonPath::query("$.orders[?(@.completed == true)]");

    #[test]
    fn definite_paths_name_arrays_and_queries_collect_matches() {
        let data = json!({"orders": [{"n": 1, "completed": true}, {"n": 2, "completed": false}]});
        assert_eq!(
            collection_refs(&ORDERS, &data, "T", "$.orders").map(|v| v.len()),
            Ok(2)
        );
        assert_eq!(
            collection_refs(&DONE, &data, "T", "$.orders[?(@.completed == true)]"),
            Ok(vec![&json!({"n": 1, "completed": true})])
        );
        assert_eq!(
            collection_refs(&DONE, &json!({"orders": []}), "T", "q"),
            Ok(Vec::new())
        );
    }

    #[test]
    fn anything_but_an_array_is_a_data_error() {
        let number = json!({"orders": 3});
        let error = collection_refs(&ORDERS, &number, "T", "$.orders");
        assert!(error.is_err_and(|e| e.message.contains("a number, not an array")));
        let empty = json!({});
        let error = collection_refs(&ORDERS, &empty, "T", "$.orders");
        assert!(error.is_err_and(|e| e.message.contains("selects nothing")));
    }
}
