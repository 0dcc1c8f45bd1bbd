//! The memory a kernel walks: a buffer mapped with the page size asked for,
//! bound to a NUMA node, filled (every page faulted in and private, never the
//! shared zero page: seed 003) and its page backing read back; a chain linked
//! into it in the kernel's encoding; and a [`Walker`] that follows it trip by
//! trip, checking every run's end node against the chain.

use super::Error;
use crate::chain::{Chain, NodeEncoding};
use crate::kernels::Kernel;
use crate::platform::{self, Buffer, PageBacking, PageRequest};
use crate::units::HumanBytes;

/// Fewest slots a thread links: a piece takes milliseconds (tens of ns a
/// slot), so starting a thread for it (tens of us) costs under 1%.
const MIN_LINK_PIECE_SLOTS: u64 = 1 << 16;

/// Bytes a buffer of `size` needs in memory: whole 2 MiB pages and the
/// alignment slack (chains keep no per-node bookkeeping).
pub fn memory_needed(size: u64) -> u64 {
    size.div_ceil(2 << 20)
        .saturating_mul(2 << 20)
        .saturating_add(2 << 20)
}

/// Refuses, before anything is allocated, a buffer that needs more than `available`.
pub fn ensure_memory(size: u64, available: Option<u64>) -> Result<(), Error> {
    let needed = memory_needed(size);
    match available {
        Some(available) if needed > available => Err(Error::NotEnoughMemory {
            size: HumanBytes(size),
            needed: HumanBytes(needed),
            available: HumanBytes(available),
        }),
        _ => Ok(()),
    }
}

/// A filled buffer with what backs it.
pub struct Workload {
    buffer: Buffer,
    /// The page backing obtained, read back from /proc/self/smaps.
    pub page_backing: PageBacking,
    /// What the reader should know (hugetlb fallback, too few huge pages).
    pub notices: Vec<String>,
}

impl Workload {
    /// Maps `size` bytes with `pages`, binds them to `node`, fills them and
    /// reads back what backs them. Refuses a buffer larger than MemAvailable.
    pub fn prepare(size: u64, pages: PageRequest, node: Option<usize>) -> Result<Workload, Error> {
        Workload::prepare_unless(size, pages, node, &|| false)
    }

    /// [`Workload::prepare`], abandoned with [`Error::Interrupted`] while
    /// filling once `stopped` says so.
    pub fn prepare_unless(
        size: u64,
        pages: PageRequest,
        node: Option<usize>,
        stopped: &dyn Fn() -> bool,
    ) -> Result<Workload, Error> {
        Workload::prepare_with_room_unless(size, size, pages, node, stopped)
    }

    /// [`Workload::prepare_unless`] in a buffer that can grow to `capacity`
    /// bytes ([`Workload::resize_unless`]).
    pub fn prepare_with_room_unless(
        size: u64,
        capacity: u64,
        pages: PageRequest,
        node: Option<usize>,
        stopped: &dyn Fn() -> bool,
    ) -> Result<Workload, Error> {
        ensure_memory(size, platform::mem_available_bytes())?;
        let len = usize::try_from(size).map_err(|_| Error::NotEnoughMemory {
            size: HumanBytes(size),
            needed: HumanBytes(memory_needed(size)),
            available: HumanBytes(platform::mem_available_bytes().unwrap_or(0)),
        })?;
        let capacity = usize::try_from(capacity).unwrap_or(len).max(len);
        let mut buffer =
            Buffer::map_with_room(len, capacity, pages).map_err(|source| Error::Map {
                size: HumanBytes(size),
                source,
            })?;
        let mut notices = std::mem::take(&mut buffer.notices);
        if let Some(node) = node {
            platform::bind_to_node(&buffer, node).map_err(|source| Error::Bind { node, source })?;
        }
        if !buffer.fill_unless(stopped) {
            return Err(Error::Interrupted);
        }
        let page_backing = buffer.backing();
        if pages != PageRequest::Base && page_backing.huge_fraction < 0.5 {
            notices.push(format!(
                "asked for {} pages but only {:.0}% of the buffer is in huge pages; TLB misses will add to the latency (check /sys/kernel/mm/transparent_hugepage/enabled)",
                pages.name(),
                page_backing.huge_fraction * 100.0
            ));
        }
        Ok(Workload {
            buffer,
            page_backing,
            notices,
        })
    }

