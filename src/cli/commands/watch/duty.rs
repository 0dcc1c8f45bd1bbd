//! What `memlat watch` says of its duty cycle: runs capped below it (a
//! long interval), or an interval too short to keep it.

use crate::experiments::watch::record::WatchSummary;
use crate::experiments::watch::{Interval, Watch, WatchPlan};

/// Intervals measured before the duty cycle is judged: the run lengths
/// are set on the settle pass and shortened over the first intervals. A
/// choice: the shortening settles within a few intervals.
const DUTY_JUDGED_AFTER: usize = 5;

/// The duty is judged on the median of this many last intervals: the
/// median of three outvotes one interval a busy neighbour slowed.
const DUTY_JUDGED_OVER: usize = 3;

/// An interval may take this much of its budget before the duty counts as
/// unmet: intervals vary by a tenth with other tenants (the watch aims at
/// 80% of the budget for that reason), so a cost within 10% over it is the
/// budget kept, give or take a neighbour. A choice.
const DUTY_SLACK: f64 = 1.1;

/// A duration as `--interval` takes it (`1h30m`, `90s`, `500ms`).
pub(super) fn seconds(s: f64) -> String {
    let ms = (s * 1e3).round() as u64;
    if ms < 1000 {
        return format!("{ms}ms");
    }
    if !ms.is_multiple_of(1000) {
        return format!("{}s", ms as f64 / 1e3);
    }
    let (h, m, s) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60);
    let mut text = String::new();
    for (v, unit) in [(h, "h"), (m, "m"), (s, "s")] {
        if v > 0 {
            text += &format!("{v}{unit}");
        }
    }
    text
}

/// A note when the runs are capped below what the duty allows (a long
/// interval): each interval then measures far less than its budget.
pub(super) fn capped(watch: &Watch) -> Option<String> {
    let cap = crate::experiments::watch::MAX_SAMPLE_TIME;
    (watch.sample_time() >= cap).then(|| {
        let plan = watch.plan();
        format!(
            "each timed run is capped at {} ms, so an interval measures for well under the {} its --duty {} allows",
            cap.as_millis(),
            seconds(plan.duty * plan.interval_s),
            plan.duty
        )
    })
}

/// What an interval takes of the CPU, ms: its measuring thread's CPU time,
/// else its wall time.
fn cost_ms(i: &Interval) -> f64 {
    i.cpu_ms.unwrap_or(i.spent_ms)
}

/// The note when the last intervals each took more than the duty allows,
/// once the runs have been shortened as far as they go: what to give
/// instead, `--interval` and `--duty` alike.
pub(super) fn duty_unmet(plan: &WatchPlan, intervals: &[Interval]) -> Option<String> {
    if intervals.len() < DUTY_JUDGED_AFTER {
        return None;
    }
    let mut recent: Vec<f64> = intervals[intervals.len() - DUTY_JUDGED_OVER..]
        .iter()
        .map(cost_ms)
        .collect();
    recent.sort_by(f64::total_cmp);
    unmet_note(plan, recent[DUTY_JUDGED_OVER / 2])
}

/// [`duty_unmet`] over the whole watch, for one too short to be judged
/// as it ran.
pub(super) fn duty_unmet_overall(plan: &WatchPlan, summary: &WatchSummary) -> Option<String> {
    let spent = summary.measuring_cpu_s.unwrap_or(summary.measuring_s);
    (summary.intervals >= 2).then_some(())?;
    let per_interval = spent / summary.intervals as f64 * 1e3;
    unmet_note(plan, per_interval)
}

fn unmet_note(plan: &WatchPlan, cost_ms: f64) -> Option<String> {
    let budget_ms = plan.duty * plan.interval_s * 1e3;
    if cost_ms <= budget_ms * DUTY_SLACK {
        return None;
    }
    let share = cost_ms / (plan.interval_s * 1e3);
    // The shortest interval that keeps the duty, in tenths of a second up.
    let interval = (cost_ms / plan.duty / 100.0).ceil() / 10.0;
    let duty = (share * 100.0).ceil() / 100.0;
    let instead = if duty <= 1.0 {
        format!(
            "give --interval {} or longer, or --duty {duty:.2}",
            seconds(interval)
        )
    } else {
        format!("give --interval {} or longer", seconds(interval))
    };
    Some(format!(
        "--duty {} cannot be kept at --interval {}: each interval's samples take about {cost_ms:.0} ms of CPU however short their runs, {:.0}% of it, not {:.0}%; {instead}",
        plan.duty,
        seconds(plan.interval_s),
        share * 100.0,
        plan.duty * 100.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_the_flag_takes_them() {
        assert_eq!(seconds(0.1), "100ms");
        assert_eq!(seconds(0.1 * 0.1), "10ms");
        assert_eq!(seconds(1.5), "1.5s");
        assert_eq!(seconds(0.1 * 3600.0), "6m");
        assert_eq!(seconds(5400.0), "1h30m");
        assert_eq!(seconds(3661.0), "1h1m1s");
    }

    #[test]
    fn a_duty_that_cannot_be_kept_is_said_with_what_to_give() {
        let plan = WatchPlan {
            levels: Vec::new(),
            edge: None,
            interval_s: 0.1,
            duration_s: None,
            duty: 0.1,
        };
        let note = unmet_note(&plan, 33.0).unwrap();
        assert!(note.contains("--interval 400ms or longer"), "{note}");
        assert!(note.contains("--duty 0.33"), "{note}");
        assert!(note.contains("33%"), "{note}");
        assert_eq!(unmet_note(&plan, 9.0), None);
        let second = WatchPlan {
            interval_s: 1.0,
            ..plan
        };
        assert_eq!(unmet_note(&second, 40.0), None);
    }
}
