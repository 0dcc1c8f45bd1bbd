//! Byte sizes as users write them (`16K`, `1GiB`, `4096`) and as memlat prints them.

use std::fmt;

/// A size string that memlat could not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{input}' is not a size: write bytes as a number with an optional suffix K, M, G (or KiB, MiB, GiB; all powers of 1024), e.g. 16K or 1GiB"
)]
pub struct SizeParseError {
    /// What the user wrote.
    pub input: String,
}

/// Parses `4096`, `16K`, `16k`, `16KiB`, `16KB`, `2M`, `1G`, `1GiB`.
///
/// Every suffix is binary (K = 1024), as in the seed notebook's `16 * 1024`:
/// cache sizes are powers of two and users write them that way.
pub fn parse_size(input: &str) -> Result<u64, SizeParseError> {
    let error = || SizeParseError {
        input: input.to_string(),
    };
    let text = input.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(digits_end);
    let value: u64 = number.parse().map_err(|_| error())?;
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(error()),
    };
    value.checked_mul(1u64 << shift).ok_or_else(error)
}

/// Rounds `value` up to a multiple of `multiple` (which must be non-zero);
/// `None` when that multiple does not fit in 64 bits.
pub fn round_up(value: u64, multiple: u64) -> Option<u64> {
    value.div_ceil(multiple).checked_mul(multiple)
}

/// A byte count printed the way people say it: `16 KiB`, `1.5 MiB`, `100 B`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanBytes(pub u64);

impl fmt::Display for HumanBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut value = self.0 as f64;
        let mut unit = 0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        if unit == 0 || value.fract() == 0.0 {
            write!(f, "{} {}", value as u64, UNITS[unit])
        } else {
            write!(f, "{:.1} {}", value, UNITS[unit])
        }
    }
}

/// `2024-03-01T12:34:56Z` for `time` (UTC, seconds).
pub fn utc_timestamp(time: std::time::SystemTime) -> String {
    let secs = time
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Year, month, day of the `days`th day after 1970-01-01 (proleptic Gregorian;
/// Howard Hinnant's `civil_from_days` algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_suffixed_sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("16K"), Ok(16 * 1024));
        assert_eq!(parse_size("16k"), Ok(16 * 1024));
        assert_eq!(parse_size("16KiB"), Ok(16 * 1024));
        assert_eq!(parse_size("16KB"), Ok(16 * 1024));
        assert_eq!(parse_size("2M"), Ok(2 << 20));
        assert_eq!(parse_size("2MiB"), Ok(2 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size(" 64 "), Ok(64));
    }

    #[test]
    fn rejects_what_is_not_a_size() {
        for bad in ["", "K", "-1", "1.5K", "12Q", "0x40", "99999999999999999999"] {
            assert!(parse_size(bad).is_err(), "{bad} should not parse");
        }
        assert!(parse_size("99999999999G").is_err(), "overflow is an error");
    }

    #[test]
    fn rounds_up_to_a_multiple() {
        assert_eq!(round_up(12345, 8), Some(12352));
        assert_eq!(round_up(123, 8), Some(128));
        assert_eq!(round_up(64, 8), Some(64));
        assert_eq!(round_up(0, 8), Some(0));
        assert_eq!(round_up(u64::MAX, 8), None);
    }

    #[test]
    fn prints_human_sizes() {
        assert_eq!(HumanBytes(100).to_string(), "100 B");
        assert_eq!(HumanBytes(16 * 1024).to_string(), "16 KiB");
        assert_eq!(HumanBytes(3 << 19).to_string(), "1.5 MiB");
        assert_eq!(HumanBytes(1 << 30).to_string(), "1 GiB");
    }
}

#[cfg(test)]
mod time_tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn timestamps_are_utc_dates() {
        assert_eq!(utc_timestamp(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_661);
        assert_eq!(utc_timestamp(t), "2000-02-29T01:01:01Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_735_689_599);
        assert_eq!(utc_timestamp(t), "2024-12-31T23:59:59Z");
    }
}
