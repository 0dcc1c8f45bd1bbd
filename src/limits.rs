//! Every setting a user gives, checked at one boundary: flags, `--resume`
//! files, `--machine` profiles and the library's [`crate::Point`] all go
//! through these functions, so the same value gets the same answer wherever
//! it comes from, and nothing inside can overflow on it. Each error says
//! where the value came from (a flag, or a file and field) and what range is
//! allowed.

use std::fmt;
use std::ops::RangeInclusive;
use std::path::PathBuf;

use crate::units::{HumanBytes, round_up};

pub mod figures;

/// The largest buffer memlat will plan: 64 TiB, more than any machine it
/// runs on has; the memory check refuses earlier what does not fit.
pub const MAX_SIZE: u64 = 1 << 46;

/// Loads per sample at most: at DRAM latency a sample of this many loads
/// already takes minutes.
pub const MAX_ACCESSES: u64 = 10_000_000_000;

/// A sample lasts at most a minute.
pub const MAX_SAMPLE_MS: u64 = 60_000;

/// How long loads are timed one by one (`--distribution-ms`), ms: at least
/// enough for a few spectrum segments, at most a minute.
pub const DISTRIBUTION_MS: RangeInclusive<u64> = 10..=60_000;

/// Repeats of a point at most.
pub const MAX_REPEATS: u32 = 100_000;

/// Core clocks memlat believes a user gives (`--ghz`): every core it can
/// run on lies between (a 0.2 GHz microcontroller-class board, a 10 GHz
/// overclock); 20 or 0.01 would print 26 or 0.013 cycles for an L1 hit.
pub const GHZ: RangeInclusive<f64> = 0.2..=10.0;

/// Sweep ratios: sizes must grow, and not by more than 100x a step.
pub const RATIO: RangeInclusive<f64> = 1.01..=100.0;

/// A sweep has at most this many sizes.
pub const MAX_SWEEP_SIZES: usize = 2000;

/// Ways of associativity a cache can claim.
pub const MAX_WAYS: u64 = 1024;

/// Where a value came from, for the message that rejects it.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// A command-line flag, e.g. `-n/--size`.
    Flag(&'static str),
    /// A field of a file (`--resume`, `--machine`).
    Field {
        /// The file.
        file: PathBuf,
        /// The field's name.
        field: String,
    },
    /// A setting of the library's point or engine.
    Setting(&'static str),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Flag(flag) => write!(f, "{flag}"),
            Origin::Field { file, field } => write!(f, "{}: field '{field}'", file.display()),
            Origin::Setting(name) => write!(f, "{name}"),
        }
    }
}

/// A value outside what memlat can measure, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{origin} {value}: {why}")]
pub struct LimitError {
    /// Where it came from.
    pub origin: Origin,
    /// The value as given.
    pub value: String,
    /// What is allowed instead.
    pub why: String,
}

fn reject<T>(
    origin: Origin,
    value: impl fmt::Display,
    why: impl Into<String>,
) -> Result<T, LimitError> {
    Err(LimitError {
        origin,
        value: value.to_string(),
        why: why.into(),
    })
}

/// A buffer size in bytes, rounded up to whole 8-byte words: from 8 bytes to [`MAX_SIZE`].
pub fn size(bytes: u64, origin: Origin) -> Result<u64, LimitError> {
    match round_up(bytes, 8) {
        Some(0) => reject(
            origin,
            bytes,
            "the buffer needs at least one 8-byte node, e.g. 16K",
        ),
        Some(s) if s <= MAX_SIZE => Ok(s),
        _ => reject(
            origin,
            bytes,
            format!(
                "at most {} (more than any machine's memory)",
                HumanBytes(MAX_SIZE)
            ),
        ),
    }
}

/// A stride in bytes, rounded up to whole words: from 8 bytes to [`MAX_SIZE`].
pub fn stride(bytes: u64, origin: Origin) -> Result<u64, LimitError> {
    match round_up(bytes, 8) {
        Some(0) => reject(
            origin,
            bytes,
            "a stride of 0 never moves; give bytes, e.g. 64",
        ),
        Some(s) if s <= MAX_SIZE => Ok(s),
        _ => reject(origin, bytes, format!("at most {}", HumanBytes(MAX_SIZE))),
    }
}

/// The largest node spacing (`--line`), bytes.
pub const MAX_LINE: u64 = 1 << 30;

/// Node spacing (line size) in bytes: a multiple of 8 from 8 to 1 GiB (a
/// page of the largest size, for `memlat tlb`).
pub fn line(bytes: u64, origin: Origin) -> Result<u64, LimitError> {
    if bytes >= 8 && bytes.is_multiple_of(8) && bytes <= MAX_LINE {
        Ok(bytes)
    } else {
        reject(
            origin,
            bytes,
            "node spacing must be a multiple of 8 bytes, from 8 to 1G, e.g. 64",
        )
    }
}

/// Loads per sample: from 1 to [`MAX_ACCESSES`].
pub fn accesses(count: u64, origin: Origin) -> Result<u64, LimitError> {
    match count {
        0 => reject(
            origin,
            count,
            "at least one load is needed, e.g. 1000000 (or leave it out to calibrate)",
        ),
        c if c <= MAX_ACCESSES => Ok(c),
        _ => reject(
            origin,
            count,
            format!(
                "at most {MAX_ACCESSES} (a sample of that many DRAM loads already takes minutes)"
            ),
        ),
    }
}

