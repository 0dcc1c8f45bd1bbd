//! memlat as a library: three latencies, L1-, L2- and DRAM-sized.
//!
//!     cargo run --release --example measure

fn main() -> Result<(), memlat::Error> {
    let mut engine = memlat::Engine::builder().build()?;
    for size in [16 << 10, 1 << 20, 256 << 20] {
        let m = engine.measure(&memlat::Point::random(size).with_repeats(3))?;
        println!(
            "{:>10} bytes: {:7.2} ns  {:7.1} cycles ({})",
            size, m.ns_per_load.median, m.cycles_per_load.median, m.cycle_source
        );
    }
    Ok(())
}
