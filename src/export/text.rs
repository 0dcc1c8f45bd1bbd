//! `key : value` lines: seed 004's first lines (so its pandas reader still
//! works), then the latency and the conditions it was measured in.

use crate::runner::Measurement;

/// Lines of `key : value`, keys padded like seed 004's output.
#[derive(Default)]
pub struct KeyValues {
    lines: Vec<(String, String)>,
}

impl KeyValues {
    /// Adds one line.
    pub fn add(&mut self, key: impl Into<String>, value: impl ToString) -> &mut Self {
        self.lines.push((key.into(), value.to_string()));
        self
    }

    /// Adds a line that is just `word` (seed 004's `OK`).
    pub fn word(&mut self, word: &str) -> &mut Self {
        self.lines.push((word.to_string(), String::new()));
        self
    }

    /// The lines, each ending in a newline.
    pub fn render(&self) -> String {
        let width = self
            .lines
            .iter()
            .map(|(k, _)| k.len())
            .max()
            .unwrap_or(0)
            .max(15);
        let mut out = String::new();
        for (key, value) in &self.lines {
            if value.is_empty() {
                out.push_str(key);
            } else {
                out.push_str(&format!("{key:<width$} : {value}"));
            }
            out.push('\n');
        }
        out
    }
}

/// `memlat run`'s text output.
pub fn measurement(m: &Measurement) -> String {
    let mut kv = KeyValues::default();
    kv.add("size", m.size)
        .add("stride", m.stride)
        .add("distinct_blocks", m.distinct_blocks)
        .add("accesses", m.accesses)
        .add("last element", m.last_element);
    // Seed 004 prints each event's count over the A accesses; ours is the
    // 2A-run count minus the A-run count, so fixed costs cancel.
    for (name, per_load) in &m.events {
        match per_load {
            Some(v) => kv.add(name.clone(), (v * m.accesses as f64).round() as i64),
            None => kv.add(name.clone(), "not counted"),
        };
    }
    kv.word("OK");
    kv.add("pattern", m.pattern.name())
        .add("kernel", m.kernel.name())
        .add("chain_nodes", m.chain_nodes)
        .add("repeats", m.repeats);
    for (key, s, digits) in [
        ("ns_per_load", &m.ns_per_load, 3),
        ("cycles_per_load", &m.cycles_per_load, 2),
    ] {
        kv.add(key, format!("{:.*}", digits, s.median))
            .add(format!("{key}_min"), format!("{:.*}", digits, s.min))
            .add(format!("{key}_max"), format!("{:.*}", digits, s.max))
            .add(format!("{key}_cv"), format!("{:.4}", s.cv));
    }
    kv.add("cycle_source", m.cycle_source)
        .add("clock", &m.clock)
        .add("clock_ghz", format!("{:.3}", m.clock_ghz))
        .add("clock_ghz_before", format!("{:.3}", m.clock_ghz_before))
        .add("clock_ghz_after", format!("{:.3}", m.clock_ghz_after))
        .add(
            "loop_overhead_cycles",
            format!("{:.2}", m.loop_overhead_cycles),
        )
        .add("loop_overhead_ns", format!("{:.3}", m.loop_overhead_ns))
        .add("unroll", m.unroll);
    for (name, per_load) in &m.events {
        if let Some(v) = per_load {
            kv.add(format!("{name}_per_load"), format!("{v:.4}"));
        }
    }
    kv.add("page_backing", &m.page_backing.obtained)
        .add("page_backing_requested", &m.page_backing.requested)
        .add(
            "huge_fraction",
            format!("{:.2}", m.page_backing.huge_fraction),
        )
        .add("cpu", m.cpu);
    if let Some(prefetchers) = &m.prefetchers {
        kv.add("prefetchers", prefetchers);
    }
    if let Some(node) = m.node {
        kv.add("node", node);
    }
    kv.render()
}

/// Wraps `text` at `width` columns, each line indented by `indent`.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            out += &format!("{indent}{line}\n");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line += word;
    }
    if !line.is_empty() {
        out += &format!("{indent}{line}\n");
    }
    out
}
