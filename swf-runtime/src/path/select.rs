//! Reading through a path.

use std::borrow::Cow;

use jsonpath_rust::parser::model::JpQuery;
use jsonpath_rust::parser::parse_json_path;
use jsonpath_rust::query::js_path_process;
use serde_json::Value;

use super::{JsonPath, Kind, Segment};
use crate::error::ErrorObject;
use crate::members::{member, member_mut};

impl JsonPath {
    /// The value(s) the path selects in `data`.
    ///
    /// A definite path yields the value itself, or `None` when it is absent. A query yields an
    /// array of every match in document order, or `None` when nothing matches, following the
    /// Jayway conventions the drafts link to.
    ///
    /// # Errors
    /// A `DataError` when the query engine fails on this data.
    pub fn select(&self, data: &Value) -> Result<Option<Value>, ErrorObject> {
        if let Kind::Definite(segments) = &self.kind {
            // The value itself, without the list of matches a query needs.
            return Ok(self.named_value(data, segments)?.cloned());
        }
        let matches = self.matches(data)?;
        Ok(match self.kind {
            Kind::Definite(_) => matches.first().map(|value| (*value).clone()),
            Kind::Query(_) if matches.is_empty() => None,
            Kind::Query(_) => Some(Value::Array(matches.into_iter().cloned().collect())),
        })
    }

    /// What a path that cannot fail names in `data`, borrowed: `Some` for a definite path that
    /// is not strict (its value, or `None` when absent), `None` for a path whose selection can
    /// fail (a query, a strict path), which [`select`](Self::select) must make. For the hot
    /// callers, so that the common case moves no `Result` around: its error is 72 bytes, and
    /// copying it between the levels of a call cost more than the lookup (issue 10). Marked
    /// inline: rustc's choice between inlining and calling it changed with unrelated edits to
    /// the crate, and calling it cost 430 instructions per seq10 run.
    #[inline]
    pub(crate) fn infallible_ref<'d>(&self, data: &'d Value) -> Option<Option<&'d Value>> {
        match self.kind {
            Kind::Definite(segments) if !self.strict => Some(walk(data, segments)),
            _ => None,
        }
    }

    /// What [`select`](Self::select) yields, borrowed when the path is definite: a test that
    /// only looks at the value (a switch condition) need not copy it.
    ///
    /// # Errors
    /// As [`select`](Self::select).
    pub fn select_ref<'d>(&self, data: &'d Value) -> Result<Option<Cow<'d, Value>>, ErrorObject> {
        match &self.kind {
            Kind::Definite(segments) => Ok(self.named_value(data, segments)?.map(Cow::Borrowed)),
            Kind::Query(_) => Ok(self.select(data)?.map(Cow::Owned)),
        }
    }

    /// What [`select`](Self::select) yields, taken out of `data` when the path is definite
    /// (the caller replaces `data` with it, so the rest is dropped instead of the selection
    /// copied); a query's matches are copied. `data` is unchanged when the path selects nothing
    /// or fails.
    ///
    /// # Errors
    /// As [`select`](Self::select).
    pub(crate) fn take_selected(&self, data: &mut Value) -> Result<Option<Value>, ErrorObject> {
        let Kind::Definite(segments) = &self.kind else {
            return self.select(data);
        };
        if let Some(found) = walk_mut(data, segments) {
            return Ok(Some(std::mem::take(found)));
        }
        // The error (or `None`) as a read gives it, from the data as it is.
        self.named_value(data, segments).map(|_| None)
    }

    /// Every value the path selects in `data`, borrowed: at most one for a definite path.
    pub(crate) fn matches<'d>(&self, data: &'d Value) -> Result<Vec<&'d Value>, ErrorObject> {
        match &self.kind {
            Kind::Definite(segments) => Ok(self.named_value(data, segments)?.into_iter().collect()),
            Kind::Query(compiled) => {
                let query = compiled
                    .get_or_init(|| parse_json_path(self.text).map_err(|err| err.to_string()))
                    .as_ref()
                    .map_err(|err| self.error(format!("does not parse: {err}")))?;
                run(query, data).map_err(|err| self.error(format!("could not be evaluated: {err}")))
            }
        }
    }

    /// The value a definite path names; for a strict path, its absence is an error.
    fn named_value<'d>(
        &self,
        data: &'d Value,
        segments: &[Segment],
    ) -> Result<Option<&'d Value>, ErrorObject> {
        match walk(data, segments) {
            None if self.strict => Err(self.error(format!(
                "selects nothing (strict paths): {}",
                where_it_stops(data, segments)
            ))),
            found => Ok(found),
        }
    }

    /// A `DataError` about this path.
    pub(super) fn error(&self, problem: impl std::fmt::Display) -> ErrorObject {
        ErrorObject::new(
            ErrorObject::DATA,
            format!("the JSONPath `{}` {problem}", self.text),
        )
    }
}

