//! Every kind in the report: a fixture of each kind (tests/fixtures/results,
//! and a real sweep from tests/fixtures/curves) rendered to HTML and to
//! Markdown shows the kind's headline figure, read from the fixture itself,
//! in a table of both; the machine table comes after the results, folded.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    // A watch is JSON lines, read as one object by the result reader.
    match memlat::experiments::watch::record::read_lines(&text) {
        Some(watch) => watch.unwrap(),
        None => serde_json::from_str(&text).unwrap(),
    }
}

/// The report of `file` in `format`.
fn report(file: &Path, format: &str) -> String {
    let out = Command::cargo_bin("memlat")
        .unwrap()
        .args(["report", "--format", format])
        .arg(file)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every table cell of an HTML or Markdown report.
fn cells(doc: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in doc.lines() {
        if line.starts_with("<tr>") {
            for part in line.split("<td").skip(1) {
                let inner = part.split_once('>').map_or("", |(_, r)| r);
                let text = inner.split("</td>").next().unwrap_or("");
                out.push(text.replace("&amp;", "&").trim().to_string());
            }
        } else if line.starts_with("| ") && !line.starts_with("| :") && !line.starts_with("| -") {
            out.extend(
                line.trim_matches('|')
                    .split(" | ")
                    .map(|c| c.trim().to_string()),
            );
        }
    }
    out
}

fn f2(v: &Value) -> String {
    format!("{:.2}", v.as_f64().unwrap())
}

/// The figures each kind's headline must show, from its JSON.
fn headline(kind: &str, v: &Value) -> Vec<String> {
    let each = |list: &Value, f: &dyn Fn(&Value) -> Option<String>| -> Vec<String> {
        list.as_array().unwrap().iter().filter_map(f).collect()
    };
    match kind {
        "run" => vec![f2(&v["ns_per_load"]["median"])],
        "quick" => each(&v["points"], &|p| Some(f2(&p["ns_per_load"]["median"]))),
        "sweep" | "detect" => {
            let levels = if kind == "sweep" {
                &v["detection"]["levels"]
            } else {
                &v["levels"]
            };
            each(levels, &|l| Some(f2(&l["latency_ns"])))
        }
        "levels" => each(&v["levels"], &|l| Some(f2(&l["ns"]["median"]))),
        "assoc" => each(&v["levels"], &|l| l["ways"].as_u64().map(|w| w.to_string())),
        "linesize" => vec![match v["line_bytes"].as_u64() {
            Some(b) => format!("{b} bytes"),
            None => "passes disagree".into(),
        }],
        "loaduse" => vec![f2(&v["levels"][0]["latency_cycles"])],
        "mlp" => each(&v["levels"], &|l| {
            Some(format!("{:.1}", l["saturation_parallelism"].as_f64()?))
        }),
        "c2c" => each(&v["methods"], &|m| {
            Some(format!("{:.1}", m["clusters"][0]["median_ns"].as_f64()?))
        }),
        "numa" => vec![format!("{:.1}", v["matrix_ns"][0][0].as_f64().unwrap())],
        "tlb" => vec![v["page_bytes"][0]["levels"][0]["entries"].to_string()],
        "loaded" => vec![format!("{:.1}", v["idle_latency_ns"].as_f64().unwrap())],
        "bandwidth" => vec![format!(
            "{:.1}",
            v["points"][0]["read_gb_per_s"].as_f64().unwrap()
        )],
        "doctor" => vec![v["findings"][0]["what"].as_str().unwrap().into()],
        "characterize" => vec![v["stages"][0]["status"].as_str().unwrap().into()],
        "compare" => vec![format!("{:.3}", v["rows"][0]["ratio"].as_f64().unwrap())],
        "merged" => vec![f2(&v["results"][0]["ns_per_load"]["median"])],
        "watch" => {
            let series = v["summary"]["series"].as_array().unwrap();
            let memory = series.iter().find(|s| s["name"] == "memory").unwrap();
            let median = memlat::output::watch::reading(memory["median"].as_f64().unwrap(), "ns");
            vec![format!("{median} ns")]
        }
        other => panic!("no headline known for kind {other}"),
    }
}

#[test]
fn every_kind_shows_its_headline_in_html_and_markdown() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json" || x == "jsonl"))
        .collect();
    files.sort();
    files.push(fixture("curves/amd-epyc-zen4-kvm-2026-11-24.json"));
    let mut kinds = Vec::new();
    for file in &files {
        let v = read(file);
        let kind = v["kind"].as_str().unwrap().to_string();
        let want = headline(&kind, &v);
        assert!(
            !want.is_empty(),
            "{kind}: the fixture has no headline figure"
        );
        for format in ["html", "markdown"] {
            let doc = report(file, format);
            let found = cells(&doc);
            for figure in &want {
                assert!(
                    found.contains(figure),
                    "{kind} {format}: {figure} not in a table cell of the report"
                );
            }
            // The results lead; the machine they were measured on follows.
            let machine = doc.find("The machine").unwrap();
            let first = doc
                .find(&format!("({kind})"))
                // A merged file shows the results it holds (a run here).
                .or_else(|| doc.find("(run)"))
                .unwrap_or_else(|| panic!("{kind} {format}: no section"));
            assert!(
                first < machine,
                "{kind} {format}: the machine table comes first"
            );
        }
        assert!(report(file, "html").contains("<details><summary>1 host(s)"));
        kinds.push(kind);
    }
    kinds.sort();
    kinds.dedup();
    assert_eq!(
        kinds.len(),
        memlat::readback::KINDS.len(),
        "a kind without a fixture: {kinds:?}"
    );
}
