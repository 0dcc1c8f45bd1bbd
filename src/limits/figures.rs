//! One rule for every number a result file holds, whichever reader reads
//! it: finite (JSON has no NaN; a string such as `"NaN"` or `""` where a
//! figure belongs is refused), and within what a machine can produce for
//! its field, named by its key: a latency between 0 and a second per load,
//! a size within [`super::MAX_SIZE`], a count a whole number, a share
//! between 0 and 1, and any other figure within [`MAX_FIGURE`]. A refusal
//! names the field (`points[3].ns_per_load.median`).

use std::borrow::Cow;
use std::cell::RefCell;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

/// Any figure memlat writes lies within ±this (a seed excepted: any 64-bit
/// number): 10^15 is a petabyte, or 11 days in ns.
pub const MAX_FIGURE: f64 = 1e15;

/// A load's latency at most, ns: one second is no memory latency (a page
/// fault served from a disk takes milliseconds).
pub const MAX_NS: f64 = 1e9;

/// A load's latency at most, core cycles: a second at 100 GHz.
pub const MAX_CYCLES: f64 = 1e11;

/// A core clock at most, GHz (estimates of a clock under a hypervisor can
/// be far off, never this far).
pub const MAX_GHZ: f64 = 1000.0;

/// CPUs and NUMA nodes are numbered below this (Linux's NR_CPUS is at
/// most 8192).
pub const MAX_CPUS: u64 = 1 << 16;

/// Pages a TLB sweep measures at most: 16 Mi pages is 64 GiB of 4 KiB
/// pages, thousands of times the largest TLB's reach.
pub const MAX_TLB_PAGES: u64 = 1 << 24;

/// What a field's number must be.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Rule {
    /// Within ±[`MAX_FIGURE`].
    Any,
    /// At least 0, at most [`MAX_FIGURE`].
    NonNegative,
    /// A seed: any whole number a u64 holds.
    Seed,
    /// Bytes: whole, 0 to [`super::MAX_SIZE`].
    Bytes,
    /// A count: whole, 0 to the bound.
    Count(u64),
    /// A latency in ns: 0 to [`MAX_NS`].
    Ns,
    /// A difference of latencies in ns: ±[`MAX_NS`].
    NsDifference,
    /// A latency in cycles: 0 to [`MAX_CYCLES`].
    Cycles,
    /// A difference of cycles: ±[`MAX_CYCLES`].
    CyclesDifference,
    /// A clock in GHz: 0 to [`MAX_GHZ`].
    Ghz,
    /// A share: 0 to 1.
    Share,
}

/// Fields that only ever hold a figure (or null): a string there is refused.
const FIGURES_ONLY: &[&str] = &[
    "ns",
    "ns_per_load",
    "cycles_per_load",
    "median",
    "min",
    "max",
    "mean",
    "p5",
    "p50",
    "p95",
    "p99",
    "hit_ns",
    "miss_ns",
    "lone_ns",
    "pair_ns",
    "second_ns",
    "packed_ns",
    "edge_ns",
    "edge_miss_ns",
    "ns_by_chain",
    "ns_by_lines",
    "matrix_ns",
    "min_ns",
    "median_ns",
    "memory_ns",
    "latency_ns",
    "translation_ns",
    "size",
    "size_bytes",
    "page_bytes",
    "stride",
    "repeats",
    "iterations",
    "clock_ghz",
    "accesses",
    "samples_ns",
];

