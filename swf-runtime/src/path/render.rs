//! Writing a prefix of a definite path back as JSONPath text, so that an error can say exactly
//! where in the data it happened (`$.order.items[3]`), not only which path was being used.

use super::Segment;

/// The normalized JSONPath text of `segments`: `$`, then `.name` for plain names, `['na me']`
/// for names that need quoting, `[3]` for indexes.
pub(super) fn render(segments: &[Segment]) -> String {
    let mut text = String::from("$");
    for segment in segments {
        match segment {
            Segment::Key(key) if is_plain_name(key) => {
                text.push('.');
                text.push_str(key);
            }
            Segment::Key(key) => {
                text.push_str("['");
                for c in key.chars() {
                    match c {
                        '\'' | '\\' => {
                            text.push('\\');
                            text.push(c);
                        }
                        _ => text.push(c),
                    }
                }
                text.push_str("']");
            }
            Segment::Index(index) => {
                text.push('[');
                text.push_str(&index.to_string());
                text.push(']');
            }
            Segment::FromEnd(from_end) => {
                text.push_str("[-");
                text.push_str(&from_end.to_string());
                text.push(']');
            }
        }
    }
    text
}

/// A member name that RFC 9535 allows in dot notation.
fn is_plain_name(key: &str) -> bool {
    let mut chars = key.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || !c.is_ascii());
    first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_names_quoted_names_and_indexes() {
        assert_eq!(render(&[]), "$");
        assert_eq!(
            render(&[
                Segment::Key("order"),
                Segment::Key("line items"),
                Segment::Index(3)
            ]),
            "$.order['line items'][3]"
        );
        assert_eq!(render(&[Segment::Key("it's")]), r"$['it\'s']");
        assert_eq!(render(&[Segment::Key("9lives")]), "$['9lives']");
        assert_eq!(render(&[Segment::Key("")]), "$['']");
    }
}
