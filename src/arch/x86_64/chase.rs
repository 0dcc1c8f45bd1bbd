//! x86_64 kernels: `mov r, [r]` chains; `imul` for the clock (3 cycles on
//! every Intel core since Sandy Bridge and every AMD Zen).

crate::arch::kernels::define_kernels! {
    close: ["dec {n}", "jnz 2b"],
    pointer: "mov {p}, qword ptr [{p}]",
    index: ["mov {k}, qword ptr [{base} + {k} * 8]"],
    operand: "mov {k}, qword ptr [{kp}]",
    add: "add {x}, {k}",
    mul: "imul {x}, {k}",
}