/// Target milliseconds of one sample: from 1 to [`MAX_SAMPLE_MS`].
pub fn sample_ms(ms: u64, origin: Origin) -> Result<u64, LimitError> {
    match ms {
        0 => reject(origin, ms, "a sample must last at least 1 ms"),
        m if m <= MAX_SAMPLE_MS => Ok(m),
        _ => reject(
            origin,
            ms,
            format!("at most {MAX_SAMPLE_MS} ms (a minute) a sample"),
        ),
    }
}

/// How long loads are timed one by one, ms: within [`DISTRIBUTION_MS`].
pub fn distribution_ms(ms: u64, origin: Origin) -> Result<u64, LimitError> {
    if DISTRIBUTION_MS.contains(&ms) {
        Ok(ms)
    } else {
        reject(
            origin,
            ms,
            format!(
                "give {} to {} (400 resolves periods up to 16 us)",
                DISTRIBUTION_MS.start(),
                DISTRIBUTION_MS.end()
            ),
        )
    }
}

/// Repeats of a point: from 1 to [`MAX_REPEATS`].
pub fn repeats(count: u32, origin: Origin) -> Result<u32, LimitError> {
    match count {
        0 => reject(origin, count, "at least one repeat is needed"),
        c if c <= MAX_REPEATS => Ok(c),
        _ => reject(origin, count, format!("at most {MAX_REPEATS}")),
    }
}

/// A core clock in GHz within [`GHZ`].
pub fn ghz(value: f64, origin: Origin) -> Result<f64, LimitError> {
    if GHZ.contains(&value) {
        Ok(value)
    } else {
        reject(
            origin,
            value,
            format!(
                "give the core clock in GHz, from {} to {}, e.g. 2.5",
                GHZ.start(),
                GHZ.end()
            ),
        )
    }
}

/// A sweep's ratio between successive sizes within [`RATIO`].
pub fn ratio(value: f64, origin: Origin) -> Result<f64, LimitError> {
    if RATIO.contains(&value) {
        Ok(value)
    } else {
        reject(
            origin,
            value,
            format!(
                "sizes grow by this factor: give a number from {} to {}, e.g. 1.3",
                RATIO.start(),
                RATIO.end()
            ),
        )
    }
}

/// How many sizes a geometric sweep from `from` to `to` by `ratio` has, at
/// most [`MAX_SWEEP_SIZES`]: checked before the sequence is built.
pub fn sweep_steps(from: u64, to: u64, ratio: f64, origin: Origin) -> Result<usize, LimitError> {
    let steps = ((to.max(1) as f64 / from.max(1) as f64).ln() / ratio.ln())
        .ceil()
        .max(0.0)
        + 1.0;
    if steps.is_finite() && steps <= MAX_SWEEP_SIZES as f64 {
        Ok(steps as usize)
    } else {
        reject(
            origin,
            ratio,
            format!(
                "{steps:.0} sizes from {} to {}: at most {MAX_SWEEP_SIZES}; use a larger ratio or a narrower range",
                HumanBytes(from),
                HumanBytes(to)
            ),
        )
    }
}

/// Ways of associativity: from 1 to [`MAX_WAYS`].
pub fn ways(count: u64, origin: Origin) -> Result<u64, LimitError> {
    if (1..=MAX_WAYS).contains(&count) {
        Ok(count)
    } else {
        reject(
            origin,
            count,
            format!("ways of associativity are 1 to {MAX_WAYS}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag() -> Origin {
        Origin::Flag("-n/--size")
    }

    #[test]
    fn sizes_round_up_without_wrapping() {
        assert_eq!(size(12345, flag()), Ok(12352));
        assert!(
            size(0, flag())
                .unwrap_err()
                .to_string()
                .starts_with("-n/--size 0:")
        );
        assert!(size(u64::MAX, flag()).is_err());
        assert!(size(18446744073709551608, flag()).is_err());
        assert!(stride(u64::MAX, Origin::Flag("-s/--stride")).is_err());
        assert_eq!(stride(100, Origin::Flag("-s/--stride")), Ok(104));
    }

    #[test]
    fn every_bound_says_where_the_value_came_from() {
        let field = Origin::Field {
            file: "sweep.json".into(),
            field: "config.line".into(),
        };
        let e = line(12, field).unwrap_err().to_string();
        assert!(e.starts_with("sweep.json: field 'config.line' 12:"), "{e}");
        assert!(line(0, Origin::Setting("line")).is_err());
        assert!(repeats(0, Origin::Flag("--repeats")).is_err());
        assert!(accesses(u64::MAX, Origin::Flag("-a/--accesses")).is_err());
        assert!(sample_ms(u64::MAX, Origin::Flag("--sample-ms")).is_err());
        assert!(ghz(1e-300, Origin::Flag("--ghz")).is_err());
        assert!(ghz(1e308, Origin::Flag("--ghz")).is_err());
        assert!(ghz(f64::NAN, Origin::Flag("--ghz")).is_err());
        assert_eq!(ghz(2.5, Origin::Flag("--ghz")), Ok(2.5));
        assert!(ways(u64::MAX, Origin::Setting("ways")).is_err());
    }

    #[test]
    fn sweeps_are_bounded_before_they_are_built() {
        assert!(ratio(1.0000000000000002, Origin::Flag("--ratio")).is_err());
        assert!(ratio(f64::INFINITY, Origin::Flag("--ratio")).is_err());
        assert_eq!(
            sweep_steps(1024, 1 << 30, 1.3, Origin::Flag("--ratio")),
            Ok(54)
        );
        assert!(sweep_steps(1, 1 << 46, 1.01, Origin::Flag("--ratio")).is_err());
    }
}
