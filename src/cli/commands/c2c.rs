//! `memlat c2c`: the core-to-core matrix (see [`crate::experiments::c2c`]).

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Serialize;

use crate::cli::common::{notice, warn};
use crate::cli::files::Output;
use crate::cli::interrupt::Interrupted;
use crate::cli::progress::until_ctrl_c;
use crate::cli::{C2cArgs, Format};
use crate::error::usage;
use crate::experiments::Observer;
use crate::experiments::c2c::{self, C2cMatrix, Method, Pairs, SharedLevel, SharingCheck};
use crate::output::document::Document;
use crate::output::plot::heatmap;
use crate::output::present;
use crate::output::table::{Cell, Table};
use crate::platform;
use crate::platform::system::parse_cpu_list;
use crate::platform::topology::Topology;
use crate::readback::Kind;
use crate::units::HumanBytes;

/// What `memlat c2c --format json` prints: the first method's matrix at the
/// top, every method's in `methods`.
#[derive(Serialize)]
struct C2cOutput<'a> {
    #[serde(flatten)]
    first: &'a C2cMatrix,
    methods: &'a [C2cMatrix],
    /// `all`, or how many pairs of how many were sampled.
    pairs: String,
    /// Whether every planned pair was measured (not cut short).
    complete: bool,
    /// One pair of each relation: do the two share the last cache level,
    /// measured ([`c2c::shared`]), beside what sysfs says.
    sharing: &'a [SharingCheck],
    /// Why no pair was checked, where none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    sharing_note: Option<String>,
}

