//! How noisy the machine was while it was measured: the hypervisor's steal
//! time on the measuring CPU, the spread of the repeats, and a canary point
//! measured at the start and again at the end (a change between them means
//! the machine's state moved under the run: another tenant, a new clock).

use serde::{Deserialize, Serialize};

use crate::analysis::stats::median;
use crate::chain::Pattern;
use crate::engine::{Engine, Point};
use crate::platform::system::CpuTimes;

/// The canary: a random chain this large sits in L1 or L2 on every core
/// memlat has met, so it is quick, and it moves with the clock and with
/// other tenants' use of a shared L2.
pub const CANARY_SIZE: u64 = 64 << 10;

/// How noisy the machine was during a run or a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    /// Fraction of the measuring CPU's time the hypervisor gave to someone
    /// else during the run (/proc/stat steal); null where it cannot be read.
    pub steal_fraction: Option<f64>,
    /// Median coefficient of variation of the repeats over the points.
    pub repeat_cv: f64,
    /// The canary's latency at the end over its latency at the start
    /// (1 = unchanged); null when it could not be measured.
    pub canary_ratio: Option<f64>,
}

impl Noise {
    /// A line for the reader, with advice when the machine was noisy.
    pub fn describe(&self) -> String {
        let steal = self.steal_fraction.map_or("steal unknown".into(), |s| {
            format!("steal {:.1}%", s * 100.0)
        });
        let canary = self.canary_ratio.map_or("canary not measured".into(), |r| {
            format!("canary end/start {r:.3}")
        });
        let mut line = format!(
            "noise: {steal}, repeats' cv {:.1}% (median), {canary}",
            self.repeat_cv * 100.0
        );
        if self.noisy() {
            line += ": a noisy machine; compare figures within one run, and repeat the run";
        }
        line
    }

    /// Whether the run was noisy enough to say so.
    pub fn noisy(&self) -> bool {
        self.steal_fraction.is_some_and(|s| s > 0.02)
            || self.repeat_cv > 0.05
            || self
                .canary_ratio
                .is_some_and(|r| !(0.95..=1.05).contains(&r))
    }
}

/// Watches a run from its start: the CPU counters and the canary's first figure.
pub struct Watch {
    cpu: usize,
    times: CpuTimes,
    canary_start: Option<f64>,
}

/// The canary's point: `template`'s settings, a random chain of
/// [`CANARY_SIZE`], three short repeats.
fn canary_point(template: &Point) -> Point {
    Point {
        size: CANARY_SIZE,
        pattern: Pattern::Random,
        repeats: 3,
        until_precise: false,
        sample_time: std::time::Duration::from_millis(2),
        // A mean is all the canary needs.
        distribution: None,
        ..template.clone()
    }
}

fn canary(engine: &mut Engine, template: &Point) -> Option<f64> {
    let m = engine.measure(&canary_point(template)).ok()?;
    Some(m.ns_per_load.median).filter(|ns| ns.is_finite() && *ns > 0.0)
}

impl Watch {
    /// Starts watching: reads /proc/stat and measures the canary.
    pub fn start(engine: &mut Engine, template: &Point) -> Watch {
        let canary_start = canary(engine, template);
        Watch {
            cpu: engine.cpu(),
            times: CpuTimes::now(),
            canary_start,
        }
    }

    /// Ends watching: steal since the start, the canary again, and `cvs`
    /// (each point's coefficient of variation) summarised.
    pub fn finish(self, engine: &mut Engine, template: &Point, cvs: &[f64]) -> Noise {
        let steal_fraction = CpuTimes::now()
            .load_since(&self.times)
            .into_iter()
            .find(|l| l.cpu == self.cpu)
            .map(|l| l.steal);
        let canary_end = canary(engine, template);
        let finite: Vec<f64> = cvs.iter().copied().filter(|c| c.is_finite()).collect();
        Noise {
            steal_fraction,
            repeat_cv: if finite.is_empty() {
                0.0
            } else {
                median(&finite)
            },
            canary_ratio: self.canary_start.zip(canary_end).map(|(a, b)| b / a),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_said_when_any_figure_is_high() {
        let quiet = Noise {
            steal_fraction: Some(0.001),
            repeat_cv: 0.01,
            canary_ratio: Some(1.01),
        };
        assert!(!quiet.noisy());
        assert!(quiet.describe().contains("steal 0.1%"));
        for noisy in [
            Noise {
                steal_fraction: Some(0.1),
                ..quiet
            },
            Noise {
                repeat_cv: 0.2,
                ..quiet
            },
            Noise {
                canary_ratio: Some(1.3),
                ..quiet
            },
        ] {
            assert!(noisy.noisy() && noisy.describe().contains("noisy"));
        }
        let unknown = Noise {
            steal_fraction: None,
            canary_ratio: None,
            ..quiet
        };
        assert!(unknown.describe().contains("steal unknown"));
    }

    #[test]
    fn steal_is_read_from_this_machines_counters() {
        // Whatever the load, a fraction (or nothing where /proc/stat is missing).
        let before = CpuTimes::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        for l in CpuTimes::now().load_since(&before) {
            assert!((0.0..=1.0).contains(&l.steal), "{l:?}");
        }
    }
}
