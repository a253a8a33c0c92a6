//! Scheduled starts: the interval during which a workflow's start task is active.
//!
//! The tasks draft writes the interval in ISO 8601 in four forms. The code generator resolves the
//! two forms anchored to a date (`start/end` and `start/duration`) to a pair of instants at build
//! time, so only the forms that count from the deployment are computed here, on the calendar
//! (in UTC: a year after 29 February is 28 February), when an instance is created.

use jiff::tz::TimeZone;
use jiff::{Span, Timestamp};

use crate::error::ErrorObject;
use crate::events::Io;

/// The error name of a start refused because the start task is not active.
pub const SCHEDULE_ERROR: &str = "ScheduleError";

/// When a workflow's start task is active: instances can only be created inside this window,
/// which includes its opening instant and excludes its closing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleWindow {
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Fixed instants, in Unix milliseconds.
    Between { start_ms: i64, end_ms: i64 },
    /// From the deployment, for a calendar span, or until `end_ms` if that comes first.
    Relative {
        span: CalendarSpan,
        end_ms: Option<i64>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CalendarSpan {
    years: i64,
    months: i64,
    weeks: i64,
    days: i64,
    millis: i64,
}

impl ScheduleWindow {
    /// Active from `start_ms` to `end_ms` (Unix milliseconds): the `start/end` form, and the
    /// `start/duration` form once the code generator has added the duration to the start.
    pub const fn between(start_ms: i64, end_ms: i64) -> Self {
        Self {
            kind: Kind::Between { start_ms, end_ms },
        }
    }

    /// Active from the deployment for a calendar span (the duration-only form, `P1Y2M10DT2H30M`):
    /// `millis` holds the hours, minutes and seconds of the duration.
    pub const fn relative(years: i64, months: i64, weeks: i64, days: i64, millis: i64) -> Self {
        Self {
            kind: Kind::Relative {
                span: CalendarSpan {
                    years,
                    months,
                    weeks,
                    days,
                    millis,
                },
                end_ms: None,
            },
        }
    }

    /// Active from the deployment for a calendar span or until `end_ms` (Unix milliseconds),
    /// whichever comes first: the `duration/end` form.
    pub const fn relative_until(
        years: i64,
        months: i64,
        weeks: i64,
        days: i64,
        millis: i64,
        end_ms: i64,
    ) -> Self {
        Self {
            kind: Kind::Relative {
                span: CalendarSpan {
                    years,
                    months,
                    weeks,
                    days,
                    millis,
                },
                end_ms: Some(end_ms),
            },
        }
    }

    /// The instants the window opens and closes, for a workflow deployed at `deployed_at`.
    pub fn bounds(&self, deployed_at: Timestamp) -> (Timestamp, Timestamp) {
        match self.kind {
            Kind::Between { start_ms, end_ms } => (instant(start_ms), instant(end_ms)),
            Kind::Relative { span, end_ms } => {
                let end = span.after(deployed_at);
                let end = end_ms.map_or(end, |limit| end.min(instant(limit)));
                (deployed_at, end)
            }
        }
    }

    /// Whether a start at `now` is allowed, for a workflow deployed at `deployed_at`.
    ///
    /// # Errors
    /// A `ScheduleError` saying when the window opens, or that it closed and when.
    pub fn check(&self, now: Timestamp, deployed_at: Timestamp) -> Result<(), ErrorObject> {
        let (opens, closes) = self.bounds(deployed_at);
        let message = if closes <= opens {
            format!(
                "the start task is never active: its schedule opens at {opens} but closes at {closes}"
            )
        } else if now < opens {
            format!("the start task is not active yet: its schedule opens at {opens}")
        } else if now >= closes {
            format!("the start task is no longer active: its schedule closed at {closes}")
        } else {
            return Ok(());
        };
        Err(ErrorObject::new(SCHEDULE_ERROR, message))
    }
}

impl CalendarSpan {
    /// `from` plus this span on the UTC calendar. A span beyond jiff's range (past the year
    /// 9999) never ends; a negative one ends before it begins.
    fn after(self, from: Timestamp) -> Timestamp {
        let span = || -> Result<Span, jiff::Error> {
            Span::new()
                .try_years(self.years)?
                .try_months(self.months)?
                .try_weeks(self.weeks)?
                .try_days(self.days)?
                .try_milliseconds(self.millis)
        };
        span()
            .and_then(|span| from.to_zoned(TimeZone::UTC).checked_add(span))
            .map_or(Timestamp::MAX, |end| end.timestamp())
    }
}

/// Unix milliseconds as an instant, saturating outside jiff's range (years -9999 to 9999).
fn instant(millis: i64) -> Timestamp {
    Timestamp::from_millisecond(millis).unwrap_or(if millis < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    })
}

