//! Pinning the measuring thread to one CPU.

use std::io;

/// The CPU this thread is running on now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and returns -1 on failure.
    let cpu = unsafe { libc::sched_getcpu() };
    (cpu >= 0).then_some(cpu as usize)
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; we pass its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size we pass.
    let ok = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) } == 0;
    if !ok {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Restricts this thread to `cpu`.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the caller checked `cpu` against `allowed_cpus`, so it is below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size we pass; 0 means this thread.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_to_an_allowed_cpu_keeps_us_there() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        let target = *cpus.last().unwrap();
        let handle = std::thread::spawn(move || {
            pin_to_cpu(target).unwrap();
            current_cpu()
        });
        assert_eq!(handle.join().unwrap(), Some(target));
    }
}
