//! The elements a foreach task iterates over, and the task data its iterations share.

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

/// Stands, in an iteration's data, for an array of the task data that the body never reads:
/// the one element of a placeholder array. A number rather than a string, so that copying the
/// placeholder allocates only its array (issue 10); an arbitrary 64-bit value, which an array
/// a body writes in place of one it does not read will not start with by chance.
const SHARED: i64 = -0x5357_465F_5348_4152;

/// The element that stood for a shared array before it was a number: an iteration saved by an
/// earlier version may still hold it.
const SHARED_TEXT: &str = "\u{0}swf:shared-array";

/// The input every iteration of a foreach task starts from: the task data, except that its
/// top-level arrays the body never reads are replaced by a placeholder, so that an iteration's
/// copy costs what the body can see, not what the task data holds (a collection of a million
/// items in the task data would otherwise be copied once per item).
///
/// The code generator uses it only for a body that reads the task data through definite paths
/// whose first keys it names (`read`), never as a whole: no argument, event or output built
/// from all of it. Such a body still meets the arrays it does not read in merges and writes,
/// and there only their kind matters (an object merged into an array is an error either way,
/// an array merged into one appends): the placeholder is an array, so every merge or write
/// succeeds or fails as it would on the real array. Where the body's data does leave it whole
/// (an output filter that selects nothing keeps all of it), [`restore`](Self::restore) puts
/// the real arrays back with what was appended to them. So each iteration still observes its
/// own copy of the task data, as the drafts say, without the copy being made.
#[derive(Debug)]
pub struct SharedData<'d> {
    data: &'d Value,
    base: Value,
    /// The top-level keys whose arrays the placeholder stands for.
    hidden: Vec<&'d str>,
}

impl<'d> SharedData<'d> {
    /// What the iterations of a body that reads only the top-level keys `read` of `data` share.
    pub fn new(data: &'d Value, read: &[&str]) -> Self {
        let Value::Object(members) = data else {
            return Self::whole(data, data.clone());
        };
        if members.is_empty() {
            // Most parallel tasks' data before their branches write: a new map, where
            // collecting one from no members cost about 110 instructions (issue 10).
            return Self::whole(data, Value::Object(serde_json::Map::new()));
        }
        let mut hidden = Vec::new();
        let base = members
            .iter()
            .map(|(key, value)| {
                if is_shared(key, value, read) {
                    hidden.push(key.as_str());
                    (key.clone(), placeholder())
                } else {
                    (key.clone(), value.clone())
                }
            })
            .collect();
        Self {
            data,
            base: Value::Object(base),
            hidden,
        }
    }

    /// The shared input of `data` that hides nothing: `base`, its copy.
    fn whole(data: &'d Value, base: Value) -> Self {
        Self {
            data,
            base,
            hidden: Vec::new(),
        }
    }

    /// Makes room in the shared input for the element every iteration writes at `parameter`
    /// (the foreach task's `inputParameter`), when that is a top-level member the task data
    /// lacks: a `null` member at the end, where the write would add it. An iteration's write
    /// then replaces a value in its copy rather than adding a member to it, which grew the
    /// copy's map (a reallocation) and hashed the name, once per iteration (issue 10).
    #[must_use]
    pub fn with_slot(mut self, parameter: &JsonPath) -> Self {
        if let (Some(key), Value::Object(base)) = (parameter.top_level_key(), &mut self.base)
            && crate::members::member(base, key).is_none()
        {
            base.insert(key.to_owned(), Value::Null);
        }
        self
    }

    /// A fresh copy of the shared input, for one iteration: written over an object a filter
    /// or a merge left behind, when there is one (see `data::spare`).
    pub fn input(&self) -> Value {
        match &self.base {
            Value::Object(members) => Value::Object(crate::data::spare::copy(members)),
            other => other.clone(),
        }
    }

    /// The shared input itself, for the one body that starts from it (a parallel branch).
    pub fn into_input(self) -> Value {
        self.base
    }

    /// An iteration's output as it would be had the iteration started from a full copy of the
    /// task data: a placeholder still at the top of the output (the body's data left whole)
    /// becomes the array it stands for, followed by the elements merged into it that the array
    /// did not already hold (the merge rule for arrays).
    pub fn restore(&self, mut output: Value) -> Value {
        let Value::Object(members) = &mut output else {
            return output;
        };
        for key in &self.hidden {
            let Some(Value::Array(elements)) = members.get_mut(*key) else {
                continue;
            };
            if !is_placeholder(elements.first()) {
                continue;
            }
            let Some(Value::Array(original)) = self.data.get(*key) else {
                continue;
            };
            let appended = elements.split_off(1);
            let mut full = original.clone();
            crate::data::append_missing_values(&mut full, appended);
            *elements = full;
        }
        output
    }

