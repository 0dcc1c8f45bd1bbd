//! The shared level's edge (`memlat watch`, read by
//! `experiments::watch::edge_reading`) by the sweep's definition of a
//! capacity, where half the loads stop being served: the watch is planned
//! from a sweep (its detection's last plateau and bounds,
//! `watch::plan::edge_plan`), then each interval reads the level's middle,
//! memory and the edge probes, every probe a full cycle of its chain. The
//! level serves its whole share when the machine is quiet and its least
//! when a neighbour takes the rest; the edge must follow, to within a
//! probe's step of the model's own half-served size. A level serves a
//! probe only in a state it keeps (`rows::Keeps`), as the watch prepares
//! it (`probe::preparation`).

use memlat::analysis::changepoint::MIN_SHIFT;
use memlat::analysis::detect;
use memlat::experiments::plateaus::{LevelSize, MeasuredLevels};
use memlat::experiments::watch::edge::{Walk, interval_edge, references, references_hold};
use memlat::experiments::watch::plan::DEFAULT_DUTY;
use memlat::experiments::watch::probe::{Preparation, Role, WarmCost, preparation, warm_shares};
use memlat::experiments::watch::record::summarise;
use memlat::experiments::watch::{
    EdgePlan, EdgeReading, Interval, SeriesSummary, WARM_CYCLES, WatchHeader, WatchPlan,
    edge_reading, plan,
};

use super::model::{self, Draw, Noise};
use super::rows::{Cache, G, Keeps, Row, rows};
use super::{DRAWS, claims, every_row, every_row_over};

/// How the watch prepares a probe of a role, walked whole cycles or not.
type Prepare = fn(Role, bool) -> Preparation;

/// What a probe of `role` over `size` bytes reads in draw `d`, prepared by
/// `prepare` and walked `whole` cycles or not: a full-cycle chase's
/// latency where the last level keeps the lines in the state the probe
/// leaves them, else that latency with the last level serving none of them
/// (since the probe's last interval the edge probes, spanning past the
/// share, have put their own lines in: walked on a level that keeps every
/// line, rewritten on one that keeps only written lines).
fn reading(row: &Row, d: &Draw, size: u64, role: Role, whole: bool, prepare: Prepare) -> f64 {
    let (_, _, last) = *d.caches.last().expect("a cache");
    let kept = match (last.keeps, prepare(role, whole)) {
        (Keeps::Every, _) | (Keeps::Written, Preparation::Rewrite { .. }) => true,
        (Keeps::Written, Preparation::None) => false,
    };
    if kept {
        return model::latency(row, d, size);
    }
    model::latency(row, &without_last(d), size)
}

/// Draw `d` with its last level serving nothing: what lines that level
/// dropped cost.
fn without_last(d: &Draw) -> Draw {
    Draw {
        caches: d.caches[..d.caches.len() - 1].to_vec(),
        memory_ns: d.memory_ns,
        beyond_ns: d.beyond_ns,
    }
}

/// What the miss probe reads in draw `d` (`WatchPlan::miss_probe`): lines
/// last walked a cycle of memory's size before, none of them in the last
/// level, under a window over the largest edge probe's footprint.
fn miss_reading(row: &Row, d: &Draw, sizes: &[u64]) -> f64 {
    let region = *sizes.last().expect("edge probes");
    model::latency(row, &without_last(d), region)
}

/// The plan from a sweep: the edge probes' sizes, the level's middle and
/// memory's probe size.
pub fn plan(row: &Row, seed: u64) -> Option<(Vec<u64>, u64, u64)> {
    let curve = model::sweep(row, seed);
    let d = detect::detect(&curve, &claims(row));
    let levels = MeasuredLevels::from_detection(&d, "probe", "");
    let last = levels.levels.last()?;
    let edge = plan::edge_plan(last, row.line);
    let memory = levels
        .sizes(row.line, Some(16 * G))
        .into_iter()
        .find(|l| l.name == "memory")?
        .size;
    Some((edge.sizes, last.middle(row.line), memory))
}

/// Each reading's noise, as a share of it.
const NOISE: f64 = 0.02;

