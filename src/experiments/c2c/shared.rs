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
//! Each round is judged on its own ([`judge_round`]): the share of b's loads
//! that a's levels served is where the across read lies from the miss (0)
//! to the own read (1), and they share the level when it is at least half:
//! the same definition as a level's capacity (where half the loads stop
//! being served by it). The pair's verdict is the one more than half of the
//! rounds give ([`judge`]), else unknown.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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

/// The buffer a check reads, bytes: twice what the level above surely
/// does not serve (`above_at_most`: its capacity bounds' upper end), so
/// the half of the cycle b times was walked at least that much before a's
/// walk ended and an LRU level above holds none of it; as small as that
/// allows, because a shared level's share shrinks with its neighbours (the
/// Zen 5 guest's L3 read memory at 8 MiB while the plateau's middle was
/// 5.4 MiB, and served 2-4 MiB). Where twice that passes the last level's
/// plateau (`last_to`), the plateau's middle (`last_middle`).
pub fn buffer_bytes(above_at_most: u64, last_to: u64, last_middle: u64) -> u64 {
    let size = above_at_most.saturating_mul(2);
    let size = if size > last_to { last_middle } else { size };
    (size / NODE_BYTES).max(2) * NODE_BYTES
}

/// Bytes a node takes: the sweep's default line, a node per line.
const NODE_BYTES: u64 = 64;

/// The served share at and above which two CPUs share the level: half, the
/// capacity's definition.
pub const SHARED_FRACTION: f64 = 0.5;

/// One pair's three readings, each the median of [`ROUNDS`] rounds, with
/// every round's readings kept: the verdict is judged round by round
/// ([`judge`]).
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
}

/// What the sweep behind the check read: the level's latency on its
/// plateau and memory's, where the curve reached it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Swept {
    /// The last level's latency, ns: b's own reads must be served by it.
    pub level_ns: f64,
    /// Memory's latency, ns: the most a miss is taken to cost.
    pub memory_ns: Option<f64>,
}

impl Swept {
    /// The miss a round's across read is placed against: its `flushed`
    /// read, at most the sweep's memory latency ([`judge_round`] says why).
    pub fn miss(self, flushed: f64) -> f64 {
        self.memory_ns.map_or(flushed, |m| flushed.min(m))
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
    /// No verdict from more than half the rounds (rounds whose own read the
    /// level did not serve tell nothing), or nothing measured (no flush).
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

/// One round's verdict and served share, where its references can place
/// the across read: the miss is the flushed read, at most the sweep's
/// memory latency; b's own read must be served by the level (nearer the
/// level's swept latency than the miss: the half-served definition).
///
/// The cap: where memory is busier than when swept, a line from another
/// domain's cache costs far less than a busy miss and would read as half
/// served (the Zen 5 guest, vCPUs on two CCDs, `cas` 121 ns: across 127 ns,
/// own 119, flushed 291 read "shares" at 0.95), while it costs about what a
/// quiet miss does. A flushed read of a few MiB costs less than the
/// sweep's large buffer where memory is as quiet (0.6-1.1x on that guest),
/// so the cap only bites when it is not.
pub fn judge_round(round: [f64; 3], swept: Swept) -> Option<(Sharing, f64)> {
    let [cross, own, flushed] = round;
    let miss = swept.miss(flushed);
    let finite = [cross, own, miss].iter().all(|x| x.is_finite() && *x > 0.0);
    let own_served = own <= (swept.level_ns + miss) / 2.0 && own < miss;
    if !finite || !own_served {
        return None;
    }
    let h = ((miss - cross) / (miss - own)).clamp(0.0, 1.0);
    let verdict = if h >= SHARED_FRACTION {
        Sharing::Shares
    } else {
        Sharing::Apart
    };
    Some((verdict, h))
}

/// The pair's verdict: the one more than half of all rounds give
/// ([`judge_round`]), with the median share served of those rounds;
/// unknown where no verdict has that majority. Rounds, not medians of
/// readings: the host may move a vCPU between CCDs within a check (the
/// Zen 5 guest's rounds read own 13 ns and 277 ns in one check), and a
/// median then mixes two placements into a reading neither had.
pub fn judge(r: &Readings, swept: Swept) -> (Option<f64>, Sharing) {
    let judged: Vec<(Sharing, f64)> = r
        .rounds_ns
        .iter()
        .filter_map(|&round| judge_round(round, swept))
        .collect();
    for verdict in [Sharing::Shares, Sharing::Apart] {
        let served: Vec<f64> = judged
            .iter()
            .filter(|j| j.0 == verdict)
            .map(|j| j.1)
            .collect();
        if 2 * served.len() > r.rounds_ns.len() {
            return (Some(median(&served)), verdict);
        }
    }
    (None, Sharing::Unknown)
}

/// Measures [`ROUNDS`] rounds of `a` and `b` over `size` bytes: a thread
/// pinned to each, taking turns (the caller's own affinity stays as it
/// was). `None` where this ISA has no flush instruction user space may run
/// (the miss reference cannot be measured).
///
/// Two threads, not one that moves: a thread that moves to b waits for b's
/// CPU when something else runs there, and the lines a brought in wait with
/// it in a cache the other tenant uses; b's own lines would not. Beside a
/// build on both CPUs of the Zen 5 guest a moving thread read lines a
/// brought in at 87 ns against 14 for its own, on two vCPUs that bounced a
/// line in 22 ns. Each thread spins for its turn, so neither leaves its CPU.
pub fn measure(a: usize, b: usize, size: u64) -> Result<Option<Readings>> {
    if crate::arch::FLUSH_INSTRUCTION.is_none() {
        return Ok(None);
    }
    let size = (size / NODE_BYTES).max(2) * NODE_BYTES;
    // The buffer is made on the thread that reads as b: a mapping is not Send.
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                platform::pin_to_cpu(b)?;
                let mut workload = Workload::prepare(size, PageRequest::Thp, None)?;
                let chain = Chain::random(size, NODE_BYTES, 1)?;
                workload.link(&chain, Kernel::Chase(KernelKind::Pointer))?;
                rounds(&Turns::new(&workload, &chain), a)
            })
            .join()
            .map_err(|_| anyhow!("the sharing check's thread panicked"))?
    })
    .map(Some)
}

