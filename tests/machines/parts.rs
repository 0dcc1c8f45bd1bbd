//! The parts a row is built from beyond its caches: the core (its clock
//! chains, load-use, TLBs), the memory (refresh, traffic) and the timer,
//! each with its public sources. Several rows share a part (every Golden
//! Cove, every DDR5 channel), so a part is one constant here and a row
//! names it. A figure nobody has verified says so in its source.

/// The ISA, for the rule memlat applies to its clock chains.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Isa {
    X86,
    Arm,
    RiscV,
    Power,
}

/// A core: what its clock chains, load-use curve and TLBs show.
#[derive(Debug, Clone, Copy)]
pub struct Core {
    pub name: &'static str,
    pub sources: &'static [&'static str],
    pub isa: Isa,
    /// Cycles the clock chain's dependent add takes.
    pub add_cycles: f64,
    /// Cycles the clock chain's 64-bit multiply takes (one multiply to the next).
    pub mul_cycles: f64,
    /// Load-to-use cycles of an L1 hit whose value feeds an add.
    pub load_use_cycles: f64,
    /// Instructions (NOPs) issued a cycle while a load is in flight.
    pub issue_width: f64,
    /// Cycles a trip of the rolled load-use loop costs beyond an iteration.
    pub loop_cycles: f64,
    /// First- and second-level TLB entries for the base page.
    pub tlb_base: (u64, u64),
    /// The same for the huge page.
    pub tlb_huge: (u64, u64),
    /// Cycles a load pays when the first-level TLB misses and the second hits.
    pub l2_tlb_cycles: f64,
}

/// Memory: its refresh and how its latency rises under traffic.
#[derive(Debug, Clone, Copy)]
pub struct Dram {
    pub name: &'static str,
    pub sources: &'static [&'static str],
    /// Time between refreshes (tREFI), ns.
    pub refresh_ns: f64,
    /// How long a refresh holds the rank (tRFC), ns.
    pub refresh_stall_ns: f64,
    /// Bandwidth the socket's memory sustains, GB/s.
    pub peak_gbps: f64,
    /// The share of the peak at which queueing has doubled the latency.
    pub knee_of_peak: f64,
    /// Idle latency over the latency once traffic runs (1: memory does not
    /// clock up under traffic).
    pub clocks_up: f64,
}

/// The timer `--distribution` reads.
#[derive(Debug, Clone, Copy)]
pub struct Timer {
    pub name: &'static str,
    /// Its tick rate, GHz (rdtsc's TSC, cntvct's counter, rdtime's timebase).
    pub ghz: f64,
    /// The smallest step it takes, ns (a guest's TSC can step by more than a tick).
    pub step_ns: f64,
    /// What one read costs, ns.
    pub read_ns: f64,
}

/// The knee of every memory below: queueing (M/M/1-like) doubles the
/// latency at this share of the peak (unverified: Intel MLC loaded-latency
/// curves double between 70 and 90% of the peak).
const KNEE: f64 = 0.8;

pub const GOLDEN_COVE: Core = Core {
    name: "Golden Cove / Raptor Cove",
    sources: &[
        "Intel 64 and IA-32 Optimization Reference Manual (Golden Cove): 5-cycle load-to-use, 6-wide, DTLB 96 loads (4K) / 32 (2M), STLB 2048 4K+2M, STLB hit about 7 cycles",
        "uops.info: imul r64, r64 latency 3",
    ],
    isa: Isa::X86,
    add_cycles: 1.0,
    mul_cycles: 3.0,
    load_use_cycles: 5.0,
    issue_width: 6.0,
    loop_cycles: 1.0,
    tlb_base: (96, 2048),
    tlb_huge: (32, 2048),
    l2_tlb_cycles: 7.0,
};

pub const ZEN3: Core = Core {
    name: "Zen 3",
    sources: &[
        "AMD Software Optimization Guide for Family 19h (pub. 56665): 4-cycle load-to-use, L1 DTLB 64 entries, L2 DTLB 2048 (4K, 2M), L1 miss L2 hit 7 cycles; imul 3",
    ],
    isa: Isa::X86,
    add_cycles: 1.0,
    mul_cycles: 3.0,
    load_use_cycles: 4.0,
    issue_width: 6.0,
    loop_cycles: 1.0,
    tlb_base: (64, 2048),
    tlb_huge: (64, 2048),
    l2_tlb_cycles: 7.0,
};

