//! An anonymous mapping filled before timing, with its page backing verified.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

/// The page size a user asks for with `--pages`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum PageRequest {
    /// Base pages only (THP disabled for the buffer with MADV_NOHUGEPAGE).
    #[cfg_attr(feature = "cli", value(name = "4k"))]
    #[serde(rename = "4k")]
    Base,
    /// Transparent huge pages (MADV_HUGEPAGE): works when THP is `always` or `madvise`.
    #[cfg_attr(feature = "cli", value(name = "thp"))]
    #[serde(rename = "thp")]
    Thp,
    /// hugetlbfs 2 MiB pages from the reserved pool (`sysctl vm.nr_hugepages=N`).
    #[cfg_attr(feature = "cli", value(name = "2m"))]
    #[serde(rename = "2m")]
    Huge2M,
    /// hugetlbfs 1 GiB pages from the reserved pool.
    #[cfg_attr(feature = "cli", value(name = "1g"))]
    #[serde(rename = "1g")]
    Huge1G,
}

impl PageRequest {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PageRequest::Base => "4k",
            PageRequest::Thp => "thp",
            PageRequest::Huge2M => "2m",
            PageRequest::Huge1G => "1g",
        }
    }
}

/// The page backing the kernel actually gave, read back from /proc/self/smaps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageBacking {
    /// What was asked for (`--pages`).
    pub requested: String,
    /// What was obtained: `4k`, `thp`, `2m`, `1g` (or the kernel page size in KiB).
    pub obtained: String,
    /// Fraction of the buffer's resident memory in huge pages (THP or hugetlb), 0 to 1.
    pub huge_fraction: f64,
    /// Kernel page size of the mapping in bytes.
    pub kernel_page_bytes: u64,
}

const HUGE_2M: usize = 2 << 20;
const HUGE_1G: usize = 1 << 30;
// MAP_HUGE_SHIFT is 26: the log2 of the page size goes in bits 26..31 of the flags.
const MAP_HUGE_2MB: i32 = 21 << 26;
const MAP_HUGE_1GB: i32 = 30 << 26;

/// Bytes [`Buffer::fill_unless`] faults in at a time.
pub const FILL_CHUNK: usize = 64 << 20;

/// Threads that fault a buffer in at most, the caller's among them.
pub const FILL_THREADS: usize = 8;

/// Faults `n` bytes at `p` in for writing: one `MADV_POPULATE_WRITE`
/// where the kernel has it (Linux 5.14), else a word written every 4 KiB.
///
/// # Safety
/// `p..p + n` must lie inside a live writable mapping nobody else reads
/// or writes meanwhile.
unsafe fn fault_in(p: *mut u8, n: usize) {
    // SAFETY: the caller's range; the advice only faults its pages in.
    if unsafe { libc::madvise(p.cast(), n, libc::MADV_POPULATE_WRITE) } == 0 {
        return;
    }
    for k in (0..n / 8).step_by(512) {
        // SAFETY: k * 8 < n: inside the caller's range, 8-aligned (the
        // range starts on a page).
        unsafe { p.cast::<u64>().add(k).write_volatile(0xA5A5_5A5A_A5A5_5A5A) };
    }
}

/// The other CPUs of the calling thread's NUMA node, which may fault a
/// buffer in (or link a chain) beside it (none when the node is unknown).
pub fn helper_cpus() -> Vec<usize> {
    let Some(here) = super::current_cpu() else {
        return Vec::new();
    };
    super::system::numa_nodes()
        .into_iter()
        .find(|n| n.cpus.contains(&here))
        .map(|n| n.cpus.into_iter().filter(|&c| c != here).collect())
        .unwrap_or_default()
}

