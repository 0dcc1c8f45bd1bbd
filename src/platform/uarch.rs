//! Which core this is: the vendor's model number looked up in a short table
//! of microarchitectures, cross-checked with features a hypervisor cannot
//! fake away (AMX exists only from Sapphire Rapids on). A guest's model
//! number is whatever the hypervisor chose, so when the features and the
//! number disagree, both are reported.

use serde::Serialize;

/// A processor as far as memlat can name it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Uarch {
    /// The marketing or code name the model number stands for (`Sapphire Rapids`).
    pub name: Option<String>,
    /// The core microarchitecture (`Golden Cove`, `Zen 4`, `Neoverse N1`).
    pub core: Option<String>,
    /// What identifies it: `family 6 model 0x8f`, `implementer 0x41 part 0xd0c`.
    pub id: String,
    /// Where the features and the model number disagree, what the features say.
    pub note: Option<String>,
}

/// Intel family 6 models: (models, name, core).
const INTEL: &[(&[u32], &str, &str)] = &[
    (&[0x2a, 0x2d], "Sandy Bridge", "Sandy Bridge"),
    (&[0x3a, 0x3e], "Ivy Bridge", "Ivy Bridge"),
    (&[0x3c, 0x3f, 0x45, 0x46], "Haswell", "Haswell"),
    (&[0x3d, 0x47, 0x4f, 0x56], "Broadwell", "Broadwell"),
    (
        &[0x4e, 0x5e, 0x8e, 0x9e, 0xa5, 0xa6],
        "Skylake / Kaby / Coffee / Comet Lake",
        "Skylake",
    ),
    (
        &[0x55],
        "Skylake-SP / Cascade Lake / Cooper Lake",
        "Skylake",
    ),
    (&[0x7d, 0x7e, 0x6a, 0x6c], "Ice Lake", "Sunny Cove"),
    (&[0x8c, 0x8d], "Tiger Lake", "Willow Cove"),
    (&[0xa7, 0xa8], "Rocket Lake", "Cypress Cove"),
    (
        &[0x97, 0x9a],
        "Alder Lake",
        "Golden Cove (P) + Gracemont (E)",
    ),
    (&[0x8f], "Sapphire Rapids", "Golden Cove"),
    (
        &[0xb7, 0xba, 0xbf],
        "Raptor Lake",
        "Raptor Cove (P) + Gracemont (E)",
    ),
    (&[0xcf], "Emerald Rapids", "Raptor Cove"),
    (
        &[0xaa, 0xac],
        "Meteor Lake",
        "Redwood Cove (P) + Crestmont (E)",
    ),
    (&[0xad, 0xae], "Granite Rapids", "Redwood Cove"),
    (&[0xaf], "Sierra Forest", "Crestmont"),
    (&[0xbd], "Lunar Lake", "Lion Cove (P) + Skymont (E)"),
    (&[0xc5, 0xc6], "Arrow Lake", "Lion Cove (P) + Skymont (E)"),
    (&[0x5c, 0x5f, 0x7a], "Goldmont", "Goldmont"),
    (&[0x86, 0x96, 0x9c], "Tremont", "Tremont"),
    (&[0xbe], "Alder Lake-N", "Gracemont"),
];

/// AMD (family, model range, name, core).
const AMD: &[(u32, u32, u32, &str, &str)] = &[
    (
        0x17,
        0x00,
        0x2f,
        "Naples / Summit Ridge / Raven Ridge",
        "Zen / Zen+",
    ),
    (0x17, 0x30, 0x3f, "Rome", "Zen 2"),
    (0x17, 0x60, 0xaf, "Renoir / Matisse / Van Gogh", "Zen 2"),
    (0x19, 0x00, 0x0f, "Milan", "Zen 3"),
    (0x19, 0x10, 0x1f, "Genoa", "Zen 4"),
    (0x19, 0x20, 0x5f, "Vermeer / Rembrandt / Cezanne", "Zen 3"),
    (0x19, 0x60, 0x7f, "Raphael / Phoenix", "Zen 4"),
    (0x19, 0xa0, 0xaf, "Bergamo / Siena", "Zen 4c"),
    (0x1a, 0x00, 0x1f, "Turin", "Zen 5"),
    (0x1a, 0x20, 0x7f, "Strix / Granite Ridge", "Zen 5"),
];

/// Arm (implementer, part, core).
const ARM: &[(u32, u32, &str)] = &[
    (0x41, 0xd03, "Cortex-A53"),
    (0x41, 0xd04, "Cortex-A35"),
    (0x41, 0xd05, "Cortex-A55"),
    (0x41, 0xd07, "Cortex-A57"),
    (0x41, 0xd08, "Cortex-A72"),
    (0x41, 0xd09, "Cortex-A73"),
    (0x41, 0xd0a, "Cortex-A75"),
    (0x41, 0xd0b, "Cortex-A76"),
    (0x41, 0xd0c, "Neoverse N1"),
    (0x41, 0xd0d, "Cortex-A77"),
    (0x41, 0xd40, "Neoverse V1"),
    (0x41, 0xd41, "Cortex-A78"),
    (0x41, 0xd44, "Cortex-X1"),
    (0x41, 0xd46, "Cortex-A510"),
    (0x41, 0xd47, "Cortex-A710"),
    (0x41, 0xd48, "Cortex-X2"),
    (0x41, 0xd49, "Neoverse N2"),
    (0x41, 0xd4f, "Neoverse V2"),
    (0x41, 0xd80, "Cortex-A520"),
    (0x41, 0xd81, "Cortex-A720"),
    (0x41, 0xd84, "Neoverse V3"),
    (0x41, 0xd8e, "Neoverse N3"),
    (0x46, 0x001, "A64FX"),
    (0x48, 0xd01, "TaiShan v110"),
    (0xc0, 0xac3, "AmpereOne"),
];

