//! `memlat linesize` as an experiment: loads `s` bytes apart beyond L1, for
//! each spacing `s`, in a page-random order (prefetchers cannot follow) and as
//! seed 004's stride chain (they can); the reading is [`crate::analysis::linesize`].

use anyhow::Result;

use super::{Observer, Step};
use crate::analysis::linesize::{PairPoint, StridePoint};
use crate::chain::Pattern;
use crate::engine::{Engine, Point};
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

/// Latency by spacing in both orders.
#[derive(Debug, Clone)]
pub struct Curves {
    /// Page-random order, one point per spacing.
    pub page_random: Vec<StridePoint>,
    /// Seed 004's stride chain, one point per stride.
    pub stride: Vec<StridePoint>,
    /// A lone load at a random slot (the reference for the pairs), ns.
    pub lone_ns: f64,
    /// Dependent pairs, one point per distance.
    pub pairs: Vec<PairPoint>,
}

/// Distances of the dependent pairs: within any line, then past it.
pub const PAIR_DISTANCES: [u64; 6] = [8, 16, 32, 64, 128, 256];

/// The slot each pair lives in: twice the largest distance, so pairs of
/// different slots share no 128-byte pair or 256-byte sector.
pub const PAIR_SLOT: u64 = 512;

/// Measures every spacing in `strides` over `size` bytes, page-random then
/// stride order; `template` carries the settings every point shares.
pub fn run(
    engine: &mut Engine,
    template: &Point,
    size: u64,
    strides: &[u64],
    observer: &mut dyn Observer<Curves>,
) -> Result<Curves> {
    let page_random = curve(engine, strides, observer, 0, |s| Point {
        size,
        line: s,
        pattern: Pattern::PageRandom,
        ..template.clone()
    })?;
    // One block more than a power of two: every stride up to 256 bytes then
    // visits every block (seed 004's 16 * 1024 + 64).
    let stride_size = crate::analysis::assoc::pow2_floor(size) + 64;
    let stride = curve(engine, strides, observer, strides.len(), |s| Point {
        size: stride_size,
        stride: s,
        pattern: Pattern::Stride,
        ..template.clone()
    })?;
    let (lone_ns, pairs) = pairs(engine, template, size, observer, 2 * strides.len())?;
    Ok(Curves {
        page_random,
        stride,
        lone_ns,
        pairs,
    })
}

/// Random slots of [`PAIR_SLOT`] bytes over `size`: first one load per slot
/// (a lone miss), then slot X and X + d, dependent, for each distance d
/// (multichase's `critword`): the second load costs a hit within X's line,
/// less than a miss in a line fetched with X's, a miss beyond.
fn pairs(
    engine: &mut Engine,
    template: &Point,
    size: u64,
    observer: &mut dyn Observer<Curves>,
    first_index: usize,
) -> Result<(f64, Vec<PairPoint>)> {
    let slots = Point {
        size: size / PAIR_SLOT * PAIR_SLOT,
        line: PAIR_SLOT,
        pattern: Pattern::Random,
        ..template.clone()
    };
    let total = first_index + 1 + PAIR_DISTANCES.len();
    let mut measure = |index: usize, point: &Point, label: &str| {
        let step = Step {
            index,
            total,
            label,
            cost_ms: 200,
        };
        observer.begin(&step);
        let m = engine.measure(point);
        observer.end(&step);
        m.map(|m| m.ns_per_load.median)
    };
    let lone_ns = measure(first_index, &slots, "lone loads")?;
    let mut points = Vec::new();
    for (i, &d) in PAIR_DISTANCES.iter().enumerate() {
        let label = format!("pairs {d} bytes apart");
        let pair = Point {
            pair: d,
            ..slots.clone()
        };
        let ns = measure(first_index + 1 + i, &pair, &label)?;
        points.push(PairPoint::of(d, ns, lone_ns));
    }
    Ok((lone_ns, points))
}

fn curve(
    engine: &mut Engine,
    strides: &[u64],
    observer: &mut dyn Observer<Curves>,
    first_index: usize,
    spec: impl Fn(u64) -> Point,
) -> Result<Vec<StridePoint>> {
    let mut points = Vec::new();
    for (i, &s) in strides.iter().enumerate() {
        let point = spec(s);
        let label = format!(
            "{} at spacing {s} over {}",
            point.pattern.name(),
            HumanBytes(point.size)
        );
        let step = Step {
            index: first_index + i,
            total: 2 * strides.len(),
            label: &label,
            cost_ms: 200,
        };
        observer.begin(&step);
        let m = engine.measure(&point)?;
        points.push(StridePoint {
            stride: s,
            ns: m.ns_per_load.median,
        });
        observer.end(&step);
    }
    Ok(points)
}
