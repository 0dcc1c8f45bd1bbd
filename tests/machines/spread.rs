//! One latency from how single loads spread (`detect::one_latency`), as the
//! sweep's spread test times them: groups of dependent loads over a random
//! chain, one group size at every size (the smallest the row's timer
//! resolves at the fastest level tested), read through the timer's step
//! and cost, with a share of groups slowed by an interrupt. Each load goes
//! to the level that serves it at that size (the model's served fractions,
//! a page walk where the TLB does not reach), at that level's latency
//! spread by where its line lies ([`LEVEL_SPREAD`]).

use memlat::analysis::detect::one_latency::{SpreadVerdict, judge};
use memlat::analysis::detect::{LoadSpread, same_level};

use super::model::{self, Draw, Noise};
use super::rows::Row;

/// One level's hits spread this much either side of its latency (uniform):
/// a mesh or ring L3's slices lie at different distances (Intel's near and
/// far slices differ by about a third: Chips and Cheese's slice-latency
/// maps), and DRAM serves row hits faster than row misses.
const LEVEL_SPREAD: f64 = 0.2;

/// Groups an interrupt or another tenant slows (by 100-400 ns each).
const INTERRUPTED: f64 = 0.01;

/// Groups in a timeline (the engine's fewest).
const GROUPS: usize = 4096;

/// Per level (caches, then memory): the cumulative fraction of a random
/// walk over `size` bytes served up to it, and its latency.
fn levels_at(row: &Row, d: &Draw, size: u64) -> Vec<(f64, f64)> {
    let mut served = 0.0f64;
    let mut out = Vec::new();
    for &(bytes, ns, c) in &d.caches {
        served = model::hit_fraction(size, bytes, c.ways, c.policy).max(served);
        out.push((served, ns));
    }
    let far = row.beyond.map_or(0.0, |(from, _)| {
        size.saturating_sub(from) as f64 / size as f64
    });
    out.push((1.0 - far, d.memory_ns));
    out.push((1.0, d.beyond_ns));
    out
}

/// One load at `size`: the level that serves it, at its latency spread by
/// [`LEVEL_SPREAD`], plus a page walk where the second-level TLB does not
/// reach its page.
fn one_load(row: &Row, levels: &[(f64, f64)], size: u64, noise: &mut Noise) -> f64 {
    let u = uniform(noise);
    let ns = levels
        .iter()
        .find(|(served, _)| u < *served)
        .map_or(levels[levels.len() - 1].1, |l| l.1);
    let walked = (1.0 - row.sweep_pages().1 as f64 / size as f64).max(0.0);
    let walk = if uniform(noise) < walked {
        row.walk_ns
    } else {
        0.0
    };
    noise.jitter(ns, LEVEL_SPREAD) + walk
}

/// Uniform in 0..1.
fn uniform(noise: &mut Noise) -> f64 {
    (noise.unit() + 1.0) / 2.0
}

/// The spread test at `size`: [`GROUPS`] groups of `group` loads, each
/// read through the row's timer (its step and cost), in ns per load.
fn timed(row: &Row, d: &Draw, size: u64, group: u32, noise: &mut Noise) -> LoadSpread {
    timed_through(row, d, d, 0..0, size, group, noise)
}

/// As [`timed`], the groups in `burst` served as `during` serves them (a
/// neighbour holding a shared level for a while), the rest as `d` does.
fn timed_through(
    row: &Row,
    d: &Draw,
    during: &Draw,
    burst: std::ops::Range<usize>,
    size: u64,
    group: u32,
    noise: &mut Noise,
) -> LoadSpread {
    let (quiet, slowed) = (levels_at(row, d, size), levels_at(row, during, size));
    let t = row.timer;
    let ns: Vec<f64> = (0..GROUPS)
        .map(|i| {
            let levels = if burst.contains(&i) { &slowed } else { &quiet };
            let phase = uniform(noise) * t.step_ns;
            let mut took = t.read_ns;
            for _ in 0..group {
                took += one_load(row, levels, size, noise);
            }
            if uniform(noise) < INTERRUPTED {
                took += noise.within((100.0, 400.0));
            }
            let stepped = ((phase + took) / t.step_ns).floor() * t.step_ns;
            (stepped - t.read_ns) / f64::from(group)
        })
        .collect();
    LoadSpread::of(size, group, &ns).expect("groups were timed")
}

/// The middle (in log) of the sizes where level `k` of the draw serves a
/// random walk: past where the level below serves half, short of where
/// this one does. Memory (`k` past the caches) serves from the last cache's
/// edge to where the sweep ends, DRAM flat, here 16 times further.
fn plateau_middle(d: &Draw, k: usize) -> u64 {
    let half = |k: usize| {
        let (bytes, _, c) = d.caches[k];
        model::half_served(bytes, c.ways, c.policy) as f64
    };
    let from = if k == 0 { 1024.0 } else { half(k - 1) };
    let to = if k == d.caches.len() {
        16.0 * from
    } else {
        half(k)
    };
    (from * to).sqrt() as u64
}