/// A page-aligned anonymous mapping, unmapped on drop.
pub struct Buffer {
    map: *mut u8,
    map_len: usize,
    /// Start of the usable region (aligned for huge pages inside `map`).
    start: *mut u8,
    len: usize,
    /// Bytes from `start` the mapping holds: `len` may grow to this
    /// ([`Buffer::resize_unless`]).
    capacity: usize,
    /// Bytes from `start` faulted in so far.
    filled: usize,
    /// Notices about what was asked versus obtained (hugetlb fallback...).
    pub notices: Vec<String>,
    requested: PageRequest,
}

impl Buffer {
    /// Maps `len` bytes with the requested page size, falling back from an
    /// empty hugetlb pool to THP with a notice. The memory is not yet touched.
    pub fn map(len: usize, pages: PageRequest) -> io::Result<Buffer> {
        Buffer::map_with_room(len, len, pages)
    }

    /// [`Buffer::map`] with address space for `capacity` bytes, so the
    /// buffer can grow to that without moving or faulting its first `len`
    /// bytes again (a sweep's sizes climb: each grown buffer faults only
    /// what it adds, where a new one per size faults 4x the largest at a
    /// ratio of 1.3). The room is reserved, not committed
    /// (`MAP_NORESERVE`). hugetlb buffers get no room: their pages are
    /// reserved when mapped.
    pub fn map_with_room(len: usize, capacity: usize, pages: PageRequest) -> io::Result<Buffer> {
        let mut notices = Vec::new();
        if let PageRequest::Huge2M | PageRequest::Huge1G = pages {
            let (page, flag) = if pages == PageRequest::Huge2M {
                (HUGE_2M, MAP_HUGE_2MB)
            } else {
                (HUGE_1G, MAP_HUGE_1GB)
            };
            let map_len = len.div_ceil(page) * page;
            match mmap(map_len, libc::MAP_HUGETLB | flag) {
                Ok(map) => {
                    return Ok(Buffer {
                        map,
                        map_len,
                        start: map,
                        len,
                        capacity: len,
                        filled: 0,
                        notices,
                        requested: pages,
                    });
                }
                Err(e) => notices.push(format!(
                    "--pages {}: no hugetlb pages ({e}); reserve some with `sysctl vm.nr_hugepages=N` (2M) or the kernel's hugepagesz=1G option; using transparent huge pages instead",
                    pages.name()
                )),
            }
        }
        // Over-allocate so the usable region starts on a 2 MiB boundary and whole
        // huge pages cover it: THP can then back even an L1-sized buffer, whose
        // TLB misses would otherwise add to the latency of L2-sized ones.
        let capacity = capacity.max(len);
        let map_len = capacity.div_ceil(HUGE_2M) * HUGE_2M + HUGE_2M;
        let room = if capacity > len {
            libc::MAP_NORESERVE
        } else {
            0
        };
        let map = mmap(map_len, room)?;
        let start = ((map as usize).div_ceil(HUGE_2M) * HUGE_2M) as *mut u8;
        let advice = if pages == PageRequest::Base {
            libc::MADV_NOHUGEPAGE
        } else {
            libc::MADV_HUGEPAGE
        };
        // SAFETY: `map..map+map_len` is our own mapping; madvise only sets a hint.
        // A failure (THP compiled out) leaves 4k pages, which smaps will report.
        unsafe { libc::madvise(map.cast(), map_len, advice) };
        Ok(Buffer {
            map,
            map_len,
            start,
            len,
            capacity,
            filled: 0,
            notices,
            requested: pages,
        })
    }

    /// Start of the usable region.
    pub fn as_ptr(&self) -> *const u64 {
        self.start as *const u64
    }

    /// Usable length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes the buffer can grow to ([`Buffer::map_with_room`]).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Makes the usable region `len` bytes (at most the capacity), faulting
    /// in what was never faulted, as [`Buffer::fill_unless`]; false when
    /// `stopped` abandoned it (the length then unchanged).
    pub fn resize_unless(&mut self, len: usize, stopped: &dyn Fn() -> bool) -> bool {
        assert!(len <= self.capacity, "a buffer grown past its room");
        let before = self.len;
        self.len = len;
        if self.fill_unless(stopped) {
            true
        } else {
            self.len = before;
            false
        }
    }

