//! The arguments of a function call, built from the action's input by the workflow's
//! `parameters` template.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::data::select_or_null;
use crate::error::ErrorObject;
use crate::path::JsonPath;

/// The arguments of a call, as the workflow's `parameters` template writes them: literals as
/// they are, `$` strings selecting from the action's input.
#[derive(Debug, Clone, Copy)]
pub enum Template {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A non-negative integer.
    Unsigned(u64),
    /// A negative integer.
    Signed(i64),
    /// Any other number.
    Float(f64),
    /// A string that selects nothing.
    Text(&'static str),
    /// What the path selects from the action's input, `null` when it selects nothing.
    Path(&'static JsonPath),
    /// An array of templates.
    Array(&'static [Template]),
    /// An object, its members in the workflow's order.
    Object(&'static [(&'static str, Template)]),
}

impl Template {
    /// The value the template builds from `source`, the action's input.
    ///
    /// # Errors
    /// A path that cannot be evaluated on `source`.
    pub fn build(&self, source: &Value) -> Result<Value, ErrorObject> {
        Ok(match *self {
            Template::Path(path) => select_or_null(path, source)?,
            Template::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| item.build(source))
                    .collect::<Result<_, _>>()?,
            ),
            Template::Object(members) => {
                let mut object = Map::with_capacity(members.len());
                for (key, value) in members {
                    object.insert((*key).to_owned(), value.build(source)?);
                }
                Value::Object(object)
            }
            // Every other template is a literal.
            literal => literal.literal().unwrap_or(Value::Null),
        })
    }

    /// Whether the template builds the same value whatever the action's input.
    fn is_literal(&self) -> bool {
        !matches!(
            self,
            Template::Path(_) | Template::Array(_) | Template::Object(_)
        )
    }

    /// The value of a literal template (not a path, array or object).
    fn literal(&self) -> Option<Value> {
        Some(match *self {
            Template::Null => Value::Null,
            Template::Bool(value) => Value::Bool(value),
            Template::Unsigned(value) => Value::from(value),
            Template::Signed(value) => Value::from(value),
            Template::Float(value) => Value::from(value),
            Template::Text(text) => Value::from(text),
            Template::Path(_) | Template::Array(_) | Template::Object(_) => return None,
        })
    }
}

/// The arguments of one call: its [`Template`], and, for an object (nearly every `parameters`
/// block), the object it builds made once with its literal members set and the others `null`.
///
/// Why: serde_json's map hashes every key it inserts with SipHash, about 160 instructions for
/// a short name, and building the arguments of each call member by member did so for every
/// member of every call (a quarter of the instructions of ten sequential calls, issue 10). A
/// copy of a map keeps its keys' hashes and table, so each call copies the made object and
/// writes into it only the members that select from its input.
#[derive(Debug)]
pub struct Arguments {
    template: Template,
    /// The object `template` builds, its selecting members `null`, made by the first call;
    /// `None` when the template is no object or names a member twice (a later member replaces
    /// the earlier one's value, so members and entries do not pair up).
    made: OnceLock<Option<Map<String, Value>>>,
}

impl Arguments {
    /// The arguments `template` builds.
    #[must_use]
    pub const fn new(template: Template) -> Self {
        Self {
            template,
            made: OnceLock::new(),
        }
    }

    /// The arguments built from `source`, the action's input: what [`Template::build`] builds.
    ///
    /// # Errors
    /// A path that cannot be evaluated on `source`.
    pub fn build(&self, source: &Value) -> Result<Value, ErrorObject> {
        let Template::Object(members) = self.template else {
            return self.template.build(source);
        };
        let Some(made) = self.made.get_or_init(|| made_object(members)) else {
            return self.template.build(source);
        };
        // Over an object a merge or a filter left behind, when there is one (see `data::spare`).
        let mut object = crate::data::spare::copy(made);
        for ((_, value), (_, template)) in object.iter_mut().zip(members) {
            match template {
                // Most selecting members: a path that cannot fail, read without a `Result`
                // (see `JsonPath::infallible_ref`); absent, the member stays `null`.
                Template::Path(path) if let Some(found) = path.infallible_ref(source) => {
                    if let Some(found) = found {
                        crate::data::overwrite(value, found.clone());
                    }
                }
                literal if literal.is_literal() => {}
                selecting => crate::data::overwrite(value, selecting.build(source)?),
            }
        }
        Ok(Value::Object(object))
    }
}

