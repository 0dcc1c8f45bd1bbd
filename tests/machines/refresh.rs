//! DRAM refresh from a timeline of loads timed one at a time (`run
//! --distribution`, read by `analysis::distribution::analyse`): a chase
//! beyond the caches, each load at memory's latency with a little noise,
//! a load that reaches DRAM while the rank refreshes waiting for the
//! refresh to end (every tREFI, for tRFC), now and then a slow load at random (an
//! interrupt), every timing read through the row's timer: its tick, its
//! step and its cost, in the groups the engine picks for it
//! (`engine::group_size`).

use memlat::analysis::distribution::{self, Timings, spectrum};

use super::every_row_over;
use super::model::{self, Noise};
use super::rows::Row;

/// How long the model times loads, ns: 40 ms (the default is 400; a
/// shorter timeline averages fewer segments, so this is the harder test).
const TIMELINE_NS: f64 = 40e6;

/// A load's latency, and the share of loads an interrupt slows by 100-400 ns.
const JITTER: f64 = 0.04;
const INTERRUPTED: f64 = 0.003;

/// The timeline's ticks and what turns them into ns.
pub struct Timeline {
    pub ticks: Vec<u32>,
    pub group: u32,
}

pub fn timeline(row: &Row, seed: u64) -> Timeline {
    let mut noise = Noise::new(seed ^ 0x2EF2);
    let d = model::draw(row, &mut noise);
    let t = row.timer;
    let group = memlat::engine::group_size(d.memory_ns, t.read_ns, t.step_ns);
    let read = |at: f64| ((at / t.step_ns).floor() * t.step_ns * t.ghz).round() as u64;
    let (mut now, mut ticks) = (0.0f64, Vec::new());
    while now < TIMELINE_NS {
        let start = read(now);
        now += t.read_ns;
        for _ in 0..group {
            let mut ns = d.memory_ns * (1.0 + JITTER * (noise.unit() + noise.unit()) / 2.0);
            // The load reaches DRAM half-way through its latency.
            let phase = (now + ns / 2.0) % row.dram.refresh_ns;
            if phase < row.dram.refresh_stall_ns {
                ns += row.dram.refresh_stall_ns - phase;
            }
            if (noise.unit() + 1.0) / 2.0 < INTERRUPTED {
                ns += noise.within((100.0, 400.0));
            }
            now += ns;
        }
        ticks.push((read(now) - start) as u32);
    }
    Timeline { ticks, group }
}

/// The timings as the engine hands them to the analysis.
pub fn timings<'a>(row: &Row, line: &'a Timeline) -> Timings<'a> {
    Timings {
        ticks: &line.ticks,
        ns_per_tick: 1.0 / row.timer.ghz,
        overhead_ns: row.timer.read_ns,
        loads_per_timing: line.group,
        resolution_ns: row.timer.step_ns,
        floor_ns: 2.0 / row.ghz,
    }
}

/// The shortest period a timeline of timings `timing_ns` long can show
/// (`spectrum`'s band: 4 bins, and [`spectrum::MIN_PERIOD_TIMINGS`] timings).
pub fn shortest_period(timing_ns: f64) -> f64 {
    (4.0 * spectrum::BIN_NS).max(spectrum::MIN_PERIOD_TIMINGS * timing_ns)
}

#[test]
fn the_refresh_period_from_a_timeline_of_loads() {
    every_row_over("refresh", 2, |row, seed| {
        let line = timeline(row, seed);
        let t = timings(row, &line);
        let d = distribution::analyse(&t, row.timer.name).expect("a timeline");
        let mut sorted = line.ticks.clone();
        sorted.sort_unstable();
        let median_timing = t.elapsed_ns(sorted[sorted.len() / 2]);
        let seen = d.periodic_stalls.map(|s| s.period_ns);
        let period = row.dram.refresh_ns;
        if period < shortest_period(median_timing) {
            // Beyond what the timer resolves: no period, rather than a wrong one.
            return match seen {
                None => Ok(()),
                Some(p) => Err(format!(
                    "a period of {p:.0} ns where the timer cannot resolve tREFI {period} ns (timings of {median_timing:.0} ns)"
                )),
            };
        }
        match seen {
            Some(p) if (p / period - 1.0).abs() < 0.02 => Ok(()),
            other => Err(format!(
                "period {other:?}, want {period} ns (group {}, timings of {median_timing:.0} ns; spectrum {:?})",
                line.group,
                d.spectrum
                    .map(|s| (s.segments, s.band_hz, s.longer_period_ns, s.host_period_ns))
            )),
        }
    });
}

/// Draws of row 16 (3.9 us read through timings of 440-600 ns on a 24 MHz
/// timer) whose slow timings repeat their pattern every few periods: the
/// sidebands that makes, about a fundamental too weak to be a period of its
/// own, read as 19.5 us (draws 16 and 108, timings of 500 ns) and 7.8 us
/// (61 and 78, 583 ns) until the fundamental had to pass as a period.
#[test]
fn sidebands_of_the_timings_phase_against_refresh_are_no_period() {
    let row = super::rows::rows()
        .into_iter()
        .find(|r| r.id == 16)
        .expect("row 16");
    for seed in [16, 61, 78, 108] {
        let line = timeline(&row, seed);
        let d = distribution::analyse(&timings(&row, &line), row.timer.name).expect("a timeline");
        let period = d.periodic_stalls.map(|s| s.period_ns);
        assert!(
            period.is_some_and(|p| (p / row.dram.refresh_ns - 1.0).abs() < 0.02),
            "draw {seed}: period {period:?}, want {} ns",
            row.dram.refresh_ns
        );
    }
}