    /// Whether the buffer has no usable bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The region as mapped memory, for NUMA binding before it is touched.
    pub(crate) fn region(&self) -> (*mut u8, usize) {
        (self.map, self.map_len)
    }

    /// The usable region as 8-byte words.
    pub fn words_mut(&mut self) -> &mut [u64] {
        // SAFETY: `start..start+len` lies inside our live, writable, 8-aligned mapping,
        // and `&mut self` makes this the only view of it.
        unsafe { std::slice::from_raw_parts_mut(self.start as *mut u64, self.len / 8) }
    }

    /// Faults every page in, writable and private (never the shared zero
    /// page, seed 003), before timing: in one call where the kernel has
    /// `MADV_POPULATE_WRITE` (Linux 5.14), else by writing a word per 4 KiB.
    /// Every word the chain uses is written again when it is linked.
    pub fn fill(&mut self) {
        self.fill_unless(&|| false);
    }

    /// [`Buffer::fill`] in chunks of [`FILL_CHUNK`] (one for 1 GiB pages),
    /// looking at `stopped` before each: false when it stopped there, the
    /// rest of the buffer untouched (faulting in a GiB takes a second or
    /// more). Chunks are faulted by up to [`FILL_THREADS`] threads at once,
    /// on CPUs of the calling thread's NUMA node (so first-touch places the
    /// pages where one thread would have): the kernel zeroes every page it
    /// hands out, and one core zeroing a GiB was a third of `run -n 1G`.
    /// Bytes faulted before (a grown buffer's first part) are not again.
    pub fn fill_unless(&mut self, stopped: &dyn Fn() -> bool) -> bool {
        if self.filled >= self.len {
            return true;
        }
        let chunk = if self.requested == PageRequest::Huge1G {
            self.len.max(1)
        } else {
            FILL_CHUNK
        };
        // The range to fault: from the end of what was faulted before.
        let (start, len) = (self.start as usize + self.filled, self.len - self.filled);
        let chunks = len.div_ceil(chunk);
        let next = AtomicUsize::new(0);
        let abandoned = AtomicBool::new(false);
        // One chunk: false when every chunk is taken or the fill was abandoned.
        let fault_next = || {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= chunks || abandoned.load(Ordering::Relaxed) {
                return false;
            }
            let offset = k * chunk;
            // SAFETY: offset..offset+n lies inside our own mapping (for a
            // fresh buffer offset is a multiple of 64 MiB, so of any huge
            // page but 1 GiB, which is one chunk; a grown one is THP, whose
            // pages a fault anywhere in them brings in whole), which lives
            // until this scope's threads end.
            unsafe { fault_in((start + offset) as *mut u8, chunk.min(len - offset)) };
            true
        };
        let helpers = if chunks > 1 {
            helper_cpus()
        } else {
            Vec::new()
        };
        std::thread::scope(|scope| {
            for &cpu in helpers.iter().take(FILL_THREADS.min(chunks) - 1) {
                let fault_next = &fault_next;
                scope.spawn(move || {
                    // Where the pin fails (a cpuset), the helper faults from
                    // the CPU it inherited: slower, never wrong.
                    let _ = super::pin_to_cpu(cpu);
                    while fault_next() {}
                });
            }
            loop {
                if stopped() {
                    abandoned.store(true, Ordering::Relaxed);
                    break;
                }
                if !fault_next() {
                    break;
                }
            }
        });
        let done = !abandoned.load(Ordering::Relaxed);
        if done {
            self.filled = self.len;
        }
        done
    }

