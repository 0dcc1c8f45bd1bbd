//! Mutated result files of every kind through the readers, in-process
//! (issue 37): 0 panics, 0 hangs, 0 absurd values accepted. Each real
//! result (tests/fixtures/results, the hostile corpus's sweep, a watch's
//! JSON lines) is mutated by a fixed-seed generator: a figure made absurd
//! for any field (1e300, -9.2e18, 3.4e38...), a figure a field can never
//! hold as text (`"NaN"`, `""`), a latency made negative, a watch's summary
//! made to disagree with its intervals (each of these must be refused),
//! and blind damage (a field removed, a node swapped for another type, the
//! text cut, control characters and long strings put in): read or refused,
//! never a panic. What is accepted is then shown (headline, charts,
//! measurements to compare, a sweep's detection) and its text printed.

// The readers it drives present results, which needs the command line.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use memlat::readback::{self, Kind};
use serde_json::{Value, json};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every kind memlat writes: (name, text).
fn corpus() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let dir = fixtures().join("results");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        if f.extension().is_some_and(|x| x == "json" || x == "jsonl") {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, std::fs::read_to_string(&f).unwrap()));
        }
    }
    out.push((
        "sweep.json".into(),
        std::fs::read_to_string(fixtures().join("hostile/ok_sweep.json")).unwrap(),
    ));
    out
}

/// The lines of a watch, each a JSON value; one value for any other file.
fn values(name: &str, text: &str) -> Vec<Value> {
    if name.ends_with(".jsonl") {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    } else {
        vec![serde_json::from_str(text).unwrap()]
    }
}

fn text_of(name: &str, values: &[Value]) -> String {
    if name.ends_with(".jsonl") {
        values
            .iter()
            .map(|v| serde_json::to_string(v).unwrap() + "\n")
            .collect()
    } else {
        serde_json::to_string(&values[0]).unwrap()
    }
}

/// A path to a node: keys and indexes from the top.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every node of `v` with its path and its field's name; `numbers` gets
/// those that are numbers.
fn nodes(
    v: &Value,
    path: &mut Vec<Step>,
    key: &str,
    out: &mut Vec<(Vec<Step>, String)>,
    numbers: &mut Vec<(Vec<Step>, String)>,
) {
    out.push((path.clone(), key.to_string()));
    if v.is_number() {
        numbers.push((path.clone(), key.to_string()));
    }
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                path.push(Step::Key(k.clone()));
                nodes(child, path, k, out, numbers);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                path.push(Step::Index(i));
                nodes(child, path, key, out, numbers);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, step| match step {
        Step::Key(k) => &mut v[k.as_str()],
        Step::Index(i) => &mut v[*i],
    })
}

/// What a mutation must come to.
#[derive(Debug, PartialEq)]
enum Want {
    Refused,
    Either,
}

/// Figures no field of any result can hold.
const ABSURD: [f64; 8] = [1e300, -1e300, -9.2e18, 1.2e29, 3.4e38, 1e16, -1e16, 4.2e17];

/// Fields that hold a figure and nothing else.
const FIGURES: [&str; 12] = [
    "ns",
    "ns_per_load",
    "median",
    "min",
    "max",
    "p95",
    "hit_ns",
    "miss_ns",
    "packed_ns",
    "pair_ns",
    "size",
    "stride",
];

/// Latencies, never below 0.
const LATENCIES: [&str; 7] = [
    "ns_per_load",
    "hit_ns",
    "miss_ns",
    "packed_ns",
    "pair_ns",
    "lone_ns",
    "median_ns",
];

/// One mutation of `vals`: what it did and what it must come to.
fn mutate(rng: &mut Rng, name: &str, vals: &mut [Value]) -> (String, Want) {
    let line = rng.below(vals.len());
    let (mut all, mut numbers) = (Vec::new(), Vec::new());
    nodes(&vals[line], &mut Vec::new(), "", &mut all, &mut numbers);
    let numbers: Vec<&(Vec<Step>, String)> = numbers.iter().collect();
    let pick = |rng: &mut Rng, list: &[&(Vec<Step>, String)]| list[rng.below(list.len())].clone();
    match rng.below(7) {
        0 | 1 if !numbers.is_empty() => {
            let (path, key) = pick(rng, &numbers);
            let x = ABSURD[rng.below(ABSURD.len())];
            *at(&mut vals[line], &path) = json!(x);
            (format!("{key} {path:?} = {x:e}"), Want::Refused)
        }
        2 => {
            let figures: Vec<&(Vec<Step>, String)> = numbers
                .iter()
                .copied()
                .filter(|(_, k)| FIGURES.contains(&k.as_str()))
                .collect();
            if figures.is_empty() {
                return ("nothing".into(), Want::Either);
            }
            let (path, key) = pick(rng, &figures);
            let text = ["NaN", "", "inf", "1e400", "-0"][rng.below(5)];
            *at(&mut vals[line], &path) = json!(text);
            (format!("{key} {path:?} = {text:?}"), Want::Refused)
        }
        3 => {
            let latencies: Vec<&(Vec<Step>, String)> = numbers
                .iter()
                .copied()
                .filter(|(_, k)| LATENCIES.contains(&k.as_str()))
                .collect();
            if latencies.is_empty() {
                return ("nothing".into(), Want::Either);
            }
            let (path, key) = pick(rng, &latencies);
            *at(&mut vals[line], &path) = json!(-1.5);
            (format!("{key} {path:?} = -1.5"), Want::Refused)
        }
        4 if name.ends_with(".jsonl") => {
            // A summary that its intervals do not give.
            let last = vals.len() - 1;
            let series = &mut vals[last]["series"];
            let Some(n) = series.as_array().map(Vec::len).filter(|&n| n > 0) else {
                return ("nothing".into(), Want::Either);
            };
            let k = rng.below(n);
            let field = ["median", "p5", "p95"][rng.below(3)];
            let x = series[k][field].as_f64().unwrap_or(1.0) * 7.0 + 12345.0;
            series[k][field] = json!(x);
            (format!("summary series[{k}].{field} = {x}"), Want::Refused)
        }
        _ => {
            // Blind damage.
            let (path, key) = all[rng.below(all.len())].clone();
            let node = at(&mut vals[line], &path);
            let what = match rng.below(7) {
                0 => {
                    *node = Value::Null;
                    "null"
                }
                1 => {
                    *node = json!([]);
                    "[]"
                }
                2 => {
                    *node = json!({});
                    "{}"
                }
                3 => {
                    *node = json!("\u{1b}]0;pwned\u{7}\u{1b}[2J");
                    "control characters"
                }
                4 => {
                    *node = json!("x".repeat(100_000));
                    "a long string"
                }
                5 => {
                    *node = json!(true);
                    "true"
                }
                _ => {
                    // Remove the field from its object.
                    if let Some(Step::Key(k)) = path.last() {
                        let parent = at(&mut vals[line], &path[..path.len() - 1]);
                        if let Some(map) = parent.as_object_mut() {
                            map.remove(k);
                        }
                    }
                    "removed"
                }
            };
            (format!("{key} {path:?}: {what}"), Want::Either)
        }
    }
}

