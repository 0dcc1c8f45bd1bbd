//! A memory hierarchy from a row: the raw evidence each verdict reads, as
//! memlat would measure it on that machine, noise included. Every figure
//! comes from the row; the model knows no verdict's rule.

use memlat::analysis::assoc::AssocPoint;
use memlat::analysis::detect::{self, CurvePoint, Detection, tail};
use memlat::analysis::linesize::{PairPoint, TagPoint, TagReferences};

use super::rows::{Cache, Policy, Row};

/// A small deterministic generator (xorshift), so every run is the same.
pub struct Noise(u64);

impl Noise {
    pub fn new(seed: u64) -> Noise {
        Noise(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Uniform in -1..1.
    pub fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// `x` moved by up to `fraction` of itself.
    pub fn jitter(&mut self, x: f64, fraction: f64) -> f64 {
        x * (1.0 + fraction * self.unit())
    }

    /// A value within `range`.
    pub fn within(&mut self, (lo, hi): (f64, f64)) -> f64 {
        lo + (hi - lo) * (self.unit() + 1.0) / 2.0
    }
}

/// One draw of a machine: each level's latency and the share a shared
/// level serves this time (it moves with the neighbours).
pub struct Draw {
    pub caches: Vec<(u64, f64, Cache)>,
    pub memory_ns: f64,
    pub beyond_ns: f64,
}

pub fn draw(row: &Row, noise: &mut Noise) -> Draw {
    Draw {
        caches: row
            .caches
            .iter()
            .map(|c| {
                let bytes = noise.within((c.serves.0 as f64, c.serves.1 as f64)) as u64;
                (bytes, noise.within(c.ns), *c)
            })
            .collect(),
        memory_ns: noise.within(row.memory_ns),
        beyond_ns: row.beyond.map_or(0.0, |(_, ns)| noise.within(ns)),
    }
}

/// The fraction of a random cyclic walk over `size` bytes that a level of
/// `capacity` bytes serves. LRU: each set overflows on its own (random
/// pages spread lines over sets as a Poisson count), and an overflowing set
/// misses every load of a cyclic walk. Random replacement: each miss evicts
/// a random resident line, so a line survives the (1 - h) S misses between
/// two visits of it with probability e^-(1-h)S/C; the served fraction h is
/// the fixed point of that below 1 (all of the walk while it fits).
pub fn hit_fraction(size: u64, capacity: u64, ways: u32, policy: Policy) -> f64 {
    let s = size as f64;
    let c = capacity as f64;
    match policy {
        Policy::Random => random_fixed_point(s / c),
        Policy::Lru => {
            let lambda = f64::from(ways) * s / c;
            // Lines in sets holding at most W of them, as a fraction of all lines.
            let mut p = (-lambda).exp();
            let mut kept = 0.0;
            for k in 1..=ways {
                p *= lambda / f64::from(k);
                kept += f64::from(k) * p;
            }
            (kept / lambda).min(1.0)
        }
    }
}

/// The h < 1 with h = e^-(1-h)x for a walk `x` times the level's size
/// (1 where it fits): bisection between 0, where h is short of the right
/// side, and 1 - ln(x)/x, where the right side's slope is 1 and it is past.
fn random_fixed_point(x: f64) -> f64 {
    if x <= 1.0 {
        return 1.0;
    }
    let gap = |h: f64| h - (-(1.0 - h) * x).exp();
    let (mut lo, mut hi) = (0.0, 1.0 - x.ln() / x);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if gap(mid) < 0.0 { lo = mid } else { hi = mid }
    }
    (lo + hi) / 2.0
}

/// The size at which a level of `capacity` bytes serves half the loads of
/// a random cyclic walk: what memlat's capacity is, for this model
/// (bisection in log-size on [`hit_fraction`]).
pub fn half_served(capacity: u64, ways: u32, policy: Policy) -> u64 {
    let (mut lo, mut hi) = ((capacity as f64 / 16.0).ln(), (capacity as f64 * 16.0).ln());
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if hit_fraction(mid.exp() as u64, capacity, ways, policy) > 0.5 {
            lo = mid
        } else {
            hi = mid
        }
    }
    ((lo + hi) / 2.0).exp() as u64
}

