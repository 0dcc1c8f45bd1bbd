//! `memlat run` end to end: output shapes and every bad input.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

/// A short run: small buffer, few short samples, so each test takes well under a second.
fn memlat_run(args: &[&str]) -> Command {
    let mut cmd = Command::cargo_bin("memlat").unwrap();
    cmd.arg("run").args(["--sample-ms", "3"]).args(args);
    if !args.contains(&"--repeats") {
        cmd.args(["--repeats", "2"]);
    }
    cmd
}

fn text_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(" : ")?;
        (k.trim() == key).then(|| v.trim())
    })
}

#[test]
fn text_keeps_seed_004_lines_then_the_latency() {
    let out = memlat_run(&["-n", "16K", "-s", "64", "-e", "task-clock,page-faults"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert_eq!(text_value(&text, "size"), Some("16384"));
    assert_eq!(text_value(&text, "stride"), Some("64"));
    assert_eq!(text_value(&text, "distinct_blocks"), Some("256"));
    assert!(
        text_value(&text, "accesses")
            .unwrap()
            .parse::<u64>()
            .unwrap()
            >= 100
    );
    assert!(text_value(&text, "last element").is_some());
    // Software events count wherever perf_event_open is allowed; where it is
    // not (perf_event_paranoid 3, seccomp) the line says so and a warning why.
    match text_value(&text, "task-clock").unwrap().parse::<i64>() {
        Ok(count) => assert!(count > 0),
        Err(_) => {
            let stderr = String::from_utf8_lossy(&out.get_output().stderr);
            assert!(stderr.contains("'task-clock' is not counted"), "{stderr}");
            eprintln!("task-clock not counted here: {stderr}");
        }
    }
    assert!(text_value(&text, "page-faults").is_some());
    assert!(text.lines().any(|l| l == "OK"));
    let ns: f64 = text_value(&text, "ns_per_load").unwrap().parse().unwrap();
    let cycles: f64 = text_value(&text, "cycles_per_load")
        .unwrap()
        .parse()
        .unwrap();
    assert!(ns > 0.0 && cycles > 0.0);
    let word = |key: &str| {
        text.lines().find_map(|line| {
            let (k, v) = line.split_once(" = ")?;
            (k.trim() == key).then(|| v.trim())
        })
    };
    assert!(["perf", "cycle-counter", "estimated"].contains(&word("cycle_source").unwrap()));
    assert!(word("page_backing").is_some());
    assert!(text_value(&text, "cpu").is_some());
    // Seed 004's notebook reads every `key:value` line with pandas and averages
    // them: each one must hold a number (or nan), and `cycles` must be there.
    let reader = |line: &str| {
        let (key, value) = line.split_once(':')?;
        (!key.is_empty() && !value.contains(':')).then(|| value.trim().to_string())
    };
    for value in text.lines().filter_map(reader) {
        assert!(
            value == "nan" || value.parse::<f64>().is_ok(),
            "a word where the seed's reader wants a number: {value}\n{text}"
        );
    }
    // The cycles line is always a number: counted, or the estimate (ns x
    // clock) that the JSON lists in `estimated_events`.
    let cycles = text_value(&text, "cycles").unwrap();
    assert!(cycles.parse::<u64>().unwrap() > 0, "{text}");
}

#[test]
fn as_ptr_chase_memlat_prints_the_seeds_view_with_its_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("ptr_chase");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("memlat"), &link).unwrap();
    let out = Command::new(&link)
        .args([
            "-n",
            "4096",
            "-s",
            "64",
            "--n_accesses",
            "200000",
            "--sample-ms",
            "2",
        ])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let keys: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once(" : ").map(|(k, _)| k.trim()))
        .collect();
    assert_eq!(
        &keys[..5],
        [
            "size",
            "stride",
            "distinct_blocks",
            "accesses",
            "last element"
        ]
    );
    for event in [
        "instructions",
        "cycles",
        "L1-dcache-load-misses",
        "cache-misses",
    ] {
        assert!(keys.contains(&event), "{event} missing from\n{text}");
    }
    assert!(text.lines().any(|l| l == "OK"));
    assert_eq!(text_value(&text, "accesses"), Some("200000"));
    assert!(
        text_value(&text, "ns_per_load").is_none(),
        "the seed's view only"
    );
}

