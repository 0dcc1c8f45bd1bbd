//! Which clock times the samples (`--clock`) and where cycle counts come from.

use serde::{Deserialize, Serialize};

use crate::platform::clock::{ClockRequest, Counts, IsaCounter, best_isa_counter};

use super::Error;

/// How cycles are obtained; serialised as `perf`, `cycle-counter`,
/// `estimated` or `given`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CycleSource {
    /// perf's cycles event counts.
    Perf,
    /// An ISA core-cycle counter read in user space (rdcycle, pmccntr_el0, rdpmc).
    CycleCounter,
    /// Nanoseconds times the core clock measured from dependent instruction chains.
    Estimated,
    /// Nanoseconds times a clock the user gave (`--ghz`).
    Given,
}

impl CycleSource {
    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            CycleSource::Perf => "perf",
            CycleSource::CycleCounter => "cycle-counter",
            CycleSource::Estimated => "estimated",
            CycleSource::Given => "given",
        }
    }

    /// Whether cycles are counted by hardware rather than derived from ns.
    pub fn counted(self) -> bool {
        matches!(self, CycleSource::Perf | CycleSource::CycleCounter)
    }
}

impl std::fmt::Display for CycleSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The settled choice of clock.
pub struct Timing {
    /// The ISA counter read around every timed run, if one is used.
    pub isa: Option<IsaCounter>,
    /// Where cycles come from.
    pub cycle_source: CycleSource,
    /// What timed the samples (`monotonic`, `rdtsc`, `perf`...).
    pub clock_name: String,
    /// Why a better clock was not used.
    pub note: Option<String>,
    /// The core clock the user gave (`--ghz`), GHz.
    pub given_ghz: Option<f64>,
}

impl Timing {
    /// Settles `request` given whether perf's cycles event opened and a `--ghz`.
    pub fn choose(
        request: ClockRequest,
        perf_cycles: bool,
        given_ghz: Option<f64>,
    ) -> Result<Timing, Error> {
        let estimated = |note: Option<String>, isa: Option<IsaCounter>| {
            let clock_name = isa
                .as_ref()
                .map_or("monotonic".to_string(), |c| c.name.to_string());
            Timing {
                isa,
                cycle_source: CycleSource::Estimated,
                clock_name,
                note,
                given_ghz: None,
            }
        };
        let mut timing = match request {
            ClockRequest::Perf if !perf_cycles => {
                return Err(Error::ClockUnavailable {
                    request,
                    why: "perf's cycles event cannot be opened here (no hardware PMU, or perf_event_paranoid)".into(),
                });
            }
            ClockRequest::Perf => Timing {
                isa: None,
                cycle_source: CycleSource::Perf,
                clock_name: "perf".into(),
                note: None,
                given_ghz: None,
            },
            ClockRequest::Monotonic => estimated(None, None),
            ClockRequest::CycleCounter => {
                let counter =
                    best_isa_counter().map_err(|why| Error::ClockUnavailable { request, why })?;
                Self::from_counter(counter)
            }
            ClockRequest::Auto if perf_cycles => Timing {
                isa: None,
                cycle_source: CycleSource::Perf,
                clock_name: "perf".into(),
                note: None,
                given_ghz: None,
            },
            ClockRequest::Auto => match best_isa_counter() {
                Ok(counter) if counter.counts_cycles() => Self::from_counter(counter),
                // A time base is no better than the monotonic clock for samples
                // of milliseconds; say why cycles are estimated.
                Ok(counter) => estimated(counter.note.clone(), None),
                Err(why) => estimated(Some(why), None),
            },
        };
        if given_ghz.is_some() {
            timing.cycle_source = CycleSource::Given;
            timing.given_ghz = given_ghz;
        }
        Ok(timing)
    }

    fn from_counter(counter: IsaCounter) -> Timing {
        let cycle_source = if counter.counts_cycles() {
            CycleSource::CycleCounter
        } else {
            CycleSource::Estimated
        };
        Timing {
            cycle_source,
            clock_name: counter.name.to_string(),
            note: counter.note.clone(),
            given_ghz: None,
            isa: Some(counter),
        }
    }

    /// Reads the ISA counter, if one is used.
    pub fn read(&self) -> Option<u64> {
        self.isa.as_ref().map(IsaCounter::read)
    }

    /// Nanoseconds for `ticks` when the ISA counter is a time base.
    pub fn ns_from_ticks(&self, ticks: f64) -> Option<f64> {
        match self.isa.as_ref()?.counts {
            Counts::Time { ticks_per_ns } => Some(ticks / ticks_per_ns),
            Counts::CoreCycles => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_without_perf_never_fails_and_says_where_cycles_come_from() {
        let timing = Timing::choose(ClockRequest::Auto, false, None).unwrap();
        assert!(matches!(
            timing.cycle_source,
            CycleSource::CycleCounter | CycleSource::Estimated
        ));
        assert_eq!(
            Timing::choose(ClockRequest::Auto, true, None)
                .unwrap()
                .cycle_source,
            CycleSource::Perf
        );
    }

    #[test]
    fn perf_without_perf_is_a_usage_error() {
        let err = Timing::choose(ClockRequest::Perf, false, None)
            .err()
            .unwrap();
        assert!(err.is_usage() && err.to_string().contains("perf's cycles event"));
    }

    #[test]
    fn a_given_clock_overrides_the_cycle_source() {
        let timing = Timing::choose(ClockRequest::Monotonic, false, Some(2.5)).unwrap();
        assert_eq!(timing.cycle_source, CycleSource::Given);
        assert_eq!(timing.given_ghz, Some(2.5));
        assert_eq!(timing.clock_name, "monotonic");
    }

    #[test]
    fn cycle_sources_serialise_in_kebab_case() {
        for (source, name) in [
            (CycleSource::Perf, "\"perf\""),
            (CycleSource::CycleCounter, "\"cycle-counter\""),
            (CycleSource::Estimated, "\"estimated\""),
            (CycleSource::Given, "\"given\""),
        ] {
            assert_eq!(serde_json::to_string(&source).unwrap(), name);
            assert_eq!(serde_json::from_str::<CycleSource>(name).unwrap(), source);
            assert_eq!(format!("\"{source}\""), name);
        }
    }

    #[test]
    fn cycle_counter_reads_an_isa_counter() {
        let timing = Timing::choose(ClockRequest::CycleCounter, false, None).unwrap();
        let a = timing.read().unwrap();
        let b = timing.read().unwrap();
        assert!(b >= a);
    }
}
