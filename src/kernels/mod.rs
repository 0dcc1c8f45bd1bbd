//! The timed loops. Each ISA gets its own `asm!` file so no compiler can drop,
//! merge or reorder a load; `portable.rs` (volatile reads) serves every other
//! ISA and is selectable everywhere with `--kernel portable` so it never rots.
//!
//! Every loop trip makes `UNROLL` dependent loads, then one decrement and one
//! branch, as seed 001's `L100`.

pub mod bandwidth;
pub mod line_tag;
pub mod load_use;
pub mod parallel;

use crate::arch;
use serde::{Deserialize, Serialize};

use crate::chain::NodeEncoding;

/// Dependent loads per loop trip (the arch layer's).
pub const UNROLL: u64 = arch::UNROLL;

/// Whether this build has hand-written `asm!` kernels for its ISA.
pub const HAS_ASM: bool = arch::HAS_ASM;

/// The timer read between loads timed one by one (`Point::distribution`):
/// `rdtscp`, `cntvct_el0` or `rdtime`; `None` on ISAs without one.
pub fn timed_by() -> Option<&'static str> {
    arch::TIMESTAMP
}

/// Which loop follows the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum KernelKind {
    /// Nodes hold addresses: `p = *p` (`mov rax,[rax]`, `ldr x0,[x0]`, `ld a0,0(a0)`).
    Pointer,
    /// Nodes hold word indices: `k = a[k]` (seed 004); indexed addressing may cost a cycle more.
    Index,
    /// `p = *p` with Rust volatile reads, no asm: the fallback for other ISAs.
    Portable,
}

impl KernelKind {
    /// The name used on the command line and in output.
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::Pointer => "pointer",
            KernelKind::Index => "index",
            KernelKind::Portable => "portable",
        }
    }

    /// Whether nodes hold addresses (else word indices).
    pub fn uses_addresses(self) -> bool {
        !matches!(self, KernelKind::Index)
    }
}

/// A loop the engine times: a chase kernel, or a load-use kernel (seed 003).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// `UNROLL` dependent loads a trip, the pointer, index or portable loop.
    Chase(KernelKind),
    /// A load, `nops` NOPs, an add that uses the loaded value; `shape` says
    /// how many such iterations a loop trip holds.
    LoadUse {
        /// NOPs between the load and its use.
        nops: u32,
        /// Unrolled or rolled.
        shape: load_use::Shape,
    },
    /// `chains` chains walked side by side, [`parallel::ROUNDS`] loads from
    /// each a trip (`memlat mlp`); `portable` for volatile reads.
    Parallel {
        /// Chains (1 to [`parallel::MAX_CHAINS`]).
        chains: u32,
        /// Volatile reads instead of the ISA's asm load.
        portable: bool,
    },
}

impl Kernel {
    /// How the chain's nodes must hold their successor for this kernel, in a
    /// buffer starting at `base`.
    pub fn encoding(self, base: u64) -> NodeEncoding {
        match self {
            Kernel::Chase(KernelKind::Index) => NodeEncoding::WordIndex,
            Kernel::Chase(_) | Kernel::Parallel { .. } => NodeEncoding::Address(base),
            Kernel::LoadUse { .. } => NodeEncoding::Delta,
        }
    }

    /// Loads (iterations) per loop trip.
    pub fn loads_per_trip(self) -> u64 {
        match self {
            Kernel::Chase(_) => UNROLL,
            Kernel::LoadUse { shape, .. } => shape.iterations_per_trip(),
            Kernel::Parallel { chains, .. } => u64::from(chains) * parallel::ROUNDS,
        }
    }

