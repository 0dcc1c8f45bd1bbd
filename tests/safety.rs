//! memlat as root on a shared machine (issue 22): one test per class of what
//! an audit found. No result destroyed, no input unbounded, nothing from
//! another machine's file executed by a spreadsheet or a browser, no run that
//! exits 0 with a lost or wrong result. (Register state: tests/prefetch.rs.)

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

fn memlat() -> Command {
    Command::cargo_bin("memlat").unwrap()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/curves")
        .join(name)
}

/// A copy of a real sweep in `dir`, changed by `edit`.
fn sweep_file(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let text = std::fs::read_to_string(fixture("amd-epyc-zen3-fc-thp-b.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    edit(&mut v);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
    path
}

/// Exit 2 with one line on stderr that contains `says`.
fn refused(cmd: &mut Command, says: &str) {
    let out = cmd.timeout(Duration::from_secs(20)).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(says), "wanted '{says}' in: {err}");
}

#[test]
fn results_are_never_destroyed_by_flags_naming_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let r = sweep_file(dir.path(), "r.json", |_| {});
    let before = std::fs::read(&r).unwrap();
    refused(
        memlat()
            .current_dir(dir.path())
            .args(["sweep", "--resume", "r.json", "-o", "r.json"]),
        "both name",
    );
    assert_eq!(std::fs::read(&r).unwrap(), before, "r.json byte-identical");
    for pair in [
        ["--json", "x", "-o", "x"],
        ["--json", "x", "--csv", "x"],
        ["--csv", "x.svg", "--plot", "x.svg"],
    ] {
        refused(
            memlat().current_dir(dir.path()).arg("sweep").args(pair),
            "both name",
        );
    }
    refused(
        memlat()
            .current_dir(dir.path())
            .args(["detect", "r.json", "-o", "r.json"]),
        "both name",
    );
    // A plot that cannot be written fails before measuring, for every command.
    for cmd in ["mlp", "loaded", "c2c", "numa", "tlb"] {
        let started = Instant::now();
        refused(
            memlat().args([cmd, "--plot", "/nonexistent/x.svg"]),
            "does not exist",
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{cmd} measured first"
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no file left"
    );
}

#[test]
fn inputs_are_bounded_regular_memlat_files() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    refused(memlat().args(["detect", "/dev/zero"]), "not a regular file");
    refused(memlat().args(["report", "/dev/zero"]), "not a regular file");
    // An output folder: the refusal names the files in it.
    let folder = format!("{}/", dir.path().display());
    let files = format!("{}/*.json", dir.path().display());
    refused(memlat().args(["report", &folder]), &files);
    let fifo = dir.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success())
    );
    refused(
        memlat().arg("plot").arg(&fifo).args(["-o", "x.svg"]),
        "a FIFO",
    );
    assert!(started.elapsed() < Duration::from_secs(10), "no hang");
    let bogus = sweep_file(dir.path(), "bogus.json", |v| v["kind"] = "bogus".into());
    refused(memlat().arg("detect").arg(&bogus), "bogus");
    refused(
        memlat().arg("compare").arg(&bogus).arg(&bogus),
        "not one memlat writes",
    );
    let newer = sweep_file(dir.path(), "newer.json", |v| {
        v["schema_version"] = 999.into()
    });
    refused(memlat().arg("detect").arg(&newer), "schema_version 999");
    let empty = sweep_file(dir.path(), "empty.json", |v| {
        v["config"]["sizes"] = Value::Array(Vec::new())
    });
    refused(
        memlat().arg("sweep").arg("--resume").arg(&empty),
        "must not be empty",
    );
    for (name, text) in [
        ("null.json", "null"),
        ("list.json", "[]"),
        ("num.json", "42"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        refused(memlat().arg("report").arg(&path), "not a memlat result");
    }
    // Duplicate points are dropped with a notice, not counted twice.
    let dup = sweep_file(dir.path(), "dup.json", |v| {
        let points = v["points"].as_array().unwrap().clone();
        v["points"]
            .as_array_mut()
            .unwrap()
            .extend(points[..3].to_vec());
    });
    let out = memlat().arg("detect").arg(&dup).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("3 duplicate point(s)"));
    // merge does not follow a directory link back up (a loop).
    let tree = dir.path().join("tree/a");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::copy(fixture("amd-epyc-zen3-fc-thp-b.json"), tree.join("s.json")).unwrap();
    std::os::unix::fs::symlink("..", tree.join("up")).unwrap();
    let merged = dir.path().join("merged.json");
    let out = memlat()
        .arg("merge")
        .arg(dir.path().join("tree"))
        .arg("-o")
        .arg(&merged)
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(merged["results"].as_array().unwrap().len(), 1);
}

