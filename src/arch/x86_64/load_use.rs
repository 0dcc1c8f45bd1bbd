//! x86_64 load-use kernels: `mov t, [p]`, N `nop`s, `add p, t`.

crate::arch::kernels::define_load_use! {
    load: "mov {t}, qword ptr [{p}]",
    add: "add {p}, {t}",
    close: ["dec {c}", "jnz 2b"],
}
