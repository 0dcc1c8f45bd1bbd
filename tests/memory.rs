//! What reading a result costs in memory (issue 37): no reader takes more
//! than 4 times the bytes it reads. A sweep of about 8 MiB, made from a
//! measured point repeated over 2000 sizes and several series (the shape
//! `bench/big_sweep.py` writes at 234 MiB for the audit), goes through
//! detect, plot, report, merge and compare, each a child whose peak
//! resident memory is read from the kernel (`wait4`'s `ru_maxrss`). What a
//! command takes whatever it reads (the binary, its libraries, a plot's
//! fonts) is measured too, on the 384 KB sweep it was made from, and left
//! out. A reader holding the text and a JSON tree of it took 5 to 15 times
//! the text above that (a 231 MiB sweep: report 8.2, merge 14.6, compare
//! 7.6); one reading the points into their structs takes about 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/curves/amd-epyc-zen3-fc-thp-b.json")
}

/// A sweep of about `mib` MiB at `path`: the fixture's first point at
/// 2000 sizes (a sweep's most), in a random series and as many stride
/// series as the size asks, each point's latency from a four-level curve.
/// Written a point at a time: a child's peak memory as the kernel gives
/// it starts at this process's own peak (Linux carries it over `exec`),
/// so this process stays small.
fn big_sweep(path: &Path, mib: usize) {
    use std::io::Write;
    let text = std::fs::read_to_string(fixture()).unwrap();
    let mut sweep: Value = serde_json::from_str(&text).unwrap();
    drop(text);
    let template = sweep["points"][0].take();
    let point_bytes = serde_json::to_string(&template).unwrap().len() + 1;
    let points = (mib << 20) / point_bytes;
    let mut sizes = Vec::new();
    let mut size = 1088u64;
    while sizes.len() < 2000.min(points) {
        sizes.push(size);
        size = (size + 64).max(size * 1005 / 1000 / 64 * 64);
    }
    let mut series = vec![json!({"pattern": "random", "stride": 0})];
    while series.len() * sizes.len() < points {
        series.push(json!({"pattern": "stride", "stride": 64 * series.len()}));
    }
    let config = &mut sweep["config"];
    config["sizes"] = json!(sizes);
    config["series"] = json!(series);
    config["to"] = json!(sizes.last());
    config["range_end_reason"] = json!("to");
    for key in ["refined_sizes", "remeasured_sizes", "first_pass_levels"] {
        config[key] = json!([]);
    }
    sweep["points"] = json!("POINTS");
    sweep["detection"] = Value::Null;
    let head = serde_json::to_string(&sweep).unwrap();
    let (before, after) = head.split_once("\"POINTS\"").unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(out, "{before}[").unwrap();
    let median = template["ns_per_load"]["median"].as_f64().unwrap();
    for (k, &size) in sizes.iter().enumerate() {
        let ns = match size {
            s if s <= 32 << 10 => 1.3,
            s if s <= 512 << 10 => 4.2,
            s if s <= 32 << 20 => 14.0,
            _ => 95.0,
        };
        for (j, s) in series.iter().enumerate() {
            let mut p = template.clone();
            p["size"] = size.into();
            p["pattern"] = s["pattern"].clone();
            p["stride"] = s["stride"].clone();
            let scale = ns / median;
            for key in ["min", "median", "mean", "max"] {
                let v = p["ns_per_load"][key].as_f64().unwrap();
                p["ns_per_load"][key] = (v * scale).into();
            }
            for sample in p["samples"].as_array_mut().unwrap() {
                let v = sample["ns_per_load"].as_f64().unwrap();
                sample["ns_per_load"] = (v * scale).into();
            }
            if k + j > 0 {
                out.write_all(b",").unwrap();
            }
            serde_json::to_writer(&mut out, &p).unwrap();
        }
    }
    write!(out, "]{after}").unwrap();
    out.flush().unwrap();
}

/// This process's peak resident memory so far, bytes (`VmHWM`).
fn own_peak() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

/// Runs memlat with `args` in `dir`: its exit status and peak resident
/// memory in bytes, that child's alone (`wait4`).
// The child is waited for by wait4, which gives its usage; Child::wait
// would reap it without.
#[allow(clippy::zombie_processes)]
fn peak(dir: &Path, args: &[&str]) -> (i32, u64) {
    let child = Command::new(env!("CARGO_BIN_EXE_memlat"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: all-zero is a valid rusage; wait4 fills it for this child,
    // which this process started and nothing else waits for.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 memlat {args:?}");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    // Linux gives ru_maxrss in KiB.
    (code, usage.ru_maxrss as u64 * 1024)
}

/// Each reader's command line reading `file` (compare: with the 384 KB
/// sweep, which shares a few of its points: a debug build takes a tenth
/// of a second to bootstrap each shared point).
fn commands(file: &str) -> Vec<(&'static str, Vec<String>)> {
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect();
    vec![
        ("detect", args(&["detect", file, "-o", "d.txt"])),
        ("plot", args(&["plot", file, "-o", "p.svg"])),
        ("report", args(&["report", file, "-o", "r.html"])),
        ("merge", args(&["merge", file, "-o", "m.json"])),
        (
            "compare",
            args(&["compare", file, "small.json", "-o", "c.txt"]),
        ),
    ]
}

#[test]
fn no_reader_takes_more_than_four_times_what_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    big_sweep(&big, 8);
    let small = dir.path().join("small.json");
    std::fs::copy(fixture(), &small).unwrap();
    let bytes = std::fs::metadata(&big).unwrap().len();
    let small_bytes = std::fs::metadata(&small).unwrap().len();
    assert!(bytes > 7 << 20, "{bytes}");
    let mut over = Vec::new();
    let mut figures = Vec::new();
    for ((name, on_big), (_, on_small)) in
        commands("big.json").into_iter().zip(commands("small.json"))
    {
        let on_big: Vec<&str> = on_big.iter().map(String::as_str).collect();
        let on_small: Vec<&str> = on_small.iter().map(String::as_str).collect();
        let started = std::time::Instant::now();
        let (code, big_peak) = peak(dir.path(), &on_big);
        let took_s = started.elapsed().as_secs_f64();
        assert_eq!(code, 0, "memlat {on_big:?}");
        let (code, base) = peak(dir.path(), &on_small);
        assert_eq!(code, 0, "memlat {on_small:?}");
        // Else the figures would be this process's, not memlat's.
        assert!(base > own_peak(), "{name}: {base} against {}", own_peak());
        let read = bytes - small_bytes;
        let took = big_peak.saturating_sub(base);
        figures.push(format!(
            "{name}: {} MiB over {} MiB for {} MiB more read ({:.2}x), {took_s:.1} s",
            big_peak >> 20,
            base >> 20,
            read >> 20,
            took as f64 / read as f64
        ));
        if took > 4 * read {
            over.push(name);
        }
    }
    eprintln!("{}", figures.join("\n"));
    assert!(over.is_empty(), "over 4x: {over:?}\n{}", figures.join("\n"));
}
