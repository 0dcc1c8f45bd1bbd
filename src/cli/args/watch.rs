//! Flags of `memlat watch`.

use std::path::PathBuf;

use clap::Args;

use super::PlateauArgs;
use crate::kernels::KernelKind;
use crate::platform::PageRequest;

/// `memlat watch`.
#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    /// Time between the starts of two intervals (e.g. 500ms, 1s, 1m).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub interval: std::time::Duration,

    /// How long to watch (e.g. 40s, 10m, 2h) [default: until Ctrl-C].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<std::time::Duration>,

    /// The share of each interval spent measuring, at most (0.01 to 1).
    #[arg(long, value_name = "FRACTION", default_value_t = crate::experiments::watch::DEFAULT_DUTY)]
    pub duty: f64,

    /// CPU to pin the measuring thread to [default: the CPU memlat starts on].
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,

    /// Write the result as JSON lines to FILE: the envelope and plan first,
    /// then one line per interval as it is measured, the summary last.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// At the end, draw the timeline (a panel per level, events shaded) to FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Replace the -o file when it holds anything (without it, watch
    /// refuses to overwrite an earlier result, a sweep or a watch).
    #[arg(long)]
    pub force: bool,

    /// Plain lines even on a terminal (no sparklines, no line updated in place).
    #[arg(long)]
    pub plain: bool,

    /// Page size for the buffers: 4k, thp, 2m or 1g.
    #[arg(long, value_enum, default_value = "thp")]
    pub pages: PageRequest,

    /// Loop that follows the chains: `pointer`, `index` or `portable`.
    #[arg(long, value_enum, default_value = "pointer")]
    pub kernel: KernelKind,

    /// Seed of the random chains.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,

    /// Where the plateaus come from.
    #[command(flatten)]
    pub plateaus: PlateauArgs,
}

/// Parses a duration of one or more parts, each a number with `ms`, `s`,
/// `m` or `h` (`1h30m`, `2m30s`, `1.5s`; a lone bare number is seconds),
/// summed, each part read by [`crate::experiments::watch::plan::parse_duration`].
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    use crate::experiments::watch::plan;
    let t = text.trim();
    let mut parts = Vec::new();
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let unit = rest[digits..]
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .map_or(rest.len(), |k| digits + k);
        parts.push(&rest[..unit]);
        rest = &rest[unit..];
    }
    if parts.len() <= 1 {
        return plan::parse_duration(t);
    }
    let mut total = std::time::Duration::ZERO;
    for part in parts {
        if part
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
            .is_empty()
        {
            return Err(format!(
                "{text:?}: give each part of a duration its unit (e.g. 1h30m, 2m30s)"
            ));
        }
        total += plan::parse_duration(part).map_err(|e| format!("{text:?}: {e}"))?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_take_several_parts() {
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("2m30s"), Ok(Duration::from_secs(150)));
        assert_eq!(parse_duration("1s500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("40"), Ok(Duration::from_secs(40)));
        assert!(parse_duration("1h30").is_err());
        assert!(parse_duration("1h30d").is_err());
        assert!(parse_duration("").is_err());
    }
}
