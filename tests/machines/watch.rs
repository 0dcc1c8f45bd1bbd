//! The shared level's edge (`memlat watch`, read by
//! `experiments::watch::edge_reading`) as the bytes it serves: the watch is
//! planned from a sweep (its detection's last plateau and bounds,
//! `watch::plan::edge_plan`), then each interval reads the level's middle,
//! memory and the edge probes, every probe a full cycle of its chain. The
//! level serves its whole share when the machine is quiet and its least
//! when a neighbour takes the rest; the edge must follow.

use memlat::analysis::detect;
use memlat::experiments::plateaus::MeasuredLevels;
use memlat::experiments::watch::{EdgeReading, edge_reading, plan};

use super::model::{self, Noise};
use super::rows::{G, Row};
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

/// One interval's edge while the last level serves `share` bytes.
pub fn interval(
    row: &Row,
    seed: u64,
    share: u64,
    plan: &(Vec<u64>, u64, u64),
) -> Option<EdgeReading> {
    let mut noise = Noise::new(seed ^ 0xED6E);
    let mut d = model::draw(row, &mut noise);
    d.caches.last_mut().expect("a cache").0 = share;
    let mut read = |size: u64| noise.jitter(model::latency(row, &d, size), 0.02);
    let (sizes, middle, memory) = plan;
    let ns: Vec<f64> = sizes.iter().map(|&s| read(s)).collect();
    edge_reading(sizes, &ns, read(*middle), read(*memory))
}

/// Whether a reading is true of a level serving `share` bytes: no level
/// serves more than it holds (a full-cycle chase beyond it reads memory),
/// and where its probes reach the share, at least half of it is found
/// (capacity is where half the loads are served); below the smallest
/// probe the edge must say so.
fn true_of(r: &EdgeReading, share: u64, smallest: u64) -> Result<(), String> {
    let served = r.served_bytes as f64;
    let s = share as f64;
    if served > 1.05 * s {
        return Err(format!(
            "served {} over the share {}",
            r.served_bytes, share
        ));
    }
    if share < smallest {
        return match r.edge_bytes() {
            None => Ok(()),
            Some(e) => Err(format!(
                "edge {e} though the share {share} lies below every probe"
            )),
        };
    }
    if served < 0.5 * s {
        return Err(format!(
            "served {} under half the share {share}",
            r.served_bytes
        ));
    }
    Ok(())
}

#[test]
fn the_watch_edge_is_the_share_the_level_serves_and_moves_with_it() {
    every_row("watch edge", |row, seed| {
        let plan = plan(row, seed).ok_or("no cache level to watch")?;
        let smallest = plan.0[0];
        let (least, most) = row.caches.last().expect("a cache").serves;
        let quiet = interval(row, seed, most, &plan).ok_or("no quiet reading")?;
        let busy = interval(row, seed + 1000, least, &plan).ok_or("no busy reading")?;
        true_of(&quiet, most, smallest).map_err(|e| format!("quiet: {e} (probes {:?})", plan.0))?;
        true_of(&busy, least, smallest)
            .map_err(|e| format!("with a neighbour: {e} (probes {:?})", plan.0))?;
        // A share that moves by more than the probes' noise moves the edge.
        if least as f64 * 1.2 < most as f64 && busy.served_bytes >= quiet.served_bytes {
            return Err(format!(
                "the edge did not move: {} quiet, {} with a neighbour",
                quiet.served_bytes, busy.served_bytes
            ));
        }
        Ok(())
    });
}
