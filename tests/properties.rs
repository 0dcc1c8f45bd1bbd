//! Property tests: whatever a user, a file or a caller gives, memlat answers
//! with a value or an error, never a panic, a hang or a wrapped number; and
//! every chain it accepts is one cycle inside its buffer.

use std::path::Path;

use memlat::chain::{Chain, NodeEncoding, Pattern, is_single_cycle};
use memlat::experiments::sweep::{SweepResult, seq};
use memlat::limits::{self, Origin};
use memlat::units::parse_size;
use proptest::prelude::*;

fn flag() -> Origin {
    Origin::Flag("--test")
}

/// Cases the random strings reach only sometimes: a signed number is a
/// formula to a spreadsheet when its sign is `+` (`+0` once failed here).
#[test]
fn signed_numbers_in_cells() {
    use memlat::output::table::defuse;
    assert_eq!(defuse("+0"), "'+0");
    assert_eq!(defuse("+1.5e3"), "'+1.5e3");
    assert_eq!(defuse("-0.25"), "-0.25");
    assert_eq!(defuse("-inf"), "'-inf");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn sizes_parse_or_are_refused(text in "\\\\PC{0,24}") {
        let _ = parse_size(&text);
    }

    #[test]
    fn written_sizes_read_back(n in 0u64..1 << 40, suffix in prop::sample::select(vec!["", "K", "KiB", "M", "G"])) {
        let shift = match suffix { "" => 0, "K" | "KiB" => 10, "M" => 20, _ => 30 };
        let text = format!("{n}{suffix}");
        match n.checked_mul(1 << shift) {
            Some(bytes) => prop_assert_eq!(parse_size(&text), Ok(bytes)),
            None => prop_assert!(parse_size(&text).is_err()),
        }
    }

    #[test]
    fn bounded_sizes_never_wrap(bytes in any::<u64>()) {
        match limits::size(bytes, flag()) {
            Ok(s) => prop_assert!(s >= bytes && s.is_multiple_of(8) && s <= limits::MAX_SIZE),
            Err(e) => prop_assert!(!e.why.is_empty()),
        }
        let _ = limits::stride(bytes, flag());
        let _ = limits::accesses(bytes, flag());
        let _ = limits::sample_ms(bytes, flag());
    }

    #[test]
    fn sweep_sequences_end_and_hold_prime_multiples(
        from in 1u64..1 << 20,
        span in 1u64..1 << 12,
        ratio in any::<f64>(),
    ) {
        let to = from.saturating_mul(span);
        let (Ok(ratio), Ok(_)) = (limits::ratio(ratio, flag()), limits::sweep_steps(from, to, ratio.max(1.01), flag())) else {
            return Ok(());
        };
        let sizes = seq::seq(from, to, ratio, 64, true);
        prop_assert!(sizes.len() <= limits::MAX_SWEEP_SIZES);
        prop_assert!(sizes.windows(2).all(|w| w[0] < w[1]));
        for s in sizes {
            prop_assert!(s <= to && s.is_multiple_of(64) && seq::is_prime(s / 64));
        }
    }

    #[test]
    fn every_accepted_chain_is_one_cycle_in_its_buffer(
        size in 8u64..64 << 10,
        stride in 8u64..8 << 10,
        line in prop::sample::select(vec![8u64, 16, 64, 128, 4096]),
        seed in any::<u64>(),
        pattern in prop::sample::select(vec![Pattern::Stride, Pattern::Random, Pattern::PageRandom]),
    ) {
        let size = size / 8 * 8;
        let stride = stride / 8 * 8;
        let Ok(chain) = Chain::build(pattern, size, stride, line, seed) else {
            return Ok(());
        };
        let mut words = vec![u64::MAX; (size / 8) as usize];
        chain.link_into(&mut words, NodeEncoding::WordIndex);
        prop_assert!(is_single_cycle(&words, chain.len()));
        for k in 0..chain.len().min(64) {
            prop_assert!(chain.node_offset(k) < size);
        }
    }

    /// A string from another machine's result, in a CSV cell, never starts
    /// a formula; in Markdown it holds no tag and no line break.
    #[test]
    fn strings_are_defused_for_spreadsheets_and_escaped_for_markdown(text in "\\PC{0,40}|[=+@\\-\t\r<>|\\[\\]`#\n]{1,4}\\PC{0,20}") {
        use memlat::output::table::{defuse, escape_markdown};
        let cell = defuse(&text);
        prop_assert!(!cell.starts_with(['=', '+', '@', '\t', '\r']), "{cell:?}");
        prop_assert!(!cell.starts_with('-') || cell.parse::<f64>().is_ok_and(f64::is_finite), "{cell:?}");
        let md = escape_markdown(&text);
        // No tag can open (`<` escaped); `>` opens nothing but a quote at
        // the start, escaped there, so `->` reads as written.
        prop_assert!(!md.contains(['<', '\n', '\r']), "{md:?}");
        prop_assert!(!md.starts_with('#') && !md.starts_with('>'), "{md:?}");
    }

    #[test]
    fn machine_profiles_parse_or_are_refused(text in "(name: [a-z]{1,4}\\n)?(L[0-9](_ways)?: [0-9]{1,21}[KMG]?\\n){0,5}\\\\PC{0,8}") {
        if let Ok(m) = memlat::platform::caches::profile::parse(&text) {
            prop_assert!(m.caches.windows(2).all(|w| w[0].size_bytes < w[1].size_bytes));
            prop_assert!(m.caches.iter().all(|c| c.ways.is_none_or(|w| w <= limits::MAX_WAYS)));
        }
    }
}

/// The recorded Intel sweep, with bytes changed or cut: read, checked,
/// detected and drawn without a panic whenever it still parses.
#[test]
fn mutated_sweep_files_never_panic_the_readers() {
    let original = include_str!("fixtures/curves/intel-xeon-glc-kvm-thp.json");
    let path = Path::new("mutated.json");
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(64));
    let edits = (
        0..original.len(),
        prop::sample::select(vec![
            "0",
            "-1",
            "1e308",
            "NaN",
            "\"x\"",
            "",
            "18446744073709551615",
            "[]",
            "null",
        ]),
        0usize..40,
    );
    runner
        .run(&edits, |(at, with, cut)| {
            let at = (0..=at)
                .rev()
                .find(|&i| original.is_char_boundary(i))
                .unwrap_or(0);
            let end = (at + cut).min(original.len());
            let end = (end..=original.len())
                .find(|&i| original.is_char_boundary(i))
                .unwrap();
            let text = format!("{}{with}{}", &original[..at], &original[end..]);
            if let Ok(result) = SweepResult::parse(&text, path) {
                let _ = result.config.validate(path);
                let _ = result.detect();
                #[cfg(feature = "cli")]
                let _ = memlat::output::plot::sweep::charts(
                    &result,
                    &memlat::output::plot::sweep::Metric::defaults(&result),
                    true,
                );
            }
            Ok(())
        })
        .unwrap();
}
