//! Scratch directories for tests that write files.

use std::ffi::OsStr;
use std::ops::Deref;
use std::path::Path;

/// A fresh directory of its own under the target directory's temp area, removed when dropped:
/// two test runs at once (or two tests) never share one.
pub struct Scratch(tempfile::TempDir);

/// A fresh scratch directory whose name starts with `name`.
pub fn scratch(name: &str) -> Scratch {
    let dir = tempfile::Builder::new()
        .prefix(&format!("{name}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("scratch directory");
    Scratch(dir)
}

impl Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<OsStr> for Scratch {
    fn as_ref(&self) -> &OsStr {
        self.0.path().as_os_str()
    }
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