/// Names an x86 processor from its vendor, display family and model, and
/// whether it has AMX (CPUID 7.0 EDX bit 24).
pub fn x86(vendor: &str, family: u32, model: u32, amx: bool) -> Uarch {
    let id = format!("{vendor} family {family:#x} model {model:#x}");
    let found = match vendor {
        "GenuineIntel" if family == 6 => INTEL
            .iter()
            .find(|(models, ..)| models.contains(&model))
            .map(|(_, name, core)| (*name, *core)),
        "AuthenticAMD" | "HygonGenuine" => AMD
            .iter()
            .find(|(f, lo, hi, ..)| *f == family && (*lo..=*hi).contains(&model))
            .map(|(.., name, core)| (*name, *core)),
        _ => None,
    };
    let amx_model = found.is_some_and(|(name, _)| {
        ["Sapphire Rapids", "Emerald Rapids", "Granite Rapids"].contains(&name)
    });
    let note = (vendor == "GenuineIntel" && amx && !amx_model).then(|| {
        format!(
            "it has AMX, which only Sapphire Rapids and later Xeons have: a Golden Cove-class core or newer; the model number{} is the hypervisor's choice, not the processor's",
            found.map_or(String::new(), |(name, _)| format!(" ({name})"))
        )
    });
    Uarch {
        name: found.map(|(name, _)| name.to_string()),
        core: found.map(|(_, core)| core.to_string()),
        id,
        note,
    }
}

/// Names an Arm core from /proc/cpuinfo's `CPU implementer` and `CPU part`.
pub fn arm(cpuinfo: &str) -> Option<Uarch> {
    let field = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key)
                .then(|| u32::from_str_radix(v.trim().trim_start_matches("0x"), 16))?
                .ok()
        })
    };
    let (implementer, part) = (field("CPU implementer")?, field("CPU part")?);
    let core = ARM
        .iter()
        .find(|(i, p, _)| *i == implementer && *p == part)
        .map(|(.., core)| core.to_string());
    Some(Uarch {
        name: None,
        core,
        id: format!("implementer {implementer:#x} part {part:#x}"),
        note: None,
    })
}

/// Names a RISC-V core from /proc/cpuinfo's `uarch` (or its machine ids).
pub fn riscv(cpuinfo: &str) -> Option<Uarch> {
    let field = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let uarch = field("uarch");
    let ids = ["mvendorid", "marchid", "mimpid"]
        .iter()
        .filter_map(|k| field(k).map(|v| format!("{k} {v}")))
        .collect::<Vec<_>>()
        .join(", ");
    (uarch.is_some() || !ids.is_empty()).then_some(Uarch {
        name: None,
        core: uarch,
        id: ids,
        note: None,
    })
}

/// This machine's processor, as well as it can be named.
pub fn this_machine() -> Option<Uarch> {
    if let Some(cpu) = crate::platform::cpuid::cpu() {
        let amx = crate::platform::cpuid::has_amx();
        return Some(x86(&cpu.vendor, cpu.family, cpu.model, amx));
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    arm(&cpuinfo).or_else(|| riscv(&cpuinfo))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_intel_and_amd_cores() {
        let spr = x86("GenuineIntel", 6, 0x8f, true);
        assert_eq!(spr.core.as_deref(), Some("Golden Cove"));
        assert!(spr.note.is_none());
        let zen4 = x86("AuthenticAMD", 0x19, 0x11, false);
        assert_eq!(zen4.core.as_deref(), Some("Zen 4"));
        assert_eq!(zen4.name.as_deref(), Some("Genoa"));
        assert!(x86("CentaurHauls", 6, 0xf, false).core.is_none());
    }

    #[test]
    fn amx_under_an_older_model_number_is_called_out() {
        // A KVM guest that says "Rocket Lake" (0xa7) but has AMX.
        let guest = x86("GenuineIntel", 6, 0xa7, true);
        assert_eq!(guest.name.as_deref(), Some("Rocket Lake"));
        assert!(guest.note.unwrap().contains("Golden Cove-class"));
    }

    #[test]
    fn names_arm_and_riscv_cores_from_cpuinfo() {
        let n1 = arm("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n").unwrap();
        assert_eq!(n1.core.as_deref(), Some("Neoverse N1"));
        assert!(arm("processor : 0\n").is_none());
        let u74 = riscv("uarch\t\t: sifive,u74-mc\nmvendorid\t: 0x489\n").unwrap();
        assert_eq!(u74.core.as_deref(), Some("sifive,u74-mc"));
        assert!(u74.id.contains("mvendorid 0x489"));
    }
}
