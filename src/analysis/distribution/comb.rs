//! Which peak of the slow loads' power is a period: each bin's strength
//! against the power near it, and the harmonic combs of longer periods
//! (a hypervisor's tick) whose teeth are not periods of their own.

use super::spectrum::{MIN_CYCLES_PER_SEGMENT, MIN_STRENGTH, median};

/// A tooth of a harmonic series counts as present at this strength. At
/// [`MIN_SEGMENTS`](super::spectrum::MIN_SEGMENTS) segments a white-noise bin reaches 4 times its median
/// once in 3700 (chi-squared, 8 degrees of freedom), so a tooth looked for
/// in a few bins is there by chance about once in a thousand, and a comb
/// of [`TEETH_PRESENT`] of its teeth is not chance. Fitted at that count, a
/// rule to rethink: the same odds at the run's own segment count (1.2 to
/// 2.4 on tests/fixtures/timelines) read the 69 us tick's timeline as a
/// period of 1049 ns (strength 9.0) where the comb was passed over before.
const TOOTH_STRENGTH: f64 = 4.0;

/// A peak is a harmonic of a lower fundamental when this share of that
/// fundamental's multiples up to it are present, and no more than the rest
/// of the points half-way between them (a spectrum dense with peaks has
/// both, a harmonic series only the multiples). A choice: a quarter of the
/// teeth may drown (in red noise, on another comb, smeared by jitter).
const TEETH_PRESENT: f64 = 0.75;

/// How far from a multiple a tooth may lie, as a share of its frequency.
/// A chosen tolerance, not measured in the run, a rule to rethink (the
/// run's own peak widths would be the measure): a period that jitters by
/// a share j smears its h-th harmonic over h x j of the fundamental, j of
/// the harmonic's own frequency; a refresh, counted off the memory
/// controller's clock, hardly jitters, a hypervisor's tick does.
const TOOTH_REACH: f64 = 0.005;

/// Candidate peaks tried, strongest first: a choice of time, each costs a
/// search over its harmonic numbers; a spectrum whose 20 strongest peaks
/// are all other combs' teeth has no period of its own to speak of.
const CANDIDATES: usize = 20;

/// A Hann window spreads a pure tone over its main lobe, 2 bins either
/// side of the tone's bin (its transform's first zeros): a peak is a bin
/// at least as high as the 2 either side.
const HANN_HALF_LOBE: usize = 2;

/// A peak's background leaves out the bins its own lobe can reach: the
/// main lobe, and one more for a tone between two bins.
const PEAK_HALF_WIDTH: usize = HANN_HALF_LOBE + 1;

/// A peak's background is the power within this ratio of its frequency
/// either side (20%): a choice, wide enough to hold a dozen bins or more
/// from bin 50 (30 kHz) up, narrow enough that red noise (power falling
/// as 1/f to 1/f^2) changes by under 1.5x from the peak to either end.
const BACKGROUND_SPAN: f64 = 1.2;

/// A harmonic's comb is checked a quarter of its harmonic number either
/// side of it (see `strongest_period`): a choice.
const COMB_SPAN_DIVISOR: usize = 4;

/// Each bin's power over the median power within 20% of its frequency
/// (the bin and its 3 neighbours each side left out); 0 outside `lo..=hi`.
fn strengths(power: &[f64], lo: usize, hi: usize) -> Vec<f64> {
    let mut strength = vec![0.0; power.len()];
    for (k, s) in strength.iter_mut().enumerate().take(hi + 1).skip(lo) {
        let (a, b) = (
            ((k as f64 / BACKGROUND_SPAN) as usize).max(1),
            ((k as f64 * BACKGROUND_SPAN) as usize).min(power.len() - 1),
        );
        let around: Vec<f64> = (a..=b)
            .filter(|&j| j.abs_diff(k) > PEAK_HALF_WIDTH)
            .map(|j| power[j])
            .collect();
        let background = median(around);
        if background > 0.0 {
            *s = power[k] / background;
        }
    }
    strength
}

/// The peak found, in frequency bins (fractional), with its strength.
pub(super) struct Found {
    /// The fundamental, bins.
    pub(super) fundamental: f64,
    /// The strongest harmonic's strength.
    pub(super) strength: f64,
}

