//! Wall-clock time, for scheduled starts only.
//!
//! Timeouts, delays and retry waits measure elapsed time with tokio's monotonic clock (which
//! tests can pause and advance). Only the question "is the start task active right now?" needs
//! the calendar, so it goes through a [`Clock`] that a host or a test can replace.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

/// A source of the current wall-clock time.
pub trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The operating system's clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to, for tests of scheduled starts.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<Timestamp>,
}

impl ManualClock {
    /// A clock showing `now` until it is set or advanced.
    pub fn new(now: Timestamp) -> Self {
        Self {
            now: Mutex::new(now),
        }
    }

    /// Sets the time it shows.
    pub fn set(&self, now: Timestamp) {
        *self.lock() = now;
    }

    /// Moves it forward by `by`. A move past the largest representable instant stops there.
    pub fn advance(&self, by: Duration) {
        let mut now = self.lock();
        let by = SignedDuration::try_from(by).unwrap_or(SignedDuration::MAX);
        *now = now.checked_add(by).unwrap_or(Timestamp::MAX);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Timestamp> {
        // A timestamp cannot be left half-written, so a panic elsewhere does not make it invalid.
        self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.lock()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told() {
        let start = Timestamp::from_second(1_600_000_000).unwrap_or(Timestamp::UNIX_EPOCH);
        let clock = ManualClock::new(start);
        assert_eq!(clock.now(), start);
        clock.advance(Duration::from_millis(1_500));
        assert_eq!(clock.now().as_millisecond(), 1_600_000_001_500);
        clock.set(Timestamp::UNIX_EPOCH);
        assert_eq!(clock.now(), Timestamp::UNIX_EPOCH);
        clock.advance(Duration::MAX);
        assert_eq!(clock.now(), Timestamp::MAX);
    }

    #[test]
    fn the_system_clock_is_after_2020() {
        assert!(SystemClock.now().as_second() > 1_577_836_800);
    }
}