/// One interval's edge while the last level serves `share` bytes: three
/// kinds of reading (the probes, the level's middle, memory), each within
/// [`NOISE`] of itself, every probe prepared by `prepare`.
pub fn interval(
    row: &Row,
    seed: u64,
    share: u64,
    plan: &(Vec<u64>, u64, u64),
    prepare: Prepare,
) -> Option<EdgeReading> {
    let mut noise = Noise::new(seed ^ 0xED6E);
    let mut d = model::draw(row, &mut noise);
    d.caches.last_mut().expect("a cache").0 = share;
    let mut read =
        |size: u64, role: Role| noise.jitter(reading(row, &d, size, role, true, prepare), NOISE);
    let (sizes, middle, memory) = plan;
    let ns: Vec<f64> = sizes.iter().map(|&s| read(s, Role::Edge)).collect();
    let (level, far) = (read(*middle, Role::Level), read(*memory, Role::Memory));
    edge_reading(sizes, &ns, level, far)
}

/// Whether a reading over `sizes` is true of `cache` serving `share`
/// bytes (with its ways and replacement): its edge lies within one probe step of
/// the size at which such a level serves half the loads (the readings'
/// noise can move the crossing to the next pair of probes, never
/// further); below the smallest probe or beyond the largest it must say so
/// (unless the truth lies within a step of that probe).
fn true_of(r: &EdgeReading, sizes: &[u64], share: u64, cache: &Cache) -> Result<(), String> {
    let truth = model::half_served(share, cache.ways, cache.policy) as f64;
    let step = sizes
        .windows(2)
        .map(|w| w[1] as f64 / w[0] as f64)
        .fold(1.0, f64::max);
    let (smallest, largest) = (sizes[0] as f64, *sizes.last().expect("probes") as f64);
    match r.edge_bytes() {
        None if truth < smallest * step => Ok(()),
        None => Err(format!(
            "edge below every probe, though half is served to {truth:.0}"
        )),
        Some(_) if r.bracket[1].is_none() && truth > largest / step => Ok(()),
        Some(e) => {
            let e = e as f64;
            if e * step >= truth && e <= truth * step {
                Ok(())
            } else {
                Err(format!(
                    "edge {e:.0}, half served at {truth:.0} (probe step {step:.2})"
                ))
            }
        }
    }
}

#[test]
fn the_watch_edge_is_where_half_the_loads_stop_being_served_and_moves_with_the_share() {
    every_row("watch edge", |row, seed| {
        let plan = plan(row, seed).ok_or("no cache level to watch")?;
        let cache = row.caches.last().expect("a cache");
        let (least, most) = cache.serves;
        let quiet = interval(row, seed, most, &plan, preparation).ok_or("no quiet reading")?;
        true_of(&quiet, &plan.0, most, cache)
            .map_err(|e| format!("quiet: {e} (probes {:?})", plan.0))?;
        let busy =
            interval(row, seed + 1000, least, &plan, preparation).ok_or("no busy reading")?;
        true_of(&busy, &plan.0, least, cache)
            .map_err(|e| format!("with a neighbour: {e} (probes {:?})", plan.0))?;
        // A share that moves the edge by more than the probes' noise where
        // the probes see it moves the reading (below the probes counts as
        // lower than any reading; beyond the largest, as the largest: a
        // sweep made while the share was small plans probes that stop
        // short of the quiet edge, draw 549 of row 9).
        if seen_apart(cache, &plan.0) && busy.edge_bytes() >= quiet.edge_bytes() {
            return Err(format!(
                "the edge did not move: {:?} quiet, {:?} with a neighbour",
                quiet.edge_bytes(),
                busy.edge_bytes()
            ));
        }
        Ok(())
    });
}

#[test]
fn a_level_that_keeps_only_written_lines_serves_the_watch_only_after_a_rewrite() {
    // The watch of stops 53 to 55 rewrote the edge probes it walked whole
    // and streamed the level's middle by reads: on a level that keeps only
    // written lines the rewritten edge probes, spanning past the share,
    // flush the middle between its intervals, and a read stream does not
    // bring it back, so those rows read no quiet edge at all with them (the
    // rows must be able to fail the watch).
    fn edges_rewritten(role: Role, whole: bool) -> Preparation {
        match role {
            Role::Edge if whole => Preparation::Rewrite { passes: 1 },
            _ => Preparation::None,
        }
    }
    let written: Vec<Row> = rows()
        .into_iter()
        .filter(|r| r.caches.last().is_some_and(|c| c.keeps == Keeps::Written))
        .collect();
    assert!(!written.is_empty(), "no row keeps only written lines");
    for row in &written {
        let cache = row.caches.last().expect("a cache");
        for seed in 1..=DRAWS {
            let plan = plan(row, seed).expect("a plan");
            // No edge at all: the middle reads as memory does.
            let read = interval(row, seed, cache.serves.1, &plan, edges_rewritten);
            assert!(
                read.is_none(),
                "row {} draw {seed}: read an edge: {read:?}",
                row.id
            );
        }
    }
}

