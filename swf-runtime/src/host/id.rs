//! Instance identifiers.

use std::fmt;

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
}
