//! Which machine a result came from, recorded in every result so results
//! from many hosts can be merged and compared (`memlat merge`, `compare`).

use serde::{Deserialize, Serialize};

/// The host a result was measured on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Host {
    /// The host name (`uname -n`).
    pub hostname: String,
    /// The processor as /proc/cpuinfo names it (or its microarchitecture where
    /// /proc/cpuinfo has no model name, as on Arm).
    pub cpu_model: String,
    /// The kernel release (`uname -r`).
    pub kernel: String,
    /// A stable id of this machine: a hash of /etc/machine-id (the id itself
    /// is meant to stay private), or of the host name where there is none.
    pub machine_id: String,
}

fn read(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// FNV-1a, 64 bits, of `salt` then `text`: a stable, non-reversible tag.
fn tag(salt: &str, text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in salt.bytes().chain(text.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

impl Host {
    /// This machine.
    pub fn this() -> Host {
        let hostname = read("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into());
        let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| {
                let (key, value) = l.split_once(':')?;
                (key.trim() == "model name").then(|| value.trim().to_string())
            })
            .or_else(|| crate::platform::uarch::this_machine().map(|u| u.core.unwrap_or(u.id)))
            .unwrap_or_else(|| "unknown".into());
        let kernel = read("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into());
        let id = read("/etc/machine-id")
            .or_else(|| read("/var/lib/dbus/machine-id"))
            .unwrap_or_else(|| hostname.clone());
        Host {
            machine_id: tag("memlat machine id:", &id),
            hostname,
            cpu_model,
            kernel,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_host_is_named_and_its_id_is_a_stable_hash() {
        let a = Host::this();
        assert!(!a.hostname.is_empty() && !a.kernel.is_empty() && !a.cpu_model.is_empty());
        assert_eq!(a.machine_id.len(), 16);
        assert_eq!(a, Host::this());
        assert_ne!(tag("x", "a"), tag("x", "b"));
        assert_eq!(tag("memlat", ""), tag("memlat", ""));
    }
}