/// A neighbour that takes the whole share (on the Zen 4 guest a core
/// streaming 64 MiB past the L3, beside a watch): the level serves none of
/// the probes, not even its own middle, and memory reads slower under the
/// neighbour's traffic, the memory probe's walk more than the probes' (the
/// middle 142-211 ns, memory 254-414, where the settle pass read 14 and
/// 170). Read against the settle pass's quiet references where the middle
/// was not served ([`references`]), the edge lies below every probe on
/// every row, however the traffic slows the two; against the interval's
/// own, a middle read as a miss made every probe look served.
#[test]
fn a_neighbour_that_takes_the_whole_share_reads_below_every_probe() {
    every_row("watch edge, share taken", |row, seed| {
        let (sizes, middle, memory) = plan(row, seed).ok_or("no cache level to watch")?;
        let mut noise = Noise::new(seed ^ 0x57EA);
        let quiet = model::draw(row, &mut noise);
        let level_ns = noise.jitter(model::latency(row, &quiet, middle), NOISE);
        let memory_ns = noise.jitter(model::latency(row, &quiet, memory), NOISE);
        let settle = references_hold(level_ns, memory_ns).then_some((level_ns, memory_ns));
        let taken = without_last(&quiet);
        let whole = vec![Walk::Whole; sizes.len()];
        for (probes_slower, memory_slower) in [(1.0, 1.0), (1.0, 2.5), (1.3, 2.4), (1.5, 1.5)] {
            let mut read = |size: u64, slower: f64| {
                noise.jitter(model::latency(row, &taken, size) * slower, NOISE)
            };
            let ns: Vec<f64> = sizes.iter().map(|&s| read(s, probes_slower)).collect();
            let now = (read(middle, probes_slower), read(memory, memory_slower));
            // The miss probe spans the probes' footprint: slowed as they are.
            let miss = read(*sizes.last().expect("edge probes"), probes_slower);
            let references = references(now, settle);
            let edge =
                interval_edge(&sizes, &ns, &whole, references, miss).and_then(|r| r.edge_bytes());
            if let Some(edge) = edge {
                return Err(format!(
                    "probes x{probes_slower}, memory x{memory_slower}: an edge of {edge} bytes \
                     with the share taken (settle {settle:?}, now {now:?})"
                ));
            }
        }
        Ok(())
    });
}

/// One interval's readings: its edge (where the references held), how far
/// each probe's warm walk went, and its references (the level's middle,
/// memory).
struct Budgeted {
    edge: Option<EdgeReading>,
    miss_ns: f64,
    walks: Vec<Walk>,
    level_ns: f64,
    memory_ns: f64,
}

/// One interval while the last level serves `share` bytes, its warm walks
/// given `budget(cycles)` loads at memory's latency for probes of `cycles`
/// loads each (shared out by `warm_shares`, smallest first): each probe walked short reads anything
/// between its full-cycle reading and memory (a walk that stopped short
/// brought in fewer of the lines its timed window meets, or brought them
/// in once where a level keeps what it hits twice, never more), and only
/// `judged` readings reach the edge.
fn budgeted_interval(
    row: &Row,
    seed: u64,
    share: u64,
    plan: &(Vec<u64>, u64, u64),
    budget: impl Fn(&[u64]) -> u64,
) -> Budgeted {
    let mut noise = Noise::new(seed ^ 0x5407);
    let mut d = model::draw(row, &mut noise);
    d.caches.last_mut().expect("a cache").0 = share;
    let (sizes, middle, memory) = plan;
    let far = noise.jitter(model::latency(row, &d, *memory), NOISE);
    let cycles: Vec<u64> = sizes.iter().map(|&s| s / row.line).collect();
    let seconds = budget(&cycles) as f64 * far * 1e-9;
    let costs: Vec<WarmCost> = cycles
        .iter()
        .map(|&cycle| WarmCost {
            cycle,
            whole_ns: far,
            short_ns: far,
        })
        .collect();
    let walks: Vec<Walk> = warm_shares(&costs, seconds, seconds)
        .iter()
        .zip(&cycles)
        .map(|(warm, &c)| Walk::of(warm.unwrap_or(0), c, WARM_CYCLES))
        .collect();
    let ns: Vec<f64> = sizes
        .iter()
        .zip(&walks)
        .map(|(&s, &walk)| {
            let whole = walk == Walk::Whole;
            let served = reading(row, &d, s, Role::Edge, whole, preparation);
            let full = noise.jitter(served, NOISE);
            if whole {
                full
            } else {
                full + noise.within((0.0, 1.0)) * (far - full).max(0.0)
            }
        })
        .collect();
    let level = noise.jitter(
        reading(row, &d, *middle, Role::Level, true, preparation),
        NOISE,
    );
    let miss = noise.jitter(miss_reading(row, &d, sizes), NOISE);
    Budgeted {
        edge: interval_edge(sizes, &ns, &walks, (level, far), miss),
        miss_ns: miss,
        walks,
        level_ns: level,
        memory_ns: far,
    }
}

