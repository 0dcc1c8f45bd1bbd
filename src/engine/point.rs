//! What to measure at one point: a buffer size, a chain pattern and a kernel,
//! with how often and how long. `Point::default()` is a sensible L1-sized
//! random chain; the constructors set what usually differs.

use std::time::Duration;

use super::Error;
use crate::chain::Pattern;
use crate::kernels::KernelKind;
use crate::limits::{self, Origin};
use crate::platform::PageRequest;

/// What to measure at one point.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Buffer size in bytes (a multiple of 8).
    pub size: u64,
    /// Stride in bytes for `Pattern::Stride` (a multiple of 8).
    pub stride: u64,
    /// Chain pattern.
    pub pattern: Pattern,
    /// Bytes every node sits above its multiple of the stride (stride chains
    /// whose stride divides `size`) or of the line (random chains): a
    /// multiple of 8 below either. Puts N lines a way-size apart in a chosen
    /// set. 0 for page-random.
    pub offset: u64,
    /// With a random chain: a second node this many bytes after every node,
    /// visited right after it (a dependent pair, `memlat linesize`); a
    /// multiple of 8 below the line. 0: none.
    pub pair: u64,
    /// With a random chain: slot `s`'s node sits `(s * skew) mod line` bytes
    /// into its slot (`memlat tlb`: one line a page, in successive cache
    /// sets); a multiple of 8 below the line, without offset or pair. 0: none.
    pub skew: u64,
    /// Random chains walked side by side in one thread (1 to 16; `memlat
    /// mlp`): disjoint cycles through the buffer whose misses overlap.
    pub chains: u32,
    /// Which loop follows the chain.
    pub kernel: KernelKind,
    /// Node spacing in bytes for the random patterns (a multiple of 8; the line size).
    pub line: u64,
    /// Page size to ask for.
    pub pages: PageRequest,
    /// NUMA node to bind the buffer to.
    pub node: Option<usize>,
    /// Repeats; each random repeat gets a fresh chain.
    pub repeats: u32,
    /// Seed of the first repeat's chain; repeat r uses seed + r.
    pub seed: u64,
    /// Loads per sample (rounded up to a multiple of the unroll); `None`: calibrate to `sample_time`.
    pub accesses: Option<u64>,
    /// How long one sample (A loads then 2A loads) should last when calibrating.
    pub sample_time: Duration,
    /// Spend repeats where they buy precision: stop after 2 once they agree
    /// within 1% (2% from memory), and on a noisy point go on to `repeats` + 2
    /// (see `Engine::measure`). Off, every point gets `repeats`.
    pub until_precise: bool,
    /// After the repeats, time loads one at a time (in small groups where
    /// one load is shorter than the timer) for about this long, and report
    /// their distribution (`Measurement::distribution`): percentiles,
    /// histogram, modes, periodic stalls. Needs the pointer or portable
    /// kernel on a single chain, and an ISA with a per-load timer.
    pub distribution: Option<Duration>,
}

impl Default for Point {
    /// 32 KiB, random chain of 64-byte nodes, pointer kernel, THP, 5 repeats of 50 ms samples.
    fn default() -> Point {
        Point {
            size: 32 << 10,
            stride: 64,
            pattern: Pattern::Random,
            offset: 0,
            pair: 0,
            skew: 0,
            chains: 1,
            kernel: KernelKind::Pointer,
            line: 64,
            pages: PageRequest::Thp,
            node: None,
            repeats: 5,
            seed: 1,
            accesses: None,
            sample_time: Duration::from_millis(50),
            until_precise: false,
            distribution: None,
        }
    }
}

impl Point {
    /// A random chain of one node per line through `size` bytes: the latency
    /// of whatever level holds `size` bytes, prefetchers defeated.
    pub fn random(size: u64) -> Point {
        Point {
            size,
            ..Point::default()
        }
    }

    /// Seed 004's stride chain: `size` bytes, `stride` bytes apart.
    pub fn stride(size: u64, stride: u64) -> Point {
        Point {
            size,
            stride,
            pattern: Pattern::Stride,
            ..Point::default()
        }
    }

    /// Random within each 4 KiB page, pages in random order.
    pub fn page_random(size: u64) -> Point {
        Point {
            size,
            pattern: Pattern::PageRandom,
            ..Point::default()
        }
    }

    /// The same point with `repeats` repeats.
    pub fn with_repeats(self, repeats: u32) -> Point {
        Point { repeats, ..self }
    }

    /// The same point with samples of about `sample_time`.
    pub fn with_sample_time(self, sample_time: Duration) -> Point {
        Point {
            sample_time,
            ..self
        }
    }

