//! Line size from a spacing sweep, as pure estimation; `commands::linesize` measures.
//!
//! Loads `s` bytes apart over a buffer beyond L1 touch a new line every
//! `line / s` loads while `s` is below the line, and on every load once it is
//! not: the latency grows with `s` up to the line size, then stops growing.
//! The estimate fits `ns(s) = a + b * min(s, L) / L` for each candidate `L`
//! among the spacings (all but the largest, which must show the flat part)
//! and keeps the `L` with the least squared error.
//!
//! Two orders are measured: seed 004's stride chain (loads in address order,
//! which prefetchers follow: they hide the misses up to their reach, so its
//! knee may be the prefetcher's, e.g. 128 bytes for adjacent-line prefetch),
//! and a page-random chain (the loads of each 4 KiB page in random order, so
//! each line's first load still misses): the estimate comes from the latter.

use serde::{Deserialize, Serialize};

/// The latency must grow at least this much (relative) for an estimate.
pub const MIN_GROWTH: f64 = 0.2;

/// One measured stride.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StridePoint {
    /// Stride, bytes.
    pub stride: u64,
    /// Median latency per load, ns.
    pub ns: f64,
}

/// The line size read from a stride sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineEstimate {
    /// Estimated line size in bytes; `None` when the latency does not grow.
    pub line_bytes: Option<u64>,
    /// Latency growth from the smallest stride to the plateau, relative.
    pub growth: f64,
    /// What to keep in mind.
    pub notes: Vec<String>,
}

/// Least-squares error of `ns = a + b * min(s, L) / L`.
fn fit(points: &[StridePoint], l: u64) -> f64 {
    let f: Vec<f64> = points
        .iter()
        .map(|p| p.stride.min(l) as f64 / l as f64)
        .collect();
    let y: Vec<f64> = points.iter().map(|p| p.ns).collect();
    let n = f.len() as f64;
    let (mf, my) = (f.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sff: f64 = f.iter().map(|v| (v - mf).powi(2)).sum();
    let sfy: f64 = f.iter().zip(&y).map(|(a, b)| (a - mf) * (b - my)).sum();
    let b = if sff > 0.0 { sfy / sff } else { 0.0 };
    let a = my - b * mf;
    f.iter()
        .zip(&y)
        .map(|(fv, yv)| (yv - a - b * fv).powi(2))
        .sum()
}

/// Estimates the line size from latencies at several strides.
pub fn estimate(points: &[StridePoint]) -> LineEstimate {
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.stride);
    sorted.dedup_by_key(|p| p.stride);
    let mut notes = Vec::new();
    if sorted.len() < 3 {
        notes.push("at least three strides are needed".into());
        return LineEstimate {
            line_bytes: None,
            growth: 0.0,
            notes,
        };
    }
    let candidates = &sorted[1..sorted.len() - 1];
    let best = candidates
        .iter()
        .map(|c| (c.stride, fit(&sorted, c.stride)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let (line, _) = best.expect("at least one candidate");
    let at_line = sorted
        .iter()
        .find(|p| p.stride == line)
        .map_or(0.0, |p| p.ns);
    let growth = at_line / sorted[0].ns - 1.0;
    if growth < MIN_GROWTH {
        notes.push(format!(
            "the latency grows only {:.0}% with the spacing: prefetchers (or a buffer that fits a faster level) hide the misses; try --prefetchers off or a larger -n/--size",
            growth * 100.0
        ));
        return LineEstimate {
            line_bytes: None,
            growth,
            notes,
        };
    }
    let last = sorted[sorted.len() - 1];
    if last.ns > at_line * 1.15 {
        notes.push(format!(
            "the latency still grows beyond {line} bytes ({:.2} -> {:.2} ns at {} bytes): the line may be larger, or a prefetcher fetches pairs of lines",
            at_line, last.ns, last.stride
        ));
    }
    LineEstimate {
        line_bytes: Some(line),
        growth,
        notes,
    }
}

/// One distance of the dependent-pair measurement: slot X then X + d.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairPoint {
    /// Distance from the first load to the second, bytes.
    pub distance: u64,
    /// Mean latency of the two loads, ns.
    pub pair_ns: f64,
    /// The second load's latency: twice the mean less a lone miss, ns
    /// (from `memlat linesize`'s rounds: the in-line second load's median
    /// plus this distance's median rise over it, round by round).
    pub second_ns: f64,
    /// How far the repeats leave `second_ns` uncertain, ns. From
    /// `memlat linesize`: the range over the rounds of this distance's rise
    /// over the in-line second load of the same round (0 for the in-line
    /// one itself); from one measurement, twice the pair's repeat range
    /// (max - min) plus the lone load's.
    #[serde(default)]
    pub spread_ns: f64,
}

impl PairPoint {
    /// A pair measured at `pair_ns` per load where a lone load takes `miss_ns`.
    pub fn of(distance: u64, pair_ns: f64, miss_ns: f64) -> PairPoint {
        PairPoint {
            distance,
            pair_ns,
            second_ns: 2.0 * pair_ns - miss_ns,
            spread_ns: 0.0,
        }
    }

    /// The same with the repeat ranges (max - min, ns) of the pair and of the lone load.
    pub fn with_spread(self, pair_range_ns: f64, lone_range_ns: f64) -> PairPoint {
        PairPoint {
            spread_ns: 2.0 * pair_range_ns + lone_range_ns,
            ..self
        }
    }
}

/// What an L1 hit costs, measured in the same pass as the pairs: a random
/// chain that fits the L1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HitReference {
    /// Median ns per load.
    pub ns: f64,
    /// Its repeats' range (max - min), ns.
    pub spread_ns: f64,
}

