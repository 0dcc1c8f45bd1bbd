//! The change-point method on made-up series: steps, excursions, ramps,
//! single spikes, and pure noise at the repeat spreads of the recorded
//! curves (tests/fixtures/curves: median sd of log latency 0.4-1.2% over
//! all points, 1-6% at DRAM, up to 23% at a noisy Zen 3 guest's worst).

use super::*;
use crate::chain::SplitMix64;

/// `n` readings of `level` with Gaussian noise of `sd` in log units.
struct Noise(SplitMix64);

impl Noise {
    fn new(seed: u64) -> Noise {
        Noise(SplitMix64::new(seed))
    }

    fn uniform(&mut self) -> f64 {
        ((self.0.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Box-Muller.
    fn gauss(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    fn series(&mut self, levels: &[(usize, f64)], sd: f64) -> Vec<f64> {
        levels
            .iter()
            .flat_map(|&(n, level)| std::iter::repeat_n(level, n))
            .map(|level| level * (sd * self.gauss()).exp())
            .collect()
    }
}

#[test]
fn a_lasting_step_is_one_event_where_it_happened() {
    for seed in 0..20 {
        let s = Noise::new(seed).series(&[(30, 100.0), (30, 130.0)], 0.02);
        let found = shifts(&s);
        assert_eq!(found.len(), 1, "seed {seed}: {found:?}");
        let e = &found[0];
        assert!(e.start.abs_diff(30) <= 1, "seed {seed}: {e:?}");
        assert_eq!(e.end, None);
        assert!((e.before / 100.0 - 1.0).abs() < 0.03, "{e:?}");
        assert!((e.after / 130.0 - 1.0).abs() < 0.03, "{e:?}");
        assert!((e.change() - 0.3).abs() < 0.06);
    }
}

#[test]
fn a_neighbour_that_comes_and_goes_is_one_event_with_both_ends() {
    for seed in 0..20 {
        // Memory at 148 ns, 212 ns for 10 intervals from 15 (the example).
        let s = Noise::new(seed).series(&[(15, 148.0), (10, 212.0), (15, 148.0)], 0.03);
        let found = shifts(&s);
        assert_eq!(found.len(), 1, "seed {seed}: {found:?}");
        let e = &found[0];
        assert!(e.start.abs_diff(15) <= 1, "seed {seed}: {e:?}");
        assert!(e.end.is_some_and(|end| end.abs_diff(24) <= 1), "{e:?}");
        assert!((e.after / 212.0 - 1.0).abs() < 0.05, "{e:?}");
    }
}

#[test]
fn a_short_excursion_of_two_intervals_is_an_event_but_a_spike_of_one_is_not() {
    let mut s = vec![100.0; 40];
    s[10] = 300.0;
    s[25] = 40.0;
    assert_eq!(shifts(&s), vec![]);
    let mut noisy = Noise::new(7).series(&[(40, 100.0)], 0.01);
    noisy[12] *= 3.0;
    noisy[30] *= 2.0;
    assert_eq!(shifts(&noisy), vec![], "single spikes in noise");
    // Two intervals at three times the level: a real, short event.
    let mut two = vec![100.0; 40];
    two[20] = 300.0;
    two[21] = 300.0;
    let found = shifts(&two);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].start, found[0].end), (20, Some(21)));
}

#[test]
fn a_ramp_is_one_transition_to_the_level_it_reaches() {
    for seed in 0..10 {
        let mut levels = vec![(20, 100.0)];
        // From 100 to 150 over 8 intervals.
        levels.extend((1..=8).map(|k| (1, 100.0 * 1.5f64.powf(k as f64 / 8.0))));
        levels.push((20, 150.0));
        let s = Noise::new(seed).series(&levels, 0.01);
        let found = shifts(&s);
        assert_eq!(found.len(), 1, "seed {seed}: {found:?}");
        let e = &found[0];
        assert!((19..=26).contains(&e.start), "seed {seed}: {e:?}");
        assert_eq!(e.end, None);
        assert!((e.after / 150.0 - 1.0).abs() < 0.05, "{e:?}");
    }
}

#[test]
fn pure_noise_at_the_recorded_repeat_spreads_has_no_event() {
    // 0.5% (an L1 point), 2% (a DRAM point, Golden Cove), 6% (DRAM on the
    // Zen 3 guests): ten minutes of one-second intervals each.
    for (sd, seeds) in [(0.005, 20), (0.02, 20), (0.06, 20)] {
        for seed in 0..seeds {
            let s = Noise::new(1000 + seed).series(&[(600, 146.0)], sd);
            let found = shifts(&s);
            assert_eq!(found, vec![], "sd {sd}, seed {seed}");
        }
    }
}

#[test]
fn shifts_smaller_than_the_floor_or_the_noise_are_not_events() {
    // 5%: within what shared machines drift by.
    let s = Noise::new(3).series(&[(30, 100.0), (30, 105.0)], 0.005);
    assert_eq!(shifts(&s), vec![]);
    // 20% in noise of 10%: below three noise widths.
    let s = Noise::new(4).series(&[(30, 100.0), (30, 120.0)], 0.10);
    assert_eq!(shifts(&s), vec![]);
}

#[test]
fn a_constant_series_and_an_edge_that_steps_between_probe_sizes() {
    assert_eq!(shifts(&[8.0; 50]), vec![]);
    assert_eq!(shifts(&[]), vec![]);
    assert_eq!(shifts(&[1.0, 2.0]), vec![]);
    // An L3 edge of 8 MiB that falls to 4.3 MiB and stays.
    let mut edge = vec![8.0 * 1048576.0; 20];
    edge.extend(vec![4.3 * 1048576.0; 20]);
    let found = shifts(&edge);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].start, 20);
    // Missing readings are left out, the indices stay the series'.
    let mut gaps = vec![f64::NAN, f64::NAN];
    gaps.extend(vec![100.0; 20]);
    gaps.extend(vec![200.0; 20]);
    gaps[10] = f64::NAN;
    gaps[21] = f64::NAN;
    let found = shifts(&gaps);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].start, 22);
    // A lone reading and a gap after it: still one reading, no event (taken
    // as the one before, the gap made it two).
    let mut lone = vec![100.0; 40];
    lone[20] = 300.0;
    lone[21] = f64::NAN;
    assert_eq!(shifts(&lone), vec![]);
    // An excursion with a gap inside it is one event, over the gap.
    lone[22] = 300.0;
    let found = shifts(&lone);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].start, found[0].end), (20, Some(22)));
}

