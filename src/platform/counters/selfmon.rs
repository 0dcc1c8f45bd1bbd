//! perf's self-monitoring page: a cycles event mmap'd by this thread, so the
//! kernel grants user-space reads of its counter (x86 `rdpmc`, arm64
//! `pmccntr_el0` under `perf_user_access`, RISC-V `rdcycle` under
//! `perf_user_access = 1`). Seed 000: opening the event is what unlocks the
//! counter; the mmap'd page says whether it did (`cap_user_rdpmc`) and which
//! hardware counter holds the event (`index`).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::events::TYPE_HARDWARE;
use super::sys;

/// The first fields of `struct perf_event_mmap_page` (stable kernel ABI).
#[repr(C)]
struct MmapPage {
    version: u32,
    compat_version: u32,
    lock: u32,
    index: u32,
    offset: i64,
    time_enabled: u64,
    time_running: u64,
    capabilities: u64,
    pmc_width: u16,
}

const CAP_USER_RDPMC: u64 = 1 << 2;

/// A cycles event of this thread, mmap'd so user space may read its counter.
pub struct SelfMonitor {
    page: *mut MmapPage,
    page_len: usize,
    _fd: OwnedFd,
}

impl SelfMonitor {
    /// Opens and maps a user-only cycles event; `config1` carries arch flags
    /// (arm64 wants bit 1 set to ask for user access).
    pub fn open_cycles(config1: u64) -> io::Result<SelfMonitor> {
        let attr = sys::PerfEventAttr {
            kind: TYPE_HARDWARE,
            size: std::mem::size_of::<sys::PerfEventAttr>() as u32,
            config: 0,
            config1,
            flags: sys::FLAG_EXCLUDE_KERNEL | sys::FLAG_EXCLUDE_HV,
            ..Default::default()
        };
        let fd = sys::open(&attr, -1)?;
        // SAFETY: sysconf has no preconditions.
        let page_len = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        // SAFETY: mapping one read-only page of a perf fd we own, as perf_event_open(2) documents.
        let page = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page_len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if page == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(SelfMonitor {
            page: page.cast(),
            page_len,
            _fd: fd,
        })
    }

    /// Whether the kernel lets this thread read the counter, and the hardware
    /// counter's index (perf's `index - 1`) when it does.
    pub fn user_counter(&self) -> Option<u32> {
        // SAFETY: the page stays mapped while `self` lives; the kernel updates
        // these fields, so they are read volatile.
        let (caps, index) = unsafe {
            (
                std::ptr::read_volatile(&(*self.page).capabilities),
                std::ptr::read_volatile(&(*self.page).index),
            )
        };
        (caps & CAP_USER_RDPMC != 0 && index != 0).then(|| index - 1)
    }

    /// The counter's width in bits, as the kernel reports it.
    pub fn width(&self) -> u16 {
        // SAFETY: as in `user_counter`.
        unsafe { std::ptr::read_volatile(&(*self.page).pmc_width) }
    }
}

impl Drop for SelfMonitor {
    fn drop(&mut self) {
        // SAFETY: unmapping the page we mapped, once.
        unsafe { libc::munmap(self.page.cast(), self.page_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_pmu_the_kernel_grants_no_user_counter() {
        // On bare metal this opens and may grant a counter; on a PMU-less VM the
        // open fails. Either way nothing crashes and the answer is consistent.
        match SelfMonitor::open_cycles(0) {
            Ok(monitor) => {
                if monitor.user_counter().is_some() {
                    assert!(monitor.width() > 0);
                }
            }
            Err(e) => assert!(e.raw_os_error().is_some()),
        }
    }
}