/// Reads `text` as every reader does, and shows what it accepts: `Ok`
/// when accepted.
fn read_and_show(text: &str, name: &str) -> Result<(), String> {
    let path = Path::new(name);
    let parsed = readback::parse(text.to_string(), path).map_err(|e| e.0)?;
    show(&parsed, name);
    // A merged file's results are shown one by one, as readers expand them.
    parsed.results.iter().for_each(|r| show(r, name));
    Ok(())
}

/// The headline, charts and measurements of a result read back, and a
/// sweep's detection.
fn show(parsed: &readback::Parsed, name: &str) {
    let kind = Kind::parse(&readback::kind_of(&parsed.value)).expect("an accepted kind is known");
    let sweep = parsed.sweep.as_deref();
    assert_eq!(sweep.is_some(), kind == Kind::Sweep, "{name}");
    let shown = memlat::output::present::present_read(kind, name, &parsed.value, sweep);
    for t in &shown.headline {
        let text = t.text();
        assert!(!text.contains('\u{1b}'), "{name}: raw ESC in a table");
        let _ = t.markdown();
    }
    let _ = readback::measurements_of(&parsed.value, sweep);
    if let Some(sweep) = sweep {
        let _ = sweep.detect();
    }
}

#[test]
fn mutated_results_of_every_kind_are_read_or_refused_never_absurd() {
    let corpus = corpus();
    assert!(corpus.len() >= 19, "{}", corpus.len());
    let started = Instant::now();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut cases, mut refused, mut accepted) = (0, 0, 0);
    let mut wrong = Vec::new();
    for (name, text) in &corpus {
        let file_started = Instant::now();
        // The file itself is read.
        if let Err(e) = read_and_show(text, name) {
            panic!("{name} as written is refused: {e}");
        }
        for _ in 0..60 {
            let mut vals = values(name, text);
            let (what, want) = mutate(&mut rng, name, &mut vals);
            let mut mutated = text_of(name, &vals);
            // Now and then the text is cut short too.
            if want == Want::Either && rng.below(8) == 0 {
                let cut = rng.below(mutated.len());
                mutated.truncate(cut);
                while !mutated.is_char_boundary(mutated.len()) {
                    mutated.pop();
                }
            }
            let one = Instant::now();
            let verdict = std::panic::catch_unwind(|| read_and_show(&mutated, name));
            let took = one.elapsed();
            cases += 1;
            assert!(
                took < Duration::from_secs(5),
                "{name}: {what}: took {took:?}"
            );
            match verdict {
                Err(_) => wrong.push(format!("{name}: {what}: PANIC")),
                Ok(Ok(())) if want == Want::Refused => {
                    wrong.push(format!("{name}: {what}: accepted"));
                }
                Ok(Ok(())) => accepted += 1,
                Ok(Err(e)) => {
                    refused += 1;
                    // A refusal is one short, printable line naming the file.
                    assert!(e.contains(name), "{name}: {what}: {e}");
                    assert!(
                        e.chars().count() < 4100,
                        "{name}: {what}: {} bytes",
                        e.len()
                    );
                    assert!(!e.contains('\u{1b}'), "{name}: {what}: raw ESC: {e}");
                }
            }
        }
        assert!(
            file_started.elapsed() < Duration::from_secs(20),
            "{name}: {:?}",
            file_started.elapsed()
        );
    }
    assert!(
        wrong.is_empty(),
        "{} of {cases}:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(cases >= 1000, "{cases} cases");
    eprintln!(
        "{cases} mutated files: {refused} refused, {accepted} read, in {:?}",
        started.elapsed()
    );
}
