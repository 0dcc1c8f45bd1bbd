//! Whether two CPUs share a cache, measured rather than read from sysfs: a
//! guest's sysfs describes the topology the hypervisor chose to show, and
//! the host may run its vCPUs anywhere (the 2-vCPU Zen 5 guest's two vCPUs
//! listed one L3 and bounced a line in 22-25 ns at one moment, 117-119 ns
//! minutes later: on two CCDs).
//!
//! Two CPUs share a level when lines one of them brought in are served to
//! the other by it. So, over a buffer the last measured level serves on its
//! plateau (larger than the levels before it), each round:
//! - CPU a rewrites every line (written lines stay in a level that lets
//!   clean ones go) and walks the chain: the lines now lie in a's levels;
//! - CPU b walks it, timed: `cross_ns`;
//! - CPU b rewrites and walks it, then walks it timed: `own_ns`, the same
//!   lines served by b's own levels as a's served them to a;
//! - CPU b flushes every line and walks it timed: `miss_ns`, the miss at
//!   the same footprint.
//!
//! A timed walk is the first half of the chain's cycle: the lines walked
//! longest before the walk that brought them in ended. The lines walked
//! last may still lie in a's private levels, and those reach b by a snoop
//! that a cache of another domain answers too (the catalogue's Intel rows:
//! a 2 MiB L2 holds half of a 3.7 MiB buffer).
//!
//! The share of b's loads that a's levels served is where `cross_ns` lies
//! from `miss_ns` (0) to `own_ns` (1), and they share the level when it is
//! at least half: the same definition as a level's capacity (where half the
//! loads stop being served by it). The references must lie apart by more
//! than the rounds' own spread ([`Readings::references_apart`]), not by a
//! fixed ratio: a Neoverse N1's flushed read of a few MiB comes within 1.5x
//! of its system-level cache's hit (tests/machines).

use std::time::Instant;

use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};

use crate::analysis::stats::median;
use crate::chain::Chain;
use crate::engine::{Walker, Workload};
use crate::kernels::{Kernel, KernelKind};
use crate::platform::{self, PageRequest};

/// Rounds per pair; each reading is the median of these. Rounds, not one
/// long walk: a round's three readings are taken within milliseconds of
/// each other, so a neighbour that moves the level moves all three.
pub const ROUNDS: usize = 5;

/// What one pair's check takes at most, s: five rounds over a few MiB, each
/// about 25 ms where b reads its lines from memory (0.13-0.15 s a pair on the
/// Zen 5 guest, buffer and chain included).
pub const CHECK_SECONDS: f64 = 0.2;

/// Bytes a node takes: the sweep's default line, a node per line.
const NODE_BYTES: u64 = 64;

/// The served share at and above which two CPUs share the level: half, the
/// capacity's definition.
pub const SHARED_FRACTION: f64 = 0.5;

/// One pair's three readings, each the median of [`ROUNDS`] rounds, with
/// every round's reading kept: their spread is what the references are
/// told apart by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Readings {
    /// What b's loads of the lines a brought in took, ns.
    pub cross_ns: f64,
    /// What b's loads of the lines it brought in itself took, ns.
    pub own_ns: f64,
    /// What b's loads of the flushed lines took, ns.
    pub miss_ns: f64,
    /// Each round's `cross_ns`, `own_ns` and `miss_ns`.
    pub rounds_ns: Vec<[f64; 3]>,
}

impl Readings {
    /// The medians of `rounds` (`[cross, own, miss]` each).
    pub fn of_rounds(rounds: Vec<[f64; 3]>) -> Readings {
        let column = |k: usize| median(&rounds.iter().map(|r| r[k]).collect::<Vec<_>>());
        Readings {
            cross_ns: column(0),
            own_ns: column(1),
            miss_ns: column(2),
            rounds_ns: rounds,
        }
    }

    /// Whether the own hits were faster than the misses by more than the
    /// rounds' spread: the upper quartile of the own reads below the lower
    /// quartile of the flushed ones (with five rounds, the fourth fastest
    /// own below the second fastest flushed), so one round a neighbour
    /// slowed or sped on either side does not decide it.
    pub fn references_apart(&self) -> bool {
        let sorted = |k: usize| {
            let mut v: Vec<f64> = self.rounds_ns.iter().map(|r| r[k]).collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let (own, miss) = (sorted(1), sorted(2));
        let n = own.len();
        n > 0 && own[n - 1 - n / 4].is_finite() && own[n - 1 - n / 4] < miss[n / 4]
    }
}

/// What the readings say of the pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sharing {
    /// At least half of b's loads were served by what a brought in.
    Shares,
    /// Fewer: the lines came from memory or from a cache of another domain.
    Apart,
    /// The references do not hold (own and miss too close to place the
    /// cross reading between them), or a reading is missing.
    Unknown,
}

impl Sharing {
    /// The word in the table.
    pub fn name(self) -> &'static str {
        match self {
            Sharing::Shares => "shares",
            Sharing::Apart => "apart",
            Sharing::Unknown => "unknown",
        }
    }
}

