//! What the cache tags as one line, measured directly: bring X and X + d in,
//! drop X's line, then time loads of X + d. A line is what the cache tags,
//! evicts and flushes as one, so X + d misses when it shares X's line and
//! hits when it does not, whatever order the bytes of a line arrive in.
//!
//! X's line is dropped by the ISA's flush instruction (`clflush`, `dc civac`)
//! where user space may run one, else by conflict eviction: loads of as many
//! lines at X's page offset as the L1 holds in all, which fill X's set many
//! times over under any replacement policy (a set holds W lines; loading
//! C / line of them into it leaves X there with a chance of at most
//! (1 - 1/W)^(C / line) under random replacement, never under LRU).
//!
//! Every timed load is checked against two references measured in the same
//! round by the same loop: X itself after the drop (a certain miss) and X
//! after dropping a line [`KEPT_OFFSET`] bytes away (a certain hit, with the
//! same flushes, TLB and cache traffic).

use std::time::Instant;

use anyhow::{Result, bail};

use crate::arch;
use crate::platform::{Buffer, PageRequest};

/// Slots (one X each) a timed lap visits: 8 page offsets times 8 ways fit
/// the L1 of every core memlat knows, so the lines that are not dropped stay
/// L1 hits, and 64 loads are long enough to time with the monotonic clock.
pub const SLOTS: usize = 64;

/// Each X is aligned to this many bytes, so X + d shares X's line exactly when
/// d is below the line for any line up to this size.
pub const SLOT_ALIGN: u64 = 512;

/// The hit reference drops the line this far from X: another line than X's
/// for every line below [`SLOT_ALIGN`], and never a node's.
pub const KEPT_OFFSET: u64 = 384;

/// The flush instruction user space may run on this ISA, if any.
pub fn flush_instruction() -> Option<&'static str> {
    arch::FLUSH_INSTRUCTION
}

/// How X's line is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Drop {
    /// The ISA's flush instruction.
    Flush,
    /// Conflict eviction through X's set.
    Evict,
}

impl Drop {
    /// The best this ISA offers: its flush instruction, else eviction.
    pub fn best() -> Drop {
        if arch::FLUSH_INSTRUCTION.is_some() {
            Drop::Flush
        } else {
            Drop::Evict
        }
    }

    /// What it uses, for notes and the JSON.
    pub fn describe(self) -> String {
        match (self, arch::FLUSH_INSTRUCTION) {
            (Drop::Flush, Some(i)) => format!("flush ({i})"),
            (Drop::Flush, None) => "flush (none on this ISA)".into(),
            (Drop::Evict, _) => "conflict eviction through the line's L1 set".into(),
        }
    }
}

/// Buffers of one probe: `SLOTS` pages holding an X each, and for eviction a
/// page per line the L1 holds (none: lines are flushed).
pub struct LineTagProbe {
    slots: Buffer,
    evict: Option<Buffer>,
    page: u64,
    /// Slot k's X, as a byte offset into `slots`, in the order the lap visits them.
    order: Vec<u64>,
    /// The eviction buffer's pages, each once, in a scattered order (the
    /// chains' keyed permutation, computed once: a drop is only loads) that
    /// a stride prefetcher does not follow into the sets nearby.
    evict_order: Vec<u64>,
}

impl LineTagProbe {
    /// A probe over pages of `page` bytes (the system's base page), slots
    /// visited in an order from `seed`; `l1_bytes` sizes the eviction.
    pub fn new(drop: Drop, page: u64, l1_bytes: u64, seed: u64) -> Result<LineTagProbe> {
        if drop == Drop::Flush && arch::FLUSH_INSTRUCTION.is_none() {
            bail!("this ISA has no flush instruction memlat may use");
        }
        if page < SLOT_ALIGN * 2 || !page.is_power_of_two() {
            bail!("page size {page} is not a power of two of at least 1 KiB");
        }
        let offsets = page / SLOT_ALIGN;
        let mut slots = Buffer::map((SLOTS as u64 * page) as usize, PageRequest::Base)?;
        slots.fill();
        let evict = match drop {
            Drop::Flush => None,
            Drop::Evict => {
                // Lines of 64 bytes, the shortest any core here has: at
                // least as many lines as the L1 holds.
                let lines = (l1_bytes / 64).max(64);
                let mut b = Buffer::map((lines * page) as usize, PageRequest::Base)?;
                b.fill();
                Some(b)
            }
        };
        // Slot k sits on page k at offset (k mod offsets) * SLOT_ALIGN; the lap
        // visits pages in an order from the chains' keyed permutation, which
        // no prefetcher follows.
        let shuffle = crate::chain::Permutation::new(SLOTS as u64, seed);
        let order: Vec<u64> = (0..SLOTS as u64)
            .map(|i| shuffle.apply(i))
            .map(|k| k * page + (k % offsets) * SLOT_ALIGN)
            .collect();
        let evict_pages = evict.as_ref().map_or(0, |b| b.len() as u64 / page);
        let evict_order = match evict_pages {
            0 => Vec::new(),
            n => {
                let scatter = crate::chain::Permutation::new(n, seed);
                (0..n).map(|i| scatter.apply(i)).collect()
            }
        };
        Ok(LineTagProbe {
            slots,
            evict,
            page,
            order,
            evict_order,
        })
    }

