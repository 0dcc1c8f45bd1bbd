//! riscv64 load-use kernels: `ld t, 0(p)`, N `nop`s, `add p, p, t`.
//!
//! A conditional branch reaches only 4 KiB, less than the largest unrolled
//! body, so the loop closes with `beqz` over a `j` (which reaches 1 MiB): one
//! instruction more per trip, measured with the rest of the loop overhead.

crate::arch::kernels::define_load_use! {
    load: "ld {t}, 0({p})",
    add: "add {p}, {p}, {t}",
    close: ["addi {c}, {c}, -1", "beqz {c}, 3f", "j 2b", "3:"],
}
