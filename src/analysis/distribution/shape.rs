//! The shape of a latency distribution: percentiles, a log-spaced
//! histogram, and its modes.

use serde::{Deserialize, Serialize};

use super::Timings;

/// Latency percentiles, ns per load (nearest rank).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    #[serde(rename = "p99.9")]
    pub p99_9: f64,
    /// 99.99th percentile.
    #[serde(rename = "p99.99")]
    pub p99_99: f64,
}

/// One histogram bin: loads whose latency lies in `[low_ns, high_ns)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bin {
    /// Lower edge, ns.
    pub low_ns: f64,
    /// Upper edge, ns.
    pub high_ns: f64,
    /// Timings in the bin.
    pub count: u64,
}

/// A peak of the distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Mode {
    /// Where the peak is, ns per load.
    pub ns: f64,
    /// Share of the loads between this peak's valleys (0 to 1).
    pub share: f64,
}

/// Histogram bins per factor of two (each 9% wide): a choice of what is
/// printed, no verdict rests on it.
pub const BINS_PER_OCTAVE: f64 = 8.0;

/// Finer bins per factor of two for finding modes (then smoothed): 2.2%
/// each, a choice finer than the smoothing so the kernel, not the bins,
/// sets what two modes are told apart at.
const MODE_BINS_PER_OCTAVE: f64 = 32.0;

/// The smoothing kernel's width for modes, in fine bins (sigma about 7%).
/// A choice of resolution: two latencies closer than about 15% (two
/// sigmas) merge into one mode. The levels a load can be served from
/// differ by more than that (an L2 hit is 3x an L1 hit, DRAM 3-10x a last
/// level hit, a refresh stall 2x a DRAM load), while one level's own spread
/// (TLB hits and misses, a DRAM row hit or conflict) is about that wide.
const MODE_SMOOTHING_BINS: f64 = 3.0;

/// The kernel reaches this many sigmas either side: a Gaussian holds all
/// but 0.27% of its weight within 3 sigma.
const KERNEL_SIGMAS: f64 = 3.0;

/// A mode holds at least this share of the loads: a choice of what is
/// worth naming; a timeline of 10^5 timings gives a share of 1% a counting
/// error (Poisson, 1/sqrt 1000) of 3%, so a mode this small is real, just
/// minor.
pub const MIN_MODE_SHARE: f64 = 0.01;

/// Two peaks stay apart only if the valley between them is below this
/// fraction of the lower peak. Fitted, a rule to rethink: a smoothed
/// density of counts in the thousands wobbles by a few percent (Poisson),
/// so a 10% dip is more than noise there; the rule does not scale with the
/// counts the peaks hold, which a timeline of a few hundred slow loads has.
const VALLEY_FRACTION: f64 = 0.9;

/// The `q` quantile of `sorted` (timer ticks, ascending, not empty), ns
/// per load: the timing at rank ceil(q x n).
pub fn percentile(sorted: &[u32], t: &Timings, q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    t.load_ns(sorted[rank - 1])
}

/// Percentiles of `sorted` (timer ticks, ascending), ns per load.
pub fn percentiles(sorted: &[u32], t: &Timings) -> Percentiles {
    let at = |q: f64| percentile(sorted, t, q);
    Percentiles {
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        p99_9: at(0.999),
        p99_99: at(0.9999),
    }
}

/// Counts of `sorted` in log-spaced bins `per_octave` to a factor of two,
/// aligned on powers of two: (index of the first bin, counts).
fn log_counts(sorted: &[u32], t: &Timings, per_octave: f64) -> (i64, Vec<u64>) {
    let index = |ns: f64| (ns.log2() * per_octave).floor() as i64;
    let first = index(t.load_ns(sorted[0]));
    let last = index(t.load_ns(sorted[sorted.len() - 1]));
    let mut counts = vec![0u64; (last - first + 1) as usize];
    for &ticks in sorted {
        let k = (index(t.load_ns(ticks)) - first).clamp(0, last - first) as usize;
        counts[k] += 1;
    }
    (first, counts)
}

