//! The knee of a latency-vs-bandwidth curve (`memlat loaded`): where the
//! chase latency reaches twice its unloaded value, as traffic grows.
//!
//! Unloaded is the least latency seen, idle or under traffic: traffic only
//! adds queueing in front of the chase and a disturbance only adds time, so
//! the least is memory's own latency at the clock it runs at. Where memory
//! clocks up under traffic (DRAM or the fabric leaving a low-power state),
//! the idle reading is above it, and twice idle would place the knee past
//! where queueing has doubled the latency.

use serde::{Deserialize, Serialize};

/// The knee is where the latency reaches this multiple of unloaded: the
/// queue in front of the chase is as long as the chase's own service. In
/// a single-server queue (M/M/1) the time in the system is the service
/// time over `1 - utilisation`, so it doubles at half the memory's
/// bandwidth and grows without bound past it: the doubling marks where
/// queueing, not the memory's own latency, starts to rule a load.
pub const KNEE_FACTOR: f64 = 2.0;

/// The knee of the curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// Bandwidth of the traffic threads there, bytes per second.
    pub bandwidth_bytes_per_second: f64,
    /// Chase latency there: [`KNEE_FACTOR`] x unloaded (see the module), ns.
    pub latency_ns: f64,
}

/// The first place, in the order traffic was raised, where latency reaches
/// [`KNEE_FACTOR`] x unloaded (the least of `idle_ns` and every point):
/// interpolated (bandwidth and latency) between the point before and the
/// first point at or beyond; `None` when no point gets there. `points` are
/// (bandwidth bytes/s, latency ns), lightest first.
pub fn knee(idle_ns: f64, points: &[(f64, f64)]) -> Option<Knee> {
    let unloaded = points.iter().map(|p| p.1).fold(idle_ns, f64::min);
    let target = KNEE_FACTOR * unloaded;
    let at = points.iter().position(|&(_, ns)| ns >= target)?;
    let (bw, ns) = points[at];
    let (bw0, ns0) = if at == 0 {
        (0.0, idle_ns)
    } else {
        points[at - 1]
    };
    let t = if ns > ns0 {
        ((target - ns0) / (ns - ns0)).clamp(0.0, 1.0)
    } else {
        1.0
    };
    Some(Knee {
        bandwidth_bytes_per_second: bw0 + t * (bw - bw0),
        latency_ns: target,
    })
}

/// Repeats from memory agree to 2% (the engine's `PRECISION_MEMORY`, the
/// precision it repeats a measurement to reach): a fall in latency smaller
/// than this fraction of idle is noise. The run's own measure is each
/// point's repeat range ([`falls`]); this is the floor under it, what the
/// engine promised when the repeats happened to agree more closely. (The
/// analysis imports no engine: a test of `memlat loaded` holds the two equal.)
pub const FALL_TOLERANCE: f64 = 0.02;

/// The points (index into `medians`, lightest traffic first, idle at 0)
/// whose latency falls below one measured at lighter traffic. More traffic
/// only adds queueing in front of the chase, so a fall means one of the two
/// points caught a burst or a lull: both are returned, to be measured again.
/// A fall counts when it exceeds both points' repeat ranges (`ranges`, max
/// - min) and [`FALL_TOLERANCE`] of idle.
pub fn falls(medians: &[f64], ranges: &[f64]) -> Vec<usize> {
    let Some(&idle) = medians.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for i in 1..medians.len() {
        for j in 0..i {
            let allowed = ranges[i].max(ranges[j]).max(FALL_TOLERANCE * idle);
            if medians[i] < medians[j] - allowed {
                out.extend([j, i]);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fall_in_latency_as_traffic_rises_is_found() {
        // Issue 27's Zen 5 curve, latency over idle: 1.50, 1.60, 1.59, 1.71,
        // 0.73, 1.30, 0.86, 1.33 (idle 100 ns, ranges 1 ns).
        let medians = [100.0, 150.0, 160.0, 159.0, 171.0, 73.0, 130.0, 86.0, 133.0];
        let f = falls(&medians, &[1.0; 9]);
        assert!(f.contains(&5) && f.contains(&4) && f.contains(&7), "{f:?}");
        // 159 after 160 is within 2% of idle: not a fall.
        assert!(falls(&[100.0, 160.0, 159.0], &[1.0; 3]).is_empty());
        let rising = [100.0, 101.0, 105.0, 104.5, 140.0, 260.0];
        assert!(falls(&rising, &[1.0; 6]).is_empty());
        // A fall within the repeats' own range is noise.
        assert!(falls(&[100.0, 140.0, 120.0], &[1.0, 30.0, 1.0]).is_empty());
        assert!(falls(&[], &[]).is_empty());
    }

    #[test]
    fn the_knee_is_interpolated_where_latency_doubles() {
        let points = [(5e9, 110.0), (10e9, 130.0), (15e9, 180.0), (16e9, 260.0)];
        let k = knee(100.0, &points).unwrap();
        assert_eq!(k.latency_ns, 200.0);
        assert!(
            (k.bandwidth_bytes_per_second - 15.25e9).abs() < 1e3,
            "{k:?}"
        );
        assert_eq!(knee(100.0, &points[..3]), None);
        // Already past it at the lightest point: between idle and that point.
        let k = knee(100.0, &[(4e9, 300.0)]).unwrap();
        assert!((k.bandwidth_bytes_per_second - 2e9).abs() < 1e3);
    }

    #[test]
    fn memory_that_clocks_up_under_traffic_doubles_from_its_working_latency() {
        // Idle 130 ns at a low memory clock, 100 ns once traffic starts:
        // queueing doubles 100, not 130.
        let points = [(2e9, 100.0), (10e9, 150.0), (20e9, 250.0)];
        let k = knee(130.0, &points).unwrap();
        assert_eq!(k.latency_ns, 200.0);
        assert!((k.bandwidth_bytes_per_second - 15e9).abs() < 1e3, "{k:?}");
    }
}