/// The served share and the verdict of `r`: where the median across
/// reading lies from the miss (0) to the own hit (1), clamped; unknown
/// where the references are not apart ([`Readings::references_apart`]).
pub fn judge(r: &Readings) -> (Option<f64>, Sharing) {
    if !r.references_apart() || !r.cross_ns.is_finite() {
        return (None, Sharing::Unknown);
    }
    let h = ((r.miss_ns - r.cross_ns) / (r.miss_ns - r.own_ns)).clamp(0.0, 1.0);
    if h >= SHARED_FRACTION {
        (Some(h), Sharing::Shares)
    } else {
        (Some(h), Sharing::Apart)
    }
}

/// Measures [`ROUNDS`] rounds of `a` and `b` over `size` bytes, on a thread
/// of its own (pinned to each CPU in turn; the caller's affinity stays as
/// it was). `None` where this ISA has no flush instruction user space may
/// run (the miss reference cannot be measured).
pub fn measure(a: usize, b: usize, size: u64) -> Result<Option<Readings>> {
    if crate::arch::FLUSH_INSTRUCTION.is_none() {
        return Ok(None);
    }
    let size = (size / NODE_BYTES).max(2) * NODE_BYTES;
    // The buffer is made on the thread that walks it: a mapping is not Send.
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let mut workload = Workload::prepare(size, PageRequest::Thp, None)?;
                let chain = Chain::random(size, NODE_BYTES, 1)?;
                let kernel = Kernel::Chase(KernelKind::Pointer);
                workload.link(&chain, kernel)?;
                rounds(&mut workload, &chain, kernel, a, b)
            })
            .join()
            .map_err(|_| anyhow!("the sharing check's thread panicked"))?
    })
    .map(Some)
}

/// The rounds, on the calling thread (which they pin).
fn rounds(
    workload: &mut Workload,
    chain: &Chain,
    kernel: Kernel,
    a: usize,
    b: usize,
) -> Result<Readings> {
    let size = chain.size();
    let trips = (chain.len() / kernel.loads_per_trip()).max(2);
    let timed = |workload: &Workload| -> Result<f64> {
        let mut walker: Walker = workload.walker(chain, kernel);
        let start = Instant::now();
        walker.walk(trips / 2)?;
        Ok(start.elapsed().as_secs_f64() * 1e9 / ((trips / 2) * kernel.loads_per_trip()) as f64)
    };
    let bring_in = |workload: &mut Workload| -> Result<()> {
        workload.rewrite(size, NODE_BYTES);
        workload.walker(chain, kernel).walk(trips)?;
        Ok(())
    };
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        platform::pin_to_cpu(a)?;
        bring_in(workload)?;
        platform::pin_to_cpu(b)?;
        let cross = timed(workload)?;
        bring_in(workload)?;
        let own = timed(workload)?;
        workload.flush(size, NODE_BYTES);
        rounds.push([cross, own, timed(workload)?]);
    }
    Ok(Readings::of_rounds(rounds))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Five rounds: each reading within 3% of the given one.
    fn readings(cross_ns: f64, own_ns: f64, miss_ns: f64) -> Readings {
        let spread = [1.0, 0.97, 1.03, 0.99, 1.01];
        Readings::of_rounds(
            spread
                .iter()
                .map(|f| [cross_ns * f, own_ns * f, miss_ns * f])
                .collect(),
        )
    }

    #[test]
    fn lines_served_at_the_level_s_own_latency_mean_a_shared_level() {
        // The Zen 5 guest, vCPUs on one CCD: 8 MiB read at 13.7 ns across,
        // 13.0 own, 82.9 flushed.
        let (h, v) = judge(&readings(13.7, 13.0, 82.9));
        assert_eq!(v, Sharing::Shares);
        assert!(h.unwrap() > 0.95);
    }

    #[test]
    fn lines_that_come_from_memory_or_another_domain_mean_apart() {
        // A cross-CCD read near memory's cost, and one beyond it (a remote
        // socket's cache): neither is a shared level.
        assert_eq!(judge(&readings(110.0, 13.0, 140.0)).1, Sharing::Apart);
        assert_eq!(judge(&readings(180.0, 37.0, 110.0)).1, Sharing::Apart);
    }

    #[test]
    fn one_slow_round_on_either_side_does_not_hide_the_references() {
        // The Zen 5 guest on a busy minute: one own read at memory's cost.
        let r = Readings::of_rounds(vec![
            [15.0, 13.0, 120.0],
            [14.0, 150.0, 118.0],
            [16.0, 14.0, 95.0],
            [15.5, 13.5, 122.0],
            [14.5, 12.9, 119.0],
        ]);
        assert!(r.references_apart());
        assert_eq!(judge(&r).1, Sharing::Shares);
        // Two of five: no longer a stray round.
        let mut r = r;
        r.rounds_ns[0][1] = 140.0;
        assert!(!r.references_apart());
    }

    #[test]
    fn references_whose_rounds_overlap_say_unknown() {
        // Own and flushed within the rounds' spread: no hit to compare with.
        assert_eq!(judge(&readings(80.0, 85.0, 86.0)), (None, Sharing::Unknown));
        assert_eq!(
            judge(&readings(f64::NAN, 13.0, 90.0)),
            (None, Sharing::Unknown)
        );
        // Apart by less than 1.5x but by more than their spread: told.
        assert_eq!(judge(&readings(41.5, 39.1, 57.7)).1, Sharing::Shares);
    }
}