    /// Bytes in the buffer.
    pub fn size(&self) -> u64 {
        self.buffer.len() as u64
    }

    /// Bytes the buffer can grow to.
    pub fn capacity(&self) -> u64 {
        self.buffer.capacity() as u64
    }

    /// Makes the buffer `size` bytes, within its capacity: what it adds is
    /// faulted in (the rest stays as it was), its page backing read again.
    pub fn resize_unless(&mut self, size: u64, stopped: &dyn Fn() -> bool) -> Result<(), Error> {
        ensure_memory(
            size.saturating_sub(self.size()),
            platform::mem_available_bytes(),
        )?;
        let len = usize::try_from(size.min(self.capacity())).unwrap_or(0);
        if !self.buffer.resize_unless(len, stopped) {
            return Err(Error::Interrupted);
        }
        self.page_backing = self.buffer.backing();
        Ok(())
    }

    /// Reads and writes back one word of every `line` bytes of the first
    /// `size` bytes, in address order: the buffer's lines as linking left
    /// them (each written, in address order), the state a sweep times a
    /// chain in. A level does not serve lines by their addresses alone: on
    /// the Zen 4 guest a 4-6 MiB random cycle that came in by its own
    /// loads read 60-150 ns for six cycles, the same cycle read 15-18 ns
    /// after one pass in address order, read or rewritten alike
    /// (`bench/independent/written_or_read.c`); on Emerald Rapids a read
    /// pass did not do it, a rewrite is not yet measured there. A pass
    /// streams (the prefetchers follow address order), where walking a
    /// chain takes one dependent load per line (a 16 MiB chain's cycle is
    /// 262,144 loads at L3 or memory latency, 20-40 ms). The values stay as
    /// they were.
    ///
    /// Through a shared reference: the stores go through the mapping's raw
    /// pointer (as the kernels' loads do), never a Rust reference to the
    /// memory, so a second thread may rewrite it in turn with the owner
    /// (`c2c`'s sharing check).
    pub fn rewrite(&self, size: u64, line: u64) {
        let step = (line / 8).max(1) as usize;
        let base = self.buffer.as_ptr().cast_mut();
        let end = (size.min(self.size()) / 8) as usize;
        for k in (0..end).step_by(step) {
            // SAFETY: word k lies within the mapped, filled buffer. Volatile:
            // the store must happen although it writes what was read.
            unsafe {
                let word = base.add(k);
                word.write_volatile(word.read_volatile());
            }
        }
    }

    /// Drops every `line` bytes of the first `size` bytes from every cache
    /// level with the ISA's flush instruction, so the next loads of them
    /// miss; `false` (nothing done) where user space has none.
    pub fn flush(&self, size: u64, line: u64) -> bool {
        if crate::arch::FLUSH_INSTRUCTION.is_none() {
            return false;
        }
        let base = self.buffer.as_ptr();
        let end = size.min(self.size());
        let lines: Vec<*const u64> = (0..end)
            .step_by(line.max(8) as usize)
            .map(|offset| base.wrapping_byte_add(offset as usize))
            .collect();
        // SAFETY: every pointer lies within this buffer, mapped and filled.
        unsafe { crate::arch::flush_lines(&lines) }
    }

