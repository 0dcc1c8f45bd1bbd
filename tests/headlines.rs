//! A command's text leads with the headline the report shows: each command
//! is run once for JSON and once for text (same flags, tiny sizes), and the
//! text must hold every headline table `output::present::headline` makes of
//! the JSON, with the same columns and the same row labels. The figures are
//! measured twice, so only labels are compared; detect reads a fixed curve,
//! so its text holds the headline exactly.

#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use memlat::output::present::headline;
use memlat::readback::Kind;
use serde_json::Value;

fn memlat(dir: &Path, args: &[&str], format: &str) -> String {
    let out = Command::cargo_bin("memlat")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .args(["--format", format])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "memlat {args:?} --format {format}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A table line's cells: columns are two or more spaces apart.
fn cells(line: &str) -> Vec<String> {
    line.trim()
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(String::from)
        .collect()
}

/// Checks that `text` holds each of `tables` (rendered as text): its
/// header's columns on one line, then its rows, each with the same first
/// cell (the row's label). `exact`: the whole table, figures too.
fn holds(text: &str, tables: &[memlat::output::table::Table], exact: bool, what: &str) {
    assert!(!tables.is_empty(), "{what}: no headline table");
    let lines: Vec<&str> = text.lines().collect();
    for t in tables {
        let rendered = t.text();
        if exact {
            assert!(
                text.contains(&rendered),
                "{what}: {rendered}\nnot in\n{text}"
            );
            continue;
        }
        let wanted: Vec<&str> = rendered.lines().collect();
        let at = lines
            .iter()
            .position(|l| cells(l) == cells(wanted[0]))
            .unwrap_or_else(|| panic!("{what}: header {:?} not in\n{text}", wanted[0]));
        for k in 0..t.rows.len() {
            let (got, want) = (cells(lines[at + 1 + k]), cells(wanted[1 + k]));
            assert_eq!(got.first(), want.first(), "{what}: row {k}\n{text}");
            assert_eq!(got.len(), want.len(), "{what}: row {k}\n{text}");
        }
    }
}

/// Runs `args` for JSON and for text and checks the text's headline.
fn check(dir: &Path, kind: Kind, args: &[&str]) {
    let value: Value = serde_json::from_str(&memlat(dir, args, "json")).unwrap();
    let tables = headline(kind, &value).unwrap();
    holds(&memlat(dir, args, "text"), &tables, false, kind.name());
}

fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    // Two small levels, so levels and assoc measure a few MiB at most.
    let machine = dir.path().join("tiny.txt");
    std::fs::write(&machine, "name: tiny\nL1: 8K\nL2: 64K\n").unwrap();
    (dir, machine)
}

#[test]
fn latency_commands_print_the_reports_headline() {
    let (dir, machine) = scratch();
    let (d, m) = (dir.path(), machine.to_str().unwrap());
    check(d, Kind::Quick, &["--sizes", "16K,64K", "--repeats", "2"]);
    check(
        d,
        Kind::Levels,
        &[
            "levels",
            "--machine",
            m,
            "--iterations",
            "2",
            "--csv",
            "lv.csv",
        ],
    );
    check(
        d,
        Kind::Assoc,
        &["assoc", "--machine", m, "--levels", "1", "--max-lines", "4"],
    );
    check(
        d,
        Kind::Mlp,
        &["mlp", "--sizes", "16K", "--chains", "1,2", "--repeats", "1"],
    );
    check(
        d,
        Kind::Loaduse,
        &[
            "loaduse",
            // A size, not "L1": a level's size comes from the plateaus each
            // run measures, and the JSON and text runs must name the same row.
            "--level",
            "8K",
            "--nops",
            "0..4",
            "--no-run",
            "--repeats",
            "1",
        ],
    );
    check(
        d,
        Kind::Linesize,
        &[
            "linesize",
            "-n",
            "64K",
            "--repeats",
            "1",
            "--strides",
            "8,64,128",
        ],
    );
}

