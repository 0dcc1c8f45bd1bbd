//! `memlat levels`, `detect`, `assoc` and `linesize` end to end, with tiny
//! sizes and short samples so each finishes in a second or two.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

/// A profile with small caches: L1 8K, L2 64K, so memory is 512K.
const TINY: &str = "name: tiny\nline_size: 64\nL1: 8K\nL1_ways: 8\nL2: 64K\n";

fn memlat(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("memlat").unwrap();
    cmd.current_dir(dir);
    cmd
}

fn profile(dir: &Path) -> String {
    let path = dir.join("tiny.txt");
    std::fs::write(&path, TINY).unwrap();
    path.display().to_string()
}

fn json(out: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

#[test]
fn levels_writes_ten_iterations_per_level_and_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let machine = profile(dir.path());
    let out = memlat(dir.path())
        .args(["levels", "--machine", &machine, "--sample-ms", "1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("ns median"))
        .stdout(predicate::str::contains("results_tiny.csv"));
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for level in ["L1", "L2", "memory"] {
        assert!(text.lines().any(|l| l.starts_with(level)), "{text}");
    }
    let csv = std::fs::read_to_string(dir.path().join("memlat-results/results_tiny.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("level,iteration,size,ns,cycles")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 30);
    for (level, size) in [("L1", "4096"), ("L2", "32768"), ("memory", "524288")] {
        let mine: Vec<&Vec<&str>> = rows.iter().filter(|r| r[0] == level).collect();
        assert_eq!(mine.len(), 10, "{level}");
        assert!(mine.iter().all(|r| r[2] == size));
        let iterations: Vec<&str> = mine.iter().map(|r| r[1]).collect();
        assert_eq!(
            iterations,
            ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]
        );
        assert!(mine.iter().all(|r| r[3].parse::<f64>().unwrap() > 0.0));
    }
}

#[test]
fn levels_json_and_custom_names() {
    let dir = tempfile::tempdir().unwrap();
    let machine = profile(dir.path());
    let out = memlat(dir.path())
        .args([
            "levels",
            "--machine",
            &machine,
            "--iterations",
            "2",
            "--name",
            "box",
        ])
        .args(["--sample-ms", "1", "--format", "json"])
        .assert()
        .success();
    let v = json(&out);
    assert_eq!(v["name"], "box");
    assert_eq!(v["source"], "profile");
    assert_eq!(v["levels"].as_array().unwrap().len(), 3);
    assert_eq!(v["levels"][2]["level"], "memory");
    assert_eq!(v["levels"][0]["iterations"], 2);
    assert!(v["levels"][0]["ns"]["median"].as_f64().unwrap() > 0.0);
    assert!(v["prefetchers"].as_str().unwrap().starts_with("as is"));
    assert!(dir.path().join("memlat-results/results_box.csv").exists());
}

#[test]
fn levels_refuses_bad_input_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.txt"), "L1: 8K\nL3: 1M\n").unwrap();
    for (args, message) in [
        (vec!["--iterations", "0"], "--iterations 0"),
        (vec!["--repeats", "3"], "use --iterations"),
        (
            vec!["--machine", "missing.txt"],
            "--machine missing.txt: cannot read it",
        ),
        (vec!["--machine", "bad.txt"], "L2 is missing"),
    ] {
        memlat(dir.path())
            .arg("levels")
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
    }
}

#[test]
fn detect_runs_a_quick_sweep_and_prints_levels_memory_last() {
    let dir = tempfile::tempdir().unwrap();
    let out = memlat(dir.path())
        .args(["detect", "--from", "4K", "--to", "1M", "--ratio", "2"])
        .args(["--sample-ms", "1", "--repeats", "1", "--format", "json"])
        .assert()
        .success();
    let v = json(&out);
    let levels = v["levels"].as_array().unwrap();
    assert!(!levels.is_empty());
    let last = levels.last().unwrap();
    assert_eq!(last["name"], "memory");
    assert!(last["size_bytes"].is_null());
    assert!(last["sysfs_size_bytes"].is_null());
    for level in levels {
        for key in [
            "name",
            "size_bytes",
            "latency_ns",
            "latency_cycles",
            "confidence",
            "sysfs_size_bytes",
        ] {
            assert!(level.get(key).is_some(), "{key} missing in {level}");
        }
        let c = level["confidence"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&c));
        assert!(level["latency_ns"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(v["source"], "quick sweep");
}

#[test]
fn detect_text_and_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    memlat(dir.path())
        .args(["detect", "--from", "4K", "--to", "256K", "--ratio", "2"])
        .args(["--sample-ms", "1", "--repeats", "1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("sysfs says"))
        .stdout(predicate::str::contains("memory"));
    std::fs::write(dir.path().join("x.json"), "{}").unwrap();
    memlat(dir.path())
        .args(["detect", "x.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a memlat sweep JSON"));
    memlat(dir.path())
        .args(["detect", "--ratio", "1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--ratio 1"));
}

#[test]
fn assoc_prints_ways_per_level() {
    let dir = tempfile::tempdir().unwrap();
    let machine = profile(dir.path());
    let out = memlat(dir.path())
        .args([
            "assoc",
            "--machine",
            &machine,
            "--levels",
            "1",
            "--max-lines",
            "10",
        ])
        .args(["--sample-ms", "1", "--repeats", "1", "--format", "json"])
        .assert()
        .success();
    let v = json(&out);
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 1);
    assert_eq!(levels[0]["name"], "L1");
    assert_eq!(levels[0]["size_bytes"], 8192);
    assert_eq!(levels[0]["stride"], 1024);
    assert!(levels[0]["ways"].is_null() || levels[0]["ways"].as_u64().unwrap() >= 1);
    assert_eq!(levels[0]["points"].as_array().unwrap().len(), 10);
    // The interface scripts rely on: the median per line count, three chains each.
    let by_lines = levels[0]["ns_by_lines"].as_array().unwrap();
    assert_eq!(by_lines.len(), 10);
    assert!(by_lines.iter().all(|v| v.as_f64().unwrap() > 0.0));
    let chains = levels[0]["points"][4]["ns_by_chain"].as_array().unwrap();
    assert_eq!(chains.len(), 3);
    memlat(dir.path())
        .args(["assoc", "--machine", &machine, "--levels", "3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--levels 3: no such cache level"));
}

#[test]
fn linesize_estimates_from_both_orders() {
    let dir = tempfile::tempdir().unwrap();
    let out = memlat(dir.path())
        .args([
            "linesize",
            "-n",
            "64K",
            "--sample-ms",
            "1",
            "--repeats",
            "1",
            "--format",
            "json",
        ])
        .assert()
        .success();
    let v = json(&out);
    assert_eq!(v["points"].as_array().unwrap().len(), 6);
    assert_eq!(v["stride_points"].as_array().unwrap().len(), 6);
    assert!(v["line_bytes"].is_null() || v["line_bytes"].as_u64().unwrap().is_power_of_two());
    // Dependent pairs beside the spacings, and the unit a miss fetches.
    let pairs = v["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 6);
    assert_eq!(pairs[0]["distance"], 8);
    assert!(v["lone_ns"].as_f64().unwrap() > 0.0);
    assert!(v["fetch_bytes"].is_null() || v["fetch_bytes"].as_u64().unwrap() >= 8);
    memlat(dir.path())
        .args(["linesize", "--strides", "8,12,16"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--strides 12"));
}

#[test]
fn prefetchers_off_explains_itself_when_it_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let machine = profile(dir.path());
    let out = memlat(dir.path())
        .env("MEMLAT_MSR_ROOT", dir.path().join("no-such-dir"))
        .env("MEMLAT_STATE_DIR", dir.path())
        .args([
            "levels",
            "--machine",
            &machine,
            "--iterations",
            "1",
            "--sample-ms",
            "1",
        ])
        .args(["--prefetchers", "off", "--format", "json"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "prefetchers: as is (--prefetchers off could not be applied",
        ));
    let v = json(&out);
    assert!(
        v["prefetchers"]
            .as_str()
            .unwrap()
            .starts_with("as is (--prefetchers off could not be applied")
    );
}
