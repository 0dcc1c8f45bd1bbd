//! One verdict per file from every reader: the hostile corpus in
//! tests/fixtures/hostile (written by its make.py from a real sweep) is
//! read by detect, plot, compare, report, merge and `sweep --resume`;
//! `ok_*` files are read by all six, `bad_*` refused by all six, and by
//! `levels --plateaus`, with exit 2 (never 1: a malformed file is the
//! user's to fix).

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;

fn memlat() -> Command {
    Command::cargo_bin("memlat").unwrap()
}

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// Each reader's exit code on `file` (a copy in `dir` where the command
/// writes beside it).
fn verdicts(file: &Path, dir: &Path) -> Vec<(&'static str, Option<i32>, String)> {
    let reference = file.with_file_name("ok_sweep.json");
    let copy = dir.join("resume.json");
    std::fs::copy(file, &copy).unwrap();
    let mut runs: Vec<(&'static str, Command)> = Vec::new();
    let mut c = memlat();
    c.arg("detect").arg(file);
    runs.push(("detect", c));
    let mut c = memlat();
    c.arg("plot").arg(file).arg("-o").arg(dir.join("p.svg"));
    runs.push(("plot", c));
    let mut c = memlat();
    c.arg("compare").arg(file).arg(&reference);
    runs.push(("compare", c));
    let mut c = memlat();
    c.arg("report").arg(file).arg("-o").arg(dir.join("r.html"));
    runs.push(("report", c));
    let mut c = memlat();
    c.arg("merge").arg(file).arg("-o").arg(dir.join("m.csv"));
    runs.push(("merge", c));
    let mut c = memlat();
    c.args(["sweep", "--no-progress", "-o"])
        .arg(dir.join("s.txt"))
        .arg("--resume")
        .arg(&copy);
    runs.push(("sweep --resume", c));
    // --plateaus FILE measures once it reads a file: only refusals are tried.
    if file
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("bad_")
    {
        let mut c = memlat();
        c.args(["levels", "--iterations", "1", "--plateaus"])
            .arg(file);
        runs.push(("levels --plateaus", c));
    }
    runs.into_iter()
        .map(|(name, mut c)| {
            let out = c.timeout(Duration::from_secs(120)).output().unwrap();
            for f in ["p.svg", "r.html", "m.csv", "s.txt", "resume.csv"] {
                let _ = std::fs::remove_file(dir.join(f));
            }
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            (name, out.status.code(), err)
        })
        .collect()
}

#[test]
fn every_reader_gives_each_file_the_same_verdict() {
    let files = corpus();
    assert!(files.len() >= 20, "the corpus is missing: {files:?}");
    for file in files {
        let dir = tempfile::tempdir().unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let want = if name.starts_with("ok_") { 0 } else { 2 };
        for (reader, code, err) in verdicts(&file, dir.path()) {
            assert_eq!(code, Some(want), "{reader} on {name}: {err}");
            if want == 2 {
                assert!(
                    err.contains(&name) || err.contains("resume.json"),
                    "{reader} on {name} does not name the file: {err}"
                );
            }
        }
    }
}