/// The plot file of the `k`th method: FILE, then FILE-<method>.ext.
fn plot_path(path: &Path, k: usize, method: &str) -> PathBuf {
    if k == 0 {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map_or("c2c".into(), |s| s.to_string_lossy().into_owned());
    let ext = path
        .extension()
        .map_or("png".into(), |e| e.to_string_lossy().into_owned());
    path.with_file_name(format!("{stem}-{method}.{ext}"))
}

/// Runs `memlat c2c`.
pub fn run(args: &C2cArgs) -> Result<()> {
    crate::cli::files::check_output_and_plot(args.output.as_deref(), args.plot.as_deref())?;
    let allowed = platform::allowed_cpus();
    let cpus: Vec<usize> = match &args.cpus {
        Some(list) => {
            let cpus = parse_cpu_list(list);
            if cpus.is_empty() {
                return usage(format!("--cpus {list}: give CPUs such as 0-7,16"));
            }
            if let Some(twice) = cpus
                .iter()
                .enumerate()
                .find_map(|(i, c)| cpus[..i].contains(c).then_some(c))
            {
                return usage(format!(
                    "--cpus {list}: CPU {twice} is named twice; a line moves between two different CPUs"
                ));
            }
            if let Some(bad) = cpus.iter().find(|c| !allowed.contains(c)) {
                return usage(format!(
                    "--cpus {list}: CPU {bad} is not one this process may use ({})",
                    crate::cli::common::cpu_list(&allowed)
                ));
            }
            cpus
        }
        None => allowed.clone(),
    };
    if cpus.len() < 2 {
        return usage("--cpus: give at least two CPUs (a line moves between two)");
    }
    let mut methods: Vec<Method> = Vec::new();
    for m in &args.method {
        if !methods.contains(m) {
            methods.push(*m);
        }
    }
    if methods.is_empty() {
        methods = vec![Method::Cas, Method::ReadWrite];
    }
    let output = Output::create(args.output.as_deref())?;
    let topology = Topology::read(&allowed);
    let order = c2c::ordered(&topology, &cpus);
    let pairs = c2c::planned_pairs(order.len(), args.pairs, 1);
    let all = order.len() * (order.len() - 1) / 2;
    let checked = c2c::sharing_pairs(&topology, &order, &pairs);
    let (share_at, sharing_note) = if args.no_sharing {
        (
            None,
            Some("--no-sharing: which CPUs share a cache is not checked".to_string()),
        )
    } else {
        match sharing_buffer(args, order[0])? {
            Ok(at) => (Some(at), None),
            Err(why) => (None, Some(why)),
        }
    };
    let seconds = (pairs.len() * methods.len()) as f64 * 0.005
        + if share_at.is_some() {
            checked.len() as f64 * c2c::shared::CHECK_SECONDS
        } else {
            0.0
        };
    eprintln!(
        "memlat c2c: {} pair(s) of {} CPUs{}, {} method(s){}; about {:.0} s",
        pairs.len(),
        order.len(),
        if pairs.len() < all {
            format!(" (a sample of {all})")
        } else {
            String::new()
        },
        methods.len(),
        match &share_at {
            Some(level) => format!(
                ", then whether {} pair(s) share the {} (over {})",
                checked.len(),
                level.name,
                HumanBytes(level.size_bytes)
            ),
            None => String::new(),
        },
        seconds.max(1.0)
    );
    let (results, sharing) = until_ctrl_c(!args.no_progress, |observer| {
        let results = c2c::run(&topology, &order, &pairs, &methods, observer)?;
        let sharing = match &share_at {
            Some(level) if !Observer::<()>::interrupted(observer) => {
                c2c::check_sharing(&checked, level, observer)?
            }
            _ => Vec::new(),
        };
        Ok((results, sharing))
    })?;
    let complete = results.iter().all(|r| r.pairs_measured == pairs.len())
        && (share_at.is_none() || sharing.len() == checked.len());
    if let Some(path) = &args.plot {
        for (k, r) in results.iter().enumerate() {
            let file = plot_path(path, k, &r.method);
            heatmap::draw(&file, &present::c2c_heatmap(r))?;
            notice(&format!("heatmap written to {}", file.display()));
        }
    }
    let pairs_text = match args.pairs {
        Pairs::All => "all".to_string(),
        Pairs::Sample(_) => format!("sample of {} of {all}", pairs.len()),
    };
    // JSON is written from the result, text and markdown from its JSON value.
    let out = C2cOutput {
        first: &results[0],
        methods: &results,
        pairs: pairs_text,
        complete,
        sharing: &sharing,
        sharing_note,
    };
    let value = serde_json::to_value(&out)?;
    let content = match args.format {
        Format::Json => crate::output::result_json("c2c", &out)?,
        Format::Csv => pairs_table(&results).csv(),
        Format::Text => document(&out, &topology, &value)?.text(),
        Format::Markdown => document(&out, &topology, &value)?.markdown(),
    };
    output.write(&content)?;
    if !complete {
        warn("interrupted: the pairs above were measured, the rest are null");
        return Err(Interrupted("memlat c2c: interrupted".into()).into());
    }
    Ok(())
}

/// The level and size the sharing check reads: the last measured level,
/// over [`c2c::shared::buffer_bytes`] (`--plateaus`); `Err` with why where
/// there is no level beyond the L1.
fn sharing_buffer(args: &C2cArgs, cpu: usize) -> Result<Result<SharedLevel, String>> {
    let levels = crate::cli::plateaus::measured_levels_on(&args.plateaus, cpu)?;
    // An L1 is a core's own: lines in it reach another core by a snoop, which
    // would read as a shared L1. A level beyond it is what cores may share.
    let [.., above, last] = levels.levels.as_slice() else {
        return Ok(Err(format!(
            "no cache level beyond the L1 was measured ({}): which CPUs share one is not checked",
            levels.describe()
        )));
    };
    let above_at_most = above
        .capacity_bounds
        .and_then(|b| b.at_most_bytes)
        .or(above.capacity_bytes)
        .unwrap_or(above.to_bytes);
    Ok(Ok(SharedLevel {
        name: last.name.clone(),
        size_bytes: c2c::shared::buffer_bytes(above_at_most, last.to_bytes, last.middle(64)),
        swept: c2c::shared::Swept {
            level_ns: last.ns,
            memory_ns: levels.memory_ns,
        },
    }))
}

/// One row per measured pair.
fn pairs_table(results: &[C2cMatrix]) -> Table {
    let mut t = Table::new(&["method", "from", "to", "ns", "min_ns"]);
    for r in results {
        for (i, &a) in r.cpus.iter().enumerate() {
            for (j, &b) in r.cpus.iter().enumerate().skip(i + 1) {
                if let (Some(ns), Some(min)) = (r.matrix_ns[i][j], r.min_ns[i][j]) {
                    t.row(vec![
                        r.method.clone().into(),
                        (a as u64).into(),
                        (b as u64).into(),
                        Cell::float(ns, 1),
                        Cell::float(min, 1),
                    ]);
                }
            }
        }
    }
    t
}

/// The headline (each relation's median), then each method's matrix.
fn document(out: &C2cOutput, topology: &Topology, value: &serde_json::Value) -> Result<Document> {
    let results = out.methods;
    let mut d = Document::new(
        "memlat c2c: one-way latency of a cache line between two CPUs, ns (median of 15 samples)",
    );
    for t in present::headline(Kind::C2c, value)? {
        d.table(t);
    }
    for r in results {
        let mut header = vec![format!("{} from\\to", r.method)];
        header.extend(r.cpus.iter().map(|c| c.to_string()));
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut t = Table::new(&header);
        for (i, &a) in r.cpus.iter().enumerate() {
            let mut row: Vec<Cell> = vec![(a as u64).into()];
            row.extend(
                r.matrix_ns[i]
                    .iter()
                    .map(|v| v.map_or(Cell::from("-"), |ns| Cell::float(ns, 1))),
            );
            t.row(row);
        }
        d.table(t);
    }
    let mut lines = Vec::new();
    for (i, &a) in results[0].cpus.iter().enumerate() {
        for &b in &results[0].cpus[i + 1..] {
            if let (Some(ca), Some(cb)) = (topology.get(a), topology.get(b))
                && ca.core == cb.core
            {
                lines.push(format!("CPUs {a} and {b} are SMT siblings of one core"));
            }
        }
    }
    if lines.is_empty() && results[0].cpus.len() <= 4 {
        lines.push("no two of these CPUs are SMT siblings (sysfs thread_siblings_list)".into());
    }
    lines.extend(out.sharing.iter().filter_map(disagreement));
    lines.extend(out.sharing_note.clone());
    d.lines(lines);
    Ok(d)
}

/// What a check that contradicts sysfs says, in a sentence.
fn disagreement(check: &SharingCheck) -> Option<String> {
    let r = check.readings.as_ref()?;
    let [a, b] = check.cpus;
    (check.agrees == Some(false)).then(|| {
        let now = if check.sysfs_shares {
            "they do not share it now"
        } else {
            "they share it"
        };
        format!(
            "CPUs {a} and {b}: sysfs says {}, but CPU {b} read {} CPU {a} had just written at {:.1} ns a load, {:.2} of the way from a miss ({:.1} ns) to its own hit ({:.1} ns): {now} (a guest's vCPUs run where the host puts them, and may move)",
            check.sysfs,
            HumanBytes(check.size_bytes),
            r.cross_ns,
            check.served.unwrap_or(0.0),
            check.swept.miss(r.miss_ns),
            r.own_ns
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::c2c::shared::{Readings, Sharing, Swept};

    #[test]
    fn a_check_that_contradicts_sysfs_says_so_with_the_miss_it_used() {
        // The Zen 5 guest at 16:09:24 UTC: vCPUs on two CCDs, sysfs one L3.
        let rounds = vec![
            [132.0, 14.6, 147.8],
            [131.4, 16.3, 142.7],
            [128.1, 17.1, 130.6],
            [141.2, 54.0, 151.2],
            [134.4, 114.2, 147.7],
        ];
        let mut check = SharingCheck {
            cpus: [0, 1],
            sysfs: "same L3".into(),
            sysfs_shares: true,
            level: "L3".into(),
            size_bytes: 3_175_552,
            swept: Swept {
                level_ns: 12.4,
                memory_ns: Some(142.06),
            },
            readings: Some(Readings::of_rounds(rounds)),
            served: Some(0.05),
            measured: Sharing::Apart,
            agrees: Some(false),
        };
        let said = disagreement(&check).expect("a sentence");
        assert!(said.contains("sysfs says same L3"), "{said}");
        assert!(said.contains("a miss (142.1 ns)"), "{said}");
        assert!(said.contains("they do not share it now"), "{said}");
        check.agrees = Some(true);
        assert_eq!(disagreement(&check), None);
    }
}
