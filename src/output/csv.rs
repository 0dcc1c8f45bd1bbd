//! CSV: one row per repeat, the measurement's fields flattened beside the sample's.

use super::table::{Cell, Table};
use crate::engine::Measurement;

const COLUMNS: &[&str] = &[
    "size",
    "stride",
    "pattern",
    "kernel",
    "line",
    "accesses",
    "distinct_blocks",
    "chain_nodes",
    "repeat",
    "seed",
    "ns_per_load",
    "cycles_per_load",
    "cycle_source",
    "clock",
    "clock_ghz",
    "clock_ghz_before",
    "clock_ghz_after",
    "loop_overhead_cycles",
    "page_backing",
    "huge_fraction",
    "cpu",
    "node",
    "ns_a",
    "ns_2a",
    "counter_scale",
];

/// Event columns present in any of the measurements, in name order.
fn event_columns(measurements: &[Measurement]) -> Vec<String> {
    let mut names: Vec<String> = measurements
        .iter()
        .flat_map(|m| m.events.keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Header plus one row per sample of every measurement.
pub fn samples(measurements: &[Measurement]) -> String {
    let events = event_columns(measurements);
    // Loads timed one by one (--distribution, --percentiles): a point's
    // figures, repeated on each of its rows.
    let percentiles = measurements.iter().any(|m| m.distribution.is_some());
    let mut columns: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    // An event named as a fixed column (`cycles`: cycles_per_load is the
    // figure memlat reports, counted or estimated) says it was counted.
    columns.extend(events.iter().map(|e| {
        let name = format!("{e}_per_load");
        if COLUMNS.contains(&name.as_str()) {
            format!("{e}_counted_per_load")
        } else {
            name
        }
    }));
    if percentiles {
        columns.extend(["p50_ns".to_string(), "p99_ns".to_string()]);
    }
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut t = Table::new(&names);
    let number = |v: f64| Cell::float(v, 6);
    for m in measurements {
        for s in &m.samples {
            let mut row: Vec<Cell> = vec![
                m.size.into(),
                m.stride.into(),
                m.pattern.name().into(),
                m.kernel.name().into(),
                m.line.into(),
                m.accesses.into(),
                m.distinct_blocks.into(),
                m.chain_nodes.into(),
                u64::from(s.repeat).into(),
                s.seed.into(),
                number(s.ns_per_load),
                number(s.cycles_per_load),
                m.cycle_source.to_string().into(),
                m.clock.clone().into(),
                number(m.clock_ghz),
                number(m.clock_ghz_before),
                number(m.clock_ghz_after),
                number(m.loop_overhead_cycles),
                m.page_backing.obtained.clone().into(),
                number(m.page_backing.huge_fraction),
                m.cpu.into(),
                m.node.map_or(Cell::Missing, |n| n.into()),
                number(s.ns_a),
                number(s.ns_2a),
                Cell::opt(s.counter_scale, 6),
            ];
            row.extend(
                events
                    .iter()
                    .map(|e| Cell::opt(s.events.get(e).copied().flatten(), 6)),
            );
            if percentiles {
                let p = m.distribution.as_ref().map(|d| d.percentiles_ns);
                row.push(Cell::opt(p.map(|p| p.p50), 6));
                row.push(Cell::opt(p.map(|p| p.p99), 6));
            }
            t.row(row);
        }
    }
    t.csv()
}

/// `results_{name}.csv`: level, iteration, size, ns, cycles, then the
/// conditions and one column per counted event (per load).
pub fn levels(rows: &[(String, Measurement)]) -> String {
    let mut events: Vec<String> = rows
        .iter()
        .flat_map(|(_, m)| m.events.keys().cloned())
        .collect();
    events.sort();
    events.dedup();
    let mut columns = vec![
        "<level".to_string(),
        "iteration".into(),
        "size".into(),
        "ns".into(),
        "cycles".into(),
        "<cycle_source".into(),
        "clock_ghz".into(),
        "seed".into(),
        "<pages".into(),
    ];
    columns.extend(events.iter().map(|e| format!("{e}_per_load")));
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut t = Table::new(&names);
    for (level, m) in rows {
        for s in &m.samples {
            let mut row: Vec<Cell> = vec![
                level.clone().into(),
                u64::from(s.repeat).into(),
                m.size.into(),
                Cell::float(s.ns_per_load, 6),
                Cell::float(s.cycles_per_load, 6),
                m.cycle_source.to_string().into(),
                Cell::float(s.clock_ghz, 6),
                s.seed.into(),
                m.page_backing.obtained.clone().into(),
            ];
            row.extend(
                events
                    .iter()
                    .map(|e| Cell::opt(s.events.get(e).copied().flatten(), 6)),
            );
            t.row(row);
        }
    }
    t.csv()
}
