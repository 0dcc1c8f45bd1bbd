//! CSV: one row per repeat, the measurement's fields flattened beside the sample's.

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

/// Quotes a field if it needs it (RFC 4180).
pub fn field(value: &str) -> String {
    if value.contains([',', '"', '\n']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_string()
    }
}

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
    let mut header: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    header.extend(events.iter().map(|e| field(&format!("{e}_per_load"))));
    let mut out = header.join(",") + "\n";
    for m in measurements {
        for s in &m.samples {
            let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
            let mut row = vec![
                m.size.to_string(),
                m.stride.to_string(),
                m.pattern.name().to_string(),
                m.kernel.name().to_string(),
                m.line.to_string(),
                m.accesses.to_string(),
                m.distinct_blocks.to_string(),
                m.chain_nodes.to_string(),
                s.repeat.to_string(),
                s.seed.to_string(),
                s.ns_per_load.to_string(),
                s.cycles_per_load.to_string(),
                m.cycle_source.to_string(),
                m.clock.clone(),
                m.clock_ghz.to_string(),
                m.clock_ghz_before.to_string(),
                m.clock_ghz_after.to_string(),
                m.loop_overhead_cycles.to_string(),
                m.page_backing.obtained.clone(),
                m.page_backing.huge_fraction.to_string(),
                m.cpu.to_string(),
                m.node.map_or(String::new(), |n| n.to_string()),
                s.ns_a.to_string(),
                s.ns_2a.to_string(),
                opt(s.counter_scale),
            ];
            row.extend(
                events
                    .iter()
                    .map(|e| opt(s.events.get(e).copied().flatten())),
            );
            out += &(row.iter().map(|f| field(f)).collect::<Vec<_>>().join(",") + "\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_needed() {
        assert_eq!(field("thp"), "thp");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
