//! `memlat bandwidth --sweep` end to end: a tiny sweep's JSON shape, its
//! plot, `compare`, `merge` and `report` on it, and the flags that conflict.
//! Nothing here asserts a speed: the machines are shared.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn memlat() -> Command {
    Command::cargo_bin("memlat").unwrap()
}

/// A recorded sweep's plateaus label the sizes, so no probe runs (the labels
/// are the fixture's, the figures this machine's). `--plateaus` takes only a
/// complete, recent sweep of this machine, so the fixture is given this
/// machine's host (from a 16 KiB run) and today's date.
fn plateaus() -> PathBuf {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/curves/intel-xeon-glc-kvm-thp.json");
    let run = memlat()
        .args([
            "run",
            "-n",
            "16K",
            "--repeats",
            "1",
            "--sample-ms",
            "1",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let host: Value = serde_json::from_slice::<Value>(&run.stdout).unwrap()["host"].clone();
    let mut sweep: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    sweep["host"] = host;
    // The caches it recorded are the fixture machine's: emptied, so the
    // check that a sweep belongs to this kind of core has nothing to compare.
    sweep["sysfs_caches"] = Value::Array(Vec::new());
    sweep["complete"] = Value::Bool(true);
    sweep["started"] = Value::String(memlat::units::utc_timestamp(std::time::SystemTime::now()));
    let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("plateaus-{}.json", std::process::id()));
    std::fs::write(&path, sweep.to_string()).unwrap();
    path
}

/// 4 KiB to 64 KiB, 2 sizes a doubling: 9 sizes, one thread, 2 samples of 1 ms.
fn tiny_sweep(json: &Path) {
    memlat()
        .args(["bandwidth", "--sweep", "--from", "4K", "--to", "64K"])
        .args(["--per-octave", "2", "--threads", "1", "--repeats", "2"])
        .args(["--sample-ms", "1", "--no-progress", "--format", "json"])
        .arg("--plateaus")
        .arg(plateaus())
        .arg("-o")
        .arg(json)
        .assert()
        .success()
        .stderr(predicate::str::contains("a sweep, 2 sizes a doubling"));
}

#[test]
fn a_tiny_sweep_has_one_labelled_point_per_size_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sweep.json");
    tiny_sweep(&json);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["kind"], "bandwidth");
    assert_eq!(
        (v["repeats"].as_u64(), v["sample_ms"].as_u64()),
        (Some(2), Some(1))
    );
    let sweep = &v["sweep"];
    assert_eq!(sweep["from_bytes"], 4096);
    assert_eq!(sweep["to_bytes"], 65536);
    assert_eq!(sweep["per_octave"], 2);
    assert!(sweep["memory_from_bytes"].as_u64().unwrap() > 65536);
    let names: Vec<&str> = sweep["plateaus"]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"L1"), "{names:?}");
    let points = v["points"].as_array().unwrap();
    let sizes: Vec<u64> = points
        .iter()
        .map(|p| p["size_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes.len(), 9, "{sizes:?}");
    assert_eq!((sizes[0], sizes[8]), (4096, 65536));
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
    assert!(sizes.iter().all(|s| s % 256 == 0), "{sizes:?}");
    for p in points {
        let level = p["level"].as_str().unwrap();
        assert!(
            names.contains(&level) || level == "ramp" || level == "memory",
            "{level}"
        );
        assert_eq!(p["threads"], 1);
        for op in ["read", "write", "copy"] {
            let v = p[format!("{op}_gb_per_s")].as_f64().unwrap();
            assert!(v.is_finite() && v > 0.0, "{op}: {p}");
            let s = &p["spread"][op];
            assert!(s["min"].as_f64().unwrap() <= s["max"].as_f64().unwrap());
        }
    }
    // 4 KiB is inside the fixture's L1 plateau (1.1..39.4 KiB).
    assert_eq!(points[0]["level"], "L1");

    // compare: the sweep against itself, matched by size, every ratio 1.
    let out = memlat()
        .arg("compare")
        .arg(&json)
        .arg(&json)
        .args(["--format", "json"])
        .assert()
        .success();
    let c: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(c["matched_by"], "size");
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 9);
    for row in rows {
        for op in row["ops"].as_array().unwrap() {
            assert_eq!(op["ratio"], 1.0, "{op}");
            assert_eq!(op["apart"], false);
        }
    }

    // merge: one CSV row per host, size and thread count.
    let csv = dir.path().join("fleet.csv");
    memlat()
        .arg("merge")
        .arg(&json)
        .arg("-o")
        .arg(&csv)
        .assert()
        .success();
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let headers = reader.headers().unwrap().clone();
    assert!(headers.iter().any(|h| h == "read_gb_per_s"), "{headers:?}");
    assert_eq!(reader.records().count(), 9);

    // report: the table and the chart with the levels shaded.
    let out = memlat().arg("report").arg(&json).assert().success();
    let html = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(html.contains("<svg") && html.contains("a sweep, 2 sizes a doubling"));
}

#[test]
fn a_sweep_plot_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("bw.svg");
    memlat()
        .args(["bandwidth", "--sweep", "--from", "4K", "--to", "16K"])
        .args(["--threads", "1", "--repeats", "1", "--sample-ms", "1"])
        .args(["--no-progress", "--kernel", "portable"])
        .arg("--plateaus")
        .arg(plateaus())
        .arg("--plot")
        .arg(&plot)
        .assert()
        .success()
        .stdout(predicate::str::contains("memlat bandwidth --sweep"));
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.contains("L1") && svg.contains("read, 1 thread(s)"));
}

#[test]
fn flags_that_conflict_name_the_flag() {
    let cases: [(&[&str], &str); 6] = [
        (&["--sweep", "--sizes", "16K"], "--sizes"),
        (&["--from", "4K"], "--from: only with --sweep"),
        (&["--to", "1M"], "--to: only with --sweep"),
        (&["--per-octave", "2"], "--per-octave: only with --sweep"),
        (&["--sweep", "--per-octave", "0"], "--per-octave 0"),
        (&["--sweep", "--from", "64K", "--to", "4K"], "--to 4 KiB"),
    ];
    for (args, message) in cases {
        memlat()
            .arg("bandwidth")
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
    }
    memlat()
        .args(["bandwidth", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("memlat bandwidth --sweep"));
}

#[test]
fn compare_refuses_a_bandwidth_result_beside_a_latency_one() {
    let dir = tempfile::tempdir().unwrap();
    let bw = dir.path().join("bw.json");
    tiny_sweep(&bw);
    let run = dir.path().join("run.json");
    memlat()
        .args([
            "run",
            "-n",
            "16K",
            "--repeats",
            "2",
            "--sample-ms",
            "2",
            "--format",
            "json",
        ])
        .arg("-o")
        .arg(&run)
        .assert()
        .success();
    memlat()
        .arg("compare")
        .arg(&bw)
        .arg(&run)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("results of one kind"));
}
