//! The latency distribution's pictures: the histogram (log x: loads by
//! ns, with the percentiles marked) and the slow loads' spectrum (log x:
//! power against frequency, the period marked).

use std::path::Path;

use anyhow::Result;

use super::{Chart, Marker, Series};
use crate::analysis::distribution::Distribution;
use crate::engine::Measurement;
use crate::units::HumanBytes;

/// Loads by latency: each bin's count at its geometric middle (log x and
/// log y, so the tail shows), p50, p99 and p99.9 marked.
pub fn histogram_chart(d: &Distribution, what: &str) -> Chart {
    let points = d
        .histogram
        .iter()
        .filter(|b| b.count > 0)
        .map(|b| ((b.low_ns * b.high_ns).sqrt(), b.count as f64))
        .collect();
    let p = &d.percentiles_ns;
    Chart {
        title: format!("Latency of each load: {what}"),
        x_label: "ns per load".into(),
        y_label: if d.loads_per_timing == 1 {
            "loads (bins 2^(1/8) wide)".into()
        } else {
            "groups of loads (bins 2^(1/8) wide)".into()
        },
        x_log: true,
        y_log: true,
        series: vec![Series {
            label: format!("{} loads timed", d.loads_timed),
            points,
        }],
        markers: [("p50", p.p50), ("p99", p.p99), ("p99.9", p.p99_9)]
            .iter()
            .map(|(name, ns)| Marker {
                at: *ns,
                label: format!("{name} {ns:.1} ns"),
            })
            .collect(),
        footnote: Some(format!(
            "memlat run --distribution: {}, timed by {} with its {:.2} ns a read subtracted",
            d.grouping(),
            d.timer,
            d.timer_overhead_ns
        )),
        ..Chart::default()
    }
}

/// The slow loads' spectrum, power over the band's median by frequency,
/// the period found marked (or none); `None` when the timeline was too short.
pub fn spectrum_chart(d: &Distribution) -> Option<Chart> {
    let spectrum = d.spectrum.as_ref().filter(|s| !s.points.is_empty())?;
    let points = spectrum.points.iter().map(|p| (p[0] / 1e3, p[1])).collect();
    let (markers, verdict) = match &d.periodic_stalls {
        Some(s) => (
            vec![Marker {
                at: 1e6 / s.period_ns,
                label: format!("period {:.1} ns", s.period_ns),
            }],
            format!(
                "period {:.1} ns, {:.0}x the spectrum around it",
                s.period_ns, s.strength
            ),
        ),
        None => (Vec::new(), "no period".to_string()),
    };
    Some(Chart {
        title: format!("Slow loads' timeline (over {:.1} ns): {verdict}", spectrum.slow_threshold_ns),
        x_label: "frequency, kHz".into(),
        y_label: "power / the band's median".into(),
        x_log: true,
        y_log: true,
        series: vec![Series {
            label: format!(
                "{} slow timings, {} segments of {:.1} ms",
                spectrum.slow_timings,
                spectrum.segments,
                spectrum.segment_bins as f64 * spectrum.bin_ns / 1e6
            ),
            points,
        }],
        markers,
        footnote: Some(
            "Welch's method: Hann-windowed segments averaged; a period must stand 8x over the median power within 20% of its frequency".into(),
        ),
        ..Chart::default()
    })
}

/// What a measurement's distribution is of, for titles.
pub fn subject(m: &Measurement) -> String {
    format!("{} {} chain", HumanBytes(m.size), m.pattern.name())
}

/// Draws the histogram and, where there is one, the spectrum to `path`.
pub fn plot(d: &Distribution, m: &Measurement, path: &Path) -> Result<()> {
    let mut charts = vec![histogram_chart(d, &subject(m))];
    charts.extend(spectrum_chart(d));
    super::figure(path, &charts)
}
