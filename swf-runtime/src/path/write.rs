//! Writing through a definite path (results paths such as `dataResultsPath`).

use serde_json::{Map, Value};

use super::render::render;
use super::{JsonPath, Kind, Segment};
use crate::data::kind::with_article;
use crate::error::ErrorObject;
use crate::members::{is_compared, member, member_mut};

impl JsonPath {
    /// Puts `value` at this path inside `target`, creating missing objects on the way (a `Null`
    /// target, or a `null` on the way, becomes an object). The path `$` replaces the whole target.
    ///
    /// On error `target` is left exactly as it was.
    ///
    /// # Errors
    /// A `DataError` when the path is a query (it does not name one place), when it indexes past
    /// the end of an array or into something that is not an array, or when it goes through a
    /// value that is neither an object nor an array.
    pub fn write(&self, target: &mut Value, value: Value) -> Result<(), ErrorObject> {
        let Kind::Definite(segments) = self.kind else {
            return Err(self.error(
                "selects any number of values, so it cannot name the one place to write to; \
                 use a path made only of names and indexes",
            ));
        };
        // One name into an object, the most common write (a results path, a foreach element):
        // nothing can fail, and a member already there is replaced after one lookup rather
        // than the three of the check and the walk below.
        if let ([Segment::Key(key)], Value::Object(object)) = (segments, &mut *target) {
            write_member(object, key, value);
            return Ok(());
        }
        // Check the whole path before touching anything, so a failed write does not leave
        // half-created objects behind in the task data.
        self.check_writable(target, segments)?;
        match place(target, segments) {
            Some(slot) => {
                *slot = value;
                Ok(())
            }
            // Unreachable after the check; reported rather than assumed.
            None => Err(self.error("cannot be written to")),
        }
    }

    fn check_writable(&self, target: &Value, segments: &[Segment]) -> Result<(), ErrorObject> {
        // `None` once the walk has left the existing data: the rest will be created.
        let mut current = Some(target);
        for (depth, segment) in segments.iter().enumerate() {
            let at = || render(segments.get(..depth).unwrap_or_default());
            current = match (segment, current) {
                (Segment::Key(_), None | Some(Value::Null)) => None,
                (Segment::Key(key), Some(Value::Object(map))) => member(map, key),
                (Segment::Key(_), Some(found)) => {
                    return Err(self.write_error(format_args!(
                        "`{}` holds {}, not an object",
                        at(),
                        with_article(found)
                    )));
                }
                (Segment::Index(_) | Segment::FromEnd(_), None) => {
                    return Err(self.write_error(format_args!(
                        "there is no array at `{}` to index into",
                        at()
                    )));
                }
                (Segment::Index(_) | Segment::FromEnd(_), Some(Value::Array(items))) => {
                    match segment.element(items) {
                        Some(item) => Some(item),
                        None => {
                            let index = match segment {
                                Segment::FromEnd(from_end) => format!("-{from_end}"),
                                Segment::Index(index) => index.to_string(),
                                Segment::Key(key) => (*key).to_owned(),
                            };
                            return Err(self.write_error(format_args!(
                                "index {index} is past the end of the array at `{}`, which has \
                                 {} element(s)",
                                at(),
                                items.len()
                            )));
                        }
                    }
                }
                (Segment::Index(_) | Segment::FromEnd(_), Some(found)) => {
                    return Err(self.write_error(format_args!(
                        "`{}` holds {}, not an array",
                        at(),
                        with_article(found)
                    )));
                }
            };
        }
        Ok(())
    }

    fn write_error(&self, problem: std::fmt::Arguments<'_>) -> ErrorObject {
        self.error(format_args!("cannot be written to: {problem}"))
    }
}

/// Sets the member `key` of `object` to `value`: in its place when it is there, else added
/// at the end.
fn write_member(object: &mut Map<String, Value>, key: &str, value: Value) {
    if is_compared(object)
        && let Some(slot) = member_mut(object, key)
    {
        crate::data::overwrite(slot, value);
        return;
    }
    object.insert(key.to_owned(), value);
}