    /// How many chains the kernel walks side by side.
    pub fn chains(self) -> usize {
        match self {
            Kernel::Parallel { chains, .. } => chains as usize,
            _ => 1,
        }
    }

    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Chase(kind) => kind.name(),
            Kernel::LoadUse { .. } => "load-use",
            Kernel::Parallel { .. } => "parallel",
        }
    }

    /// Follows the chain in `base` for `trips` loop trips from the node at
    /// byte offset `start`; returns the byte offset of the node it ends on,
    /// or `None` when this build has no such kernel (load-use without asm, or
    /// more NOPs than compiled).
    ///
    /// # Safety
    /// `base` must point to a live buffer whose every node reachable from
    /// `start` holds its successor in [`Kernel::encoding`], inside the buffer.
    pub unsafe fn run(self, base: *const u64, start: u64, trips: u64) -> Option<u64> {
        // SAFETY: the caller's guarantee is each kernel's precondition.
        unsafe {
            match self {
                Kernel::Chase(kind) => Some(chase(kind, base, start, trips)),
                Kernel::LoadUse { nops, shape } => load_use::chase(shape, nops, base, start, trips),
                Kernel::Parallel { portable, .. } => {
                    let mut offsets = [start];
                    parallel::chase(base, &mut offsets, trips, portable).map(|()| offsets[0])
                }
            }
        }
    }

    /// As [`Kernel::run`] for every chain the kernel walks: `offsets` holds
    /// one start per chain ([`Kernel::chains`]) and receives where each ends.
    ///
    /// # Safety
    /// As [`Kernel::run`], for every offset.
    pub unsafe fn run_all(self, base: *const u64, offsets: &mut [u64], trips: u64) -> Option<()> {
        // SAFETY: the caller's guarantee is each kernel's precondition.
        unsafe {
            match self {
                Kernel::Parallel { portable, .. } => {
                    parallel::chase(base, offsets, trips, portable)
                }
                _ => {
                    offsets[0] = self.run(base, offsets[0], trips)?;
                    Some(())
                }
            }
        }
    }
}

/// Follows the chain in `base` for `trips * UNROLL` loads from the node at byte
/// offset `start`, and returns the byte offset of the node it ends on.
///
/// # Safety
/// `base` must point to a live buffer whose every node reachable from `start`
/// holds its successor in the encoding `kind` expects (an address inside the
/// buffer for `Pointer`/`Portable`, a word index inside it for `Index`).
pub unsafe fn chase(kind: KernelKind, base: *const u64, start: u64, trips: u64) -> u64 {
    if trips == 0 {
        return start;
    }
    let base_addr = base as u64;
    // SAFETY: the caller guarantees the chain stays inside the buffer.
    unsafe {
        match kind {
            KernelKind::Pointer => {
                arch::chase_pointer((base_addr + start) as *const u64, trips) as u64 - base_addr
            }
            KernelKind::Portable => {
                arch::portable::chase_pointer((base_addr + start) as *const u64, trips) as u64
                    - base_addr
            }
            KernelKind::Index => arch::chase_index(base, start / 8, trips) * 8,
        }
    }
}

/// Runs the loop with no loads in it (seed 001's calibration loop), `trips` times.
pub fn empty_loop(trips: u64) {
    if trips > 0 {
        arch::empty_loop(trips);
    }
}

/// A chain of dependent register instructions of known latency, timed to
/// estimate the core clock where no cycle counter is readable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClockChain {
    /// `add x, x, k`: one cycle on every core memlat targets.
    Add,
    /// `imul x, k` / `mul x, x, k`: 3 cycles on x86 (Intel since Sandy Bridge,
    /// AMD since Zen); 2 to 5 on the Arm and RISC-V cores documented.
    Mul,
}

impl ClockChain {
    /// The instruction as the ISA writes it, for the output.
    pub fn instruction(self) -> &'static str {
        match self {
            ClockChain::Add => arch::CLOCK_CHAIN_INSTRUCTIONS[0],
            ClockChain::Mul => arch::CLOCK_CHAIN_INSTRUCTIONS[1],
        }
    }
}

/// The operand the clock chains load: odd, so a multiply chain never reaches
/// zero (a core could shortcut a multiply by zero), and not a small immediate.
const CHAIN_OPERAND: u64 = 0x9E37_79B9_7F4A_7C15;

