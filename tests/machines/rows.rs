//! The catalogue: one row a machine, from public figures (the sources are
//! listed with each row; `../shared/machines.md` and docs/machines.md keep
//! the table). A figure nobody has verified is a range, and the verdict is
//! asserted to fall inside it. A new machine is one row.

use super::parts::*;

pub const K: u64 = 1 << 10;
pub const M: u64 = 1 << 20;
pub const G: u64 = 1 << 30;

/// How a level picks the line to evict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy {
    /// Least recently used per set: a cyclic walk longer than the set misses every load.
    Lru,
    /// Random (or adaptive, scan-resistant): a walk of S bytes over C hits
    /// the h with h = e^-(1-h)S/C, at most C / S.
    Random,
}

/// Which lines a level keeps when the level above lets them go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Keeps {
    /// Every line, however it came in: an inclusive level, or a victim
    /// level that takes whatever the level above evicts.
    Every,
    /// Only lines a core wrote (as linking leaves a chain): a line read
    /// back from memory and left clean is let go, whether a walk's own
    /// loads or a read pass in address order brought it. A non-inclusive
    /// L3 filled by L2 victims that drops the clean ones it predicts dead.
    Written,
}

/// One cache level as it serves this machine's core (a guest's share of a
/// shared level, not the claim).
#[derive(Debug, Clone, Copy)]
pub struct Cache {
    /// Bytes it serves: the least and most seen (a shared level's share moves
    /// with its neighbours).
    pub serves: (u64, u64),
    /// Ways of one set.
    pub ways: u32,
    /// Load-to-use latency of a hit, ns: the least and most.
    pub ns: (f64, f64),
    /// Replacement.
    pub policy: Policy,
    /// Whether `assoc`'s lines one way apart share one set (false for
    /// sliced, hashed last levels).
    pub one_set: bool,
    /// Bytes sysfs lists: the whole cache, where a guest is served a share.
    pub listed: u64,
    /// Which lines it keeps.
    pub keeps: Keeps,
}

impl Cache {
    /// The cache as sysfs lists `bytes` of it (a guest's share of a larger
    /// shared level).
    const fn listing(self, bytes: u64) -> Cache {
        Cache {
            listed: bytes,
            ..self
        }
    }

    /// The cache keeping only the lines a core wrote ([`Keeps::Written`]).
    const fn keeping_written(self) -> Cache {
        Cache {
            keeps: Keeps::Written,
            ..self
        }
    }
}

/// How a line arrives from the level that serves a lone load beyond L2.
#[derive(Debug, Clone, Copy)]
pub struct Fill {
    /// Chunk readings that are true of this machine: the chunk that arrives
    /// first (the line itself when it arrives whole); two where the gap is
    /// about a cycle and either reading is honest.
    pub chunks: &'static [u64],
    /// The rest of the line comes this much later, ns.
    pub gap_ns: f64,
    /// The next line arrives with the miss, this much after the asked-for one, ns.
    pub next_line_ns: Option<f64>,
}

/// One machine.
#[derive(Debug, Clone)]
pub struct Row {
    pub id: u32,
    pub name: &'static str,
    /// Where each figure comes from.
    pub sources: &'static [&'static str],
    /// What the cache tags as one, bytes.
    pub line: u64,
    pub fill: Fill,
    /// The data caches, smallest first.
    pub caches: Vec<Cache>,
    /// Idle memory latency, ns, least and most.
    pub memory_ns: (f64, f64),
    /// A slower tier beyond memory (CXL, a remote node): from this many
    /// bytes on, loads go there at these ns.
    pub beyond: Option<(u64, (f64, f64))>,
    /// The system's base page and the huge page the sweep gets (None: no THP).
    pub base_page: u64,
    pub huge_page: Option<u64>,
    /// Second-level TLB entries and a page walk's cost, ns (nested walks in guests).
    pub l2_tlb: u64,
    pub walk_ns: f64,
    /// Misses one core keeps in flight to memory.
    pub misses_in_flight: u32,
    /// Core clock, GHz.
    pub ghz: f64,
    /// The core: clock chains, load-use, TLB entries by page size.
    pub core: Core,
    /// Memory: refresh, and latency under traffic.
    pub dram: Dram,
    /// The timer `--distribution` reads.
    pub timer: Timer,
}

