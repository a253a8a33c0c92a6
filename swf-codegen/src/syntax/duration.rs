//! ISO 8601 durations (`PT15M`, `P2DT3H4M`, `PT0.5S`, `P1W`) and retry intervals (`PT2M`,
//! `R5/PT15M`), turned into milliseconds at build time.
//!
//! Durations here are fixed-length time spans (a timeout, a delay, a retry wait), so a day is
//! 24 hours and a week 7 days, while years and months, whose length depends on the calendar,
//! are refused.

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{DurationSpec, RetryInterval};
use crate::source::Span;
use jiff::SpanRelativeTo;
use jiff::fmt::temporal::SpanParser;

/// jiff's ISO 8601 span parser. Its friendly format (`2h 30m`) is deliberately not accepted:
/// the drafts and SEMANTICS.md say ISO 8601, and one spelling keeps workflow files portable.
static PARSER: SpanParser = SpanParser::new();

/// Parses an ISO 8601 duration. On error records `BAD_DURATION` and returns a zero length.
pub fn parse(text: &str, span: Span, diags: &mut Diagnostics) -> DurationSpec {
    let millis = match millis_of(text) {
        Ok(millis) => millis,
        Err(problem) => {
            diags
                .error(Code::BAD_DURATION, span, problem.message(text))
                .help(problem.help(text));
            0
        }
    };
    DurationSpec {
        text: text.to_string(),
        millis,
        span,
    }
}

/// A duration given as integer seconds (the first draft's `timeout: 30`). The text is kept as
/// the user wrote it.
pub fn parse_seconds(value: u64, span: Span) -> DurationSpec {
    DurationSpec {
        text: value.to_string(),
        // u64::MAX milliseconds is over 500 million years; saturating cannot change a real wait.
        millis: value.saturating_mul(1000),
        span,
    }
}

/// Parses a retry interval: a duration (`PT2M`) or a repeating interval `R<n>/<duration>`
/// (`R5/PT15M`: at most 5 retries, 15 minutes apart; `R/PT1M` repeats without a bound).
/// On error records `BAD_INTERVAL` and returns a zero length without a repeat count.
pub fn parse_retry_interval(text: &str, span: Span, diags: &mut Diagnostics) -> RetryInterval {
    let (millis, repeat) = match interval_of(text) {
        Ok(parsed) => parsed,
        Err((message, help)) => {
            diags.error(Code::BAD_INTERVAL, span, message).help(help);
            (0, None)
        }
    };
    RetryInterval {
        text: text.to_string(),
        millis,
        repeat,
        span,
    }
}

/// Why a duration was refused.
#[derive(Debug, Clone, PartialEq)]
enum Problem {
    /// Not ISO 8601 at all; holds jiff's explanation.
    Syntax(String),
    /// Uses years or months.
    Calendar,
    Negative,
    /// Longer than the milliseconds we can count (not reachable with jiff's limits today).
    TooLong,
}

impl Problem {
    fn message(&self, text: &str) -> String {
        let text = super::excerpt(text);
        match self {
            Problem::Syntax(reason) => {
                format!("`{text}` is not an ISO 8601 duration: {reason}")
            }
            Problem::Calendar => {
                format!("duration `{text}` uses years or months, which have no fixed length")
            }
            Problem::Negative => format!("duration `{text}` is negative"),
            Problem::TooLong => format!("duration `{text}` is too long"),
        }
    }

    fn help(&self, text: &str) -> String {
        match self {
            Problem::Syntax(_) => match suggestion(text) {
                Some(suggested) => format!("write `{suggested}`"),
                None => "write an ISO 8601 duration such as `PT15M` (15 minutes), `PT0.5S` \
                         (half a second) or `P2DT3H4M` (2 days, 3 hours and 4 minutes)"
                    .to_string(),
            },
            Problem::Calendar => "give the span in weeks, days or smaller units, for example \
                                  `P30D` instead of `P1M` or `P365D` instead of `P1Y`"
                .to_string(),
            Problem::Negative => "durations are zero or longer; remove the `-`".to_string(),
            Problem::TooLong => "use a duration shorter than a million weeks".to_string(),
        }
    }
}

/// The length of an ISO 8601 duration in milliseconds (sub-millisecond parts are dropped).
fn millis_of(text: &str) -> Result<u64, Problem> {
    let span = PARSER
        .parse_span(text.trim())
        .map_err(|err| Problem::Syntax(err.to_string()))?;
    if span.is_negative() {
        return Err(Problem::Negative);
    }
    if span.get_years() != 0 || span.get_months() != 0 {
        return Err(Problem::Calendar);
    }
    // With years and months excluded, jiff converts days as 24 hours and weeks as 7 days.
    let duration = span
        .to_duration(SpanRelativeTo::days_are_24_hours())
        .map_err(|_| Problem::TooLong)?;
    u64::try_from(duration.as_millis()).map_err(|_| Problem::TooLong)
}