/// The spread test's verdicts on cache level `k >= 1` of a row.
pub struct Verdicts {
    pub k: usize,
    /// At its plateau's middle, as the sweep found it.
    pub level: SpreadVerdict,
    /// There, a shared level's share at the least it serves while the test
    /// ran (a neighbour took the rest).
    pub eroded: SpreadVerdict,
    /// There, a neighbour holding the level to half that least for a run
    /// of [`BURST_GROUPS`] groups of the timeline (the Zen 4 guest's L2
    /// beside an active sibling thread, an L3 beside a burst of misses).
    pub burst: SpreadVerdict,
    /// Where it serves `share` of the loads (the next level the rest);
    /// `None` where that latency lies within a level's step of either
    /// neighbour (the detector reads it as that level, never as one of its
    /// own).
    pub mixture: Option<SpreadVerdict>,
}

/// The groups in a row a neighbour's burst holds a level: a tenth of the
/// timeline (at 0.5-5 us a group, 0.2-2 ms: a time slice's order).
const BURST_GROUPS: usize = GROUPS / 10;

/// The verdicts on each cache level `k >= 1` (see [`Verdicts`]), each
/// against the level below's spread at its plateau's middle.
pub fn verdicts(row: &Row, seed: u64, share: f64) -> Vec<Verdicts> {
    let mut noise = Noise::new(seed ^ 0x5B2E);
    let d = model::draw(row, &mut noise);
    let t = row.timer;
    let mut out = Vec::new();
    if d.caches.len() < 2 {
        return out;
    }
    let fastest = d.caches[1..]
        .iter()
        .map(|c| c.1)
        .fold(f64::INFINITY, f64::min);
    let group = memlat::engine::group_size(fastest, t.read_ns, t.step_ns);
    let ns_at = |size: u64| model::latency(row, &d, size);
    for k in 1..d.caches.len() {
        let (middle, below) = (plateau_middle(&d, k), plateau_middle(&d, k - 1));
        // The level above at its own latency: the next cache's, or memory's
        // (the detector reads a climb of page walks past memory apart).
        let above_ns = d.caches.get(k + 1).map_or(d.memory_ns, |c| c.1);
        let (level, reference) = (
            timed(row, &d, middle, group, &mut noise),
            timed(row, &d, below, group, &mut noise),
        );
        // Memory's own spread where the level above is memory (as the
        // detector reads it).
        let memory = (k + 1 == d.caches.len())
            .then(|| timed(row, &d, plateau_middle(&d, k + 1), group, &mut noise));
        let next = memory.as_ref();
        // A spread at the plateau's middle, judged against its neighbours.
        let at_middle = |spread: &LoadSpread| {
            judge(
                spread,
                &reference,
                next,
                ns_at(below),
                ns_at(middle),
                above_ns,
            )
            .expect("a level lies between its neighbours")
        };
        let level_verdict = at_middle(&level);
        let mut eroded = model::draw(row, &mut Noise::new(seed ^ 0x5B2E));
        eroded.caches[k].0 = row.caches[k].serves.0;
        let eroded_verdict = at_middle(&timed(row, &eroded, middle, group, &mut noise));
        let mut burst = model::draw(row, &mut Noise::new(seed ^ 0x5B2E));
        burst.caches[k].0 = row.caches[k].serves.0 / 2;
        let start = GROUPS / 3;
        let burst_verdict = at_middle(&timed_through(
            row,
            &d,
            &burst,
            start..start + BURST_GROUPS,
            middle,
            group,
            &mut noise,
        ));
        // Where level k serves `share` of the walk: its loads and the next's.
        let (bytes, _, c) = d.caches[k];
        let mixed = (1..400)
            .map(|i| (bytes as f64 * 1.02f64.powi(i)) as u64)
            .find(|&s| model::hit_fraction(s, bytes, c.ways, c.policy) <= share)
            .unwrap_or(bytes * 16);
        let mixture = timed(row, &d, mixed, group, &mut noise);
        let mixture_ns = ns_at(mixed);
        let stands_apart =
            !same_level(mixture_ns, ns_at(middle)) && !same_level(mixture_ns, above_ns);
        let mixture_verdict = stands_apart.then(|| {
            judge(&mixture, &level, next, ns_at(middle), mixture_ns, above_ns)
                .expect("a mixture lies between the levels it mixes")
        });
        out.push(Verdicts {
            k,
            level: level_verdict,
            eroded: eroded_verdict,
            burst: burst_verdict,
            mixture: mixture_verdict,
        });
    }
    out
}
