//! Periodic stalls: whether the slow loads recur with a period, such as
//! DRAM refresh (every tREFI, 7.8 or 3.9 us, 1.95 us with fine-granularity
//! refresh), found from the spectrum of the slow loads' timeline.
//!
//! The timeline is cut into segments of [`SEGMENT_BINS`] bins of
//! [`BIN_NS`]; each segment's slow-load counts are windowed (Hann) and
//! transformed, and the power is averaged over segments (Welch's method),
//! so noise averages down while a period stays in one bin. A peak's
//! strength is its power over the median power around it (within 20% in
//! frequency): the timeline of bursts, interrupts and a busy neighbour is
//! red (more power at low frequencies), and a peak must stand out from
//! what is near it, not from the whole band.

use serde::{Deserialize, Serialize};

use super::Timings;
use super::comb::strongest_period;

/// A load is slow when it takes more than this times the median. Fitted
/// between two facts, a rule to rethink: a DRAM load's own spread (an open
/// row against a row conflict, tRP + tRCD of about 28 ns on 80-170 ns)
/// stays under 1.4x its median, while a load that meets a refresh waits up
/// to tRFC (350-550 ns, see [`MAX_MEMORY_STALL_NS`]), over 2x; 1.5 lies
/// between, and at cache sizes any stall a tick causes is far above it.
/// A line from the timeline's own spread alone fails on the recorded
/// Golden Cove timelines (a timer read with a slower mode of its own puts
/// half the L1 timings over it, and a tick's comb drowns), so that line
/// (`quiet_line`) is looked at second, where this one finds no period.
pub const SLOW_FACTOR: f64 = 1.5;

/// The shortest time a refresh holds a rank, ns: tRFC of the smallest dies
/// still met, 90 ns for a 512 Mb DDR3 die (110 ns at 1 Gb; 280-550 ns for
/// the 8-32 Gb dies of LPDDR4, DDR4 and DDR5; JEDEC figures as printed in
/// DDR3 datasheets, Hynix HMT351R7AFR8A). Where the first line asks a
/// timing to be lifted by more than this, a refresh may not lift it that
/// far, and the quiet spread's line is looked at too ([`periodic_stalls`]).
pub const SHORTEST_REFRESH_HOLD_NS: f64 = 90.0;

/// Width of a timeline bin, ns. A choice of resolution: the shortest
/// refresh periods (975 ns on the Zen 5 guest's DDR5, 1.95 us for DDR4's
/// fine-granularity 4x mode) span 10-20 bins; finer bins would cost a
/// longer FFT for the same 1.6 ms segment.
pub const BIN_NS: f64 = 100.0;

/// Bins per segment (1.6 ms: a hundred periods of 16 us). A choice: the
/// frequency step is 1 / 1.6 ms = 610 Hz, so tREFI's 128 kHz (7.8 us) is
/// read to 0.5%; longer segments resolve finer but leave fewer segments
/// to average in a timeline of a fraction of a second.
pub const SEGMENT_BINS: usize = 1 << 14;

/// Fewest segments averaged before a period is looked for. Welch's
/// estimate over N segments has a relative variance of 1/N per bin (its
/// power is chi-squared with 2N degrees of freedom): at 4 a white-noise
/// bin reaches [`MIN_STRENGTH`] times its median once in 10^9, at 1 once
/// in 256, which over the band's thousands of bins is a false peak in
/// every spectrum.
pub const MIN_SEGMENTS: usize = 4;

/// Fewest slow loads before a period is looked for. A choice, not
/// derived: below 50 events (a Poisson counting error over 14%, 1/sqrt
/// 50) a timeline is taken as too sparse to carry a period.
pub const MIN_SLOW: usize = 50;

/// The longest period looked for, ns. JEDEC's longest refresh interval,
/// tREFI, is 7.8 us (DDR3 and DDR4 at normal temperature; DDR5's is
/// 3.9 us); 20 us covers it
/// with room for a controller that postpones refreshes (DDR3 and DDR4 let
/// it postpone up to 8). Longer periods are the host's ticks, reported as
/// `longer_period_ns`.
pub const MAX_PERIOD_NS: f64 = 20_000.0;

/// A period must fit this many times in a segment to be looked for (the
/// band's low end and the lowest fundamental): a choice; below it the
/// Hann window's leakage of the segment's mean and slow drift (the lowest
/// few bins) and the red noise of bursts are what the bins hold.
pub(super) const MIN_CYCLES_PER_SEGMENT: usize = 8;