/// [`budgeted_interval`] short of its budget: its edge and which probes
/// walked whole, where the references held.
fn short_interval(
    row: &Row,
    seed: u64,
    share: u64,
    plan: &(Vec<u64>, u64, u64),
) -> Option<(EdgeReading, Vec<bool>)> {
    // Two cycles of the smallest and half a cycle of the next.
    let budget = |c: &[u64]| WARM_CYCLES * c[0] + c.get(1).map_or(0, |c| c / 2);
    let b = budgeted_interval(row, seed, share, plan, budget);
    let whole = b.walks.iter().map(|&w| w == Walk::Whole).collect();
    b.edge.map(|r| (r, whole))
}

/// Whether a reading's bracket is true of `cache` serving `share` bytes,
/// from the probes it read (a probe left out says nothing): an edge
/// between two probes within a probe step of where half is served, "at
/// least" its lower probe where half is served no lower than a step
/// below it, "below" its upper probe where half is served no higher than
/// a step above it.
fn bracket_true_of(r: &EdgeReading, step: f64, share: u64, cache: &Cache) -> Result<(), String> {
    let truth = model::half_served(share, cache.ways, cache.policy) as f64;
    let ok = match r.bracket {
        [Some(lo), None] => truth * step >= lo as f64,
        [None, Some(hi)] => truth <= hi as f64 * step,
        _ => r.edge_bytes().is_some_and(|e| {
            let e = e as f64;
            e * step >= truth && e <= truth * step
        }),
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "bracket {:?} (edge {:?}), half served at {truth:.0} (probe step {step:.2})",
            r.bracket,
            r.edge_bytes()
        ))
    }
}

#[test]
fn probes_walked_short_of_their_cycles_never_move_the_edge_off_the_truth() {
    every_row("watch edge, short warm walks", |row, seed| {
        let plan = plan(row, seed).ok_or("no cache level to watch")?;
        let cache = row.caches.last().expect("a cache");
        let step = plan
            .0
            .windows(2)
            .map(|w| w[1] as f64 / w[0] as f64)
            .fold(1.0, f64::max);
        for (what, share) in [
            ("quiet", cache.serves.1),
            ("with a neighbour", cache.serves.0),
        ] {
            // No reading at all is honest (every probe read was left out);
            // a reading must be true of the share.
            if let Some((r, whole)) = short_interval(row, seed, share, &plan) {
                if whole.iter().all(|&w| w) {
                    return Err(format!("{what}: the budget walked every probe whole"));
                }
                bracket_true_of(&r, step, share, cache)
                    .map_err(|e| format!("{what}: {e} (probes {:?}, whole {whole:?})", plan.0))?;
            }
        }
        Ok(())
    });
}

