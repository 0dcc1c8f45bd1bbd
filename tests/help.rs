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

/// An example line as argv: the comment and a stdout redirect dropped,
/// `sudo` dropped, split on blanks.
fn argv(line: &str) -> Vec<String> {
    let command = line.split(" #").next().unwrap_or(line);
    let command = command.split(" > ").next().unwrap_or(command);
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

/// The defaults a page states, in each paragraph that a
/// `<!-- defaults: COMMAND -->` marker opens: `--flag` (default V), `--flag` (V)
/// and `--flag` V. Each is compared with clap's default, or the
/// `[default: V]` its help states where the default depends on the machine.
fn stated_defaults(text: &str) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for chunk in text.split("<!-- defaults: ").skip(1) {
        let (name, rest) = chunk
            .split_once("-->")
            .expect("an unclosed defaults marker");
        let command = name.trim().to_string();
        // The marker covers its paragraph: up to the next blank line.
        let paragraph = rest.trim_start().split("\n\n").next().unwrap_or("");
        let mut words = paragraph.split('`').peekable();
        while let Some(piece) = words.next() {
            let Some(after) = words.peek() else { break };
            if !piece.starts_with("--") || piece.contains(' ') {
                continue;
            }
            let after = after.trim_start();
            let value = if let Some(inner) = after.strip_prefix('(') {
                let inner = inner.trim_start();
                let inner = inner
                    .strip_prefix("default:")
                    .or_else(|| inner.strip_prefix("default"))
                    .unwrap_or(inner)
                    .trim_start();
                if inner.is_empty() {
                    // `--flag` (default `V`): the value is the next backticked piece.
                    words.next();
                    words.peek().map(|v| v.to_string())
                } else {
                    first_value(inner)
                }
            } else {
                first_value(after)
            };
            if let Some(value) = value {
                found.push((command.clone(), piece.to_string(), value));
            }
        }
    }
    found
}

/// A leading number (with a unit such as KiB), or None when the text does not start with one.
fn first_value(text: &str) -> Option<String> {
    let mut tokens = text.split_whitespace();
    let first = tokens.next()?.trim_end_matches([',', ')', ':', ';']);
    if !first.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    match tokens
        .next()
        .map(|t| t.trim_end_matches([',', ')', ':', ';']))
    {
        Some(unit @ ("KiB" | "MiB" | "GiB")) => Some(format!("{first}{unit}")),
        _ => Some(first.to_string()),
    }
}

/// What `memlat COMMAND --help` says `--flag` defaults to.
fn clap_default(command: &str, flag: &str) -> Option<String> {
    let mut cli = Cli::command();
    cli.build();
    let sub = cli.find_subcommand(command)?;
    let arg = sub
        .get_arguments()
        .find(|a| a.get_long() == flag.strip_prefix("--"))?;
    let values: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if !values.is_empty() {
        return Some(values.join(","));
    }
    let help = arg.get_long_help().or(arg.get_help())?.to_string();
    let stated = help.split("[default: ").nth(1)?;
    Some(stated.split([']', ',', ' ', ';']).next()?.to_string())
}

/// Whether two spellings of a default are the same value (16K = 16 KiB, 5 = 5.0).
fn same_value(a: &str, b: &str) -> bool {
    let a = a.trim_matches('`');
    let b = b.trim_matches('`');
    if a == b {
        return true;
    }
    if let (Ok(x), Ok(y)) = (a.parse::<f64>(), b.parse::<f64>()) {
        return x == y;
    }
    matches!(
        (memlat::units::parse_size(a), memlat::units::parse_size(b)),
        (Ok(x), Ok(y)) if x == y
    )
}

#[test]
fn defaults_stated_in_the_docs_are_claps() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    let mut wrong = Vec::new();
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let page = entry.unwrap().path();
        if page.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&page).unwrap();
        for (command, flag, stated) in stated_defaults(&text) {
            checked += 1;
            match clap_default(&command, &flag) {
                Some(actual) if same_value(&stated, &actual) => {}
                actual => wrong.push(format!(
                    "{}: memlat {command} {flag}: the page says {stated}, --help says {actual:?}",
                    page.display()
                )),
            }
        }
    }
    assert!(checked >= 10, "only {checked} stated defaults found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_defaults_reader_reads_each_form() {
    let page = "<!-- defaults: sweep -->\nfrom `--from` (default 1 KiB) to `--to` (default: until flat), `--ratio` (1.3),\n`--repeats` 3, `--kernel` (default `pointer`), `--nops` (comma-separated).\n\nnot `--seed` 4";
    let found = stated_defaults(page);
    let pairs: Vec<(&str, &str)> = found
        .iter()
        .map(|(_, f, v)| (f.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("--from", "1KiB"),
            ("--ratio", "1.3"),
            ("--repeats", "3"),
            ("--kernel", "pointer")
        ]
    );
    assert!(same_value("1KiB", "1K") && same_value("5", "5.0") && !same_value("10", "5"));
    assert_eq!(clap_default("sweep", "--sample-ms").as_deref(), Some("5"));
    assert_eq!(clap_default("sweep", "--repeats").as_deref(), Some("3"));
}

#[test]
fn the_top_level_help_lists_the_exit_codes() {
    let (_, top) = &helps()[0];
    let status = top
        .split("Exit status:")
        .nth(1)
        .expect("memlat --help says its exit codes");
    for code in ["0 done", "1 a", "2 a", "130 ", "143 "] {
        assert!(
            status.contains(code),
            "exit code {code:?} missing: {status}"
        );
    }
    // Short help too (`-h`).
    let mut short = Cli::command();
    assert!(short.render_help().to_string().contains("Exit status:"));
}
