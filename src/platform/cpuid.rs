//! What CPUID claims about the caches and the processor (x86_64 only): a
//! second cross-check beside sysfs, and the vendor and family that decide
//! which prefetcher MSRs exist.
//!
//! Cache leaves: Intel's leaf 4 and AMD's leaf 0x8000_001D share one layout:
//! EAX[4:0] type (0 ends the list), EAX[7:5] level, EBX[11:0] line - 1,
//! EBX[21:12] partitions - 1, EBX[31:22] ways - 1, ECX sets - 1.

use crate::platform::caches::{CacheInfo, CacheKind};

/// Processor vendor, family and model from CPUID leaves 0 and 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpu {
    /// `GenuineIntel`, `AuthenticAMD`, ...
    pub vendor: String,
    /// Display family (base + extended).
    pub family: u32,
    /// Display model (base + extended).
    pub model: u32,
}

/// Decodes leaf 1's EAX into display family and model.
pub fn family_model(eax: u32) -> (u32, u32) {
    let base_family = (eax >> 8) & 0xf;
    let family = if base_family == 0xf {
        base_family + ((eax >> 20) & 0xff)
    } else {
        base_family
    };
    let base_model = (eax >> 4) & 0xf;
    let model = if base_family == 0x6 || base_family == 0xf {
        base_model | (((eax >> 16) & 0xf) << 4)
    } else {
        base_model
    };
    (family, model)
}

/// One cache from a leaf-4-layout subleaf; `None` at the end of the list.
pub fn decode_cache(eax: u32, ebx: u32, ecx: u32) -> Option<CacheInfo> {
    let kind = match eax & 0x1f {
        0 => return None,
        1 => CacheKind::Data,
        2 => CacheKind::Instruction,
        _ => CacheKind::Unified,
    };
    let line = (ebx & 0xfff) as u64 + 1;
    let partitions = ((ebx >> 12) & 0x3ff) as u64 + 1;
    let ways = ((ebx >> 22) & 0x3ff) as u64 + 1;
    let sets = ecx as u64 + 1;
    Some(CacheInfo {
        level: (eax >> 5) & 0x7,
        kind,
        size_bytes: ways * partitions * line * sets,
        line_bytes: Some(line),
        ways: Some(ways),
    })
}

/// CPUID leaf and subleaf on x86; `None` elsewhere.
fn cpuid(leaf: u32, subleaf: u32) -> Option<(u32, u32, u32, u32)> {
    crate::arch::cpuid(leaf, subleaf)
}

/// The processor's vendor, family and model; `None` off x86_64.
pub fn cpu() -> Option<Cpu> {
    let (_, ebx, ecx, edx) = cpuid(0, 0)?;
    let mut vendor = Vec::with_capacity(12);
    for word in [ebx, edx, ecx] {
        vendor.extend_from_slice(&word.to_le_bytes());
    }
    let (eax, ..) = cpuid(1, 0)?;
    let (family, model) = family_model(eax);
    Some(Cpu {
        vendor: String::from_utf8_lossy(&vendor).into_owned(),
        family,
        model,
    })
}

/// Whether the processor has AMX tiles (leaf 7, EDX bit 24): Sapphire Rapids
/// and later; false off x86.
pub fn has_amx() -> bool {
    cpuid(0, 0).is_some_and(|(max, ..)| max >= 7)
        && cpuid(7, 0).is_some_and(|(.., edx)| edx & (1 << 24) != 0)
}

/// Whether CPUID says a hypervisor runs this machine (leaf 1, ECX bit 31);
/// false off x86.
pub fn under_hypervisor() -> bool {
    cpuid(1, 0).is_some_and(|(_, _, ecx, _)| ecx & (1 << 31) != 0)
}

/// The hypervisor's vendor signature (leaf 0x4000_0000: `KVMKVMKVM`,
/// `Microsoft Hv`, `VMwareVMware`, `XenVMMXenVMM`...), when CPUID says there is one.
pub fn hypervisor_signature() -> Option<String> {
    if !under_hypervisor() {
        return None;
    }
    let (_, ebx, ecx, edx) = cpuid(0x4000_0000, 0)?;
    let bytes: Vec<u8> = [ebx, ecx, edx]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    Some(
        String::from_utf8_lossy(&bytes)
            .trim_matches('\0')
            .trim()
            .to_string(),
    )
}