    /// Writes `chain` into the buffer in the encoding `kernel` follows.
    pub fn link(&mut self, chain: &Chain, kernel: Kernel) -> Result<(), Error> {
        if chain.size() > self.size() {
            return Err(Error::Invalid(format!(
                "a chain over {} does not fit a {} buffer",
                HumanBytes(chain.size()),
                HumanBytes(self.size())
            )));
        }
        let encoding = kernel.encoding(self.buffer.as_ptr() as u64);
        let words = self.buffer.words_mut();
        let helpers = if chain.len() >= 2 * MIN_LINK_PIECE_SLOTS {
            platform::buffer::helper_cpus()
        } else {
            Vec::new()
        };
        let threads = (helpers.len() + 1).min(platform::buffer::FILL_THREADS) as u64;
        let parts = threads.min(chain.len() / MIN_LINK_PIECE_SLOTS).max(1);
        let pieces = chain.link_pieces(parts, words.len());
        // Each piece gets its own words: cut the buffer at the pieces' starts.
        let mut rest = words;
        let mut jobs = Vec::with_capacity(pieces.len());
        let mut taken = 0;
        for piece in &pieces {
            let (own, after) = std::mem::take(&mut rest).split_at_mut(piece.words.end - taken);
            jobs.push((piece, &mut own[piece.words.start - taken..]));
            taken = piece.words.end;
            rest = after;
        }
        let last = jobs.pop();
        std::thread::scope(|scope| {
            for ((piece, words), &cpu) in jobs.into_iter().zip(&helpers) {
                scope.spawn(move || {
                    // Where the pin fails (a cpuset), the piece is linked from
                    // the CPU inherited: slower, never wrong.
                    let _ = platform::pin_to_cpu(cpu);
                    chain.link_piece(words, piece, encoding);
                });
            }
            if let Some((piece, words)) = last {
                chain.link_piece(words, piece, encoding);
            }
        });
        Ok(())
    }

    /// A walker from the chain's first node; the chain must be the one linked last.
    pub fn walker<'a>(&'a self, chain: &'a Chain, kernel: Kernel) -> Walker<'a> {
        self.walker_at(chain, kernel, 0)
    }

    /// A walker standing on load `position` of the chain (modulo its
    /// length), as one that had walked that far would: a walk continued
    /// where an earlier walker stopped ([`Walker::position`]).
    pub fn walker_at<'a>(&'a self, chain: &'a Chain, kernel: Kernel, position: u64) -> Walker<'a> {
        let position = position % chain.len().max(1);
        Walker {
            kernel,
            base: self.buffer.as_ptr(),
            chain,
            position,
            offsets: (0..kernel.chains() as u64)
                .map(|j| chain.node_offset(position + j))
                .collect(),
        }
    }
}

/// Follows a linked chain trip by trip, checking every run's end node.
pub struct Walker<'a> {
    kernel: Kernel,
    base: *const u64,
    chain: &'a Chain,
    /// Loads followed so far, modulo the chain's length.
    position: u64,
    /// Where each chain walked side by side stands (one for most kernels).
    offsets: Vec<u64>,
}

impl Walker<'_> {
    /// The kernel it runs.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Runs another kernel of the same encoding from where this one stands.
    pub fn switch_kernel(&mut self, kernel: Kernel) {
        assert_eq!(
            kernel.encoding(self.base as u64),
            self.kernel.encoding(self.base as u64),
            "a walker switches only between kernels of one encoding"
        );
        self.kernel = kernel;
    }

    /// Nodes in the chain.
    pub fn chain_len(&self) -> u64 {
        self.chain.len()
    }

    /// Loads followed so far, modulo the chain's length: where
    /// [`Workload::walker_at`] continues the walk.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Byte offset of the node it stands on (the first chain's).
    pub fn offset(&self) -> u64 {
        self.offsets[0]
    }

    /// Runs `trips` loop trips and checks that the kernel ended on the node
    /// the chain says; a mismatch is an error, never a number.
    pub fn walk(&mut self, trips: u64) -> Result<(), Error> {
        let loads = trips.saturating_mul(self.kernel.loads_per_trip());
        // SAFETY: the chain was linked into this buffer in the kernel's
        // encoding (Workload::link) and every offset is one of its nodes.
        unsafe { self.kernel.run_all(self.base, &mut self.offsets, trips) }
            .ok_or(Error::NoKernel(self.kernel.name()))?;
        self.position = ((self.position as u128 + loads as u128) % self.chain.len() as u128) as u64;
        // Chain j of those walked side by side stands at load position + j.
        for (j, &end) in self.offsets.iter().enumerate() {
            let expected = self.chain.node_offset(self.position + j as u64);
            if end != expected {
                return Err(Error::ChainMismatch {
                    kernel: self.kernel.name(),
                    expected,
                    got: end,
                    loads,
                });
            }
        }
        Ok(())
    }
}

