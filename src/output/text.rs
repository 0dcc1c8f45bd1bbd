//! `key : value` lines: seed 004's first lines (so its pandas reader still
//! works), then the latency and the conditions it was measured in.

use crate::analysis::distribution::Distribution;
use crate::engine::Measurement;

/// Lines of `key : value`, keys padded like seed 004's output.
pub struct KeyValues {
    lines: Vec<(String, String)>,
    separator: &'static str,
}

impl Default for KeyValues {
    fn default() -> KeyValues {
        KeyValues::with_separator(":")
    }
}

impl KeyValues {
    /// Lines of `key SEPARATOR value` (`=` for lines seed 004's reader must skip).
    pub fn with_separator(separator: &'static str) -> KeyValues {
        KeyValues {
            lines: Vec::new(),
            separator,
        }
    }

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
                out.push_str(&format!("{key:<width$} {} {value}", self.separator));
            }
            out.push('\n');
        }
        out
    }
}

/// Seed 004's lines: size, stride, distinct_blocks, accesses, last element,
/// one line per event with its count over the A accesses (`nan` where it
/// could not be counted, so pandas reads a number), a `cycles` line always
/// (counted where perf counts it, else ns x the core clock), then `OK`.
fn seed_lines(m: &Measurement, kv: &mut KeyValues) {
    kv.add("size", m.size)
        .add("stride", m.stride)
        .add("distinct_blocks", m.distinct_blocks)
        .add("accesses", m.accesses)
        .add("last element", m.last_element);
    // Seed 004 prints each event's count over the A accesses; ours is the
    // 2A-run count minus the A-run count, so fixed costs cancel.
    let total = |per_load: f64| {
        let v = per_load * m.accesses as f64;
        if v.is_finite() {
            format!("{}", v.round() as i64)
        } else {
            "nan".into()
        }
    };
    // Each event as the JSON has it: nan where it was not counted.
    for (name, per_load) in &m.events {
        match per_load {
            Some(v) => kv.add(name.clone(), total(*v)),
            None => kv.add(name.clone(), "nan"),
        };
    }
    // Seed 004's reader wants a cycles line: nan when it was not asked for,
    // as when it could not be counted; the estimate (ns x clock) under a
    // name that says so.
    if !m.events.contains_key("cycles") {
        kv.add("cycles", "nan");
    }
    if m.events.get("cycles").copied().flatten().is_none() {
        kv.add("cycles_estimated", total(m.cycles_per_load.median));
    }
    kv.word("OK");
}

/// Where the `cycles` line's count comes from, as a line seed 004's reader skips.
fn cycles_note(m: &Measurement) -> String {
    let counted = m.events.get("cycles").copied().flatten().is_some();
    if counted || m.cycle_source.counted() {
        format!("cycles_source = {} (counted)", m.cycle_source)
    } else {
        format!(
            "cycles_source = {} (ns x {:.3} GHz; not counted)",
            m.cycle_source, m.clock_ghz
        )
    }
}

/// `memlat run`'s text output: seed 004's lines first, then every figure as
/// `key : number`, then the facts that are words as `key = value`. Seed 004's
/// notebook reader (`key:value` lines into a pandas frame) thus reads numbers
/// only and averages them without tripping over words.
pub fn measurement(m: &Measurement) -> String {
    let mut kv = KeyValues::default();
    seed_lines(m, &mut kv);
    kv.add("chain_nodes", m.chain_nodes)
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
    kv.add("clock_ghz", format!("{:.3}", m.clock_ghz))
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
    kv.add(
        "huge_fraction",
        format!("{:.2}", m.page_backing.huge_fraction),
    )
    .add("cpu", m.cpu);
    if let Some(node) = m.node {
        kv.add("node", node);
    }
    let mut out = kv.render();
    let mut words = KeyValues::with_separator("=");
    words
        .add("pattern", m.pattern.name())
        .add("kernel", m.kernel.name())
        .add("cycle_source", m.cycle_source)
        .add("clock", &m.clock)
        .add("page_backing", &m.page_backing.obtained)
        .add("page_backing_requested", &m.page_backing.requested);
    if let Some(prefetchers) = &m.prefetchers {
        words.add("prefetchers", prefetchers);
    }
    out += &words.render();
    out += &cycles_note(m);
    out.push('\n');
    out
}