#[test]
fn strings_from_another_machine_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let evil = sweep_file(dir.path(), "evil.json", |v| {
        v["host"]["hostname"] = "<script>alert(1)</script>".into();
        v["host"]["cpu_model"] = "=HYPERLINK(\"http://x\")\n# injected".into();
    });
    let md = memlat()
        .arg("report")
        .arg(&evil)
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(!md.contains("<script"), "{md}");
    assert!(!md.lines().any(|l| l.starts_with("# injected")), "{md}");
    let cmp = memlat()
        .arg("compare")
        .arg(&evil)
        .arg(fixture("amd-epyc-zen3-fc-thp-a.json"))
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&cmp.stdout).contains("<script"));
    let html = dir.path().join("r.html");
    memlat()
        .arg("report")
        .arg(&evil)
        .arg("-o")
        .arg(&html)
        .assert()
        .success();
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(!html.contains("<script>alert") && html.contains("&lt;script&gt;"));
    let csv = memlat().arg("merge").arg(&evil).output().unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    for cell in csv.lines().flat_map(|l| l.split(',')) {
        let cell = cell.trim_start_matches('"');
        assert!(!cell.starts_with(['=', '+', '@']), "{cell}");
    }
}

#[test]
fn runs_are_honest_or_refused() {
    refused(
        memlat().args(["run", "-n", "16K", "--ghz", "20"]),
        "--ghz 20",
    );
    refused(
        memlat().args(["run", "-n", "16K", "--ghz", "0.01"]),
        "--ghz 0.01",
    );
    refused(memlat().args(["c2c", "--cpus", "0,0"]), "named twice");
    // A full standard output is an error that says so, never a panic.
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        for cmd in [&["events"][..], &["prefetchers"][..]] {
            let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("memlat"))
                .args(cmd)
                .stdout(full.try_clone().unwrap())
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{cmd:?}");
            assert!(String::from_utf8_lossy(&out.stderr).contains("closed or full"));
        }
    }
    // One repeat a side: no interval, no verdict.
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.json");
    memlat()
        .args([
            "run",
            "-n",
            "16K",
            "--repeats",
            "1",
            "--format",
            "json",
            "-o",
        ])
        .arg(&one)
        .assert()
        .success();
    let out = memlat()
        .arg("compare")
        .arg(&one)
        .arg(&one)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for row in v["rows"].as_array().unwrap() {
        assert_eq!(row["too_few_repeats"], true, "{row}");
        assert_eq!(row["significant"], false, "{row}");
        assert!(row["ci_low"].is_null());
    }
    // A size larger than memory is refused before anything is measured.
    let started = Instant::now();
    refused(
        memlat().args(["detect", "--from", "2G", "--to", "64T", "--ratio", "12"]),
        "needs about",
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_file_several_runs_could_name_is_held_by_one_and_replaced_only_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let s = sweep_file(dir.path(), "s.json", |_| {});
    let before = std::fs::read(&s).unwrap();
    // watch reads --plateaus FILE: -o may not name it (issue 37 #2).
    refused(
        memlat()
            .current_dir(dir.path())
            .args(["watch", "--plateaus", "s.json", "-o", "s.json"]),
        "both name",
    );
    // run -o and watch -o keep an earlier result unless --force (#3).
    refused(
        memlat()
            .current_dir(dir.path())
            .args(["run", "-n", "16K", "-o", "s.json"]),
        "--force",
    );
    refused(
        memlat()
            .current_dir(dir.path())
            .env("XDG_CACHE_HOME", &cache)
            .args(["watch", "--duration", "1s", "-o", "s.json"]),
        "--force",
    );
    assert_eq!(std::fs::read(&s).unwrap(), before, "s.json byte-identical");
    // Two watches on one -o: the second is refused at once, not both "written".
    let w = dir.path().join("w.jsonl");
    let mut first = std::process::Command::new(assert_cmd::cargo::cargo_bin("memlat"))
        .args([
            "watch",
            "--plain",
            "--duration",
            "3s",
            "--interval",
            "200ms",
        ])
        .args(["--plateaus", "probe", "-o"])
        .arg(&w)
        .env("XDG_CACHE_HOME", &cache)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    refused(
        memlat()
            .env("XDG_CACHE_HOME", &cache)
            .args(["watch", "--duration", "1s", "--force", "-o"])
            .arg(&w),
        "another memlat run is writing it",
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "refused at once"
    );
    let status = first.wait().unwrap();
    if status.success() {
        let text = std::fs::read_to_string(&w).unwrap();
        assert!(text.contains("\"summary\""), "{text}");
    }
    // No temporary or lock left beside it.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[test]
fn a_resumed_characterize_reads_no_stage_file_outside_its_directory() {
    // Issue 37 #11: the summary's stage files go through the readers' gate.
    let hostile = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile");
    for name in [
        "bad_characterize_file_outside.json",
        "bad_characterize_file_absolute.json",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let ch = dir.path().join("ch");
        std::fs::create_dir(&ch).unwrap();
        let mut v: Value =
            serde_json::from_str(&std::fs::read_to_string(hostile.join(name)).unwrap()).unwrap();
        v["complete"] = false.into();
        v["report"] = Value::Null;
        std::fs::write(ch.join("characterize.json"), v.to_string()).unwrap();
        refused(
            memlat()
                .current_dir(dir.path())
                .env("XDG_CACHE_HOME", dir.path())
                .args([
                    "characterize",
                    "--quick",
                    "--stages",
                    "doctor",
                    "--resume",
                    "ch",
                ]),
            "stages[0].file",
        );
        assert!(!ch.join("report.html").exists(), "{name}");
    }
}

/// A watch's JSON lines (tests/fixtures/results), changed by `edit` (its
/// lines as values), written to `dir/name`.
fn watch_file(dir: &Path, name: &str, edit: impl FnOnce(&mut Vec<Value>)) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/watch.jsonl"),
    )
    .unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    edit(&mut lines);
    let path = dir.join(name);
    let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn round_four_strings_are_escaped_and_cut_wherever_printed() {
    let dir = tempfile::tempdir().unwrap();
    let evil = sweep_file(dir.path(), "evil\u{1b}[2J.json", |v| {
        v["host"]["hostname"] = "\u{1b}[2J\u{1b}]0;pwned\u{7}".into();
    });
    let out = memlat()
        .arg("compare")
        .arg(&evil)
        .arg(fixture("amd-epyc-zen3-fc-thp-a.json"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\\u{1b}[2J"));
    // An error quotes a hostile string cut, not a megabyte to stderr.
    let long = sweep_file(dir.path(), "long.json", |v| {
        v["kind"] = "\u{1b}[2J".repeat(250_000).into();
    });
    for args in [&["report"][..], &["detect"], &["merge"]] {
        let out = memlat().args(args).arg(&long).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            out.stderr.len() < 5000,
            "{args:?}: {} bytes",
            out.stderr.len()
        );
        assert!(!out.stderr.contains(&0x1b), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("long.json"));
    }
}

#[test]
fn round_four_watches_are_read_as_written_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    // A summary that its intervals do not give is refused, naming the field.
    let edited = watch_file(dir.path(), "edited.jsonl", |l| {
        let last = l.len() - 1;
        l[last]["series"][0]["median"] = 12345.0.into();
    });
    refused(
        memlat()
            .arg("report")
            .arg(&edited)
            .args(["--format", "markdown"]),
        "summary.series[0].median",
    );
    refused(
        memlat().arg("compare").arg(&edited).arg(&edited),
        "summary.series[0].median",
    );
    // Nothing follows a summary.
    let after = watch_file(dir.path(), "after.jsonl", |l| {
        let interval = l[1].clone();
        l.push(interval);
    });
    refused(memlat().arg("report").arg(&after), "after the summary");
    // A watch cut short says so.
    let cut = watch_file(dir.path(), "cut.jsonl", |l| {
        l.pop();
    });
    let out = memlat()
        .arg("report")
        .arg(&cut)
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("cut short"));
    let out = memlat()
        .arg("compare")
        .arg(&cut)
        .arg(&cut)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("cut short"));
    // plot says what a watch is and which command draws it.
    refused(
        memlat()
            .arg("plot")
            .arg(&cut)
            .arg("-o")
            .arg(dir.path().join("p.svg")),
        "a watch (JSON lines)",
    );
    // compare's JSON of two watches is a result every reader reads back.
    let json = dir.path().join("c.json");
    memlat()
        .arg("compare")
        .arg(&cut)
        .arg(&cut)
        .args(["--format", "json", "-o"])
        .arg(&json)
        .assert()
        .success();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["kind"], "compare");
    assert!(v["schema_version"].is_u64());
    memlat()
        .arg("report")
        .arg(&json)
        .arg("-o")
        .arg(dir.path().join("r.html"))
        .assert()
        .success();
}

