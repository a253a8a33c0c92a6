//! Regular expressions (`matches`), compiled once per process.

use std::fmt;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use crate::error::ErrorObject;

/// A regular expression from a workflow definition, usable in a `static`.
///
/// The code generator checks the pattern at build time; it is compiled here on first use and
/// reused for the life of the process. Should compilation fail anyway, every use reports a
/// `DataError` instead of panicking.
pub struct LazyRegex {
    pattern: &'static str,
    compiled: OnceLock<Result<Regex, String>>,
}

impl LazyRegex {
    /// A regular expression (Rust `regex` syntax) compiled on first use.
    pub const fn new(pattern: &'static str) -> Self {
        Self {
            pattern,
            compiled: OnceLock::new(),
        }
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &'static str {
        self.pattern
    }

    fn regex(&self) -> Result<&Regex, ErrorObject> {
        self.compiled
            .get_or_init(|| Regex::new(self.pattern).map_err(|err| err.to_string()))
            .as_ref()
            .map_err(|err| {
                ErrorObject::new(
                    ErrorObject::DATA,
                    format!(
                        "the regular expression `{}` does not compile: {err}",
                        self.pattern
                    ),
                )
            })
    }
}

impl fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("LazyRegex").field(&self.pattern).finish()
    }
}

/// Whether `value` matches `re` anywhere (like the drafts' `\b…\b` and `^…$` examples assume:
/// anchor the pattern for a whole-value match).
///
/// A string is matched as itself, any other value as its JSON text (`42`, `true`, `{"a":1}`);
/// `null` never matches.
///
/// # Errors
/// A `DataError` when the pattern does not compile.
pub fn matches(re: &LazyRegex, value: &Value) -> Result<bool, ErrorObject> {
    // Compile before looking at the value, so a broken pattern is reported whatever the data.
    let regex = re.regex()?;
    Ok(match value {
        Value::Null => false,
        Value::String(text) => regex.is_match(text),
        other => regex.is_match(&other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    static EXCEPTION: LazyRegex = LazyRegex::new(r"^\w+Exception$");
    static EMAIL: LazyRegex = LazyRegex::new(r"(?i)\b[A-Z0-9._%+-]+@[A-Z0-9.-]+\.[A-Z]{2,}\b");
    static DIGITS: LazyRegex = LazyRegex::new(r"^\d+$");

    #[test]
    fn strings_match_as_themselves() {
        assert_eq!(matches(&EXCEPTION, &json!("IOException")), Ok(true));
        assert_eq!(matches(&EXCEPTION, &json!("IOException!")), Ok(false));
        assert_eq!(
            matches(&EMAIL, &json!("write to john@example.com today")),
            Ok(true)
        );
        assert_eq!(matches(&EMAIL, &json!("nobody")), Ok(false));
    }

    #[test]
    fn other_values_match_as_json_text_and_null_never() {
        assert_eq!(matches(&DIGITS, &json!(42)), Ok(true));
        assert_eq!(matches(&DIGITS, &json!(4.5)), Ok(false));
        assert_eq!(matches(&LazyRegex::new("^true$"), &json!(true)), Ok(true));
        assert_eq!(
            matches(&LazyRegex::new(r#""a":1"#), &json!({"a": 1})),
            Ok(true)
        );
        assert_eq!(matches(&LazyRegex::new(".*"), &Value::Null), Ok(false));
    }

    #[test]
    fn a_pattern_that_does_not_compile_is_a_data_error() {
        static BROKEN: LazyRegex = LazyRegex::new("(unclosed");
        for value in [json!("x"), Value::Null] {
            let Err(err) = matches(&BROKEN, &value) else {
                panic!("a broken pattern must not match");
            };
            assert_eq!(err.name, ErrorObject::DATA);
            assert!(
                err.message
                    .starts_with("the regular expression `(unclosed` does not compile")
            );
        }
        assert_eq!(format!("{BROKEN:?}"), r#"LazyRegex("(unclosed")"#);
        assert_eq!(BROKEN.pattern(), "(unclosed");
    }
}
