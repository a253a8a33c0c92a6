//! Up to four workflow files compiled together (sub-flows across files, ids and names that
//! collide), separated by a NUL byte in the input: the promises of `check_gen` for each file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let sources = swf_codegen::oracle::files_of_set(text);
    if let Err(problem) = swf_codegen::oracle::check_agrees_with_gen(&sources) {
        panic!("{problem}");
    }
});
