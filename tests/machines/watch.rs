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

/// Each reading's noise, as a share of it.
const NOISE: f64 = 0.02;

/// One interval's edge while the last level serves `share` bytes, with
/// the slack its noise leaves `h`: three readings (the probe, the level's
/// middle, memory), each within [`NOISE`] of itself, move
/// `h = (M - ns) / (M - L)` by at most `3 NOISE M / (M - L)`.
pub fn interval(
    row: &Row,
    seed: u64,
    share: u64,
    plan: &(Vec<u64>, u64, u64),
) -> Option<(EdgeReading, f64)> {
    let mut noise = Noise::new(seed ^ 0xED6E);
    let mut d = model::draw(row, &mut noise);
    d.caches.last_mut().expect("a cache").0 = share;
    let mut read = |size: u64| noise.jitter(model::latency(row, &d, size), NOISE);
    let (sizes, middle, memory) = plan;
    let ns: Vec<f64> = sizes.iter().map(|&s| read(s)).collect();
    let (level, far) = (read(*middle), read(*memory));
    let slack = 3.0 * NOISE * far / (far - level);
    Some((edge_reading(sizes, &ns, level, far)?, slack))
}

/// Whether a reading over `sizes` is true of a level serving `share`
/// bytes: no level serves more than it holds (a full-cycle chase beyond it
/// reads memory), give or take the `slack` in `h` of the probe that served
/// most; where its probes reach the share, at least half of it is found
/// (capacity is where half the loads are served); below the smallest
/// probe the edge must say so.
fn true_of(r: &EdgeReading, sizes: &[u64], slack: f64, share: u64) -> Result<(), String> {
    let served = r.served_bytes as f64;
    let s = share as f64;
    let smallest = sizes[0];
    let most = sizes
        .iter()
        .zip(&r.hit)
        .filter_map(|(&size, h)| h.map(|h| (h * size as f64, size)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(0.0, |(_, size)| size as f64);
    if served > s + slack * most {
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
        let (least, most) = row.caches.last().expect("a cache").serves;
        let (quiet, slack) = interval(row, seed, most, &plan).ok_or("no quiet reading")?;
        true_of(&quiet, &plan.0, slack, most)
            .map_err(|e| format!("quiet: {e} (probes {:?})", plan.0))?;
        let (busy, slack) = interval(row, seed + 1000, least, &plan).ok_or("no busy reading")?;
        true_of(&busy, &plan.0, slack, least)
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