#[test]
fn system_commands_print_the_reports_headline() {
    let (dir, _) = scratch();
    let d = dir.path();
    check(d, Kind::Numa, &["numa", "-n", "1M", "--repeats", "1"]);
    check(
        d,
        Kind::Tlb,
        &[
            "tlb",
            "--max-pages",
            "32",
            "--page-sizes",
            "4k",
            "--repeats",
            "1",
        ],
    );
    check(
        d,
        Kind::Loaded,
        &[
            "loaded",
            "--threads",
            "1",
            "--delays",
            "0",
            "-n",
            "1M",
            "--traffic-size",
            "1M",
            "--repeats",
            "1",
        ],
    );
    check(
        d,
        Kind::Bandwidth,
        &[
            "bandwidth",
            "--sizes",
            "16K",
            "--threads",
            "1",
            "--repeats",
            "1",
            "--sample-ms",
            "1",
        ],
    );
    // doctor's text lays each finding out for a terminal (`what  value`,
    // its meaning below): the headline's rows, in order, one line each.
    // One CPU for both runs: left to itself doctor picks the quietest, and
    // its "SMT sibling of CPU N" row names the one it picked.
    let cpu = memlat::platform::allowed_cpus()[0].to_string();
    let doctor = ["doctor", "--cpu", cpu.as_str()];
    let value: Value = serde_json::from_str(&memlat(d, &doctor, "json")).unwrap();
    let findings = &headline(Kind::Doctor, &value).unwrap()[0];
    let text = memlat(d, &doctor, "text");
    let starts: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
        .skip(1)
        .filter_map(|l| cells(l).first().cloned())
        .collect();
    let labels: Vec<String> = findings
        .text()
        .lines()
        .skip(1)
        .take(findings.rows.len())
        .filter_map(|l| cells(l).first().cloned())
        .collect();
    assert_eq!(starts, labels, "{text}");
    if memlat::platform::allowed_cpus().len() >= 2 {
        check(d, Kind::C2c, &["c2c"]);
    } else {
        eprintln!("skipped c2c: it needs two CPUs, this process may use one");
    }
}

/// detect and compare read fixed files: their text holds the headline,
/// figures too.
#[test]
fn detect_and_compare_print_the_headline_of_their_json_exactly() {
    let fixture = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name)
            .to_str()
            .unwrap()
            .to_string()
    };
    let dir = tempfile::tempdir().unwrap();
    let runs = [
        (
            Kind::Detect,
            vec![
                "detect".to_string(),
                fixture("curves/amd-epyc-zen4-kvm-2026-11-24.json"),
            ],
        ),
        (
            Kind::Compare,
            vec![
                "compare".into(),
                fixture("hostile/ok_sweep.json"),
                fixture("hostile/ok_schema2.json"),
            ],
        ),
        (
            Kind::Compare,
            vec![
                "compare".into(),
                fixture("results/bandwidth.json"),
                fixture("results/bandwidth.json"),
            ],
        ),
    ];
    for (kind, args) in runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let value: Value = serde_json::from_str(&memlat(dir.path(), &args, "json")).unwrap();
        let tables = headline(kind, &value).unwrap();
        holds(
            &memlat(dir.path(), &args, "text"),
            &tables,
            true,
            kind.name(),
        );
    }
}

/// run keeps seed 004's `key : value` lines; they hold the headline's
/// size, pattern and repeats (the figures are measured twice).
#[test]
fn run_text_holds_the_headline_figures() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["run", "-n", "16K", "--repeats", "2"];
    let value: Value = serde_json::from_str(&memlat(dir.path(), &args, "json")).unwrap();
    let table = &headline(Kind::Run, &value).unwrap()[0];
    let text = memlat(dir.path(), &args, "text");
    let field = |key: &str| {
        text.lines()
            .find_map(|l| {
                let (k, v) = l.split_once([':', '='])?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| panic!("{key} not in\n{text}"))
    };
    let row = cells(table.text().lines().nth(1).unwrap());
    assert_eq!(row[0], "16 KiB");
    assert_eq!(field("size"), value["size"].to_string());
    assert_eq!(field("pattern"), row[1]);
    assert_eq!(field("repeats"), row[5]);
}

/// Two results of one name (one file given twice) get labels of their own:
/// a CSV header naming a column twice loses one in pandas (and tripped the
/// unique-header check of a debug build).
#[test]
fn compare_csv_of_one_name_twice_has_unique_headers() {
    let sweep = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile/ok_sweep.json");
    let sweep = sweep.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let csv = memlat(dir.path(), &["compare", sweep, sweep], "csv");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for (k, name) in header.iter().enumerate() {
        assert!(!header[..k].contains(name), "{name} twice in {header:?}");
    }
    assert!(csv.lines().next().unwrap().contains("#2"), "{csv}");
}
