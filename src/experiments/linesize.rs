//! `memlat linesize` as an experiment: loads `s` bytes apart beyond L1, for
//! each spacing `s`, in a page-random order (prefetchers cannot follow) and as
//! seed 004's stride chain (they can); the reading is [`crate::analysis::linesize`].

use anyhow::Result;

use super::{Observer, Step};
use crate::analysis::linesize::{HitReference, PairPoint, StridePoint, TagPoint, TagReferences};
use crate::chain::Pattern;
use crate::engine::{Engine, Point};
use crate::kernels::line_tag::{Drop, KEPT_OFFSET, LineTagProbe};
use crate::platform::caches::Machine;
use crate::units::HumanBytes;

/// Default buffer when no cache sizes are known.
pub const FALLBACK_SIZE: u64 = 8 << 20;

/// Twice the L2 (beyond L1 and L2: the largest contrast with an L1 hit),
/// else 8 MiB; a power of two, so page-random covers whole pages.
pub fn default_size(machine: &Machine) -> u64 {
    match machine.caches.get(1).or(machine.caches.first()) {
        Some(c) => crate::analysis::assoc::pow2_floor(4 * c.size_bytes).max(64 << 10) / 2,
        None => FALLBACK_SIZE,
    }
}

/// The L1 hit reference's buffer: half the L1 claimed (its own lines and
/// the stack's stay out of each other's way), at most 16 KiB; 8 KiB (half
/// the smallest L1 d-cache in use) when none is claimed.
pub fn hit_size(machine: &Machine) -> u64 {
    machine
        .caches
        .first()
        .map_or(8 << 10, |c| (c.size_bytes / 2).clamp(4 << 10, 16 << 10))
}

/// One independent pass: the page-random spacing curve and the dependent
/// pairs, with chains of their own seed, on a buffer of its own.
#[derive(Debug, Clone)]
pub struct Pass {
    /// Page-random order, one point per spacing.
    pub page_random: Vec<StridePoint>,
    /// An L1 hit measured in this pass (a random chain within the L1): what
    /// a second load within the first one's line costs.
    pub hit: HitReference,
    /// A lone load at a random slot (the reference for the pairs), ns: the
    /// median of those timed before and after each distance.
    pub lone_ns: f64,
    /// Dependent pairs, one point per distance.
    pub pairs: Vec<PairPoint>,
    /// The line-tag test: loads of X + d after X's line was dropped, one
    /// point per distance.
    pub tags: Vec<TagPoint>,
    /// The tag test's references (X dropped, X kept), same rounds.
    pub tag_refs: TagReferences,
}

/// Latency by spacing: seed 004's stride chain once, and the readings'
/// measurements in independent passes.
#[derive(Debug, Clone)]
pub struct Curves {
    /// Seed 004's stride chain, one point per stride.
    pub stride: Vec<StridePoint>,
    /// The passes, at least [`PASSES`].
    pub passes: Vec<Pass>,
}

/// Independent passes by default: a reading counts only when they agree.
pub const PASSES: usize = 3;

/// Distances of the dependent pairs: within any line, then past it.
pub const PAIR_DISTANCES: [u64; 6] = [8, 16, 32, 64, 128, 256];

/// Rounds over the pair distances in each pass.
pub const PAIR_ROUNDS: usize = 5;

/// The slot each pair lives in: twice the largest distance, so pairs of
/// different slots share no 128-byte pair or 256-byte sector.
pub const PAIR_SLOT: u64 = 512;

/// Rounds of the line-tag test in each pass: each distance and both
/// references once a round, interleaved, the median kept.
pub const TAG_ROUNDS: usize = 15;

/// Pass k's chains differ from pass 0's by k times this seed offset.
const PASS_SEED: u64 = 0x1000;

