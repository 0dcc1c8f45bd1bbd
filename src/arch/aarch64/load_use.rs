//! aarch64 load-use kernels: `ldr t, [p]`, N `nop`s, `add p, p, t`.

crate::arch::kernels::define_load_use! {
    load: "ldr {t}, [{p}]",
    add: "add {p}, {p}, {t}",
    close: ["subs {c}, {c}, #1", "b.ne 2b"],
}