#[test]
fn json_has_every_documented_field() {
    let out = memlat_run(&[
        "-n",
        "64K",
        "--pattern",
        "random",
        "-e",
        "task-clock",
        "--format",
        "json",
    ])
    .assert()
    .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    for key in [
        "size",
        "stride",
        "pattern",
        "kernel",
        "accesses",
        "distinct_blocks",
        "ns_per_load",
        "cycles_per_load",
        "cycle_source",
        "clock_ghz",
        "events",
        "page_backing",
        "cpu",
        "loop_overhead_cycles",
        "samples",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    for key in ["min", "median", "max"] {
        assert!(v["ns_per_load"][key].as_f64().unwrap() > 0.0);
        assert!(v["cycles_per_load"][key].as_f64().unwrap() > 0.0);
    }
    assert_eq!(v["pattern"], "random");
    assert_eq!(v["samples"].as_array().unwrap().len(), 2);
    let task_clock = &v["events"]["task-clock"];
    assert!(task_clock.is_null() || task_clock.as_f64().unwrap() > 0.0);
    // How the core clock was estimated, for scripts that check it.
    let method = &v["clock_method"];
    assert!(method["agree"].is_boolean(), "{method}");
    assert!(method["bound_ghz"].is_null() || method["bound_ghz"].as_f64().unwrap() > 0.0);
    let chains = method["chains"].as_array().unwrap();
    assert_eq!(chains.len(), 2);
    assert_eq!(chains[0]["kind"], "add");
    assert_eq!(chains[1]["kind"], "mul");
    assert!(chains[0]["ghz"].as_f64().unwrap() > 0.0);
    assert_eq!(v["distinct_blocks"], 1024);
}

#[test]
fn events_that_cannot_be_counted_are_null_with_a_warning() {
    // Hardware events on a machine without a PMU: a warning and a null, never a crash.
    let out = memlat_run(&["-n", "16K", "-e", "cycles,task-clock", "--format", "json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr);
    // Not counted by perf: the cycles figure is the cycle counter's, or the
    // estimate, named in `estimated_events`; never a null beside a number.
    assert!(v["events"]["cycles"].as_f64().unwrap() > 0.0, "{v}");
    let estimated = v["estimated_events"]
        .as_array()
        .is_some_and(|e| e.iter().any(|e| e == "cycles"));
    if v["cycle_source"] == "perf" {
        assert!(!estimated);
    } else {
        assert!(stderr.contains("event 'cycles' is not counted"), "{stderr}");
        assert_eq!(estimated, v["cycle_source"] != "cycle-counter", "{v}");
    }
}

#[test]
fn csv_has_one_row_per_repeat() {
    let out = memlat_run(&["-n", "8K", "--format", "csv", "--repeats", "3"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    let header: Vec<&str> = lines[0].split(',').collect();
    assert!(header.contains(&"ns_per_load") && header.contains(&"cycles_per_load"));
    for row in &lines[1..] {
        assert_eq!(row.split(',').count(), header.len());
    }
}

#[test]
fn every_kernel_and_pattern_runs() {
    for kernel in ["pointer", "index", "portable"] {
        for pattern in ["stride", "random", "page-random"] {
            memlat_run(&["-n", "32K", "--kernel", kernel, "--pattern", pattern])
                .assert()
                .success();
        }
    }
}

#[test]
fn sizes_and_strides_round_up_to_8_with_a_notice() {
    memlat_run(&["-n", "12345", "-s", "123"])
        .assert()
        .success()
        .stdout(predicate::str::contains("12352"))
        .stderr(
            predicate::str::contains("rounded up to 12352")
                .and(predicate::str::contains("rounded up to 128")),
        );
}

#[test]
fn output_file_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    memlat_run(&[
        "-n",
        "16K",
        "--format",
        "json",
        "-o",
        path.to_str().unwrap(),
    ])
    .assert()
    .success();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["size"], 16384);
}

fn bad(args: &[&str], flag: &str) {
    memlat_run(args)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(flag))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn bad_input_exits_2_naming_the_flag() {
    bad(&["-n", "0"], "--size");
    bad(&["-n", "64", "--pattern", "random"], "--size");
    bad(&["-n", "abc"], "--size");
    bad(&["-s", "0"], "--stride");
    bad(&["-a", "0"], "--accesses");
    bad(&["-e", "cycels"], "--events");
    bad(&["--cpu", "100000"], "--cpu");
    bad(&["--node", "4095"], "--node");
    bad(&["-n", "100T"], "--size");
    bad(&["--repeats", "0"], "--repeats");
    bad(&["--ghz", "0"], "--ghz");
    bad(&["--line", "12"], "--line");
    bad(&["-o", "/nonexistent-dir/x.json"], "--output");
}

#[test]
fn events_lists_software_events_as_available() {
    let out = Command::cargo_bin("memlat")
        .unwrap()
        .args(["events", "--format", "json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let list = v.as_array().unwrap();
    let task_clock = list.iter().find(|e| e["name"] == "task-clock").unwrap();
    assert_eq!(task_clock["available"], true);
    assert!(list.iter().any(|e| e["name"] == "cycles"));
}

#[test]
fn quick_table_runs_with_given_sizes() {
    Command::cargo_bin("memlat")
        .unwrap()
        .args(["--sizes", "16K,256K", "--sample-ms", "3", "--repeats", "1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("16 KiB").and(predicate::str::contains("256 KiB")));
}

#[test]
fn a_failed_or_interrupted_run_leaves_an_existing_output_file_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("existing.txt");
    std::fs::write(&path, "an earlier result\n").unwrap();
    let o = path.to_str().unwrap();
    // Without --force, an earlier result is kept and the run refused.
    memlat_run(&["-n", "16K", "-o", o])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--force"));
    memlat_run(&["-n", "16K", "-e", "no-such", "--force", "-o", o])
        .assert()
        .code(2);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "an earlier result\n"
    );
    // A run cut short by SIGTERM: the file is replaced only on success.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("memlat"))
        .args([
            "run",
            "-n",
            "16K",
            "--repeats",
            "100000",
            "--sample-ms",
            "5",
            "--force",
            "-o",
            o,
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    // SAFETY: kill only sends SIGTERM to the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    child.wait().unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "an earlier result\n"
    );
    // And a successful run replaces it whole.
    memlat_run(&["-n", "16K", "--format", "json", "--force", "-o", o])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["size"], 16384);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
}

#[test]
fn csv_names_each_column_once_with_a_counted_cycles_event() {
    let out = memlat_run(&[
        "-n",
        "8K",
        "--format",
        "csv",
        "--repeats",
        "2",
        "-e",
        "cycles,task-clock",
    ])
    .assert()
    .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    for (k, name) in header.iter().enumerate() {
        assert!(!header[..k].contains(name), "{name} twice in {header:?}");
    }
    assert!(header.contains(&"cycles_per_load") && header.contains(&"cycles_counted_per_load"));
}