/// A likely ISO 8601 spelling of a common non-ISO duration (`30`, `30s`, `15m`, `2h`, `3d`).
fn suggestion(text: &str) -> Option<String> {
    let text = text.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    // Only for numbers that fit a duration; a long run of digits gets the general help.
    if number.is_empty() || number.len() > 18 {
        return None;
    }
    match unit.trim().to_ascii_lowercase().as_str() {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => Some(format!("PT{number}S")),
        "m" | "min" | "mins" | "minute" | "minutes" => Some(format!("PT{number}M")),
        "h" | "hour" | "hours" => Some(format!("PT{number}H")),
        "d" | "day" | "days" => Some(format!("P{number}D")),
        _ => None,
    }
}

/// `(millis, repeat)` of a retry interval, or the message and help of its diagnostic.
fn interval_of(text: &str) -> Result<(u64, Option<u32>), (String, String)> {
    let trimmed = text.trim();
    let quoted = super::excerpt(text);
    let Some(rest) = trimmed.strip_prefix(['R', 'r']) else {
        let millis = millis_of(trimmed).map_err(|p| interval_problem(text, &p))?;
        return Ok((millis, None));
    };
    let Some((count, duration)) = rest.split_once('/') else {
        if !rest.bytes().all(|b| b.is_ascii_digit()) {
            // `Rubbish`: not a repeating interval at all, so explain durations.
            let problem = millis_of(trimmed).err().unwrap_or(Problem::TooLong);
            return Err(interval_problem(text, &problem));
        }
        return Err((
            format!("retry interval `{quoted}` has a repeat count but no duration"),
            "write the repeat count, a `/` and the wait between retries, for example \
             `R5/PT15M` (at most 5 retries, 15 minutes apart)"
                .to_string(),
        ));
    };
    let repeat = repeat_count(count).map_err(|message| {
        (
            format!("retry interval `{quoted}`: {message}"),
            "write `R`, the number of retries, `/` and a duration, for example `R5/PT15M`, \
             or `R/PT15M` for no limit"
                .to_string(),
        )
    })?;
    let millis = millis_of(duration).map_err(|p| interval_problem(text, &p))?;
    Ok((millis, repeat))
}

/// The `<n>` of `R<n>/`: empty means unbounded.
fn repeat_count(count: &str) -> Result<Option<u32>, String> {
    if count.is_empty() {
        return Ok(None);
    }
    if !count.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("the repeat count `{count}` is not a whole number"));
    }
    count
        .parse::<u32>()
        .map(Some)
        .map_err(|_| format!("the repeat count `{count}` is too large"))
}

