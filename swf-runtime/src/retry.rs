//! Retry schedules: how many retries a task has made and when the next one may start.

use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::clock::after;
use crate::events::Io;
use crate::progress::Wait;

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

/// The retries one task (or one action) has made so far, kept inside the generated state so
/// that a saved instance resumes with the right counts and waits until the same instant.
///
/// Each retry definition counts its own attempts (index = position of the definition), because
/// the drafts give each definition its own `maxAttempts`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RetryProgress {
    /// Retries made per retry definition; a missing entry means none yet.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    attempts: Vec<u32>,
    /// When the next attempt may start; `None`: at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_before: Option<Timestamp>,
}

impl RetryProgress {
    /// The number of retries made so far under retry definition `index`.
    pub fn attempts(&self, index: usize) -> u32 {
        self.attempts.get(index).copied().unwrap_or(0)
    }

    /// Which attempt the next run is: 1 for the first, 2 after one retry...
    pub fn attempt(&self) -> u32 {
        self.attempts
            .iter()
            .fold(1_u32, |total, made| total.saturating_add(*made))
    }

    /// When the next attempt may start (`None`: at once).
    pub fn not_before(&self) -> Option<Timestamp> {
        self.not_before
    }

    /// When the next attempt starts, seen at `now`: when its wait ends, or now if it has.
    pub fn starts_at(&self, now: Timestamp) -> Timestamp {
        self.not_before
            .map_or(now, |not_before| not_before.max(now))
    }

    /// The progress after one more retry under definition `index`, failing at `now`; `None`
    /// when the definition has no attempts left, so `onError` decides.
    pub fn next(
        &self,
        index: usize,
        policy: &RetryPolicy,
        now: Timestamp,
    ) -> Option<RetryProgress> {
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
        let delay = policy.delay_before(retry);
        crate::trace::retry_scheduled(retry + 1, delay);
        Some(RetryProgress {
            attempts,
            not_before: (!delay.is_zero()).then(|| after(now, delay)),
        })
    }

    /// What to wait for before the next attempt may run, or `None` when it may run now.
    pub fn pending(&self, io: &Io) -> Option<Wait> {
        self.not_before
            .filter(|not_before| io.now() < *not_before)
            .map(Wait::until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap_or(Timestamp::UNIX_EPOCH)
    }

    #[test]
    fn waits_follow_the_tasks_draft_example() {
        let policy = RetryPolicy::new(MINUTE, 2 * MINUTE, 4);
        let mut progress = RetryProgress::default();
        let mut waits = Vec::new();
        let now = at(1_000);
        while let Some(next) = progress.next(0, &policy, now) {
            let wait = next.not_before().map(|t| t.duration_since(now).as_secs());
            waits.push(wait);
            progress = next;
        }
        assert_eq!(waits, [Some(60), Some(180), Some(300), Some(420)]);
        assert_eq!(progress.attempts(0), 4);
        assert_eq!(progress.attempt(), 5);
    }

    #[test]
    fn zero_attempts_means_no_retry() {
        let policy = RetryPolicy::new(MINUTE, Duration::ZERO, 0);
        assert_eq!(RetryProgress::default().next(0, &policy, at(0)), None);
    }

    #[test]
    fn definitions_count_separately() {
        let first = RetryPolicy::new(MINUTE, Duration::ZERO, 1);
        let second = RetryPolicy::new(2 * MINUTE, Duration::ZERO, 2);
        let progress = RetryProgress::default();
        let Some(progress) = progress.next(1, &second, at(0)) else {
            panic!("the second definition allows two retries");
        };
        assert_eq!((progress.attempts(0), progress.attempts(1)), (0, 1));
        assert_eq!(progress.not_before(), Some(at(120)));
        let Some(progress) = progress.next(0, &first, at(0)) else {
            panic!("the first definition allows one retry");
        };
        assert_eq!((progress.attempts(0), progress.attempts(1)), (1, 1));
        assert_eq!(progress.next(0, &first, at(0)), None);
        assert!(progress.next(1, &second, at(0)).is_some());
    }

    #[test]
    fn huge_durations_saturate_instead_of_overflowing() {
        let policy = RetryPolicy::new(Duration::MAX, Duration::MAX, 3);
        assert_eq!(policy.delay_before(3), Duration::MAX);
        let progress = RetryProgress::default().next(0, &policy, at(0));
        assert_eq!(progress.and_then(|p| p.not_before()), Some(Timestamp::MAX));
    }

    #[test]
    fn a_zero_interval_retries_at_once() {
        let policy = RetryPolicy::new(Duration::ZERO, Duration::ZERO, 1);
        let progress = RetryProgress::default().next(0, &policy, at(0));
        assert_eq!(progress.map(|p| p.not_before()), Some(None));
    }

    #[test]
    fn serde_round_trips_and_tolerates_missing_fields() {
        let policy = RetryPolicy::new(MINUTE, MINUTE, 2);
        let progress = RetryProgress::default()
            .next(2, &policy, at(0))
            .unwrap_or_default();
        let value = serde_json::to_value(&progress).unwrap_or_default();
        assert_eq!(
            value,
            serde_json::json!({"attempts": [0, 0, 1], "not_before": "1970-01-01T00:01:00Z"})
        );
        assert_eq!(
            serde_json::from_value::<RetryProgress>(value).ok(),
            Some(progress)
        );
        let empty = serde_json::from_value::<RetryProgress>(serde_json::json!({})).ok();
        assert_eq!(empty, Some(RetryProgress::default()));
    }
}
