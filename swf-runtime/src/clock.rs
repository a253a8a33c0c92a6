//! Wall-clock time: every deadline of an instance (delays, retry waits, event and callback
//! timeouts, time between foreach iterations, parallel timeouts) is an absolute [`Timestamp`]
//! read from a [`Clock`], so that a saved instance wakes when it would have, whichever process
//! resumes it.
//!
//! Only an action's own timeout measures elapsed time with tokio's clock: it bounds one live
//! call, which no saved state outlives.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio::sync::Notify;

/// A future a clock resolves when its time has come.
pub type Sleep<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// A source of the current wall-clock time, and of waits until an instant.
pub trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> Timestamp;

    /// Resolves once [`Clock::now`] is at or past `deadline`.
    fn sleep_until(&self, deadline: Timestamp) -> Sleep<'_>;
}

/// The system's wall clock, advancing with tokio's clock.
///
/// It reads the operating system's time once per process and from then on adds the time tokio's
/// monotonic clock has measured. So it never jumps when the system time is adjusted, deadlines
/// written by one process mean the same instant to another, and a test that pauses tokio's time
/// (`#[tokio::test(start_paused = true)]`) moves it too: delays and timeouts of a day run in an
/// instant, deterministically.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SystemClock;

/// The wall time and the monotonic instant of the process's first reading, both real.
fn anchor() -> (Timestamp, std::time::Instant) {
    static ANCHOR: OnceLock<(Timestamp, std::time::Instant)> = OnceLock::new();
    *ANCHOR.get_or_init(|| (Timestamp::now(), std::time::Instant::now()))
}

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let (wall, at) = anchor();
        // tokio's instant, which a test with paused time moves, read against the real anchor
        // in both directions: a runtime whose (paused) clock lags behind the anchor reads an
        // earlier wall time instead of a frozen one, so every runtime sees time move as its
        // own clock does, whichever runtime read the anchor first.
        let tokio_now = tokio::time::Instant::now().into_std();
        match tokio_now.checked_duration_since(at) {
            Some(ahead) => after(wall, ahead),
            None => before(wall, at.duration_since(tokio_now)),
        }
    }

    fn sleep_until(&self, deadline: Timestamp) -> Sleep<'_> {
        let (wall, at) = anchor();
        let offset = deadline.duration_since(wall);
        let instant = match Duration::try_from(offset) {
            Ok(ahead) => at.checked_add(ahead),
            Err(_) => Duration::try_from(offset.checked_neg().unwrap_or(SignedDuration::MAX))
                .ok()
                .and_then(|behind| at.checked_sub(behind)),
        };
        Box::pin(async move {
            match instant {
                Some(instant) => {
                    tokio::time::sleep_until(tokio::time::Instant::from_std(instant)).await;
                }
                // Beyond what an `Instant` can hold: long past (due now) or in centuries.
                None if deadline <= wall => {}
                None => std::future::pending::<()>().await,
            }
        })
    }
}

/// `at + by`, stopping at the largest representable instant.
pub(crate) fn after(at: Timestamp, by: Duration) -> Timestamp {
    let by = SignedDuration::try_from(by).unwrap_or(SignedDuration::MAX);
    at.checked_add(by).unwrap_or(Timestamp::MAX)
}

/// `at - by`, stopping at the smallest representable instant.
pub(crate) fn before(at: Timestamp, by: Duration) -> Timestamp {
    let by = SignedDuration::try_from(by).unwrap_or(SignedDuration::MAX);
    at.checked_sub(by).unwrap_or(Timestamp::MIN)
}

/// A clock that only moves when told to, for tests of scheduled starts and deadlines.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<Timestamp>,
    moved: Notify,
}

impl ManualClock {
    /// A clock showing `now` until it is set or advanced.
    pub fn new(now: Timestamp) -> Self {
        Self {
            now: Mutex::new(now),
            moved: Notify::new(),
        }
    }

    /// Sets the time it shows.
    pub fn set(&self, now: Timestamp) {
        *self.lock() = now;
        self.moved.notify_waiters();
    }

    /// Moves it forward by `by`. A move past the largest representable instant stops there.
    pub fn advance(&self, by: Duration) {
        {
            let mut now = self.lock();
            *now = after(*now, by);
        }
        self.moved.notify_waiters();
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

    fn sleep_until(&self, deadline: Timestamp) -> Sleep<'_> {
        Box::pin(async move {
            loop {
                let mut moved = pin!(self.moved.notified());
                moved.as_mut().enable();
                if self.now() >= deadline {
                    return;
                }
                moved.await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

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

    #[tokio::test(start_paused = true)]
    async fn the_system_clock_follows_paused_tokio_time() {
        let first = SystemClock.now();
        tokio::time::advance(Duration::from_secs(86_400)).await;
        assert_eq!(
            SystemClock.now().duration_since(first),
            SignedDuration::from_hours(24)
        );
        let deadline = after(SystemClock.now(), Duration::from_secs(3_600));
        let started = tokio::time::Instant::now();
        SystemClock.sleep_until(deadline).await;
        // To the nanosecond: deadlines and tokio's clock map one to one.
        assert_eq!(SystemClock.now(), deadline);
        assert_eq!(started.elapsed(), Duration::from_secs(3_600));
        let past = before(SystemClock.now(), Duration::from_secs(60));
        SystemClock.sleep_until(past).await;
        assert_eq!(started.elapsed(), Duration::from_secs(3_600));
    }

    #[tokio::test(start_paused = true)]
    async fn a_manual_sleep_ends_when_the_clock_is_moved_past_it() {
        let clock = Arc::new(ManualClock::new(Timestamp::UNIX_EPOCH));
        let deadline = after(Timestamp::UNIX_EPOCH, Duration::from_secs(10));
        let mover = clock.clone();
        let sleeper = tokio::spawn(async move { mover.sleep_until(deadline).await });
        tokio::task::yield_now().await;
        clock.advance(Duration::from_secs(5));
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished());
        clock.advance(Duration::from_secs(5));
        assert!(sleeper.await.is_ok());
    }
}
