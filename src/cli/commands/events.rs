//! `memlat events`: which of perf's named events this machine can count.

use anyhow::Result;
use serde::Serialize;

use crate::cli::{EventsArgs, Format};
use crate::output::table::Table;
use crate::output::{self, text::KeyValues};
use crate::platform::counters::{LISTED, Unavailable, parse_event, probe};

#[derive(Serialize)]
struct EventStatus {
    name: &'static str,
    available: bool,
    reason: Option<String>,
    #[serde(skip)]
    kind: Option<Unavailable>,
}

/// Runs `memlat events`.
pub fn run(args: &EventsArgs) -> Result<()> {
    let statuses: Vec<EventStatus> = LISTED
        .iter()
        .map(|&name| {
            let spec = parse_event(name).expect("listed events parse");
            let result = probe(&spec);
            EventStatus {
                name,
                available: result.is_ok(),
                reason: result.as_ref().err().map(|r| r.to_string()),
                kind: result.err(),
            }
        })
        .collect();
    let mut table = Table::new(&["<name", "<available", "<reason"]);
    for s in &statuses {
        table.row(vec![
            s.name.into(),
            if s.available { "yes" } else { "no" }.into(),
            s.reason.clone().unwrap_or_default().into(),
        ]);
    }
    table.note("raw events: rXXXX (hex config for this CPU's PMU, as perf's rNNN)");
    let out = match args.format {
        Format::Json => output::json(&statuses)?,
        Format::Csv => table.csv(),
        Format::Markdown => table.markdown(),
        Format::Text => {
            let mut kv = KeyValues::default();
            for s in &statuses {
                match &s.kind {
                    None => kv.add(s.name, "yes"),
                    Some(reason) => kv.add(s.name, format!("no, {reason}")),
                };
            }
            kv.add(
                "raw events",
                "rXXXX (hex config for this CPU's PMU, as perf's rNNN)",
            );
            kv.render()
        }
    };
    crate::cli::files::Output::create(None)?.write(&out)?;
    Ok(())
}