/// The rule for a number under `key` (its object's `parent` key, for the
/// fields of a summary: `ns_per_load.median`).
fn rule(key: &str, parent: &str) -> Rule {
    const SUMMARY: &[&str] = &[
        "median", "min", "max", "mean", "p5", "p50", "p95", "p99", "p999", "mad", "stddev",
    ];
    if SUMMARY.contains(&key) {
        match parent {
            "ns" | "ns_per_load" | "latency_ns" => return Rule::Ns,
            "cycles" | "cycles_per_load" => return Rule::Cycles,
            _ => {}
        }
    }
    match key {
        // The slow loads' spectrum: [frequency Hz, strength] pairs.
        "points" if parent == "spectrum" => Rule::NonNegative,
        "seed" => Rule::Seed,
        "size" | "sizes" | "refined_sizes" | "remeasured_sizes" | "from" | "to" | "line"
        | "unit" | "stride" | "hit_size" | "miss_size" | "distance" => Rule::Bytes,
        "pages" => Rule::Count(MAX_TLB_PAGES),
        "cpu" | "cpus" | "node" | "nodes" | "from_nodes" | "numa_nodes" | "chaser" | "threads" => {
            Rule::Count(MAX_CPUS)
        }
        "accesses" => Rule::Count(super::MAX_ACCESSES),
        "sample_ms" => Rule::Count(super::MAX_SAMPLE_MS),
        "ways" | "claimed_ways" => Rule::Count(super::MAX_WAYS),
        "chains" | "saturation_chains" => Rule::Count(1024),
        "index" | "start_index" | "end_index" | "intervals" | "iterations" | "readings"
        | "entries" | "entries_bracket" | "lines" | "nops" | "nops_from" | "nops_to" | "pass"
        | "passes" | "repeat" | "rounds" | "trips" | "unroll" | "pairs_measured"
        | "remeasured_points" | "chain_nodes" | "distinct_blocks" | "last_element"
        | "warmup_loads" | "delay" | "points" => Rule::Count(MAX_FIGURE as u64),
        "translation_ns" | "miss_cost_ns" | "beyond_all_ns" | "spread_ns" | "spread_ns_by_pass"
        | "loop_overhead_ns" => Rule::NsDifference,
        "loop_overhead_cycles" | "loop_overhead_per_iteration_cycles" | "miss_cost_cycles" => {
            Rule::CyclesDifference
        }
        "steal" | "steal_fraction" | "steal_mean" | "huge_fraction" | "duty" | "confidence"
        | "served" => Rule::Share,
        "ns_a"
        | "ns_2a"
        | "seconds"
        | "total_seconds"
        | "t_s"
        | "wall_s"
        | "cpu_s"
        | "measuring_s"
        | "measuring_cpu_s"
        | "duration_s"
        | "interval_s"
        | "estimated_seconds"
        | "spent_ms"
        | "cpu_ms"
        | "cv"
        | "repeat_cv"
        | "ratio"
        | "ratios"
        | "ci_low"
        | "ci_high"
        | "canary_ratio"
        | "parallelism"
        | "saturation_parallelism"
        | "issue_width_at_least"
        | "read_bytes_per_cycle"
        | "bytes_per_second"
        | "loads_per_second"
        | "bandwidth_bytes_per_second"
        | "throughput_mib_s" => Rule::NonNegative,
        k if k.ends_with("_bytes") => Rule::Bytes,
        k if k.ends_with("_ghz") || k == "ghz" => Rule::Ghz,
        k if k == "ns" || k.ends_with("_ns") || k.starts_with("ns_") => Rule::Ns,
        k if k.contains("cycles") => Rule::Cycles,
        _ => Rule::Any,
    }
}

/// Why `n` breaks `rule`, or `None` when it keeps it.
fn broken(rule: Rule, n: &Number) -> Option<String> {
    let x = n.as_f64().unwrap_or(f64::NAN);
    let within = |lo: f64, hi: f64, what: &str| {
        (!(lo..=hi).contains(&x)).then(|| format!("{n} is not {what} ({lo} to {hi})"))
    };
    let whole = |max: u64, what: &str| match n.as_u64() {
        Some(v) if v <= max => None,
        _ => Some(format!(
            "{n} is not {what} (a whole number from 0 to {max})"
        )),
    };
    match rule {
        Rule::Any => within(-MAX_FIGURE, MAX_FIGURE, "a figure a machine gives"),
        Rule::NonNegative => within(0.0, MAX_FIGURE, "a figure a machine gives"),
        Rule::Seed => whole(u64::MAX, "a seed"),
        Rule::Bytes => whole(super::MAX_SIZE, "a size in bytes memlat measures"),
        Rule::Count(max) => whole(max, "a count"),
        Rule::Ns => within(0.0, MAX_NS, "a latency in ns"),
        Rule::NsDifference => within(-MAX_NS, MAX_NS, "a difference of latencies in ns"),
        Rule::Cycles => within(0.0, MAX_CYCLES, "a latency in cycles"),
        Rule::CyclesDifference => within(-MAX_CYCLES, MAX_CYCLES, "a difference of cycles"),
        Rule::Ghz => within(0.0, MAX_GHZ, "a clock in GHz"),
        Rule::Share => within(0.0, 1.0, "a share"),
    }
}

/// Checks every number in `value` by its field's rule: `Err((field, why))`
/// names the first that breaks it. Maps of names (a sweep's `events`, whose
/// keys are event names) are checked as any figure.
pub fn check(value: &Value) -> Result<(), (String, String)> {
    check_json(value)
}

/// [`check`] of any JSON `deserializer`: a tree already parsed, or the text
/// itself (`serde_json::Deserializer::from_str`), read as it streams, so a
/// file is checked without building its tree. A syntax error is given as
/// the field `JSON`.
pub fn check_json<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), (String, String)> {
    let refusal = RefCell::new(None);
    let seed = Node {
        at: &At::Root,
        key: "",
        parent: "",
        refusal: &refusal,
    };
    let result = seed.deserialize(deserializer);
    match (refusal.into_inner(), result) {
        (Some(r), _) => Err(r),
        (None, Err(e)) => Err(("JSON".into(), e.to_string())),
        (None, Ok(())) => Ok(()),
    }
}

