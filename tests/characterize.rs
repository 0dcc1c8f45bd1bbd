//! `memlat characterize` end to end, with the hidden `--tiny` settings (a
//! few seconds a stage) or a couple of stages: the files scripts rely on
//! (DIR/<stage>.json, DIR/characterize.json, DIR/report.html), the
//! directory rules, and Ctrl-C. No timing is asserted.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn memlat(cache: &Path) -> Command {
    let mut c = Command::cargo_bin("memlat").unwrap();
    // A sweep here must not become this machine's remembered plateaus.
    c.env("XDG_CACHE_HOME", cache);
    c
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn stage<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no stage {name} in {summary}"))
}

#[test]
fn doctor_and_sweep_write_their_json_a_summary_and_a_report() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    memlat(tmp.path())
        .args(["characterize", "--tiny", "--stages", "doctor,sweep", "-o"])
        .arg(&dir)
        .assert()
        .success()
        .stderr(predicate::str::contains("[1/2] doctor: about"))
        .stderr(predicate::str::contains("left in all"));
    for name in ["doctor", "sweep"] {
        let v = read_json(&dir.join(format!("{name}.json"))).expect(name);
        assert_eq!(v["kind"], name);
    }
    let summary = read_json(&dir.join("characterize.json")).unwrap();
    assert_eq!(summary["kind"], "characterize");
    assert!(summary["schema_version"].is_u64() && summary["host"].is_object());
    assert_eq!(summary["complete"], true);
    assert_eq!(summary["report"], "report.html");
    assert_eq!(summary["stages"].as_array().unwrap().len(), 2);
    for name in ["doctor", "sweep"] {
        let s = stage(&summary, name);
        assert_eq!(s["status"], "done");
        assert_eq!(s["file"], format!("{name}.json"));
        assert!(s["seconds"].as_f64().unwrap() >= 0.0);
        assert_eq!(s["command"][1], name);
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    for section in [
        "characterize.json (characterize)",
        "doctor.json (doctor)",
        "sweep.json (sweep)",
    ] {
        assert!(html.contains(section), "{section}");
    }
    assert!(html.contains("<svg"), "the sweep's plot");
}

#[test]
fn every_stage_runs_or_says_why_not_and_the_report_draws_each() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("all");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    memlat(tmp.path())
        .args(["characterize", "--tiny", "-o"])
        .arg(&dir)
        .assert()
        .success();
    let summary = read_json(&dir.join("characterize.json")).unwrap();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let stages = summary["stages"].as_array().unwrap();
    assert_eq!(stages[0]["name"], "doctor");
    assert_eq!(stages[1]["name"], "sweep", "the sweep before the rest");
    for s in stages {
        let name = s["name"].as_str().unwrap();
        match s["status"].as_str().unwrap() {
            "done" => {
                let v = read_json(&dir.join(format!("{name}.json"))).expect(name);
                let kind = if name == "distribution" { "run" } else { name };
                assert_eq!(v["kind"], kind);
                assert!(html.contains(&format!("{name}.json ({kind})")), "{name}");
            }
            "skipped" => {
                assert!(s["why"].as_str().is_some_and(|w| !w.is_empty()), "{s}");
                assert!(s["file"].is_null());
                let may_skip =
                    name == "distribution" || (cpus < 2 && matches!(name, "c2c" | "loaded"));
                assert!(may_skip, "{name} skipped: {}", s["why"]);
            }
            other => panic!("{name}: {other}: {s}"),
        }
    }
    // Every stage that has a plot draws it: mlp, tlb, bandwidth and the
    // sweep's two charts, and c2c and loaded where they ran.
    assert!(html.matches("<svg").count() >= 5, "plots in the report");
}

/// docs/characterize.md runs characterize into results/ and then again with
/// --force: every stage must replace its file, the distribution's `run -o`
/// too (it refused the earlier result and failed the second run, exit 1).
#[test]
fn force_replaces_every_stage_including_the_distribution() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("again");
    let stages = [
        "characterize",
        "--tiny",
        "--stages",
        "doctor,distribution",
        "-o",
    ];
    memlat(tmp.path()).args(stages).arg(&dir).assert().success();
    let first = read_json(&dir.join("characterize.json")).unwrap();
    if first["stages"][1]["status"] != "done" {
        eprintln!(
            "skipped: the distribution stage did not run here: {}",
            first["stages"][1]
        );
        return;
    }
    memlat(tmp.path())
        .args(stages)
        .arg(&dir)
        .arg("--force")
        .assert()
        .success();
    let second = read_json(&dir.join("characterize.json")).unwrap();
    assert_eq!(second["stages"][1]["status"], "done", "{second}");
}

