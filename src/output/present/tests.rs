//! Headlines from made-up values, and a value that does not read losing
//! only its table.

use serde_json::json;

use super::*;
use crate::analysis::stats::Summary;
use crate::experiments::fixed_levels::LevelSummary;

#[test]
fn the_table_says_when_a_level_looks_like_the_next() {
    let summary = |level: &str, size, ns: f64| LevelSummary {
        level: level.into(),
        size,
        iterations: 10,
        ns: Summary::of(&[ns]).unwrap(),
        cycles: Summary::of(&[ns * 3.6]).unwrap(),
        cycle_source: "estimated".into(),
        pages: "thp".into(),
    };
    let t = levels_table(&[
        summary("L2", 512 << 10, 4.9),
        summary("L3", 16 << 20, 161.5),
        summary("memory", 256 << 20, 188.2),
    ])
    .text();
    assert!(
        t.contains("L3 (161.5 ns) and memory (188.2 ns) are within 1.3x"),
        "{t}"
    );
    assert!(!t.contains("L2 (4.9 ns) and"));
}

#[test]
fn each_kind_gets_its_chart_and_a_bad_file_only_loses_it() {
    let mlp = json!({"cpu": 0, "levels": [{"name": "L1", "size_bytes": 16384,
        "points": [{"chains": 1, "ns_per_load": 1.0, "loads_per_second": 1e9, "bytes_per_second": 6.4e10, "parallelism": 1.0},
                   {"chains": 2, "ns_per_load": 0.5, "loads_per_second": 2e9, "bytes_per_second": 1.28e11, "parallelism": 2.0}],
        "saturation_chains": 2, "saturation_parallelism": 2.0, "confidence": 0.9, "notes": []}]});
    let p = present(Kind::Mlp, "mlp", &mlp);
    assert_eq!((p.parts.charts.len(), p.headline.len()), (1, 1));
    assert!(p.parts.problems.is_empty());
    let broken = present(Kind::Mlp, "mlp", &json!({"levels": [{"name": 3}]}));
    assert!(broken.parts.charts.is_empty() && broken.headline.is_empty());
    assert!(broken.parts.problems[0].contains("mlp levels not shown"));
    assert!(headline(Kind::Mlp, &json!({"levels": [{"name": 3}]})).is_err());
    let stages = json!({"stages": [{"name": "doctor", "status": "done", "seconds": 0.71, "file": "doctor.json", "why": null}]});
    let t = &headline(Kind::Characterize, &stages).unwrap()[0];
    assert_eq!(t.rows.len(), 1);
    assert!(t.html().contains("<td class=\"l\">-</td>"), "{}", t.html());
    assert!(present(Kind::Sweep, "s", &json!({})).headline.is_empty());
}