    /// Links the lap through X + `node` of every slot, drops the line at X +
    /// `dropped` of every slot, and times one lap: ns per load. The lap's end
    /// is checked: it must come back to where it started.
    pub fn time(&mut self, node: u64, dropped: u64) -> Result<f64> {
        let base = self.slots.as_ptr() as u64;
        let words = self.slots.words_mut();
        let n = self.order.len();
        for k in 0..n {
            let here = self.order[k] + node;
            let next = base + self.order[(k + 1) % n] + node;
            words[(here / 8) as usize] = next;
        }
        let start = (base + self.order[0] + node) as *const u64;
        // Bring every node in (the writes above did; a lap makes sure), then drop.
        // SAFETY: every node holds the address of the next, all inside `slots`.
        let mut p = start;
        for _ in 0..n {
            p = unsafe { arch::load_pointer(p) };
        }
        self.drop_lines(dropped);
        let t = Instant::now();
        let mut p = start;
        for _ in 0..n {
            // SAFETY: as above.
            p = unsafe { arch::load_pointer(p) };
        }
        let ns = t.elapsed().as_secs_f64() * 1e9 / n as f64;
        if p != start {
            bail!("the line probe's lap ended at {p:?}, not where it began ({start:?})");
        }
        Ok(ns)
    }

    /// Drops, for every slot, the line holding X + `offset`.
    fn drop_lines(&mut self, offset: u64) {
        let base = self.slots.as_ptr() as u64;
        match &self.evict {
            None => {
                let lines: Vec<*const u64> = self
                    .order
                    .iter()
                    .map(|x| (base + x + offset) as *const u64)
                    .collect();
                // SAFETY: every address lies inside `slots`.
                unsafe { arch::flush_lines(&lines) };
            }
            Some(evict) => {
                // Every distinct page offset of the dropped lines, filled with
                // loads of the eviction buffer's lines at that offset.
                let offsets = self.page / SLOT_ALIGN;
                let ebase = evict.as_ptr() as u64;
                let mut sink = 0u64;
                for o in 0..offsets {
                    let at = o * SLOT_ALIGN + offset;
                    for &e in &self.evict_order {
                        let q = (ebase + e * self.page + at) as *const u64;
                        // SAFETY: `q` lies inside `evict`, mapped and filled.
                        sink = sink.wrapping_add(unsafe { std::ptr::read_volatile(q) });
                    }
                }
                std::hint::black_box(sink);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ways of dropping a line make X a slower load than X kept, on
    /// this host, timed interleaved on one pinned CPU and compared by their
    /// fastest of 31 rounds: a neighbour test on the same CPU only ever adds
    /// time (it spoiled the kept lap in over half the rounds once), so each
    /// fastest round is the probe's own.
    #[test]
    fn dropping_x_makes_x_slower_than_keeping_it() {
        if !crate::platform::counters::perf_syscall_available() {
            eprintln!(
                "skipped: no perf_event_open, so probably an emulator (qemu-user), which has no caches to drop a line from"
            );
            return;
        }
        // Lines brought into one CPU's L1 must be timed there.
        if let Some(cpu) = crate::platform::affinity::current_cpu() {
            let _ = crate::platform::affinity::pin_to_cpu(cpu);
        }
        for drop in [Drop::Flush, Drop::Evict] {
            if drop == Drop::Flush && arch::FLUSH_INSTRUCTION.is_none() {
                eprintln!("skipped: no flush instruction on this ISA");
                continue;
            }
            // Up to three tries of 31 rounds: a round whose eviction a
            // neighbour's loads undid is fastest of all, so a busy stretch can
            // spoil one try; a drop that never takes spoils all three.
            let (mut dropped, mut kept) = (f64::INFINITY, f64::INFINITY);
            for _ in 0..3 {
                let mut probe = LineTagProbe::new(
                    drop,
                    crate::platform::system::base_page_bytes(),
                    64 << 10,
                    7,
                )
                .unwrap();
                (dropped, kept) = (f64::INFINITY, f64::INFINITY);
                for _ in 0..31 {
                    dropped = dropped.min(probe.time(0, 0).unwrap());
                    kept = kept.min(probe.time(0, KEPT_OFFSET).unwrap());
                }
                if dropped > kept {
                    break;
                }
            }
            assert!(
                dropped > kept,
                "{drop:?}: dropped {dropped:.2} ns, kept {kept:.2} ns at their fastest"
            );
        }
    }
}
