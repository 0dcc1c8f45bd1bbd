//! How clearly the data support a level: its points, its contrast with its
//! neighbours, the stability and spread of its repeats, its bracket's width.

use super::CurvePoint;
use super::Level;
use super::capacity::Capacity;
use super::segment::median;

/// Half the log-spread of a point's repeats.
pub(super) fn half_log_spread(p: &CurvePoint) -> f64 {
    0.5 * (p.ns_max / p.ns_min).ln()
}

/// Whether a point's repeats reach past the geometric midpoint towards `other_ns`.
pub(super) fn crosses(p: &CurvePoint, level_ns: f64, other_ns: f64) -> bool {
    let mid = (level_ns * other_ns).sqrt();
    if other_ns > level_ns {
        p.ns_max >= mid
    } else {
        p.ns_min <= mid
    }
}

/// 0..1 confidence of a level given its neighbours' latencies.
pub(super) fn confidence(
    points: &[CurvePoint],
    level: &Level,
    neighbours: &[f64],
    sigma: f64,
    capacity: Option<Capacity>,
) -> f64 {
    if !level.plateau {
        return 0.1;
    }
    let run = &points[level.start..level.end];
    let n = run.len() as f64;
    let support = 1.0 - 0.5f64.powf(n - 1.0);
    let y: Vec<f64> = run.iter().map(|p| p.ns.ln()).collect();
    let mean = y.iter().sum::<f64>() / n;
    let sd = (y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    let contrast = neighbours
        .iter()
        .map(|nb| {
            let z = (nb / level.ns).ln().abs() / (sd + sigma);
            1.0 - (-z / 3.0).exp()
        })
        .fold(1.0, f64::min);
    let unstable = run
        .iter()
        .filter(|p| neighbours.iter().any(|&nb| crosses(p, level.ns, nb)))
        .count() as f64
        / n;
    let stability = 1.0 - 0.7 * unstable;
    let spreads: Vec<f64> = run.iter().map(|p| (p.ns_max - p.ns_min) / p.ns).collect();
    let tight = 1.0 / (1.0 + median(&spreads));
    let bracket = capacity.map_or(1.0, |c| {
        let ratio = c.high as f64 / c.low.max(1) as f64;
        (1.0 - 0.2 * (ratio / 1.5).log2().max(0.0)).clamp(0.6, 1.0)
    });
    let c = support * contrast * stability * tight * bracket;
    (c * 100.0).round() / 100.0
}
