//! The process clock. `DISCUSS_NOW` pins where it starts (for tests and
//! demos); from there it advances with the monotonic clock, so a pinned
//! process still sees time pass while it runs.

use crate::error::{Error, ErrorCode, Result};
use std::time::Instant;

/// How far ahead of a reader's clock a record may be stamped and still
/// count (`ledger.md`, "Clock skew"); further ahead it is `clock_skew`.
pub(crate) const MAX_SKEW_MS: i64 = 60_000;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    origin_ms: i64,
    started: Instant,
}

impl Clock {
    /// A clock that starts at `origin_ms` (Unix epoch milliseconds).
    pub(crate) fn starting_at(origin_ms: i64) -> Self {
        Clock {
            origin_ms,
            started: Instant::now(),
        }
    }

    /// The wall clock, or `DISCUSS_NOW` when it is set.
    pub(crate) fn from_env() -> Result<Self> {
        match std::env::var("DISCUSS_NOW") {
            Ok(value) if !value.trim().is_empty() => Ok(Clock::starting_at(parse_time(&value)?)),
            _ => Ok(Clock::starting_at(jiff::Timestamp::now().as_millisecond())),
        }
    }

    pub(crate) fn now_ms(&self) -> i64 {
        let elapsed = i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX);
        self.origin_ms.saturating_add(elapsed)
    }
}

/// Parses an RFC 3339 time or an integer of epoch milliseconds.
pub(crate) fn parse_time(value: &str) -> Result<i64> {
    let value = value.trim();
    if let Ok(ms) = value.parse::<i64>() {
        return Ok(ms);
    }
    value
        .parse::<jiff::Timestamp>()
        .map(|ts| ts.as_millisecond())
        .map_err(|err| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "DISCUSS_NOW is neither RFC 3339 nor epoch milliseconds: {value:?} ({err})"
                ),
            )
            .hint("example: DISCUSS_NOW=2026-11-30T00:00:00Z or DISCUSS_NOW=1795996800000")
        })
}

/// RFC 3339 UTC with millisecond precision, as every `*_at` field shows.
pub(crate) fn format_ms(ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(ts) => ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        Err(_) => format!("{ms}ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_forms() {
        assert_eq!(parse_time("1000").unwrap(), 1000);
        assert_eq!(parse_time("1970-01-01T00:00:01.5Z").unwrap(), 1500);
        assert_eq!(
            parse_time("2026-11-30T01:00:00+01:00").unwrap(),
            parse_time("2026-11-30T00:00:00Z").unwrap()
        );
        assert!(parse_time("yesterday").is_err());
    }

    #[test]
    fn formats_with_milliseconds() {
        assert_eq!(format_ms(1_500), "1970-01-01T00:00:01.500Z");
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn pinned_clock_starts_where_told() {
        let clock = Clock::starting_at(42_000);
        let now = clock.now_ms();
        assert!((42_000..42_000 + 60_000).contains(&now));
    }
}
