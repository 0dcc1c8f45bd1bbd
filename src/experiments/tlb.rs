//! `memlat tlb`: the reach of each TLB level and the cost of missing it.
//!
//! For N pages, a random chain with one line in each page (line `k` of page
//! `k` lies `k x 64 bytes` into it, so successive pages' lines fill
//! successive cache sets) against the same N lines packed into N x 64
//! contiguous bytes. Both hold N lines of data, so caches serve them
//! alike; the difference is translation alone. It stays near zero while
//! the L1 dTLB holds N pages, steps up by an L2 TLB hit beyond its entries,
//! and again by a page walk beyond the L2 TLB. The steps are found by the
//! same plateau detection as cache levels ([`crate::analysis::detect`]),
//! with the page count in place of the size.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::{Observer, Step};
use crate::analysis::detect::{self, CurvePoint};
use crate::chain::Pattern;
use crate::engine::{Engine, Point};
use crate::platform::PageRequest;
use crate::platform::cpuid::TlbClaim;

/// Page counts per doubling: sizes 19% apart place a reach within 10%.
pub const STEPS_PER_DOUBLING: u32 = 4;

/// Fewest pages measured.
pub const MIN_PAGES: u64 = 8;

/// The pages to sweep for one page size.
#[derive(Debug, Clone, PartialEq)]
pub struct PagePlan {
    /// Page size, bytes.
    pub page_bytes: u64,
    /// How to ask for such pages.
    pub request: PageRequest,
    /// Most pages measured.
    pub max_pages: u64,
}

/// Page counts from [`MIN_PAGES`] to `max`, [`STEPS_PER_DOUBLING`] a doubling.
pub fn counts(max: u64) -> Vec<u64> {
    let mut out: Vec<u64> = (0..)
        .map(|k| {
            (MIN_PAGES as f64 * 2f64.powf(f64::from(k) / f64::from(STEPS_PER_DOUBLING))).round()
                as u64
        })
        .take_while(|&n| n <= max)
        .collect();
    out.dedup();
    out
}

/// One page count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TlbPoint {
    /// Pages touched (one line each).
    pub pages: u64,
    /// ns per load, one line a page.
    pub spread_ns: f64,
    /// ns per load, the same lines packed.
    pub packed_ns: f64,
    /// The difference: translation cost per load, ns.
    pub translation_ns: f64,
    /// Each independent pass's one-line-a-page latency (fresh chains), ns.
    #[serde(default)]
    pub spread_ns_by_pass: Vec<f64>,
}

/// One TLB level found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TlbLevel {
    /// `L1 dTLB`, `L2 TLB`, ...
    pub name: String,
    /// Entries: the page count where translation cost leaves this level's plateau.
    pub entries: u64,
    /// Page counts measured either side of it.
    pub entries_bracket: [u64; 2],
    /// Entries x page size, bytes.
    pub reach_bytes: u64,
    /// What a load costs more once this level misses, ns.
    pub miss_cost_ns: f64,
    /// The same in core cycles (0 when the clock is unknown).
    pub miss_cost_cycles: f64,
}

/// One page size's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TlbPageResult {
    /// Page size, bytes.
    pub page_bytes: u64,
    /// The backing obtained for the largest buffer.
    pub pages_obtained: String,
    /// Every page count.
    pub points: Vec<TlbPoint>,
    /// Levels found, first level first.
    pub levels: Vec<TlbLevel>,
    /// Translation cost past every level found (a page walk when two levels
    /// were found), ns; null when no miss showed.
    pub beyond_all_ns: Option<f64>,
    /// What CPUID says about TLBs holding this page size.
    pub cpuid: Vec<TlbClaim>,
    /// What to keep in mind.
    pub notes: Vec<String>,
    /// Each pass's reading: the entries of every TLB level it found.
    pub readings: Vec<Vec<u64>>,
    /// Whether the passes agree: as many levels, entries within [`AGREE_RATIO`].
    pub agree: bool,
}

/// Most pages a base-page plan measures by default. A TLB holds entries,
/// whatever their page size, so the plan counts pages, not bytes: twice the
/// largest second-level TLB of shipping cores (Zen 5's 4096 entries), so
/// its step shows with 16 KiB and 64 KiB base pages as with 4 KiB ones
/// (32 MiB of them reached only 512 pages of 64 KiB).
pub const BASE_MAX_PAGES: u64 = 8192;

