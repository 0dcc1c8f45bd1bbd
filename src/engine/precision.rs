//! When a point has been repeated enough: its median placed to a precision
//! chosen by where its chain lies, with a few extra repeats for a noisy one.

use super::{Point, Sample};

/// Repeats agree to this fraction (max - min over median) where a cache
/// can hold the chain; [`PRECISION_MEMORY`] beyond.
pub const PRECISION_CACHES: f64 = 0.01;

/// Repeats agree to this fraction for a chain larger than every data cache
/// sysfs lists, or past every level a sweep measured to end
/// ([`super::Engine::set_past_levels`]): every load then misses them all,
/// and DRAM's own variation (row hits and misses, refresh) spreads the
/// timings more.
pub const PRECISION_MEMORY: f64 = 0.02;

/// The precision a chain of `size` bytes asks for, by where it lies (larger
/// than every data cache of `cpu` that sysfs lists, or than `past_levels`,
/// where the caller measured every listed level to end; or not), never by
/// its latency: no figure in ns says which level serves it.
pub(super) fn precision_target(size: u64, cpu: usize, past_levels: Option<u64>) -> f64 {
    let largest = crate::platform::caches::data_caches(cpu)
        .iter()
        .map(|c| c.size_bytes)
        .max();
    target_past(size, largest, past_levels)
}

/// [`precision_target`] for the largest cache claimed and the size past
/// every level measured.
fn target_past(size: u64, largest: Option<u64>, past_levels: Option<u64>) -> f64 {
    let memory_from = match (largest, past_levels) {
        (Some(claimed), Some(measured)) => Some(claimed.min(measured)),
        (claimed, measured) => claimed.or(measured),
    };
    if memory_from.is_some_and(|c| size > c) {
        PRECISION_MEMORY
    } else {
        PRECISION_CACHES
    }
}

/// Whether the repeats so far place their median to `target`: the values
/// around the median agree within it. Those are both of two and the middle
/// three of more: all of three, all but the fastest of four, and of five
/// neither extreme, so only the fifth repeat sets a slow outlier aside.
/// Setting the slowest aside from three and four as well (a disturbance
/// only slows a sample) was tried: 14 default sweeps of each, interleaved
/// on the Zen 4 guest (2026-11-28), 9% faster (356-396 repeats a sweep
/// against 381-460), but the L2 read under 910 KiB in 5 of 14 sweeps
/// (706-910 KiB) against none of 14 (970-1183 KiB; the L2 is 1 MiB): a
/// point at a level's edge has two states, and two of three samples
/// always agree on one of them.
pub(super) fn precise(samples: &[Sample], target: f64) -> bool {
    let mut ns: Vec<f64> = samples.iter().map(|s| s.ns_per_load).collect();
    if ns.len() < 2 {
        return false;
    }
    ns.sort_by(f64::total_cmp);
    let mid = ns.len() / 2;
    let window = if ns.len() == 2 {
        &ns[..]
    } else {
        &ns[mid - 1..=(mid + 1).min(ns.len() - 1)]
    };
    let (lo, hi) = (window[0], window[window.len() - 1]);
    let median = ns[mid];
    median > 0.0 && (hi - lo) / median <= target
}

impl super::Engine {
    /// Chains larger than `bytes` lie past every cache level: a sweep sets
    /// it once its own curve shows every level sysfs lists ended there
    /// (a guest's share of a far larger L3), and their repeats then ask
    /// memory's precision, not a cache's (`None`: the claimed caches
    /// decide).
    pub fn set_past_levels(&mut self, bytes: Option<u64>) {
        self.past_levels = bytes;
    }

    /// Whether [`Engine::set_past_levels`] has set a size.
    pub fn knows_past_levels(&self) -> bool {
        self.past_levels.is_some()
    }
}

/// Repeats an adaptive point may add beyond its plan when it is noisy.
pub const EXTRA_REPEATS: u32 = 2;

/// Whether an adaptive point that has had its planned repeats is still
/// noisy (its median not placed within twice `target`), so it gets more,
/// up to [`EXTRA_REPEATS`] more.
pub(super) fn more_repeats(point: &Point, samples: &[Sample], target: f64) -> bool {
    let n = samples.len() as u32;
    point.until_precise && n < point.repeats + EXTRA_REPEATS && !precise(samples, 2.0 * target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memorys_precision_past_the_claimed_caches_or_the_measured_levels() {
        let m = |k: u64| k << 20;
        // A 300 MiB L3 claimed, nothing measured: a cache's precision to it.
        assert_eq!(target_past(m(100), Some(m(300)), None), PRECISION_CACHES);
        assert_eq!(target_past(m(400), Some(m(300)), None), PRECISION_MEMORY);
        // Every level measured to end by 17 MiB: memory's past it.
        assert_eq!(
            target_past(m(100), Some(m(300)), Some(m(17))),
            PRECISION_MEMORY
        );
        assert_eq!(
            target_past(m(16), Some(m(300)), Some(m(17))),
            PRECISION_CACHES
        );
        // A measured end past the claim moves nothing.
        assert_eq!(
            target_past(m(40), Some(m(32)), Some(m(64))),
            PRECISION_MEMORY
        );
        assert_eq!(target_past(m(40), None, None), PRECISION_CACHES);
    }

    fn samples(ns: &[f64]) -> Vec<Sample> {
        ns.iter()
            .enumerate()
            .map(|(i, &ns_per_load)| Sample {
                repeat: i as u32,
                seed: i as u64,
                ns_a: f64::NAN,
                ns_2a: f64::NAN,
                ns_per_load,
                cycles_per_load: f64::NAN,
                ticks_a: None,
                ticks_2a: None,
                rounds: 2,
                disturbed: false,
                clock_ghz: f64::NAN,
                events: Default::default(),
                counter_scale: None,
            })
            .collect()
    }

    #[test]
    fn only_the_fifth_repeat_sets_a_slow_outlier_aside() {
        let precise_at = |ns: &[f64]| precise(&samples(ns), PRECISION_CACHES);
        assert!(!precise_at(&[10.0]));
        assert!(precise_at(&[10.0, 10.05]));
        assert!(!precise_at(&[10.0, 10.2]));
        // Two of three agree, the third is a level's other state: not yet.
        assert!(!precise_at(&[10.0, 10.05, 14.0]));
        // Of four, the fastest is set aside, never the slowest.
        assert!(precise_at(&[9.0, 10.0, 10.05, 10.02]));
        assert!(!precise_at(&[10.0, 10.05, 10.02, 14.0]));
        // Of five, both extremes.
        assert!(precise_at(&[9.0, 10.0, 10.05, 10.02, 14.0]));
    }
}
