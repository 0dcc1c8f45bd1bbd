//! Seed 004's Problem 1 table (level, size, latency), filled from the data,
//! with confidence, spread and sysfs's claim beside each level.
//! It sits in output, above analysis: analysis gives plain data, output draws it.

use super::table::{Cell, Table};
use crate::analysis::detect::{DISAGREE_RATIO, DetectedLevel, Detection, ratio};
use crate::units::HumanBytes;

fn capacity_cell(level: &DetectedLevel) -> String {
    match level.size_bytes {
        Some(size) => HumanBytes(size).to_string(),
        None => "-".into(),
    }
}

/// What every repeat agrees the level serves: `at least..at most`.
fn bounds_cell(level: &DetectedLevel) -> String {
    let Some(b) = level.capacity_bounds else {
        return "-".into();
    };
    let side = |v: Option<u64>| v.map_or("?".to_string(), |v| HumanBytes(v).to_string());
    let pooled = level
        .capacity_bounds_sweeps
        .map_or(String::new(), |n| format!(" ({n} sweeps)"));
    format!(
        "{}..{}{pooled}",
        side(b.at_least_bytes),
        side(b.at_most_bytes)
    )
}

fn sysfs_cell(level: &DetectedLevel) -> String {
    match (level.sysfs_size_bytes, level.size_bytes) {
        (Some(claim), Some(size)) if ratio(claim, size) > DISAGREE_RATIO => {
            format!("{} (disagrees)", HumanBytes(claim))
        }
        (Some(claim), _) => HumanBytes(claim).to_string(),
        (None, Some(_)) => "none".into(),
        (None, None) => "-".into(),
    }
}

fn cycles_cell(level: &DetectedLevel) -> String {
    if level.latency_cycles > 0.0 {
        format!("{:.1}", level.latency_cycles)
    } else {
        "?".into()
    }
}

/// Seed 004's table: each level, its capacity and latency, with sysfs
/// beside; the levels' and the curve's notes under it.
pub fn levels_table(detection: &Detection) -> Table {
    let mut t = Table::new(&[
        "<level",
        "size",
        "serves (every repeat)",
        "ns",
        "cycles",
        "ns min..max",
        "confidence",
        "<sysfs says",
    ]);
    for level in &detection.levels {
        t.row(vec![
            level.name.clone().into(),
            capacity_cell(level).into(),
            bounds_cell(level).into(),
            Cell::float(level.latency_ns, 2),
            cycles_cell(level).into(),
            format!("{:.2}..{:.2}", level.spread_ns.0, level.spread_ns.1).into(),
            Cell::float(level.confidence, 2),
            sysfs_cell(level).into(),
        ]);
    }
    if detection.levels.is_empty() {
        t.note("(no levels)");
    }
    for level in &detection.levels {
        for note in &level.notes {
            t.note(format!("{}: {note}", level.name));
        }
    }
    for note in &detection.notes {
        t.note(format!("note: {note}"));
    }
    t
}

/// The levels table as text, under its heading.
pub fn table(detection: &Detection) -> String {
    format!(
        "levels found in the measured curve (sysfs shown beside, not used):\n\n{}",
        levels_table(detection).text()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sysfs_size_far_from_the_measured_one_is_marked() {
        let far = DetectedLevel {
            size_bytes: Some(16 << 20),
            sysfs_size_bytes: Some(1 << 20),
            ..Default::default()
        };
        assert!(
            sysfs_cell(&far).ends_with("(disagrees)"),
            "{}",
            sysfs_cell(&far)
        );
        let near = DetectedLevel {
            size_bytes: Some(1 << 20),
            sysfs_size_bytes: Some(1 << 20),
            ..Default::default()
        };
        assert!(!sysfs_cell(&near).contains("disagrees"));
    }
}
