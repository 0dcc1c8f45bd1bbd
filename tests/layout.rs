//! The source layout as a test, reading src/ as text: the floors that
//! ARCHITECTURE.md states (analysis imports neither output nor engine; arch
//! does not import kernels; experiments draw no output tables) and the size limit on every file in src/.

use std::fs;
use std::path::{Path, PathBuf};

/// A file past this many lines holds more than one concern (STYLE.md's
/// limit for the project's source files).
const MAX_LINES: usize = 600;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every file under src/`layer`, as (path, text).
fn layer(layer: &str) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(&src().join(layer), &mut files);
    assert!(!files.is_empty(), "src/{layer} has no Rust files");
    files
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// The lines of `text` (comments left out) that name module `target` of the
/// crate: `crate::target`, `super::...::target` or `target` in a
/// `use crate::{...}` group. `super::` paths count because a layer's files
/// sit one or more levels below src/, where `super::super::kernels` reaches out.
fn imports_of<'a>(text: &'a str, target: &str) -> Vec<&'a str> {
    let word = |s: &str, at: usize| {
        let end = at + target.len();
        s[end..].starts_with("::") || s[end..].starts_with([',', '}', ';', ' '])
    };
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//"))
        .filter(|l| {
            l.match_indices(target).any(|(at, _)| {
                let before = &l[..at];
                word(l, at)
                    && (before.ends_with("crate::")
                        || before.ends_with("super::")
                        || (before.contains("crate::{") && before.ends_with(['{', ' ', ','])))
            })
        })
        .collect()
}

fn assert_no_imports(from: &str, targets: &[&str]) {
    let mut found = Vec::new();
    for (path, text) in layer(from) {
        for target in targets {
            for line in imports_of(&text, target) {
                found.push(format!("{}: {line}", path.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "src/{from} must not import {targets:?} (ARCHITECTURE.md, floors):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scanner_finds_each_form_of_import() {
    assert_eq!(
        imports_of("use crate::output::table::Table;", "output").len(),
        1
    );
    assert_eq!(
        imports_of("let x = crate::engine::curve(&m);", "engine").len(),
        1
    );
    assert_eq!(
        imports_of("use super::super::kernels::UNROLL;", "kernels").len(),
        1
    );
    assert_eq!(imports_of("use crate::{engine, units};", "engine").len(), 1);
    assert!(imports_of("// see crate::output::table", "output").is_empty());
    assert!(imports_of("use crate::outputs::x;", "output").is_empty());
    assert!(imports_of("let engine = 1;", "engine").is_empty());
}

#[test]
fn analysis_imports_neither_output_nor_engine() {
    assert_no_imports("analysis", &["output", "engine"]);
}

/// Experiments give result types; tables and documents of them are drawn in
/// `output/` (`output::present`), above them.
#[test]
fn experiments_draw_no_tables() {
    let mut found = Vec::new();
    for (path, text) in layer("experiments") {
        for line in imports_of(&text, "output") {
            if line.contains("output::table") || line.contains("output::document") {
                found.push(format!("{}: {line}", path.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "src/experiments must not draw output tables (ARCHITECTURE.md):\n{}",
        found.join("\n")
    );
}

#[test]
fn arch_does_not_import_kernels() {
    assert_no_imports("arch", &["kernels"]);
}

#[test]
fn no_file_in_src_exceeds_the_line_limit() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let lines = fs::read_to_string(p).unwrap().lines().count();
            (lines > MAX_LINES).then(|| format!("{}: {lines} lines", p.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split them along their concerns):\n{}",
        long.join("\n")
    );
}