/// The shortest period looked for, in bins: the spline that spreads each
/// slow timing over four bins (see `welch`) passes the band up to a
/// quarter of the bin rate with a gain that falls smoothly (sinc^4, 0.66
/// at a quarter), so a strength, a ratio to the power near it, is not
/// bent by it.
const MIN_PERIOD_BINS: f64 = 4.0;

/// Fewest frequency bins in the band before a period is looked for: a
/// choice; a narrower band (long timings lower its top, see
/// [`MIN_PERIOD_TIMINGS`]) holds too few bins for a peak and a comb.
const MIN_BAND_BINS: usize = 16;

/// The shortest period looked for, in median timings: the timeline samples
/// the stalls once a timing, so a period must span 2 timings to be seen at
/// all (Nyquist) and 3 to show as a comb. Zen 5's DDR5 refresh (975 ns) is
/// 6-7 loads of 150 ns; a band stopping at 8 timings missed it.
pub const MIN_PERIOD_TIMINGS: f64 = 3.0;

/// A peak is a period when its power is at least this many times the
/// median power around it. Fitted, a rule to rethink: for white noise
/// averaged over [`MIN_SEGMENTS`] segments the strongest of the band's (up
/// to 4096) bins reads about 4 (5.5 with a false period in one spectrum of a
/// hundred; at 8 segments 2.8 and 3.7), so 8 keeps a margin of about 2 for
/// a timeline that is not white: bursts and ticks make it red and lumpy.
/// Tied to the run's own segment count (that white-noise figure, 1.3 to 3
/// on the 12-233 segments of tests/fixtures/timelines) it passes those
/// timelines, but a live 16 KiB run on a busy 2-vCPU guest then read a
/// period of 662 ns at strength 2.1 (tests/distribution.rs), and
/// docs/distribution.md records a noise peak of 10.4 at L2 under this rule.
pub const MIN_STRENGTH: f64 = 8.0;

/// A periodic stall longer than this is the host's, not the memory's, ns.
/// A refresh blocks a rank for tRFC, 350 to 550 ns on DDR4 and DDR5 dies of
/// 8 to 32 Gb (JEDEC): a load arriving as one starts waits that long more.
/// A microsecond every 10 us is a hypervisor's tick or an interrupt; it
/// stalls L1 hits as much as DRAM loads (the Zen 5 guest at 16 KiB: 1.18 us).
pub const MAX_MEMORY_STALL_NS: f64 = 1000.0;

/// Points kept of the spectrum for plots.
const PLOT_POINTS: usize = 300;

/// Slow loads that recur with a period.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PeriodicStalls {
    /// The period, ns.
    pub period_ns: f64,
    /// Share of the loads that are slow (over the line the period was found
    /// at, `Spectrum::slow_threshold_ns`), the loads whose timeline carries
    /// the period.
    pub share_of_loads: f64,
    /// Time a slow load adds over the median load, ns (the slow loads'
    /// median less the median; for grouped loads, the whole stall).
    pub added_ns: f64,
    /// The peak's power over the median power within 20% of its frequency.
    pub strength: f64,
}

/// How the slow loads' spectrum was made, with a coarse copy of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spectrum {
    /// Loads slower than this were counted, ns per load.
    pub slow_threshold_ns: f64,
    /// Slow timings in the timeline.
    pub slow_timings: u64,
    /// Width of a timeline bin, ns.
    pub bin_ns: f64,
    /// Bins per segment.
    pub segment_bins: usize,
    /// Segments averaged.
    pub segments: usize,
    /// The frequencies searched, Hz: from a period of 20 us (or 8 per
    /// segment) to 3 median timings (or 4 bins).
    pub band_hz: [f64; 2],
    /// A period longer than the band whose harmonics fill it, ns (null
    /// when none): stalls that recur, but slower than a period looked for.
    pub longer_period_ns: Option<f64>,
    /// A period in the band whose stalls last longer than any DRAM refresh
    /// can hold a load ([`MAX_MEMORY_STALL_NS`]), ns; null when none: the
    /// host's (a hypervisor tick, an interrupt), not `periodic_stalls`.
    #[serde(default)]
    pub host_period_ns: Option<f64>,
    /// Pairs [Hz, power over the band's median], the highest of each of a
    /// few hundred log-spaced slices of the band (empty when too short).
    pub points: Vec<[f64; 2]>,
}

