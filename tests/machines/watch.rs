//! The shared level's edge (`memlat watch`, read by
//! `experiments::watch::edge_reading`) by the sweep's definition of a
//! capacity, where half the loads stop being served: the watch is planned
//! from a sweep (its detection's last plateau and bounds,
//! `watch::plan::edge_plan`), then each interval reads the level's middle,
//! memory and the edge probes, every probe a full cycle of its chain. The
//! level serves its whole share when the machine is quiet and its least
//! when a neighbour takes the rest; the edge must follow, to within a
//! probe's step of the model's own half-served size.

use memlat::analysis::detect;
use memlat::experiments::plateaus::MeasuredLevels;
use memlat::experiments::watch::{EdgeReading, edge_reading, plan};

use super::model::{self, Noise};
use super::rows::{Cache, G, Row};
use super::{claims, every_row};

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
/// [`NOISE`] of itself.
pub fn interval(
    row: &Row,
    seed: u64,
    share: u64,
    plan: &(Vec<u64>, u64, u64),
) -> Option<EdgeReading> {
    let mut noise = Noise::new(seed ^ 0xED6E);
    let mut d = model::draw(row, &mut noise);
    d.caches.last_mut().expect("a cache").0 = share;
    let mut read = |size: u64| noise.jitter(model::latency(row, &d, size), NOISE);
    let (sizes, middle, memory) = plan;
    let ns: Vec<f64> = sizes.iter().map(|&s| read(s)).collect();
    let (level, far) = (read(*middle), read(*memory));
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
        let quiet = interval(row, seed, most, &plan).ok_or("no quiet reading")?;
        true_of(&quiet, &plan.0, most, cache)
            .map_err(|e| format!("quiet: {e} (probes {:?})", plan.0))?;
        let busy = interval(row, seed + 1000, least, &plan).ok_or("no busy reading")?;
        true_of(&busy, &plan.0, least, cache)
            .map_err(|e| format!("with a neighbour: {e} (probes {:?})", plan.0))?;
        // A share that moves by more than the probes' noise moves the edge
        // (below the probes counts as lower than any reading).
        if least as f64 * 1.2 < most as f64 && busy.edge_bytes() >= quiet.edge_bytes() {
            return Err(format!(
                "the edge did not move: {:?} quiet, {:?} with a neighbour",
                quiet.edge_bytes(),
                busy.edge_bytes()
            ));
        }
        Ok(())
    });
}