/// Measures the stride chain at every spacing in `strides` over `size`
/// bytes, then `passes` passes of page-random spacings, an L1 hit over
/// `hit_size` bytes and dependent pairs, each pass apart in time and on a
/// new buffer ([`super::passes`]); `template` carries the settings every
/// point shares.
pub fn run(
    engine: &mut Engine,
    template: &Point,
    (size, hit_size): (u64, u64),
    (drop, l1_bytes): (Drop, u64),
    strides: &[u64],
    passes: usize,
    observer: &mut dyn Observer<Curves>,
) -> Result<Curves> {
    let steps =
        strides.len() * (1 + passes) + passes * (2 + PAIR_ROUNDS * (1 + 2 * PAIR_DISTANCES.len()));
    let mut index = 0;
    // One block more than a power of two: every stride up to 256 bytes then
    // visits every block (seed 004's 16 * 1024 + 64).
    let stride_size = crate::analysis::assoc::pow2_floor(size) + 64;
    let stride = curve(engine, strides, observer, (&mut index, steps), |s| Point {
        size: stride_size,
        stride: s,
        pattern: Pattern::Stride,
        ..template.clone()
    })?;
    let mut all = Vec::new();
    for pass in 0..passes.max(1) {
        super::passes::separate(engine);
        let template = Point {
            seed: template.seed.wrapping_add(pass as u64 * PASS_SEED),
            ..template.clone()
        };
        // The hit first: the big buffer of the last pass stays aside
        // until this pass maps its own.
        let hit_point = Point {
            size: hit_size,
            pattern: Pattern::Random,
            ..template.clone()
        };
        let hit = step(observer, (&mut index, steps), "L1 hits", || {
            let m = engine.measure(&hit_point)?.ns_per_load;
            Ok(HitReference {
                ns: m.median,
                spread_ns: m.max - m.min,
            })
        })?;
        let page_random = curve(engine, strides, observer, (&mut index, steps), |s| Point {
            size,
            line: s,
            pattern: Pattern::PageRandom,
            ..template.clone()
        })?;
        let (lone_ns, pairs) = pairs(engine, &template, size, observer, (&mut index, steps))?;
        let (tags, tag_refs) = step(observer, (&mut index, steps), "line tags", || {
            tags(drop, l1_bytes, template.seed)
        })?;
        all.push(Pass {
            page_random,
            hit,
            lone_ns,
            pairs,
            tags,
            tag_refs,
        });
    }
    Ok(Curves {
        stride,
        passes: all,
    })
}

/// Reports step `index` of `total` around `measure`, then counts it.
fn step<T>(
    observer: &mut dyn Observer<Curves>,
    (index, total): (&mut usize, usize),
    label: &str,
    measure: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let step = Step {
        index: *index,
        total,
        label,
        cost_ms: 200,
    };
    observer.begin(&step);
    let value = measure()?;
    observer.end(&step);
    *index += 1;
    Ok(value)
}

/// The line-tag test ([`crate::kernels::line_tag`]): [`TAG_ROUNDS`] rounds,
/// each timing X + d for every pair distance after X's line was dropped,
/// and the two references (X dropped, X kept), interleaved so a burst lands
/// on one round of each, which the medians outvote.
pub fn tags(drop: Drop, l1_bytes: u64, seed: u64) -> Result<(Vec<TagPoint>, TagReferences)> {
    let page = crate::platform::system::base_page_bytes();
    let mut probe = LineTagProbe::new(drop, page, l1_bytes, seed)?;
    let mut by_distance = vec![Vec::new(); PAIR_DISTANCES.len()];
    let (mut dropped, mut kept) = (Vec::new(), Vec::new());
    for _ in 0..TAG_ROUNDS {
        dropped.push(probe.time(0, 0)?);
        for (k, &d) in PAIR_DISTANCES.iter().enumerate() {
            by_distance[k].push(probe.time(d, 0)?);
        }
        kept.push(probe.time(0, KEPT_OFFSET)?);
    }
    let median = crate::analysis::stats::median;
    let points = by_distance
        .iter()
        .zip(PAIR_DISTANCES)
        .map(|(v, distance)| TagPoint {
            distance,
            ns: median(v),
            spread_ns: quartile_spread(v),
        })
        .collect();
    let refs = TagReferences {
        dropped_ns: median(&dropped),
        dropped_spread_ns: quartile_spread(&dropped),
        kept_ns: median(&kept),
        kept_spread_ns: quartile_spread(&kept),
    };
    Ok((points, refs))
}

/// The spread of the tag test's rounds: the interquartile range. A lap of
/// 64 L1 hits lasts well under a microsecond, so one preempted round in
/// fifteen can be many times the rest; the middle half is what repeats.
fn quartile_spread(v: &[f64]) -> f64 {
    let mut ns = v.to_vec();
    ns.sort_by(f64::total_cmp);
    match ns.len() {
        0 => 0.0,
        n => ns[(3 * n) / 4] - ns[n / 4],
    }
}

/// The spread of repeated timings: max - min of all but the highest and
/// lowest (one round caught in a neighbour's burst is outvoted).
fn inner_range(v: &[f64]) -> f64 {
    let mut ns = v.to_vec();
    ns.sort_by(f64::total_cmp);
    match ns.len() {
        0 | 1 => 0.0,
        2 => ns[1] - ns[0],
        n => ns[n - 2] - ns[1],
    }
}