impl Walker<'_> {
    /// Runs `timings` groups of `group` dependent loads of the pointer
    /// encoding, writing the timer ticks each group took to `out`, and
    /// checks the end node like [`Walker::walk`].
    pub fn walk_timed(&mut self, group: u32, out: &mut [u32]) -> Result<(), Error> {
        if self.kernel.encoding(self.base as u64) != NodeEncoding::Address(self.base as u64)
            || self.offsets.len() != 1
        {
            return Err(Error::Invalid(
                "distribution: only a single chain of addresses can be timed load by load".into(),
            ));
        }
        if group == 0 || out.is_empty() {
            return Ok(());
        }
        let start = self.base.wrapping_byte_add(self.offsets[0] as usize);
        // SAFETY: the chain was linked into this buffer as addresses
        // (checked above) and `start` is one of its nodes; `out` holds
        // `out.len()` slots.
        let end = unsafe {
            crate::arch::timed_chase(start, u64::from(group), out.as_mut_ptr(), out.len() as u64)
        }
        .ok_or(Error::NoKernel("timed"))?;
        let loads = out.len() as u64 * u64::from(group);
        self.position = ((self.position as u128 + loads as u128) % self.chain.len() as u128) as u64;
        let expected = self.chain.node_offset(self.position);
        let got = (end as u64).wrapping_sub(self.base as u64);
        if got != expected {
            return Err(Error::ChainMismatch {
                kernel: "timed",
                expected,
                got,
                loads,
            });
        }
        self.offsets[0] = got;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::KernelKind;

    #[test]
    fn memory_needed_never_wraps_and_refuses_what_does_not_fit() {
        assert_eq!(memory_needed(1), 4 << 20);
        assert_eq!(memory_needed(u64::MAX - 7), u64::MAX);
        assert!(ensure_memory(1 << 30, Some(512 << 20)).is_err());
        assert!(ensure_memory(1 << 20, Some(512 << 20)).is_ok());
        assert!(ensure_memory(1 << 20, None).is_ok());
    }

    #[test]
    fn a_rewritten_buffer_holds_the_same_chain() {
        let mut w = Workload::prepare(64 << 10, PageRequest::Base, None).unwrap();
        let chain = Chain::random(64 << 10, 64, 3).unwrap();
        let kernel = Kernel::Chase(KernelKind::Pointer);
        w.link(&chain, kernel).unwrap();
        let linked = w.buffer.words_mut().to_vec();
        w.rewrite(64 << 10, 64);
        // Past the buffer's end, and a line that is no whole number of words.
        w.rewrite(u64::MAX, 100);
        assert_eq!(w.buffer.words_mut(), &linked[..]);
        let mut walker = w.walker(&chain, kernel);
        // A walk checks where it ends against the chain.
        walker.walk(chain.len()).unwrap();
        assert_eq!(walker.offset(), chain.node_offset(chain.len() * 100));
    }

    #[test]
    fn a_walker_checks_every_run_against_the_chain() {
        let mut w = Workload::prepare(64 << 10, PageRequest::Base, None).unwrap();
        let chain = Chain::random(64 << 10, 64, 3).unwrap();
        let kernel = Kernel::Chase(KernelKind::Pointer);
        w.link(&chain, kernel).unwrap();
        let mut walker = w.walker(&chain, kernel);
        walker.walk(3).unwrap();
        assert_eq!(walker.offset(), chain.node_offset(300));
        // A walk continued by a new walker where this one stopped ends
        // where one walker walking on would.
        let mut on = w.walker_at(&chain, kernel, walker.position());
        assert_eq!(on.offset(), walker.offset());
        on.walk(5).unwrap();
        walker.walk(5).unwrap();
        assert_eq!(on.offset(), walker.offset());
        assert_eq!(on.position(), 800 % chain.len());
        let too_big = Chain::random(128 << 10, 64, 3).unwrap();
        assert!(w.link(&too_big, kernel).is_err());
    }
}