#[test]
fn a_directory_with_files_needs_force_and_keeps_files_it_did_not_write() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("busy");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    memlat(tmp.path())
        .args(["characterize", "--tiny", "--stages", "doctor", "-o"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--force"));
    assert!(!dir.join("doctor.json").exists(), "nothing written");
    memlat(tmp.path())
        .args([
            "characterize",
            "--tiny",
            "--stages",
            "doctor",
            "--force",
            "-o",
        ])
        .arg(&dir)
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    assert!(read_json(&dir.join("doctor.json")).is_some());
    // A stage that does not exist names the flag; a file is no directory.
    memlat(tmp.path())
        .args(["characterize", "--stages", "doctor,swep", "-o"])
        .arg(tmp.path().join("new"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--stages swep"));
    memlat(tmp.path())
        .args(["characterize", "-o"])
        .arg(dir.join("notes.txt"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a directory"));
}

#[test]
fn ctrl_c_after_the_first_stage_keeps_it_and_reports_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("int");
    // The quick sweep lasts seconds: long enough to be interrupted.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("memlat"))
        .env("XDG_CACHE_HOME", tmp.path())
        .args(["characterize", "--quick", "--stages", "doctor,sweep", "-o"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let summary = read_json(&dir.join("characterize.json"));
        if summary.is_some_and(|s| s["stages"][0]["status"] == "done") {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "it ended early");
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "doctor never finished"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: sends SIGINT to the child we spawned, by its pid.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert_eq!(
        read_json(&dir.join("doctor.json")).unwrap()["kind"],
        "doctor"
    );
    let summary = read_json(&dir.join("characterize.json")).unwrap();
    assert_eq!(summary["complete"], false);
    assert_eq!(stage(&summary, "doctor")["status"], "done");
    // Interrupted while it ran, or not started if the signal came between.
    let sweep = stage(&summary, "sweep")["status"].as_str().unwrap();
    assert!(sweep == "interrupted" || sweep == "skipped", "{sweep}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains("doctor.json (doctor)"),
        "the report of what is done"
    );
}

/// Whether a process still runs whose command line names `dir` (a stage
/// that outlived characterize finishes its point after the kernel's SIGINT).
fn runs_in(dir: &Path) -> bool {
    let needle = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc").unwrap().flatten().any(|p| {
        std::fs::read(p.path().join("cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&needle))
    })
}

#[test]
fn after_sigkill_resume_runs_only_the_missing_stages_and_writes_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("killed");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("memlat"))
        .env("XDG_CACHE_HOME", tmp.path())
        .args(["characterize", "--quick", "--stages", "doctor,sweep", "-o"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    // Killed once the sweep has a point: doctor done, the sweep cut short.
    loop {
        let points = read_json(&dir.join("sweep.json"))
            .and_then(|s| s["points"].as_array().map(Vec::len))
            .unwrap_or(0);
        if points > 0 {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "it ended early");
        assert!(start.elapsed() < Duration::from_secs(120), "no sweep point");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    while runs_in(&dir) {
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "the stage never ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!dir.join("report.html").exists(), "SIGKILL wrote no report");
    let doctor = std::fs::read(dir.join("doctor.json")).unwrap();
    let out = memlat(tmp.path())
        .args([
            "characterize",
            "--quick",
            "--stages",
            "doctor,sweep",
            "--resume",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("doctor: done by the earlier run, kept"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(dir.join("doctor.json")).unwrap(),
        doctor,
        "doctor not measured again"
    );
    let summary = read_json(&dir.join("characterize.json")).unwrap();
    assert_eq!(summary["complete"], true, "{summary}");
    assert_eq!(stage(&summary, "sweep")["status"], "done");
    assert_eq!(
        read_json(&dir.join("sweep.json")).unwrap()["complete"],
        true
    );
    assert!(dir.join("report.html").is_file());
    // Complete now: the same command is refused, naming --force.
    memlat(tmp.path())
        .args(["characterize", "--quick", "--stages", "doctor,sweep", "-o"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("complete characterization"));
}