/// The buffer and chain both threads walk, and whose turn it is.
struct Turns<'w> {
    workload: &'w Workload,
    chain: &'w Chain,
    kernel: Kernel,
    /// Round k: 2k while a brings the lines in, 2k + 1 while b reads them;
    /// [`Turns::NOBODY`] before the first, [`Turns::DONE`] once b is done
    /// (or gave up).
    turn: AtomicUsize,
    /// Set by a when its walk failed (the end node was not the chain's).
    failed: AtomicBool,
}

// SAFETY: the two threads never touch the buffer at once: each waits for its
// turn (an Acquire load of `turn`) before its first access and hands over
// (a Release store) after its last, so every access of one thread happens
// before every access of the other's next turn. The buffer is only reached
// through raw pointers (`Workload::rewrite`, the kernels), never a Rust
// reference to its memory.
unsafe impl Sync for Turns<'_> {}

impl<'w> Turns<'w> {
    const DONE: usize = usize::MAX;
    const NOBODY: usize = usize::MAX - 1;

    fn new(workload: &'w Workload, chain: &'w Chain) -> Turns<'w> {
        Turns {
            workload,
            chain,
            kernel: Kernel::Chase(KernelKind::Pointer),
            turn: AtomicUsize::new(Turns::NOBODY),
            failed: AtomicBool::new(false),
        }
    }

    /// Loop trips of one whole cycle.
    fn trips(&self) -> u64 {
        (self.chain.len() / self.kernel.loads_per_trip()).max(2)
    }

    /// Waits, spinning, until the turn is `want` or [`Turns::DONE`]; true for `want`.
    fn wait_for(&self, want: usize) -> bool {
        loop {
            match self.turn.load(Ordering::Acquire) {
                t if t == want => return true,
                Turns::DONE => return false,
                _ => std::hint::spin_loop(),
            }
        }
    }

    /// Rewrites every line and walks one cycle: the lines then lie in the
    /// walking CPU's levels, written.
    fn bring_in(&self) -> Result<()> {
        self.workload.rewrite(self.chain.size(), NODE_BYTES);
        self.workload
            .walker(self.chain, self.kernel)
            .walk(self.trips())?;
        Ok(())
    }

    /// ns a load of the first half of the cycle (the lines the last walk
    /// reached first).
    fn timed(&self) -> Result<f64> {
        let mut walker: Walker = self.workload.walker(self.chain, self.kernel);
        let trips = self.trips() / 2;
        let start = Instant::now();
        walker.walk(trips)?;
        Ok(start.elapsed().as_secs_f64() * 1e9 / (trips * self.kernel.loads_per_trip()) as f64)
    }
}

/// The rounds: a thread pinned to `a` brings the lines in at each even
/// turn; the calling thread (pinned to b) reads at each odd one.
fn rounds(turns: &Turns, a: usize) -> Result<Readings> {
    std::thread::scope(|scope| {
        let bringer = scope.spawn(|| -> Result<()> {
            let pinned = platform::pin_to_cpu(a);
            for k in 0..ROUNDS {
                if !turns.wait_for(2 * k) {
                    break;
                }
                let brought = pinned.as_ref().map_err(|e| anyhow!("CPU {a}: {e}"));
                let brought = brought.and_then(|_| turns.bring_in());
                if brought.is_err() {
                    turns.failed.store(true, Ordering::Relaxed);
                }
                turns.turn.store(2 * k + 1, Ordering::Release);
                brought?;
            }
            Ok(())
        });
        let read = read_rounds(turns);
        turns.turn.store(Turns::DONE, Ordering::Release);
        let brought = bringer
            .join()
            .map_err(|_| anyhow!("the sharing check's thread on CPU {a} panicked"))?;
        brought?;
        read
    })
}

