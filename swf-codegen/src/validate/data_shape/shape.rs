//! What is known of the data at a point of a workflow, read from a JSON Schema: the kinds of
//! value it may be, the members an object declares (and whether it allows others), the shape of
//! an array's elements. `Any` knows nothing; every rule treats it as "anything may be there".

use crate::ir::PathSegment;
use serde_json::Value;
use std::collections::BTreeMap;

/// The JSON kinds a value may have, as bits; no bit set means any kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Kinds(u8);

impl Kinds {
    pub const OBJECT: Kinds = Kinds(1);
    pub const ARRAY: Kinds = Kinds(2);
    pub const STRING: Kinds = Kinds(4);
    pub const NUMBER: Kinds = Kinds(8);
    pub const BOOLEAN: Kinds = Kinds(16);
    pub const NULL: Kinds = Kinds(32);

    fn named(name: &str) -> Kinds {
        match name {
            "object" => Kinds::OBJECT,
            "array" => Kinds::ARRAY,
            "string" => Kinds::STRING,
            "number" | "integer" => Kinds::NUMBER,
            "boolean" => Kinds::BOOLEAN,
            "null" => Kinds::NULL,
            _ => Kinds::default(),
        }
    }

    fn of(value: &Value) -> Kinds {
        match value {
            Value::Object(_) => Kinds::OBJECT,
            Value::Array(_) => Kinds::ARRAY,
            Value::String(_) => Kinds::STRING,
            Value::Number(_) => Kinds::NUMBER,
            Value::Bool(_) => Kinds::BOOLEAN,
            Value::Null => Kinds::NULL,
        }
    }

    pub fn is_any(self) -> bool {
        self.0 == 0
    }

    /// Whether a value of `kind` is possible.
    pub fn allows(self, kind: Kinds) -> bool {
        self.is_any() || self.0 & kind.0 != 0
    }

    /// The kinds of either; any kind when one of them is.
    fn union(self, other: Kinds) -> Kinds {
        if self.is_any() || other.is_any() {
            Kinds::default()
        } else {
            Kinds(self.0 | other.0)
        }
    }

    /// The kinds allowed by both; any kind when neither says.
    fn intersection(self, other: Kinds) -> Kinds {
        match (self.is_any(), other.is_any()) {
            (true, _) => other,
            (_, true) => self,
            _ => Kinds(self.0 & other.0),
        }
    }

