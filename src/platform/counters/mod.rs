//! Hardware and software counters: one perf_event group, read at once.
//!
//! Seed 001 done right: every event is opened in one group so they count over
//! exactly the same instructions; the group is read with
//! `PERF_FORMAT_GROUP | ID | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING`, values
//! are matched to events by id (never by position) and scaled by
//! enabled/running when the kernel had to multiplex. An event that cannot be
//! opened is a warning with its reason, and the run goes on without it.

mod events;
mod selfmon;
mod sys;

pub use events::{EventSpec, LISTED, UnknownEvent, parse_event, parse_event_list};
pub use selfmon::SelfMonitor;

use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use serde::Serialize;

/// Why an event cannot be counted on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unavailable {
    /// No hardware PMU is exposed (typical of a VM without PMU passthrough).
    NoPmu,
    /// The PMU exists but does not know this event.
    NotSupported,
    /// perf_event_paranoid (or missing CAP_PERFMON) forbids it.
    NotPermitted {
        /// The perf_event_paranoid level read from /proc.
        paranoid: Option<i32>,
    },
    /// The kernel (or an emulator such as qemu-user) has no perf_event_open at all.
    NoPerfSyscall,
    /// The event opened alone but not beside the others (too many hardware counters).
    DoesNotFitGroup,
    /// Any other error from perf_event_open.
    Other(String),
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::NoPmu => write!(
                f,
                "no hardware PMU is exposed to this system (a VM without PMU passthrough?); software events such as task-clock still work"
            ),
            Unavailable::NotSupported => write!(f, "this CPU's PMU does not support it"),
            Unavailable::NoPerfSyscall => write!(
                f,
                "perf_event_open is not implemented here (a kernel without CONFIG_PERF_EVENTS, or an emulator such as qemu-user)"
            ),
            Unavailable::NotPermitted { paranoid } => write!(
                f,
                "not permitted (perf_event_paranoid is {}); run as root or `sysctl kernel.perf_event_paranoid=1`",
                paranoid.map_or("unknown".to_string(), |p| p.to_string())
            ),
            Unavailable::DoesNotFitGroup => write!(
                f,
                "does not fit in one counter group with the other events; ask for fewer hardware events with -e"
            ),
            Unavailable::Other(message) => write!(f, "{message}"),
        }
    }
}

/// An event that will be missing from the results, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventWarning {
    /// The event's name.
    pub event: String,
    /// Why it is missing.
    pub reason: Unavailable,
}

impl fmt::Display for EventWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event '{}' is not counted: {}", self.event, self.reason)
    }
}

/// Whether the kernel registered a hardware (core) PMU.
pub fn has_hardware_pmu() -> bool {
    // Core PMUs register under these names; a PMU-less VM has only software ones.
    let Ok(entries) = std::fs::read_dir("/sys/bus/event_source/devices") else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name().to_string_lossy().to_string();
        name == "cpu"
            || name.starts_with("cpu_")
            || name.starts_with("armv")
            || name.starts_with("riscv")
    })
}

fn classify(spec: &EventSpec, error: &io::Error, as_sibling: bool) -> Unavailable {
    match error.raw_os_error() {
        Some(libc::ENOSYS) => Unavailable::NoPerfSyscall,
        Some(libc::EACCES) | Some(libc::EPERM) => Unavailable::NotPermitted {
            paranoid: sys::paranoid_level(),
        },
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV)
            if !spec.is_software() && !has_hardware_pmu() =>
        {
            Unavailable::NoPmu
        }
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => {
            Unavailable::NotSupported
        }
        Some(libc::EINVAL) if as_sibling => Unavailable::DoesNotFitGroup,
        _ => Unavailable::Other(error.to_string()),
    }
}

fn attr_for(spec: &EventSpec, leader: bool) -> sys::PerfEventAttr {
    sys::PerfEventAttr {
        kind: spec.kind,
        size: std::mem::size_of::<sys::PerfEventAttr>() as u32,
        config: spec.config,
        read_format: sys::FORMAT_GROUP
            | sys::FORMAT_ID
            | sys::FORMAT_TOTAL_TIME_ENABLED
            | sys::FORMAT_TOTAL_TIME_RUNNING,
        // Only the leader starts disabled: enabling it starts the whole group.
        // User space only, so paranoid level 2 allows it and the syscalls that
        // start and stop the group are not counted.
        flags: if leader { sys::FLAG_DISABLED } else { 0 }
            | sys::FLAG_EXCLUDE_KERNEL
            | sys::FLAG_EXCLUDE_HV,
        ..Default::default()
    }
}