#[test]
fn round_four_reading_costs_a_bounded_multiple_of_the_text() {
    let dir = tempfile::tempdir().unwrap();
    // 600 KB of short values parse to a tree of about 15 MB: refused
    // before it is built, naming the bound.
    let dense = dir.path().join("dense.json");
    let zeros = vec!["0"; 300_000].join(",");
    std::fs::write(
        &dense,
        format!("{{\"schema_version\": 3, \"kind\": \"run\", \"x\": [{zeros}]}}"),
    )
    .unwrap();
    for cmd in ["report", "merge", "compare"] {
        refused(
            memlat()
                .args([cmd, "--max-input", "8"])
                .arg(&dense)
                .arg(&dense),
            "more than the bound of 8 MiB",
        );
    }
    // A sweep's points are read straight into their structs by every
    // reader, a merged file's sweeps too: a bound that its tree would pass
    // (384 KB of text, about 1.5 MB of tree) is enough.
    let sweep = fixture("amd-epyc-zen3-fc-thp-b.json");
    let merged = dir.path().join("m.json");
    memlat()
        .args(["merge", "--max-input", "1", "-o"])
        .arg(&merged)
        .arg(&sweep)
        .assert()
        .success();
    for cmd in ["detect", "report", "merge"] {
        memlat()
            .args([cmd, "--max-input", "1"])
            .arg(&sweep)
            .assert()
            .success();
    }
    memlat()
        .args(["report", "--max-input", "1"])
        .arg(&merged)
        .assert()
        .success();
    // Both files, about 1 MB of text: their trees would take 3 MB more.
    memlat()
        .args(["compare", "--max-input", "2"])
        .arg(&sweep)
        .arg(&merged)
        .assert()
        .success();
    // A sweep's other fields are a tree, counted: 200,000 short strings
    // in its sysfs_caches (a tree of about 10 MB) are refused, naming the bound.
    let noisy = sweep_file(dir.path(), "noisy.json", |v| {
        v["sysfs_caches"] = serde_json::json!(vec!["x"; 200_000]);
    });
    refused(
        memlat().args(["report", "--max-input", "2"]).arg(&noisy),
        "more than the bound of 2 MiB",
    );
}
