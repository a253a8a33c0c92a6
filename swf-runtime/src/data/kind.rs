//! Names of JSON value kinds, for error messages.

use serde_json::Value;

/// The kind of a JSON value: `object`, `array`, `string`, `number`, `boolean` or `null`.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The kind of a JSON value as a noun phrase for a sentence: `an object`, `a string`, `null`.
pub(crate) fn with_article(value: &Value) -> &'static str {
    article(kind(value))
}

/// A kind name from [`kind`] as a noun phrase for a sentence.
pub(crate) fn article(kind: &str) -> &'static str {
    match kind {
        "object" => "an object",
        "array" => "an array",
        "string" => "a string",
        "number" => "a number",
        "boolean" => "a boolean",
        "null" => "null",
        _ => "a value",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_kind_has_a_name_and_a_phrase() {
        let cases = [
            (json!(null), "null", "null"),
            (json!(true), "boolean", "a boolean"),
            (json!(1.5), "number", "a number"),
            (json!("x"), "string", "a string"),
            (json!([]), "array", "an array"),
            (json!({}), "object", "an object"),
        ];
        for (value, name, phrase) in cases {
            assert_eq!(kind(&value), name);
            assert_eq!(with_article(&value), phrase);
        }
    }
}
