//! The analysis on synthetic timelines with known percentiles, modes and periods.

use super::spectrum::{Fft, MIN_STRENGTH};
use super::*;

/// SplitMix64: a small deterministic generator for synthetic timelines.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1).
    fn uniform(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    fn normal(&mut self) -> f64 {
        (-2.0 * self.uniform().ln()).sqrt() * (2.0 * std::f64::consts::PI * self.uniform()).cos()
    }
}

/// A timer of 2 ticks a ns with a 10 ns cost per read.
const NS_PER_TICK: f64 = 0.5;
const OVERHEAD_NS: f64 = 10.0;

fn timings(ticks: &[u32]) -> Timings<'_> {
    Timings {
        ticks,
        ns_per_tick: NS_PER_TICK,
        overhead_ns: OVERHEAD_NS,
        loads_per_timing: 1,
        resolution_ns: NS_PER_TICK,
        floor_ns: 0.0,
    }
}

fn to_ticks(load_ns: f64) -> u32 {
    ((load_ns + OVERHEAD_NS) / NS_PER_TICK).round() as u32
}

/// `n` loads of about `ns` (5% lognormal jitter); where a load is in flight
/// when a stall starts (every `period_ns`, when given), it takes `stall_ns` more.
fn timeline(n: usize, ns: f64, period_ns: Option<f64>, stall_ns: f64, seed: u64) -> Vec<u32> {
    let mut rng = Rng(seed);
    let mut now = 0.0;
    (0..n)
        .map(|_| {
            let mut load = ns * (0.05 * rng.normal()).exp();
            if let Some(p) = period_ns
                && ((now + load + OVERHEAD_NS) / p).floor() > (now / p).floor()
            {
                load += stall_ns;
            }
            now += load + OVERHEAD_NS;
            to_ticks(load)
        })
        .collect()
}

#[test]
fn percentiles_are_nearest_rank_of_the_loads_less_the_timer() {
    let ticks: Vec<u32> = (1..=10_000).map(|k| to_ticks(k as f64)).collect();
    let d = analyse(&timings(&ticks), "test").unwrap();
    let p = d.percentiles_ns;
    for (got, want) in [
        (p.p50, 5000.0),
        (p.p90, 9000.0),
        (p.p99, 9900.0),
        (p.p99_9, 9990.0),
        (p.p99_99, 9999.0),
    ] {
        assert!((got - want).abs() < 1e-6, "{got} against {want}");
    }
    assert_eq!(d.loads_timed, 10_000);
    let json = serde_json::to_value(&d).unwrap();
    assert!(json["percentiles_ns"]["p99.9"].is_number(), "{json}");
}

#[test]
fn a_group_is_timed_as_its_mean_load_after_the_timer() {
    let t = Timings {
        ticks: &[],
        ns_per_tick: 0.5,
        overhead_ns: 10.0,
        loads_per_timing: 4,
        resolution_ns: 0.5,
        floor_ns: 0.0,
    };
    assert_eq!(t.load_ns(100), 10.0);
    assert_eq!(t.elapsed_ns(100), 50.0);
    assert_eq!(t.load_ns(1), 0.01, "never below a hundredth of a ns");
}

#[test]
fn deltas_within_a_timer_step_of_its_cost_are_folded_to_the_floor() {
    // A guest's TSC in 10 ns steps (20 ticks), a 20 ns timer, 150 ns loads,
    // an L1 hit's least 0.5 ns: 1 in 100 deltas reads the timer alone.
    let ticks: Vec<u32> = (0..100_000u32)
        .map(|k| match k % 100 {
            0 => 40,                 // 20 ns: the timer alone
            1 => 60,                 // 30 ns: one step above it
            _ => 340 + 20 * (k % 3), // 150-170 ns: loads of 150 ns and a little
        })
        .collect();
    let t = Timings {
        ticks: &ticks,
        ns_per_tick: 0.5,
        overhead_ns: 20.0,
        loads_per_timing: 1,
        resolution_ns: 10.0,
        floor_ns: 0.5,
    };
    assert!(t.folded(60) && !t.folded(61));
    let d = analyse(&t, "test").unwrap();
    assert_eq!(d.timings_folded, 2_000);
    assert!(d.folding().unwrap().contains("2.00%"));
    // The timer's steps make no mode: one, the loads', with their 98%.
    assert_eq!(d.modes.len(), 1, "{:?}", d.modes);
    assert!((d.modes[0].ns / 160.0 - 1.0).abs() < 0.1, "{:?}", d.modes);
    assert!((d.modes[0].share - 0.98).abs() < 1e-9, "{:?}", d.modes);
    assert_eq!(d.percentiles_ns.p50, 160.0);
    assert!(d.histogram.iter().all(|b| b.high_ns > 0.5));
    // A timer of no step folds only the timer alone; the step above it
    // reads as a 10 ns load, and without a floor the fold is 0.01 ns.
    let fine = Timings {
        resolution_ns: 0.0,
        floor_ns: 0.0,
        ..t
    };
    assert_eq!(analyse(&fine, "test").unwrap().timings_folded, 1_000);
    assert_eq!((fine.load_ns(40), fine.load_ns(60)), (0.01, 10.0));
}

