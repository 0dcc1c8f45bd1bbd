//! `memlat mlp`: misses in flight, from N random chains walked side by side
//! (see [`crate::analysis::mlp`] for the reading).

use anyhow::Result;
use serde::Serialize;

use crate::analysis::mlp::Verdict;
use crate::chain::Pattern;
use crate::cli::commands::run::report_cycle_source;
use crate::cli::common::{notice, prepare, warn};
use crate::cli::files::Output;
use crate::cli::interrupt::Interrupted;
use crate::cli::progress::until_ctrl_c;
use crate::cli::{Format, MlpArgs};
use crate::error::{UsageError, usage};
use crate::experiments::mlp::{self, LevelSize, MlpLevel};
use crate::kernels::parallel::MAX_CHAINS;
use crate::limits::{self, Origin};
use crate::output::document::Document;
use crate::output::present;
use crate::output::table::{Cell, Table};
use crate::platform;
use crate::readback::Kind;
use crate::units::HumanBytes;

/// What `memlat mlp --format json` prints.
#[derive(Serialize)]
struct MlpOutput<'a> {
    /// One entry per size measured.
    levels: &'a [MlpLevel],
    /// The CPU the chains ran on.
    cpu: usize,
    /// Bytes counted per load (the line).
    line_bytes: u64,
    /// Whether Ctrl-C cut the run short (the levels so far are complete).
    complete: bool,
}

/// Checks --chains: each 1 to 16, ascending, no repeats; default 1..16.
fn chain_counts(given: &[u32]) -> Result<Vec<u32>> {
    if given.is_empty() {
        return Ok((1..=mlp::DEFAULT_MAX_CHAINS).collect());
    }
    let mut counts = given.to_vec();
    if let Some(bad) = counts.iter().find(|&&n| n == 0 || n as usize > MAX_CHAINS) {
        return usage(format!(
            "--chains {bad}: give chain counts from 1 to {MAX_CHAINS}, e.g. 1,2,4,8,16"
        ));
    }
    counts.sort_unstable();
    counts.dedup();
    Ok(counts)
}

/// The sizes: --sizes (named by size) or one per measured level.
fn levels(args: &MlpArgs, prepared: &mut crate::cli::common::Prepared) -> Result<Vec<LevelSize>> {
    let available = platform::mem_available_bytes();
    let line = prepared.template.line;
    let levels = if args.sizes.is_empty() {
        crate::cli::plateaus::measured_levels(
            &args.plateaus,
            &mut prepared.engine,
            &prepared.template,
        )?
        .sizes(line, available)
    } else {
        args.sizes
            .iter()
            .map(|&size| {
                let size = limits::size(size, Origin::Flag("--sizes")).map_err(UsageError::from)?;
                Ok(LevelSize {
                    name: HumanBytes(size).to_string(),
                    size,
                })
            })
            .collect::<Result<Vec<_>>>()?
    };
    for level in &levels {
        if level.size < 2 * MAX_CHAINS as u64 * line {
            return usage(format!(
                "--sizes {}: 16 chains need at least {} (two {line}-byte nodes each)",
                HumanBytes(level.size),
                HumanBytes(2 * MAX_CHAINS as u64 * line)
            ));
        }
        crate::engine::ensure_memory(level.size, available).map_err(|e| {
            UsageError(format!(
                "--sizes {}: {e}; give smaller sizes",
                HumanBytes(level.size)
            ))
        })?;
    }
    Ok(levels)
}

/// Runs `memlat mlp`.
pub fn run(args: &MlpArgs) -> Result<()> {
    if args.measure.pattern.is_some_and(|p| p != Pattern::Random) {
        return usage("--pattern: memlat mlp walks random chains (prefetchers must not help)");
    }
    if args.measure.kernel == crate::kernels::KernelKind::Index {
        return usage("--kernel index: chains side by side use the pointer or portable kernel");
    }
    crate::cli::files::check_reads_output_and_plot(
        &[("--plateaus", args.plateaus.file())],
        args.measure.output.as_deref(),
        args.plot.as_deref(),
    )?;
    let chains = chain_counts(&args.chains)?;
    let output = Output::create(args.measure.output.as_deref())?;
    let mut prepared = prepare(&args.measure, Pattern::Random, 3)?;
    for note in &prepared.notices {
        notice(note);
    }
    let cpu = prepared.engine.cpu();
    let template = prepared.template.clone();
    let levels = levels(args, &mut prepared)?;
    let results = until_ctrl_c(!args.no_progress, |observer| {
        mlp::run(&mut prepared.engine, &template, &levels, &chains, observer)
    })?;
    let complete = results.len() == levels.len();
    report_cycle_source(&prepared.engine);
    if let Some(path) = &args.plot {
        crate::output::plot::mlp::plot(&results, cpu, path)?;
        notice(&format!("plot written to {}", path.display()));
    }
    // JSON is written from the result, text and markdown from its JSON value.
    let out = MlpOutput {
        levels: &results,
        cpu,
        line_bytes: template.line,
        complete,
    };
    let value = serde_json::to_value(&out)?;
    let content = match args.measure.format {
        Format::Json => crate::output::result_json("mlp", &out)?,
        Format::Csv => points_table(&results).csv(),
        Format::Text => document(&results, cpu, &value)?.text(),
        Format::Markdown => document(&results, cpu, &value)?.markdown(),
    };
    output.write(&content)?;
    if !complete {
        warn("interrupted: the levels above are complete, the rest were not measured");
        return Err(Interrupted(format!(
            "memlat mlp: interrupted after {} of {} levels",
            results.len(),
            levels.len()
        ))
        .into());
    }
    Ok(())
}