/// The slow loads' spectrum and the period in it, if any; `p50_ns` is the
/// median load, `median_ticks` the median timing's delta, `low_ns` the
/// quiet timings' low end (the 1st percentile of the unfolded loads).
///
/// Slow is read at two lines. The first is [`SLOW_FACTOR`] times the
/// median. Where it finds no period and asks more of a stall than a
/// refresh may hold a rank ([`SHORTEST_REFRESH_HOLD_NS`]), the second is
/// the quiet spread's own reach (`quiet_line`): a timer too coarse for
/// one load times loads in groups, and a refresh stall then lifts a group
/// by less than half (a 24 MHz counter timing 4 loads of 130 ns: 280 ns at
/// most on 520), under the first line. A comb found at the first line is
/// carried to the second, so a tick's harmonics stay its own there. (At
/// cache sizes the first line asks a few ns, and a second look would only
/// be a second chance for noise to pass for a period.)
pub fn periodic_stalls(
    t: &Timings,
    p50_ns: f64,
    median_ticks: u32,
    low_ns: f64,
) -> (Option<PeriodicStalls>, Option<Spectrum>) {
    let (stalls, spectrum, combs) = stalls_over(t, SLOW_FACTOR * p50_ns, p50_ns, median_ticks, &[]);
    let host = |s: &Option<Spectrum>| s.as_ref().is_some_and(|s| s.host_period_ns.is_some());
    if stalls.is_some() || host(&spectrum) {
        return (stalls, spectrum);
    }
    // Only where a refresh may hold a group less than the first line asks.
    let margin = (SLOW_FACTOR - 1.0) * p50_ns * f64::from(t.loads_per_timing);
    let line = quiet_line(t, p50_ns, low_ns);
    if margin <= SHORTEST_REFRESH_HOLD_NS || line >= SLOW_FACTOR * p50_ns {
        return (stalls, spectrum);
    }
    let (quiet_stalls, quiet_spectrum, _) = stalls_over(t, line, p50_ns, median_ticks, &combs);
    if quiet_stalls.is_some() || host(&quiet_spectrum) {
        (quiet_stalls, quiet_spectrum)
    } else {
        (stalls, spectrum)
    }
}

/// The line above which a timing is slow by the quiet timings' own spread,
/// ns a load: the median plus the reach of the timings below it (the median
/// less `low_ns`), and at least one timer step. A stall only adds time, so
/// the timings below the median are quiet ones and show how far the quiet
/// spread reaches. (The side above is not its mirror: a timer read can
/// have a slower mode of its own, as on the Golden Cove guest, 4-12 ticks
/// over the median; so this line comes second, see [`periodic_stalls`].)
fn quiet_line(t: &Timings, p50_ns: f64, low_ns: f64) -> f64 {
    let step = t.step_ns() / f64::from(t.loads_per_timing);
    p50_ns + (p50_ns - low_ns).max(step)
}

