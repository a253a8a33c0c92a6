//! Where a future runs among nested scopes (`Fork/Branch A@2/Each[3]`), kept as its parts and
//! written out only when read: a branch or iteration enters its scope at every step, and most
//! steps never read the text (only a function asking for its call context, or a span somebody
//! listens to, does).

use std::fmt;
use std::sync::Arc;

/// One nested scope inside the one it runs in.
#[derive(Debug, Clone)]
pub(crate) struct ScopePath {
    outer: Option<Arc<ScopePath>>,
    /// The branch's path (`Fork/Branch A`), the foreach task's name, or the sub-flow's task.
    name: &'static str,
    /// The iteration's item, for a foreach task's scope.
    item: Option<usize>,
    /// Which step of the branch or iteration this is (0: the first, not written).
    step: u32,
    /// The instance's step its calls count their keys from (see `action::member_step`), if it
    /// is, or is nested in, a branch or an iteration; not written.
    origin: Option<u64>,
}

impl ScopePath {
    pub(crate) fn new(
        outer: Option<Arc<ScopePath>>,
        name: &'static str,
        item: Option<usize>,
        step: u32,
    ) -> Self {
        Self {
            outer,
            name,
            item,
            step,
            origin: None,
        }
    }

    /// The same scope, its calls counting their keys from `origin`.
    pub(crate) fn with_origin(self, origin: Option<u64>) -> Self {
        Self { origin, ..self }
    }

    /// The instance's step its calls count their keys from, if it is, or is nested in, a
    /// branch or an iteration.
    pub(crate) fn origin(&self) -> Option<u64> {
        self.origin
    }
}

impl fmt::Display for ScopePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(outer) = &self.outer {
            write!(f, "{outer}/")?;
        }
        f.write_str(self.name)?;
        if let Some(item) = self.item {
            write!(f, "[{item}]")?;
        }
        if self.step > 0 {
            write!(f, "@{}", self.step)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_as_their_parts_joined() {
        let branch = Arc::new(ScopePath::new(None, "Fork/Branch A", None, 2));
        let iteration = ScopePath::new(Some(Arc::clone(&branch)), "Each", Some(3), 0);
        assert_eq!(iteration.to_string(), "Fork/Branch A@2/Each[3]");
        let stepped = ScopePath::new(Some(branch), "Each", Some(0), 1);
        assert_eq!(stepped.to_string(), "Fork/Branch A@2/Each[0]@1");
    }
}