/// The slot at `segments`, creating objects for missing or null members on the way.
fn place<'v>(target: &'v mut Value, segments: &[Segment]) -> Option<&'v mut Value> {
    let mut current = target;
    for segment in segments {
        current = match segment {
            Segment::Key(key) => {
                if current.is_null() {
                    *current = Value::Object(Map::new());
                }
                let object = current.as_object_mut()?;
                // A small object's member is found by comparing keys: `entry` would hash the
                // key and copy it into a `String` even when the member is there.
                if is_compared(object) && member(object, key).is_some() {
                    member_mut(object, key)?
                } else {
                    object.entry(*key).or_insert(Value::Null)
                }
            }
            Segment::Index(_) | Segment::FromEnd(_) => {
                segment.element_mut(current.as_array_mut()?)?
            }
        };
    }
    Some(current)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    static GREETING: JsonPath = JsonPath::definite(
        "$.finalCustomerGreeting",
        &[Segment::Key("finalCustomerGreeting")],
    );
    static DEEP: JsonPath = JsonPath::definite(
        "$.a.b.c",
        &[Segment::Key("a"), Segment::Key("b"), Segment::Key("c")],
    );
    static ITEM: JsonPath = JsonPath::definite(
        "$.items[1].done",
        &[
            Segment::Key("items"),
            Segment::Index(1),
            Segment::Key("done"),
        ],
    );

    /// A result written at `[-1]` replaces the last element; an empty array has none.
    #[test]
    fn writes_at_an_index_from_the_end() {
        static LAST_DONE: JsonPath = JsonPath::definite(
            "$.items[-1].done",
            &[
                Segment::Key("items"),
                Segment::FromEnd(1),
                Segment::Key("done"),
            ],
        );
        let mut data = json!({"items": [{"n": 1}, {"n": 2}]});
        assert_eq!(LAST_DONE.write(&mut data, json!(true)), Ok(()));
        assert_eq!(data, json!({"items": [{"n": 1}, {"n": 2, "done": true}]}));
        let mut empty = json!({"items": []});
        let error = LAST_DONE
            .write(&mut empty, json!(true))
            .expect_err("no last");
        assert!(
            error
                .message
                .contains("index -1 is past the end of the array at `$.items`"),
            "{}",
            error.message
        );
    }

    #[test]
    fn writes_a_result_next_to_the_existing_data() {
        let mut data = json!({"customer": {"name": "John"}});
        assert_eq!(GREETING.write(&mut data, json!("Hola John")), Ok(()));
        assert_eq!(
            data,
            json!({"customer": {"name": "John"}, "finalCustomerGreeting": "Hola John"})
        );
    }

    /// A member already there is replaced where it is, in small objects (found by comparing
    /// keys) and large ones (hashed) alike; a missing one goes at the end.
    #[test]
    fn replaces_existing_members_in_place_whatever_the_object_size() {
        for size in [1, 8, 9, 40] {
            let mut data = Value::Object(
                (0..size)
                    .map(|i| (format!("k{i}"), json!(i)))
                    .chain([("finalCustomerGreeting".to_owned(), json!(null))])
                    .chain([("last".to_owned(), json!(true))])
                    .collect(),
            );
            let mut expected = data.clone();
            expected["finalCustomerGreeting"] = json!("Hola");
            assert_eq!(GREETING.write(&mut data, json!("Hola")), Ok(()));
            let keys = |value: &Value| {
                value
                    .as_object()
                    .map(|m| m.keys().cloned().collect::<Vec<_>>())
            };
            assert_eq!(keys(&data), keys(&expected), "{size} members");
            assert_eq!(data, expected);
            assert_eq!(DEEP.write(&mut data, json!(1)), Ok(()));
            assert_eq!(
                keys(&data).and_then(|keys| keys.last().cloned()),
                Some("a".to_owned())
            );
        }
    }

    #[test]
    fn creates_missing_objects_and_replaces_nulls_on_the_way() {
        let mut data = Value::Null;
        assert_eq!(DEEP.write(&mut data, json!(1)), Ok(()));
        assert_eq!(data, json!({"a": {"b": {"c": 1}}}));

        let mut data = json!({"a": {"b": null, "keep": true}});
        assert_eq!(DEEP.write(&mut data, json!(2)), Ok(()));
        assert_eq!(data, json!({"a": {"b": {"c": 2}, "keep": true}}));
    }

    #[test]
    fn writes_into_existing_array_elements() {
        let mut data = json!({"items": [{"done": false}, {"done": false}]});
        assert_eq!(ITEM.write(&mut data, json!(true)), Ok(()));
        assert_eq!(data, json!({"items": [{"done": false}, {"done": true}]}));
    }

    #[test]
    fn the_root_path_replaces_everything() {
        static ROOT: JsonPath = JsonPath::definite("$", &[]);
        let mut data = json!({"old": true});
        assert_eq!(ROOT.write(&mut data, json!([1, 2])), Ok(()));
        assert_eq!(data, json!([1, 2]));
    }

    fn message(result: Result<(), ErrorObject>) -> String {
        match result {
            Ok(()) => String::from("<no error>"),
            Err(err) => {
                assert_eq!(err.name, ErrorObject::DATA);
                err.message
            }
        }
    }

    #[test]
    fn refuses_to_write_through_a_scalar_and_leaves_the_data_alone() {
        let mut data = json!({"a": {"b": "text"}});
        let before = data.clone();
        assert_eq!(
            message(DEEP.write(&mut data, json!(1))),
            "the JSONPath `$.a.b.c` cannot be written to: `$.a.b` holds a string, not an object"
        );
        assert_eq!(data, before);
    }

    #[test]
    fn refuses_indexes_past_the_end_or_into_non_arrays() {
        let mut data = json!({"items": [{"done": false}]});
        assert_eq!(
            message(ITEM.write(&mut data, json!(true))),
            "the JSONPath `$.items[1].done` cannot be written to: index 1 is past the end of the \
             array at `$.items`, which has 1 element(s)"
        );
        let mut data = json!({"items": {"1": {}}});
        assert_eq!(
            message(ITEM.write(&mut data, json!(true))),
            "the JSONPath `$.items[1].done` cannot be written to: `$.items` holds an object, not \
             an array"
        );
        let mut data = json!({});
        assert_eq!(
            message(ITEM.write(&mut data, json!(true))),
            "the JSONPath `$.items[1].done` cannot be written to: there is no array at `$.items` \
             to index into"
        );
        assert_eq!(data, json!({}));
    }

    #[test]
    fn refuses_to_write_through_a_query() {
        static QUERY: JsonPath = JsonPath::query("$.items[*]");
        let mut data = json!({"items": [1]});
        assert!(
            message(QUERY.write(&mut data, json!(2)))
                .starts_with("the JSONPath `$.items[*]` selects any number")
        );
        assert_eq!(data, json!({"items": [1]}));
    }
}