#[test]
fn the_histogram_is_log_spaced_and_holds_every_load() {
    let ticks = timeline(20_000, 150.0, None, 0.0, 3);
    let mut sorted = ticks.clone();
    sorted.sort_unstable();
    let bins = histogram(&sorted, &timings(&ticks));
    assert_eq!(bins.iter().map(|b| b.count).sum::<u64>(), 20_000);
    for w in bins.windows(2) {
        assert!((w[0].high_ns - w[1].low_ns).abs() < 1e-9);
    }
    for b in &bins {
        assert!((b.high_ns / b.low_ns - 2f64.powf(1.0 / 8.0)).abs() < 1e-9);
    }
    assert!(bins[0].count > 0 && bins[bins.len() - 1].count > 0);
    let fullest = bins.iter().max_by_key(|b| b.count).unwrap();
    assert!(fullest.low_ns <= 150.0 * 1.1 && fullest.high_ns >= 150.0 / 1.1);
}

#[test]
fn two_modes_are_found_with_their_shares() {
    let mut rng = Rng(11);
    let ticks: Vec<u32> = (0..100_000)
        .map(|k| {
            let ns = if k % 5 < 3 { 143.0 } else { 250.0 };
            to_ticks(ns * (0.04 * rng.normal()).exp())
        })
        .collect();
    let d = analyse(&timings(&ticks), "test").unwrap();
    assert_eq!(d.modes.len(), 2, "{:?}", d.modes);
    let (fast, slow) = (d.modes[0], d.modes[1]);
    assert!((fast.ns / 143.0 - 1.0).abs() < 0.05, "{fast:?}");
    assert!((slow.ns / 250.0 - 1.0).abs() < 0.05, "{slow:?}");
    assert!((fast.share - 0.6).abs() < 0.05, "{fast:?}");
    assert!((slow.share - 0.4).abs() < 0.05, "{slow:?}");
}

#[test]
fn one_peak_with_noise_is_one_mode() {
    let ticks = timeline(50_000, 90.0, None, 0.0, 5);
    let d = analyse(&timings(&ticks), "test").unwrap();
    assert_eq!(d.modes.len(), 1, "{:?}", d.modes);
    assert!((d.modes[0].ns / 90.0 - 1.0).abs() < 0.05);
    assert!(d.modes[0].share > 0.95);
}

#[test]
fn a_refresh_like_period_is_found_within_a_percent() {
    // DDR5 with fine-granularity refresh: every 1953.125 ns.
    let period = 1953.125;
    let ticks = timeline(1_000_000, 150.0, Some(period), 250.0, 7);
    let d = analyse(&timings(&ticks), "test").unwrap();
    let stalls = d.periodic_stalls.expect("a period");
    assert!(
        (stalls.period_ns / period - 1.0).abs() < 0.01,
        "{stalls:?} against {period}"
    );
    assert!(stalls.strength >= MIN_STRENGTH, "{stalls:?}");
    // One load in about 1953 / 160 is in flight when a stall starts.
    assert!(
        (stalls.share_of_loads - 160.0 / period).abs() < 0.03,
        "{stalls:?}"
    );
    assert!((stalls.added_ns - 250.0).abs() < 30.0, "{stalls:?}");
    let spectrum = d.spectrum.unwrap();
    assert!(spectrum.segments >= 50 && !spectrum.points.is_empty());
}