    /// Reads the mapping's entry in /proc/self/smaps to say what backs it.
    pub fn backing(&self) -> PageBacking {
        let fields = smaps_fields(self.map as usize).unwrap_or_default();
        let get = |key: &str| {
            fields
                .iter()
                .find(|(k, _)| k == key)
                .map_or(0, |(_, kib)| *kib)
        };
        let page_kib = get("KernelPageSize").max(4);
        let rss = get("Rss").max(1);
        let (obtained, huge_fraction) = match page_kib {
            2048 => ("2m".to_string(), 1.0),
            1_048_576 => ("1g".to_string(), 1.0),
            4 => {
                let thp = get("AnonHugePages") as f64 / rss as f64;
                let name = if thp > 0.0 { "thp" } else { "4k" };
                (name.to_string(), thp.min(1.0))
            }
            other => (format!("{other}k"), 0.0),
        };
        PageBacking {
            requested: self.requested.name().to_string(),
            obtained,
            huge_fraction,
            kernel_page_bytes: page_kib * 1024,
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: we unmap exactly the mapping we created, once.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

fn mmap(len: usize, extra_flags: i32) -> io::Result<*mut u8> {
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing
    // aliases nothing; we check for MAP_FAILED.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | extra_flags,
            -1,
            0,
        )
    };
    if map == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(map.cast())
}

/// The `Key: N kB` fields of the smaps entry whose range contains `address`.
fn smaps_fields(address: usize) -> Option<Vec<(String, u64)>> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut fields = Vec::new();
    let mut inside = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((lo, hi)) = first.split_once('-')
            && let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        {
            if inside {
                break;
            }
            inside = (lo..hi).contains(&address);
            continue;
        }
        if inside
            && let Some((key, rest)) = line.split_once(':')
            && let Some(kib) = rest.split_whitespace().next().and_then(|v| v.parse().ok())
        {
            fields.push((key.to_string(), kib));
        }
    }
    inside.then_some(fields)
}

/// The memory a buffer may take, in bytes: MemAvailable from /proc/meminfo,
/// or less inside a cgroup whose `memory.max` leaves less (its limit less
/// its current use): a buffer that fits the machine but not the container
/// (a Kubernetes pod's 4Gi) would get the process killed.
pub fn mem_available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    let machine = kib * 1024;
    Some(cgroup_headroom().map_or(machine, |c| c.min(machine)))
}

/// The headroom of this process's memory cgroup, when it has a limit:
/// `memory.max - memory.current` (v2), else `memory.limit_in_bytes -
/// memory.usage_in_bytes` (v1, still the memory controller of many hosts).
fn cgroup_headroom() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let root = std::path::Path::new("/sys/fs/cgroup");
    let v2 = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|p| root.join(p.trim_start_matches('/')))
        .and_then(|dir| read_pair(&dir, "memory.max", "memory.current"));
    v2.or_else(|| {
        let path = own.lines().find_map(|l| {
            let mut fields = l.splitn(3, ':');
            let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            controllers
                .split(',')
                .any(|c| c == "memory")
                .then_some(path)
        })?;
        let mount = root.join("memory");
        // Inside a container the mount is often the cgroup itself.
        [mount.join(path.trim_start_matches('/')), mount]
            .iter()
            .find_map(|dir| read_pair(dir, "memory.limit_in_bytes", "memory.usage_in_bytes"))
    })
}

/// The headroom the limit and usage files in `dir` leave.
fn read_pair(dir: &std::path::Path, limit: &str, usage: &str) -> Option<u64> {
    headroom(
        &std::fs::read_to_string(dir.join(limit)).ok()?,
        &std::fs::read_to_string(dir.join(usage)).ok()?,
    )
}