/// The kernel's perf_event_paranoid level, if readable.
pub fn paranoid_level() -> Option<i32> {
    sys::paranoid_level()
}

/// Whether perf_event_open exists here at all (qemu-user lacks it).
pub fn perf_syscall_available() -> bool {
    probe(&parse_event("task-clock").expect("task-clock is a known event"))
        != Err(Unavailable::NoPerfSyscall)
}

/// Whether one event can be opened on this machine, alone.
pub fn probe(spec: &EventSpec) -> Result<(), Unavailable> {
    sys::open(&attr_for(spec, true), -1)
        .map(drop)
        .map_err(|e| classify(spec, &e, false))
}

struct Member {
    spec: EventSpec,
    id: u64,
    // Kept open for as long as the group lives.
    _fd: Option<OwnedFd>,
}

/// Counters for this thread, opened as one group.
pub struct CounterGroup {
    leader: OwnedFd,
    members: Vec<Member>,
}

/// One read of the group.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupReading {
    /// Nanoseconds the group was enabled.
    pub time_enabled: u64,
    /// Nanoseconds it was actually on the PMU (less than enabled when multiplexed).
    pub time_running: u64,
    /// Raw counts, in the group's event order.
    pub values: Vec<u64>,
}

impl GroupReading {
    /// Multiplexing scale: enabled / running (1.0 when never multiplexed).
    pub fn scale(&self) -> f64 {
        if self.time_running == 0 {
            return 0.0;
        }
        self.time_enabled as f64 / self.time_running as f64
    }

    /// Counts scaled for multiplexing; `None` when the group never ran.
    pub fn scaled(&self) -> Vec<Option<f64>> {
        let scale = self.scale();
        self.values
            .iter()
            .map(|&v| (self.time_running > 0).then_some(v as f64 * scale))
            .collect()
    }
}

impl CounterGroup {
    /// Opens what it can of `specs` as one group. Events that fail are returned
    /// as warnings; `None` when none could be opened.
    pub fn open(specs: &[EventSpec]) -> (Option<CounterGroup>, Vec<EventWarning>) {
        let mut warnings = Vec::new();
        let mut group: Option<CounterGroup> = None;
        for spec in specs {
            let leader_fd = group.as_ref().map_or(-1, |g| g.leader.as_raw_fd());
            let opened = sys::open(&attr_for(spec, group.is_none()), leader_fd)
                .and_then(|fd| sys::event_id(fd.as_raw_fd()).map(|id| (fd, id)));
            match opened {
                Err(error) => {
                    let as_sibling = group.is_some() && probe(spec).is_ok();
                    warnings.push(EventWarning {
                        event: spec.name.clone(),
                        reason: classify(spec, &error, as_sibling),
                    });
                }
                Ok((fd, id)) => match &mut group {
                    None => {
                        group = Some(CounterGroup {
                            leader: fd,
                            members: vec![Member {
                                spec: spec.clone(),
                                id,
                                _fd: None,
                            }],
                        })
                    }
                    Some(g) => g.members.push(Member {
                        spec: spec.clone(),
                        id,
                        _fd: Some(fd),
                    }),
                },
            }
        }
        (group, warnings)
    }

    /// The events in the group, in order.
    pub fn events(&self) -> impl Iterator<Item = &EventSpec> {
        self.members.iter().map(|m| &m.spec)
    }