/// The data (or unified) caches CPUID describes, L1 first; empty off x86_64
/// or when the processor has no such leaf.
pub fn data_caches() -> Vec<CacheInfo> {
    let Some(cpu) = cpu() else {
        return Vec::new();
    };
    let max_leaf = cpuid(0, 0).map_or(0, |r| r.0);
    let leaf = match cpu.vendor.as_str() {
        "GenuineIntel" if max_leaf >= 4 => 4,
        "AuthenticAMD" | "HygonGenuine" => {
            let max_ext = cpuid(0x8000_0000, 0).map_or(0, |r| r.0);
            let topoext = cpuid(0x8000_0001, 0).is_some_and(|r| r.2 & (1 << 22) != 0);
            if max_ext < 0x8000_001D || !topoext {
                return Vec::new();
            }
            0x8000_001D
        }
        _ => return Vec::new(),
    };
    let mut caches: Vec<CacheInfo> = (0..16)
        .map_while(|sub| {
            let (eax, ebx, ecx, _) = cpuid(leaf, sub)?;
            decode_cache(eax, ebx, ecx)
        })
        .filter(CacheInfo::holds_data)
        .collect();
    caches.sort_by_key(|c| c.level);
    caches
}

/// CPUID's frequency claims: leaf 0x16 (base and maximum MHz, often zero in a
/// VM) and leaf 0x15 (the TSC rate from the crystal), in GHz; empty off x86.
pub fn frequency_claims() -> Vec<(&'static str, f64)> {
    let mut out = Vec::new();
    let max_leaf = cpuid(0, 0).map_or(0, |r| r.0);
    if max_leaf >= 0x16
        && let Some((base, max, ..)) = cpuid(0x16, 0)
    {
        for (source, mhz) in [("CPUID 0x16 base", base), ("CPUID 0x16 max", max)] {
            if mhz & 0xffff > 0 {
                out.push((source, f64::from(mhz & 0xffff) / 1e3));
            }
        }
    }
    // TSC = crystal x EBX / EAX; ECX is the crystal's Hz when enumerated.
    if max_leaf >= 0x15
        && let Some((eax, ebx, ecx, _)) = cpuid(0x15, 0)
        && eax > 0
        && ebx > 0
        && ecx > 0
    {
        out.push((
            "CPUID 0x15 TSC",
            f64::from(ecx) * f64::from(ebx) / f64::from(eax) / 1e9,
        ));
    }
    out
}

