//! `memlat tlb`: TLB reach and miss cost per page size (see
//! [`crate::experiments::tlb`]).

use anyhow::Result;
use serde::Serialize;

use crate::chain::Pattern;
use crate::cli::common::{notice, prepare, warn};
use crate::cli::files::Output;
use crate::cli::interrupt::Interrupted;
use crate::cli::progress::until_ctrl_c;
use crate::cli::{Format, TlbArgs};
use crate::error::usage;
use crate::experiments::tlb::{self, PagePlan, TlbPageResult};
use crate::output::document::Document;
use crate::output::present;
use crate::output::table::{Cell, Table};
use crate::platform::{self, PageRequest, cpuid, system};
use crate::readback::Kind;
use crate::units::HumanBytes;

/// What `memlat tlb --format json` prints.
#[derive(Serialize)]
struct TlbOutput<'a> {
    /// One entry per page size.
    page_bytes: &'a [TlbPageResult],
    /// Whether this machine is a virtual machine (page walks are two-dimensional).
    virtual_machine: bool,
    /// Whether every planned point was measured.
    complete: bool,
}

/// The plans for the page sizes asked (or the defaults).
fn plans(args: &TlbArgs) -> Result<(Vec<PagePlan>, Vec<String>)> {
    let mut notes = Vec::new();
    let available = platform::mem_available_bytes().unwrap_or(4 << 30);
    let gig_free = system::huge_pools()
        .iter()
        .find(|p| p.page_bytes == 1 << 30)
        .map_or(0, |p| p.free);
    let asked: Vec<String> = if args.page_sizes.is_empty() {
        let mut d = vec!["4k".to_string(), "2m".to_string()];
        if gig_free >= 4 {
            d.push("1g".into());
        } else {
            notes.push("1 GiB pages: the hugetlb pool has fewer than 4 free (sysctl vm.nr_hugepages with hugepagesz=1G), not measured".into());
        }
        d
    } else {
        // Each page size once, in the order given.
        let mut sizes: Vec<String> = Vec::new();
        for s in &args.page_sizes {
            if !sizes.contains(s) {
                sizes.push(s.clone());
            }
        }
        sizes
    };
    let mut out = Vec::new();
    for size in &asked {
        // The page sizes are the system's: "4k" is the base page and "2m"
        // the transparent huge page, whatever their size here (16 KiB and
        // 32 MiB on some arm64 kernels, 64 KiB and 512 MiB on others).
        let (page_bytes, request, default_max) = match size.as_str() {
            "4k" => {
                let base = crate::platform::system::base_page_bytes();
                if base != 4 << 10 {
                    notes.push(format!(
                        "--page-sizes 4k: the base page here is {}, so the base-page plan uses {} pages",
                        HumanBytes(base),
                        HumanBytes(base)
                    ));
                }
                (
                    base,
                    PageRequest::Base,
                    tlb::default_max_pages(base, true, available),
                )
            }
            "2m" => {
                let huge = crate::platform::system::thp_page_bytes().unwrap_or(2 << 20);
                if huge != 2 << 20 {
                    notes.push(format!(
                        "--page-sizes 2m: the transparent huge page here is {} (the kernel's PMD size), so the huge-page plan uses {} pages",
                        HumanBytes(huge),
                        HumanBytes(huge)
                    ));
                }
                (
                    huge,
                    PageRequest::Thp,
                    tlb::default_max_pages(huge, false, available),
                )
            }
            _ => {
                if gig_free < 2 {
                    return usage(
                        "--page-sizes 1g: the hugetlb pool has no free 1 GiB pages; reserve some (hugepagesz=1G hugepages=N on the kernel command line)",
                    );
                }
                (1 << 30, PageRequest::Huge1G, gig_free.min(16))
            }
        };
        let max_pages = args.max_pages.unwrap_or(default_max);
        if max_pages < tlb::MIN_PAGES {
            return usage(format!(
                "--max-pages {max_pages}: give at least {} (or less memory is free than {} pages of {} need)",
                tlb::MIN_PAGES,
                tlb::MIN_PAGES,
                HumanBytes(page_bytes)
            ));
        }
        let span = max_pages.saturating_mul(page_bytes);
        if span > available / 2 {
            return usage(format!(
                "--max-pages {max_pages}: {} pages of {} need {}, more than half the memory available; give fewer",
                max_pages,
                HumanBytes(page_bytes),
                HumanBytes(span)
            ));
        }
        out.push(PagePlan {
            page_bytes,
            request,
            max_pages,
        });
    }
    Ok((out, notes))
}