    /// Index of an event in the group's order.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.members.iter().position(|m| m.spec.name == name)
    }

    /// Zeroes and starts every counter.
    pub fn start(&self) -> io::Result<()> {
        sys::reset_group(self.leader.as_raw_fd())?;
        sys::enable_group(self.leader.as_raw_fd())
    }

    /// Stops every counter and reads them all at once.
    pub fn stop(&self) -> io::Result<GroupReading> {
        sys::disable_group(self.leader.as_raw_fd())?;
        self.read()
    }

    /// Reads the group without stopping it.
    pub fn read(&self) -> io::Result<GroupReading> {
        let mut words = vec![0u64; 3 + 2 * self.members.len()];
        let got = sys::read_words(self.leader.as_raw_fd(), &mut words)?;
        let nr = words[0] as usize;
        if got < 3 + 2 * nr || nr != self.members.len() {
            return Err(io::Error::other(format!(
                "perf group read returned {got} words for {nr} events, expected {}",
                self.members.len()
            )));
        }
        let pairs: Vec<(u64, u64)> = (0..nr)
            .map(|i| (words[3 + 2 * i], words[4 + 2 * i]))
            .collect();
        let values = self
            .members
            .iter()
            .map(|m| {
                pairs
                    .iter()
                    .find(|(_, id)| *id == m.id)
                    .map(|(value, _)| *value)
                    .ok_or_else(|| io::Error::other(format!("no value for event {}", m.spec.name)))
            })
            .collect::<io::Result<Vec<u64>>>()?;
        Ok(GroupReading {
            time_enabled: words[1],
            time_running: words[2],
            values,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(list: &str) -> Vec<EventSpec> {
        parse_event_list(list).unwrap()
    }

    /// Touches `pages` fresh 4 KiB pages of a new mapping: each first touch is
    /// a page fault (a heap allocation could reuse pages another test faulted in).
    fn fault_pages(pages: usize) -> crate::platform::Buffer {
        let mut buffer =
            crate::platform::Buffer::map(pages * 4096, crate::platform::PageRequest::Base).unwrap();
        let words = buffer.words_mut();
        for i in (0..words.len()).step_by(512) {
            words[i] = 1;
        }
        buffer
    }

    /// Where software events cannot be opened at all (qemu-user has no
    /// perf_event_open; perf_event_paranoid 3 or 4, or a container's seccomp
    /// profile, refuse it) these tests have nothing to check: skip, saying why.
    fn no_perf_here() -> bool {
        match probe(&parse_event("task-clock").unwrap()) {
            Ok(()) => false,
            Err(why @ (Unavailable::NoPerfSyscall | Unavailable::NotPermitted { .. })) => {
                eprintln!("skipped: software perf events cannot be opened here: {why}");
                true
            }
            Err(other) => {
                panic!("task-clock should open wherever perf_event_open is allowed: {other}")
            }
        }
    }

    #[test]
    fn software_group_counts_page_faults_and_time() {
        if no_perf_here() {
            return;
        }
        let (group, warnings) =
            CounterGroup::open(&specs("task-clock,page-faults,context-switches"));
        assert!(warnings.is_empty(), "{warnings:?}");
        let group = group.expect("software events open on any Linux");
        group.start().unwrap();
        let pages = fault_pages(64);
        let reading = group.stop().unwrap();
        drop(pages);
        let faults = reading.values[group.position("page-faults").unwrap()];
        let clock = reading.values[group.position("task-clock").unwrap()];
        assert!(faults >= 32, "expected page faults, got {faults}");
        assert!(clock > 0);
        assert!(reading.time_enabled >= reading.time_running && reading.time_running > 0);
        assert!((reading.scale() - 1.0).abs() < 0.5);
    }

    #[test]
    fn a_stopped_group_does_not_count_and_restarts_from_zero() {
        if no_perf_here() {
            return;
        }
        let (group, _) = CounterGroup::open(&specs("page-faults"));
        let group = group.unwrap();
        group.start().unwrap();
        let v = fault_pages(32);
        let first = group.stop().unwrap().values[0];
        assert!(first >= 32, "expected page faults, got {first}");
        let w = fault_pages(32);
        drop((v, w));
        assert_eq!(
            group.read().unwrap().values[0],
            first,
            "stopped counters moved"
        );
        group.start().unwrap();
        assert!(group.stop().unwrap().values[0] < first);
    }

    #[test]
    fn unavailable_events_are_warnings_and_the_rest_still_count() {
        if no_perf_here() {
            return;
        }
        // Hardware events either open (bare metal) or come back with a reason (a VM).
        let (group, warnings) = CounterGroup::open(&specs("cycles,task-clock,LLC-load-misses"));
        let group = group.expect("task-clock opens anywhere");
        let opened: Vec<_> = group.events().map(|e| e.name.clone()).collect();
        assert!(opened.contains(&"task-clock".to_string()));
        assert_eq!(opened.len() + warnings.len(), 3);
        for w in &warnings {
            assert!(!w.to_string().is_empty());
        }
    }

    #[test]
    fn scaling_follows_enabled_over_running() {
        let r = GroupReading {
            time_enabled: 200,
            time_running: 100,
            values: vec![10, 7],
        };
        assert_eq!(r.scaled(), vec![Some(20.0), Some(14.0)]);
        let never = GroupReading {
            time_enabled: 200,
            time_running: 0,
            values: vec![10],
        };
        assert_eq!(never.scaled(), vec![None]);
    }

    #[test]
    fn probe_tells_software_events_work() {
        if no_perf_here() {
            assert!(probe(&parse_event("task-clock").unwrap()).is_err());
            return;
        }
        assert_eq!(probe(&parse_event("task-clock").unwrap()), Ok(()));
    }
}