/// One distance of the line-tag test: loads of X + d after X's line was
/// dropped (flushed or evicted), each round's ns per load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TagPoint {
    /// Distance from X, bytes.
    pub distance: u64,
    /// The median over the rounds, ns per load.
    pub ns: f64,
    /// The rounds' spread (their interquartile range), ns.
    pub spread_ns: f64,
}

/// The two references of the line-tag test, measured in the same rounds by
/// the same loop: X itself after dropping its line (a certain miss), and X
/// after dropping a line elsewhere in its slot (a certain hit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TagReferences {
    /// X after its own line was dropped: median ns per load.
    pub dropped_ns: f64,
    /// Its rounds' spread, ns.
    pub dropped_spread_ns: f64,
    /// X after another line was dropped: median ns per load.
    pub kept_ns: f64,
    /// Its rounds' spread, ns.
    pub kept_spread_ns: f64,
}

impl TagReferences {
    /// Whether a load of `ns` went with X's dropped line: it stands nearer
    /// the dropped reference than the kept one.
    pub fn shares_x_line(&self, ns: f64) -> bool {
        (ns - self.dropped_ns).abs() < (ns - self.kept_ns).abs()
    }
}

/// The line from the tag test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TagReading {
    /// The smallest distance whose load survived dropping X's line, when
    /// every smaller one did not: X + d shares X's tag exactly when d is
    /// below the line.
    pub line_bytes: Option<u64>,
    /// What to keep in mind.
    pub notes: Vec<String>,
}

