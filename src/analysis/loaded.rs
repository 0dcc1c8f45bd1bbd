//! The knee of a latency-vs-bandwidth curve (`memlat loaded`): where the
//! chase latency reaches twice its idle value, as traffic grows.

use serde::{Deserialize, Serialize};

/// The knee is where the latency reaches this multiple of idle.
pub const KNEE_FACTOR: f64 = 2.0;

/// The knee of the curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// Bandwidth of the traffic threads there, bytes per second.
    pub bandwidth_bytes_per_second: f64,
    /// Chase latency there: [`KNEE_FACTOR`] x idle, ns.
    pub latency_ns: f64,
}

/// The first place, in the order traffic was raised, where latency reaches
/// [`KNEE_FACTOR`] x `idle_ns`: interpolated (bandwidth and latency) between
/// the point before and the first point at or beyond; `None` when no point
/// gets there. `points` are (bandwidth bytes/s, latency ns), lightest first.
pub fn knee(idle_ns: f64, points: &[(f64, f64)]) -> Option<Knee> {
    let target = KNEE_FACTOR * idle_ns;
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
