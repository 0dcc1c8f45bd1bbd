//! What the system claims about the core's frequency, shown beside the
//! measured clock. Claims are never reported as measured, and never bound it.
//!
//! Sources, each optional: cpufreq's maximum (`cpuinfo_max_freq`), x86 CPUID
//! leaf 0x16 (base and maximum MHz; often zero in a VM), the TSC rate (x86:
//! CPUID leaf 0x15, else `cpu MHz` in /proc/cpuinfo, which Linux sets to the
//! TSC rate), the `@ 2.50GHz` of a model name, and on RISC-V the device
//! tree's `clock-frequency`. Often the only claim is a base or TSC rate,
//! which a core's boost leaves far behind (a laptop part sold at 1.8 GHz runs
//! at 4.8; a Zen 5 guest told 2.6 GHz runs at 4.3), so a claim is no ceiling:
//! [`super::physics`] says when a clock is suspect.

use serde::{Deserialize, Serialize};

/// One frequency the system claims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrequencyClaim {
    /// Where it was read (`cpufreq cpuinfo_max_freq`, `CPUID 0x16 max`, ...).
    pub source: String,
    /// The frequency, GHz.
    pub ghz: f64,
}

/// Every frequency this system claims for `cpu`, in no particular order.
pub fn claimed_frequencies(cpu: usize) -> Vec<FrequencyClaim> {
    let mut claims = Vec::new();
    let mut add = |source: &str, ghz: Option<f64>| {
        if let Some(ghz) = ghz.filter(|g| g.is_finite() && *g > 0.0) {
            claims.push(FrequencyClaim {
                source: source.to_string(),
                ghz,
            });
        }
    };
    let cpufreq = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq");
    add(
        "cpufreq cpuinfo_max_freq",
        read_number(&format!("{cpufreq}/cpuinfo_max_freq")).map(|khz| khz / 1e6),
    );
    add(
        "cpufreq scaling_max_freq",
        read_number(&format!("{cpufreq}/scaling_max_freq")).map(|khz| khz / 1e6),
    );
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    add(
        "/proc/cpuinfo cpu MHz",
        cpuinfo_mhz(&cpuinfo, cpu).map(|m| m / 1e3),
    );
    add("model name", model_name_ghz(&cpuinfo));
    for (source, ghz) in arch_claims(cpu) {
        add(source, Some(ghz));
    }
    claims
}

fn read_number(path: &str) -> Option<f64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// `cpu MHz` of the `processor : cpu` block of /proc/cpuinfo (x86 only prints it).
pub(crate) fn cpuinfo_mhz(cpuinfo: &str, cpu: usize) -> Option<f64> {
    let block = cpuinfo.split("\n\n").find(|b| {
        b.lines()
            .find_map(|l| l.strip_prefix("processor"))
            .and_then(|rest| {
                rest.trim_start_matches([' ', '\t', ':'])
                    .trim()
                    .parse()
                    .ok()
            })
            == Some(cpu)
    })?;
    block
        .lines()
        .find_map(|l| l.strip_prefix("cpu MHz"))
        .and_then(|rest| {
            rest.trim_start_matches([' ', '\t', ':'])
                .trim()
                .parse()
                .ok()
        })
}

/// The `@ 2.50GHz` at the end of an x86 model name, if any.
pub(crate) fn model_name_ghz(cpuinfo: &str) -> Option<f64> {
    let name = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))?
        .trim_start_matches([' ', '\t', ':']);
    let at = name.rfind('@')?;
    let text = name[at + 1..].trim();
    let number = text.strip_suffix("GHz")?.trim();
    number.parse().ok()
}

/// CPUID's claims (x86) and the device tree's `clock-frequency` (RISC-V and
/// some Arm boards), where they exist.
fn arch_claims(cpu: usize) -> Vec<(&'static str, f64)> {
    let mut out = crate::platform::cpuid::frequency_claims();
    // The device tree stores clock-frequency big-endian, as 4 or 8 bytes.
    let path = format!("/proc/device-tree/cpus/cpu@{cpu}/clock-frequency");
    let hz = std::fs::read(path).ok().and_then(|b| match b.len() {
        4 => Some(u32::from_be_bytes(b[..4].try_into().ok()?) as f64),
        8 => Some(u64::from_be_bytes(b[..8].try_into().ok()?) as f64),
        _ => None,
    });
    out.extend(hz.map(|hz| ("device tree clock-frequency", hz / 1e9)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO: &str = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\ncpu MHz\t\t: 2000.000\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\ncpu MHz\t\t: 3100.250\n";

    #[test]
    fn reads_cpuinfo_per_cpu_and_the_model_name() {
        assert_eq!(cpuinfo_mhz(CPUINFO, 0), Some(2000.0));
        assert_eq!(cpuinfo_mhz(CPUINFO, 1), Some(3100.25));
        assert_eq!(cpuinfo_mhz(CPUINFO, 2), None);
        assert_eq!(model_name_ghz(CPUINFO), Some(2.0));
        assert_eq!(
            model_name_ghz("model name\t: AMD EPYC 9454 48-Core Processor\n"),
            None
        );
    }

    #[test]
    fn claims_are_positive() {
        for c in claimed_frequencies(0) {
            assert!(c.ghz > 0.0 && c.ghz < 100.0, "{c:?}");
        }
    }
}
