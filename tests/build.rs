//! The build.rs route: compiles a workflow with `swf_codegen::Builder` into OUT_DIR, included by
//! `src/lib.rs` with `include_workflow!`.

fn main() {
    if let Err(error) = swf_codegen::Builder::new()
        .file("workflows/built.sw.yaml")
        // The README's include_workflow! snippet (tests/tests/readme.rs).
        .file("workflows/order.sw.yaml")
        .compile()
    {
        eprintln!("{error}");
        std::process::exit(1);
    }
}