/// Every point: level, chains, ns per load, loads and bytes per second, parallelism.
fn points_table(levels: &[MlpLevel]) -> Table {
    let mut t = Table::new(&[
        "<level",
        "size_bytes",
        "chains",
        "ns_per_load",
        "loads_per_second",
        "bytes_per_second",
        "parallelism",
    ]);
    for l in levels {
        for p in &l.points {
            t.row(vec![
                l.name.clone().into(),
                l.size_bytes.into(),
                u64::from(p.chains).into(),
                Cell::float(p.ns_per_load, 3),
                Cell::float(p.loads_per_second, 0),
                Cell::float(p.bytes_per_second, 0),
                Cell::float(p.parallelism, 2),
            ]);
        }
    }
    t
}

/// The headline (where each level levels off), then chains down the side, one column pair (ns per load, parallelism) per level.
fn document(levels: &[MlpLevel], cpu: usize, value: &serde_json::Value) -> Result<Document> {
    let mut d = Document::new(format!(
        "memlat mlp: N random chains side by side on CPU {cpu}: ns per load (all chains) and effective parallelism (one chain's ns per load / N chains')"
    ));
    for t in present::headline(Kind::Mlp, value)? {
        d.table(t);
    }
    let mut header = vec!["chains".to_string()];
    for l in levels {
        header.push(format!("{} ns", l.name));
        header.push(format!("{} GB/s", l.name));
        header.push(format!("{} par", l.name));
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(&header);
    let counts: Vec<u32> = levels
        .first()
        .map(|l| l.points.iter().map(|p| p.chains).collect())
        .unwrap_or_default();
    for (i, n) in counts.iter().enumerate() {
        let mut row: Vec<Cell> = vec![u64::from(*n).into()];
        for l in levels {
            match l.points.get(i) {
                Some(p) => {
                    row.push(Cell::float(p.ns_per_load, 2));
                    row.push(Cell::float(p.bytes_per_second / 1e9, 2));
                    row.push(Cell::float(p.parallelism, 2));
                }
                None => row.extend([Cell::from("-"), Cell::from("-"), Cell::from("-")]),
            }
        }
        t.row(row);
    }
    d.table(t);
    let mut lines = Vec::new();
    for l in levels {
        lines.push(match (l.verdict, l.saturation_chains) {
            (Some(Verdict::LevelsOff), Some(n)) => format!(
                "{} ({}): throughput levels off at {n} chains, {:.1} loads in flight (confidence {:.2})",
                l.name,
                HumanBytes(l.size_bytes),
                l.saturation_parallelism,
                l.confidence
            ),
            (Some(Verdict::StillGrowing), _) => format!(
                "{} ({}): throughput still grew at {} chains, the most tried ({:.1} loads in flight): no saturation point",
                l.name,
                HumanBytes(l.size_bytes),
                l.points.iter().map(|p| p.chains).max().unwrap_or(0),
                l.saturation_parallelism
            ),
            _ => format!("{}: no saturation point", l.name),
        });
        lines.extend(l.notes.iter().map(|n| format!("  note: {n}")));
    }
    lines.push("GB/s counts a whole line per load".into());
    d.lines(lines);
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_counts_are_checked_sorted_and_default_to_1_to_16() {
        assert_eq!(chain_counts(&[]).unwrap(), (1..=16).collect::<Vec<u32>>());
        assert_eq!(chain_counts(&[8, 1, 8, 2]).unwrap(), [1, 2, 8]);
        let e = chain_counts(&[0]).unwrap_err().to_string();
        assert!(e.contains("--chains 0"), "{e}");
        assert!(chain_counts(&[17]).is_err());
    }
}