/// ns per load of a random chase over `size` bytes.
pub fn latency(row: &Row, d: &Draw, size: u64) -> f64 {
    let mut served_before = 0.0;
    let mut ns = 0.0;
    for &(bytes, level_ns, c) in &d.caches {
        let f = hit_fraction(size, bytes, c.ways, c.policy).max(served_before);
        ns += (f - served_before) * level_ns;
        served_before = f;
    }
    let far = row.beyond.map_or(0.0, |(from, _)| {
        (size.saturating_sub(from)) as f64 / size as f64
    });
    let memory = (1.0 - far) * d.memory_ns + far * d.beyond_ns;
    ns += (1.0 - served_before) * memory;
    // Loads whose page the second-level TLB does not hold pay a walk.
    let reach = row.sweep_pages().1 as f64;
    ns + (1.0 - reach / size as f64).max(0.0) * row.walk_ns
}

/// The sweep's page test on a row ([`tail::page_test_sizes`] of the first
/// detection `d`): the sizes measured again with the other page, its base
/// page where it has huge ones (the rows' sweeps get huge pages where the
/// system has them); `None` with one page size, as the sweep has no other.
pub fn page_test(
    row: &Row,
    seed: u64,
    d: &Detection,
    curve: &[CurvePoint],
) -> Option<tail::PageTest> {
    row.huge_page?;
    let sizes = tail::page_test_sizes(d, curve)?;
    let drawn = draw(row, &mut Noise::new(seed));
    let base = Row {
        huge_page: None,
        ..row.clone()
    };
    // Each point a sweep point's median: within 2% of the model, as the sweep's.
    let mut noise = Noise::new(seed ^ 0x9a6e);
    let mut at = |pages: &Row, size: u64| noise.jitter(latency(pages, &drawn, size), 0.02);
    Some(tail::PageTest {
        page_bytes: row.base_page,
        below_ns: sizes.below.map(|b| at(&base, b)),
        below_here_ns: sizes.below.map(|b| at(row, b)),
        memory_ns: at(&base, sizes.memory),
        largest_ns: at(&base, sizes.largest),
        below_bytes: sizes.below,
        memory_here_ns: Some(at(row, sizes.memory)),
    })
}

/// The levels a sweep of `row` reports: detected, then told by its page test.
pub fn detect_swept(row: &Row, seed: u64) -> Detection {
    let curve = sweep(row, seed);
    let sysfs = super::claims(row);
    let first = detect::detect(&curve, &sysfs);
    let test = page_test(row, seed, &first, &curve);
    detect::detect_with_pages(&curve, &sysfs, test.as_ref(), &[])
}

/// The sizes of a default sweep: 1 KiB up by 1.3x to four times the
/// largest level listed (and past any far tier), at most 4 GiB.
pub fn sweep_sizes(row: &Row) -> Vec<u64> {
    let largest = row.caches.iter().map(|c| c.listed).max().unwrap_or(1 << 20);
    let far = row.beyond.map_or(0, |(from, _)| 2 * from);
    let cap = (4 * largest).max(512 << 20).max(far).min(4 << 30);
    let mut sizes = Vec::new();
    let mut s = 1024.0f64;
    while (s as u64) <= cap {
        sizes.push((s as u64) / 64 * 64);
        s *= 1.3;
    }
    sizes
}

/// A sweep curve: three repeats a size, each within 2% of the model.
pub fn sweep(row: &Row, seed: u64) -> Vec<CurvePoint> {
    let mut noise = Noise::new(seed);
    let d = draw(row, &mut noise);
    sweep_sizes(row)
        .into_iter()
        .map(|size| {
            let mut r: Vec<f64> = (0..3)
                .map(|_| noise.jitter(latency(row, &d, size), 0.02))
                .collect();
            r.sort_by(f64::total_cmp);
            CurvePoint {
                size_bytes: size,
                ns: r[1],
                ns_min: r[0],
                ns_max: r[2],
                cycles: r[1] * row.ghz,
            }
        })
        .collect()
}