/// Where CPUID and sysfs disagree about a level's size or ways, one line each.
pub fn disagreements(sysfs: &[CacheInfo], cpuid: &[CacheInfo]) -> Vec<String> {
    let mut out = Vec::new();
    for c in cpuid {
        match sysfs.iter().find(|s| s.level == c.level && s.holds_data()) {
            Some(s) if s.size_bytes != c.size_bytes || (s.ways.is_some() && s.ways != c.ways) => {
                out.push(format!(
                    "CPUID says {} is {} bytes, {} ways; sysfs says {} bytes, {} ways",
                    c.name(),
                    c.size_bytes,
                    c.ways.unwrap_or(0),
                    s.size_bytes,
                    s.ways.map_or("?".into(), |w| w.to_string())
                ));
            }
            Some(_) => {}
            None => out.push(format!(
                "CPUID lists {} ({} bytes) but sysfs does not",
                c.name(),
                c.size_bytes
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_a_leaf_4_entry() {
        // L1d: data, level 1, 64-byte lines, 1 partition, 8 ways, 64 sets = 32 KiB.
        let eax = 1 | (1 << 5);
        let ebx = 63 | (7 << 22);
        let c = decode_cache(eax, ebx, 63).unwrap();
        assert_eq!((c.level, c.kind), (1, CacheKind::Data));
        assert_eq!(
            (c.size_bytes, c.line_bytes, c.ways),
            (32 << 10, Some(64), Some(8))
        );
        assert_eq!(decode_cache(0, ebx, 63), None);
    }

    #[test]
    fn decodes_family_and_model() {
        // Zen 4 (family 19h, model 11h) and an Ice Lake server (6, 0x6a).
        assert_eq!(family_model(0x00A1_0F11), (0x19, 0x11));
        assert_eq!(family_model(0x0006_06A6), (6, 0x6a));
    }

    #[test]
    fn reports_disagreements_only() {
        let c = |level, size, ways| CacheInfo {
            level,
            kind: CacheKind::Unified,
            size_bytes: size,
            line_bytes: Some(64),
            ways: Some(ways),
        };
        assert!(disagreements(&[c(2, 1 << 20, 8)], &[c(2, 1 << 20, 8)]).is_empty());
        let d = disagreements(&[c(2, 1 << 20, 8)], &[c(2, 2 << 20, 16), c(3, 8 << 20, 16)]);
        assert_eq!(d.len(), 2);
        assert!(d[1].contains("sysfs does not"));
    }

    #[test]
    fn this_cpu_answers() {
        let Some(cpu) = cpu() else {
            eprintln!("skipped: no CPUID on this ISA");
            return;
        };
        assert_eq!(cpu.vendor.len(), 12);
        for c in data_caches() {
            assert!(c.size_bytes > 0 && c.level >= 1);
        }
    }
}

/// A data TLB as CPUID describes it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TlbClaim {
    /// 1 for the first level, 2 for the second.
    pub level: u32,
    /// `data`, `load`, `store` or `unified`.
    pub kind: String,
    /// Page sizes it holds, bytes.
    pub page_bytes: Vec<u64>,
    /// Entries.
    pub entries: u64,
}

/// Decodes one subleaf of Intel's leaf 0x18 (deterministic address
/// translation parameters): EDX[4:0] type (0 none, 1 data, 2 instruction,
/// 3 unified, 4 load, 5 store), EDX[7:5] level, EBX[3:0] the 4K/2M/4M/1G
/// page sizes held, EBX[31:16] ways, ECX sets. Instruction TLBs are left out.
pub fn decode_tlb(ebx: u32, ecx: u32, edx: u32) -> Option<TlbClaim> {
    let kind = match edx & 0x1f {
        1 => "data",
        3 => "unified",
        4 => "load",
        5 => "store",
        _ => return None,
    };
    let sizes = [4u64 << 10, 2 << 20, 4 << 20, 1 << 30];
    let page_bytes = sizes
        .iter()
        .enumerate()
        .filter(|(i, _)| ebx & (1 << i) != 0)
        .map(|(_, &s)| s)
        .collect();
    Some(TlbClaim {
        level: (edx >> 5) & 7,
        kind: kind.into(),
        page_bytes,
        entries: u64::from(ebx >> 16) * u64::from(ecx),
    })
}

/// The data TLBs CPUID lists: Intel's leaf 0x18, AMD's leaves 0x8000_0005
/// (L1) and 0x8000_0006 (L2); empty off x86 or where the hypervisor hides them.
pub fn tlbs() -> Vec<TlbClaim> {
    let Some(cpu) = cpu() else {
        return Vec::new();
    };
    let max_leaf = cpuid(0, 0).map_or(0, |r| r.0);
    match cpu.vendor.as_str() {
        "GenuineIntel" if max_leaf >= 0x18 => {
            let last = cpuid(0x18, 0).map_or(0, |r| r.0).min(31);
            (0..=last)
                .filter_map(|sub| {
                    let (_, ebx, ecx, edx) = cpuid(0x18, sub)?;
                    decode_tlb(ebx, ecx, edx)
                })
                .collect()
        }
        "AuthenticAMD" | "HygonGenuine" => {
            let max_ext = cpuid(0x8000_0000, 0).map_or(0, |r| r.0);
            let mut out = Vec::new();
            if max_ext >= 0x8000_0006 {
                let (l1_big, l1_4k, ..) = cpuid(0x8000_0005, 0).unwrap_or_default();
                let (l2_big, l2_4k, ..) = cpuid(0x8000_0006, 0).unwrap_or_default();
                let claim = |level, page: u64, entries: u64| TlbClaim {
                    level,
                    kind: "data".into(),
                    page_bytes: vec![page],
                    entries,
                };
                // L1: [23:16] data entries; L2: [27:16] data entries.
                out.push(claim(1, 4 << 10, u64::from((l1_4k >> 16) & 0xff)));
                out.push(claim(1, 2 << 20, u64::from((l1_big >> 16) & 0xff)));
                out.push(claim(2, 4 << 10, u64::from((l2_4k >> 16) & 0xfff)));
                out.push(claim(2, 2 << 20, u64::from((l2_big >> 16) & 0xfff)));
                out.retain(|c| c.entries > 0);
            }
            out
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tlb_tests {
    use super::*;

    #[test]
    fn leaf_0x18_subleaves_decode() {
        // A load DTLB for 4K pages, level 1, 6 ways x 16 sets = 96 entries.
        let t = decode_tlb(1 | (6 << 16), 16, 4 | (1 << 5)).unwrap();
        assert_eq!((t.level, t.kind.as_str(), t.entries), (1, "load", 96));
        assert_eq!(t.page_bytes, [4096]);
        // A unified STLB for 4K and 2M pages, 8 ways x 256 sets.
        let t = decode_tlb(3 | (8 << 16), 256, 3 | (2 << 5)).unwrap();
        assert_eq!((t.level, t.entries), (2, 2048));
        assert_eq!(t.page_bytes, [4096, 2 << 20]);
        // Instruction TLBs and empty subleaves are left out.
        assert!(decode_tlb(1 | (8 << 16), 16, 2 | (1 << 5)).is_none());
        assert!(decode_tlb(0, 0, 0).is_none());
        let _ = tlbs();
    }
}
