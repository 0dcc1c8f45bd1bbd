//! Charts of a sweep (seed 004 sections 2-4): latency against working-set size
//! on a log axis, one line per stride or pattern; the bandwidth view (line
//! bytes per load over cycles per load); counted events per load. Detected
//! levels are drawn as bands.

use super::{Band, Chart, Marker, SecondaryAxis, Series};
use crate::analysis::detect::Detection;
use crate::analysis::stats::Summary;
use crate::engine::{CycleSource, Measurement};
use crate::units::HumanBytes;

use crate::experiments::sweep::SweepResult;

/// What a chart shows on its y axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metric {
    /// Nanoseconds per load (median over repeats).
    Ns,
    /// Cycles per load (median over repeats).
    Cycles,
    /// Line bytes per cycle (seed 004's bandwidth view), with GB/s beside.
    Bandwidth,
    /// A counted perf event per load (e.g. `L1-dcache-load-misses`).
    Event(String),
}

impl Metric {
    /// `ns`, `cycles`, `bandwidth` (or `bw`), else an event name.
    pub fn parse(text: &str) -> Metric {
        match text.trim() {
            "ns" | "latency" => Metric::Ns,
            "cycles" => Metric::Cycles,
            "bandwidth" | "bw" => Metric::Bandwidth,
            other => Metric::Event(other.to_string()),
        }
    }

    /// Latency, bandwidth, then every event counted at some point.
    pub fn defaults(result: &SweepResult) -> Vec<Metric> {
        let mut metrics = vec![Metric::Ns, Metric::Bandwidth];
        metrics.extend(counted_events(result).into_iter().map(Metric::Event));
        metrics
    }

    /// The metric's value at one point; `None` when it was not measured, or
    /// for a latency that is not positive (a disturbed measurement, which
    /// cannot be drawn as a time). Without a trustworthy clock (`cycles_trusted`
    /// false) cycles are left out and bandwidth is in GB/s, not bytes per cycle.
    pub fn value(&self, m: &Measurement, cycles_trusted: bool) -> Option<f64> {
        let latency = |v: f64| (v > 0.0).then_some(v);
        let v = match self {
            Metric::Ns => latency(m.ns_per_load.median)?,
            Metric::Cycles if !cycles_trusted => return None,
            Metric::Cycles => latency(m.cycles_per_load.median)?,
            Metric::Bandwidth if !cycles_trusted => m.line as f64 / latency(m.ns_per_load.median)?,
            Metric::Bandwidth => m.line as f64 / latency(m.cycles_per_load.median)?,
            Metric::Event(name) => m.events.get(name).copied().flatten()?,
        };
        v.is_finite().then_some(v)
    }
}