/// The object `members` builds with its selecting members `null`, or `None` when a name
/// appears twice.
fn made_object(members: &[(&str, Template)]) -> Option<Map<String, Value>> {
    let mut object = Map::with_capacity(members.len());
    for (key, template) in members {
        object.insert((*key).to_owned(), template.literal().unwrap_or(Value::Null));
    }
    (object.len() == members.len()).then_some(object)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::path::Segment;

    static PATH_A: JsonPath = JsonPath::definite("$.a", &[Segment::Key("a")]);
    static PATH_OUT: JsonPath = JsonPath::definite("$.out", &[Segment::Key("out")]);
    static MEMBERS: [(&str, Template); 7] = [
        ("z", Template::Path(&PATH_A)),
        ("n", Template::Null),
        ("b", Template::Bool(true)),
        (
            "list",
            Template::Array(&[Template::Unsigned(1), Template::Signed(-2)]),
        ),
        ("f", Template::Float(1.5)),
        ("missing", Template::Path(&PATH_OUT)),
        ("inner", Template::Object(&[("a", Template::Path(&PATH_A))])),
    ];

    fn keys(value: &Value) -> Vec<String> {
        value
            .as_object()
            .map_or(Vec::new(), |object| object.keys().cloned().collect())
    }

    #[test]
    fn templates_build_literals_and_selections_in_order() {
        let built = Template::Object(&MEMBERS)
            .build(&json!({"a": "x"}))
            .unwrap();
        assert_eq!(
            built,
            json!({"z": "x", "n": null, "b": true, "list": [1, -2], "f": 1.5, "missing": null,
                "inner": {"a": "x"}})
        );
        assert_eq!(
            keys(&built),
            ["z", "n", "b", "list", "f", "missing", "inner"]
        );
        assert_eq!(Template::Text("$x").build(&json!({})).unwrap(), json!("$x"));
    }

    /// Built from the object made once, the arguments of every call are what the template
    /// builds, members in the same order, whatever the earlier calls selected.
    #[test]
    fn arguments_from_the_made_object_are_what_the_template_builds() {
        static ARGUMENTS: Arguments = Arguments::new(Template::Object(&MEMBERS));
        for source in [json!({"a": "x"}), json!({"a": [1, 2]}), json!({}), json!(3)] {
            let expected = Template::Object(&MEMBERS).build(&source).unwrap();
            let built = ARGUMENTS.build(&source).unwrap();
            assert_eq!(built, expected, "from {source}");
            assert_eq!(keys(&built), keys(&expected));
            // Copied over an object left behind by a merge or a filter (see `data::spare`).
            crate::data::spare::keep(json!({"z": [1], "a": 2, "b": "x", "c": 1, "d": 2}));
            let built = ARGUMENTS.build(&source).unwrap();
            assert_eq!(built, expected, "from {source}, over a spare object");
            assert_eq!(keys(&built), keys(&expected));
        }
        assert!(ARGUMENTS.made.get().is_some_and(Option::is_some));
    }

    /// A name given twice: its later value at its first place, as inserting member by member
    /// gives; and templates that are no object build as they are.
    #[test]
    fn a_name_given_twice_and_other_templates_build_as_the_template_does() {
        static TWICE: Arguments = Arguments::new(Template::Object(&[
            ("a", Template::Path(&PATH_A)),
            ("b", Template::Unsigned(1)),
            ("a", Template::Text("later")),
        ]));
        let built = TWICE.build(&json!({"a": "x"})).unwrap();
        assert_eq!(built, json!({"a": "later", "b": 1}));
        assert_eq!(keys(&built), ["a", "b"]);
        assert!(TWICE.made.get().is_some_and(Option::is_none));
        static PATH: Arguments = Arguments::new(Template::Path(&PATH_A));
        assert_eq!(PATH.build(&json!({"a": [1]})).unwrap(), json!([1]));
        static LIST: Arguments =
            Arguments::new(Template::Array(&[Template::Path(&PATH_A), Template::Null]));
        assert_eq!(LIST.build(&json!({"a": 2})).unwrap(), json!([2, null]));
    }

    /// A selection that cannot be evaluated, or a strict path that selects nothing, fails the
    /// build either way; a strict path that selects something builds.
    #[test]
    fn a_failing_selection_fails_the_arguments() {
        static BROKEN: JsonPath = JsonPath::query("$..[?(@.a ==");
        static STRICT: JsonPath = JsonPath::definite_strict("$.a", &[Segment::Key("a")]);
        static FAILING: Arguments =
            Arguments::new(Template::Object(&[("a", Template::Path(&BROKEN))]));
        static STRICTLY: Arguments =
            Arguments::new(Template::Object(&[("a", Template::Path(&STRICT))]));
        assert!(FAILING.build(&json!({"a": 1})).is_err());
        assert!(FAILING.build(&json!({"a": 1})).is_err());
        assert!(
            STRICTLY
                .build(&json!({"b": 1}))
                .is_err_and(|error| error.name == "DataError")
        );
        assert_eq!(STRICTLY.build(&json!({"a": 1})).unwrap(), json!({"a": 1}));
    }
}