/// A budget one load short of every probe's whole cycles: the largest probe
/// walked more than a cycle and less than two ([`Walk::Partial`]), its
/// reading anywhere between its full-cycle one and memory. Taken as what a
/// miss costs (until stop 59), it made every smaller probe look less served
/// than it was: in the catalogue's watch series (below) an event on the
/// Zen 4 X3D and RK3399 rows ran three intervals past a neighbour (draws
/// 157 and 179), and here the Neoverse N1 row's edge read 8% low (draw
/// 106). The miss is now the miss probe's; the edge must stay true.
#[test]
fn a_probe_walked_between_one_cycle_and_two_is_never_the_miss() {
    every_row_over(
        "watch edge, the last probe walked partly",
        SERIES_DRAWS,
        |row, seed| {
            let plan = plan(row, seed).ok_or("no cache level to watch")?;
            let cache = row.caches.last().expect("a cache");
            let one_short = |c: &[u64]| WARM_CYCLES * c.iter().sum::<u64>() - 1;
            for (what, share) in [
                ("quiet", cache.serves.1),
                ("with a neighbour", cache.serves.0),
            ] {
                let b = budgeted_interval(row, seed, share, &plan, one_short);
                if b.walks.last() != Some(&Walk::Partial) {
                    return Err(format!("{what}: walks {:?}", b.walks));
                }
                if let Some(r) = b.edge {
                    true_of(&r, &plan.0, share, cache)
                        .map_err(|e| format!("{what}: {e} (probes {:?})", plan.0))?;
                }
            }
            Ok(())
        },
    );
}

/// Intervals of a watch in which a neighbour takes part of the last
/// level's share (from `serves.1` to `serves.0`) for ten intervals, from
/// 15 to 24; a quarter of the intervals, drawn at random, given a warm-walk
/// budget of a tenth to all of what their whole cycles take
/// (`budgeted_interval`: the larger probes walked short, the last one or
/// two of them less than a cycle, or between one and two), as a burst or
/// a budget growing back leaves them. Each as `memlat watch` records it.
fn neighbour_series(row: &Row, seed: u64, plan: &(Vec<u64>, u64, u64)) -> Vec<Interval> {
    let cache = row.caches.last().expect("a cache");
    let share = |k| {
        if NEIGHBOUR.contains(&k) {
            cache.serves.0
        } else {
            cache.serves.1
        }
    };
    series(row, seed, plan, share)
}

/// 40 intervals as `memlat watch` records them, the last level serving
/// `share(k)` bytes in interval `k`, a quarter of them short of their
/// warm-walk budget (see [`neighbour_series`]).
fn series(
    row: &Row,
    seed: u64,
    plan: &(Vec<u64>, u64, u64),
    share: impl Fn(u64) -> u64,
) -> Vec<Interval> {
    let mut pick = Noise::new(seed ^ 0xE7E7);
    (0..40u64)
        .map(|k| {
            let share = share(k);
            // The whole cycles, a load to spare for the rounding; or short.
            let part = if pick.unit() < -0.5 {
                pick.within((0.1, 1.0))
            } else {
                1.0
            };
            let budget =
                |c: &[u64]| (part * (WARM_CYCLES * c.iter().sum::<u64>()) as f64) as u64 + 1;
            let b = budgeted_interval(row, seed * 1000 + k, share, plan, budget);
            let edge = b.edge.as_ref();
            Interval {
                index: k,
                t_s: k as f64,
                utc: format!("2026-11-29T00:00:{k:02}Z"),
                ns: vec![b.level_ns, b.memory_ns],
                edge_ns: Vec::new(),
                edge_miss_ns: Some(b.miss_ns),
                edge_bytes: edge.and_then(EdgeReading::edge_bytes),
                edge_hit: edge.map(|r| r.hit.clone()).unwrap_or_default(),
                edge_served_bytes: edge.map(|r| r.served_bytes),
                edge_bracket_bytes: edge.map_or([None, None], |r| r.bracket),
                edge_warm_cycles: b
                    .walks
                    .iter()
                    .map(|w| match w {
                        Walk::Whole => WARM_CYCLES as f64,
                        Walk::Partial => 1.5,
                        Walk::Cold => 0.5,
                    })
                    .collect(),
                steal: None,
                spent_ms: 80.0,
                cpu_ms: None,
            }
        })
        .collect()
}

/// Draws of the watch-series checks, more than [`DRAWS`]: see
/// [`a_neighbour_that_takes_part_of_the_share_is_an_edge_event_within_two_intervals_of_its_ends`].
const SERIES_DRAWS: u64 = 200;

/// The intervals a neighbour takes part of the share in.
const NEIGHBOUR: std::ops::Range<u64> = 15..25;

