//! Example workflows compiled by the `workflow!` macro. Run one with
//! `cargo run -p swf-examples --bin order`.