pub const ZEN4: Core = Core {
    name: "Zen 4",
    sources: &[
        "AMD Software Optimization Guide for Zen 4 (pub. 57647): L1 DTLB 72 entries, L2 DTLB 3072 (4K, 2M); 4-cycle load-to-use; imul 3",
    ],
    isa: Isa::X86,
    add_cycles: 1.0,
    mul_cycles: 3.0,
    load_use_cycles: 4.0,
    issue_width: 6.0,
    loop_cycles: 1.0,
    tlb_base: (72, 3072),
    tlb_huge: (72, 3072),
    l2_tlb_cycles: 7.0,
};

pub const ZEN5: Core = Core {
    name: "Zen 5",
    sources: &[
        "Hot Chips 2024, Zen 5: L1 DTLB 96 entries, L2 DTLB 4096; 8-wide dispatch; 4-cycle load-to-use; imul 3 (uops.info)",
    ],
    isa: Isa::X86,
    add_cycles: 1.0,
    mul_cycles: 3.0,
    load_use_cycles: 4.0,
    issue_width: 8.0,
    loop_cycles: 1.0,
    tlb_base: (96, 4096),
    tlb_huge: (96, 4096),
    l2_tlb_cycles: 7.0,
};

pub const AVALANCHE: Core = Core {
    name: "Apple Avalanche (M2 P-core)",
    sources: &[
        "L1 dTLB about 160 entries, L2 TLB about 3072 (unverified; ../shared/machines.md row 8); AnandTech M1 deep dive: 3-cycle load-to-use, 8-wide",
        "Dougall Johnson, Firestorm instruction tables: mul 3 cycles",
    ],
    isa: Isa::Arm,
    add_cycles: 1.0,
    mul_cycles: 3.0,
    load_use_cycles: 3.0,
    issue_width: 8.0,
    loop_cycles: 1.0,
    tlb_base: (160, 3072),
    tlb_huge: (160, 3072),
    l2_tlb_cycles: 6.0,
};

pub const NEOVERSE_N1: Core = Core {
    name: "Neoverse N1",
    sources: &[
        "Arm Neoverse N1 TRM: L1 dTLB 48 entries (all page sizes), L2 TLB 1280 (5-way)",
        "Arm Neoverse N1 Software Optimization Guide: 4-cycle load-to-use, 4-wide decode; MUL X-form 4 cycles (W-form 2)",
    ],
    isa: Isa::Arm,
    add_cycles: 1.0,
    mul_cycles: 4.0,
    load_use_cycles: 4.0,
    issue_width: 4.0,
    loop_cycles: 1.0,
    tlb_base: (48, 1280),
    tlb_huge: (48, 1280),
    l2_tlb_cycles: 5.0,
};

pub const NEOVERSE_V2: Core = Core {
    name: "Neoverse V2",
    sources: &[
        "Arm Neoverse V2 TRM: L1 dTLB 48 entries, L2 TLB 2048 (8-way)",
        "Arm Neoverse V2 Software Optimization Guide: 4-cycle load-to-use; MUL 2 cycles; 6-wide decode",
    ],
    isa: Isa::Arm,
    add_cycles: 1.0,
    mul_cycles: 2.0,
    load_use_cycles: 4.0,
    issue_width: 6.0,
    loop_cycles: 1.0,
    tlb_base: (48, 2048),
    tlb_huge: (48, 2048),
    l2_tlb_cycles: 5.0,
};

