//! Load-to-use from the load, N NOPs, add curve (`memlat loaduse`, read by
//! `experiments::loaduse::report::assemble`): on an L1-resident chain a
//! core issuing W instructions a cycle takes `max(L + 1, (N + 2) / W)`
//! cycles an iteration, plus the loop's share; cycles are ns times the
//! clock the chains estimated (no PMU).

use memlat::analysis::knee::Issue;
use memlat::experiments::loaduse::driver::{LevelRun, PassSample, PointRun};
use memlat::experiments::loaduse::levels::LevelSpec;
use memlat::experiments::loaduse::report::{Context, TimedLevel, assemble};
use memlat::kernels::load_use::{Shape, UNROLL};
use memlat::platform::PageBacking;

use super::every_row;
use super::model::Noise;
use super::rows::Row;

/// `--nops`' default range, 0..64.
const NOPS: u32 = 64;

/// Passes over the range (`loaduse`'s default is 3); per N the fastest is kept.
const PASSES: u32 = 3;

/// One N's passes: `cycles` an iteration on the core, read as ns (a
/// disturbance only adds time) and turned back into cycles by `clock`.
fn point(
    row: &Row,
    shape: Shape,
    nops: u32,
    cycles: f64,
    clock: f64,
    noise: &mut Noise,
) -> PointRun {
    let passes = (0..PASSES)
        .map(|pass| {
            let ns = cycles / row.ghz * (1.0 + 0.005 * noise.unit().abs());
            PassSample {
                pass,
                ns_per_iteration: ns,
                cycles_per_iteration: ns * clock,
                counted: false,
                clock_ghz: clock,
                trips: 1000,
            }
        })
        .collect();
    PointRun {
        nops,
        shape,
        passes,
    }
}

/// `loaduse`'s result on this row's L1.
pub fn reading(row: &Row, seed: u64) -> memlat::experiments::loaduse::report::LoaduseResult {
    let estimate = super::clock::estimate(row, seed);
    let mut noise = Noise::new(seed ^ 0x10AD);
    let c = row.core;
    let u = UNROLL as f64;
    let unrolled = |n: u32| {
        (c.load_use_cycles + 1.0).max((f64::from(n) + 2.0) / c.issue_width) + c.loop_cycles / u
    };
    let points = (0..=NOPS)
        .map(|n| {
            point(
                row,
                Shape::Unrolled,
                n,
                unrolled(n),
                estimate.ghz,
                &mut noise,
            )
        })
        .collect();
    // The rolled kernel pays the loop a trip; the unrolled one 1/U of it.
    let rolled = (0..4)
        .map(|n| {
            let cycles = unrolled(n) + c.loop_cycles * (u - 1.0) / u;
            point(row, Shape::Rolled, n, cycles, estimate.ghz, &mut noise)
        })
        .collect();
    let size = row.caches[0].serves.0 * 3 / 4;
    let timed = TimedLevel {
        spec: LevelSpec {
            name: "L1d".into(),
            size,
            basis: "3/4 of L1d".into(),
        },
        run: LevelRun {
            size,
            chain_nodes: size / row.line,
            points,
            rolled,
            page_backing: PageBacking {
                requested: "4k".into(),
                obtained: "4k".into(),
                huge_fraction: 0.0,
                kernel_page_bytes: row.base_page,
            },
            clock_ghz_before: estimate.ghz,
            clock_ghz_after: estimate.ghz,
            warnings: Vec::new(),
        },
        chase: None,
    };
    let context = Context {
        nops: (0, NOPS),
        passes: PASSES,
        pattern: "random".into(),
        line: row.line,
        cpu: 0,
        cycle_source: "estimated".into(),
        clock_suspect: estimate.suspect.clone(),
    };
    assemble(context, vec![timed])
}

#[test]
fn load_to_use_cycles_and_issue_from_the_nop_curve() {
    every_row("load-use", |row, seed| {
        let r = reading(row, seed);
        let l1 = &r.levels[0];
        let want = if row.core.issue_width > 1.4 {
            Issue::MultiIssue
        } else {
            Issue::SingleIssue
        };
        // A whole number of cycles: the reading must round to it.
        if r.reading.issue == want && (l1.latency_cycles - row.core.load_use_cycles).abs() < 0.5 {
            Ok(())
        } else {
            Err(format!(
                "{:?}, L1 {:.2} cycles; want {want:?}, {} cycles ({})",
                r.reading.issue, l1.latency_cycles, row.core.load_use_cycles, r.reading.explanation
            ))
        }
    });
}