/// Runs `memlat tlb`.
pub fn run(args: &TlbArgs) -> Result<()> {
    if args.measure.pattern.is_some() {
        return usage(
            "--pattern: memlat tlb chooses its chains (one line a page, and the same lines packed)",
        );
    }
    crate::cli::files::check_output_and_plot(args.measure.output.as_deref(), args.plot.as_deref())?;
    let output = Output::create(args.measure.output.as_deref())?;
    let (plans, notes) = plans(args)?;
    let mut prepared = prepare(&args.measure, Pattern::Random, 3)?;
    for note in prepared.notices.iter().chain(&notes) {
        notice(note);
    }
    let claims = cpuid::tlbs();
    let vm = cpuid::under_hypervisor() || system::hypervisor().is_some();
    let template = prepared.template.clone();
    let mut results = until_ctrl_c(!args.no_progress, |observer| {
        tlb::run(&mut prepared.engine, &template, &plans, &claims, observer)
    })?;
    let complete = results.len() == plans.len()
        && results
            .iter()
            .zip(&plans)
            .all(|(r, p)| r.points.len() == tlb::counts(p.max_pages).len());
    for r in &mut results {
        if r.cpuid.is_empty() {
            r.notes.push("CPUID lists no TLB for this page size here (leaf 0x18 or 0x8000_0005/6; hypervisors often hide them): compare with the vendor's documentation for the core".into());
        }
        if vm {
            r.notes.push("a virtual machine: a page walk goes through the guest's and the host's page tables (two-dimensional), so it costs more than on bare metal".into());
        }
    }
    if let Some(path) = &args.plot {
        crate::output::plot::tlb::plot(&results, path)?;
        notice(&format!("plot written to {}", path.display()));
    }
    // JSON is written from the result, text and markdown from its JSON value.
    let out = TlbOutput {
        page_bytes: &results,
        virtual_machine: vm,
        complete,
    };
    let value = serde_json::to_value(&out)?;
    let content = match args.measure.format {
        Format::Json => crate::output::result_json("tlb", &out)?,
        Format::Csv => points_table(&results).csv(),
        Format::Text => document(&results, &value)?.text(),
        Format::Markdown => document(&results, &value)?.markdown(),
    };
    output.write(&content)?;
    if !complete {
        warn("interrupted: the page counts above were measured, the rest were not");
        return Err(Interrupted("memlat tlb: interrupted".into()).into());
    }
    Ok(())
}

fn points_table(results: &[TlbPageResult]) -> Table {
    let mut t = Table::new(&[
        "page_bytes",
        "pages",
        "spread_ns",
        "packed_ns",
        "translation_ns",
    ]);
    for r in results {
        for p in &r.points {
            t.row(vec![
                r.page_bytes.into(),
                p.pages.into(),
                Cell::float(p.spread_ns, 3),
                Cell::float(p.packed_ns, 3),
                Cell::float(p.translation_ns, 3),
            ]);
        }
    }
    t
}

/// Each page size's headline table (its levels), then its points.
fn document(results: &[TlbPageResult], value: &serde_json::Value) -> Result<Document> {
    let mut d = Document::new(
        "memlat tlb: TLB reach (entries x page size) and what a miss costs, from one line a page against the same lines packed",
    );
    let headline = present::headline(Kind::Tlb, value)?;
    for (r, levels) in results.iter().zip(headline) {
        d.table(levels);
        let mut t = Table::new(&["pages", "one line a page ns", "packed ns", "translation ns"]);
        for p in &r.points {
            t.row(vec![
                p.pages.into(),
                Cell::float(p.spread_ns, 2),
                Cell::float(p.packed_ns, 2),
                Cell::float(p.translation_ns, 2),
            ]);
        }
        d.table(t);
    }
    Ok(d)
}