/// The value at `segments` below `data`, if every step exists.
fn walk<'d>(data: &'d Value, segments: &[Segment]) -> Option<&'d Value> {
    segments
        .iter()
        .try_fold(data, |current, segment| match segment {
            Segment::Key(key) => member(current.as_object()?, key),
            Segment::Index(_) | Segment::FromEnd(_) => segment.element(current.as_array()?),
        })
}

/// [`walk`], for changing what it finds.
fn walk_mut<'d>(data: &'d mut Value, segments: &[Segment]) -> Option<&'d mut Value> {
    segments
        .iter()
        .try_fold(data, |current, segment| match segment {
            Segment::Key(key) => member_mut(current.as_object_mut()?, key),
            Segment::Index(_) | Segment::FromEnd(_) => segment.element_mut(current.as_array_mut()?),
        })
}

/// Why `segments` select nothing in `data`: the first step that does not exist, and what
/// the data has there.
fn where_it_stops(data: &Value, segments: &[Segment]) -> String {
    let mut current = data;
    for (depth, segment) in segments.iter().enumerate() {
        let next = match segment {
            Segment::Key(key) => current.as_object().and_then(|members| members.get(*key)),
            Segment::Index(_) | Segment::FromEnd(_) => {
                current.as_array().and_then(|items| segment.element(items))
            }
        };
        let Some(next) = next else {
            let at = super::render::render(&segments[..depth]);
            let kind = crate::data::kind::with_article(current);
            return match (segment, current) {
                (Segment::Key(key), Value::Object(members)) => {
                    let names: Vec<String> =
                        members.keys().take(20).map(|k| format!("`{k}`")).collect();
                    let has = if names.is_empty() {
                        "no members".to_owned()
                    } else if members.len() > names.len() {
                        format!("{}, …", names.join(", "))
                    } else {
                        names.join(", ")
                    };
                    format!("`{at}` has no member `{key}`; it has {has}")
                }
                (Segment::Index(index), Value::Array(items)) => {
                    format!("`{at}` has {} elements, none at index {index}", items.len())
                }
                (Segment::FromEnd(from_end), Value::Array(items)) => {
                    format!(
                        "`{at}` has {} elements, none at index -{from_end}",
                        items.len()
                    )
                }
                (Segment::Key(_), _) => format!("`{at}` is {kind}, not an object"),
                (Segment::Index(_) | Segment::FromEnd(_), _) => {
                    format!("`{at}` is {kind}, not an array")
                }
            };
        };
        current = next;
    }
    format!("`{}` is there", super::render::render(segments))
}

