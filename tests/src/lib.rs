//! Integration tests of swf: compile-fail cases (`tests/ui.rs`), runtime semantics, the drafts'
//! own examples, snapshots of generated code, and this crate itself, whose build script compiles
//! `workflows/built.sw.yaml` through `swf_codegen::Builder`.

pub mod scripted;
pub mod shop;
pub mod stores;

/// The workflow compiled by `build.rs`.
pub mod built {
    swf_runtime::include_workflow!("built");
}