    /// Checks what the engine cannot measure, before anything is allocated
    /// (the same bounds as the command line's, see [`crate::limits`]).
    pub fn validate(&self) -> Result<(), Error> {
        let exact = |checked: u64, given: u64, name: &str| {
            if checked == given {
                Ok(())
            } else {
                Err(Error::Invalid(format!(
                    "{name} {given}: give a multiple of 8 bytes"
                )))
            }
        };
        exact(
            limits::size(self.size, Origin::Setting("size"))?,
            self.size,
            "size",
        )?;
        if self.pattern == Pattern::Stride {
            exact(
                limits::stride(self.stride, Origin::Setting("stride"))?,
                self.stride,
                "stride",
            )?;
        }
        let offset_fits = match self.pattern {
            Pattern::Stride => self.offset < self.stride && self.size.is_multiple_of(self.stride),
            Pattern::Random => self.offset < self.line,
            Pattern::PageRandom => false,
        };
        if self.offset != 0 && !(self.offset.is_multiple_of(8) && offset_fits) {
            return Err(Error::Invalid(format!(
                "offset {}: only a stride chain whose stride divides its size, or a random chain, takes an offset: a multiple of 8 below the stride or line",
                self.offset
            )));
        }
        if self.pair != 0
            && !(self.pattern == Pattern::Random
                && self.pair.is_multiple_of(8)
                && self.offset + self.pair < self.line)
        {
            return Err(Error::Invalid(format!(
                "pair {}: only a random chain takes a pair, a multiple of 8 that fits in the line after the offset",
                self.pair
            )));
        }
        if self.skew != 0
            && !(self.pattern == Pattern::Random
                && self.skew.is_multiple_of(8)
                && self.skew < self.line
                && self.offset == 0
                && self.pair == 0)
        {
            return Err(Error::Invalid(format!(
                "skew {}: only a random chain without offset or pair takes a skew, a multiple of 8 below the line",
                self.skew
            )));
        }
        if self.chains != 1 {
            let max = crate::kernels::parallel::MAX_CHAINS as u32;
            if self.chains == 0 || self.chains > max {
                return Err(Error::Invalid(format!(
                    "chains {}: walk 1 to {max} chains side by side",
                    self.chains
                )));
            }
            if self.pattern != Pattern::Random || self.kernel == KernelKind::Index {
                return Err(Error::Invalid(format!(
                    "chains {}: chains side by side are random chains with the pointer or portable kernel",
                    self.chains
                )));
            }
        }
        if self.distribution.is_some() {
            if self.chains != 1 || self.kernel == KernelKind::Index {
                return Err(Error::Invalid(
                    "distribution: loads are timed one by one on a single chain with the pointer or portable kernel".into(),
                ));
            }
            if crate::kernels::timed_by().is_none() {
                return Err(Error::Invalid(
                    "distribution: this ISA has no per-load timer in memlat (x86_64, aarch64 and riscv64 do)".into(),
                ));
            }
        }
        limits::line(self.line, Origin::Setting("line"))?;
        limits::repeats(self.repeats, Origin::Setting("repeats"))?;
        if let Some(a) = self.accesses {
            limits::accesses(a, Origin::Setting("accesses"))?;
        }
        let ms = self.sample_time.as_millis().min(u128::from(u64::MAX)) as u64;
        limits::sample_ms(ms, Origin::Setting("sample_time (ms)"))?;
        if let Some(d) = self.distribution {
            let ms = d.as_millis().min(u128::from(u64::MAX)) as u64;
            limits::distribution_ms(ms, Origin::Setting("distribution (ms)"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_set_what_differs_and_defaults_validate() {
        assert!(Point::default().validate().is_ok());
        let p = Point::random(8 << 20);
        assert_eq!((p.size, p.pattern), (8 << 20, Pattern::Random));
        let s = Point::stride(16 << 10, 4096).with_repeats(3);
        assert_eq!((s.stride, s.pattern, s.repeats), (4096, Pattern::Stride, 3));
        assert_eq!(Point::page_random(1 << 20).pattern, Pattern::PageRandom);
    }

    #[test]
    fn what_cannot_be_measured_is_refused() {
        for bad in [
            Point::random(12),
            Point::stride(4096, 0),
            Point {
                line: 12,
                ..Point::default()
            },
            Point::default().with_repeats(0),
            Point {
                accesses: Some(0),
                ..Point::default()
            },
        ] {
            assert!(matches!(bad.validate(), Err(Error::Invalid(_))), "{bad:?}");
        }
    }
}
