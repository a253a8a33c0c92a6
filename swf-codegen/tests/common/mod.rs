//! Scratch directories for tests that write files.

use std::path::PathBuf;

/// A fresh directory under the target directory's temp area, unique to `name`.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

pub const VALID: &str = "id: hello
name: Hello
version: '1.0'
tasks:
  - name: Greet
    type: inject
    start: {kind: default}
    data: {greeting: hello}
    end: {kind: default}
";

pub const BROKEN: &str = "id: hello
name: Hello
tasks:
  - name: Greet
    type: inject
    start: {kind: default}
    transition: {nextTask: Nowhere}
  - name: Greet
    type: delay
    timeDelay: PT1Q
    end: {kind: default}
";