/// The strongest period in `k_lo..=k_hi` whose fundamental lies in the
/// band, as (fundamental in bins, strength); with it, the fundamentals
/// below the band whose harmonics were passed over (in bins): `inherited`
/// first, then in the order found, the strongest peak's first.
///
/// A peak is taken as the h-th harmonic of `f / h` for the largest h whose
/// other multiples in the band are mostly present and whose half-way points are
/// mostly not ([`TEETH_PRESENT`]): a stall every
/// 32 us shows as a comb of peaks 31 kHz apart, any one of which would
/// otherwise pass for a period of its own.
pub(super) fn strongest_period(
    power: &[f64],
    k_lo: usize,
    k_hi: usize,
    sampling: &[f64],
    inherited: &[f64],
) -> (Option<Found>, Vec<f64>) {
    let floor = MIN_CYCLES_PER_SEGMENT;
    let strength = strengths(power, floor, k_hi.min(power.len() - 3));
    let is_peak = |k: usize| {
        k >= HANN_HALF_LOBE
            && k + HANN_HALF_LOBE < power.len()
            && (1..=HANN_HALF_LOBE).all(|d| power[k] >= power[k - d] && power[k] >= power[k + d])
    };
    // A harmonic series of a period that jitters smears more the higher
    // the harmonic: a tooth is looked for within 0.5% (at least a bin).
    let reach = |at: f64| (TOOTH_REACH * at).max(1.0);
    let tooth = |at: f64| {
        let (lo, hi) = (
            (at - reach(at)).round().max(0.0) as usize,
            (at + reach(at)).round() as usize,
        );
        (lo..=hi)
            .map(|j| strength.get(j).copied().unwrap_or(0.0))
            .fold(0.0, f64::max)
    };
    let mut candidates: Vec<usize> = (k_lo..=k_hi)
        .filter(|&k| is_peak(k) && strength[k] >= MIN_STRENGTH)
        .collect();
    candidates.sort_by(|a, b| strength[*b].total_cmp(&strength[*a]));
    // Fundamentals found below the band: their harmonics are passed over,
    // and left out when testing another peak (two ticks a few percent apart
    // interleave their combs).
    let mut combs: Vec<f64> = inherited.to_vec();
    let on_comb = |at: f64, combs: &[f64]| {
        combs.iter().any(|&f0| {
            let multiple = (at / f0).round();
            multiple >= 1.0 && (at - multiple * f0).abs() <= reach(at)
        })
    };
    // Where the peak's own harmonics fold back into the band: the timer
    // samples the timeline at each of its steps, and a harmonic
    // n f near a sampling rate F shows at |n f - F|, at F mod f or f less
    // that from each multiple of f. A period that is a half-integer number
    // of a 10 ns timer's steps (975 ns) folds a line half-way between its
    // multiples, a tooth of a fundamental half as high. A point there is
    // no evidence of a lower fundamental: it is left out, as a point on
    // another comb is. (Where the true period is twice as long and its
    // second harmonic the strongest, the two readings cannot be told apart
    // from the spectrum; the shorter is read.)
    let folded = |at: f64, p: f64| {
        sampling.iter().any(|&rate| {
            let fold = rate % at;
            let offset = p % at;
            [fold, at - fold]
                .iter()
                .any(|&f| (offset - f).abs() <= reach(p) || (offset - f).abs() >= at - reach(p))
        })
    };
    for &k in candidates.iter().take(CANDIDATES) {
        let at = k as f64 + parabolic_offset(power, k);
        if on_comb(at, &combs) {
            continue;
        }
        let highest = (at / floor as f64).floor() as usize;
        let harmonic = (2..=highest.max(1))
            .rev()
            .find(|&h| {
                let f0 = at / h as f64;
                // Its other multiples around the peak, a quarter of its
                // harmonic number either side (a jittery tick's comb shows
                // in a stretch of the band: lower harmonics drown in the
                // red noise of bursts, higher ones smear), inside the band.
                let span = h / COMB_SPAN_DIVISOR + 1;
                let (bottom, top) = (h - span, (h + span).min((k_hi as f64 / f0) as usize));
                let in_band = |j: usize| j != h && j as f64 * f0 >= k_lo as f64;
                let count = |offset: f64| {
                    let points: Vec<f64> = (bottom.max(1)..=top)
                        .filter(|&j| in_band(j))
                        .map(|j| (j as f64 + offset) * f0)
                        .filter(|&p| !on_comb(p, &combs) && !folded(at, p))
                        .collect();
                    let present = points
                        .iter()
                        .filter(|&&at| tooth(at) >= TOOTH_STRENGTH)
                        .count();
                    (present as f64, points.len() as f64)
                };
                let ((teeth, n), (between, m)) = (count(0.0), count(0.5));
                // A fundamental in the band shows a line of its own, as
                // strong as a period must be ([`MIN_STRENGTH`]): a train of
                // stalls puts power at its rate (a stall far shorter than
                // its period has no spectral zero there), as much as at its
                // harmonics. Teeth around a peak with a weaker fundamental
                // are sidebands: the stalls the timings catch wax and wane
                // with the phase of the timings against the period (row 16
                // of tests/machines: 3.9 us read through timings of 500 ns,
                // 7.8 a period, repeats its pattern every 5 periods, and
                // sidebands 51 kHz apart with a fundamental at 4.3 read as
                // a period of 19.5 us in 19 of 400 draws at a tooth's 4).
                let own = f0 < k_lo as f64 || tooth(f0) >= MIN_STRENGTH;
                own && n >= 1.0
                    && teeth >= TEETH_PRESENT * n
                    && between <= (1.0 - TEETH_PRESENT) * m
            })
            .unwrap_or(1);
        let fundamental = at / harmonic as f64;
        if fundamental < k_lo as f64 {
            combs.push(fundamental);
            continue;
        }
        let found = Found {
            fundamental,
            strength: strength[k],
        };
        return (Some(found), combs);
    }
    (None, combs)
}

/// Where the true peak lies between bins k-1 and k+1, from a parabola
/// through the three powers' logs (-0.5 to 0.5 bins).
fn parabolic_offset(power: &[f64], k: usize) -> f64 {
    if k == 0 || k + 1 >= power.len() {
        return 0.0;
    }
    let [a, b, c] = [power[k - 1], power[k], power[k + 1]].map(|p| p.max(1e-300).ln());
    let denominator = a - 2.0 * b + c;
    if denominator.abs() < 1e-12 {
        0.0
    } else {
        (0.5 * (a - c) / denominator).clamp(-0.5, 0.5)
    }
}
