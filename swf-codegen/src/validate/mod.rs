//! Validation rules over the IR.
