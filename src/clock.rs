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
    match rfc3339_ms(ms) {
        // ASCII: never anything lost.
        Some(text) => String::from_utf8_lossy(&text).into_owned(),
        None => format_ms_otherwise(ms),
    }
}

/// `format_ms` written at the end of `out` (the event stream's JSON, a
/// time a record, with nothing made on the way).
pub(crate) fn write_ms(ms: i64, out: &mut Vec<u8>) {
    match rfc3339_ms(ms) {
        Some(text) => out.extend_from_slice(&text),
        None => out.extend_from_slice(format_ms_otherwise(ms).as_bytes()),
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` of a time whose year has four digits, by
/// arithmetic (jiff's formatter reads its pattern each time); `None` for
/// another year.
fn rfc3339_ms(ms: i64) -> Option<[u8; 24]> {
    const FROM_YEAR_1000: i64 = -30_610_224_000_000;
    // jiff's last instant (late on 9999-12-30): past it, no time.
    const THROUGH_JIFFS_LAST: i64 = 253_402_207_200_000;
    if !(FROM_YEAR_1000..=THROUGH_JIFFS_LAST).contains(&ms) {
        return None;
    }
    let (days, in_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (year, month, day) = civil_from_days(days);
    let mut text = [0u8; 24];
    let mut put = |at: usize, value: i64, digits: usize| {
        let mut value = value;
        for i in (at..at + digits).rev() {
            text[i] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, year, 4);
    put(5, month, 2);
    put(8, day, 2);
    put(11, in_day / 3_600_000, 2);
    put(14, in_day / 60_000 % 60, 2);
    put(17, in_day / 1_000 % 60, 2);
    put(20, in_day % 1_000, 3);
    for (at, mark) in [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
        (23, b'Z'),
    ] {
        text[at] = mark;
    }
    Some(text)
}

/// A time of another year, through jiff (or as milliseconds past its
/// range).
fn format_ms_otherwise(ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(ts) => ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        Err(_) => format!("{ms}ms"),
    }
}

/// The proleptic Gregorian (year, month, day) of a day counted from
/// 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arithmetic prints what jiff prints: both ends of its range,
    /// leap days and centuries, and a spread of times across it.
    #[test]
    fn times_print_as_jiff_prints_them() {
        let jiff = |ms: i64| match jiff::Timestamp::from_millisecond(ms) {
            Ok(ts) => ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
            Err(_) => format!("{ms}ms"),
        };
        let mut times = vec![
            -30_610_224_000_000,
            -30_610_224_000_001,
            253_402_207_200_000,
            253_402_207_200_001,
            -377_705_023_201_000,
            -1,
            0,
            1,
            951_782_400_000,    // 2000-02-29
            4_107_542_399_999,  // 2100-02-28T23:59:59.999
            -2_203_891_200_001, // 1900-02-28T23:59:59.999
            1_792_540_804_411,
        ];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            times.push((x % 284_012_431_200_001) as i64 - 30_610_224_000_000);
        }
        times.extend([i64::MAX, i64::MIN, -30_610_224_000_001, 253_402_207_200_001]);
        let mut written = Vec::new();
        for ms in times {
            if (-30_610_224_000_000..=253_402_207_200_000).contains(&ms) {
                assert_eq!(format_ms(ms), jiff(ms), "{ms}");
            }
            written.clear();
            write_ms(ms, &mut written);
            assert_eq!(written, format_ms(ms).as_bytes(), "{ms}");
        }
        assert_eq!(format_ms(i64::MAX), format!("{}ms", i64::MAX));
        assert_eq!(format_ms(i64::MIN), format!("{}ms", i64::MIN));
    }

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