/// What `memlat watch` plans and records around `plan`: the level's middle
/// and memory, then the edge probes.
fn header(row: &Row, plan: &(Vec<u64>, u64, u64)) -> WatchHeader {
    let (sizes, middle, memory) = plan;
    let level = format!("L{}", row.caches.len());
    WatchHeader {
        started: "2026-11-29T00:00:00Z".into(),
        cpu: 0,
        plan: WatchPlan {
            levels: vec![
                LevelSize {
                    name: level.clone(),
                    size: *middle,
                },
                LevelSize {
                    name: "memory".into(),
                    size: *memory,
                },
            ],
            edge: Some(EdgePlan {
                level,
                sizes: sizes.clone(),
                between: "capacity_bounds".into(),
            }),
            interval_s: 1.0,
            duration_s: Some(40.0),
            duty: DEFAULT_DUTY,
        },
        plateaus: MeasuredLevels {
            source: "probe".into(),
            file: None,
            measured: "2026-11-29T00:00:00Z".into(),
            levels: Vec::new(),
            memory_ns: None,
        },
        line: row.line,
        kernel: "pointer".into(),
        notes: Vec::new(),
        settle_edge: None,
    }
}

/// Issue 36's neighbour test on every row, through the events `memlat
/// watch` reports (`record::summarise`: the changepoints, the lower bounds
/// a short budget leaves filled by `bounds_filled`): a neighbour that
/// takes part of the share from interval 15 to 24 is an edge event that
/// starts within two intervals of 15 and ends (or steps back) within two
/// of 24, wherever the share moves the edge by more than the least shift
/// an event is (a share that moves less is left to the level's own
/// latency, or to nothing). Where the first intervals of the neighbour's
/// window (or the first after it) read only bounds that both shares
/// satisfy, or nothing at all, nothing says when in them it came (or
/// left), and the same holds of such intervals just before the window: the
/// event may start (or end) anywhere in them, and within two of them.
#[test]
fn a_neighbour_that_takes_part_of_the_share_is_an_edge_event_within_two_intervals_of_its_ends() {
    // Many draws: the rules it proves fail one draw in fifty to two hundred
    // when broken (a probe walked a cycle and a half taken as the miss
    // failed draws 157 and 179; a missing reading taken as below every
    // probe, draw 54), against a second in debug builds.
    every_row_over("watch edge event", SERIES_DRAWS, |row, seed| {
        let plan = plan(row, seed).ok_or("no cache level to watch")?;
        let cache = row.caches.last().expect("a cache");
        let (least, most) = cache.serves;
        let truth = |share| model::half_served(share, cache.ways, cache.policy) as f64;
        let (sizes, ..) = &plan;
        if !seen_apart(cache, sizes) {
            return Ok(());
        }
        let intervals = neighbour_series(row, seed, &plan);
        let (from, to) = (NEIGHBOUR.start as usize, NEIGHBOUR.end as usize - 1);
        // What the neighbour's share read: its truth, or the largest reading
        // in its window where noise put one above it.
        let neighbours = intervals[from..=to]
            .iter()
            .filter(|i| i.edge_at_least().is_none())
            .filter_map(|i| i.edge_bytes.map(|b| b as f64))
            .fold(seen_edge(cache, sizes, least), f64::max);
        // A reading tells the two shares apart unless it is a bound the
        // neighbour's share satisfies too (the quiet one satisfies every
        // bound that it does); an interval that read nothing tells nothing.
        let tells = |k: usize| {
            intervals[k].edge_read()
                && intervals[k]
                    .edge_at_least()
                    .is_none_or(|b| b as f64 > neighbours * (1.0 + MIN_SHIFT))
        };
        let last = intervals.len() - 1;
        let first_told = |k: usize| (k..=last).find(|&j| tells(j)).unwrap_or(last);
        // Its first interval away: from two before the first of the
        // intervals just before the window that tell nothing (the last
        // quiet one told apart is the last sure to be quiet), to two after
        // the first in the window told apart.
        let after_last_told = (0..from).rev().find(|&j| tells(j)).map_or(0, |j| j + 1);
        let starts = after_last_told.saturating_sub(2)..=first_told(from) + 2;
        // Its last interval away: from two before the last reading in the
        // window told apart, to two after the last before one after it is.
        let last_in = (from..=to).rev().find(|&j| tells(j)).unwrap_or(from);
        let ends = last_in.saturating_sub(2)..=first_told(to + 1) + 1;
        let summary = summarise(&header(row, &plan), &intervals, 40.0, None, false);
        let edge = summary.series.last().expect("an edge series");
        let started = edge.events.iter().any(|e| starts.contains(&e.start_index));
        let ended = edge.events.iter().any(|e| {
            ends.contains(&e.end_index.unwrap_or(last))
                || (e.start_index > from && ends.contains(&(e.start_index - 1)))
        });
        if started && ended {
            return Ok(());
        }
        Err(format!(
            "no edge event starting in {starts:?} (found: {started}) and ending in {ends:?} \
             (found: {ended}): events {:?}; readings (MiB) {:?}; half served at {:.1} \
             then {:.1} MiB, probes {sizes:?}",
            events_of(edge),
            readings_mib(&intervals),
            truth(most) / 1048576.0,
            truth(least) / 1048576.0,
        ))
    });
}