pub const POWER10: Core = Core {
    name: "POWER10",
    sources: &[
        "IBM Power10 Processor Chip User's Manual: 64-entry L1 data ERAT, 4096-entry TLB (unverified); 4-cycle load-to-use, 8-wide dispatch (unverified)",
        "GCC rs6000/power10.md (IBM's scheduling model): add and other simple fixed-point ops 2 cycles, mulld 5, 4 from one multiply to the next",
    ],
    isa: Isa::Power,
    add_cycles: 2.0,
    mul_cycles: 4.0,
    load_use_cycles: 4.0,
    issue_width: 8.0,
    loop_cycles: 1.0,
    tlb_base: (64, 4096),
    tlb_huge: (64, 4096),
    l2_tlb_cycles: 8.0,
};

pub const U74: Core = Core {
    name: "SiFive U74",
    sources: &[
        "SiFive U74 Core Complex Manual 21G1.01.00: 40-entry fully associative L1 DTLB, 512-entry direct-mapped L2 TLB; dual-issue in-order",
        "LLVM RISCVSchedSiFive7.td: load 3 cycles, mul 3 cycles",
    ],
    isa: Isa::RiscV,
    add_cycles: 1.0,
    mul_cycles: 3.0,
    load_use_cycles: 3.0,
    issue_width: 2.0,
    loop_cycles: 1.0,
    tlb_base: (40, 512),
    tlb_huge: (40, 512),
    l2_tlb_cycles: 4.0,
};

pub const CORTEX_A72: Core = Core {
    name: "Cortex-A72",
    sources: &[
        "Arm Cortex-A72 TRM: 32-entry fully associative L1 data micro TLB, 1024-entry 4-way L2 TLB",
        "Arm Cortex-A72 Software Optimization Guide: 4-cycle load-to-use, 3-wide decode; MUL X-form up to 5 cycles (unverified)",
    ],
    isa: Isa::Arm,
    add_cycles: 1.0,
    mul_cycles: 5.0,
    load_use_cycles: 4.0,
    issue_width: 3.0,
    loop_cycles: 1.0,
    tlb_base: (32, 1024),
    tlb_huge: (32, 1024),
    l2_tlb_cycles: 6.0,
};

/// DDR4: tREFI 7.8 us at normal temperature, tRFC 350 ns (8 Gb dies).
const DDR4_SOURCE: &str = "JEDEC JESD79-4: tREFI 7.8 us (0-85 C), tRFC1 350 ns for 8 Gb dies";
/// DDR5 and LPDDR: tREFI 3.9 us, tRFC 295 ns (16 Gb dies).
const DDR5_SOURCE: &str = "JEDEC JESD79-5: tREFI 3.9 us (normal refresh), tRFC1 295 ns for 16 Gb dies; LPDDR4/5 tREFI 3.9 us";

pub const DDR5_8CH: Dram = Dram {
    name: "DDR5, 8 channels",
    sources: &[DDR5_SOURCE, "8 x DDR5-4800 x 8 B = 307 GB/s peak"],
    refresh_ns: 3900.0,
    refresh_stall_ns: 295.0,
    peak_gbps: 307.0,
    knee_of_peak: KNEE,
    clocks_up: 1.0,
};

pub const DDR5_12CH: Dram = Dram {
    name: "DDR5, 12 channels",
    sources: &[DDR5_SOURCE, "12 x DDR5-4800 x 8 B = 460 GB/s peak"],
    refresh_ns: 3900.0,
    refresh_stall_ns: 295.0,
    peak_gbps: 460.0,
    knee_of_peak: KNEE,
    clocks_up: 1.0,
};

pub const DDR5_ZEN5: Dram = Dram {
    name: "DDR5, 12 channels, same-bank refresh",
    sources: &[
        "memlat --distribution on the Zen 5 guest at 1 GiB (timeline amd-zen5-kvm-1g-refresh-975ns): slow loads every 975.4 ns (tREFI / 4, refresh by bank group), the median slow one 154 ns over the median load (a load waits half of a 295 ns tRFC on average)",
        "memlat mlp on the Zen 5 guest: a load faster among many chains than alone (memory clocks up under traffic; x1.1-1.3, unverified)",
        "12 x DDR5-6000 x 8 B = 576 GB/s peak",
    ],
    refresh_ns: 975.0,
    refresh_stall_ns: 295.0,
    peak_gbps: 576.0,
    knee_of_peak: KNEE,
    clocks_up: 1.2,
};

