//! The curve as detection reads it: sorted by size, one point per size
//! (repeated sizes merged), disturbed repeats and impossible values set aside.

use super::{BOGUS_FRACTION, CurvePoint};
use crate::analysis::stats::median;

/// Points sorted by size with one point per size and sane values.
pub(super) fn clean(curve: &[CurvePoint], notes: &mut Vec<String>) -> Vec<CurvePoint> {
    let mut points: Vec<CurvePoint> = curve
        .iter()
        .filter(|p| p.size_bytes > 0 && p.ns.is_finite() && p.ns > 0.0)
        .map(|p| CurvePoint {
            ns_min: if p.ns_min.is_finite() && p.ns_min >= BOGUS_FRACTION * p.ns {
                p.ns_min.min(p.ns)
            } else {
                p.ns
            },
            ns_max: if p.ns_max.is_finite() {
                p.ns_max.max(p.ns)
            } else {
                p.ns
            },
            ..*p
        })
        .collect();
    let bogus = curve
        .iter()
        .filter(|p| p.ns > 0.0 && (p.ns_min.is_nan() || p.ns_min < BOGUS_FRACTION * p.ns))
        .count();
    if bogus > 0 {
        notes.push(format!(
            "{bogus} point(s) had a repeat below a tenth of their median (a disturbed timing, not a latency); left out of the spreads"
        ));
    }
    let dropped = curve.len() - points.len();
    if dropped > 0 {
        notes.push(format!(
            "{dropped} point(s) without a positive latency were left out"
        ));
    }
    points.sort_by_key(|p| p.size_bytes);
    let mut merged: Vec<CurvePoint> = Vec::new();
    let mut i = 0;
    while i < points.len() {
        let same: Vec<CurvePoint> = points[i..]
            .iter()
            .take_while(|p| p.size_bytes == points[i].size_bytes)
            .copied()
            .collect();
        i += same.len();
        let ns: Vec<f64> = same.iter().map(|p| p.ns).collect();
        let cycles: Vec<f64> = same.iter().map(|p| p.cycles).collect();
        merged.push(CurvePoint {
            size_bytes: same[0].size_bytes,
            ns: median(&ns),
            ns_min: same.iter().map(|p| p.ns_min).fold(f64::INFINITY, f64::min),
            ns_max: same.iter().map(|p| p.ns_max).fold(0.0, f64::max),
            cycles: median(&cycles),
        });
    }
    merged
}