#[test]
fn the_noise_is_the_series_own_and_a_step_does_not_inflate_it() {
    let s = Noise::new(9).series(&[(100, 50.0), (100, 100.0)], 0.02);
    let logs: Vec<f64> = s.iter().map(|v| v.ln()).collect();
    let sigma = noise(&logs);
    assert!((0.014..0.028).contains(&sigma), "{sigma}");
    assert_eq!(noise(&[1.0; 10]), NOISE_FLOOR);
}

#[test]
fn a_spike_in_the_first_or_last_interval_is_not_an_event() {
    // A watch's first interval met a cold clock and caches before the
    // settle pass: L3 at 24-45 ns before 14.5 (this Zen 4 guest, six watches).
    for seed in 0..10 {
        let mut s = Noise::new(50 + seed).series(&[(40, 14.5)], 0.02);
        s[0] = 24.3;
        assert_eq!(shifts(&s), vec![], "seed {seed}: first");
        s[0] = 14.5;
        s[39] = 24.3;
        assert_eq!(shifts(&s), vec![], "seed {seed}: last");
    }
    // Two intervals at the start are a short event still.
    let mut two = vec![100.0; 40];
    two[0] = 300.0;
    two[1] = 300.0;
    assert_eq!(shifts(&two).len(), 1);
}

/// That `found` holds a fall of more than half from interval 15 (give or
/// take one) to `end` (the same).
fn fall_from_15_to(found: &[Shift], end: usize, seed: u64) {
    let fall = found
        .iter()
        .find(|e| e.change() < -0.5)
        .unwrap_or_else(|| panic!("seed {seed}: {found:?}"));
    assert!(fall.start.abs_diff(15) <= 1, "seed {seed}: {found:?}");
    assert!(
        fall.end.is_some_and(|e| e.abs_diff(end) <= 1),
        "seed {seed}: {found:?}"
    );
}

#[test]
fn a_dip_that_came_back_before_a_neighbour_is_not_its_start() {
    // The shape of a real watch's edge (tests/fixtures/watch, stream
    // neighbour 2): 10 MiB, a dip to 8 for four intervals and back for two,
    // then 3.8 MiB for ten intervals from 15, then 10 again.
    for seed in 0..20 {
        let levels = [(9, 10.0), (4, 8.0), (2, 10.0), (10, 3.8), (15, 10.0)];
        let s = Noise::new(300 + seed).series(&levels, 0.01);
        let found = shifts(&s);
        fall_from_15_to(&found, 24, seed);
        let dip = found.iter().find(|e| e.start < 15);
        assert!(
            dip.is_none_or(|d| d.end.is_some_and(|e| e < 15)),
            "seed {seed}: the dip runs into the fall: {found:?}"
        );
    }
}

#[test]
fn an_overshoot_after_an_excursion_ends_it_and_is_its_own() {
    // Stream neighbour 1's shape: 7.3, a fall to 2 for ten intervals, 10.4
    // for three, then 7.5 again: the fall ends where the overshoot starts.
    for seed in 0..20 {
        let levels = [(15, 7.3), (10, 2.0), (2, 5.2), (3, 10.4), (10, 7.5)];
        let s = Noise::new(400 + seed).series(&levels, 0.01);
        let found = shifts(&s);
        fall_from_15_to(&found, 26, seed);
        assert!(
            found
                .iter()
                .any(|e| e.change() > 0.3 && e.start.abs_diff(27) <= 1),
            "seed {seed}: {found:?}"
        );
    }
}

#[test]
fn a_step_back_through_a_short_transition_ends_at_the_last_interval_away() {
    // 10, 3.8 for nine intervals, 4.4 for two (the level not back yet), 10.
    for seed in 0..20 {
        let levels = [(15, 10.0), (9, 3.8), (2, 4.6), (14, 10.0)];
        let s = Noise::new(500 + seed).series(&levels, 0.01);
        let found = shifts(&s);
        assert_eq!(found.len(), 1, "seed {seed}: {found:?}");
        assert!(found[0].start.abs_diff(15) <= 1, "seed {seed}: {found:?}");
        assert!(
            found[0].end.is_some_and(|e| e.abs_diff(25) <= 1),
            "seed {seed}: {found:?}"
        );
    }
}
