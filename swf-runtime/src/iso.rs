//! ISO 8601 text for durations, so that messages speak the workflow's own notation.

use std::time::Duration;

use jiff::SignedDuration;

/// `duration` as ISO 8601 (`PT2M`, `PT1H30M`, `PT0.5S`), in hours at most: a runtime duration
/// has no calendar, so days would be ambiguous.
pub(crate) fn duration(duration: Duration) -> String {
    match SignedDuration::try_from(duration) {
        Ok(signed) => signed.to_string(),
        // Beyond 292 billion years: not a duration anyone wrote, but still say what it is.
        Err(_) => format!("PT{}S", duration.as_secs()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_the_workflow_wrote_them() {
        assert_eq!(duration(Duration::from_secs(120)), "PT2M");
        assert_eq!(duration(Duration::from_secs(5_400)), "PT1H30M");
        assert_eq!(duration(Duration::from_millis(500)), "PT0.5S");
        assert_eq!(duration(Duration::ZERO), "PT0S");
        assert_eq!(duration(Duration::MAX), format!("PT{}S", u64::MAX));
    }
}
