//! Hardware prefetcher control (seed 002): `--prefetchers off` sets the
//! documented disable bits in each CPU's MSRs, read-modify-write, and puts the
//! saved values back on every exit path (drop, error, panic, Ctrl-C).
//!
//! Registers (set bits disable prefetchers):
//! - Intel, Nehalem and later: MSR 0x1A4 (MISC_FEATURE_CONTROL) bits 0-3: L2
//!   streamer, L2 adjacent line, L1 DCU next line, L1 DCU IP-stride (seed 002's
//!   `wrmsr -a 0x1A4 0xf`).
//! - Intel Core 2 (family 6, models 0x0F, 0x16, 0x17, 0x1D): MSR 0x1A0
//!   (IA32_MISC_ENABLE) bits 9, 19, 37, 39, the prefetch bits of seed 002's
//!   `0x1a0` value; memlat does not write the seed's whole value, which also
//!   disables turbo (bit 38) and clears bits the machine may need.
//! - AMD family 19h and later (Zen 3, 4, 5): MSR 0xC000_0108 (prefetch
//!   control) bits 0-3 and 5: L1 stream, L1 stride, L1 region, L2 stream, L2 up/down.
//! - AMD families 10h-18h (and Hygon): MSR 0xC001_1022 (DC_CFG) bits 13 and 15.
//!   Seed 002's whole-register AMD values are specific to its machine and are not written.
//!
//! Where this cannot be done (not x86, an unknown processor, no msr module, not
//! root, a hypervisor that refuses or ignores the write) memlat says why and
//! measures with the prefetchers as they are; the status goes in the output.

pub mod msr;

use std::fs::File;
use std::io;

use serde::Serialize;

use crate::platform::cpuid::{self, Cpu};

/// What `--prefetchers` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum PrefetchMode {
    /// Leave the hardware prefetchers as they are.
    #[default]
    AsIs,
    /// Disable them through MSRs for the run (root, msr module), restoring them after.
    Off,
}

/// One register to change: which, and which bits to set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsrChange {
    /// Register number.
    pub msr: u32,
    /// Bits to set (each disables a prefetcher).
    pub set_bits: u64,
}

/// The documented prefetcher-disable registers of `cpu`, or why there are none.
pub fn plan(cpu: &Cpu) -> Result<Vec<MsrChange>, String> {
    let bit = |n: u32| 1u64 << n;
    match (cpu.vendor.as_str(), cpu.family) {
        ("GenuineIntel", 6) if [0x0f, 0x16, 0x17, 0x1d].contains(&cpu.model) => {
            Ok(vec![MsrChange {
                msr: 0x1A0,
                set_bits: bit(9) | bit(19) | bit(37) | bit(39),
            }])
        }
        ("GenuineIntel", 6) => Ok(vec![MsrChange {
            msr: 0x1A4,
            set_bits: 0xF,
        }]),
        ("AuthenticAMD", f) if f >= 0x19 => Ok(vec![MsrChange {
            msr: 0xC000_0108,
            set_bits: bit(0) | bit(1) | bit(2) | bit(3) | bit(5),
        }]),
        ("AuthenticAMD" | "HygonGenuine", 0x10..=0x18) => Ok(vec![MsrChange {
            msr: 0xC001_1022,
            set_bits: bit(13) | bit(15),
        }]),
        (vendor, family) => Err(format!(
            "no documented prefetcher MSR for this processor ({vendor} family {family:#x} model {:#x})",
            cpu.model
        )),
    }
}

use msr::msr_root;

/// CPUs that have a directory under the MSR root, in order.
fn cpus(root: &str) -> Vec<usize> {
    let mut cpus: Vec<usize> = std::fs::read_dir(root)
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    cpus.sort_unstable();
    cpus
}

fn open(root: &str, cpu: usize) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("{root}/{cpu}/msr"))
}

fn explain_open(root: &str, cpu: usize, e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => format!(
            "{root}/{cpu}/msr does not exist: the msr kernel module is not loaded (as root: modprobe msr) or this kernel has none"
        ),
        io::ErrorKind::PermissionDenied => format!(
            "cannot open {root}/{cpu}/msr: not permitted (run as root; writing MSRs needs CAP_SYS_RAWIO)"
        ),
        _ => format!("cannot open {root}/{cpu}/msr: {e}"),
    }
}