/// A duration problem inside a retry interval, worded for the interval.
fn interval_problem(text: &str, problem: &Problem) -> (String, String) {
    let duration_text = text.trim().split_once('/').map_or(text, |(_, d)| d);
    let help = match problem {
        // Dates and `start/end` intervals are scheduling, not a wait between retries.
        Problem::Syntax(_) if text.contains('/') && !text.trim().starts_with(['R', 'r']) => {
            "a retry interval is a duration (`PT2M`) or a repeating duration (`R5/PT15M`), \
             not a start/end interval"
                .to_string()
        }
        _ => problem.help(duration_text),
    };
    (
        format!(
            "retry interval `{}`: {}",
            super::excerpt(text),
            problem.message(duration_text)
        ),
        help,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: Span = Span::new(4, 12);

    fn duration(text: &str) -> (DurationSpec, Diagnostics) {
        let mut diags = Diagnostics::new("wf.yaml");
        (parse(text, AT, &mut diags), diags)
    }

    fn interval(text: &str) -> (RetryInterval, Diagnostics) {
        let mut diags = Diagnostics::new("wf.yaml");
        (parse_retry_interval(text, AT, &mut diags), diags)
    }

    fn only_error(diags: &Diagnostics, code: Code) -> (&str, &str) {
        assert_eq!(diags.items().len(), 1, "{:?}", diags.items());
        let d = &diags.items()[0];
        assert_eq!(d.code, code);
        assert_eq!(d.span, AT);
        (d.message.as_str(), d.help.as_deref().unwrap_or(""))
    }

    #[test]
    fn parses_the_drafts_durations() {
        for (text, millis) in [
            ("PT15M", 15 * 60_000),
            ("P2DT3H4M", ((2 * 24 + 3) * 60 + 4) * 60_000),
            ("PT0.5S", 500),
            ("P1W", 7 * 24 * 3_600_000),
            ("PT2M", 120_000),
            ("P0D", 0),
            ("pt1h", 3_600_000),
            (" PT3S ", 3_000),
        ] {
            let (spec, diags) = duration(text);
            assert!(diags.items().is_empty(), "{text}: {:?}", diags.items());
            assert_eq!(spec.millis, millis, "{text}");
            assert_eq!(spec.text, text);
            assert_eq!(spec.span, AT);
        }
    }

    #[test]
    fn drops_sub_millisecond_parts() {
        assert_eq!(duration("PT0.0015S").0.millis, 1);
    }

    #[test]
    fn refuses_years_and_months() {
        for text in ["P1Y", "P1M", "P1Y2M10DT2H30M"] {
            let (spec, diags) = duration(text);
            assert_eq!(spec.millis, 0);
            let (message, help) = only_error(&diags, Code::BAD_DURATION);
            assert!(message.contains("years or months"), "{message}");
            assert!(help.contains("P30D"), "{help}");
        }
    }

    #[test]
    fn refuses_negative_durations() {
        let (_, diags) = duration("-PT1M");
        let (message, help) = only_error(&diags, Code::BAD_DURATION);
        assert_eq!(message, "duration `-PT1M` is negative");
        assert!(help.contains("remove the `-`"));
    }

    #[test]
    fn refuses_text_that_is_not_iso_8601_and_suggests_a_spelling() {
        let (_, diags) = duration("30s");
        let (message, help) = only_error(&diags, Code::BAD_DURATION);
        assert!(
            message.starts_with("`30s` is not an ISO 8601 duration: "),
            "{message}"
        );
        assert_eq!(help, "write `PT30S`");

        for (text, suggested) in [
            ("30", "PT30S"),
            ("15 min", "PT15M"),
            ("2h", "PT2H"),
            ("3d", "P3D"),
        ] {
            let (_, diags) = duration(text);
            let (_, help) = only_error(&diags, Code::BAD_DURATION);
            assert_eq!(help, format!("write `{suggested}`"));
        }

        for text in [
            "",
            "PT",
            "soon",
            "PT1H30M trailing",
            "PT99999999999999999999S",
            "99999999999999999999",
        ] {
            let (spec, diags) = duration(text);
            assert_eq!(spec.millis, 0);
            let (_, help) = only_error(&diags, Code::BAD_DURATION);
            assert!(help.contains("PT15M"), "{text}: {help}");
        }
    }

    #[test]
    fn integer_seconds_keep_their_text() {
        let spec = parse_seconds(30, AT);
        assert_eq!(spec.text, "30");
        assert_eq!(spec.millis, 30_000);
        assert_eq!(parse_seconds(u64::MAX, AT).millis, u64::MAX);
    }

    #[test]
    fn parses_retry_intervals() {
        for (text, millis, repeat) in [
            ("PT2M", 120_000, None),
            ("R5/PT15M", 900_000, Some(5)),
            ("R4/PT1M", 60_000, Some(4)),
            ("R0/PT1S", 1_000, Some(0)),
            ("R/PT1M", 60_000, None),
            ("r3/pt1s", 1_000, Some(3)),
        ] {
            let (parsed, diags) = interval(text);
            assert!(diags.items().is_empty(), "{text}: {:?}", diags.items());
            assert_eq!((parsed.millis, parsed.repeat), (millis, repeat), "{text}");
            assert_eq!(parsed.text, text);
        }
    }

    #[test]
    fn reports_interval_errors() {
        let cases = [
            ("R5", "no duration", "R5/PT15M"),
            ("Rx/PT1M", "not a whole number", "R5/PT15M"),
            ("R99999999999/PT1M", "too large", "R5/PT15M"),
            ("R5/P1M", "years or months", "P30D"),
            ("R5/15m", "not an ISO 8601 duration", "PT15M"),
            ("R5/-PT1M", "negative", "remove"),
            (
                "2020-01-01T00:00:00Z/PT1H",
                "not an ISO 8601 duration",
                "start/end",
            ),
            ("soon", "not an ISO 8601 duration", "PT15M"),
            ("Rubbish", "not an ISO 8601 duration", "PT15M"),
        ];
        for (text, in_message, in_help) in cases {
            let (parsed, diags) = interval(text);
            assert_eq!((parsed.millis, parsed.repeat), (0, None));
            let (message, help) = only_error(&diags, Code::BAD_INTERVAL);
            assert!(
                message.starts_with(&format!("retry interval `{text}`")),
                "{message}"
            );
            assert!(message.contains(in_message), "{text}: {message}");
            assert!(help.contains(in_help), "{text}: {help}");
        }
    }
}
