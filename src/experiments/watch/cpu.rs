//! What the watch reads of the CPU: its own thread's CPU time (what the
//! duty cycle limits) and the hypervisor's steal from /proc/stat.

/// The calling thread's CPU time, seconds.
pub(super) fn thread_cpu_seconds() -> Option<f64> {
    // SAFETY: clock_gettime fills the timespec it is given; all-zero is valid.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        (libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) == 0).then_some(ts)
    }?;
    Some(ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9)
}

/// A CPU's times from /proc/stat, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct CpuTimes {
    steal: u64,
    total: u64,
}

impl CpuTimes {
    pub(super) fn read(cpu: usize) -> Option<CpuTimes> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        CpuTimes::parse(&text, cpu)
    }

    /// The `cpuN` line: user nice system idle iowait irq softirq steal ...
    fn parse(text: &str, cpu: usize) -> Option<CpuTimes> {
        let name = format!("cpu{cpu}");
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name.as_str()))?;
        let fields: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .take(8)
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        (fields.len() == 8).then(|| CpuTimes {
            steal: fields[7],
            total: fields.iter().sum(),
        })
    }

    /// The share of ticks stolen since `before`; `None` when no tick passed.
    pub(super) fn steal_since(&self, before: &CpuTimes) -> Option<f64> {
        let total = self.total.checked_sub(before.total)?;
        let steal = self.steal.checked_sub(before.steal)?;
        (total > 0).then(|| steal as f64 / total as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_is_read_from_the_cpu_line() {
        let text =
            "cpu  10 0 10 100 0 0 0 5 0 0\ncpu0 5 0 5 50 0 0 0 2 0 0\ncpu1 5 0 5 50 0 0 0 3 0 0\n";
        let a = CpuTimes::parse(text, 1).unwrap();
        assert_eq!(
            a,
            CpuTimes {
                steal: 3,
                total: 63
            }
        );
        let later = "cpu1 5 0 5 80 0 0 0 13 0 0\n";
        let b = CpuTimes::parse(later, 1).unwrap();
        assert_eq!(b.steal_since(&a), Some(10.0 / 40.0));
        assert_eq!(a.steal_since(&a), None);
        assert_eq!(CpuTimes::parse(text, 7), None);
    }
}
