//! The one place that knows the ISA. Each ISA's folder holds only the
//! `asm!` that differs (pointer and index chases, load-use kernels, clock
//! chains, the empty loop, user-space counters, CPUID); `portable.rs` holds
//! the volatile-read kernels every ISA can run, and `other.rs` stands in for
//! the asm on ISAs memlat has none for.

// The asm kernel macros; an ISA without asm kernels uses none of them.
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )),
    allow(unused_macros, unused_imports)
)]
pub(crate) mod kernels;

/// Dependent loads per loop trip: the count each ISA's chase repeats its
/// load (kernels.rs) and the portable kernels loop; arch owns it, so it
/// imports nothing from the kernels above it.
pub const UNROLL: u64 = 100;

#[cfg(target_arch = "x86_64")]
#[path = "x86_64/mod.rs"]
mod isa;

#[cfg(target_arch = "aarch64")]
#[path = "aarch64/mod.rs"]
mod isa;

#[cfg(target_arch = "riscv64")]
#[path = "riscv64/mod.rs"]
mod isa;

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
#[path = "other.rs"]
mod isa;

pub(crate) mod portable;

pub(crate) use isa::*;
