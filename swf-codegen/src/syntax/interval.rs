//! Scheduled-start intervals (ISO 8601): `start/end`, `start/duration`, `duration/end` and
//! `duration`. What can be computed at build time is: `start/duration` becomes an absolute
//! window. Only windows that count from the deployment instant keep a calendar span for run time.

use crate::diagnostic::{Code, Diagnostics};
use crate::source::Span;
use jiff::tz::TimeZone;
use jiff::{Span as CalendarSpan, Timestamp};
use proc_macro2::TokenStream;
use quote::quote;

/// When a scheduled start task is active.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Window {
    /// From `start_ms` to `end_ms` (Unix milliseconds).
    Between { start_ms: i64, end_ms: i64 },
    /// From the deployment instant, for a calendar span.
    Relative(SpanParts),
    /// From the deployment instant, for a span or until `end_ms`, whichever comes first.
    RelativeUntil(SpanParts, i64),
}

/// A calendar span in the units the runtime adds with jiff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanParts {
    pub years: i64,
    pub months: i64,
    pub weeks: i64,
    pub days: i64,
    pub millis: i64,
}

impl SpanParts {
    fn of(span: &CalendarSpan) -> Self {
        SpanParts {
            years: i64::from(span.get_years()),
            months: i64::from(span.get_months()),
            weeks: i64::from(span.get_weeks()),
            days: i64::from(span.get_days()),
            millis: span.get_hours() as i64 * 3_600_000
                + span.get_minutes() * 60_000
                + span.get_seconds() * 1_000
                + span.get_milliseconds(),
        }
    }
}

impl Window {
    /// The runtime's `ScheduleWindow` constructor for this window.
    pub fn to_tokens(&self, rt: &impl quote::ToTokens) -> TokenStream {
        match *self {
            Window::Between { start_ms, end_ms } => {
                quote!(#rt::ScheduleWindow::between(#start_ms, #end_ms))
            }
            Window::Relative(SpanParts {
                years,
                months,
                weeks,
                days,
                millis,
            }) => quote!(#rt::ScheduleWindow::relative(#years, #months, #weeks, #days, #millis)),
            Window::RelativeUntil(
                SpanParts {
                    years,
                    months,
                    weeks,
                    days,
                    millis,
                },
                end_ms,
            ) => quote!(#rt::ScheduleWindow::relative_until(
                #years, #months, #weeks, #days, #millis, #end_ms
            )),
        }
    }
}

/// Checks an interval where the workflow gives it, so that a bad one is a compile error there.
pub fn check(text: &str, span: Span, diags: &mut Diagnostics) {
    if let Err(message) = parse_window(text) {
        diags
            .error(Code::BAD_SCHEDULE, span, message)
            .help("write `2020-03-20T13:00:00Z/2021-05-11T15:30:00Z`, `2020-03-20T13:00:00Z/P1Y2M`, `P1Y2M10DT2H30M/2020-05-11T15:30:00Z` or `P1D`");
    }
}

pub fn parse_window(text: &str) -> Result<Window, String> {
    let text = text.trim();
    let mut parts = text.split('/');
    let (first, second) = (parts.next().unwrap_or(""), parts.next());
    if parts.next().is_some() {
        return Err(format!(
            "`{text}` has more than two parts; a schedule interval is `start/end`, `start/duration`, `duration/end` or `duration`"
        ));
    }
    let is_duration = |s: &str| s.starts_with(['P', 'p']);
    match second {
        None if is_duration(first) => Ok(Window::Relative(SpanParts::of(&span(first)?))),
        None => Err(format!(
            "`{text}` is a single instant; a schedule interval needs an end or a duration"
        )),
        Some(second) => match (is_duration(first), is_duration(second)) {
            (false, false) => {
                let (start, end) = (timestamp(first)?, timestamp(second)?);
                if end <= start {
                    return Err(format!("`{text}` ends before it starts"));
                }
                Ok(Window::Between {
                    start_ms: start.as_millisecond(),
                    end_ms: end.as_millisecond(),
                })
            }
            (false, true) => {
                let start = timestamp(first)?;
                let length = span(second)?;
                let end = start
                    .to_zoned(TimeZone::UTC)
                    .checked_add(length)
                    .map_err(|e| format!("`{text}`: {e}"))?
                    .timestamp();
                Ok(Window::Between {
                    start_ms: start.as_millisecond(),
                    end_ms: end.as_millisecond(),
                })
            }
            (true, false) => Ok(Window::RelativeUntil(
                SpanParts::of(&span(first)?),
                timestamp(second)?.as_millisecond(),
            )),
            (true, true) => Err(format!("`{text}` has two durations and no instant")),
        },
    }
}

fn timestamp(text: &str) -> Result<Timestamp, String> {
    text.parse::<Timestamp>().map_err(|e| {
        format!(
            "`{text}` is not an instant with a time zone offset, such as 2020-03-20T13:00:00Z ({e})"
        )
    })
}

fn span(text: &str) -> Result<CalendarSpan, String> {
    let span = text
        .parse::<CalendarSpan>()
        .map_err(|e| format!("`{text}` is not an ISO 8601 duration ({e})"))?;
    if span.is_negative() || span.is_zero() {
        return Err(format!("`{text}` must be a positive duration"));
    }
    Ok(span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_forms_of_the_draft() {
        assert_eq!(
            parse_window("2020-03-20T13:00:00Z/2021-05-11T15:30:00Z"),
            Ok(Window::Between {
                start_ms: 1_584_709_200_000,
                end_ms: 1_620_747_000_000
            })
        );
        // Start + duration is resolved with the calendar at build time.
        let Ok(Window::Between { start_ms, end_ms }) =
            parse_window("2020-03-20T13:00:00Z/P1Y2M10DT2H30M")
        else {
            panic!("start/duration")
        };
        assert_eq!(start_ms, 1_584_709_200_000);
        let end: Timestamp = "2021-05-30T15:30:00Z".parse().expect("instant");
        assert_eq!(end_ms, end.as_millisecond());
        assert_eq!(
            parse_window("P1Y2M10DT2H30M/2020-05-11T15:30:00Z"),
            Ok(Window::RelativeUntil(
                SpanParts {
                    years: 1,
                    months: 2,
                    weeks: 0,
                    days: 10,
                    millis: 9_000_000
                },
                1_589_211_000_000
            ))
        );
        assert!(matches!(parse_window("P1D"), Ok(Window::Relative(_))));
    }

    #[test]
    fn bad_intervals_say_why() {
        for bad in [
            "2020-03-20T13:00:00Z",
            "2021-01-01T00:00:00Z/2020-01-01T00:00:00Z",
            "P1D/P2D",
            "tomorrow/P1D",
            "a/b/c",
            "PT0S",
        ] {
            assert!(parse_window(bad).is_err(), "{bad}");
        }
    }
}