#[test]
fn a_long_period_of_sixteen_microseconds_is_resolved() {
    let period = 15_625.0;
    let ticks = timeline(1_500_000, 100.0, Some(period), 400.0, 9);
    let d = analyse(&timings(&ticks), "test").unwrap();
    let stalls = d.periodic_stalls.expect("a period");
    assert!((stalls.period_ns / period - 1.0).abs() < 0.03, "{stalls:?}");
}

#[test]
fn slow_loads_at_random_times_have_no_period() {
    for seed in 1..=3 {
        let mut rng = Rng(seed);
        let ticks: Vec<u32> = (0..400_000)
            .map(|_| {
                let slow = rng.uniform() < 0.08;
                to_ticks(if slow { 400.0 } else { 150.0 } * (0.05 * rng.normal()).exp())
            })
            .collect();
        let d = analyse(&timings(&ticks), "test").unwrap();
        assert!(d.periodic_stalls.is_none(), "seed {seed}: {d:?}");
        assert!(d.spectrum.unwrap().slow_timings > 20_000);
    }
}

#[test]
fn bursts_of_slow_loads_are_red_noise_not_a_period() {
    // Interrupts and a busy neighbour: slow loads come in bursts at random
    // times, which piles power at low frequencies.
    for seed in 1..=3 {
        let mut rng = Rng(seed + 100);
        let mut burst = 0;
        let ticks: Vec<u32> = (0..600_000)
            .map(|_| {
                if burst == 0 && rng.uniform() < 0.002 {
                    burst = 20 + (rng.next() % 200) as usize;
                }
                let slow = burst > 0;
                burst = burst.saturating_sub(1);
                to_ticks(if slow { 60.0 } else { 20.0 } * (0.05 * rng.normal()).exp())
            })
            .collect();
        let d = analyse(&timings(&ticks), "test").unwrap();
        assert!(
            d.periodic_stalls.is_none(),
            "seed {seed}: {:?}",
            d.periodic_stalls
        );
    }
}

#[test]
fn a_short_timeline_looks_for_no_period_and_says_how_short() {
    let ticks = timeline(5_000, 150.0, Some(1953.125), 250.0, 1);
    let d = analyse(&timings(&ticks), "test").unwrap();
    assert!(d.periodic_stalls.is_none());
    let spectrum = d.spectrum.unwrap();
    assert!(spectrum.segments < spectrum::MIN_SEGMENTS && spectrum.points.is_empty());
}

#[test]
fn the_fft_matches_a_direct_transform() {
    let mut rng = Rng(42);
    let x: Vec<[f64; 2]> = (0..64).map(|_| [rng.normal(), rng.normal()]).collect();
    let mut fast = x.clone();
    Fft::new(64).transform(&mut fast);
    for (k, got) in fast.iter().enumerate() {
        let mut want = [0.0, 0.0];
        for (j, v) in x.iter().enumerate() {
            let a = -2.0 * std::f64::consts::PI * (j * k) as f64 / 64.0;
            want[0] += v[0] * a.cos() - v[1] * a.sin();
            want[1] += v[0] * a.sin() + v[1] * a.cos();
        }
        assert!((got[0] - want[0]).abs() < 1e-9 && (got[1] - want[1]).abs() < 1e-9);
    }
}

/// Timings of `ns` (5% jitter) with a stall of `stall_ns` every
/// `comb_ns` and, when given, another every `period_ns`.
fn two_periods(n: usize, ns: f64, comb_ns: f64, period_ns: Option<f64>, seed: u64) -> Vec<u32> {
    let mut rng = Rng(seed);
    let mut now = 0.0;
    (0..n)
        .map(|_| {
            let mut load = ns * (0.05 * rng.normal()).exp();
            let crosses =
                |p: f64, load: f64| ((now + load + OVERHEAD_NS) / p).floor() > (now / p).floor();
            if crosses(comb_ns, load) {
                load += 300.0;
            }
            if let Some(p) = period_ns
                && crosses(p, load)
            {
                load += 250.0;
            }
            now += load + OVERHEAD_NS;
            to_ticks(load)
        })
        .collect()
}