/// Prefetchers' state for a run; restores any MSR it changed when dropped.
pub struct PrefetchGuard {
    /// What was done, for the output: `as is (...)` or `off (...)`.
    pub status: String,
    /// Whether the prefetchers were actually turned off.
    pub disabled: bool,
    saved: Option<msr::Saved>,
}

impl PrefetchGuard {
    /// Leaves prefetchers as they are.
    pub fn as_is(reason: &str) -> PrefetchGuard {
        PrefetchGuard {
            status: format!("as is ({reason})"),
            disabled: false,
            saved: None,
        }
    }

    /// Applies `mode`. When prefetchers cannot be turned off the guard says
    /// why (`status`) and nothing is changed; the one refusal is a state file
    /// left by an interrupted run: its values are the true originals, and
    /// reading the registers now would take the changed ones for them.
    pub fn apply(mode: PrefetchMode) -> Result<PrefetchGuard, String> {
        match mode {
            PrefetchMode::AsIs => Ok(Self::as_is("not asked to change them")),
            PrefetchMode::Off => {
                let state = msr::state_path().map_err(|e| format!("--prefetchers off: {e}"))?;
                if std::fs::symlink_metadata(&state).is_ok() {
                    return Err(format!(
                        "--prefetchers off: {} exists: an interrupted run left registers changed (its file holds their original values); put them back first with `memlat prefetchers --restore` (as root)",
                        state.display()
                    ));
                }
                Ok(match Self::disable(state) {
                    Ok(guard) => guard,
                    Err(why) => {
                        Self::as_is(&format!("--prefetchers off could not be applied: {why}"))
                    }
                })
            }
        }
    }

    fn disable(state: std::path::PathBuf) -> Result<PrefetchGuard, String> {
        let cpu = cpuid::cpu().ok_or("prefetcher MSRs exist only on x86_64")?;
        let changes = plan(&cpu)?;
        let root = msr_root();
        let cpus = cpus(&root);
        if cpus.is_empty() {
            return Err(format!("{root} lists no CPUs"));
        }
        // Read everything first: nothing is written unless every register reads.
        let mut originals = Vec::new();
        for &n in &cpus {
            let file = open(&root, n).map_err(|e| explain_open(&root, n, &e))?;
            for change in &changes {
                let value = msr::read(&file, change.msr).map_err(|e| {
                    format!(
                        "CPU {n} refused to read MSR {:#x} ({e}): a hypervisor that does not pass it through?",
                        change.msr
                    )
                })?;
                originals.push((
                    file.try_clone().map_err(|e| e.to_string())?,
                    n,
                    *change,
                    value,
                ));
            }
        }
        let saved = msr::Saved::new(
            &root,
            state,
            originals
                .iter()
                .map(|(f, n, c, v)| {
                    let value = msr::SavedValue {
                        cpu: *n,
                        msr: c.msr,
                        value: *v,
                    };
                    f.try_clone().map(|f| (value, f))
                })
                .collect::<io::Result<Vec<_>>>()
                .map_err(|e| e.to_string())?,
        )
        .map_err(|e| format!("cannot save the registers' values first ({e})"))?;
        for (file, n, change, value) in &originals {
            let wanted = value | change.set_bits;
            let result =
                msr::write(file, change.msr, wanted).and_then(|_| msr::read(file, change.msr));
            match result {
                Ok(got) if got == wanted => {}
                Ok(got) => {
                    drop(saved);
                    return Err(format!(
                        "CPU {n} ignored the write to MSR {:#x} (wrote {wanted:#x}, read back {got:#x}): a hypervisor that drops it?",
                        change.msr
                    ));
                }
                Err(e) => {
                    drop(saved);
                    return Err(format!(
                        "CPU {n} refused the write to MSR {:#x} ({e}): a VM or a model without it",
                        change.msr
                    ));
                }
            }
        }
        let registers: Vec<String> = changes
            .iter()
            .map(|c| format!("MSR {:#x} |= {:#x}", c.msr, c.set_bits))
            .collect();
        Ok(PrefetchGuard {
            status: format!(
                "off ({} on CPUs {}; restored on exit, or with `memlat prefetchers --restore` from {})",
                registers.join(", "),
                cpus.iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                saved.state_file().display()
            ),
            disabled: true,
            saved: Some(saved),
        })
    }