pub const DDR4_8CH: Dram = Dram {
    name: "DDR4, 8 channels",
    sources: &[DDR4_SOURCE, "8 x DDR4-3200 x 8 B = 205 GB/s peak"],
    refresh_ns: 7800.0,
    refresh_stall_ns: 350.0,
    peak_gbps: 205.0,
    knee_of_peak: KNEE,
    clocks_up: 1.0,
};

pub const DDR5_2CH: Dram = Dram {
    name: "DDR5, 2 channels (desktop)",
    sources: &[DDR5_SOURCE, "2 x DDR5-5200 x 8 B = 83 GB/s peak"],
    refresh_ns: 3900.0,
    refresh_stall_ns: 295.0,
    peak_gbps: 83.0,
    knee_of_peak: KNEE,
    clocks_up: 1.0,
};

pub const LPDDR5_M2: Dram = Dram {
    name: "LPDDR5-6400, 128-bit",
    sources: &[DDR5_SOURCE, "Apple M2: 100 GB/s unified memory bandwidth"],
    refresh_ns: 3900.0,
    refresh_stall_ns: 280.0,
    peak_gbps: 100.0,
    knee_of_peak: KNEE,
    clocks_up: 1.0,
};

pub const LPDDR5X_GRACE: Dram = Dram {
    name: "LPDDR5X, Grace",
    sources: &[DDR5_SOURCE, "NVIDIA Grace: up to 500 GB/s LPDDR5X"],
    refresh_ns: 3900.0,
    refresh_stall_ns: 280.0,
    peak_gbps: 500.0,
    knee_of_peak: KNEE,
    clocks_up: 1.0,
};

pub const HBM2E_MAX: Dram = Dram {
    name: "HBM2e, 4 stacks",
    sources: &[
        "JEDEC JESD235 (HBM2/2e): tREFI 3.9 us, tRFC 350 ns (unverified)",
        "Intel Xeon Max: about 1 TB/s HBM2e a socket",
    ],
    refresh_ns: 3900.0,
    refresh_stall_ns: 350.0,
    peak_gbps: 1000.0,
    knee_of_peak: KNEE,
    clocks_up: 1.0,
};

pub const DDR4_OMI: Dram = Dram {
    name: "DDR4 behind OMI (POWER10 DDIMMs)",
    sources: &[
        DDR4_SOURCE,
        "IBM Redbook Power10: 16 OMI channels, about 400 GB/s sustained a socket (unverified)",
    ],
    refresh_ns: 7800.0,
    refresh_stall_ns: 350.0,
    peak_gbps: 400.0,
    knee_of_peak: KNEE,
    clocks_up: 1.0,
};

pub const LPDDR4_32BIT: Dram = Dram {
    name: "LPDDR4, 32-bit",
    sources: &[
        DDR5_SOURCE,
        "JH7110 / RK3399: one 32-bit LPDDR4 channel, about 12.8 GB/s peak",
    ],
    refresh_ns: 3900.0,
    refresh_stall_ns: 280.0,
    peak_gbps: 12.8,
    knee_of_peak: KNEE,
    clocks_up: 1.0,
};

pub const DDR4_GRAVITON2: Dram = Dram {
    name: "DDR4-3200, 8 channels (Graviton2)",
    sources: &[DDR4_SOURCE, "AWS Graviton2: 8 x DDR4-3200, 205 GB/s peak"],
    refresh_ns: 7800.0,
    refresh_stall_ns: 350.0,
    peak_gbps: 205.0,
    knee_of_peak: KNEE,
    clocks_up: 1.0,
};

/// An x86 TSC at `ghz`, read by rdtscp.
pub const fn tsc(name: &'static str, ghz: f64) -> Timer {
    Timer {
        name,
        ghz,
        step_ns: 1.0 / ghz,
        read_ns: 12.0,
    }
}

/// Arm's generic timer (cntvct_el0) at `mhz`.
pub const fn generic(name: &'static str, mhz: f64) -> Timer {
    Timer {
        name,
        ghz: mhz / 1000.0,
        step_ns: 1000.0 / mhz,
        read_ns: 6.0,
    }
}
