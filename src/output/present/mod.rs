//! One presentation per result kind: its headline (the figure the command
//! exists for: levels, ways, line size, load-use table, matrix, compare
//! rows), its charts, then its detail tables. A command's `--format text`
//! and `markdown` print the headline of the JSON value it writes, and
//! `memlat report` (and characterize's report) shows the same headline of
//! the value it reads back, so a kind's headline is defined once and text
//! and JSON come from the same values.
//!
//! Two `match`es on [`Kind`] with no wildcard arm (headline, then the rest):
//! a new kind does not compile until it says how it is shown. A result read
//! back was checked by [`crate::readback`], so a typed read here fails only
//! on a file that passed the checks and still lacks a table's field; that
//! loses the table (said among the problems), never the report.

mod bandwidth;
mod caches;
mod compare;
pub mod doctor;
mod latency;
pub mod loaduse;
mod parts;
mod system;

use serde_json::Value;

use crate::output::plot;
use crate::output::table::Table;
use crate::readback::Kind;
use parts::read;

pub use bandwidth::bandwidth_table;
pub use compare::{compare_bandwidth_table, compare_rows_table};
pub use latency::{fits_in, levels_table};
pub use parts::Parts;
pub use system::{c2c_heatmap, loaded_table, tlb_levels_table};

/// What a result's section shows, in order.
#[derive(Default)]
pub struct Presented {
    /// The kind's headline tables, first in its section.
    pub headline: Vec<Table>,
    /// The rest of the kind's parts: charts, detail tables, problems.
    pub parts: Parts,
}

/// The headline tables of `value`, a result of `kind` as its command
/// writes it (without the envelope, or with it): what `--format text` and
/// `markdown` print first. An error says which table the value cannot give.
pub fn headline(kind: Kind, value: &Value) -> anyhow::Result<Vec<Table>> {
    let mut problems = Vec::new();
    let tables = headline_of(kind, value, &mut problems);
    match problems.first() {
        Some(p) => anyhow::bail!("{} result: {p}", kind.name()),
        None => Ok(tables),
    }
}

/// The presentation of `value`, a result of `kind` labelled `label`.
pub fn present(kind: Kind, label: &str, value: &Value) -> Presented {
    let mut out = Presented::default();
    out.headline = headline_of(kind, value, &mut out.parts.problems);
    rest_of(kind, label, value, &mut out.parts);
    out
}

/// [`present`] of a result read back ([`crate::readback::Parsed`]): a
/// sweep from its struct (`sweep`, whose points `value` no longer holds).
pub fn present_read(
    kind: Kind,
    label: &str,
    value: &Value,
    sweep: Option<&crate::experiments::sweep::SweepResult>,
) -> Presented {
    let Some(sweep) = sweep else {
        return present(kind, label, value);
    };
    let mut out = Presented {
        headline: latency::sweep_levels_of(sweep).into_iter().collect(),
        parts: Parts::default(),
    };
    latency::sweep_charts_of(sweep, &mut out.parts);
    out
}

fn headline_of(kind: Kind, value: &Value, problems: &mut Vec<String>) -> Vec<Table> {
    let one = |t: Option<Table>| t.into_iter().collect::<Vec<_>>();
    match kind {
        Kind::Run => {
            let mut t = vec![latency::run_table(value)];
            t.extend(latency::distribution_tables(value, problems));
            t
        }
        Kind::Quick => one(latency::quick_table(value, problems)),
        Kind::Sweep => one(latency::sweep_levels(value, problems)),
        Kind::Levels => one(read::<Vec<crate::experiments::fixed_levels::LevelSummary>>(
            &value["levels"],
            "levels",
            problems,
        )
        .map(|l| levels_table(&l))),
        Kind::Detect => one(
            read::<crate::analysis::detect::Detection>(value, "levels", problems)
                .map(|d| crate::output::detect::levels_table(&d)),
        ),
        Kind::Assoc => vec![caches::assoc_table(&value["levels"])],
        Kind::Linesize => vec![caches::linesize_table(value)],
        Kind::Loaduse => one(read::<crate::experiments::loaduse::report::LoaduseResult>(
            value,
            "load-use table",
            problems,
        )
        .map(|r| loaduse::seed_table(&r))),
        Kind::Mlp => system::mlp_headline(value, problems),
        Kind::Tlb => system::tlb_headline(value, problems),
        Kind::Loaded => {
            one(
                read::<crate::experiments::loaded::LoadedResult>(value, "loaded result", problems)
                    .map(|r| loaded_table(&r)),
            )
        }
        Kind::C2c => system::c2c_headline(value, problems),
        Kind::Numa => {
            one(
                read::<crate::experiments::numa::NumaResult>(value, "numa matrix", problems)
                    .map(|r| caches::numa_table(&r)),
            )
        }
        Kind::Doctor => vec![doctor::findings_of(&value["findings"])],
        Kind::Characterize => vec![doctor::stages_table(&value["stages"])],
        Kind::Bandwidth => one(bandwidth::headline(value, problems)),
        Kind::Compare => compare::headline(value, problems),
        Kind::Watch => system::watch_headline(value, problems),
        // A merged file is expanded into the results it holds when read.
        Kind::Merged => Vec::new(),
    }
}

/// Charts, heatmaps and detail tables after the headline.
fn rest_of(kind: Kind, label: &str, value: &Value, parts: &mut Parts) {
    let curve = |parts: &mut Parts| {
        let found = crate::analysis::compare::measurements(value);
        if found.len() >= 2 {
            parts.charts.push(plot::measurements::chart(
                &format!("{label}: ns per load"),
                &[(None, &found)],
                None,
            ));
        }
    };
    match kind {
        Kind::Run => latency::distribution_charts(value, parts),
        Kind::Quick | Kind::Levels => curve(parts),
        Kind::Sweep => latency::sweep_charts(value, parts),
        Kind::Loaduse => {
            if let Some(r) = read::<crate::experiments::loaduse::report::LoaduseResult>(
                value,
                "load-use chart",
                &mut parts.problems,
            ) {
                parts.charts.push(plot::loaduse::chart(&r));
            }
        }
        Kind::Mlp => system::mlp_chart(value, parts),
        Kind::Tlb => system::tlb_chart(value, parts),
        Kind::Loaded => system::loaded_chart(value, parts),
        Kind::C2c => system::c2c_heatmaps(value, parts),
        Kind::Watch => system::watch_charts(value, parts),
        Kind::Bandwidth => bandwidth::chart(value, parts),
        Kind::Detect
        | Kind::Assoc
        | Kind::Linesize
        | Kind::Numa
        | Kind::Doctor
        | Kind::Characterize
        | Kind::Compare
        | Kind::Merged => {}
    }
}

#[cfg(test)]
mod tests;