fn edge(index: i64, per_octave: f64) -> f64 {
    (index as f64 / per_octave).exp2()
}

/// The histogram of `sorted` (ascending ticks) in log-spaced bins, eight to
/// a factor of two, from the first occupied bin to the last.
pub fn histogram(sorted: &[u32], t: &Timings) -> Vec<Bin> {
    if sorted.is_empty() {
        return Vec::new();
    }
    let (first, counts) = log_counts(sorted, t, BINS_PER_OCTAVE);
    counts
        .iter()
        .enumerate()
        .map(|(k, &count)| {
            let index = first + k as i64;
            Bin {
                low_ns: edge(index, BINS_PER_OCTAVE),
                high_ns: edge(index + 1, BINS_PER_OCTAVE),
                count,
            }
        })
        .collect()
}

/// The modes of `sorted` (ascending ticks): peaks of the density in log
/// scale, smoothed over about 7%, merged where the valley between two is
/// shallow, each with the share of loads between its valleys; those under
/// [`MIN_MODE_SHARE`] are left out.
pub fn modes(sorted: &[u32], t: &Timings) -> Vec<Mode> {
    if sorted.is_empty() {
        return Vec::new();
    }
    let (first, counts) = log_counts(sorted, t, MODE_BINS_PER_OCTAVE);
    let density = smooth(&counts, MODE_SMOOTHING_BINS);
    let mut peaks: Vec<usize> = (0..density.len())
        .filter(|&k| {
            let left = k == 0 || density[k - 1] < density[k];
            let right = k + 1 == density.len() || density[k + 1] <= density[k];
            left && right && density[k] > 0.0
        })
        .collect();
    // Merge the shallowest pair until every valley is deep enough.
    loop {
        let shallowest = peaks
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                let valley = density[w[0]..=w[1]]
                    .iter()
                    .copied()
                    .fold(f64::INFINITY, f64::min);
                (i, valley / density[w[0]].min(density[w[1]]))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match shallowest {
            Some((i, depth)) if depth >= VALLEY_FRACTION => {
                let drop = if density[peaks[i]] < density[peaks[i + 1]] {
                    i
                } else {
                    i + 1
                };
                peaks.remove(drop);
            }
            _ => break,
        }
    }
    // Each peak owns the loads between the valleys on either side.
    let total = sorted.len() as f64;
    let mut bounds = vec![0usize];
    for w in peaks.windows(2) {
        let valley = (w[0]..=w[1])
            .min_by(|&a, &b| density[a].total_cmp(&density[b]))
            .expect("a non-empty range");
        bounds.push(valley);
    }
    bounds.push(counts.len());
    peaks
        .iter()
        .zip(bounds.windows(2))
        .map(|(&peak, range)| Mode {
            ns: edge(first * 2 + 2 * peak as i64 + 1, 2.0 * MODE_BINS_PER_OCTAVE),
            share: counts[range[0]..range[1]].iter().sum::<u64>() as f64 / total,
        })
        .filter(|m| m.share >= MIN_MODE_SHARE)
        .collect()
}

/// `counts` smoothed with a Gaussian of `sigma` bins.
fn smooth(counts: &[u64], sigma: f64) -> Vec<f64> {
    let reach = (KERNEL_SIGMAS * sigma).ceil() as i64;
    let weights: Vec<f64> = (-reach..=reach)
        .map(|d| (-0.5 * (d as f64 / sigma).powi(2)).exp())
        .collect();
    (0..counts.len() as i64)
        .map(|k| {
            (-reach..=reach)
                .filter(|d| (0..counts.len() as i64).contains(&(k + d)))
                .map(|d| counts[(k + d) as usize] as f64 * weights[(d + reach) as usize])
                .sum()
        })
        .collect()
}
