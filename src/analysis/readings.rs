//! Readings from repeated evidence: a quantity (line size, ways, TLB reach)
//! read once per independent pass counts only when every pass read the same.
//! On a shared machine one pass can catch a co-tenant's burst; three that
//! agree rarely all do.

use serde::Serialize;

/// One quantity's readings, one per pass, and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement<T> {
    /// What each pass read (null where a pass read nothing).
    pub readings: Vec<Option<T>>,
    /// Whether every pass read the same value.
    pub agree: bool,
    /// That value when they agree, else null.
    pub value: Option<T>,
}

impl<T: PartialEq + Copy + std::fmt::Display> Agreement<T> {
    /// The verdict on `readings`: agreed when there is at least one and all
    /// are the same value.
    pub fn of(readings: Vec<Option<T>>) -> Agreement<T> {
        let first = readings.first().copied().flatten();
        let agree = first.is_some() && readings.iter().all(|r| *r == first);
        Agreement {
            agree,
            value: if agree { first } else { None },
            readings,
        }
    }

    /// The reading more passes gave than any other (a pass that read
    /// nothing is not a reading); None on a tie or without readings. Where
    /// passes disagree a headline leads with it rather than with the first
    /// pass's reading; on a tie nothing outvotes the first.
    pub fn most_read(&self) -> Option<T> {
        let count = |v: T| self.readings.iter().filter(|r| **r == Some(v)).count();
        let mut best: Option<(T, usize)> = None;
        let mut tie = false;
        for v in self.readings.iter().flatten().copied() {
            let n = count(v);
            match best {
                Some((b, m)) if b == v || n < m => {}
                Some((_, m)) if n == m => tie = true,
                _ => {
                    best = Some((v, n));
                    tie = false;
                }
            }
        }
        best.filter(|_| !tie).map(|(v, _)| v)
    }

    /// `3 of 3 passes` or `inconclusive: the passes read 64, 128, 64`, with `unit`.
    pub fn describe(&self, unit: &str) -> String {
        if self.agree {
            format!(
                "{} of {} passes agree",
                self.readings.len(),
                self.readings.len()
            )
        } else {
            let list: Vec<String> = self
                .readings
                .iter()
                .map(|r| r.map_or("none".into(), |v| format!("{v}{unit}")))
                .collect();
            format!("inconclusive: the passes read {}", list.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unanimous_readings_count() {
        let a = Agreement::of(vec![Some(64u64), Some(64), Some(64)]);
        assert!(a.agree);
        assert_eq!(a.value, Some(64));
        assert_eq!(a.describe(" B"), "3 of 3 passes agree");
        let b = Agreement::of(vec![Some(64u64), Some(128), Some(64)]);
        assert!(!b.agree);
        assert_eq!(b.value, None);
        assert_eq!(
            b.describe(" B"),
            "inconclusive: the passes read 64 B, 128 B, 64 B"
        );
        let c = Agreement::of(vec![None::<u64>, None]);
        assert!(!c.agree && c.value.is_none());
        assert!(c.describe("").contains("none, none"));
        assert!(!Agreement::<u64>::of(Vec::new()).agree);
    }

    #[test]
    fn the_reading_most_passes_gave_leads_and_a_tie_gives_none() {
        let most = |r: Vec<Option<u64>>| Agreement::of(r).most_read();
        assert_eq!(most(vec![Some(32), Some(64), Some(64)]), Some(64));
        assert_eq!(most(vec![Some(64), Some(64), Some(64)]), Some(64));
        assert_eq!(most(vec![None, None, Some(32)]), Some(32));
        assert_eq!(most(vec![Some(32), Some(64), None]), None);
        assert_eq!(most(vec![Some(32), Some(64), Some(32), Some(64)]), None);
        assert_eq!(most(vec![None, None]), None);
    }
}
