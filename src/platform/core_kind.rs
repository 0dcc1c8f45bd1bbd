//! Which kind of core a CPU is, on parts with more than one: Intel's hybrid
//! P and E cores, Arm's big and little clusters, Apple's P and E clusters
//! under Linux. Each kind has its own caches and latencies, so a sweep
//! measured on one kind does not stand for another (remembered sweeps are
//! matched by it, [`crate::experiments::plateaus`]). Parts whose core kinds
//! differ only in their caches (AMD's X3D, with one CCD's L3 three times
//! the other's) are told by the caches sysfs lists for the CPU instead.

/// The kind of `cpu`'s core, from what the kernel exposes for it: the PMU
/// of an Intel hybrid part it belongs to (`cpu_core` or `cpu_atom`, from
/// `/sys/devices/<pmu>/cpus`), its Arm MIDR (`regs/identification/midr_el1`,
/// or /proc/cpuinfo's `CPU implementer` and `CPU part`), and its
/// scheduler capacity (`cpu_capacity`, set per cluster on asymmetric
/// parts). `None` where none of these is there: one kind of core as far as
/// the kernel says.
pub fn core_kind(cpu: usize) -> Option<String> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    kind_from(&|path| read(path), &cpuinfo, cpu)
}

fn read(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// [`core_kind`] from a reader of sysfs files and the text of /proc/cpuinfo.
fn kind_from(read: &dyn Fn(&str) -> Option<String>, cpuinfo: &str, cpu: usize) -> Option<String> {
    let mut parts = Vec::new();
    for pmu in ["cpu_core", "cpu_atom"] {
        if read(&format!("/sys/devices/{pmu}/cpus"))
            .is_some_and(|list| super::system::parse_cpu_list(&list).contains(&cpu))
        {
            parts.push(pmu.to_string());
        }
    }
    let base = format!("/sys/devices/system/cpu/cpu{cpu}");
    match read(&format!("{base}/regs/identification/midr_el1")) {
        Some(midr) => parts.push(format!("midr {midr}")),
        None => parts.extend(arm_part(cpuinfo, cpu)),
    }
    if let Some(capacity) = read(&format!("{base}/cpu_capacity")) {
        parts.push(format!("capacity {capacity}"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// `cpu`'s `CPU implementer` and `CPU part` in /proc/cpuinfo (Arm lists
/// them per processor).
fn arm_part(cpuinfo: &str, cpu: usize) -> Option<String> {
    let block = cpuinfo
        .split("\n\n")
        .find(|b| field(b, "processor").and_then(|v| v.parse::<usize>().ok()) == Some(cpu))?;
    let part = field(block, "CPU part")?;
    let implementer = field(block, "CPU implementer").unwrap_or("?");
    Some(format!("part {implementer}:{part}"))
}

fn field<'a>(block: &'a str, key: &str) -> Option<&'a str> {
    block.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn reader(files: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = files
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |path| map.get(path).cloned()
    }

    #[test]
    fn hybrid_intel_cores_are_told_by_their_pmu() {
        let files = reader(&[
            ("/sys/devices/cpu_core/cpus", "0-15"),
            ("/sys/devices/cpu_atom/cpus", "16-23"),
        ]);
        assert_eq!(kind_from(&files, "", 3).as_deref(), Some("cpu_core"));
        assert_eq!(kind_from(&files, "", 20).as_deref(), Some("cpu_atom"));
    }

    #[test]
    fn arm_clusters_are_told_by_part_and_capacity() {
        let cpuinfo = "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd05\n\n\
                       processor\t: 4\nCPU implementer\t: 0x41\nCPU part\t: 0xd0b\n";
        let files = reader(&[
            ("/sys/devices/system/cpu/cpu0/cpu_capacity", "381"),
            ("/sys/devices/system/cpu/cpu4/cpu_capacity", "1024"),
        ]);
        let little = kind_from(&files, cpuinfo, 0).unwrap();
        let big = kind_from(&files, cpuinfo, 4).unwrap();
        assert_eq!(little, "part 0x41:0xd05, capacity 381");
        assert_eq!(big, "part 0x41:0xd0b, capacity 1024");
        // The MIDR, where sysfs has it, is the finer name.
        let files = reader(&[(
            "/sys/devices/system/cpu/cpu4/regs/identification/midr_el1",
            "0x00000000410fd0b0",
        )]);
        assert_eq!(
            kind_from(&files, cpuinfo, 4).as_deref(),
            Some("midr 0x00000000410fd0b0")
        );
    }

    #[test]
    fn one_kind_of_core_has_no_name() {
        let cpuinfo = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(kind_from(&reader(&[]), cpuinfo, 0), None);
    }
}
