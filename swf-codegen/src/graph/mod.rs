//! The transition graph of each scope.
