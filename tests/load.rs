//! `memlat mlp` and `memlat loaded` end to end, with tiny settings: the
//! shapes scripts rely on, and bad input naming its flag.

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
fn mlp_reports_every_chain_count_and_a_saturation_point() {
    let out = memlat()
        .args(["mlp", "--sizes", "64K,4M", "--chains", "1,2,4,8"])
        .args([
            "--sample-ms",
            "2",
            "--repeats",
            "2",
            "--no-progress",
            "--format",
            "json",
        ])
        .assert()
        .success();
    let v = json(&out);
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    for l in levels {
        let points = l["points"].as_array().unwrap();
        assert_eq!(points.len(), 4);
        assert_eq!(points[0]["chains"], 1);
        // One chain is the unit, unless loads among many chains were faster
        // than alone even after new baselines: then parallelism is counted
        // against the fastest a chain's load took, and one chain reads
        // that over its own latency (at most 1).
        let single = points[0]["parallelism"].as_f64().unwrap();
        match l["reference_latency_ns"].as_f64() {
            None => assert!((single - 1.0).abs() < 1e-9, "{l}"),
            Some(reference) => {
                let ns = points[0]["ns_per_load"].as_f64().unwrap();
                assert!((single - reference / ns).abs() < 1e-9, "{l}");
                assert!(single <= 1.0 + 1e-9, "{l}");
            }
        }
        // N chains keep at most N loads in flight, give or take the
        // medians' own precision (the analysis' PARALLELISM_SLACK).
        for p in points {
            let chains = p["chains"].as_f64().unwrap();
            let slack = memlat::analysis::mlp::PARALLELISM_SLACK;
            assert!(p["parallelism"].as_f64().unwrap() <= chains * slack, "{l}");
        }
        for p in points {
            let ns = p["ns_per_load"].as_f64().unwrap();
            assert!(ns > 0.0);
            let loads = p["loads_per_second"].as_f64().unwrap();
            assert!((loads * ns / 1e9 - 1.0).abs() < 1e-6);
            assert!((p["bytes_per_second"].as_f64().unwrap() / loads - 64.0).abs() < 1e-6);
        }
        // One verdict: a chain count where it levels off, none while it grows.
        match l["verdict"].as_str().unwrap() {
            "levels_off" => {
                let n = l["saturation_chains"].as_u64().unwrap();
                assert!([1, 2, 4, 8].contains(&n), "{l}");
            }
            "still_growing" => assert!(l["saturation_chains"].is_null(), "{l}"),
            other => panic!("verdict {other}: {l}"),
        }
    }
    assert_eq!(v["complete"], true);
    memlat()
        .args(["mlp", "--chains", "0,4"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--chains 0"));
    memlat()
        .args(["mlp", "--sizes", "1K"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--sizes 1 KiB"));
    memlat()
        .args(["mlp", "--pattern", "stride"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--pattern"));
}

#[test]
fn loaded_pairs_latency_with_bandwidth_from_idle_up() {
    if memlat::platform::allowed_cpus().len() < 2 {
        println!("SKIPPED: memlat loaded needs two CPUs (a chaser and a traffic thread)");
        return;
    }
    let out = memlat()
        .args([
            "loaded",
            "--threads",
            "1",
            "-n",
            "8M",
            "--traffic-size",
            "8M",
        ])
        .args(["--delays", "10000,0", "--traffic", "mix:50"])
        .args([
            "--sample-ms",
            "2",
            "--repeats",
            "2",
            "--no-progress",
            "--format",
            "json",
        ])
        .assert()
        .success();
    let v = json(&out);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 3, "idle and two delays");
    assert!(points[0]["delay"].is_null());
    assert_eq!(points[0]["threads"], 0);
    assert_eq!(points[2]["delay"], 0);
    assert_eq!(points[2]["traffic"], "mix:50");
    // The traffic thread moved bytes, and more with no delay than with one.
    let bw: Vec<f64> = points
        .iter()
        .map(|p| p["bandwidth_bytes_per_second"].as_f64().unwrap())
        .collect();
    assert!(bw[1] > 0.0 && bw[2] > bw[1], "{bw:?}");
    for p in points {
        let l = &p["latency_ns"];
        assert!(
            l["min"].as_f64() <= l["median"].as_f64() && l["median"].as_f64() <= l["max"].as_f64()
        );
    }
    assert!(v["idle_latency_ns"].as_f64().unwrap() > 0.0);
    assert!(v["knee"].is_null() || v["knee"]["latency_ns"].as_f64().is_some());
    let cpus = &v["cpus"];
    assert_eq!(cpus["traffic"].as_array().unwrap().len(), 1);
    assert_ne!(cpus["traffic"][0], cpus["chaser"]);
    memlat()
        .args(["loaded", "--threads", "100000"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--threads 100000"));
    memlat()
        .args(["loaded", "--traffic", "copy"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("mix:R"));
}