/// Events with a count at some point, in name order.
pub fn counted_events(result: &SweepResult) -> Vec<String> {
    let mut names: Vec<String> = result
        .points
        .iter()
        .flat_map(|m| m.events.iter())
        .filter(|(_, v)| v.is_some())
        .map(|(k, _)| k.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Whether every point's cycles can be trusted: counted, given with --ghz, or
/// estimated from a clock physics does not rule out.
pub fn cycles_trusted(result: &SweepResult) -> bool {
    cycles_distrusted(result).is_none()
}

/// Why the points' cycles are not to be read, when they are not: the clock
/// estimate's verdict, judged again by today's rule; for files without one
/// (memlat 0.1.0), a clock no shipping core runs at, or an L1 hit under 2 cycles.
pub fn cycles_distrusted(result: &SweepResult) -> Option<String> {
    if let Some(why) = result.points.iter().find_map(|m| {
        (m.cycle_source == CycleSource::Estimated)
            .then(|| match &m.clock_method {
                Some(c) => c.rejudged(),
                None => crate::platform::clock::physics::outside_shipping_cores(m.clock_ghz),
            })
            .flatten()
    }) {
        return Some(why);
    }
    let l1_size = result
        .sysfs_caches
        .first()
        .map_or(16 << 10, |c| c.size_bytes);
    result
        .curve()
        .first()
        .filter(|p| p.size_bytes <= l1_size)
        .and_then(|p| crate::platform::clock::l1_cycles_suspect(p.cycles))
}

/// Median core clock over the points, GHz.
pub fn median_clock(result: &SweepResult) -> Option<f64> {
    let clocks: Vec<f64> = result
        .points
        .iter()
        .map(|m| m.clock_ghz)
        .filter(|g| g.is_finite() && *g > 0.0)
        .collect();
    Summary::of(&clocks).map(|s| s.median)
}

/// p50 to p99 of each line's points that carry a distribution
/// (`memlat sweep --percentiles`), in the line's colour.
fn percentile_envelopes(result: &SweepResult) -> Vec<super::Envelope> {
    result
        .series()
        .into_iter()
        .enumerate()
        .map(|(index, key)| super::Envelope {
            series: index,
            points: result
                .series_points(key)
                .into_iter()
                .filter_map(|m| {
                    let p = &m.distribution.as_ref()?.percentiles_ns;
                    Some((m.size as f64, p.p50, p.p99))
                })
                .collect(),
        })
        .filter(|e| !e.points.is_empty())
        .collect()
}

/// One chart per metric.
pub fn charts(result: &SweepResult, metrics: &[Metric], bands: bool) -> Vec<Chart> {
    let detection = match (&result.detection, bands) {
        (_, false) => None,
        (Some(d), true) => Some(d.clone()),
        (None, true) => result.detect(),
    };
    metrics
        .iter()
        .map(|metric| chart(result, metric, detection.as_ref()))
        .collect()
}

/// The chart of `metric`, with `detection`'s levels as bands.
pub fn chart(result: &SweepResult, metric: &Metric, detection: Option<&Detection>) -> Chart {
    let trusted = cycles_trusted(result);
    let series = result
        .series()
        .into_iter()
        .map(|key| Series {
            label: key.label(),
            points: result
                .series_points(key)
                .into_iter()
                .filter_map(|m| Some((m.size as f64, metric.value(m, trusted)?)))
                .collect(),
        })
        .collect();
    let ghz = median_clock(result).filter(|_| trusted);
    let line = result.points.first().map_or(64, |m| m.line);
    let (title, y_label, y2) = match metric {
        Metric::Ns => (
            "Load latency by working-set size (pointer chasing)".to_string(),
            "ns per load".to_string(),
            ghz.map(|g| SecondaryAxis {
                label: format!("cycles per load (at {g:.2} GHz)"),
                factor: g,
            }),
        ),
        Metric::Cycles => (
            "Load latency in core cycles by working-set size".to_string(),
            "cycles per load".to_string(),
            None,
        ),
        Metric::Bandwidth if !trusted => (
            format!("Bandwidth view: {line} bytes (one line) per load / ns per load"),
            "GB/s (no bytes per cycle: the core clock estimate is suspect)".to_string(),
            None,
        ),
        Metric::Bandwidth => (
            format!("Bandwidth view: {line} bytes (one line) per load / cycles per load"),
            "bytes per cycle".to_string(),
            ghz.map(|g| SecondaryAxis {
                label: format!("GB/s (at {g:.2} GHz)"),
                factor: g,
            }),
        ),
        Metric::Event(name) => (
            format!("{name} per load by working-set size"),
            format!("{name} per load"),
            None,
        ),
    };
    let left_out = result
        .points
        .iter()
        .filter(|m| metric.value(m, trusted).is_none())
        .count();
    let envelopes = match metric {
        Metric::Ns => percentile_envelopes(result),
        _ => Vec::new(),
    };
    let mut footnote = footnote(result, ghz);
    if !envelopes.is_empty() {
        footnote += "; shaded: p50 to p99 of loads timed one by one (--percentiles)";
    }
    if let (Some(_), Some(key)) = (detection, result.detection_series()) {
        footnote += &format!("; levels detected from the {} curve", key.label());
    }
    if left_out > 0 {
        footnote += &format!("; {left_out} point(s) without a value left out");
    }
    Chart {
        title,
        x_label: "working-set size (buffer bytes)".into(),
        y_label,
        x_log: true,
        x_bytes: true,
        // Latencies from L1 to DRAM differ 100-fold: on a linear axis the
        // cache levels would lie flat along zero.
        y_log: matches!(metric, Metric::Ns | Metric::Cycles),
        series,
        envelopes,
        bands: detection.map_or_else(Vec::new, |d| level_bands(d, metric)),
        markers: result
            .sysfs_caches
            .iter()
            .map(|c| Marker {
                at: c.size_bytes as f64,
                label: format!("sysfs {} {}", c.name(), HumanBytes(c.size_bytes)),
            })
            .collect(),
        y2,
        footnote: Some(footnote),
    }
}

/// Each detected level as a band from the previous level's capacity to its
/// own (memory: to the end), labelled with its name, size and latency, and
/// its capacity bounds where it has them.
pub fn level_bands(detection: &Detection, metric: &Metric) -> Vec<Band> {
    let mut bands = Vec::new();
    let mut from = 0.0;
    for level in &detection.levels {
        let to = level.size_bytes.map_or(f64::INFINITY, |s| s as f64);
        let latency = match metric {
            Metric::Cycles => format!("{:.1} cycles", level.latency_cycles),
            _ => format!("{:.1} ns", level.latency_ns),
        };
        let name = match level.size_bytes {
            Some(size) => format!("{} {}", level.name, HumanBytes(size)),
            None => level.name.clone(),
        };
        let mut label = format!("{name}\n{latency}");
        // What every repeat agrees the level serves, where measured.
        if let Some(b) = level.capacity_bounds {
            let side = |v: Option<u64>| v.map_or("?".to_string(), |v| HumanBytes(v).to_string());
            label += &format!("\n{}..{}", side(b.at_least_bytes), side(b.at_most_bytes));
        }
        bands.push(Band { from, to, label });
        from = to;
    }
    bands
}

fn footnote(result: &SweepResult, ghz: Option<f64>) -> String {
    let c = &result.config;
    let cycles = match (result.points.first().map(|m| m.cycle_source), ghz) {
        (Some(CycleSource::Perf), _) => "cycles from perf".to_string(),
        (Some(CycleSource::Given), Some(g)) => format!("cycles = ns x {g:.2} GHz (--ghz)"),
        (Some(CycleSource::CycleCounter), _) => "cycles from the core-cycle counter".to_string(),
        (_, Some(g)) => {
            format!("cycles = ns x {g:.2} GHz (estimated from dependent add and multiply chains)")
        }
        (_, None) => "no cycles: the core clock estimate is suspect".to_string(),
    };
    let mut text = format!(
        "median of {} repeats per point; {cycles}; {} kernel; pages {}; CPU {}; memlat {}, {}",
        c.repeats,
        result.points.first().map_or("pointer", |m| m.kernel.name()),
        c.pages.name(),
        c.cpu,
        result.memlat_version,
        result.started
    );
    if !result.complete {
        text += &format!(
            "; INCOMPLETE: {} of {} points",
            result.points.len(),
            c.point_count()
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::DetectedLevel;

    fn level(name: &str, size: Option<u64>, ns: f64) -> DetectedLevel {
        DetectedLevel {
            name: name.into(),
            size_bytes: size,
            latency_ns: ns,
            latency_cycles: ns * 3.0,
            confidence: 1.0,
            sysfs_size_bytes: None,
            spread_ns: (ns, ns),
            ..Default::default()
        }
    }

    #[test]
    fn levels_become_adjacent_bands_ending_in_memory() {
        let detection = Detection {
            levels: vec![
                level("L1", Some(32 << 10), 1.2),
                level("L2", Some(1 << 20), 4.0),
                level("memory", None, 90.0),
            ],
            ..Default::default()
        };
        let bands = level_bands(&detection, &Metric::Ns);
        assert_eq!(bands.len(), 3);
        assert_eq!((bands[0].from, bands[0].to), (0.0, 32768.0));
        assert_eq!((bands[1].from, bands[1].to), (32768.0, 1048576.0));
        assert_eq!(bands[2].from, 1048576.0);
        assert!(bands[2].to.is_infinite());
        assert_eq!(bands[0].label, "L1 32 KiB\n1.2 ns");
        assert_eq!(bands[2].label, "memory\n90.0 ns");
        let cycles = level_bands(&detection, &Metric::Cycles);
        assert_eq!(cycles[1].label, "L2 1 MiB\n12.0 cycles");
        let mut bounded = detection.clone();
        bounded.levels[1].capacity_bounds = Some(crate::analysis::detect::CapacityBounds {
            at_least_bytes: Some(700 << 10),
            at_most_bytes: None,
        });
        let bands = level_bands(&bounded, &Metric::Ns);
        assert_eq!(bands[1].label, "L2 1 MiB\n4.0 ns\n700 KiB..?");
    }

    #[test]
    fn cycles_are_distrusted_only_where_physics_rules_the_clock_out() {
        let curve = |name: &str| {
            let path = format!(
                "{}/tests/fixtures/curves/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            SweepResult::load(std::path::Path::new(&path)).unwrap()
        };
        // memlat 0.1.0's 20 GHz clock (adds folded at rename), no clock method.
        let folded = cycles_distrusted(&curve("intel-xeon-glc-kvm-thp.json"));
        assert!(folded.unwrap().contains("shipping core"));
        // Zen 3: chains that agreed at 3.23 GHz, 1.32x the TSC claim; then a
        // run where they disagreed.
        assert_eq!(
            cycles_distrusted(&curve("amd-epyc-zen3-fc-thp-b.json")),
            None
        );
        let busy = cycles_distrusted(&curve("amd-epyc-zen3-fc-thp-a.json"));
        assert!(busy.unwrap().contains("multiply / add"));
    }

    #[test]
    fn metric_names_parse() {
        assert_eq!(Metric::parse("ns"), Metric::Ns);
        assert_eq!(Metric::parse("cycles"), Metric::Cycles);
        assert_eq!(Metric::parse("bw"), Metric::Bandwidth);
        assert_eq!(
            Metric::parse("cache-misses"),
            Metric::Event("cache-misses".into())
        );
    }
}