/// The line-tag test: X + d after X's line was flushed to memory.
pub fn tags(row: &Row, seed: u64) -> (Vec<TagPoint>, TagReferences) {
    let mut noise = Noise::new(seed);
    let d = draw(row, &mut noise);
    // A kept line is an L1 hit plus the loop's own cost.
    let kept = d.caches[0].1 + 5.0;
    let dropped = d.memory_ns;
    let points = [8u64, 16, 32, 64, 128, 256]
        .iter()
        .map(|&distance| {
            let ns = if distance < row.line { dropped } else { kept };
            TagPoint {
                distance,
                ns: noise.jitter(ns, 0.03),
                spread_ns: 0.04 * ns,
            }
        })
        .collect();
    let refs = TagReferences {
        dropped_ns: noise.jitter(dropped, 0.03),
        dropped_spread_ns: 0.04 * dropped,
        kept_ns: noise.jitter(kept, 0.03),
        kept_spread_ns: 0.04 * kept,
    };
    (points, refs)
}

/// The dependent pairs X, X + d over `linesize`'s default buffer (twice the
/// L2, or twice the L1 where it is the only cache before memory): the
/// second load's latency by distance, and a lone load's.
pub fn pairs(row: &Row, seed: u64) -> (Vec<PairPoint>, f64) {
    let mut noise = Noise::new(seed);
    let d = draw(row, &mut noise);
    let level = row.caches.get(1).unwrap_or(&row.caches[0]);
    let lone = latency(row, &d, 2 * level.serves.1);
    let hit = d.caches[0].1;
    let chunk = row.fill.chunks[0];
    let points = [8u64, 16, 32, 64, 128, 256]
        .iter()
        .map(|&distance| {
            let second = if distance < chunk.min(row.line) {
                hit
            } else if distance < row.line {
                hit + row.fill.gap_ns
            } else {
                row.fill.next_line_ns.map_or(0.9 * lone, |g| hit + g)
            };
            let second = second + 0.05 * noise.unit();
            PairPoint {
                distance,
                pair_ns: (second + lone) / 2.0,
                second_ns: second,
                spread_ns: 0.1,
            }
        })
        .collect();
    (points, lone)
}

/// `assoc`'s points for one level: N lines one way apart, hits while they
/// fit the set's ways, then misses to the next level: all of them under
/// LRU, the least any policy can ((N - W) / N) under random replacement.
pub fn assoc(row: &Row, level: usize, seed: u64) -> (Vec<AssocPoint>, f64, f64) {
    let mut noise = Noise::new(seed);
    let d = draw(row, &mut noise);
    let (_, hit, c) = d.caches[level];
    let miss = d.caches.get(level + 1).map_or(d.memory_ns, |n| n.1);
    let ways = u64::from(c.ways);
    let points = (1..=2 * ways + 2)
        .map(|n| {
            let missed = if n <= ways {
                0.0
            } else {
                match c.policy {
                    Policy::Lru => 1.0,
                    Policy::Random => (n - ways) as f64 / n as f64,
                }
            };
            AssocPoint {
                lines: n,
                ns: noise.jitter(hit + missed * (miss - hit), 0.02),
                ns_by_chain: Vec::new(),
            }
        })
        .collect();
    (points, hit, miss)
}

/// `mlp`'s points at memory: N chains side by side complete min(N, misses
/// in flight) loads a memory latency; one chain alone finds memory at its
/// idle clock where memory clocks up under traffic.
pub fn mlp(row: &Row, seed: u64) -> Vec<(u32, f64)> {
    let mut noise = Noise::new(seed);
    let d = draw(row, &mut noise);
    (1..=16u32)
        .map(|n| {
            let idle = if n == 1 { row.dram.clocks_up } else { 1.0 };
            let ns = idle * d.memory_ns / f64::from(n.min(row.misses_in_flight));
            (n, noise.jitter(ns, 0.01))
        })
        .collect()
}
