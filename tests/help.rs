//! Every command's `--help`: examples one per line, each parsed by the real
//! clap parser, and the flags a command ignores kept out of its help.
#![cfg(feature = "cli")]

use clap::{CommandFactory, Parser};
use memlat::cli::Cli;

/// Each visible command's long help, with its path (`""` for the top level).
fn helps() -> Vec<(String, String)> {
    let mut top = Cli::command();
    top.build();
    let mut all = vec![(String::new(), top.clone().render_long_help().to_string())];
    for sub in top.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_name().to_string();
        if name == "help" {
            continue;
        }
        all.push((name, sub.clone().render_long_help().to_string()));
    }
    all
}

/// The example lines of one help text: those after an "Examples:" heading
/// until the first line that is not indented.
fn examples(help: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line.trim_end() == "Examples:" {
            inside = true;
            continue;
        }
        if inside {
            if !line.starts_with("  ") {
                inside = false;
                continue;
            }
            found.push(line.trim().to_string());
        }
    }
    found
}

/// An example line as argv: the comment dropped, `sudo` dropped, split on blanks.
fn argv(line: &str) -> Vec<String> {
    let command = line.split(" #").next().unwrap_or(line);
    command
        .split_whitespace()
        .skip_while(|w| *w == "sudo")
        .map(str::to_string)
        .collect()
}

#[test]
fn every_command_has_examples_one_per_line_that_parse() {
    for (name, help) in helps() {
        let lines = examples(&help);
        assert!(!lines.is_empty(), "memlat {name} --help has no examples");
        assert_eq!(
            help.matches("Examples:").count(),
            1,
            "memlat {name} --help has more than one Examples heading"
        );
        for line in lines {
            // A continuation comment (a line that is only a comment) belongs to the line above.
            if line.starts_with('#') {
                continue;
            }
            let args = argv(&line);
            assert_eq!(
                args.first().map(String::as_str),
                Some("memlat"),
                "memlat {name}: example {line:?} is not a memlat command"
            );
            assert_eq!(
                args.iter().filter(|a| *a == "memlat").count(),
                1,
                "memlat {name}: two examples run together on one line: {line:?}"
            );
            if let Err(e) = Cli::try_parse_from(&args) {
                panic!("memlat {name}: example {line:?} does not parse:\n{e}");
            }
        }
    }
}

#[test]
fn bandwidth_help_leaves_out_the_chain_flags() {
    let help = helps()
        .into_iter()
        .find(|(name, _)| name == "bandwidth")
        .unwrap()
        .1;
    for flag in ["--pattern", "--line", "--seed", "pointer", "index"] {
        assert!(
            !help.contains(flag),
            "memlat bandwidth --help shows {flag}, which streaming ignores"
        );
    }
    assert!(help.contains("--vectors"), "{help}");
}

#[test]
fn the_example_reader_sees_run_together_examples() {
    let help = "Examples:\n  memlat a  # x\n  memlat b memlat c\nUsage: memlat";
    assert_eq!(examples(help), ["memlat a  # x", "memlat b memlat c"]);
    assert_eq!(
        argv("sudo memlat prefetchers --restore # y"),
        ["memlat", "prefetchers", "--restore"]
    );
}