/// Runs `trips * UNROLL` dependent instructions of `chain`; returns the result
/// so the work stays observable. The operand is read from memory inside the
/// kernel, so the renamer cannot know it (see the per-ISA files).
pub fn clock_chain(chain: ClockChain, trips: u64) -> u64 {
    if trips == 0 {
        return 0;
    }
    let operand = CHAIN_OPERAND;
    match chain {
        ClockChain::Add => arch::add_chain(trips, &operand),
        ClockChain::Mul => arch::mul_chain(trips, &operand),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::Chain;

    fn linked(chain: &Chain, kind: KernelKind) -> Vec<u64> {
        let mut words = vec![0u64; (chain.size() / 8) as usize];
        let encoding = if kind.uses_addresses() {
            NodeEncoding::Address(words.as_ptr() as u64)
        } else {
            NodeEncoding::WordIndex
        };
        chain.link_into(&mut words, encoding);
        words
    }

    #[test]
    fn every_kernel_ends_where_the_chain_says() {
        let chains = [
            Chain::random(64 * 1024, 64, 5).unwrap(),
            Chain::stride(16 * 1024 + 64, 256).unwrap(),
            Chain::page_random(32 * 1024, 64, 4096, 5).unwrap(),
        ];
        for chain in &chains {
            for kind in [KernelKind::Pointer, KernelKind::Index, KernelKind::Portable] {
                let words = linked(chain, kind);
                for trips in [1u64, 3, 17] {
                    // SAFETY: `words` holds the chain in `kind`'s encoding.
                    let end = unsafe { chase(kind, words.as_ptr(), 0, trips) };
                    assert_eq!(end, chain.node_offset(trips * UNROLL), "{kind:?} {trips}");
                    let from = chain.node_offset(7);
                    // SAFETY: as above; `from` is a node of the chain.
                    let end = unsafe { chase(kind, words.as_ptr(), from, trips) };
                    assert_eq!(end, chain.node_offset(7 + trips * UNROLL));
                }
            }
        }
    }

    #[test]
    fn parallel_kernels_end_every_chain_where_it_says() {
        for chains in [1u64, 2, 5, 12, 16] {
            let chain = Chain::interleaved(256 * 1024, 64, chains, 3).unwrap();
            let words = linked(&chain, KernelKind::Pointer);
            for portable in [false, true] {
                let kernel = Kernel::Parallel {
                    chains: chains as u32,
                    portable,
                };
                assert_eq!(kernel.chains() as u64, chains);
                let mut offsets: Vec<u64> = (0..chains).map(|j| chain.node_offset(j)).collect();
                // SAFETY: `words` holds the chains as addresses.
                unsafe { kernel.run_all(words.as_ptr(), &mut offsets, 3) }.unwrap();
                let loads = 3 * kernel.loads_per_trip();
                for (j, &end) in offsets.iter().enumerate() {
                    assert_eq!(
                        end,
                        chain.node_offset(loads + j as u64),
                        "{chains} chains, {j}"
                    );
                }
            }
        }
        let mut too_many = [0u64; 17];
        // SAFETY: no chain is followed: 17 chains are refused before any load.
        assert!(unsafe { parallel::chase(std::ptr::null(), &mut too_many, 1, false) }.is_none());
    }

    #[test]
    fn zero_trips_stay_put() {
        let chain = Chain::random(1024, 64, 1).unwrap();
        let words = linked(&chain, KernelKind::Pointer);
        // SAFETY: `words` holds the chain as addresses.
        assert_eq!(
            unsafe { chase(KernelKind::Pointer, words.as_ptr(), 64, 0) },
            64
        );
    }

    #[test]
    fn clock_chains_compute_what_they_say() {
        let k = CHAIN_OPERAND;
        assert_eq!(clock_chain(ClockChain::Add, 3), k.wrapping_mul(3 * UNROLL));
        assert_eq!(
            clock_chain(ClockChain::Mul, 2),
            k.wrapping_pow(2 * UNROLL as u32)
        );
        assert_eq!(clock_chain(ClockChain::Add, 0), 0);
        empty_loop(1000);
    }
}
