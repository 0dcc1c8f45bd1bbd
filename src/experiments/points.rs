//! The simplest experiment: a list of points measured in order, each a step
//! (the quick table, seed 002's levels). The measurements so far are every
//! checkpoint, so an interrupted run keeps what it measured.

use anyhow::{Context, Result};

use super::{Observer, Step};
use crate::engine::{Engine, Measurement, Point};

/// Measures every `(label, point)` in order.
pub fn run(
    engine: &mut Engine,
    points: &[(String, Point)],
    observer: &mut dyn Observer<Vec<Measurement>>,
) -> Result<Vec<Measurement>> {
    let mut done = Vec::new();
    for (index, (label, point)) in points.iter().enumerate() {
        if observer.interrupted() {
            break;
        }
        let step = Step {
            index,
            total: points.len(),
            label,
            cost_ms: crate::experiments::sweep::cost_ms(point),
        };
        observer.begin(&step);
        done.push(
            engine
                .measure(point)
                .with_context(|| format!("measuring {label}"))?,
        );
        observer.checkpoint(&done)?;
        observer.end(&step);
    }
    Ok(done)
}
