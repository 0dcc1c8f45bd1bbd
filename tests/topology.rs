//! `memlat c2c`, `memlat numa` and `memlat tlb` end to end, with tiny
//! settings: the JSON shapes scripts rely on, and bad input naming its flag.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn memlat() -> Command {
    Command::cargo_bin("memlat").unwrap()
}

fn json(out: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&out.get_output().stdout).expect("JSON on stdout")
}

#[test]
fn c2c_gives_a_matrix_without_zeros_and_clusters() {
    let cpus = memlat::platform::allowed_cpus();
    if cpus.len() < 2 {
        println!("SKIPPED: memlat c2c needs two CPUs");
        return;
    }
    let list = format!("{},{}", cpus[0], cpus[1]);
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("c2c.svg");
    let out = memlat()
        .args([
            "c2c",
            "--cpus",
            &list,
            "--no-progress",
            "--no-sharing",
            "--format",
            "json",
            "--plot",
        ])
        .arg(&svg)
        .assert()
        .success();
    let v = json(&out);
    assert_eq!(v["method"], "cas");
    let matrix = v["matrix_ns"].as_array().unwrap();
    assert_eq!(matrix.len(), 2);
    assert!(matrix[0][0].is_null() && matrix[1][1].is_null());
    let ns = matrix[0][1].as_f64().unwrap();
    assert!(ns > 0.0 && ns == matrix[1][0].as_f64().unwrap());
    assert_eq!(v["methods"].as_array().unwrap().len(), 2);
    assert_eq!(v["methods"][1]["method"], "read-write");
    let clusters = v["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1);
    assert!(clusters[0]["median_ns"].as_f64().unwrap() > 0.0);
    assert!(svg.is_file() && dir.path().join("c2c-read-write.svg").is_file());
    memlat()
        .args(["c2c", "--cpus", "100000"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--cpus 100000"));
    memlat()
        .args(["c2c", "--pairs", "sample:0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("sample:K"));
}

/// The sharing check on this host: its shape and its verdict's logic, not
/// its verdict (a guest's vCPUs share a cache or not as the host places
/// them). Nothing remembered, so the plateaus are probed, as on a fresh machine.
#[test]
fn c2c_measures_whether_two_cpus_share_a_cache_beside_sysfs() {
    let cpus = memlat::platform::allowed_cpus();
    if cpus.len() < 2 {
        println!("SKIPPED: memlat c2c needs two CPUs");
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let list = format!("{},{}", cpus[0], cpus[1]);
    let out = memlat()
        .env("XDG_CACHE_HOME", cache.path())
        .args(["c2c", "--cpus", &list, "--method", "cas", "--no-progress"])
        .args(["--format", "json"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "probing this machine's cache plateaus",
        ));
    let v = json(&out);
    let checks = v["sharing"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "one relation, one pair: {v}");
    let c = &checks[0];
    assert!(c["level"].as_str().unwrap().starts_with('L'));
    assert!(c["size_bytes"].as_u64().unwrap() > 0);
    let measured = c["measured"].as_str().unwrap();
    assert!(["shares", "apart", "unknown"].contains(&measured), "{c}");
    let sysfs_shares = c["sysfs_shares"].as_bool().unwrap();
    match measured {
        "shares" => assert_eq!(c["agrees"].as_bool(), Some(sysfs_shares)),
        "apart" => assert_eq!(c["agrees"].as_bool(), Some(!sysfs_shares)),
        _ => assert!(c["agrees"].is_null() && c["served"].is_null()),
    }
    if memlat::kernels::line_tag::flush_instruction().is_some() {
        let r = &c["readings"];
        let rounds = r["rounds_ns"].as_array().unwrap();
        assert_eq!(rounds.len(), memlat::experiments::c2c::shared::ROUNDS);
        for round in rounds {
            for ns in round.as_array().unwrap() {
                let ns = ns.as_f64().unwrap();
                assert!(ns.is_finite() && ns > 0.0, "{r}");
            }
        }
        if measured != "unknown" {
            let h = c["served"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&h), "{c}");
        }
    } else {
        assert!(c["readings"].is_null() && measured == "unknown");
    }
    // The text says the same in a table.
    memlat()
        .env("XDG_CACHE_HOME", cache.path())
        .args(["c2c", "--cpus", &list, "--method", "cas", "--no-progress"])
        .assert()
        .success()
        .stdout(predicate::str::contains("across ns").and(predicate::str::contains("sysfs says")));
}

#[test]
fn numa_prints_a_matrix_of_every_node() {
    let out = memlat()
        .args(["numa", "-n", "16M", "--sample-ms", "2", "--repeats", "2"])
        .args(["--no-progress", "--format", "json"])
        .assert()
        .success();
    let v = json(&out);
    let nodes = v["nodes"].as_array().unwrap().len();
    let rows = v["matrix_ns"].as_array().unwrap();
    assert!(nodes >= 1 && !rows.is_empty());
    for row in rows {
        assert_eq!(row.as_array().unwrap().len(), nodes);
        assert!(
            row.as_array()
                .unwrap()
                .iter()
                .all(|c| c.as_f64().unwrap() > 0.0)
        );
    }
    if nodes == 1 {
        let notes = v["notes"].to_string();
        assert!(
            notes.contains("1x1") || notes.contains("no NUMA nodes"),
            "{notes}"
        );
    }
    memlat()
        .args(["numa", "--cpu", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--cpu"));
}

#[test]
fn tlb_reports_each_page_size_with_its_points() {
    let out = memlat()
        .args(["tlb", "--page-sizes", "4k", "--max-pages", "64"])
        .args([
            "--sample-ms",
            "1",
            "--repeats",
            "2",
            "--no-progress",
            "--format",
            "json",
        ])
        .assert()
        .success();
    let v = json(&out);
    let sizes = v["page_bytes"].as_array().unwrap();
    assert_eq!(sizes.len(), 1);
    assert_eq!(sizes[0]["page_bytes"], 4096);
    let points = sizes[0]["points"].as_array().unwrap();
    assert_eq!(points[0]["pages"], 8);
    assert_eq!(points.last().unwrap()["pages"], 64);
    for p in points {
        let d = p["spread_ns"].as_f64().unwrap() - p["packed_ns"].as_f64().unwrap();
        assert!((d - p["translation_ns"].as_f64().unwrap()).abs() < 1e-9);
    }
    assert!(sizes[0]["levels"].is_array());
    memlat()
        .args(["tlb", "--max-pages", "2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--max-pages 2"));
}
