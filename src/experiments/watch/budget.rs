//! What an interval may spend: the edge probes' warm walks planned from the
//! settle pass and shared out smallest probe first, and the timed runs and
//! warm walks fitted to what each interval spent.

use super::probe::{self, Probe, Role, WarmCost, warm_floor, warm_shares};
use super::{BUDGET_TARGET, EDGE_WARM_SHARE, MIN_TRIPS, Watch};

impl Watch {
    /// Fits the edge probes' warm walks to [`EDGE_WARM_SHARE`] of the duty
    /// budget, given the settle pass's readings (`edge_ns` per edge probe,
    /// `memory_ns`): each load is reckoned by [`probe::warm_ns_per_load`]
    /// (from the first interval on, by what the probe's last warm walk
    /// took where that was less, [`probe::next_warm_ns_per_load`]), and the
    /// walks are shared out by [`Watch::share_warm`].
    pub(super) fn plan_warm(&mut self, edge_ns: &[f64], memory_ns: f64) {
        if !(memory_ns.is_finite() && memory_ns > 0.0) {
            return;
        }
        let edges = self.probes.iter_mut().filter(|p| p.role == Role::Edge);
        for (probe, &ns) in edges.zip(edge_ns) {
            probe.warm_ns_per_load = probe::warm_ns_per_load(ns, memory_ns);
            probe.settle_ns_per_load = probe.warm_ns_per_load;
        }
        self.warm_s = self.warm_plan_s();
        self.share_warm(self.warm_s);
    }

    /// Seconds of warm walks the settle pass plans for the edge probes:
    /// [`EDGE_WARM_SHARE`] of the duty budget, the most they grow back to.
    fn warm_plan_s(&self) -> f64 {
        self.plan.duty * self.plan.interval_s * EDGE_WARM_SHARE
    }

    /// Shares `seconds` of warm walks among the edge probes, smallest
    /// first: [`WARM_CYCLES`] whole cycles each while the time lasts (the
    /// lines a level can hold are the smallest probes'; a probe walked less
    /// can only show that it was served, see [`Watch::edge_of`]), then what
    /// is left, each at least [`MAX_WARM_LOADS`] (the TLB's warm walk) or
    /// one cycle.
    fn share_warm(&mut self, seconds: f64) {
        let planned = self.warm_plan_s();
        let mut edges: Vec<&mut Probe> = self
            .probes
            .iter_mut()
            .filter(|p| p.role == Role::Edge)
            .collect();
        let walks: Vec<WarmCost> = edges
            .iter()
            .map(|p| WarmCost {
                cycle: p.chain.len(),
                whole_ns: p.warm_ns_per_load,
                short_ns: p.short_ns_per_load,
            })
            .collect();
        for (probe, warm) in edges.iter_mut().zip(warm_shares(&walks, seconds, planned)) {
            if let Some(warm) = warm {
                probe.warm = warm;
            }
        }
    }

    /// Fits every timed run and the edge probes' warm walks to
    /// [`BUDGET_TARGET`] of the duty cycle by the ratio of that aim to what
    /// the interval `spent`: shrunk when it spent more, grown back when it
    /// spent less, never past what the settle pass planned ([`fitted`]).
    /// Shrunk only, one burst cut them for the rest of a watch (docs/watch.md).
    pub(super) fn fit_budget(&mut self, spent: f64) {
        if spent.is_nan() || spent <= 0.0 {
            return;
        }
        let scale = self.plan.duty * self.plan.interval_s * BUDGET_TARGET / spent;
        for probe in &mut self.probes {
            if let Some(trips) = &mut probe.trips {
                let most = probe.planned_trips.unwrap_or(*trips);
                *trips = fitted(*trips as f64, scale, MIN_TRIPS as f64, most as f64) as u64;
            }
            if probe.role == Role::Edge && probe.warm_ns_per_load <= 0.0 && scale < 1.0 {
                // No cost reckoned (the settle pass read no memory
                // latency): cut alike, or a whole settle cycle would stay.
                let floor = warm_floor(probe.chain.len());
                probe.warm = ((probe.warm as f64 * scale) as u64).max(floor);
            }
        }
        // Shared out again, the smallest probes' whole cycles first: cut
        // alike, every probe fell short of a cycle on the Zen 4 guest (0.78
        // to 0.12) and even the smallest read memory where a chase read L3.
        // Grown back by the ratio, not given back whole at once: where the
        // settle pass reckoned the walks cheap (a 35.3 MiB probe read 46 ns
        // while the Zen 5 guest's host left it the whole L3, 130 ns a second
        // later), each plan given back whole spent 200-230 ms of a 100 ms
        // budget, every sixth interval (12.7% of a CPU measuring). The
        // intervals a slow regrowth reads only a lower bound in are no fall
        // in the events (`bounds::bounds_filled`).
        self.warm_s = fitted(self.warm_s, scale, 0.0, self.warm_plan_s());
        self.share_warm(self.warm_s);
    }
}

/// `current` times `scale`, within `least..=most` (`most` below `least`
/// counts as `least`): a timed run's trips or the warm walks' seconds
/// fitted to an interval's budget ([`Watch::fit_budget`]).
fn fitted(current: f64, scale: f64, least: f64, most: f64) -> f64 {
    (current * scale).min(most).max(least)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_cuts_the_budget_and_a_quiet_interval_gives_it_back_up_to_the_plan() {
        // 108 ms spent of an 80 ms aim, then 50 ms: cut, then back to the plan.
        let cut = fitted(45.0, 80.0 / 108.0, 0.0, 45.0);
        assert!((cut - 33.3).abs() < 0.1, "{cut}");
        assert_eq!(fitted(cut, 80.0 / 50.0, 0.0, 45.0), 45.0);
        // Trips never under their floor, nor over what was calibrated.
        assert_eq!(fitted(150.0, 0.5, 100.0, 4000.0), 100.0);
        assert_eq!(fitted(3000.0, 2.0, 100.0, 4000.0), 4000.0);
        assert_eq!(fitted(3000.0, 2.0, 100.0, 50.0), 100.0);
    }
}