/// Reads the line from the tag test. A line is what the cache tags, evicts
/// and flushes as one: a load of X + d after X's line was dropped is served
/// like X itself when it shares X's line, like a kept line when it does not.
/// Each distance goes with the reference it is nearer to; both references
/// are measured in the same rounds, so no threshold of any unit is assumed.
/// The references must stand apart by more than their own spreads, or the
/// drop did not take (an emulator without caches, a flush the hypervisor
/// ignores) and nothing is read.
pub fn read_tags(points: &[TagPoint], refs: TagReferences) -> TagReading {
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.distance);
    let mut notes = Vec::new();
    let contrast = refs.dropped_ns - refs.kept_ns;
    if contrast <= refs.dropped_spread_ns + refs.kept_spread_ns {
        notes.push(format!(
            "a dropped line ({:.2} ns, spread {:.2}) is not clearly slower than a kept one ({:.2} ns, spread {:.2}): the drop did not take here, so the tags read no line",
            refs.dropped_ns, refs.dropped_spread_ns, refs.kept_ns, refs.kept_spread_ns
        ));
        return TagReading {
            line_bytes: None,
            notes,
        };
    }
    let shares = |p: &TagPoint| refs.shares_x_line(p.ns);
    let Some(first_kept) = sorted.iter().position(|p| !shares(p)) else {
        notes.push(format!(
            "every load up to {} bytes from X was dropped with X's line: the line is larger than that",
            sorted.last().map_or(0, |p| p.distance)
        ));
        return TagReading {
            line_bytes: None,
            notes,
        };
    };
    if first_kept == 0 {
        notes.push(format!(
            "a load {} bytes from X survived dropping X's line ({:.2} ns, a kept line {:.2}): no line is that short, so the drop missed X here",
            sorted[0].distance, sorted[0].ns, refs.kept_ns
        ));
        return TagReading {
            line_bytes: None,
            notes,
        };
    }
    if let Some(again) = sorted[first_kept..].iter().find(|p| shares(p)) {
        notes.push(format!(
            "a load {} bytes from X survived dropping X's line but one {} bytes away did not ({:.2} ns): a line holds every byte up to its end, so this pass is noise",
            sorted[first_kept].distance, again.distance, again.ns
        ));
        return TagReading {
            line_bytes: None,
            notes,
        };
    }
    TagReading {
        line_bytes: Some(sorted[first_kept].distance),
        notes,
    }
}

/// How a line arrives, read from the dependent pairs once the tags have
/// given the line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FillReading {
    /// The part of a line that arrives first: the smallest distance within
    /// the line whose second load waited longer than the in-line one; the
    /// line itself when the whole line arrives at once.
    pub chunk_bytes: Option<u64>,
    /// How much later the rest of the line arrives than the first chunk, ns
    /// (the median rise of the second loads past the chunk within the line).
    pub rest_after_ns: Option<f64>,
    /// The next line's second load cost less than a lone load: it arrived
    /// with (or was fetched with) this one.
    pub next_line_with_miss: Option<bool>,
    /// The reading in words, for text and the report.
    pub sentence: String,
    /// What to keep in mind.
    pub notes: Vec<String>,
}

/// How far a second load may rise above the in-line one (8 bytes from X)
/// and still count as the same arrival: the pass's noise, the median over
/// the distances of their rises' spread (one distance racing a prefetch can
/// spread 1.5-5 ns while the pass is quiet), and at least one core cycle
/// (`cycle_ns`, measured): nothing the core sees can arrive less than a
/// cycle apart.
pub fn rise_allowed(points: &[PairPoint], cycle_ns: f64) -> f64 {
    let spreads: Vec<f64> = points.iter().skip(1).map(|p| p.spread_ns).collect();
    let noise = if spreads.is_empty() {
        0.0
    } else {
        crate::analysis::stats::median(&spreads)
    };
    noise.max(cycle_ns)
}