    /// The kinds in words, for messages.
    pub fn describe(self) -> String {
        let names = [
            (Kinds::OBJECT, "an object"),
            (Kinds::ARRAY, "an array"),
            (Kinds::STRING, "a string"),
            (Kinds::NUMBER, "a number"),
            (Kinds::BOOLEAN, "a boolean"),
            (Kinds::NULL, "null"),
        ];
        let words: Vec<&str> = names
            .iter()
            .filter(|(kind, _)| self.0 & kind.0 != 0)
            .map(|(_, word)| *word)
            .collect();
        words.join(" or ")
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(super) enum Shape {
    /// Nothing is known.
    #[default]
    Any,
    Known(Known),
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Known {
    pub kinds: Kinds,
    /// The members an object declares, in name order.
    pub properties: BTreeMap<String, Shape>,
    /// No member but those declared (`additionalProperties: false`).
    pub closed: bool,
    /// The shape of an array's elements.
    pub items: Option<Box<Shape>>,
}

/// What a definite path selects in data of a shape.
#[derive(Debug, PartialEq)]
pub(super) enum Lookup<'a> {
    /// It may select something of this shape.
    Found(&'a Shape),
    /// Nothing is known past some point.
    Unknown,
    /// It never selects anything: `depth` segments lead to a value that cannot hold the next.
    Never { depth: usize, reason: Never },
    /// The object at `depth` declares members, not this one, and allows others.
    Undeclared { depth: usize, declared: Vec<String> },
}

#[derive(Debug, PartialEq)]
pub(super) enum Never {
    /// The value there is never an object (or never an array, for an index).
    WrongKind(Kinds),
    /// The object there allows only its declared members.
    NoSuchMember(Vec<String>),
}

/// The deepest `$ref` chain or nesting followed; past it nothing is assumed.
const MAX_DEPTH: usize = 32;

/// The most schema objects read for one schema; past it nothing is assumed. A schema whose
/// definitions refer to each other several times over grows exponentially when expanded.
const MAX_READ: usize = 10_000;

/// How many times a reference is expanded inside itself (a recursive schema: `$.mother.name`
/// is checked, `$.mother.mother.name` assumes nothing).
const RECURSIONS: usize = 1;

/// A schema being read: its root (which `#/...` references resolve in), the references being
/// expanded (see [`RECURSIONS`]), and how many schema objects may still be read.
struct Reading<'a> {
    root: &'a Value,
    expanding: Vec<&'a str>,
    budget: usize,
}

impl Shape {
    /// The shape a JSON Schema describes (`root` resolves its `#/...` references).
    pub fn from_schema(schema: &Value) -> Shape {
        let mut reading = Reading {
            root: schema,
            expanding: Vec::new(),
            budget: MAX_READ,
        };
        from_schema(schema, &mut reading, 0)
    }

    /// The shape of one constant value (injected data).
    pub fn of_value(value: &Value) -> Shape {
        let mut known = Known {
            kinds: Kinds::of(value),
            ..Known::default()
        };
        if let Value::Object(members) = value {
            known.properties = members
                .iter()
                .map(|(key, value)| (key.clone(), Shape::of_value(value)))
                .collect();
        }
        Shape::Known(known)
    }

    pub fn known(&self) -> Option<&Known> {
        match self {
            Shape::Any => None,
            Shape::Known(known) => Some(known),
        }
    }

    /// What `segments` select in data of this shape.
    pub fn lookup(&self, segments: &[PathSegment]) -> Lookup<'_> {
        let mut shape = self;
        for (depth, segment) in segments.iter().enumerate() {
            let Shape::Known(known) = shape else {
                return Lookup::Unknown;
            };
            shape = match segment {
                PathSegment::Key(key) => {
                    if !known.kinds.allows(Kinds::OBJECT) {
                        return Lookup::Never {
                            depth,
                            reason: Never::WrongKind(known.kinds),
                        };
                    }
                    match known.properties.get(key) {
                        Some(member) => member,
                        None if known.closed => {
                            return Lookup::Never {
                                depth,
                                reason: Never::NoSuchMember(
                                    known.properties.keys().cloned().collect(),
                                ),
                            };
                        }
                        None if known.properties.is_empty() => return Lookup::Unknown,
                        None => {
                            return Lookup::Undeclared {
                                depth,
                                declared: known.properties.keys().cloned().collect(),
                            };
                        }
                    }
                }
                PathSegment::Index(_) | PathSegment::FromEnd(_) => {
                    if !known.kinds.allows(Kinds::ARRAY) {
                        return Lookup::Never {
                            depth,
                            reason: Never::WrongKind(known.kinds),
                        };
                    }
                    match &known.items {
                        Some(items) => items,
                        None => return Lookup::Unknown,
                    }
                }
            };
        }
        Lookup::Found(shape)
    }

    /// The shape of the data after `value` (of unknown shape unless given) is written at
    /// `segments`.
    pub fn with_written(&self, segments: &[PathSegment], value: Shape) -> Shape {
        let Some((first, rest)) = segments.split_first() else {
            return value;
        };
        match (self, first) {
            (Shape::Known(known), PathSegment::Key(key)) if known.kinds.allows(Kinds::OBJECT) => {
                let mut known = known.clone();
                known.kinds = known.kinds.intersection(Kinds::OBJECT);
                let member = known.properties.get(key).cloned().unwrap_or_default();
                known
                    .properties
                    .insert(key.clone(), member.with_written(rest, value));
                Shape::Known(known)
            }
            _ => Shape::Any,
        }
    }

    /// The shape of the data after an object of shape `other` is merged into it (its members
    /// replace those of the same name).
    pub fn merged(&self, other: &Shape) -> Shape {
        match (self, other) {
            (Shape::Known(base), Shape::Known(added))
                if base.kinds.allows(Kinds::OBJECT) && added.kinds == Kinds::OBJECT =>
            {
                let mut known = base.clone();
                known.kinds = Kinds::OBJECT;
                for (key, shape) in &added.properties {
                    let member = match known.properties.get(key) {
                        Some(mine) => mine.merged_member(shape),
                        None => shape.clone(),
                    };
                    known.properties.insert(key.clone(), member);
                }
                known.closed = false;
                Shape::Known(known)
            }
            _ => Shape::Any,
        }
    }

    /// A member of shape `self` after a member of shape `added` is merged into it: objects key
    /// by key, recursively; arrays concatenated (either's elements); anything else replaced.
    fn merged_member(&self, added: &Shape) -> Shape {
        match (self, added) {
            (Shape::Known(mine), Shape::Known(theirs))
                if theirs.kinds == Kinds::OBJECT && mine.kinds.allows(Kinds::OBJECT) =>
            {
                self.merged(added)
            }
            (Shape::Known(mine), Shape::Known(theirs))
                if theirs.kinds == Kinds::ARRAY && mine.kinds == Kinds::ARRAY =>
            {
                self.union(added)
            }
            _ => added.clone(),
        }
    }

    /// The shape of data that is one or the other (where paths join).
    pub fn union(&self, other: &Shape) -> Shape {
        let (Shape::Known(a), Shape::Known(b)) = (self, other) else {
            return Shape::Any;
        };
        let mut properties = a.properties.clone();
        for (key, shape) in &b.properties {
            let joined = match properties.get(key) {
                Some(mine) => mine.union(shape),
                None => shape.clone(),
            };
            properties.insert(key.clone(), joined);
        }
        let items = match (&a.items, &b.items) {
            (Some(x), Some(y)) => Some(Box::new(x.union(y))),
            _ => None,
        };
        Shape::Known(Known {
            kinds: a.kinds.union(b.kinds),
            properties,
            closed: a.closed && b.closed,
            items,
        })
    }
}

fn from_schema<'a>(schema: &'a Value, reading: &mut Reading<'a>, depth: usize) -> Shape {
    let Value::Object(keywords) = schema else {
        return Shape::Any;
    };
    if depth > MAX_DEPTH || reading.budget == 0 {
        return Shape::Any;
    }
    reading.budget -= 1;
    if let Some(reference) = keywords.get("$ref").and_then(Value::as_str) {
        let within = reading
            .expanding
            .iter()
            .filter(|open| **open == reference)
            .count();
        if within > RECURSIONS {
            return Shape::Any;
        }
        let root = reading.root;
        return match reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
        {
            Some(target) => {
                reading.expanding.push(reference);
                let shape = from_schema(target, reading, depth + 1);
                reading.expanding.pop();
                shape
            }
            None => Shape::Any,
        };
    }
    let mut known = Known::default();
    match keywords.get("type") {
        Some(Value::String(name)) => known.kinds = Kinds::named(name),
        Some(Value::Array(names)) => {
            known.kinds = names
                .iter()
                .filter_map(Value::as_str)
                .map(Kinds::named)
                .fold(Kinds(0), |all, kind| Kinds(all.0 | kind.0));
        }
        _ => {}
    }
    if let Some(constant) = keywords.get("const") {
        known.kinds = known.kinds.intersection(Kinds::of(constant));
    }
    if let Some(Value::Array(values)) = keywords.get("enum") {
        let kinds = values
            .iter()
            .map(Kinds::of)
            .fold(Kinds(0), |all, kind| Kinds(all.0 | kind.0));
        if kinds.0 != 0 {
            known.kinds = known.kinds.intersection(kinds);
        }
    }
    if let Some(Value::Object(properties)) = keywords.get("properties") {
        known.properties = properties
            .iter()
            .map(|(key, schema)| (key.clone(), from_schema(schema, reading, depth + 1)))
            .collect();
    }
    known.closed = keywords.get("additionalProperties") == Some(&Value::Bool(false))
        && !keywords.contains_key("patternProperties")
        && !keywords.contains_key("unevaluatedProperties");
    // Under `prefixItems` (2020-12 tuples), `items` describes only the elements after them:
    // which one an index reaches depends on the array, so no element's shape is assumed.
    if let Some(items @ Value::Object(_)) = keywords.get("items")
        && !keywords.contains_key("prefixItems")
    {
        known.items = Some(Box::new(from_schema(items, reading, depth + 1)));
    }
    let mut shape = Shape::Known(known);
    // `allOf`: every part holds, so each adds what it knows.
    if let Some(Value::Array(parts)) = keywords.get("allOf") {
        for part in parts {
            shape = refined(&shape, &from_schema(part, reading, depth + 1));
        }
    }
    // `anyOf`/`oneOf`: one of them holds.
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alternatives)) = keywords.get(keyword) {
            let joined = alternatives
                .iter()
                .map(|alternative| from_schema(alternative, reading, depth + 1))
                .reduce(|a, b| a.union(&b))
                .unwrap_or_default();
            shape = refined(&shape, &joined);
        }
    }
    shape
}

/// What is known when both `a` and `b` hold.
fn refined(a: &Shape, b: &Shape) -> Shape {
    match (a, b) {
        (Shape::Any, other) | (other, Shape::Any) => other.clone(),
        (Shape::Known(a), Shape::Known(b)) => {
            let mut properties = a.properties.clone();
            for (key, shape) in &b.properties {
                let both = match properties.get(key) {
                    Some(mine) => refined(mine, shape),
                    None => shape.clone(),
                };
                properties.insert(key.clone(), both);
            }
            Shape::Known(Known {
                kinds: a.kinds.intersection(b.kinds),
                properties,
                // A member declared by one part is allowed by the other only if it is open.
                closed: a.closed && b.closed,
                items: a.items.clone().or_else(|| b.items.clone()),
            })
        }
    }
}
