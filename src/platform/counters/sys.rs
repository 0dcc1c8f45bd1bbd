//! The perf_event_open system call and its attribute struct, declared here so
//! memlat builds on every Linux ISA (the layout is the same on all of them).

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// perf_event_attr up to PERF_ATTR_SIZE_VER5 (112 bytes); the kernel accepts
/// any published size and zero-fills the rest.
#[repr(C)]
#[derive(Default)]
pub(crate) struct PerfEventAttr {
    pub kind: u32,
    pub size: u32,
    pub config: u64,
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    pub flags: u64,
    pub wakeup_events: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved: u16,
}

pub(crate) const FLAG_DISABLED: u64 = 1 << 0;
pub(crate) const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
pub(crate) const FLAG_EXCLUDE_HV: u64 = 1 << 6;

pub(crate) const FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
pub(crate) const FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
pub(crate) const FORMAT_ID: u64 = 1 << 2;
pub(crate) const FORMAT_GROUP: u64 = 1 << 3;

// ioctl numbers: _IO('$', n) and _IOR('$', 7, u64) in the asm-generic encoding
// that x86, arm64 and riscv share.
const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;
const IOC_RESET: libc::c_ulong = 0x2403;
const IOC_ID: libc::c_ulong = 0x8008_2407;
const IOC_FLAG_GROUP: libc::c_ulong = 1;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// Opens one counter for this thread on any CPU, in the group led by `group_fd` (-1: a new group).
pub(crate) fn open(attr: &PerfEventAttr, group_fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: `attr` is a valid perf_event_attr whose `size` field says how much
    // of it the kernel may read; the other arguments are plain integers.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const PerfEventAttr,
            0 as libc::pid_t,
            -1 as libc::c_int,
            group_fd,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel returned a new file descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

fn ioctl(fd: RawFd, request: libc::c_ulong, arg: libc::c_ulong) -> io::Result<()> {
    // SAFETY: perf ioctls with an integer argument read nothing from our memory.
    if unsafe { libc::ioctl(fd, request as _, arg) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Enables, disables or resets every counter of the group led by `leader`.
pub(crate) fn enable_group(leader: RawFd) -> io::Result<()> {
    ioctl(leader, IOC_ENABLE, IOC_FLAG_GROUP)
}

/// See [`enable_group`].
pub(crate) fn disable_group(leader: RawFd) -> io::Result<()> {
    ioctl(leader, IOC_DISABLE, IOC_FLAG_GROUP)
}

/// See [`enable_group`].
pub(crate) fn reset_group(leader: RawFd) -> io::Result<()> {
    ioctl(leader, IOC_RESET, IOC_FLAG_GROUP)
}

/// The kernel's id for a counter, as it appears in group reads.
pub(crate) fn event_id(fd: RawFd) -> io::Result<u64> {
    let mut id = 0u64;
    // SAFETY: PERF_EVENT_IOC_ID writes one u64 to the pointer we pass.
    if unsafe { libc::ioctl(fd, IOC_ID as _, &mut id as *mut u64) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(id)
}

/// Reads the group as u64 words: nr, time_enabled, time_running, then (value, id) pairs.
pub(crate) fn read_words(fd: RawFd, words: &mut [u64]) -> io::Result<usize> {
    // SAFETY: we pass the slice's own pointer and its length in bytes.
    let n = unsafe { libc::read(fd, words.as_mut_ptr().cast(), std::mem::size_of_val(words)) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize / 8)
}

/// The kernel's perf_event_paranoid level, if readable.
pub(crate) fn paranoid_level() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}