    /// Puts the saved values back now (drop does it too); whether every write succeeded.
    pub fn restore(&self) -> bool {
        self.saved.as_ref().is_none_or(msr::Saved::restore)
    }
}

/// Whether `--prefetchers off` could work here, checked by reading (never
/// writing) the registers it would change on `cpu`.
pub fn check_access(cpu: usize) -> Result<(), String> {
    let processor = cpuid::cpu().ok_or("prefetcher MSRs exist only on x86_64")?;
    let changes = plan(&processor)?;
    let root = msr_root();
    let file = std::fs::File::open(format!("{root}/{cpu}/msr"))
        .map_err(|e| explain_open(&root, cpu, &e))?;
    for change in &changes {
        msr::read(&file, change.msr).map_err(|e| {
            format!(
                "MSR {:#x} cannot be read on CPU {cpu} ({e}): a hypervisor that does not pass it through?",
                change.msr
            )
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(vendor: &str, family: u32, model: u32) -> Cpu {
        Cpu {
            vendor: vendor.into(),
            family,
            model,
        }
    }

    #[test]
    fn plans_follow_the_documented_registers() {
        assert_eq!(
            plan(&cpu("AuthenticAMD", 0x19, 0x11)).unwrap()[0].msr,
            0xC000_0108
        );
        assert_eq!(
            plan(&cpu("AuthenticAMD", 0x19, 0x11)).unwrap()[0].set_bits,
            0x2F
        );
        assert_eq!(
            plan(&cpu("AuthenticAMD", 0x17, 0x31)).unwrap()[0].msr,
            0xC001_1022
        );
        assert_eq!(
            plan(&cpu("GenuineIntel", 6, 0x6a)).unwrap()[0],
            MsrChange {
                msr: 0x1A4,
                set_bits: 0xF
            }
        );
        let core2 = plan(&cpu("GenuineIntel", 6, 0x17)).unwrap()[0];
        assert_eq!(core2.msr, 0x1A0);
        assert_eq!(core2.set_bits & (1 << 38), 0, "turbo is left alone");
        assert!(
            plan(&cpu("CentaurHauls", 6, 0xf))
                .unwrap_err()
                .contains("no documented")
        );
    }

    #[test]
    fn as_is_changes_nothing() {
        let g = PrefetchGuard::apply(PrefetchMode::AsIs).unwrap();
        assert!(!g.disabled);
        assert!(g.status.starts_with("as is"));
    }

    #[test]
    fn explains_a_missing_module() {
        let e = io::Error::from(io::ErrorKind::NotFound);
        assert!(explain_open("/dev/cpu", 0, &e).contains("modprobe msr"));
        let e = io::Error::from(io::ErrorKind::PermissionDenied);
        assert!(explain_open("/dev/cpu", 0, &e).contains("root"));
    }

    #[test]
    fn saved_values_are_written_back_on_drop_and_the_state_file_goes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("msr");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        msr::write(&file, 0x1A4, 0xF).unwrap();
        let state = dir.path().join("prefetchers.state");
        let value = msr::SavedValue {
            cpu: 0,
            msr: 0x1A4,
            value: 0x3,
        };
        let saved = msr::Saved::new(
            "/nowhere",
            state.clone(),
            vec![(value, file.try_clone().unwrap())],
        )
        .unwrap();
        assert_eq!(saved.len(), 1);
        let recorded = std::fs::read_to_string(&state).unwrap();
        assert_eq!(msr::parse_state(&recorded).unwrap().1, vec![value]);
        assert_eq!(msr::read(&file, 0x1A4).unwrap(), 0xF);
        drop(saved);
        assert_eq!(msr::read(&file, 0x1A4).unwrap(), 0x3);
        assert!(!state.exists(), "a restore removes the state file");
    }
}