/// Most pages a huge-page plan measures by default: first-level TLBs hold
/// 32 to 160 huge pages; 1024 of 2 MiB is 2 GiB.
pub const HUGE_MAX_PAGES: u64 = 1024;

/// The default page count for `page_bytes` pages (`base`: the system's base
/// page), within a quarter of the `available` memory.
pub fn default_max_pages(page_bytes: u64, base: bool, available: u64) -> u64 {
    let most = if base { BASE_MAX_PAGES } else { HUGE_MAX_PAGES };
    most.min(available / 4 / page_bytes.max(1))
}

/// Independent passes over the page counts (fresh chains and buffers each, apart in time).
pub const PASSES: u32 = 3;

/// Passes agree when each level's entries differ by less than this factor.
pub const AGREE_RATIO: f64 = 1.25;

/// Pass k's chains differ from pass 0's by k times this seed offset.
const PASS_SEED: u64 = 0x1000;

/// Whether per-pass readings (entries by level) agree: the same number of
/// levels, each level's entries within [`AGREE_RATIO`] of each other.
pub fn readings_agree(readings: &[Vec<u64>]) -> bool {
    let Some(first) = readings.first() else {
        return false;
    };
    readings.iter().all(|r| r.len() == first.len())
        && (0..first.len()).all(|k| {
            let lo = readings.iter().map(|r| r[k]).min().unwrap_or(0).max(1);
            let hi = readings.iter().map(|r| r[k]).max().unwrap_or(0);
            (hi as f64) < lo as f64 * AGREE_RATIO
        })
}

/// Each pass's reading of `points`: the entries of the levels it shows.
fn pass_readings(points: &[TlbPoint], page_bytes: u64) -> Vec<Vec<u64>> {
    let passes = points
        .iter()
        .map(|p| p.spread_ns_by_pass.len())
        .min()
        .unwrap_or(0);
    (0..passes)
        .map(|k| {
            let pass: Vec<TlbPoint> = points
                .iter()
                .map(|p| TlbPoint {
                    spread_ns: p.spread_ns_by_pass[k],
                    translation_ns: p.spread_ns_by_pass[k] - p.packed_ns,
                    ..p.clone()
                })
                .collect();
            read(&pass, page_bytes, 0.0)
                .0
                .iter()
                .map(|l| l.entries)
                .collect()
        })
        .collect()
}

/// Bytes a page count stands for in the detector: one line a page.
const LINE: u64 = 64;

/// Names of the levels in order.
const NAMES: [&str; 3] = ["L1 dTLB", "L2 TLB", "L3 TLB"];

/// Finds the TLB levels in `points` (by page count) for `page_bytes` pages;
/// `ghz` converts to cycles (0: unknown).
pub fn read(
    points: &[TlbPoint],
    page_bytes: u64,
    ghz: f64,
) -> (Vec<TlbLevel>, Option<f64>, Vec<String>) {
    let mut notes = Vec::new();
    let Some(base) = points.first().map(|p| p.packed_ns) else {
        return (Vec::new(), None, vec!["no points".into()]);
    };
    // Translation cost on top of a hit, kept positive for the log-scale
    // detector; pages scaled to bytes of lines (64 each), the unit the
    // detector places capacities in.
    let curve: Vec<CurvePoint> = points
        .iter()
        .map(|p| {
            let ns = base + p.translation_ns.max(0.0);
            CurvePoint {
                size_bytes: p.pages * LINE,
                ns,
                ns_min: ns,
                ns_max: ns,
                cycles: 0.0,
            }
        })
        .collect();
    let found = detect::detect(&curve, &[]);
    let plateaus = &found.levels;
    let mut levels = Vec::new();
    for (k, pair) in plateaus.windows(2).enumerate() {
        let (this, next) = (&pair[0], &pair[1]);
        let (Some(size), Some([lo, hi])) = (this.size_bytes, this.size_bracket_bytes) else {
            continue;
        };
        let (entries, lo, hi) = (size / LINE, lo / LINE, hi / LINE);
        let cost = next.latency_ns - this.latency_ns;
        levels.push(TlbLevel {
            name: NAMES
                .get(k)
                .map_or_else(|| format!("L{} TLB", k + 1), |n| n.to_string()),
            entries,
            entries_bracket: [lo, hi],
            reach_bytes: entries.saturating_mul(page_bytes),
            miss_cost_ns: cost,
            miss_cost_cycles: if ghz > 0.0 { cost * ghz } else { 0.0 },
        });
    }
    let largest = points.last().map_or(0, |p| p.pages);
    // Already paying at the fewest pages: no first-level TLB holds them.
    if let Some(first) = plateaus.first()
        && first.latency_ns - base > (0.1 * base).max(0.3)
    {
        notes.push(format!(
            "from {} pages on, every load already costs {:.2} ns more than packed: no first-level TLB entry holds these pages (under a hypervisor, guest huge pages backed by smaller host pages are often held only at the second level)",
            points[0].pages,
            first.latency_ns - base
        ));
    }
    let beyond = plateaus
        .last()
        .filter(|_| !levels.is_empty())
        .map(|l| l.latency_ns - base);
    match levels.len() {
        0 => notes.push(format!(
            "no step in translation cost up to {largest} pages: the TLB level serving them holds at least that many (raise --max-pages)"
        )),
        1 => notes.push(format!(
            "one step up to {largest} pages: whether its cost is a second-level TLB hit or a page walk, this sweep cannot tell (the next level's reach lies beyond it)"
        )),
        _ => notes.push(format!(
            "beyond the {} level's reach every load takes a page walk: {:.1} ns more than an L1 dTLB hit",
            levels.last().map_or("last", |l| l.name.as_str()),
            beyond.unwrap_or(f64::NAN)
        )),
    }
    (levels, beyond, notes)
}

