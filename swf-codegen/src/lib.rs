//! The swf compiler: Serverless Workflow files in, typed async Rust state machines out.
//!
//! One pipeline, one direction, shared by the `workflow!` macro, the build.rs [`Builder`] and the
//! `swfc` command: `parse` (one front end per dialect) → [`ir`] → [`schema`] (the data schema
//! files the workflow names are read) → `validate` (every diagnostic collected) → `graph` (petgraph, document order) → `emit` (pure functions returning tokens);
//! [`diagram`] draws the same graphs as Mermaid, DOT or SVG.

mod builder;
pub mod diagnostic;
pub mod diagram;
pub mod emit;
pub mod emit_parts;
pub mod graph;
pub mod ir;
// For the smoke, property and fuzz tests: not an API.
#[doc(hidden)]
pub mod oracle;
pub mod parse;
mod pipeline;
pub mod schema;
pub mod source;
pub mod syntax;
pub mod validate;

pub use builder::{BuildError, Builder};
pub use pipeline::{
    Compilation, DIAGRAM_DOC_MAX_TASKS, Options, check, check_all, compile, compile_all,
    compile_all_with, file_stem, format_file,
};
