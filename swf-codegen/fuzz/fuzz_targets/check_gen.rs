//! One workflow file of any dialect through parse, validate and emit: nothing may panic, `gen`
//! produces code exactly when `check` finds no error, and that code parses as Rust.
#![no_main]

use libfuzzer_sys::fuzz_target;
use swf_codegen::source::SourceFile;

fuzz_target!(|data: &[u8]| {
    // Every entry point reads files as UTF-8 and refuses anything else before parsing.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let source = SourceFile::new("fuzz.sw.yaml", text.to_owned());
    if let Err(problem) = swf_codegen::oracle::check_agrees_with_gen(&[source]) {
        panic!("{problem}");
    }
});
