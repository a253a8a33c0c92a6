//! Retry schedules: how many retries a task has made and how long to wait before the next one.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One retry definition of a task, with its durations already parsed at build time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RetryPolicy {
    /// The wait before the first retry.
    pub interval: Duration,
    /// What is added to the wait at each further retry.
    pub multiplier: Duration,
    /// How many retries this definition allows (0 means none). The code generator already
    /// lowers it to the repeat count of an interval such as `R5/PT15M`.
    pub max_attempts: u32,
}

impl RetryPolicy {
    /// A policy waiting `interval`, then `interval + multiplier`, then
    /// `interval + 2 × multiplier`… for at most `max_attempts` retries.
    pub const fn new(interval: Duration, multiplier: Duration, max_attempts: u32) -> Self {
        Self {
            interval,
            multiplier,
            max_attempts,
        }
    }

    /// The wait before retry number `retry` (1-based): `interval + (retry - 1) × multiplier`.
    ///
    /// The tasks draft's example (interval `PT1M`, multiplier `PT2M`) waits 1, 3, 5 and 7
    /// minutes. The arithmetic saturates, so an absurd multiplier means "wait forever" rather
    /// than an overflow.
    pub fn delay_before(&self, retry: u32) -> Duration {
        let steps = retry.saturating_sub(1);
        self.interval
            .saturating_add(self.multiplier.saturating_mul(steps))
    }
}

/// The retries one task has made so far, kept inside the generated state enum so that a saved
/// instance resumes with the right counts and the right pending wait.
///
/// Each retry definition of the task counts its own attempts (index = position of the definition
/// in the task), because the drafts give each definition its own `maxAttempts`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RetryProgress {
    /// Retries made per retry definition; a missing entry means none yet.
    attempts: Vec<u32>,
    /// The delay to wait before the next attempt, in milliseconds.
    wait_millis: u64,
}

impl RetryProgress {
    /// The number of retries made so far under retry definition `index`.
    pub fn attempts(&self, index: usize) -> u32 {
        self.attempts.get(index).copied().unwrap_or(0)
    }

    /// The delay, in milliseconds, that [`RetryProgress::wait`] sleeps before the next attempt.
    pub fn wait_millis(&self) -> u64 {
        self.wait_millis
    }

    /// The progress after one more retry under definition `index`, with the wait before that
    /// retry; `None` when the definition has no attempts left, so `onError` decides.
    pub fn next(&self, index: usize, policy: &RetryPolicy) -> Option<RetryProgress> {
        let made = self.attempts(index);
        if made >= policy.max_attempts {
            return None;
        }
        let retry = made + 1;
        let mut attempts = self.attempts.clone();
        if attempts.len() <= index {
            attempts.resize(index + 1, 0);
        }
        if let Some(slot) = attempts.get_mut(index) {
            *slot = retry;
        }
        // Milliseconds in a u64 cover 584 million years; anything longer is "forever" anyway.
        let wait_millis = u64::try_from(policy.delay_before(retry).as_millis()).unwrap_or(u64::MAX);
        Some(RetryProgress {
            attempts,
            wait_millis,
        })
    }

    /// Sleeps for the pending wait (not at all when it is zero).
    pub async fn wait(&self) {
        if self.wait_millis > 0 {
            tokio::time::sleep(Duration::from_millis(self.wait_millis)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::time::Instant;

    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[tokio::test(start_paused = true)]
    async fn waits_follow_the_tasks_draft_example() {
        let policy = RetryPolicy::new(MINUTE, 2 * MINUTE, 4);
        let mut progress = RetryProgress::default();
        let mut waits = Vec::new();
        while let Some(next) = progress.next(0, &policy) {
            let started = Instant::now();
            next.wait().await;
            waits.push(started.elapsed());
            progress = next;
        }
        assert_eq!(waits, [MINUTE, 3 * MINUTE, 5 * MINUTE, 7 * MINUTE]);
        assert_eq!(progress.attempts(0), 4);
    }

    #[test]
    fn zero_attempts_means_no_retry() {
        let policy = RetryPolicy::new(MINUTE, Duration::ZERO, 0);
        assert_eq!(RetryProgress::default().next(0, &policy), None);
    }

    #[test]
    fn definitions_count_separately() {
        let first = RetryPolicy::new(MINUTE, Duration::ZERO, 1);
        let second = RetryPolicy::new(2 * MINUTE, Duration::ZERO, 2);
        let progress = RetryProgress::default();
        let Some(progress) = progress.next(1, &second) else {
            panic!("the second definition allows two retries");
        };
        assert_eq!((progress.attempts(0), progress.attempts(1)), (0, 1));
        assert_eq!(progress.wait_millis(), 120_000);
        let Some(progress) = progress.next(0, &first) else {
            panic!("the first definition allows one retry");
        };
        assert_eq!((progress.attempts(0), progress.attempts(1)), (1, 1));
        assert_eq!(progress.next(0, &first), None);
        assert!(progress.next(1, &second).is_some());
    }

    #[test]
    fn huge_durations_saturate_instead_of_overflowing() {
        let policy = RetryPolicy::new(Duration::MAX, Duration::MAX, 3);
        assert_eq!(policy.delay_before(3), Duration::MAX);
        let progress = RetryProgress::default().next(0, &policy);
        assert_eq!(progress.map(|p| p.wait_millis()), Some(u64::MAX));
    }

    #[tokio::test(start_paused = true)]
    async fn a_zero_wait_does_not_sleep() {
        let started = Instant::now();
        RetryProgress::default().wait().await;
        assert_eq!(started.elapsed(), Duration::ZERO);
    }

    #[test]
    fn serde_round_trips_and_tolerates_missing_fields() {
        let policy = RetryPolicy::new(MINUTE, MINUTE, 2);
        let progress = RetryProgress::default()
            .next(2, &policy)
            .unwrap_or_default();
        let value = serde_json::to_value(&progress).unwrap_or_default();
        assert_eq!(
            value,
            serde_json::json!({"attempts": [0, 0, 1], "wait_millis": 60_000})
        );
        assert_eq!(
            serde_json::from_value::<RetryProgress>(value).ok(),
            Some(progress)
        );
        let empty = serde_json::from_value::<RetryProgress>(serde_json::json!({})).ok();
        assert_eq!(empty, Some(RetryProgress::default()));
    }
}