/// [`periodic_stalls`] with slow loads over `threshold` ns, the teeth of
/// `inherited` combs (fundamentals, in frequency bins) left out; with the
/// combs found, `inherited` among them.
fn stalls_over(
    t: &Timings,
    threshold: f64,
    p50_ns: f64,
    median_ticks: u32,
    inherited: &[f64],
) -> (Option<PeriodicStalls>, Option<Spectrum>, Vec<f64>) {
    let slow: Vec<bool> = t.ticks.iter().map(|&d| t.load_ns(d) > threshold).collect();
    let slow_timings = slow.iter().filter(|&&s| s).count();
    let total_ns: f64 = t.ticks.iter().map(|&d| t.elapsed_ns(d)).sum();
    let segment_ns = SEGMENT_BINS as f64 * BIN_NS;
    let segments = (total_ns / segment_ns) as usize;
    let df = 1e9 / segment_ns;
    let median_elapsed = t.elapsed_ns(median_ticks);
    let band_hz = [
        (1e9 / MAX_PERIOD_NS).max(MIN_CYCLES_PER_SEGMENT as f64 * df),
        (1e9 / (MIN_PERIOD_BINS * BIN_NS)).min(1e9 / (MIN_PERIOD_TIMINGS * median_elapsed)),
    ];
    let mut spectrum = Spectrum {
        slow_threshold_ns: threshold,
        slow_timings: slow_timings as u64,
        bin_ns: BIN_NS,
        segment_bins: SEGMENT_BINS,
        segments,
        band_hz,
        longer_period_ns: None,
        host_period_ns: None,
        points: Vec::new(),
    };
    let (k_lo, k_hi) = (
        (band_hz[0] / df).ceil() as usize,
        (band_hz[1] / df).floor() as usize,
    );
    if segments < MIN_SEGMENTS || k_hi < k_lo + MIN_BAND_BINS {
        return (None, Some(spectrum), inherited.to_vec());
    }
    let power = welch(t, &slow, segments);
    let band = &power[k_lo..=k_hi];
    let band_median = median(band.to_vec());
    spectrum.points = plot_points(band, k_lo, df, band_median);
    if slow_timings < MIN_SLOW || band_median <= 0.0 {
        return (None, Some(spectrum), inherited.to_vec());
    }
    // The rate the timer samples the timeline at, in frequency bins: its
    // step. (The bins sample it too, but the spline in `welch` filters
    // what would fold there; the timer's readings come folded.)
    let sampling = [1e9 / t.step_ns() / df];
    let (found, combs) = strongest_period(&power, k_lo, k_hi, &sampling, inherited);
    spectrum.longer_period_ns = combs.first().map(|f0| 1e9 / (f0 * df));
    let Some(found) = found else {
        return (None, Some(spectrum), combs);
    };
    let frequency = found.fundamental * df;
    let strength = found.strength;
    let mut slow_ns: Vec<f64> = t
        .ticks
        .iter()
        .zip(&slow)
        .filter(|(_, s)| **s)
        .map(|(&d, _)| t.load_ns(d))
        .collect();
    let slow_median = median(std::mem::take(&mut slow_ns));
    let stalls = PeriodicStalls {
        period_ns: 1e9 / frequency,
        share_of_loads: slow_timings as f64 / t.ticks.len() as f64,
        added_ns: (slow_median - p50_ns) * f64::from(t.loads_per_timing),
        strength,
    };
    if stalls.added_ns > MAX_MEMORY_STALL_NS {
        spectrum.host_period_ns = Some(stalls.period_ns);
        return (None, Some(spectrum), combs);
    }
    (Some(stalls), Some(spectrum), combs)
}

/// Power of the slow-load counts by frequency bin (0 to half the segment),
/// averaged over `segments` Hann-windowed segments.
///
/// A slow timing belongs where it ends, at the timer read after its loads,
/// and counts once, shared among the four bins around that instant by a
/// cubic B-spline (weights summing to one). Binning is sampling at
/// 1 / [`BIN_NS`], and stalls locked to a refresh end within a few ns make
/// a comb whose harmonics reach far above that rate: dropped whole into one
/// bin (a box, response sinc), they fold back into the band, and a 975 ns
/// period (9.75 bins) folds its 8th to 11th harmonics onto multiples of
/// 256 kHz, a comb 3.9 us apart that passes for a lower fundamental. The
/// spline is four such boxes convolved (response sinc^4, zero only at
/// multiples of the bin rate, 10 MHz): the 8th to 11th harmonics of 975 ns
/// (8.2-11.3 MHz) come in 100-1700x weaker in amplitude than from one box, while the gain over the
/// band (up to a quarter of the bin rate) is smooth, so no peak's strength,
/// a ratio to the power within 20% of it, changes. (Spreading a timing over
/// the whole time it took filters harder, but a stall of a microsecond
/// then has spectral zeros inside the band, and the lobes between them
/// pass for peaks: the Golden Cove guest's L1 timelines read a period.)
fn welch(t: &Timings, slow: &[bool], segments: usize) -> Vec<f64> {
    let window: Vec<f64> = (0..SEGMENT_BINS)
        .map(|j| {
            (std::f64::consts::PI * j as f64 / SEGMENT_BINS as f64)
                .sin()
                .powi(2)
        })
        .collect();
    let bins = segments * SEGMENT_BINS;
    let mut counts = vec![0.0f64; bins];
    let mut elapsed = 0.0;
    for (&d, &is_slow) in t.ticks.iter().zip(slow) {
        elapsed += t.elapsed_ns(d);
        if elapsed >= bins as f64 * BIN_NS {
            break;
        }
        if !is_slow {
            continue;
        }
        // Where it lies among the bins' centres: between `bin` and `bin + 1`.
        let at = elapsed / BIN_NS - 0.5;
        let bin = at.floor();
        let u = at - bin;
        let weights = [
            (1.0 - u).powi(3) / 6.0,
            (3.0 * u.powi(3) - 6.0 * u * u + 4.0) / 6.0,
            (-3.0 * u.powi(3) + 3.0 * u * u + 3.0 * u + 1.0) / 6.0,
            u.powi(3) / 6.0,
        ];
        for (j, w) in weights.into_iter().enumerate() {
            let b = bin as i64 - 1 + j as i64;
            if (0..bins as i64).contains(&b) {
                counts[b as usize] += w;
            }
        }
    }
    let fft = Fft::new(SEGMENT_BINS);
    let mut power = vec![0.0; SEGMENT_BINS / 2];
    let mut buffer = vec![[0.0f64; 2]; SEGMENT_BINS];
    for segment in counts.chunks_exact(SEGMENT_BINS) {
        let mean = segment.iter().sum::<f64>() / SEGMENT_BINS as f64;
        for ((b, c), &w) in buffer.iter_mut().zip(segment).zip(&window) {
            *b = [(*c - mean) * w, 0.0];
        }
        fft.transform(&mut buffer);
        for (p, b) in power.iter_mut().zip(&buffer) {
            *p += (b[0] * b[0] + b[1] * b[1]) / segments as f64;
        }
    }
    power
}

