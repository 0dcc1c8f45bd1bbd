//! `memlat loaduse` end to end: the JSON shape scripts rely on, the CSV and
//! text forms, and bad input exiting 2.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

/// A tiny, short loaduse: one small working set, few NOPs, 1 ms samples.
fn loaduse(args: &[&str]) -> Command {
    let mut cmd = Command::cargo_bin("memlat").unwrap();
    cmd.arg("loaduse")
        .args(["--sample-ms", "1", "--repeats", "1"])
        .args(args);
    cmd
}

#[test]
fn json_has_levels_with_latency_overhead_and_points() {
    let out = loaduse(&["--level", "16K,64K", "--nops", "0..3", "--format", "json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let levels = v["levels"].as_array().expect("levels");
    assert_eq!(levels.len(), 2);
    for level in levels {
        assert!(level["name"].is_string());
        assert!(level["size_bytes"].as_u64().unwrap() >= 16 << 10);
        assert!(level["latency_cycles"].is_number());
        assert!(level["loop_overhead_cycles"].is_number());
        assert!(level["throughput_mib_s"].is_number());
        assert!(level["knees"].is_array());
        let points = level["points"].as_array().expect("points");
        let nops: Vec<u64> = points.iter().map(|p| p["nops"].as_u64().unwrap()).collect();
        assert_eq!(nops, vec![0, 1, 2, 3]);
        for p in points {
            assert!(p["cycles_per_iteration"].as_f64().unwrap() > 0.0);
            assert!(p["ns_per_iteration"].as_f64().unwrap() > 0.0);
            assert_eq!(p["passes"].as_array().unwrap().len(), 1);
        }
        // The memlat run comparison sits beside the figure.
        assert!(level["run_cycles_per_load"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(levels[0]["size_bytes"], 16 << 10);
    // The first level also times the rolled loop, for the loop overhead.
    assert_eq!(levels[0]["rolled"].as_array().unwrap().len(), 4);
    assert!(levels[1]["rolled"].as_array().unwrap().is_empty());
    assert!(
        ["single-issue", "multi-issue", "undetermined"]
            .contains(&v["reading"]["issue"].as_str().unwrap())
    );
    assert!(!v["reading"]["explanation"].as_str().unwrap().is_empty());
    assert_eq!(v["nops_from"], 0);
    assert_eq!(v["nops_to"], 3);
}

#[test]
fn csv_has_a_row_per_level_and_n() {
    let out = loaduse(&[
        "--level", "16K", "--nops", "2..4", "--format", "csv", "--no-run",
    ])
    .assert()
    .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[..3], &["level", "size_bytes", "nops"]);
    assert!(header.contains(&"cycles_per_iteration"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 3);
    assert!(rows[0].starts_with("16 KiB,16384,2,"));
}

#[test]
fn text_has_the_curve_the_reading_and_seed_003s_table() {
    loaduse(&["--level", "l1", "--nops", "0..2", "--no-run"])
        .assert()
        .success()
        .stdout(predicate::str::contains("cycles per iteration"))
        .stdout(predicate::str::contains("reading:"))
        .stdout(predicate::str::contains("load-to-use, cycles"))
        .stdout(predicate::str::contains("loop overhead"));
}

#[test]
fn a_plot_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loaduse.svg");
    loaduse(&["--level", "16K", "--nops", "0..2", "--no-run", "--plot"])
        .arg(&path)
        .assert()
        .success();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.contains("<svg"));
}

#[test]
fn bad_input_exits_2_naming_the_flag() {
    loaduse(&["--nops", "5..2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--nops"));
    loaduse(&["--nops", "0..200"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("at most 128"));
    loaduse(&["--level", "l9"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--level"));
    loaduse(&["--level", "64"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--level"));
    loaduse(&["--level", "64T"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--level 64 TiB"));
    loaduse(&["--level", "16K", "-e", "task-clock"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("-e/--events"));
    loaduse(&["--level", "16K", "--plot", "x.txt"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--plot"));
}