    /// Merges into `data` the `output` of a body that reads `read` and started from the shared
    /// input of `data` (a parallel branch's, which the task merges back), as the output of a
    /// body that started from a full copy would merge: where a placeholder is still at the top
    /// of the output, only what was appended to it is merged into the array it stands for (the
    /// array merged with itself changes nothing), so that neither a copy of the array nor a
    /// comparison of it with itself is made. `read` is `None` for a body that started from a
    /// full copy: its output is merged as it is.
    ///
    /// # Errors
    /// A `DataError`, as [`merge_data`](crate::data::merge_data) gives, naming `task` and
    /// `what` was merged.
    pub fn merge_output(
        data: &mut Value,
        read: Option<&[&str]>,
        mut output: Value,
        task: &str,
        what: &str,
    ) -> Result<(), ErrorObject> {
        // `None`: the body started from a full copy.
        if let (Some(read), Value::Object(members), Value::Object(outputs)) =
            (read, &*data, &mut output)
        {
            for (key, value) in members {
                if !is_shared(key, value, read) {
                    continue;
                }
                if let Some(Value::Array(elements)) = outputs.get_mut(key)
                    && is_placeholder(elements.first())
                {
                    elements.remove(0);
                }
            }
        }
        crate::data::merge_data(data, output, task, what)
    }
}

/// Whether the top-level member `key: value` of the task data is shared by a body that reads
/// `read`: a non-empty array it does not read.
fn is_shared(key: &str, value: &Value, read: &[&str]) -> bool {
    matches!(value, Value::Array(elements) if !elements.is_empty()) && !read.contains(&key)
}

fn is_placeholder(first: Option<&Value>) -> bool {
    match first {
        Some(Value::Number(first)) => first.as_i64() == Some(SHARED),
        Some(Value::String(first)) => first == SHARED_TEXT,
        _ => false,
    }
}