/// b's side of the rounds: across, own and flushed after each of a's turns.
fn read_rounds(turns: &Turns) -> Result<Readings> {
    let size = turns.chain.size();
    let mut rounds = Vec::with_capacity(ROUNDS);
    for k in 0..ROUNDS {
        turns.turn.store(2 * k, Ordering::Release);
        turns.wait_for(2 * k + 1);
        if turns.failed.load(Ordering::Relaxed) {
            anyhow::bail!("the sharing check's walk on the other CPU failed");
        }
        let cross = turns.timed()?;
        turns.bring_in()?;
        let own = turns.timed()?;
        turns.workload.flush(size, NODE_BYTES);
        rounds.push([cross, own, turns.timed()?]);
    }
    Ok(Readings::of_rounds(rounds))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Zen 5 guest's sweep: memory at 140 ns, the level at `level_ns`.
    fn swept(level_ns: f64) -> Swept {
        Swept {
            level_ns,
            memory_ns: Some(140.0),
        }
    }

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
        let (h, v) = judge(&readings(13.7, 13.0, 82.9), swept(12.1));
        assert_eq!(v, Sharing::Shares);
        assert!(h.unwrap() > 0.95);
    }

    #[test]
    fn lines_that_come_from_memory_or_another_domain_mean_apart() {
        // A cross-CCD read near memory's cost, and one beyond it (a remote
        // socket's cache): neither is a shared level.
        assert_eq!(
            judge(&readings(110.0, 13.0, 140.0), swept(12.0)).1,
            Sharing::Apart
        );
        assert_eq!(
            judge(&readings(180.0, 37.0, 110.0), swept(36.0)).1,
            Sharing::Apart
        );
    }

    #[test]
    fn one_slow_round_does_not_decide_it() {
        // The Zen 5 guest on a busy minute: one own read at memory's cost.
        let r = Readings::of_rounds(vec![
            [15.0, 13.0, 120.0],
            [14.0, 150.0, 118.0],
            [16.0, 14.0, 95.0],
            [15.5, 13.5, 122.0],
            [14.5, 12.9, 119.0],
        ]);
        assert_eq!(judge_round(r.rounds_ns[1], swept(12.0)), None);
        assert_eq!(judge(&r, swept(12.0)).1, Sharing::Shares);
    }

    #[test]
    fn rounds_split_between_two_placements_say_unknown() {
        // A recorded check of the Zen 5 guest whose vCPU moved within it:
        // two rounds on one CCD, one across CCDs, two with own unserved.
        let r = Readings::of_rounds(vec![
            [104.4, 276.4, 299.4],
            [113.4, 40.6, 122.4],
            [97.4, 298.8, 297.3],
            [18.4, 13.3, 295.3],
            [14.3, 14.0, 284.9],
        ]);
        assert_eq!(judge(&r, swept(12.4)), (None, Sharing::Unknown));
    }

    #[test]
    fn own_reads_the_level_did_not_serve_say_unknown() {
        // The Zen 5 guest beside a build, on two CCDs: own 231, flushed 320.
        assert_eq!(
            judge(&readings(235.0, 231.0, 320.0), swept(12.5)),
            (None, Sharing::Unknown)
        );
    }

    #[test]
    fn a_busy_memory_does_not_make_another_domain_s_cache_look_shared() {
        // Two CCDs, memory busy: across 127, own 19, flushed 291, swept 140.
        let busy = readings(127.0, 19.0, 291.0);
        assert_eq!(judge(&busy, swept(12.4)).1, Sharing::Apart);
        // Without the sweep's memory to cap the miss, it would read shared.
        let blind = Swept {
            level_ns: 12.4,
            memory_ns: None,
        };
        assert_eq!(judge(&busy, blind).1, Sharing::Shares);
    }

    #[test]
    fn references_too_close_to_place_a_reading_say_unknown() {
        // Own no faster than the miss: no hit to compare with.
        assert_eq!(
            judge(&readings(80.0, 85.0, 86.0), swept(12.0)),
            (None, Sharing::Unknown)
        );
        assert_eq!(
            judge(&readings(f64::NAN, 13.0, 90.0), swept(12.0)),
            (None, Sharing::Unknown)
        );
        // Apart by less than 1.5x (a Neoverse N1's system-level cache): told.
        assert_eq!(
            judge(&readings(41.5, 39.1, 57.7), swept(39.0)).1,
            Sharing::Shares
        );
    }
}
