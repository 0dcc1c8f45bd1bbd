//! The loaded knee (`memlat loaded`, read by `analysis::loaded::knee`):
//! the chase latency as traffic threads load memory, lightest first. Each
//! point's latency is memory's own times the queueing in front of it,
//! `1 + k u / (1 - u)` at a share `u` of the peak bandwidth, with `k` set
//! so the latency doubles at the row's knee; where memory clocks up under
//! traffic, the idle reading is that much above the latency once traffic runs.

use memlat::analysis::loaded;

use super::every_row;
use super::model::{self, Noise};
use super::rows::Row;

/// The shares of the peak the traffic reaches, lightest first (a delay
/// sweep from none to heavy, read back in order of bandwidth).
const SHARES: [f64; 14] = [
    0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95,
];

/// Idle latency and the (bandwidth bytes/s, latency ns) points.
pub fn curve(row: &Row, seed: u64) -> (f64, Vec<(f64, f64)>) {
    let mut noise = Noise::new(seed ^ 0x0010_ADED);
    let d = model::draw(row, &mut noise);
    let m = row.dram;
    let k = (1.0 - m.knee_of_peak) / m.knee_of_peak;
    // A disturbance only adds time.
    let idle = d.memory_ns * m.clocks_up * (1.0 + 0.01 * noise.unit().abs());
    let points = SHARES
        .iter()
        .map(|&u| {
            let u = noise.jitter(u, 0.02).min(0.99);
            let ns = d.memory_ns * (1.0 + k * u / (1.0 - u)) * (1.0 + 0.01 * noise.unit().abs());
            (u * m.peak_gbps * 1e9, ns)
        })
        .collect();
    (idle, points)
}

#[test]
fn the_loaded_knee_where_queueing_doubles_the_latency() {
    every_row("loaded knee", |row, seed| {
        let (idle, points) = curve(row, seed);
        let truth = row.dram.knee_of_peak * row.dram.peak_gbps * 1e9;
        // Within one measured point of the truth: the unloaded reference is
        // the lightest point, which already holds a little queueing, and the
        // knee is interpolated between points.
        let mut bw: Vec<f64> = points.iter().map(|p| p.0).collect();
        bw.sort_by(f64::total_cmp);
        let at = bw.iter().rposition(|&b| b <= truth).unwrap_or(0);
        let below = bw[at.saturating_sub(1)];
        let above = bw.get(at + 2).copied().unwrap_or(f64::INFINITY);
        match loaded::knee(idle, &points) {
            Some(k) if (below..=above).contains(&k.bandwidth_bytes_per_second) => Ok(()),
            other => Err(format!(
                "knee {other:?}, want {:.1} GB/s (between {:.1} and {:.1}), idle {idle:.0} ns",
                truth / 1e9,
                below / 1e9,
                above / 1e9
            )),
        }
    });
}
