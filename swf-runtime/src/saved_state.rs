//! Writing a scope's state enum and reading it back, once for every generated machine.
//!
//! A state is saved as serde's externally tagged enum (`{"Task name": {"data": …}}`). serde's
//! derive writes that reading out in full for every variant (a field enum, two visitors and a
//! `deserialize_struct` call each): about a hundred lines a task that rustc type-checks,
//! borrow-checks and, once a store instantiates it, optimizes. A 1,000-task workflow spent
//! more than half of its build there. Here the tag is read once, generically; the generated
//! code only maps a variant's index to the content type it shares with every variant of the
//! same shape (`Content…` structs, derived once a scope) and to the variant.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, VariantAccess, Visitor};
use serde::{Serialize, Serializer};

/// A state enum read by [`deserialize`]: its name, its variants' saved names in declaration
/// order, and how the content of each is read.
pub trait SavedVariants: Sized {
    /// The enum's name, for formats that record it.
    const NAME: &'static str;
    /// The saved name of every variant, in declaration order (a variant's index is its place
    /// here).
    const TAGS: &'static [&'static str];

    /// The variant at `index` in [`Self::TAGS`], its content read from `content`.
    ///
    /// # Errors
    /// The format's error for content that does not fit the variant.
    fn read<'de, A: VariantAccess<'de>>(index: usize, content: A) -> Result<Self, A::Error>;

    /// Writes the variant at `index` in [`Self::TAGS`] with its `content`, as serde's derive
    /// writes a struct variant.
    ///
    /// # Errors
    /// The format's.
    fn write<S: Serializer, C: Serialize>(
        serializer: S,
        index: usize,
        content: &C,
    ) -> Result<S::Ok, S::Error> {
        // An index past `u32` would be a state enum of four billion tasks.
        let position = u32::try_from(index).unwrap_or(u32::MAX);
        let tag = Self::TAGS.get(index).copied().unwrap_or_default();
        serializer.serialize_newtype_variant(Self::NAME, position, tag, content)
    }
}

/// Reads a `S` saved as an externally tagged enum.
///
/// # Errors
/// An unknown variant (`unknown variant `x`, expected one of …`, as serde's derive says it),
/// or the content's error.
pub fn deserialize<'de, S: SavedVariants, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<S, D::Error> {
    deserializer.deserialize_enum(S::NAME, S::TAGS, EnumVisitor(PhantomData))
}

struct EnumVisitor<S>(PhantomData<S>);

impl<'de, S: SavedVariants> Visitor<'de> for EnumVisitor<S> {
    type Value = S;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "enum {}", S::NAME)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<S, A::Error> {
        let (index, content) = data.variant_seed(Tag(S::TAGS))?;
        S::read(index, content)
    }
}

/// A variant's tag: its saved name (self-describing formats) or its index (compact ones), as
/// the index in the tags.
struct Tag(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Tag {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl Visitor<'_> for Tag {
    type Value = usize;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("variant identifier")
    }

    fn visit_u64<E: de::Error>(self, index: u64) -> Result<usize, E> {
        usize::try_from(index)
            .ok()
            .filter(|index| *index < self.0.len())
            .ok_or_else(|| {
                E::invalid_value(
                    de::Unexpected::Unsigned(index),
                    &format!("variant index 0 <= i < {}", self.0.len()).as_str(),
                )
            })
    }

    fn visit_str<E: de::Error>(self, tag: &str) -> Result<usize, E> {
        self.0
            .iter()
            .position(|known| *known == tag)
            .ok_or_else(|| E::unknown_variant(tag, self.0))
    }

    fn visit_bytes<E: de::Error>(self, tag: &[u8]) -> Result<usize, E> {
        match self.0.iter().position(|known| known.as_bytes() == tag) {
            Some(index) => Ok(index),
            None => Err(E::unknown_variant(&String::from_utf8_lossy(tag), self.0)),
        }
    }
}

/// The content of a task's variant that holds only its data (most do), read.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Data {
    /// The task's data.
    pub data: serde_json::Value,
}

/// The content of a task's variant that holds only its data, written.
#[derive(Serialize)]
pub struct DataRef<'a> {
    /// The task's data.
    pub data: &'a serde_json::Value,
}

/// The content of a scope's `completed` and `terminated` variants, read.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ended {
    /// The scope's output.
    pub output: serde_json::Value,
}

/// The content of a scope's `completed` and `terminated` variants, written.
#[derive(Serialize)]
pub struct Ending<'a> {
    /// The scope's output.
    pub output: &'a serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// A hand-written user of the trait, as the generated code writes it.
    #[derive(Debug, PartialEq)]
    enum Machine {
        First { data: Value },
        Completed { output: Value },
    }

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Content0 {
        data: Value,
    }

    impl SavedVariants for Machine {
        const NAME: &'static str = "Machine";
        const TAGS: &'static [&'static str] = &["First task", "completed"];

        fn read<'de, A: VariantAccess<'de>>(index: usize, content: A) -> Result<Self, A::Error> {
            match index {
                0 => content
                    .newtype_variant()
                    .map(|Content0 { data }| Machine::First { data }),
                _ => content
                    .newtype_variant()
                    .map(|Ended { output }| Machine::Completed { output }),
            }
        }
    }

    impl<'de> serde::Deserialize<'de> for Machine {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserialize(deserializer)
        }
    }

    #[test]
    fn a_variant_is_read_by_its_saved_name() {
        let state: Machine = serde_json::from_str(r#"{"First task": {"data": {"n": 1}}}"#)
            .expect("a saved state reads");
        assert_eq!(
            state,
            Machine::First {
                data: json!({"n": 1})
            }
        );
        let ended: Machine =
            serde_json::from_value(json!({"completed": {"output": [1]}})).expect("reads");
        assert_eq!(ended, Machine::Completed { output: json!([1]) });
    }

    #[test]
    fn an_unknown_variant_or_field_is_refused_as_serde_derive_refuses_it() {
        let unknown = serde_json::from_str::<Machine>(r#"{"Gone": {"data": {}}}"#)
            .expect_err("an unknown task is refused");
        assert_eq!(
            unknown.to_string(),
            "unknown variant `Gone`, expected `First task` or `completed` at line 1 column 7"
        );
        let field = serde_json::from_str::<Machine>(r#"{"First task": {"data": {}, "retry": {}}}"#)
            .expect_err("a field of another kind of task is refused");
        assert!(
            field
                .to_string()
                .starts_with("unknown field `retry`, expected `data`"),
            "{field}"
        );
        let missing = serde_json::from_str::<Machine>(r#"{"completed": {}}"#)
            .expect_err("content without its fields is refused");
        assert!(
            missing.to_string().starts_with("missing field `output`"),
            "{missing}"
        );
    }

    #[test]
    fn a_compact_format_names_the_variant_by_its_index() {
        use serde::de::IntoDeserializer;
        use serde::de::value::{Error, U64Deserializer};
        let index = Tag(Machine::TAGS)
            .deserialize(IntoDeserializer::<Error>::into_deserializer(1_u64))
            .expect("an index in range");
        assert_eq!(index, 1);
        let out_of_range: Result<usize, Error> =
            Tag(Machine::TAGS).deserialize(U64Deserializer::new(2));
        assert!(out_of_range.is_err());
        let bytes: Result<usize, Error> =
            Tag(Machine::TAGS).deserialize(serde::de::value::BytesDeserializer::new(b"completed"));
        assert_eq!(bytes.expect("a tag as bytes"), 1);
    }
}
