//! What every kind's presentation shares: the parts after a headline, a
//! typed read that notes what it could not read, and cells of JSON values.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::output::plot::Chart;
use crate::output::plot::heatmap::Heatmap;
use crate::output::table::{Cell, Table};
use crate::units::HumanBytes;

/// What a kind adds to its section after its headline.
#[derive(Default)]
pub struct Parts {
    /// Detail tables.
    pub tables: Vec<Table>,
    /// Line charts.
    pub charts: Vec<Chart>,
    /// Matrices drawn as heatmaps.
    pub heatmaps: Vec<Heatmap>,
    /// Why a chart or table is missing.
    pub problems: Vec<String>,
}

/// `value` as a `T`, or a problem noted.
pub(super) fn read<T: DeserializeOwned>(
    value: &Value,
    what: &str,
    problems: &mut Vec<String>,
) -> Option<T> {
    // Read from the tree as it is: no copy of a result is made to show it.
    T::deserialize(value)
        .map_err(|e| problems.push(format!("{what} not shown: {e}")))
        .ok()
}

/// A number rounded to `digits`, `-` where there is none.
pub(super) fn num(v: &Value, digits: usize) -> Cell {
    v.as_f64()
        .map_or(Cell::from("-"), |x| Cell::float(x, digits))
}

/// A size in bytes, `-` where there is none.
pub(super) fn bytes(v: &Value) -> Cell {
    v.as_u64()
        .map_or(Cell::from("-"), |b| HumanBytes(b).to_string().into())
}
