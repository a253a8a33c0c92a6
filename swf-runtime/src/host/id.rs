//! Instance identifiers.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

/// The identifier of one workflow instance in a [`Host`](crate::Host): a number that the host
/// hands out in creation order, starting at 1. A start that [`Machine::start`] refuses uses up
/// its number, so the numbers are unique and increasing but not always consecutive.
///
/// [`Machine::start`]: crate::Machine::start
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InstanceId(u64);

impl InstanceId {
    /// The identifier with number `number`.
    pub const fn new(number: u64) -> Self {
        Self(number)
    }

    /// Its number.
    pub const fn get(self) -> u64 {
        self.0
    }
}

/// Maps keyed by instance, hashed with [`IdHasher`].
pub(crate) type ById<V> = HashMap<InstanceId, V, BuildHasherDefault<IdHasher>>;

/// A hasher for instance identifiers: the host hands them out, so nobody can choose keys that
/// collide, and SipHash (the default, which resists that) cost more than the lookup itself on
/// every routed event. One multiplication by an odd constant (Fibonacci hashing) spreads the
/// consecutive numbers over the high bits, which hashbrown's control bytes read.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, number: u64) {
        self.0 = (self.0 ^ number).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }
}

impl fmt::Display for InstanceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_and_serializes_as_its_number() {
        let id = InstanceId::new(42);
        assert_eq!(id.to_string(), "42");
        assert_eq!(id.get(), 42);
        assert_eq!(serde_json::to_value(id).ok(), Some(serde_json::json!(42)));
        assert!(InstanceId::new(1) < id);
    }

    #[test]
    fn consecutive_identifiers_hash_apart() {
        use std::hash::BuildHasher;
        let hasher = BuildHasherDefault::<IdHasher>::default();
        let hashes: std::collections::BTreeSet<u64> = (1..=1000)
            .map(|n| hasher.hash_one(InstanceId::new(n)) >> 57)
            .collect();
        assert_eq!(
            hashes.len(),
            128,
            "every value of the top seven bits is used"
        );
        let mut map: ById<u64> = ById::default();
        map.insert(InstanceId::new(7), 7);
        assert_eq!(map.get(&InstanceId::new(7)), Some(&7));
    }
}