/// Measures every page count of every plan: [`PASSES`] passes over all the
/// counts, each apart in time and on new buffers ([`super::passes`]), the
/// packed chain in the first; `template` carries the shared settings.
pub fn run(
    engine: &mut Engine,
    template: &Point,
    plans: &[PagePlan],
    claims: &[TlbClaim],
    observer: &mut dyn Observer<Vec<TlbPageResult>>,
) -> Result<Vec<TlbPageResult>> {
    let counts_of: Vec<(usize, u64)> = plans
        .iter()
        .enumerate()
        .flat_map(|(i, p)| counts(p.max_pages).into_iter().map(move |n| (i, n)))
        .collect();
    let steps: Vec<(u32, usize, u64)> = (0..PASSES)
        .flat_map(|pass| counts_of.iter().map(move |&(i, n)| (pass, i, n)))
        .collect();
    let labels: Vec<String> = steps
        .iter()
        .map(|&(pass, i, n)| {
            format!(
                "{} pages of {}, pass {}",
                n,
                crate::units::HumanBytes(plans[i].page_bytes),
                pass + 1
            )
        })
        .collect();
    observer.planned(&labels.iter().map(|l| (l.clone(), 30)).collect::<Vec<_>>());
    let mut results: Vec<TlbPageResult> = plans
        .iter()
        .map(|p| empty_result(p.page_bytes, claims))
        .collect();
    let ghz = engine.clock_ghz();
    for (index, &(pass, i, pages)) in steps.iter().enumerate() {
        if observer.interrupted() {
            break;
        }
        if index > 0 && steps[index - 1].0 != pass {
            super::passes::separate(engine);
        }
        let plan = &plans[i];
        let step = Step {
            index,
            total: steps.len(),
            label: &labels[index],
            cost_ms: 30,
        };
        observer.begin(&step);
        let r = &mut results[i];
        if pass == 0 {
            let (spread, packed, backing) = measure_first(engine, template, plan, pages)
                .with_context(|| format!("measuring {}", labels[index]))?;
            r.pages_obtained = backing.obtained.clone();
            if plan.page_bytes > crate::platform::system::base_page_bytes()
                && backing.huge_fraction < 0.9
            {
                let note = format!(
                    "only {:.0}% of the buffer came in {} pages: translation is partly by smaller pages",
                    backing.huge_fraction * 100.0,
                    crate::units::HumanBytes(plan.page_bytes)
                );
                if !r.notes.contains(&note) {
                    r.notes.push(note);
                }
            }
            r.points.push(TlbPoint {
                pages,
                spread_ns: spread,
                packed_ns: packed.ns_per_load.median,
                translation_ns: spread - packed.ns_per_load.median,
                spread_ns_by_pass: vec![spread],
            });
        } else if let Some(point) = r.points.iter_mut().find(|p| p.pages == pages) {
            let ns = engine
                .measure(&spread_point(template, plan, pages, pass))
                .with_context(|| format!("measuring {}", labels[index]))?
                .ns_per_load
                .median;
            point.spread_ns_by_pass.push(ns);
            point.spread_ns = crate::analysis::stats::median(&point.spread_ns_by_pass);
            point.translation_ns = point.spread_ns - point.packed_ns;
        }
        observer.checkpoint(&results)?;
        observer.end(&step);
    }
    results.retain(|r| !r.points.is_empty());
    for r in &mut results {
        conclude(r, ghz);
    }
    Ok(results)
}