fn run<'d>(query: &JpQuery, data: &'d Value) -> Result<Vec<&'d Value>, String> {
    js_path_process(query, data)
        .map(|refs| refs.into_iter().map(|found| found.val()).collect())
        .map_err(|err| err.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tasks_draft_data() -> Value {
        json!({
            "fruits": ["apple", "orange", "pear"],
            "vegetables": [
                {"veggieName": "potato", "veggieLike": true},
                {"veggieName": "broccoli", "veggieLike": false}
            ],
            "people": [
                {"name": "Ann", "age": 32},
                {"name": "Bob", "age": 58},
                {"name": "Cid", "age": 21}
            ],
            "orders": [
                {"id": 1, "completed": true},
                {"id": 2, "completed": false},
                {"id": 3, "completed": true}
            ],
            "applicant": {"user": {"title": "MANAGER"}}
        })
    }

    #[test]
    fn definite_paths_select_the_value_itself() {
        static FRUITS: JsonPath = JsonPath::definite("$.fruits", &[Segment::Key("fruits")]);
        static SECOND: JsonPath = JsonPath::definite(
            "$.vegetables[1].veggieName",
            &[
                Segment::Key("vegetables"),
                Segment::Index(1),
                Segment::Key("veggieName"),
            ],
        );
        static ROOT: JsonPath = JsonPath::definite("$", &[]);
        let data = tasks_draft_data();
        assert_eq!(
            FRUITS.select(&data),
            Ok(Some(json!(["apple", "orange", "pear"])))
        );
        assert_eq!(SECOND.select(&data), Ok(Some(json!("broccoli"))));
        assert_eq!(ROOT.select(&data), Ok(Some(data.clone())));
    }

    #[test]
    fn select_ref_borrows_what_a_definite_path_names() {
        static FRUITS: JsonPath = JsonPath::definite("$.fruits", &[Segment::Key("fruits")]);
        static NAMES: JsonPath = JsonPath::query("$.vegetables[*].veggieName");
        let data = tasks_draft_data();
        let Ok(Some(Cow::Borrowed(fruits))) = FRUITS.select_ref(&data) else {
            panic!("a definite path borrows");
        };
        assert!(std::ptr::eq(fruits, &data["fruits"]));
        assert_eq!(
            NAMES.select_ref(&data),
            Ok(Some(Cow::Owned(json!(["potato", "broccoli"]))))
        );
        assert_eq!(FRUITS.select_ref(&json!({})), Ok(None), "nothing selected");
    }

    #[test]
    fn a_strict_path_that_selects_nothing_says_where_it_stops() {
        static TOTAL: JsonPath = JsonPath::definite_strict(
            "$.order.totl",
            &[Segment::Key("order"), Segment::Key("totl")],
        );
        static FIRST: JsonPath =
            JsonPath::definite_strict("$.lines[2]", &[Segment::Key("lines"), Segment::Index(2)]);
        static DEEP: JsonPath = JsonPath::definite_strict(
            "$.order.total.cents",
            &[
                Segment::Key("order"),
                Segment::Key("total"),
                Segment::Key("cents"),
            ],
        );
        let data = json!({"order": {"total": 5, "currency": "EUR"}, "lines": [1]});
        let error = TOTAL.select(&data).expect_err("`totl` is absent");
        assert_eq!(error.name, ErrorObject::DATA);
        assert_eq!(
            error.message,
            "the JSONPath `$.order.totl` selects nothing (strict paths): `$.order` has no member `totl`; it has `total`, `currency`"
        );
        let error = FIRST.select_ref(&data).expect_err("one element only");
        assert!(
            error
                .message
                .ends_with("`$.lines` has 1 elements, none at index 2"),
            "{}",
            error.message
        );
        let error = DEEP.matches(&data).expect_err("a number has no members");
        assert!(
            error
                .message
                .ends_with("`$.order.total` is a number, not an object"),
            "{}",
            error.message
        );
        assert_eq!(
            TOTAL.select(&json!({"order": {"totl": 1}})),
            Ok(Some(json!(1)))
        );
    }

    /// `[-n]` is the element `n` places from the end, the value itself; past the start of the
    /// array it selects nothing, and a strict path says how many elements there are.
    #[test]
    fn an_index_from_the_end_selects_one_element() {
        static LAST: JsonPath = JsonPath::definite(
            "$.fruits[-1].name",
            &[
                Segment::Key("fruits"),
                Segment::FromEnd(1),
                Segment::Key("name"),
            ],
        );
        static TENTH_FROM_END: JsonPath = JsonPath::definite_strict(
            "$.fruits[-10]",
            &[Segment::Key("fruits"), Segment::FromEnd(10)],
        );
        let data = json!({"fruits": [{"name": "apple"}, {"name": "pear"}]});
        assert_eq!(LAST.select(&data), Ok(Some(json!("pear"))));
        let error = TENTH_FROM_END.select(&data).expect_err("strict");
        assert!(
            error
                .message
                .ends_with("`$.fruits` has 2 elements, none at index -10"),
            "{}",
            error.message
        );
        assert_eq!(
            super::super::render::render(&[Segment::Key("fruits"), Segment::FromEnd(1)]),
            "$.fruits[-1]"
        );
    }

    #[test]
    fn absent_definite_paths_select_nothing() {
        static MISSING: JsonPath = JsonPath::definite("$.missing", &[Segment::Key("missing")]);
        static PAST_END: JsonPath =
            JsonPath::definite("$.fruits[9]", &[Segment::Key("fruits"), Segment::Index(9)]);
        static THROUGH_SCALAR: JsonPath = JsonPath::definite(
            "$.fruits[0].name",
            &[
                Segment::Key("fruits"),
                Segment::Index(0),
                Segment::Key("name"),
            ],
        );
        static INDEX_ON_OBJECT: JsonPath = JsonPath::definite(
            "$.applicant[0]",
            &[Segment::Key("applicant"), Segment::Index(0)],
        );
        let data = tasks_draft_data();
        for path in [&MISSING, &PAST_END, &THROUGH_SCALAR, &INDEX_ON_OBJECT] {
            assert_eq!(path.select(&data), Ok(None), "{path}");
        }
    }

    #[test]
    fn the_drafts_filter_spellings_select_arrays_of_matches() {
        static YOUNG: JsonPath = JsonPath::query("$.people[?(@.age < 40)]");
        static COMPLETED: JsonPath = JsonPath::query("$.orders[?(@.completed == true)]");
        static TITLES: JsonPath = JsonPath::query("$..user.title");
        let data = tasks_draft_data();
        assert_eq!(
            YOUNG.select(&data),
            Ok(Some(
                json!([{"name": "Ann", "age": 32}, {"name": "Cid", "age": 21}])
            ))
        );
        assert_eq!(
            COMPLETED.select(&data),
            Ok(Some(
                json!([{"id": 1, "completed": true}, {"id": 3, "completed": true}])
            ))
        );
        assert_eq!(TITLES.select(&data), Ok(Some(json!(["MANAGER"]))));
    }

    #[test]
    fn an_existence_filter_on_the_root_array() {
        // `$.[?(@.veggieLike)]` normalized. RFC 9535 reads `?@.veggieLike` as "has the member",
        // as Jayway does for `[?(@.isbn)]`, so both vegetables are selected; only the one without
        // the member is left out.
        static VEGGIE_LIKE: JsonPath = JsonPath::query("$[?(@.veggieLike)]");
        let data = json!([
            {"veggieName": "potato", "veggieLike": true},
            {"veggieName": "broccoli", "veggieLike": false},
            {"veggieName": "stone"}
        ]);
        assert_eq!(
            VEGGIE_LIKE.select(&data),
            Ok(Some(json!([
                {"veggieName": "potato", "veggieLike": true},
                {"veggieName": "broccoli", "veggieLike": false}
            ])))
        );
    }

    #[test]
    fn queries_that_match_nothing_select_nothing() {
        static NONE_OLD: JsonPath = JsonPath::query("$.people[?(@.age > 100)]");
        static ON_OBJECT: JsonPath = JsonPath::query("$[?(@.veggieLike)]");
        let data = tasks_draft_data();
        assert_eq!(NONE_OLD.select(&data), Ok(None));
        assert_eq!(ON_OBJECT.select(&json!({"a": 1})), Ok(None));
        assert_eq!(NONE_OLD.select(&Value::Null), Ok(None));
    }

    #[test]
    fn a_query_that_does_not_parse_is_a_data_error_every_time() {
        static BROKEN: JsonPath = JsonPath::query("$.[?(@.x)]");
        for _ in 0..2 {
            let Err(err) = BROKEN.select(&json!({})) else {
                panic!("an invalid query must not select anything");
            };
            assert_eq!(err.name, ErrorObject::DATA);
            assert!(
                err.message
                    .starts_with("the JSONPath `$.[?(@.x)]` does not parse"),
                "{}",
                err.message
            );
        }
    }
}