impl Row {
    /// The page a default sweep's chains get (its huge page where it has
    /// one) and its second-level TLB's reach with it, bytes.
    pub fn sweep_pages(&self) -> (u64, u64) {
        let page = self.huge_page.unwrap_or(self.base_page);
        (page, self.l2_tlb * page)
    }
}

const fn lru(serves: (u64, u64), ways: u32, ns: (f64, f64)) -> Cache {
    Cache {
        serves,
        ways,
        ns,
        policy: Policy::Lru,
        one_set: true,
        listed: serves.1,
        keeps: Keeps::Every,
    }
}

/// A sliced, hashed, shared last level. Its adaptive replacement keeps a
/// cyclic walk's lines about as LRU does (the Golden Cove guest's L3 went
/// from 37 ns at 8 MiB to 88 at 12 and 124 at 16: sharper than random
/// replacement's C / S), and its sets are hashed, so lines one way apart
/// do not share a set (`assoc` reads no ways there).
const fn shared(serves: (u64, u64), ways: u32, ns: (f64, f64)) -> Cache {
    Cache {
        serves,
        ways,
        ns,
        policy: Policy::Lru,
        one_set: false,
        listed: serves.1,
        keeps: Keeps::Every,
    }
}

pub fn rows() -> Vec<Row> {
    let intel_l1 = lru((48 * K, 48 * K), 12, (1.4, 1.7));
    let intel_l2 = lru((1536 * K, 2 * M), 16, (4.5, 5.4));
    vec![
        Row {
            id: 1,
            name: "Intel Golden Cove (Sapphire Rapids 8480+), KVM guest",
            sources: &[
                "L3 keeps only what a core wrote: unverified, row 2's design (non-inclusive, filled by L2 victims, since Skylake-SP)",
                "Chips and Cheese, Going Armchair Quarterback on Golden Cove's Caches (2022): 48K/12/5 cyc",
                "AnandTech SPR review: L2 2M 16 cyc",
                "Mess-Results Systems/MN5: memory 110-117 ns",
                "cpunews.net Golden Cove analysis: 16 fill buffers; memlat mlp on the guest: about 13 misses in flight at DRAM",
                "memlat, guest: curve intel-xeon-glc-kvm-thp (L3 plateau 3-8M at 35-39 ns, 88 ns at 12M; memory 165-178; sysfs lists a 480 MiB L3)",
            ],
            line: 64,
            fill: Fill {
                chunks: &[32, 64],
                gap_ns: 2.0,
                next_line_ns: None,
            },
            caches: vec![
                intel_l1,
                intel_l2,
                shared((7 * M, 10 * M), 16, (33.0, 39.0))
                    .listing(480 * M)
                    .keeping_written(),
            ],
            memory_ns: (165.0, 178.0),
            beyond: None,
            base_page: 4 * K,
            huge_page: Some(2 * M),
            l2_tlb: 2048,
            walk_ns: 25.0,
            misses_in_flight: 13,
            ghz: 3.5,
            core: GOLDEN_COVE,
            dram: DDR5_8CH,
            timer: tsc("TSC 2.0 GHz (8480+ base clock)", 2.0),
        },
        Row {
            id: 2,
            name: "Intel Raptor Cove (Emerald Rapids 8581C), KVM guest",
            sources: &[
                "techpowerup.com/308138 and Tom's Hardware 5th Gen Xeon review: 5 MB L3 a core, DDR5-5600",
                "memlat, guest: curve intel-xeon-emr-kvm-thp and its pair timings (+32 waits 2.36 ns from L3)",
                "memlat watch, 16-vCPU guest (docs/watch.md): a 9.5 MiB chain read back by two cycles of its own walk 86-114 ns, after a read pass and a cycle 98-110, just linked 32-35 (the L3 keeps what a core wrote)",
            ],
            line: 64,
            fill: Fill {
                chunks: &[32],
                gap_ns: 2.36,
                next_line_ns: None,
            },
            caches: vec![
                intel_l1,
                intel_l2,
                shared((9 * M, 13 * M), 16, (32.0, 37.0))
                    .listing(260 * M)
                    .keeping_written(),
            ],
            memory_ns: (126.0, 145.0),
            beyond: None,
            base_page: 4 * K,
            huge_page: Some(2 * M),
            l2_tlb: 2048,
            walk_ns: 25.0,
            misses_in_flight: 16,
            ghz: 3.0,
            core: GOLDEN_COVE,
            dram: DDR5_8CH,
            timer: tsc("TSC 2.3 GHz (the guest, issue 36)", 2.3),
        },
        Row {
            id: 3,
            name: "Intel Xeon Max 9480, HBM as a memory-side cache",
            sources: &[
                "L3 keeps only what a core wrote: unverified, row 2's design (non-inclusive, filled by L2 victims, since Skylake-SP)",
                "ServeTheHome, Intel Xeon Max 9480 Deep-Dive: 4 x 16 GB HBM2e, cache mode",
                "Mess-Results Systems/MN5/MN5-HBM: 129 ns idle HBM",
                "HBM miss to DDR5 1.3-1.5x a hit (unverified)",
            ],
            line: 64,
            fill: Fill {
                chunks: &[32, 64],
                gap_ns: 2.0,
                next_line_ns: None,
            },
            caches: vec![
                intel_l1,
                intel_l2,
                shared((56 * M, 112 * M), 15, (30.0, 36.0)).keeping_written(),
            ],
            // Within the sweep's reach the HBM cache is what serves: memory as measured.
            memory_ns: (125.0, 135.0),
            beyond: None,
            base_page: 4 * K,
            huge_page: Some(2 * M),
            l2_tlb: 2048,
            walk_ns: 20.0,
            misses_in_flight: 16,
            ghz: 3.0,
            core: GOLDEN_COVE,
            dram: HBM2E_MAX,
            timer: tsc("TSC 1.9 GHz (9480 base clock)", 1.9),
        },
        Row {
            id: 4,
            name: "AMD Zen 3 (Milan), Firecracker guest",
            sources: &[
                "AMD Software Optimization Guide for Family 19h (pub. 56665): 32K/8, 512K/8",
                "memlat, guest: curves amd-epyc-zen3-fc-thp-a/-b (L3 3-4M served, 15-17 ns; memory 105-160)",
            ],
            line: 64,
            fill: Fill {
                chunks: &[32, 64],
                gap_ns: 0.3,
                next_line_ns: Some(1.5),
            },
            caches: vec![
                lru((32 * K, 32 * K), 8, (1.25, 1.4)),
                lru((384 * K, 512 * K), 8, (3.8, 4.1)),
                shared((3 * M, 4 * M), 16, (15.0, 17.0)).listing(32 * M),
            ],
            memory_ns: (105.0, 160.0),
            beyond: None,
            base_page: 4 * K,
            huge_page: Some(2 * M),
            l2_tlb: 2048,
            walk_ns: 30.0,
            misses_in_flight: 22,
            ghz: 3.15,
            core: ZEN3,
            dram: DDR4_8CH,
            timer: tsc("TSC 2.45 GHz (unverified)", 2.45),
        },
        Row {
            id: 5,
            name: "AMD Zen 4 (Genoa)",
            sources: &[
                "Chips and Cheese, AMD's Zen 4, Part 2: Memory Subsystem (2022)",
                "AMD Software Optimization Guide for Zen 4 (pub. 57647)",
                "memlat pair timings on a Zen 4 guest: in-line +32 rises 0.25-0.35 ns",
            ],
            line: 64,
            fill: Fill {
                chunks: &[32, 64],
                gap_ns: 0.3,
                next_line_ns: Some(1.6),
            },
            caches: vec![
                lru((32 * K, 32 * K), 8, (0.8, 0.9)),
                lru((M, M), 8, (2.7, 3.0)),
                shared((16 * M, 32 * M), 16, (9.5, 11.0)),
            ],
            memory_ns: (110.0, 125.0),
            beyond: None,
            base_page: 4 * K,
            huge_page: Some(2 * M),
            l2_tlb: 3072,
            walk_ns: 15.0,
            misses_in_flight: 24,
            ghz: 4.5,
            core: ZEN4,
            dram: DDR5_12CH,
            timer: tsc("TSC 2.4 GHz (9654 base clock)", 2.4),
        },
        Row {
            id: 6,
            name: "AMD Zen 4 X3D (96 MiB V-Cache CCD)",
            sources: &[
                "Chips and Cheese, AMD's 7950X3D: Zen 4 Gets VCache (2023)",
                "Wikipedia, Zen 3: V-Cache adds 3-4 cycles",
            ],
            line: 64,
            fill: Fill {
                chunks: &[32, 64],
                gap_ns: 0.3,
                next_line_ns: Some(1.6),
            },
            caches: vec![
                lru((32 * K, 32 * K), 8, (0.8, 0.95)),
                lru((M, M), 8, (2.7, 3.2)),
                shared((64 * M, 96 * M), 16, (10.5, 12.5)),
            ],
            memory_ns: (70.0, 90.0),
            beyond: None,
            base_page: 4 * K,
            huge_page: Some(2 * M),
            l2_tlb: 3072,
            walk_ns: 15.0,
            misses_in_flight: 24,
            ghz: 4.7,
            core: ZEN4,
            dram: DDR5_2CH,
            timer: tsc("TSC 4.2 GHz (7950X3D base clock)", 4.2),
        },
        Row {
            id: 7,
            name: "AMD Zen 5 (Turin), KVM guest",
            sources: &[
                "Hot Chips 2024, Next Generation Zen 5 Core: 48K/12, 1M/16, 64 B fill",
                "memlat, guest: curve amd-epyc-zen5-kvm-thp (L3 4-8M served, 10-13 ns; memory 145-180)",
            ],
            line: 64,
            fill: Fill {
                chunks: &[64],
                gap_ns: 0.0,
                next_line_ns: Some(0.8),
            },
            caches: vec![
                lru((48 * K, 48 * K), 12, (0.93, 0.95)),
                lru((M, M), 16, (3.2, 3.4)),
                shared((4 * M, 8 * M), 16, (10.0, 13.0)).listing(32 * M),
            ],
            memory_ns: (145.0, 180.0),
            beyond: None,
            base_page: 4 * K,
            huge_page: Some(2 * M),
            l2_tlb: 4096,
            walk_ns: 30.0,
            misses_in_flight: 24,
            ghz: 4.25,
            core: ZEN5,
            dram: DDR5_ZEN5,
            timer: tsc(
                "TSC 2.596 GHz (the guest is told; cores run 4.2-4.3)",
                2.596,
            ),
        },
        Row {
            id: 8,
            name: "Apple M2 P-core (Avalanche)",
            sources: &[
                "Wikipedia, Apple M2: L1d 128 KB, P-cluster L2 16 MB, SLC 8 MB, 3.49 GHz",
                "AnandTech M1 deep dive: 3-cycle L1 load; hw.cachelinesize 128",
            ],
            line: 128,
            fill: Fill {
                chunks: &[64, 128],
                gap_ns: 1.0,
                next_line_ns: None,
            },
            // The 8 MiB SLC is memory-side and smaller than the cluster's
            // 16 MiB L2: beyond the L2 it serves next to nothing a core can
            // see, so two data caches show.
            caches: vec![
                lru((128 * K, 128 * K), 8, (0.85, 0.9)),
                lru((12 * M, 16 * M), 16, (4.0, 6.0)),
            ],
            memory_ns: (95.0, 120.0),
            beyond: None,
            base_page: 16 * K,
            huge_page: Some(32 * M),
            l2_tlb: 3072,
            walk_ns: 15.0,
            misses_in_flight: 32,
            ghz: 3.49,
            core: AVALANCHE,
            dram: LPDDR5_M2,
            timer: generic("cntvct 24 MHz (Apple silicon)", 24.0),
        },
        Row {
            id: 9,
            name: "Arm Neoverse N1 (Graviton2)",
            sources: &[
                "AnandTech, Cloud Clash: Graviton2 (anandtech.com/show/15578): L1 4 cyc, L2 1 MB 11 cyc, 81 ns",
                "learn.arm.com memory-subsystem path: 4-way L1, 8-way L2, 64 B lines, 32 MB SLC",
            ],
            line: 64,
            fill: Fill {
                chunks: &[32, 64],
                gap_ns: 0.8,
                next_line_ns: None,
            },
            caches: vec![
                lru((64 * K, 64 * K), 4, (1.55, 1.65)),
                lru((M, M), 8, (4.2, 4.6)),
                shared((16 * M, 32 * M), 16, (25.0, 45.0)),
            ],
            memory_ns: (81.0, 100.0),
            beyond: None,
            base_page: 64 * K,
            huge_page: Some(512 * M),
            l2_tlb: 1280,
            walk_ns: 20.0,
            misses_in_flight: 16,
            ghz: 2.5,
            core: NEOVERSE_N1,
            dram: DDR4_GRAVITON2,
            timer: generic("cntvct 121.875 MHz (Graviton2, unverified)", 121.875),
        },
        Row {
            id: 10,
            name: "Arm Neoverse V2 (Grace)",
            sources: &[
                "NVIDIA developer blog on Grace: 114 MB L3, 1 MB L2 a core",
                "Mess-Results Systems/Grace: 176.6 ns idle",
            ],
            line: 64,
            fill: Fill {
                chunks: &[32, 64],
                gap_ns: 0.8,
                next_line_ns: None,
            },
            caches: vec![
                lru((64 * K, 64 * K), 4, (1.25, 1.35)),
                lru((M, M), 8, (3.5, 4.2)),
                shared((57 * M, 114 * M), 16, (30.0, 50.0)),
            ],
            memory_ns: (165.0, 185.0),
            beyond: None,
            base_page: 4 * K,
            huge_page: Some(2 * M),
            l2_tlb: 2048,
            walk_ns: 20.0,
            misses_in_flight: 32,
            ghz: 3.1,
            core: NEOVERSE_V2,
            dram: LPDDR5X_GRACE,
            timer: generic("cntvct 1 GHz (Armv8.6 and later)", 1000.0),
        },
        Row {
            id: 11,
            name: "IBM POWER10",
            sources: &[
                "IBM Redbook, Power10 Architecture and technical overview 2.1.7: 8 MB local L3 region, victim of L2",
                "Hot Chips 32, IBM's POWER10 Processor: 2 MB L2 a core; 128 B lines; 64 KiB pages",
            ],
            line: 128,
            fill: Fill {
                chunks: &[32, 64, 128],
                gap_ns: 0.5,
                next_line_ns: None,
            },
            caches: vec![
                lru((32 * K, 32 * K), 8, (1.0, 1.2)),
                lru((2 * M, 2 * M), 8, (3.5, 4.5)),
                shared((8 * M, 8 * M), 16, (9.0, 14.0)),
            ],
            memory_ns: (90.0, 130.0),
            beyond: None,
            base_page: 64 * K,
            huge_page: Some(2 * M),
            l2_tlb: 4096,
            walk_ns: 20.0,
            misses_in_flight: 32,
            ghz: 3.8,
            core: POWER10,
            dram: DDR4_OMI,
            timer: generic("timebase 512 MHz (Power ISA)", 512.0),
        },
        Row {
            id: 12,
            name: "SiFive U74 (JH7110, VisionFive 2), no THP",
            sources: &[
                "SiFive U74 Core Complex Manual 21G1.01.00: 32K L1d, 2M shared L2, TileLink beats",
                "LLVM RISCVSchedSiFive7.td: load 3 cycles",
                "Linux jh7110-starfive-visionfive-2.dtsi: timebase 4 MHz",
            ],
            line: 64,
            fill: Fill {
                chunks: &[16, 32, 64],
                gap_ns: 1.5,
                next_line_ns: None,
            },
            caches: vec![
                lru((32 * K, 32 * K), 8, (2.0, 2.1)),
                Cache {
                    serves: (2 * M, 2 * M),
                    ways: 16,
                    ns: (15.0, 25.0),
                    policy: Policy::Random,
                    one_set: true,
                    listed: 2 * M,
                    keeps: Keeps::Every,
                },
            ],
            memory_ns: (150.0, 200.0),
            beyond: None,
            base_page: 4 * K,
            huge_page: None,
            l2_tlb: 512,
            walk_ns: 45.0,
            misses_in_flight: 4,
            ghz: 1.5,
            core: U74,
            dram: LPDDR4_32BIT,
            timer: generic("rdtime 4 MHz (jh7110 dtsi timebase-frequency)", 4.0),
        },
        Row {
            id: 13,
            name: "CXL memory tier behind local DRAM (Emerald Rapids host)",
            sources: &[
                "L3 keeps only what a core wrote: unverified, row 2's design (non-inclusive, filled by L2 victims, since Skylake-SP)",
                "Sun et al., Demystifying CXL Memory (MICRO 2023, arXiv 2303.15375): CXL 2.3-3.6x local",
                "The Next Platform, Just How Bad Is CXL Memory Latency? (2022)",
            ],
            line: 64,
            fill: Fill {
                chunks: &[32],
                gap_ns: 2.36,
                next_line_ns: None,
            },
            caches: vec![
                intel_l1,
                intel_l2,
                shared((160 * M, 320 * M), 16, (32.0, 37.0)).keeping_written(),
            ],
            memory_ns: (110.0, 125.0),
            beyond: Some((2 * G, (260.0, 400.0))),
            base_page: 4 * K,
            huge_page: Some(2 * M),
            l2_tlb: 2048,
            walk_ns: 20.0,
            misses_in_flight: 16,
            ghz: 3.0,
            core: GOLDEN_COVE,
            dram: DDR5_8CH,
            timer: tsc("TSC 2.3 GHz", 2.3),
        },
        Row {
            id: 14,
            name: "2-socket NUMA server (Sapphire Rapids over UPI), spilling to the remote node",
            sources: &[
                "L3 keeps only what a core wrote: unverified, row 2's design (non-inclusive, filled by L2 victims, since Skylake-SP)",
                "Mess-Results: local idle 110-117 ns on SPR",
                "Chips and Cheese, Arm's Neoverse V2 in AWS's Graviton 4: cross-socket 138.6 ns; remote 1.5-2x local (unverified)",
            ],
            line: 64,
            fill: Fill {
                chunks: &[32, 64],
                gap_ns: 2.0,
                next_line_ns: None,
            },
            caches: vec![
                intel_l1,
                intel_l2,
                shared((52 * M, 105 * M), 15, (33.0, 39.0)).keeping_written(),
            ],
            memory_ns: (110.0, 117.0),
            beyond: Some((2 * G, (170.0, 230.0))),
            base_page: 4 * K,
            huge_page: Some(2 * M),
            l2_tlb: 2048,
            walk_ns: 20.0,
            misses_in_flight: 16,
            ghz: 3.5,
            core: GOLDEN_COVE,
            dram: DDR5_8CH,
            timer: tsc("TSC 2.0 GHz", 2.0),
        },
        Row {
            id: 15,
            name: "KVM guest whose TSC advances in 10 ns steps (Zen 5 host)",
            sources: &[
                "memlat, guest: timelines amd-zen5-kvm-16k and amd-zen5-kvm-1g-refresh-975ns",
            ],
            line: 64,
            fill: Fill {
                chunks: &[64],
                gap_ns: 0.0,
                next_line_ns: Some(0.8),
            },
            caches: vec![
                lru((48 * K, 48 * K), 12, (0.93, 0.95)),
                lru((M, M), 16, (3.2, 3.4)),
                shared((4 * M, 8 * M), 16, (10.0, 13.0)).listing(32 * M),
            ],
            memory_ns: (145.0, 180.0),
            beyond: None,
            base_page: 4 * K,
            huge_page: Some(2 * M),
            l2_tlb: 4096,
            walk_ns: 30.0,
            misses_in_flight: 24,
            ghz: 4.25,
            core: ZEN5,
            dram: DDR5_ZEN5,
            timer: Timer {
                name: "TSC 2.596 GHz in 26-tick (10.0 ns) steps (the guest's timelines)",
                ghz: 2.596,
                step_ns: 10.0,
                read_ns: 12.0,
            },
        },
        Row {
            id: 16,
            name: "Arm board with a 24 MHz generic timer (RK3399, Cortex-A72)",
            sources: &[
                "Cortex-A72 TRM as quoted in pytorch/cpuinfo src/arm/cache.c: 32 KB 2-way L1d; 1 MB 16-way L2",
                "Rockchip RK3399 datasheet: 1.8-2.0 GHz; TF-A rk3399_def.h: 24 MHz counter",
            ],
            line: 64,
            fill: Fill {
                chunks: &[16, 32, 64],
                gap_ns: 1.0,
                next_line_ns: None,
            },
            caches: vec![
                lru((32 * K, 32 * K), 2, (2.0, 2.2)),
                Cache {
                    serves: (512 * K, M),
                    ways: 16,
                    ns: (8.0, 11.0),
                    policy: Policy::Random,
                    one_set: true,
                    listed: M,
                    keeps: Keeps::Every,
                },
            ],
            memory_ns: (110.0, 150.0),
            beyond: None,
            base_page: 4 * K,
            huge_page: Some(2 * M),
            l2_tlb: 1024,
            walk_ns: 30.0,
            misses_in_flight: 6,
            ghz: 1.8,
            core: CORTEX_A72,
            dram: LPDDR4_32BIT,
            timer: generic("cntvct 24 MHz (TF-A rk3399_def.h)", 24.0),
        },
    ]
}