fn placeholder() -> Value {
    Value::Array(vec![Value::from(SHARED)])
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

    /// What an iteration of a body that merges `incoming` and reads `read` ends with, from a
    /// full copy of `data` and from the shared input (restored), and the shared input itself.
    fn both_ways(
        data: &Value,
        read: &[&str],
        incoming: &Value,
    ) -> (Result<Value, String>, Result<Value, String>, Value) {
        let merged = |mut input: Value| {
            crate::data::merge_data(&mut input, incoming.clone(), "T", "result")
                .map(|()| input)
                .map_err(|error| error.message)
        };
        let shared = SharedData::new(data, read);
        let full = merged(data.clone());
        let restored = merged(shared.input()).map(|output| shared.restore(output));
        (full, restored, shared.input())
    }

    #[test]
    fn iterations_share_the_arrays_they_do_not_read() {
        let data = json!({"items": [1, 2, 3], "seen": [4], "name": "n", "empty": []});
        let (full, restored, input) = both_ways(&data, &["seen"], &json!({"n": 1}));
        assert_eq!(restored, full);
        assert_eq!(
            input,
            json!({"items": [SHARED], "seen": [4], "name": "n", "empty": []})
        );
    }

    #[test]
    fn merges_into_a_shared_array_end_as_on_the_array() {
        let data = json!({"items": [1, 2, 3], "other": {"a": [5]}});
        for incoming in [
            json!({"items": [3, 4, 4, 1, 5]}),
            json!({"items": []}),
            json!({"items": {"x": 1}}),
            json!({"items": "text"}),
            json!({"items": null}),
            json!({"other": {"a": [6]}, "items": [[1]]}),
        ] {
            let (full, restored, _) = both_ways(&data, &[], &incoming);
            assert_eq!(restored, full, "merging {incoming}");
        }
        let (_, restored, _) = both_ways(&data, &[], &json!({"items": "text"}));
        assert!(
            restored.is_err_and(|message| message.contains(
                "at `/items` the task data holds an array but the result holds a string"
            ))
        );
    }

    /// A parallel branch's output merged back: what a full copy's would have made, for every
    /// way a body can meet an array it does not read.
    #[test]
    fn a_shared_output_merges_back_as_a_full_copy_would() {
        let data = json!({"items": [1, 2, 3], "seen": [4], "name": "n", "empty": []});
        for incoming in [
            json!({"a": 1}),
            json!({"items": [3, 4, 4, 1, 5], "seen": [4, 5]}),
            json!({"items": []}),
            json!({"empty": [1], "name": "m"}),
            json!({"items": "text"}),
            json!({"items": {"x": 1}}),
        ] {
            let full = {
                let mut data = data.clone();
                crate::data::merge_data(&mut data, incoming.clone(), "T", "result")
                    .and_then(|()| {
                        let mut merged_back = data.clone();
                        crate::data::merge_data(&mut merged_back, data, "T", "branch output")
                            .map(|()| merged_back)
                    })
                    .map_err(|error| error.message)
            };
            let shared = {
                let mut output = SharedData::new(&data, &["seen"]).input();
                crate::data::merge_data(&mut output, incoming.clone(), "T", "result")
                    .and_then(|()| {
                        let mut merged_back = data.clone();
                        SharedData::merge_output(
                            &mut merged_back,
                            Some(&["seen"]),
                            output,
                            "T",
                            "branch output",
                        )
                        .map(|()| merged_back)
                    })
                    .map_err(|error| error.message)
            };
            assert_eq!(shared, full, "merging {incoming}");
        }
    }

    #[test]
    fn a_shared_output_without_the_placeholder_merges_as_it_is() {
        let data = json!({"items": [1, 2]});
        let mut merged = data.clone();
        SharedData::merge_output(&mut merged, Some(&[]), json!({"items": [9]}), "T", "x")
            .expect("merges");
        assert_eq!(merged, json!({"items": [1, 2, 9]}));
        let mut merged = data.clone();
        SharedData::merge_output(&mut merged, Some(&[]), json!(null), "T", "x").expect("merges");
        assert_eq!(merged, data);
    }

    /// The element written into an input with its slot made gives what writing it into a copy
    /// of the task data gives, members in the same order: the slot is where the write adds
    /// the member, and a member the data has keeps its place.
    #[test]
    fn an_iteration_writes_its_element_into_the_slot_made_for_it() {
        static ITEM: JsonPath = JsonPath::definite("$.item", &[Segment::Key("item")]);
        static NESTED: JsonPath =
            JsonPath::definite("$.at.item", &[Segment::Key("at"), Segment::Key("item")]);
        let written = |mut input: Value, path: &JsonPath| {
            path.write(&mut input, json!(7)).expect("writes");
            input.as_object().map(|members| {
                members
                    .iter()
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect::<Vec<_>>()
            })
        };
        for data in [
            json!({"items": [1, 2], "total": 3}),
            json!({"item": 1, "items": [1, 2], "total": 3}),
            json!({"at": {}, "items": [1, 2]}),
        ] {
            for path in [&ITEM, &NESTED] {
                let slotted = SharedData::new(&data, &["item", "at"]).with_slot(path);
                let plain = SharedData::new(&data, &["item", "at"]);
                assert_eq!(
                    written(slotted.input(), path),
                    written(plain.input(), path),
                    "{data} at {}",
                    path.text()
                );
            }
        }
        let data = json!({"items": [1, 2], "total": 3});
        let slotted = SharedData::new(&data, &["item"]).with_slot(&ITEM).input();
        assert_eq!(
            slotted,
            json!({"items": [SHARED], "total": 3, "item": null})
        );
        let keys: Vec<_> = slotted
            .as_object()
            .map_or(Vec::new(), |m| m.keys().collect());
        assert_eq!(keys, ["items", "total", "item"]);
        assert_eq!(
            SharedData::new(&json!(3), &[]).with_slot(&ITEM).input(),
            json!(3)
        );
    }

    /// An iteration saved while the placeholder's element was a string still gets its arrays
    /// back, and what was merged into them after.
    #[test]
    fn the_earlier_placeholder_is_still_restored() {
        let data = json!({"items": [1, 2], "n": 0});
        let shared = SharedData::new(&data, &["n"]);
        assert_eq!(
            shared.restore(json!({"items": [SHARED_TEXT, 3], "n": 1})),
            json!({"items": [1, 2, 3], "n": 1})
        );
        assert_eq!(
            shared.restore(json!({"items": [SHARED, 2], "n": 1})),
            json!({"items": [1, 2], "n": 1})
        );
        assert_eq!(
            shared.restore(json!({"items": ["swf:shared-array"], "n": 1})),
            json!({"items": ["swf:shared-array"], "n": 1})
        );
    }

    #[test]
    fn outputs_without_the_placeholder_are_left_alone() {
        let data = json!({"items": [1, 2]});
        let shared = SharedData::new(&data, &[]);
        assert_eq!(shared.restore(json!(7)), json!(7));
        assert_eq!(shared.restore(json!({"items": [9]})), json!({"items": [9]}));
        let scalar = json!(3);
        assert_eq!(SharedData::new(&scalar, &[]).input(), json!(3));
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