/// Where a node lies: built as the walk descends, written out only for a refusal.
enum At<'a> {
    Root,
    Key(&'a At<'a>, &'a str),
    Index(&'a At<'a>, usize),
}

impl At<'_> {
    fn render(&self) -> String {
        match self {
            At::Root => String::new(),
            At::Key(up, key) => match up.render() {
                up if up.is_empty() => (*key).to_string(),
                up => format!("{up}.{key}"),
            },
            At::Index(up, k) => format!("{}[{k}]", up.render()),
        }
    }
}

/// One node of the walk: its place, its field's name and its object's.
struct Node<'a> {
    at: &'a At<'a>,
    key: &'a str,
    parent: &'a str,
    refusal: &'a RefCell<Option<(String, String)>>,
}

impl Node<'_> {
    fn refuse<E: de::Error>(&self, why: String) -> E {
        let field = self.at.render();
        let message = format!("{field}: {why}");
        *self.refusal.borrow_mut() = Some((field, why));
        E::custom(message)
    }

    fn number<E: de::Error>(&self, n: Number) -> Result<(), E> {
        match broken(rule(self.key, self.parent), &n) {
            Some(why) => Err(self.refuse(why)),
            None => Ok(()),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.number(Number::from(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.number(Number::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        match Number::from_f64(v) {
            Some(n) => self.number(n),
            None => Err(self.refuse(format!("{v} is not a finite number"))),
        }
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        if FIGURES_ONLY.contains(&self.key) {
            return Err(self.refuse(format!(
                "{} is not a figure (a number is expected)",
                crate::printable::quoted(s, 40)
            )));
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        // An array's numbers are its field's (`sizes`, `ns_by_lines`).
        let mut k = 0;
        loop {
            let at = At::Index(self.at, k);
            let node = Node {
                at: &at,
                key: self.key,
                parent: self.parent,
                refusal: self.refusal,
            };
            if seq.next_element_seed(node)?.is_none() {
                return Ok(());
            }
            k += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // An `events` map's keys are names, not fields.
        let named = self.key == "events";
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let at = At::Key(self.at, &key);
            let (k, p) = if named { ("", "") } else { (&*key, self.key) };
            map.next_value_seed(Node {
                at: &at,
                key: k,
                parent: p,
                refusal: self.refusal,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(v: Value) -> String {
        check(&v).unwrap_err().0
    }

    #[test]
    fn a_spectrums_points_are_frequencies_not_counts() {
        // characterize's distribution stage: [Hz, strength] pairs.
        let v = json!({"distribution": {"spectrum": {"points": [[50048.828125, 3.2]]}}});
        assert_eq!(check(&v), Ok(()));
        assert_eq!(
            field(json!({"distribution": {"spectrum": {"points": [[-1.0, 3.2]]}}})),
            "distribution.spectrum.points[0][0]"
        );
    }

    #[test]
    fn every_absurd_figure_is_refused_by_its_field() {
        assert_eq!(
            field(json!({"levels": [{"cycles": {"median": -1.0}}]})),
            "levels[0].cycles.median"
        );
        assert_eq!(
            field(json!({"levels": [{"ns_per_load": 1.2e29}]})),
            "levels[0].ns_per_load"
        );
        assert_eq!(
            field(json!({"ns_by_lines": [1.0, 3.4e38]})),
            "ns_by_lines[1]"
        );
        assert_eq!(
            field(json!({"points": [{"pages": 4294967296u64}]})),
            "points[0].pages"
        );
        assert_eq!(field(json!({"packed_ns": -9.2e18})), "packed_ns");
        assert_eq!(
            field(json!({"matrix_ns": [[null, "NaN"]]})),
            "matrix_ns[0][1]"
        );
        assert_eq!(field(json!({"ns": [1.0, ""]})), "ns[1]");
        assert_eq!(field(json!({"p95": 1e300})), "p95");
        // The text is checked as it streams, by the same rule.
        let text = r#"{"a": [{"b": 1}, {"cycles": {"median": -1}}]}"#;
        let streamed = check_json(&mut serde_json::Deserializer::from_str(text)).unwrap_err();
        assert_eq!(streamed.0, "a[1].cycles.median");
        // What machines do give is kept: a seed of 64 bits, a negative
        // translation cost, an event's count under any name.
        check(&json!({
            "seed": u64::MAX, "translation_ns": -0.03, "loop_overhead_cycles": -0.004,
            "events": {"cycles": 4.0, "ns": -2.0}, "pages": "thp", "clock_ghz": 22.7,
            "ns_per_load": {"median": 1.3, "min": 0.17}, "size": 1u64 << 40
        }))
        .unwrap();
    }
}