/// Random slots of [`PAIR_SLOT`] bytes over `size`: one load per slot (a
/// lone miss) around slot X and X + d, dependent, for each distance d
/// (multichase's `critword`): the second load costs a hit within X's line,
/// less than a miss in a line fetched with X's, a miss beyond.
fn pairs(
    engine: &mut Engine,
    template: &Point,
    size: u64,
    observer: &mut dyn Observer<Curves>,
    (index, total): (&mut usize, usize),
) -> Result<(f64, Vec<PairPoint>)> {
    let slots = Point {
        size: size / PAIR_SLOT * PAIR_SLOT,
        line: PAIR_SLOT,
        pattern: Pattern::Random,
        ..template.clone()
    };
    // A lone load before and after every distance: the second load is
    // twice the pair less the lone load, so a lone load timed beside it
    // keeps a neighbour's burst between the two out of the difference.
    // [`PAIR_ROUNDS`] rounds over the distances, each distance's median
    // taken: a burst that lands on one distance in one round is outvoted.
    let mut lones = Vec::new();
    let mut by_distance: Vec<Vec<PairPoint>> = vec![Vec::new(); PAIR_DISTANCES.len()];
    for _ in 0..PAIR_ROUNDS {
        let mut before = step(observer, (&mut *index, total), "lone loads", || {
            Ok(engine.measure(&slots)?.ns_per_load)
        })?;
        lones.push(before.median);
        for (k, &d) in PAIR_DISTANCES.iter().enumerate() {
            let label = format!("pairs {d} bytes apart");
            let pair = Point {
                pair: d,
                ..slots.clone()
            };
            let ns = step(observer, (&mut *index, total), &label, || {
                Ok(engine.measure(&pair)?.ns_per_load)
            })?;
            let after = step(observer, (&mut *index, total), "lone loads", || {
                Ok(engine.measure(&slots)?.ns_per_load)
            })?;
            let lone_ns = (before.median + after.median) / 2.0;
            let lone_range = (before.max - before.min).max(after.max - after.min);
            by_distance[k].push(
                PairPoint::of(d, ns.median, lone_ns).with_spread(ns.max - ns.min, lone_range),
            );
            lones.push(after.median);
            before = after;
        }
    }
    let median = |f: &dyn Fn(&PairPoint) -> f64, v: &[PairPoint]| {
        crate::analysis::stats::median(&v.iter().map(f).collect::<Vec<_>>())
    };
    // Each distance against the in-line one (the first) of the same round:
    // measured seconds apart, the two share a round's burst or lull, which
    // the difference cancels. The figure tested is the in-line median plus
    // the median rise, its spread the rises' over the rounds.
    let inline = &by_distance[0];
    let base = median(&|p| p.second_ns, inline);
    let points = by_distance
        .iter()
        .zip(PAIR_DISTANCES)
        .map(|(v, distance)| {
            let rises: Vec<PairPoint> = v
                .iter()
                .zip(inline)
                .map(|(p, q)| PairPoint {
                    second_ns: p.second_ns - q.second_ns,
                    ..*p
                })
                .collect();
            PairPoint {
                distance,
                pair_ns: median(&|p| p.pair_ns, v),
                second_ns: base + median(&|p| p.second_ns, &rises),
                spread_ns: range(&rises),
            }
        })
        .collect();
    let lone_ns = crate::analysis::stats::median(&lones);
    Ok((lone_ns, points))
}

/// The spread of the (second loads' rises') latencies over the rounds: max - min
/// of all but the highest and lowest (one round caught in a neighbour's
/// burst is outvoted, as in the median); one round's own bound when there
/// are too few rounds.
fn range(v: &[PairPoint]) -> f64 {
    match v {
        [one] => one.spread_ns,
        _ => inner_range(&v.iter().map(|p| p.second_ns).collect::<Vec<_>>()),
    }
}

fn curve(
    engine: &mut Engine,
    strides: &[u64],
    observer: &mut dyn Observer<Curves>,
    (index, total): (&mut usize, usize),
    spec: impl Fn(u64) -> Point,
) -> Result<Vec<StridePoint>> {
    let mut points = Vec::new();
    for &s in strides {
        let point = spec(s);
        let label = format!(
            "{} at spacing {s} over {}",
            point.pattern.name(),
            HumanBytes(point.size)
        );
        let ns = step(observer, (&mut *index, total), &label, || {
            Ok(engine.measure(&point)?.ns_per_load.median)
        })?;
        points.push(StridePoint { stride: s, ns });
    }
    Ok(points)
}
