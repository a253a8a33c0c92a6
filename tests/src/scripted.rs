//! A scripted function for runtime tests: it answers each call from a closure and records the
//! virtual time and the arguments of every call.

use std::sync::Mutex;
use std::time::Duration;

use swf_runtime::{FunctionError, Value};
use tokio::time::Instant;

/// What a scripted function answers to its call number `n` (0-based) with arguments `args`.
type Answer = Box<dyn Fn(usize, &Value) -> Result<Value, FunctionError> + Send + Sync>;

/// A scripted function that records the virtual time and the arguments of every call.
pub struct Calls {
    started: Instant,
    log: Mutex<Vec<(Duration, Value)>>,
    answer: Answer,
}

impl Calls {
    /// Must be created inside the test's runtime, so that `started` is on its clock.
    pub fn new(
        answer: impl Fn(usize, &Value) -> Result<Value, FunctionError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            started: Instant::now(),
            log: Mutex::new(Vec::new()),
            answer: Box::new(answer),
        }
    }

    /// Records the call and answers it.
    pub fn call(&self, args: Value) -> Result<Value, FunctionError> {
        let n = {
            let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
            log.push((self.started.elapsed(), args.clone()));
            log.len() - 1
        };
        (self.answer)(n, &args)
    }

    /// The virtual time of each call, since the function was created.
    pub fn times(&self) -> Vec<Duration> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.iter().map(|(at, _)| *at).collect()
    }

    /// The arguments of each call.
    pub fn args(&self) -> Vec<Value> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.iter().map(|(_, args)| args.clone()).collect()
    }

    /// The waits between consecutive calls.
    pub fn gaps(&self) -> Vec<Duration> {
        self.times().windows(2).map(|w| w[1] - w[0]).collect()
    }
}