/// Seed 004's own view, for `ptr_chase`: its lines and `OK`, then one line
/// (skipped by its reader) saying where the cycle count came from.
pub fn seed_view(m: &Measurement) -> String {
    let mut kv = KeyValues::default();
    seed_lines(m, &mut kv);
    kv.render() + &cycles_note(m) + "\n"
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

/// `--distribution`'s lines (`key = value`, which seed 004's reader skips):
/// how loads were timed, one line per percentile, the modes, the stalls.
pub fn distribution(d: &Distribution) -> String {
    let mut kv = KeyValues::with_separator("=");
    for (key, value) in distribution_lines(d) {
        kv.add(key, value);
    }
    kv.render()
}

/// The distribution's figures as (key, sentence) pairs, in the order the
/// text prints them (`memlat report` tabulates the same).
pub fn distribution_lines(d: &Distribution) -> Vec<(&'static str, String)> {
    let mut lines = vec![(
        "distribution",
        format!(
            "{} loads in {:.0} ms by {}, {}; the timer's {:.2} ns a read subtracted (step {:.2} ns)",
            d.loads_timed,
            d.timeline_ms,
            d.timer,
            d.grouping(),
            d.timer_overhead_ns,
            d.timer_resolution_ns
        ),
    )];
    let p = &d.percentiles_ns;
    for (name, value) in [
        ("p50", p.p50),
        ("p90", p.p90),
        ("p99", p.p99),
        ("p99.9", p.p99_9),
        ("p99.99", p.p99_99),
    ] {
        lines.push((name, format!("{value:.2} ns")));
    }
    let modes: Vec<String> = d
        .modes
        .iter()
        .map(|m| format!("{:.1} ns ({:.1}%)", m.ns, m.share * 100.0))
        .collect();
    lines.push(("modes", modes.join(", ")));
    if let Some(folding) = d.folding() {
        lines.push(("folded", folding));
    }
    lines.push(("periodic_stalls", stalls_sentence(d)));
    lines
}

/// The periodic stalls, or why there are none.
fn stalls_sentence(d: &Distribution) -> String {
    use crate::analysis::distribution::spectrum::MIN_SEGMENTS;
    match (&d.periodic_stalls, &d.spectrum) {
        (Some(s), _) => format!(
            "every {:.1} ns ({:.1} kHz): {:.1}% of loads are slow, +{:.1} ns each; peak {:.0}x the spectrum around it",
            s.period_ns,
            1e6 / s.period_ns,
            s.share_of_loads * 100.0,
            s.added_ns,
            s.strength
        ),
        (None, Some(sp)) if sp.segments < MIN_SEGMENTS => format!(
            "not looked for: the timeline ({:.1} ms) is shorter than {MIN_SEGMENTS} segments of {:.1} ms (raise --distribution-ms)",
            d.timeline_ms,
            sp.segment_bins as f64 * sp.bin_ns / 1e6
        ),
        (None, Some(sp)) if sp.longer_period_ns.is_some() => format!(
            "none from {:.0} ns to {:.0} us; the slow loads do recur every {:.1} us, a longer period than looked for",
            1e9 / sp.band_hz[1],
            1e6 / sp.band_hz[0],
            sp.longer_period_ns.unwrap_or_default() / 1e3
        ),
        (None, Some(sp)) if sp.host_period_ns.is_some() => format!(
            "none from memory; the slow loads recur every {:.1} us but each stalls over {:.0} ns, longer than a DRAM refresh holds a load: the host's (a hypervisor tick or an interrupt)",
            sp.host_period_ns.unwrap_or_default() / 1e3,
            crate::analysis::distribution::spectrum::MAX_MEMORY_STALL_NS
        ),
        _ => "none: no period in the slow loads' timeline".to_string(),
    }
}