#[test]
fn harmonics_of_a_longer_period_are_not_a_period() {
    // A stall every 32 us (a hypervisor's tick) at an L1-like size: its
    // harmonics fill the band 31 kHz apart, none of them a period of its own.
    let ticks = two_periods(3_000_000, 20.0, 32_000.0, None, 21);
    let d = analyse(&timings(&ticks), "test").unwrap();
    assert!(d.periodic_stalls.is_none(), "{:?}", d.periodic_stalls);
    let longer = d
        .spectrum
        .unwrap()
        .longer_period_ns
        .expect("the 32 us period");
    assert!((longer / 32_000.0 - 1.0).abs() < 0.03, "{longer}");
}

#[test]
fn refresh_is_found_beside_a_longer_period() {
    let ticks = two_periods(1_000_000, 150.0, 32_000.0, Some(1953.125), 22);
    let d = analyse(&timings(&ticks), "test").unwrap();
    let stalls = d.periodic_stalls.expect("the refresh period");
    assert!(
        (stalls.period_ns / 1953.125 - 1.0).abs() < 0.01,
        "{stalls:?}"
    );
}

#[test]
fn a_period_with_strong_harmonics_is_reported_as_its_fundamental() {
    // 7.8 us (DDR4 tREFI): harmonics at 2x, 3x... are in the band too.
    let ticks = timeline(1_000_000, 150.0, Some(7812.5), 250.0, 23);
    let d = analyse(&timings(&ticks), "test").unwrap();
    let stalls = d.periodic_stalls.expect("a period");
    assert!((stalls.period_ns / 7812.5 - 1.0).abs() < 0.01, "{stalls:?}");
}

#[test]
fn two_ticks_a_few_percent_apart_are_not_a_period() {
    // Two hypervisor ticks (34.7 and 33.9 us) interleave their harmonics:
    // where one comb's teeth fall between the other's, neither may be
    // mistaken for a period of its own.
    let mut rng = Rng(31);
    let mut now = 0.0;
    let ticks: Vec<u32> = (0..3_000_000)
        .map(|_| {
            let mut load = 20.0 * (0.05 * rng.normal()).exp();
            for tick in [34_700.0, 33_900.0] {
                if ((now + load + OVERHEAD_NS) / tick).floor() > (now / tick).floor() {
                    load += 300.0;
                }
            }
            now += load + OVERHEAD_NS;
            to_ticks(load)
        })
        .collect();
    let d = analyse(&timings(&ticks), "test").unwrap();
    assert!(d.periodic_stalls.is_none(), "{:?}", d.periodic_stalls);
    let longer = d.spectrum.unwrap().longer_period_ns.expect("a tick");
    assert!(longer > 30_000.0 && longer < 38_000.0, "{longer}");
}

#[test]
fn sidebands_round_a_period_are_not_a_longer_one() {
    // A stall every 3.9 us whose slow timing lands early or late by up to
    // 200 ns in a cycle of 4 periods (as the loads' phase against a refresh
    // decides which timing of a coarse timer catches it), 1% of loads slowed
    // at random: teeth at 3/4 and 5/4 of the rate and none at 1/4. It is a
    // 3.9 us period (it read 15.6 us before a fundamental in the band had
    // to show its own tooth).
    const PERIOD_NS: f64 = 3900.0;
    let mut rng = Rng(7);
    let mut now = 0.0;
    let mut next = 0usize;
    let stall_at = |n: usize| {
        n as f64 * PERIOD_NS + 200.0 * (2.0 * std::f64::consts::PI * n as f64 / 4.0).sin() + 500.0
    };
    let ticks: Vec<u32> = (0..400_000)
        .map(|_| {
            let mut load = 150.0 * (0.05 * rng.normal()).exp();
            if rng.uniform() < 0.01 {
                load += 300.0;
            }
            if now + load + OVERHEAD_NS > stall_at(next) {
                load += 250.0;
                next += 1;
            }
            now += load + OVERHEAD_NS;
            to_ticks(load)
        })
        .collect();
    let d = analyse(&timings(&ticks), "test").unwrap();
    let stalls = d.periodic_stalls.expect("a period");
    assert!(
        (stalls.period_ns / PERIOD_NS - 1.0).abs() < 0.01,
        "{stalls:?}"
    );
}