/// Refuses the start of an instance outside `window`, measured on `io`'s clock from its
/// deployment instant.
///
/// # Errors
/// A `ScheduleError` saying when the window opens, or that it closed and when.
pub fn check_schedule(window: &ScheduleWindow, io: &Io) -> Result<(), ErrorObject> {
    window.check(io.clock().now(), io.deployed_at())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::clock::ManualClock;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap_or(Timestamp::UNIX_EPOCH)
    }

    fn ms(text: &str) -> i64 {
        at(text).as_millisecond()
    }

    fn refusal(result: Result<(), ErrorObject>) -> String {
        match result {
            Ok(()) => String::from("allowed"),
            Err(err) => {
                assert_eq!(err.name, SCHEDULE_ERROR);
                err.message
            }
        }
    }

    #[test]
    fn start_and_end() {
        // 2020-03-20T13:00:00Z/2021-05-11T15:30:00Z
        let window =
            ScheduleWindow::between(ms("2020-03-20T13:00:00Z"), ms("2021-05-11T15:30:00Z"));
        let clock = Arc::new(ManualClock::new(at("2020-03-20T12:59:59.999Z")));
        let io = Io::standalone_with_clock(clock.clone());
        assert_eq!(
            refusal(check_schedule(&window, &io)),
            "the start task is not active yet: its schedule opens at 2020-03-20T13:00:00Z"
        );
        clock.advance(Duration::from_millis(1));
        assert_eq!(refusal(check_schedule(&window, &io)), "allowed");
        clock.set(at("2021-05-11T15:29:59.999Z"));
        assert_eq!(refusal(check_schedule(&window, &io)), "allowed");
        clock.advance(Duration::from_millis(1));
        assert_eq!(
            refusal(check_schedule(&window, &io)),
            "the start task is no longer active: its schedule closed at 2021-05-11T15:30:00Z"
        );
    }

    #[test]
    fn start_and_duration_arrive_as_two_instants() {
        // 2020-03-20T13:00:00Z/P1Y2M10DT2H30M, added up by the code generator.
        let window =
            ScheduleWindow::between(ms("2020-03-20T13:00:00Z"), ms("2021-05-30T15:30:00Z"));
        assert_eq!(
            window.bounds(Timestamp::UNIX_EPOCH),
            (at("2020-03-20T13:00:00Z"), at("2021-05-30T15:30:00Z"))
        );
        assert_eq!(
            refusal(window.check(at("2021-05-30T15:30:00Z"), Timestamp::UNIX_EPOCH)),
            "the start task is no longer active: its schedule closed at 2021-05-30T15:30:00Z"
        );
    }

    #[test]
    fn duration_only_counts_on_the_calendar_from_the_deployment() {
        // P1Y2M10DT2H30M from a deployment on 2020-01-31: one year and two months later is
        // 2021-03-31 (the calendar, not 365 + 60 days), then 10 days, 2 hours and 30 minutes.
        let deployed = at("2020-01-31T10:00:00Z");
        let clock = Arc::new(ManualClock::new(deployed));
        let io = Io::builder().clock(clock.clone()).build();
        let window = ScheduleWindow::relative(1, 2, 0, 10, 9_000_000);
        assert_eq!(io.deployed_at(), deployed);
        assert_eq!(
            window.bounds(deployed),
            (deployed, at("2021-04-10T12:30:00Z"))
        );
        assert_eq!(refusal(check_schedule(&window, &io)), "allowed");
        clock.set(at("2021-04-10T12:29:59Z"));
        assert_eq!(refusal(check_schedule(&window, &io)), "allowed");
        clock.set(at("2021-04-10T12:30:00Z"));
        assert_eq!(
            refusal(check_schedule(&window, &io)),
            "the start task is no longer active: its schedule closed at 2021-04-10T12:30:00Z"
        );
        clock.set(at("2020-01-31T09:59:59Z"));
        assert_eq!(
            refusal(check_schedule(&window, &io)),
            "the start task is not active yet: its schedule opens at 2020-01-31T10:00:00Z"
        );
        // Weeks count as 7 days and a leap day is a day.
        let window = ScheduleWindow::relative(0, 0, 1, 0, 0);
        assert_eq!(
            window.bounds(at("2020-02-25T00:00:00Z")).1,
            at("2020-03-03T00:00:00Z")
        );
    }

    #[test]
    fn duration_and_end_whichever_comes_first() {
        // P1Y2M10DT2H30M/2020-05-11T15:30:00Z
        let end = ms("2020-05-11T15:30:00Z");
        let window = ScheduleWindow::relative_until(1, 2, 0, 10, 9_000_000, end);
        let early = at("2020-01-01T00:00:00Z");
        assert_eq!(window.bounds(early), (early, at("2020-05-11T15:30:00Z")));
        let late = at("2020-05-01T00:00:00Z");
        let clock = Arc::new(ManualClock::new(late));
        let io = Io::builder()
            .clock(clock.clone())
            .deployed_at(early)
            .build();
        assert_eq!(refusal(check_schedule(&window, &io)), "allowed");
        clock.set(at("2020-05-11T15:30:00Z"));
        assert_eq!(
            refusal(check_schedule(&window, &io)),
            "the start task is no longer active: its schedule closed at 2020-05-11T15:30:00Z"
        );
        // Deployed two weeks before the end with a one-week span: the span ends first.
        let window = ScheduleWindow::relative_until(0, 0, 1, 0, 0, end);
        let deployed = at("2020-04-27T15:30:00Z");
        assert_eq!(window.bounds(deployed).1, at("2020-05-04T15:30:00Z"));
    }

    #[test]
    fn degenerate_windows_say_so() {
        let window =
            ScheduleWindow::between(ms("2021-01-01T00:00:00Z"), ms("2020-01-01T00:00:00Z"));
        assert_eq!(
            refusal(window.check(at("2020-06-01T00:00:00Z"), Timestamp::UNIX_EPOCH)),
            "the start task is never active: its schedule opens at 2021-01-01T00:00:00Z but \
             closes at 2020-01-01T00:00:00Z"
        );
        // A span beyond jiff's calendar never closes.
        let window = ScheduleWindow::relative(i64::MAX, 0, 0, 0, 0);
        assert_eq!(window.bounds(Timestamp::UNIX_EPOCH).1, Timestamp::MAX);
        assert_eq!(instant(i64::MIN), Timestamp::MIN);
        assert_eq!(instant(i64::MAX), Timestamp::MAX);
    }
}