/// Reads how a line of `line` bytes arrives from the dependent pairs X,
/// X + d (the second load is timed as twice the pair less a lone load of
/// `lone_ns`): within the line, the first distance whose second load rose
/// above the in-line one by more than [`rise_allowed`] is where the first
/// chunk ends (Emerald Rapids' L3: 32-byte halves, the asked-for half
/// first, the other 2.4 ns later); at the line, a second load nearer the
/// in-line one than a lone load arrived with the miss (Zen 5: the next
/// line lands 0.8 ns after, against 12 ns for a trip of its own). A step below the line is never a line size.
pub fn read_fill(points: &[PairPoint], line: u64, lone_ns: f64, cycle_ns: f64) -> FillReading {
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.distance);
    let mut notes = Vec::new();
    let Some(first) = sorted.first().copied() else {
        return FillReading {
            chunk_bytes: None,
            rest_after_ns: None,
            next_line_with_miss: None,
            sentence: "no pairs measured".into(),
            notes,
        };
    };
    let allowed = rise_allowed(&sorted, cycle_ns);
    let within: Vec<&PairPoint> = sorted.iter().filter(|p| p.distance < line).collect();
    let late: Vec<&PairPoint> = within
        .iter()
        .copied()
        .filter(|p| p.second_ns - first.second_ns > allowed)
        .collect();
    // A chunk ends where the second loads rise and stay risen to the line's end.
    let chunk = late.first().map(|p| p.distance).filter(|&c| {
        within
            .iter()
            .filter(|p| p.distance >= c)
            .all(|p| p.second_ns - first.second_ns > allowed)
    });
    if !late.is_empty() && chunk.is_none() {
        notes.push(format!(
            "second loads within the line rose above the in-line one at some distances but not at all beyond: noise within {allowed:.2} ns"
        ));
    }
    let rest_after_ns = chunk.map(|c| {
        let rises: Vec<f64> = within
            .iter()
            .filter(|p| p.distance >= c)
            .map(|p| p.second_ns - first.second_ns)
            .collect();
        crate::analysis::stats::median(&rises)
    });
    let at_line = sorted.iter().find(|p| p.distance == line);
    // The next line came with the miss when its second load stands nearer
    // the in-line one than a lone load: it waited less than half a trip.
    let next_line_with_miss =
        at_line.map(|p| p.second_ns - first.second_ns < lone_ns - p.second_ns);
    let mut sentence = match (chunk, rest_after_ns) {
        (Some(c), Some(late)) => format!(
            "fills arrive in {c}-byte chunks, the asked-for chunk first; the rest of the line {late:.2} ns later"
        ),
        _ if !late.is_empty() => "fill order unclear (noisy second loads within the line)".into(),
        _ => format!("the whole {line}-byte line arrives at once"),
    };
    match (next_line_with_miss, at_line) {
        (Some(true), Some(p)) => sentence.push_str(&format!(
            "; the next line arrives with this one ({:.2} ns after, a lone load {lone_ns:.1})",
            p.second_ns
        )),
        (Some(false), _) => sentence.push_str("; the next line is a miss of its own"),
        _ => {}
    }
    FillReading {
        chunk_bytes: chunk.or(if late.is_empty() { Some(line) } else { None }),
        rest_after_ns,
        next_line_with_miss,
        sentence,
        notes,
    }
}

/// Checks the line the tags gave against the page-random spacing curve
/// (`points`, and `spacing_knee` where it stops growing): a miss brings in
/// at least one whole line, so with lines of L bytes the latency at spacing
/// L (every load a new line) stands above that at any smaller spacing (some
/// loads share a line). A knee below the line whose latency the line's does
/// not exceed disagrees with it, and is said so; the line stays the tags'
/// (what the cache tags as one is the definition, the spacing curve an
/// inference that a busy neighbour moves). Returns the line and any
/// disagreement.
pub fn cross_check(
    line: Option<u64>,
    points: &[StridePoint],
    spacing_knee: Option<u64>,
) -> (Option<u64>, Option<String>) {
    let ns = |s: u64| points.iter().find(|p| p.stride == s).map(|p| p.ns);
    match (line, spacing_knee) {
        (Some(l), Some(k)) if k < l => match (ns(k), ns(l)) {
            (Some(at_k), Some(at_l)) if at_l <= at_k => (
                Some(l),
                Some(format!(
                    "the tags read {l}-byte lines, but page-random loads {l} bytes apart ({at_l:.2} ns) cost no more than {k} bytes apart ({at_k:.2} ns), though a miss brings in at least a whole line: the spacing curve disagrees (noise, or a sectored fill), the line stays the tags'"
                )),
            ),
            _ => (Some(l), None),
        },
        (l, _) => (l, None),
    }
}

/// The unit a miss brings in: where the page-random spacing curve stops
/// growing (`spacing_knee`), when that is beyond the line: below it, lines
/// arrive with their neighbours (adjacent-line or pair prefetch), so a new
/// line a load costs less than one a fetch unit apart.
pub fn fetch_bytes(line: Option<u64>, spacing_knee: Option<u64>) -> Option<u64> {
    match (line, spacing_knee) {
        (Some(l), Some(k)) => Some(l.max(k)),
        (l, k) => l.or(k),
    }
}

#[cfg(test)]
mod tests;
