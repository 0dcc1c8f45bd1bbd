//! Bandwidth: GB/s by level or size and threads, and its chart.

use serde_json::Value;

use super::parts::{Parts, read};
use crate::experiments::bandwidth::{BandwidthPoint, SweepInfo};
use crate::output::plot;
use crate::output::table::{Cell, Table};

/// The points as a table: level, size, threads, GB/s per operation, bytes per cycle.
pub fn bandwidth_table(points: &[BandwidthPoint]) -> Table {
    let mut t = Table::new(&[
        "<level",
        "size",
        "threads",
        "read GB/s",
        "write GB/s",
        "copy GB/s",
        "nt-write GB/s",
        "read B/cycle/thread",
    ]);
    for p in points {
        t.row(vec![
            p.level.clone().into(),
            crate::units::HumanBytes(p.size_bytes).to_string().into(),
            (p.threads as u64).into(),
            Cell::float(p.read_gb_per_s, 1),
            Cell::float(p.write_gb_per_s, 1),
            Cell::float(p.copy_gb_per_s, 1),
            Cell::opt(p.nt_write_gb_per_s, 1),
            Cell::opt(p.read_bytes_per_cycle, 1),
        ]);
    }
    t
}

/// `memlat bandwidth`: the points' table, with how each figure was made
/// (from the fields the JSON records; older files lack some).
pub(super) fn headline(value: &Value, problems: &mut Vec<String>) -> Option<Table> {
    let points = read::<Vec<BandwidthPoint>>(&value["points"], "bandwidth", problems)?;
    let mut t = bandwidth_table(&points);
    let kernel = value["isa_kernel"].as_str().unwrap_or("?");
    if let (Some(repeats), Some(ms), Some(counted)) = (
        value["repeats"].as_u64(),
        value["sample_ms"].as_u64(),
        value["bytes_counted"].as_str(),
    ) {
        t.note(format!(
            "{kernel} kernels; GB/s = 10^9 bytes a second, the median of {repeats} samples of {ms} ms (each figure's min and max are in the JSON); {counted}"
        ));
    }
    if let Some(ghz) = value["clock_ghz"].as_f64().filter(|g| *g > 0.0) {
        t.note(format!(
            "bytes per cycle at the {ghz:.3} GHz core clock memlat estimated"
        ));
    }
    let peak = &value["documented_peak"];
    if let (Some(core), Some(bytes), Some(loads), Some(width)) = (
        peak["core"].as_str(),
        peak["bytes_per_cycle"].as_f64(),
        peak["loads_per_cycle"].as_u64(),
        peak["vector_bytes"].as_u64(),
    ) {
        t.note(format!(
            "documented peak ({core}): {bytes:.0} bytes a cycle from L1 ({loads} x {width}-byte loads), the hardware's figure, not a measurement"
        ));
    }
    // A sweep's plateaus label its rows (older files have none).
    if let Ok(s) = <SweepInfo as serde::Deserialize>::deserialize(&value["sweep"]) {
        t.note(s.describe());
        t.note(
            "by default a sweep takes fewer and shorter samples than the level table (3 of 5 ms against 5 of 20 ms): each figure is noisier; `memlat bandwidth --sizes` measures chosen sizes longer",
        );
    }
    Some(t)
}

/// The GB/s chart, a sweep's plateaus shaded.
pub(super) fn chart(value: &Value, parts: &mut Parts) {
    // Points that do not read lost their headline already, with the reason.
    let Ok(points) = <Vec<BandwidthPoint> as serde::Deserialize>::deserialize(&value["points"])
    else {
        return;
    };
    let sweep: Option<SweepInfo> = serde::Deserialize::deserialize(&value["sweep"]).ok();
    if !points.is_empty() {
        parts.charts.push(plot::bandwidth::chart(
            &points,
            value["isa_kernel"].as_str().unwrap_or("?"),
            sweep.as_ref().map(|s| &s.plateaus),
        ));
    }
}