/// Reads the levels every pass agrees on: level by level from the first,
/// so an L1 dTLB that every pass reads alike stands when the L2 does not.
pub fn conclude(r: &mut TlbPageResult, ghz: f64) {
    let (levels, beyond, notes) = read(&r.points, r.page_bytes, ghz);
    r.readings = pass_readings(&r.points, r.page_bytes);
    let agreed = agreed_levels(&r.readings);
    // The median curve's level k stands for the passes' only when it lies
    // among them (within the same ratio).
    let kept = levels
        .iter()
        .take(agreed)
        .enumerate()
        .take_while(|(k, l)| {
            let lo = r.readings.iter().map(|p| p[*k]).min().unwrap_or(0) as f64;
            let hi = r.readings.iter().map(|p| p[*k]).max().unwrap_or(0) as f64;
            (l.entries as f64) * AGREE_RATIO > lo && (l.entries as f64) < hi * AGREE_RATIO
        })
        .count();
    r.agree = kept > 0 && kept == levels.len() && readings_agree(&r.readings);
    if r.agree {
        r.levels = levels;
        r.beyond_all_ns = beyond;
        r.notes.extend(notes);
        return;
    }
    r.levels = levels.into_iter().take(kept).collect();
    let by_level = |k: usize| -> Vec<String> {
        r.readings
            .iter()
            .map(|p| p.get(k).map_or("none".into(), u64::to_string))
            .collect()
    };
    if kept == 0 {
        r.notes.push(format!(
            "inconclusive: the {} passes read TLB entries {:?} (by level); no level is reported",
            r.readings.len(),
            r.readings
        ));
    } else {
        r.notes.push(format!(
            "the {} passes agree on the first {kept} level(s) only; the next level is inconclusive: they read {} entries",
            r.readings.len(),
            by_level(kept).join(", ")
        ));
    }
}

/// How many levels, from the first, every pass reads with entries within
/// [`AGREE_RATIO`] of each other.
pub fn agreed_levels(readings: &[Vec<u64>]) -> usize {
    let Some(fewest) = readings.iter().map(Vec::len).min() else {
        return 0;
    };
    (0..fewest)
        .take_while(|&k| {
            let lo = readings.iter().map(|r| r[k]).min().unwrap_or(0).max(1);
            let hi = readings.iter().map(|r| r[k]).max().unwrap_or(0);
            (hi as f64) < lo as f64 * AGREE_RATIO
        })
        .count()
}

/// Pass `pass`'s chain through `pages` pages, one line each.
fn spread_point(template: &Point, plan: &PagePlan, pages: u64, pass: u32) -> Point {
    Point {
        size: pages * plan.page_bytes,
        pattern: Pattern::Random,
        line: plan.page_bytes,
        skew: LINE,
        pages: plan.request,
        seed: template.seed.wrapping_add(u64::from(pass) * PASS_SEED),
        ..template.clone()
    }
}

/// The first pass at one page count: N lines one a page (ns), then the
/// same N lines packed, with the spread buffer's backing.
fn measure_first(
    engine: &mut Engine,
    template: &Point,
    plan: &PagePlan,
    pages: u64,
) -> Result<(
    f64,
    crate::engine::Measurement,
    crate::platform::PageBacking,
)> {
    let m = engine.measure(&spread_point(template, plan, pages, 0))?;
    let packed = engine
        .measure(&Point {
            size: (pages * LINE).max(2 * LINE),
            pattern: Pattern::Random,
            line: LINE,
            pages: plan.request,
            ..template.clone()
        })
        .context("the same lines packed")?;
    Ok((m.ns_per_load.median, packed, m.page_backing))
}

/// A page size's result before its points, with the CPUID claims for it.
fn empty_result(page_bytes: u64, claims: &[TlbClaim]) -> TlbPageResult {
    TlbPageResult {
        page_bytes,
        pages_obtained: String::new(),
        points: Vec::new(),
        levels: Vec::new(),
        beyond_all_ns: None,
        cpuid: claims
            .iter()
            .filter(|c| c.page_bytes.contains(&page_bytes))
            .cloned()
            .collect(),
        notes: Vec::new(),
        readings: Vec::new(),
        agree: false,
    }
}

#[cfg(test)]
#[path = "tlb_tests.rs"]
mod tests;