/// Where probes of `sizes` bytes see the edge of `cache` serving `share`
/// bytes: where half its loads are served, below the smallest probe as
/// half of it, beyond the largest as the largest.
fn seen_edge(cache: &Cache, sizes: &[u64], share: u64) -> f64 {
    let truth = model::half_served(share, cache.ways, cache.policy) as f64;
    let (smallest, largest) = (sizes[0] as f64, *sizes.last().expect("probes") as f64);
    truth.clamp(smallest / 2.0, largest)
}

/// Whether probes of `sizes` bytes see the edges of `cache`'s least and
/// most share apart by twice an event's least shift or more (a share that
/// moves less is left to the level's own latency, or to nothing).
fn seen_apart(cache: &Cache, sizes: &[u64]) -> bool {
    let (least, most) = cache.serves;
    seen_edge(cache, sizes, least) * (1.0 + 2.0 * MIN_SHIFT) <= seen_edge(cache, sizes, most)
}

/// A watch's edge readings as a failure shows them, MiB: `>=` a lower
/// bound, `<` below every probe, `-` nothing read.
fn readings_mib(intervals: &[Interval]) -> Vec<String> {
    intervals
        .iter()
        .map(|i| match (i.edge_bytes, i.edge_at_least()) {
            (_, Some(b)) => format!(">={:.1}", b as f64 / 1048576.0),
            (Some(b), None) => format!("{:.1}", b as f64 / 1048576.0),
            (None, None) if i.edge_read() => "<".into(),
            (None, None) => "-".into(),
        })
        .collect()
}

/// A series' events as (first interval, last, change).
fn events_of(series: &SeriesSummary) -> Vec<(usize, Option<usize>, f64)> {
    series
        .events
        .iter()
        .map(|e| (e.start_index, e.end_index, e.change))
        .collect()
}

/// The quiet watches that broke the rule before the miss probe (until
/// 2026-11-29 the miss was the slowest edge probe walked less than a cycle
/// in the interval): on rows 6, 9 and 12 the level still served a third
/// of such a probe's window, two such intervals came in a row, and the
/// edge read 10-18% low, an event. Found at 1,000 draws a row (4 of
/// 16,000 watches); kept here so that the default 25 draws hold them.
#[test]
fn quiet_watches_whose_cold_probes_the_level_partly_served_report_no_edge_event() {
    for (id, seed) in [(6, 281), (9, 217), (12, 340), (12, 437)] {
        let row = rows().into_iter().find(|r| r.id == id).expect("the row");
        let plan = plan(&row, seed).expect("a cache level to watch");
        let most = row.caches.last().expect("a cache").serves.1;
        let intervals = series(&row, seed, &plan, |_| most);
        let summary = summarise(&header(&row, &plan), &intervals, 40.0, None, false);
        let edge = summary.series.last().expect("an edge series");
        assert!(
            edge.events.is_empty(),
            "row {id} draw {seed}: events {:?}; readings (MiB) {:?}",
            events_of(edge),
            readings_mib(&intervals)
        );
    }
}

/// The quiet half of issue 36's watch test on every row: no neighbour, the
/// share at its most throughout, a quarter of the intervals short of their
/// budget: no edge event (a budget's bounds, partial walks and intervals
/// with no reading are no shift of the level).
#[test]
fn a_quiet_watch_with_budgets_that_move_reports_no_edge_event() {
    every_row_over("watch edge, quiet", SERIES_DRAWS, |row, seed| {
        let plan = plan(row, seed).ok_or("no cache level to watch")?;
        let most = row.caches.last().expect("a cache").serves.1;
        let intervals = series(row, seed, &plan, |_| most);
        let summary = summarise(&header(row, &plan), &intervals, 40.0, None, false);
        let edge = summary.series.last().expect("an edge series");
        if edge.events.is_empty() {
            return Ok(());
        }
        Err(format!(
            "events {:?} in a quiet watch; readings (MiB) {:?}",
            events_of(edge),
            readings_mib(&intervals)
        ))
    });
}
