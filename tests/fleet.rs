//! Results from many hosts: `memlat merge` over renamed hosts' results, and
//! the fleet example files (Slurm, Kubernetes) checked for syntax.

use std::path::Path;
use std::process::Command as Process;

use assert_cmd::Command;
use serde_json::Value;

fn memlat() -> Command {
    Command::cargo_bin("memlat").unwrap()
}

fn docs(file: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join(file)
}

#[test]
fn merge_gives_one_row_per_host_and_point() {
    let dir = tempfile::tempdir().unwrap();
    let out = memlat()
        .args([
            "--sizes",
            "16K,64K",
            "--sample-ms",
            "2",
            "--repeats",
            "2",
            "--format",
            "json",
        ])
        .assert()
        .success();
    let original: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(original["schema_version"], 3);
    assert_eq!(original["kind"], "quick");
    assert!(original["host"]["cpu_model"].is_string());
    for (k, host) in ["alpha", "beta", "gamma"].iter().enumerate() {
        let mut v = original.clone();
        v["host"]["hostname"] = Value::from(*host);
        v["host"]["machine_id"] = Value::from(format!("{k:016x}"));
        std::fs::write(dir.path().join(format!("{host}.json")), v.to_string()).unwrap();
    }
    let csv = dir.path().join("fleet.csv");
    memlat()
        .args(["merge"])
        .arg(dir.path())
        .arg("-o")
        .arg(&csv)
        .assert()
        .success();
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let headers = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 6, "3 hosts x 2 points");
    let host = headers.iter().position(|h| h == "hostname").unwrap();
    let point = headers.iter().position(|h| h == "point").unwrap();
    let mut keys: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r[host].to_string(), r[point].to_string()))
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 6, "one row per host and point: {keys:?}");
    // A merged JSON is read by compare as the results it holds.
    let merged = dir.path().join("fleet.json");
    memlat()
        .args(["merge"])
        .arg(dir.path().join("alpha.json"))
        .arg(dir.path().join("beta.json"))
        .arg("-o")
        .arg(&merged)
        .assert()
        .success();
    let out = memlat()
        .arg("compare")
        .arg(&merged)
        .arg(dir.path().join("gamma.json"))
        .args(["--format", "json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 3);
    assert_eq!(v["rows"].as_array().unwrap().len(), 2);
    let host_row = v["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["what"] == "host")
        .unwrap();
    assert_eq!(host_row["differs"], true);
    // Identical measurements: no difference is significant.
    assert!(
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["significant"] == false)
    );
}

#[test]
fn the_slurm_script_parses_as_bash() {
    let status = Process::new("bash")
        .arg("-n")
        .arg(docs("fleet/slurm-array.sbatch"))
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn the_kubernetes_job_parses_as_yaml() {
    let path = docs("fleet/k8s-job.yaml");
    let script = "import sys, yaml\nd = yaml.safe_load(open(sys.argv[1]))\nassert d['kind'] == 'Job', d['kind']\nc = d['spec']['template']['spec']['containers'][0]\nassert 'memlat' in ' '.join(c['args'])\n";
    let ran = Process::new("python3").args(["-c", "import yaml"]).status();
    if !ran.is_ok_and(|s| s.success()) {
        println!(
            "SKIPPED: no python3 with the yaml module (pip install pyyaml) to parse {}",
            path.display()
        );
        return;
    }
    let status = Process::new("python3")
        .args(["-c", script])
        .arg(&path)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "{} is not the Job it should be",
        path.display()
    );
}