/// The band's power as a few hundred [Hz, power over the median] points:
/// the highest of each log-spaced slice, so peaks survive.
fn plot_points(band: &[f64], k_lo: usize, df: f64, median: f64) -> Vec<[f64; 2]> {
    if median <= 0.0 || band.is_empty() {
        return Vec::new();
    }
    let (f_lo, f_hi) = (k_lo as f64 * df, (k_lo + band.len() - 1) as f64 * df);
    let step = (f_hi / f_lo).ln() / PLOT_POINTS as f64;
    let mut points: Vec<[f64; 2]> = Vec::new();
    let mut slice = usize::MAX;
    for (j, &p) in band.iter().enumerate() {
        let f = (k_lo + j) as f64 * df;
        let s = if step > 0.0 {
            ((f / f_lo).ln() / step) as usize
        } else {
            0
        };
        if s != slice {
            points.push([f, p / median]);
            slice = s;
        } else if let Some(last) = points.last_mut()
            && p / median > last[1]
        {
            *last = [f, p / median];
        }
    }
    points
}

pub(super) fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let middle = values.len() / 2;
    *values.select_nth_unstable_by(middle, f64::total_cmp).1
}

/// A radix-2 fast Fourier transform of one power-of-two length.
pub(crate) struct Fft {
    /// exp(-2 pi i j / n) for j < n/2.
    twiddles: Vec<[f64; 2]>,
}

impl Fft {
    /// A transform of `n` points (a power of two).
    pub(crate) fn new(n: usize) -> Fft {
        assert!(n.is_power_of_two(), "the FFT takes a power of two");
        Fft {
            twiddles: (0..n / 2)
                .map(|j| {
                    let angle = -2.0 * std::f64::consts::PI * j as f64 / n as f64;
                    [angle.cos(), angle.sin()]
                })
                .collect(),
        }
    }

    /// Transforms `x` in place (the forward DFT, unscaled).
    pub(crate) fn transform(&self, x: &mut [[f64; 2]]) {
        let n = x.len();
        assert_eq!(n, 2 * self.twiddles.len(), "the FFT's length");
        let bits = n.trailing_zeros();
        for i in 0..n {
            let j = i.reverse_bits() >> (usize::BITS - bits);
            if i < j {
                x.swap(i, j);
            }
        }
        let mut len = 2;
        while len <= n {
            let stride = n / len;
            for start in (0..n).step_by(len) {
                for j in 0..len / 2 {
                    let w = self.twiddles[j * stride];
                    let [br, bi] = x[start + j + len / 2];
                    let v = [br * w[0] - bi * w[1], br * w[1] + bi * w[0]];
                    let u = x[start + j];
                    x[start + j] = [u[0] + v[0], u[1] + v[1]];
                    x[start + j + len / 2] = [u[0] - v[0], u[1] - v[1]];
                }
            }
            len *= 2;
        }
    }
}
