//! Seed 004's Problem 1 table (level, size, latency), filled from the data,
//! with confidence, spread and sysfs's claim beside each level.

use super::{DISAGREE_RATIO, DetectedLevel, Detection, ratio};
use crate::units::HumanBytes;

fn capacity_cell(level: &DetectedLevel) -> String {
    match level.size_bytes {
        Some(size) => HumanBytes(size).to_string(),
        None => "-".into(),
    }
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

/// Seed 004's table: each level, its capacity and latency, with sysfs beside.
pub fn table(detection: &Detection) -> String {
    let mut out =
        String::from("levels found in the measured curve (sysfs shown beside, not used):\n\n");
    out += &format!(
        "{:<8} {:>11} {:>10} {:>8} {:>18} {:>10}  {}\n",
        "level", "size", "ns", "cycles", "ns min..max", "confidence", "sysfs says"
    );
    for level in &detection.levels {
        out += &format!(
            "{:<8} {:>11} {:>10.2} {:>8} {:>18} {:>10.2}  {}\n",
            level.name,
            capacity_cell(level),
            level.latency_ns,
            cycles_cell(level),
            format!("{:.2}..{:.2}", level.spread_ns.0, level.spread_ns.1),
            level.confidence,
            sysfs_cell(level),
        );
    }
    if detection.levels.is_empty() {
        out += "(no levels)\n";
    }
    let mut first = true;
    for level in &detection.levels {
        for note in &level.notes {
            if first {
                out.push('\n');
                first = false;
            }
            out += &format!("{}: {note}\n", level.name);
        }
    }
    if !detection.notes.is_empty() {
        out.push('\n');
        for note in &detection.notes {
            out += &format!("note: {note}\n");
        }
    }
    out
}
