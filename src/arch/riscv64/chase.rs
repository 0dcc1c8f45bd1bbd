//! riscv64 kernels: `ld a, 0(a)` chains (seed 000's `curr = *curr`); `mul`
//! (the M extension of riscv64gc) for the clock. RISC-V has no scaled-index
//! load, so an index step is shift, add, load.

crate::arch::kernels::define_kernels! {
    close: ["addi {n}, {n}, -1", "bnez {n}, 2b"],
    pointer: "ld {p}, 0({p})",
    index: ["slli {t}, {k}, 3", "add {t}, {t}, {base}", "ld {k}, 0({t})"] with [t = out(reg) _],
    operand: "ld {k}, 0({kp})",
    add: "add {x}, {x}, {k}",
    mul: "mul {x}, {x}, {k}",
}
