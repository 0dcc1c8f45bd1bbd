//! The L1 load bandwidth a core's documentation promises, bytes a cycle,
//! so a reader sees how close a measured read came to the hardware. Shown
//! as "documented peak" beside the measurement, never used as one: a row
//! is what the vendor's optimisation manual (or, where it is silent, the
//! published microarchitecture articles) says, keyed by CPUID vendor,
//! family and model. Hybrid parts (Alder and Raptor Lake client: P- and
//! E-cores load differently) and cores not listed get none.

use serde::Serialize;

/// A core's documented L1 loads a cycle for one vector width.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DocumentedPeak {
    /// The core, as its vendor names it.
    pub core: &'static str,
    /// Loads a cycle of `vector_bytes`.
    pub loads_per_cycle: u32,
    /// The width the figure is for (the kernels' vectors).
    pub vector_bytes: usize,
    /// `loads_per_cycle * vector_bytes`.
    pub bytes_per_cycle: f64,
}

/// One row: a vendor, a family, its models, and the loads a cycle at 16,
/// 32 and 64 bytes (0: not documented, or no such vectors).
struct Row {
    vendor: &'static str,
    family: u32,
    models: &'static [std::ops::RangeInclusive<u32>],
    core: &'static str,
    loads: [u32; 3],
}

const INTEL: &str = "GenuineIntel";
const AMD: &str = "AuthenticAMD";

/// Intel: Skylake client and server, Sunny/Willow Cove: two loads a cycle
/// up to the widest vector; Golden, Raptor and Redwood Cove (server parts
/// only: the client ones are hybrid): three up to 256 bits, two of 512
/// (Intel's optimisation reference manual). AMD: Zen and Zen+ two 128-bit
/// loads (a 256-bit load takes both); Zen 2 and Zen 3 two 256-bit loads
/// (Zen 3's third load port is for 64-bit and narrower loads); Zen 4 two
/// 256-bit loads, a 512-bit load in two halves; Zen 5 two 512-bit loads
/// (AMD's software optimisation guides; Chips and Cheese's measurements).
const TABLE: [Row; 9] = [
    Row {
        vendor: INTEL,
        family: 6,
        models: &[
            0x4e..=0x4e,
            0x5e..=0x5e,
            0x8e..=0x8e,
            0x9e..=0x9e,
            0xa5..=0xa6,
        ],
        core: "Skylake",
        loads: [2, 2, 0],
    },
    Row {
        vendor: INTEL,
        family: 6,
        models: &[0x55..=0x55],
        core: "Skylake-SP",
        loads: [2, 2, 2],
    },
    Row {
        vendor: INTEL,
        family: 6,
        models: &[0x6a..=0x6a, 0x6c..=0x6c, 0x7d..=0x7e, 0x8c..=0x8d],
        core: "Sunny/Willow Cove",
        loads: [2, 2, 2],
    },
    Row {
        vendor: INTEL,
        family: 6,
        models: &[0x8f..=0x8f, 0xcf..=0xcf, 0xad..=0xae],
        core: "Golden/Raptor/Redwood Cove",
        loads: [3, 3, 2],
    },
    Row {
        vendor: AMD,
        family: 0x17,
        models: &[0x00..=0x2f],
        core: "Zen/Zen+",
        loads: [2, 1, 0],
    },
    Row {
        vendor: AMD,
        family: 0x17,
        models: &[0x30..=0xff],
        core: "Zen 2",
        loads: [2, 2, 0],
    },
    Row {
        vendor: AMD,
        family: 0x19,
        models: &[0x00..=0x0f, 0x20..=0x5f],
        core: "Zen 3",
        loads: [2, 2, 0],
    },
    Row {
        vendor: AMD,
        family: 0x19,
        models: &[0x10..=0x1f, 0x60..=0x7f, 0xa0..=0xaf],
        core: "Zen 4",
        loads: [2, 2, 1],
    },
    Row {
        vendor: AMD,
        family: 0x1a,
        models: &[0x00..=0xff],
        core: "Zen 5",
        loads: [0, 0, 2],
    },
];

/// The documented peak for a core and vector width, when the table knows.
pub fn documented_peak(
    vendor: &str,
    family: u32,
    model: u32,
    vector_bytes: usize,
) -> Option<DocumentedPeak> {
    let column = match vector_bytes {
        16 => 0,
        32 => 1,
        64 => 2,
        _ => return None,
    };
    let row = TABLE.iter().find(|r| {
        r.vendor == vendor && r.family == family && r.models.iter().any(|m| m.contains(&model))
    })?;
    let loads = row.loads[column];
    (loads > 0).then(|| DocumentedPeak {
        core: row.core,
        loads_per_cycle: loads,
        vector_bytes,
        bytes_per_cycle: f64::from(loads) * vector_bytes as f64,
    })
}

/// The documented peak of the CPU this runs on (none off x86_64).
pub fn this_cpu(vector_bytes: usize) -> Option<DocumentedPeak> {
    let cpu = crate::platform::cpuid::cpu()?;
    documented_peak(&cpu.vendor, cpu.family, cpu.model, vector_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_the_cores_memlat_was_measured_on() {
        // This guest (Zen 3, family 19h model 01h) with AVX2.
        let zen3 = documented_peak(AMD, 0x19, 0x01, 32).unwrap();
        assert_eq!((zen3.core, zen3.bytes_per_cycle), ("Zen 3", 64.0));
        // Emerald Rapids (Raptor Cove), AVX-512 and AVX2.
        assert_eq!(
            documented_peak(INTEL, 6, 0xcf, 64).unwrap().bytes_per_cycle,
            128.0
        );
        assert_eq!(
            documented_peak(INTEL, 6, 0xcf, 32).unwrap().bytes_per_cycle,
            96.0
        );
        // Zen 4 with AVX-512: two 256-bit halves a cycle; Zen 5: two 512-bit.
        assert_eq!(
            documented_peak(AMD, 0x19, 0x11, 64)
                .unwrap()
                .bytes_per_cycle,
            64.0
        );
        assert_eq!(
            documented_peak(AMD, 0x1a, 0x02, 64)
                .unwrap()
                .bytes_per_cycle,
            128.0
        );
        // Hybrid Alder Lake, a width a core lacks, and another vendor: none.
        assert!(documented_peak(INTEL, 6, 0x97, 32).is_none());
        assert!(documented_peak(AMD, 0x19, 0x01, 64).is_none());
        assert!(documented_peak("HygonGenuine", 0x18, 0, 32).is_none());
        assert!(documented_peak(AMD, 0x19, 0x01, 8).is_none());
    }
}
