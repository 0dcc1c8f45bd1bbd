//! aarch64 kernels: `ldr x, [x]` chains; `mul` for the clock.

crate::arch::kernels::define_kernels! {
    close: ["subs {n}, {n}, #1", "b.ne 2b"],
    pointer: "ldr {p}, [{p}]",
    index: ["ldr {k}, [{base}, {k}, lsl #3]"],
    operand: "ldr {k}, [{kp}]",
    add: "add {x}, {x}, {k}",
    mul: "mul {x}, {x}, {k}",
}