/// The headroom a cgroup's `memory.max` and `memory.current` leave (None: no limit).
fn headroom(max: &str, current: &str) -> Option<u64> {
    let max: u64 = max.trim().parse().ok()?;
    let current: u64 = current.trim().parse().unwrap_or(0);
    Some(max.saturating_sub(current))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filled_base_page_buffer_reports_4k() {
        let mut buf = Buffer::map(1 << 20, PageRequest::Base).unwrap();
        buf.fill();
        let backing = buf.backing();
        assert_eq!(backing.requested, "4k");
        assert_eq!(backing.obtained, "4k");
        assert_eq!(backing.huge_fraction, 0.0);
    }

    #[test]
    fn thp_buffers_are_aligned_and_report_what_they_got() {
        let mut buf = Buffer::map(8 << 20, PageRequest::Thp).unwrap();
        assert_eq!(buf.as_ptr() as usize % HUGE_2M, 0);
        buf.fill();
        let backing = buf.backing();
        // Whether THP is granted depends on the kernel's settings and free memory.
        assert!(
            backing.obtained == "thp" || backing.obtained == "4k",
            "{backing:?}"
        );
    }

    #[test]
    fn a_buffer_with_room_grows_in_place_keeping_what_it_held() {
        let mut buf = Buffer::map_with_room(1 << 20, 16 << 20, PageRequest::Thp).unwrap();
        assert_eq!(buf.capacity(), 16 << 20);
        buf.fill();
        let start = buf.as_ptr();
        let resident_kib = || {
            smaps_fields(start as usize)
                .unwrap_or_default()
                .into_iter()
                .find(|(k, _)| k == "Rss")
                .map_or(0, |(_, kib)| kib)
        };
        // qemu-user takes madvise for a hint and does nothing: what a
        // fill leaves resident is only checked where a fill faults.
        let fills_fault = resident_kib() >= 1 << 10;
        if !fills_fault {
            eprintln!("skipped the resident check: a fill faulted nothing in (an emulator?)");
        }
        buf.words_mut()
            .iter_mut()
            .enumerate()
            .for_each(|(i, w)| *w = i as u64);
        assert!(buf.resize_unless(12 << 20, &|| false));
        // The same place, the first MiB as written, the rest faulted in.
        assert_eq!(buf.as_ptr(), start);
        let words = buf.words_mut();
        assert_eq!(words.len(), (12 << 20) / 8);
        assert!(
            words[..(1 << 20) / 8]
                .iter()
                .enumerate()
                .all(|(i, &w)| w == i as u64)
        );
        assert!(words[(1 << 20) / 8..].iter().all(|&w| w == 0));
        let rss_kib = resident_kib();
        assert!(
            !fills_fault || rss_kib >= 12 << 10,
            "{rss_kib} KiB resident"
        );
        // Shrunk, it faults nothing and keeps its words.
        assert!(buf.resize_unless(2 << 20, &|| false));
        assert_eq!(buf.words_mut()[5], 5);
        // hugetlb buffers get no room.
        let hugetlb = Buffer::map_with_room(2 << 20, 8 << 20, PageRequest::Huge2M).unwrap();
        if hugetlb.notices.is_empty() {
            assert_eq!(hugetlb.capacity(), 2 << 20);
        }
    }

    #[test]
    fn an_empty_hugetlb_pool_falls_back_with_a_notice() {
        let buf = Buffer::map(2 << 20, PageRequest::Huge2M).unwrap();
        let pool_empty = std::fs::read_to_string("/proc/meminfo")
            .unwrap()
            .contains("HugePages_Free:        0");
        if pool_empty {
            assert!(buf.notices[0].contains("nr_hugepages"), "{:?}", buf.notices);
        }
    }

    #[test]
    fn mem_available_is_read() {
        assert!(mem_available_bytes().unwrap() > 0);
    }

    #[test]
    fn a_cgroup_limit_bounds_the_memory_available() {
        assert_eq!(headroom("max\n", "100"), None);
        assert_eq!(headroom("4294967296\n", "1073741824\n"), Some(3 << 30));
        assert_eq!(headroom("100", "200"), Some(0));
        // This host: never more than MemAvailable.
        if let Some(a) = mem_available_bytes() {
            assert!(a > 0);
        }
    }
}
