//! The documentation as tests: every `memlat` command in README.md and
//! docs/*.md runs, as written, against this checkout's binary; a command that
//! fails, or a file it names with -o/--output/--plot/--json/--csv that is not
//! written, fails the test.
//!
//! A small runner rather than trycmd: trycmd compares whole outputs (here
//! measurements, different on every run) and has no way to shrink a documented
//! `-n 1G` for CI; this runner checks exit codes and files, and understands one
//! marker, an HTML comment on the lines just above a code block:
//!
//! - `<!-- docs-test: skip REASON -->` the block is not run (root, many hours, a shared path);
//! - `<!-- docs-test: small 1G=>16M --repeats 2 -->` every `A=>B` replaces the
//!   word A by B, every flag is appended to each command of the block (or
//!   sets its value where the command gives it); `small [sweep !--to] ...`
//!   applies only to commands with the word `sweep` and without `--to`;
//! - `<!-- docs-test: before memlat ... -->` runs first (a file the block reads).
//!
//! Each page runs in a fresh directory (blocks in order, sharing it), with
//! `examples/` and `python/` linked in so relative paths resolve.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::Command;

/// One command of a page, with what its marker asked for.
#[derive(Debug, Clone, PartialEq)]
struct DocCommand {
    /// Where it is: `file:line`.
    place: String,
    /// The command as written.
    written: String,
    /// The command as run (after the marker's replacements and additions).
    run: String,
    /// Commands the marker runs first.
    before: Vec<String>,
}

/// The flags whose value is a file the command writes.
const WRITES: [&str; 5] = ["-o", "--output", "--plot", "--json", "--csv"];

/// Whether a line of a code block is a memlat command (not output that starts
/// with `memlat characterize:`) or the `mkdir` before one.
fn command_of(line: &str) -> Option<&str> {
    let line = line.strip_prefix("$ ").unwrap_or(line).trim();
    let mut words = line.split_whitespace();
    match words.next() {
        Some("memlat") => {}
        // The one shell command the docs use to make a directory for memlat's files.
        Some("mkdir") => return Some(line),
        _ => return None,
    }
    match words.next() {
        Some(word) if word.ends_with(':') => None,
        _ => Some(line),
    }
}

/// Applies a block's `small` markers to one command, its comment dropped:
/// `A=>B` replaces the word A; a flag (with its value) is appended, or sets
/// the value of that flag where the command already gives it. A marker that
/// starts with `[w ...]` applies only to commands that have all those words
/// (and lack each `!w`). Other commands (`mkdir`) run as written.
fn shrink(command: &str, smalls: &[String]) -> String {
    let body = body(command);
    let mut words: Vec<String> = body.split_whitespace().map(str::to_string).collect();
    if words[0] != "memlat" {
        return body.trim().to_string();
    }
    for small in smalls {
        let small = small.trim();
        let tokens = match small.strip_prefix('[').and_then(|s| s.split_once(']')) {
            Some((needed, rest)) if needed.split_whitespace().all(|n| has(&words, n)) => rest,
            Some(_) => continue,
            None => small,
        };
        let tokens: Vec<&str> = tokens.split_whitespace().collect();
        let mut i = 0;
        while i < tokens.len() {
            let token = tokens[i];
            i += 1;
            if let Some((from, to)) = token.split_once("=>") {
                for w in &mut words {
                    if w == from {
                        *w = to.to_string();
                    }
                }
                continue;
            }
            let value = tokens
                .get(i)
                .filter(|v| !v.starts_with('-') && !v.contains("=>"));
            if value.is_some() {
                i += 1;
            }
            match words.iter().position(|w| w == token) {
                Some(at) => {
                    if let (Some(v), Some(old)) = (value, words.get_mut(at + 1)) {
                        *old = v.to_string();
                    }
                }
                None => {
                    words.push(token.to_string());
                    words.extend(value.map(|v| v.to_string()));
                }
            }
        }
    }
    words.join(" ")
}

/// Whether a command has the word `n`, or lacks it when `n` is `!word`.
fn has(words: &[String], n: &str) -> bool {
    match n.strip_prefix('!') {
        Some(absent) => !words.iter().any(|w| w == absent),
        None => words.iter().any(|w| w == n),
    }
}

/// The commands of one page, in order.
fn commands(file: &str, text: &str) -> Vec<DocCommand> {
    let mut found = Vec::new();
    let mut inside = false;
    let (mut skip, mut small, mut before) = (false, Vec::new(), Vec::new());
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            if inside {
                (skip, small, before) = (false, Vec::new(), Vec::new());
            }
            inside = !inside;
            continue;
        }
        if !inside {
            if let Some(marker) = line
                .trim()
                .strip_prefix("<!-- docs-test:")
                .and_then(|m| m.strip_suffix("-->"))
            {
                let marker = marker.trim();
                if marker.starts_with("skip") {
                    skip = true;
                } else if let Some(rest) = marker.strip_prefix("small ") {
                    small.push(rest.trim().to_string());
                } else if let Some(rest) = marker.strip_prefix("before ") {
                    before.push(rest.trim().to_string());
                } else {
                    panic!("{file}:{}: unknown docs-test marker {marker:?}", i + 1);
                }
            } else if !line.trim().is_empty() && !line.trim_start().starts_with("<!--") {
                (skip, small, before) = (false, Vec::new(), Vec::new());
            }
            continue;
        }
        if skip {
            continue;
        }
        if let Some(command) = command_of(line) {
            found.push(DocCommand {
                place: format!("{file}:{}", i + 1),
                written: command.to_string(),
                run: shrink(command, &small),
                before: std::mem::take(&mut before),
            });
        }
    }
    found
}

/// A documented command without its comment (`memlat run -n 1G   # DRAM`).
fn body(command: &str) -> &str {
    command.split(" #").next().unwrap_or(command)
}

/// A documented command's comment, after ` #`; `None` without one.
fn comment(command: &str) -> Option<&str> {
    command.split_once(" #").map(|(_, comment)| comment)
}

/// The files a command says it writes.
fn named_outputs(command: &str) -> Vec<String> {
    let words: Vec<&str> = body(command).split_whitespace().collect();
    words
        .windows(2)
        .filter(|w| WRITES.contains(&w[0]))
        .map(|w| w[1].to_string())
        .collect()
}

fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// `sh -c line` in `dir` with this checkout's memlat first on PATH and the
/// page's own cache (no remembered sweep of the host read, none written for it).
fn shell(dir: &Path, line: &str) -> Command {
    let bin = Path::new(env!("CARGO_BIN_EXE_memlat")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env("PATH", path)
        .env("XDG_CACHE_HOME", dir.join(".cache"));
    command
}

/// Runs one line through sh (globs expand as in a terminal) with this
/// checkout's memlat first on PATH; the failure, if any. `may_exit` is a
/// code the page says the command may end with (no outputs then).
fn run_line(dir: &Path, line: &str, may_exit: Option<i32>) -> Result<(), String> {
    let out = shell(dir, line).output().map_err(|e| format!("sh: {e}"))?;
    if let Some(code) = may_exit.filter(|&code| out.status.code() == Some(code)) {
        eprintln!("         exit {code}, as the page says it may");
        return Ok(());
    }
    if !out.status.success() {
        return Err(format!(
            "exit {:?}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    for file in named_outputs(line) {
        if !dir.join(&file).exists() {
            return Err(format!("{file} was not written"));
        }
    }
    Ok(())
}

/// How long a command that runs "until Ctrl-C" runs before it gets one.
const UNTIL_CTRL_C: std::time::Duration = std::time::Duration::from_secs(12);

/// Runs a command the page says runs until Ctrl-C (as [`run_line`] does,
/// the shell replaced by it), sends it SIGINT after [`UNTIL_CTRL_C`], and
/// wants it ended within 10 s with exit 130.
fn interrupted_line(dir: &Path, line: &str) -> Result<(), String> {
    let mut child = shell(dir, &format!("exec {line}"))
        .stdout(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("sh: {e}"))?;
    std::thread::sleep(UNTIL_CTRL_C);
    if let Some(early) = child.try_wait().map_err(|e| e.to_string())? {
        return Err(format!("ended before Ctrl-C: {early}"));
    }
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .map_err(|e| format!("kill: {e}"))?;
    let sent = std::time::Instant::now();
    while sent.elapsed() < std::time::Duration::from_secs(10) {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return match status.code() {
                Some(130) => Ok(()),
                code => Err(format!("exit {code:?} after Ctrl-C, not 130")),
            };
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    Err("still running 10 s after Ctrl-C".into())
}

/// A fresh directory for one page's commands, with only the repository's
/// examples/ and python/ beside them (pages refer to both by relative path).
fn page_dir(root: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for linked in ["examples", "python"] {
        std::os::unix::fs::symlink(root.join(linked), dir.path().join(linked)).unwrap();
    }
    dir
}

#[test]
fn every_documented_command_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut failures = Vec::new();
    let mut ran = 0;
    for page in pages() {
        let name = page.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&page).unwrap();
        let dir = page_dir(root);
        for command in commands(&name, &text) {
            let started = std::time::Instant::now();
            let result = command
                .before
                .iter()
                .try_for_each(|b| run_line(dir.path(), b, None))
                .and_then(|()| run_line(dir.path(), &command.run, None));
            eprintln!(
                "{} {:>5.1} s  {}: {}",
                if result.is_ok() { "ok  " } else { "FAIL" },
                started.elapsed().as_secs_f64(),
                command.place,
                command.run
            );
            ran += 1;
            if let Err(why) = result {
                failures.push(format!(
                    "{}: {}\n  (written: {})\n  {why}",
                    command.place, command.run, command.written
                ));
            }
        }
    }
    assert!(ran > 40, "only {ran} documented commands found");
    assert!(
        failures.is_empty(),
        "{} documented commands failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The time a command's comment states (`# ~100 s here`, `# 21-36 s`,
/// `# 1.5-2.5 minutes`), as seconds low and high; `None` without one.
fn stated_seconds(command: &str) -> Option<(f64, f64)> {
    let comment = comment(command)?;
    let words: Vec<&str> = comment
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',' || c == ':')
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).find_map(|w| {
        let unit = match w[1].trim_end_matches([';', '.']) {
            "s" | "seconds" => 1.0,
            "min" | "minutes" => 60.0,
            _ => return None,
        };
        let number = w[0].trim_start_matches('~');
        let (lo, hi) = number.split_once('-').unwrap_or((number, number));
        Some((
            lo.parse::<f64>().ok()? * unit,
            hi.parse::<f64>().ok()? * unit,
        ))
    })
}

/// The exit code a command's comment says it may end with (`# exit 2
/// where none was counted`); `None` without one.
fn stated_exit(command: &str) -> Option<i32> {
    let mut words = comment(command)?.split_whitespace();
    while let Some(word) = words.next() {
        if word == "exit" {
            return words.next()?.parse().ok();
        }
    }
    None
}

/// Whether `seconds` is within 2x of a stated time `(low, high)`.
fn within_twice(seconds: f64, (low, high): (f64, f64)) -> bool {
    seconds >= low / 2.0 && seconds <= high * 2.0
}

/// Nightly (`cargo test --release --test docs -- --ignored`, 46 min on the
/// 2-vCPU Zen 3 guest; `MEMLAT_DOCS_PAGES=characterize,watch` for some
/// pages only): every documented command as
/// written, at the page's own settings (no `small` marker applied, no
/// hidden `before` command), each page in a fresh directory holding only
/// what its own commands made (and `examples/`, `python/` of the checkout);
/// a time a command's comment states is a claim, checked within 2x.
/// `skip` blocks stay skipped (root, hours, a shared path).
#[test]
#[ignore = "nightly: every documented command at its own settings, tens of minutes"]
fn every_documented_command_runs_at_its_own_settings() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut failures = Vec::new();
    let (mut ran, mut timed) = (0, 0);
    // MEMLAT_DOCS_PAGES=characterize,watch: only the pages whose path holds one of them.
    let only = std::env::var("MEMLAT_DOCS_PAGES").ok();
    for page in pages() {
        let name = page.strip_prefix(root).unwrap().display().to_string();
        if let Some(only) = &only
            && !only.split(',').any(|part| name.contains(part))
        {
            continue;
        }
        let text = std::fs::read_to_string(&page).unwrap();
        let dir = page_dir(root);
        for command in commands(&name, &text) {
            let line = body(&command.written).trim().to_string();
            let started = std::time::Instant::now();
            let until_ctrl_c = comment(&command.written)
                .is_some_and(|c| c.trim_start().starts_with("until Ctrl-C"));
            let mut result = if until_ctrl_c {
                interrupted_line(dir.path(), &line)
            } else {
                // A command the page says exits N somewhere (`# exit 2 where
                // none was counted (no PMU)`) may do so; 0 elsewhere.
                run_line(dir.path(), &line, stated_exit(&command.written))
            };
            let seconds = started.elapsed().as_secs_f64();
            if let (Ok(()), Some(claim)) = (&result, stated_seconds(&command.written)) {
                timed += 1;
                if !within_twice(seconds, claim) {
                    result = Err(format!(
                        "took {seconds:.1} s where the page says {:.1}..{:.1} s (2x allowed)",
                        claim.0, claim.1
                    ));
                }
            }
            eprintln!(
                "{} {seconds:>6.1} s  {}: {line}",
                if result.is_ok() { "ok  " } else { "FAIL" },
                command.place,
            );
            ran += 1;
            if let Err(why) = result {
                failures.push(format!("{}: {line}\n  {why}", command.place));
            }
        }
    }
    if only.is_none() {
        assert!(ran > 40, "only {ran} documented commands found");
        assert!(timed >= 4, "only {timed} stated times found");
    }
    assert!(
        failures.is_empty(),
        "{} documented commands failed at their own settings:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn stated_exit_codes_are_read_from_a_commands_comment() {
    assert_eq!(
        stated_exit("memlat plot c.json --metric x   # exit 2 where none was counted"),
        Some(2)
    );
    assert_eq!(stated_exit("memlat run -n 1G   # the exit of memory"), None);
    assert_eq!(stated_exit("memlat run -n 1G"), None);
}

#[test]
fn stated_times_are_read_from_a_commands_comment() {
    assert_eq!(
        stated_seconds("memlat sweep --pages 4k   # seed 004's experiment (~100 s here)"),
        Some((100.0, 100.0))
    );
    assert_eq!(
        stated_seconds("memlat characterize --quick -o r/  # 21-36 s here: every stage"),
        Some((21.0, 36.0))
    );
    assert_eq!(
        stated_seconds("memlat characterize -o r/ # defaults: 1.5-2.5 minutes here"),
        Some((90.0, 150.0))
    );
    assert_eq!(stated_seconds("memlat run -n 1G # DRAM, 4 KiB pages"), None);
    assert_eq!(stated_seconds("memlat run -n 1G"), None);
    assert!(within_twice(7.0, (4.0, 4.0)) && !within_twice(9.0, (4.0, 4.0)));
    assert!(within_twice(11.0, (21.0, 36.0)) && !within_twice(10.0, (21.0, 36.0)));
}

#[test]
fn every_page_makes_the_files_it_reads() {
    // No hidden command makes a file a page reads: a newcomer in a fresh
    // directory runs only what the page shows.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut missing = Vec::new();
    for page in pages() {
        let name = page.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&page).unwrap();
        let found = commands(&name, &text);
        for c in &found {
            assert!(
                c.before.is_empty(),
                "{}: a hidden `before` marker makes a file; show its command on the page",
                c.place
            );
        }
        let written: Vec<(usize, String)> = found
            .iter()
            .enumerate()
            .flat_map(|(k, c)| named_outputs(&c.written).into_iter().map(move |f| (k, f)))
            .collect();
        for (k, c) in found.iter().enumerate() {
            let body = body(&c.written);
            for word in body.split_whitespace().skip(2) {
                let read = word.ends_with(".json") && !word.starts_with('-');
                let named = named_outputs(body).iter().any(|f| f == word);
                // A file in a directory an earlier command wrote (`-o results/`).
                let dir = word.rsplit_once('/').map(|(d, _)| d);
                let made = written.iter().any(|(j, f)| {
                    *j < k && (f == word || dir.is_some_and(|d| f.trim_end_matches('/') == d))
                });
                if read && !named && !word.starts_with("examples/") && !made {
                    missing.push(format!(
                        "{}: reads {word}, which no earlier command on the page writes",
                        c.place
                    ));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn markers_shrink_skip_and_prepare() {
    let page = "<!-- docs-test: small 1G=>16M --repeats 2 -->\n<!-- docs-test: small [sweep] --to 1M -->\n<!-- docs-test: before memlat sweep --json s.json -->\n```sh\nmemlat run -n 1G --pattern random   # DRAM\nmemlat characterize: 21 s\n```\n<!-- docs-test: skip root -->\n```\nmemlat prefetchers --restore\n```\n```\n$ memlat run -n 1G\n```\n";
    let found = commands("p.md", page);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(
        found[0].run,
        "memlat run -n 16M --pattern random --repeats 2"
    );
    assert_eq!(found[0].before, ["memlat sweep --json s.json"]);
    assert_eq!(found[0].place, "p.md:5");
    assert_eq!(found[1].run, "memlat run -n 1G");
    assert!(found[1].before.is_empty());
    let smalls = [
        "--sample-ms 5 --no-refine".to_string(),
        "[run] -n 8K".into(),
        "[sweep !--to] --to 1M".into(),
    ];
    assert_eq!(
        shrink("memlat sweep --sample-ms 50 --to 1G # x", &smalls),
        "memlat sweep --sample-ms 5 --to 1G --no-refine"
    );
    assert_eq!(
        shrink("memlat sweep", &smalls),
        "memlat sweep --sample-ms 5 --no-refine --to 1M"
    );
    assert_eq!(shrink("mkdir -p x # y", &smalls), "mkdir -p x");
    assert_eq!(
        shrink("memlat run --format json", &smalls),
        "memlat run --format json --sample-ms 5 --no-refine -n 8K"
    );
    assert_eq!(
        named_outputs("memlat sweep --json a.json --plot b.png -o c # -o d"),
        ["a.json", "b.png", "c"]
    );
}

/// Whether `.gitignore`'s anchored patterns (`/dir`, `/dir/`, `/*.ext`, the
/// forms it uses for memlat's outputs) cover a path relative to the checkout.
fn ignored(path: &str, patterns: &[&str]) -> bool {
    let path = path.trim_start_matches("./").trim_end_matches('/');
    patterns.iter().any(|p| match p.strip_prefix('/') {
        Some(p) => match p.strip_prefix("*.") {
            Some(ext) => !path.contains('/') && path.ends_with(&format!(".{ext}")),
            None => {
                let p = p.trim_end_matches('/');
                path == p || path.starts_with(&format!("{p}/"))
            }
        },
        None => false,
    })
}

/// A newcomer runs the documented commands in the checkout: every file they
/// name must be one git ignores, so `git status` stays clean.
#[test]
fn gitignore_covers_every_documented_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let gitignore = std::fs::read_to_string(root.join(".gitignore")).unwrap();
    let patterns: Vec<&str> = gitignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let mut uncovered = Vec::new();
    for page in pages() {
        let name = page.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&page).unwrap();
        for command in commands(&name, &text) {
            for file in named_outputs(&command.written) {
                if !file.starts_with('/') && !ignored(&file, &patterns) {
                    uncovered.push(format!("{}: {file}", command.place));
                }
            }
        }
    }
    assert!(
        uncovered.is_empty(),
        "documented outputs .gitignore does not cover:\n{}",
        uncovered.join("\n")
    );
    assert!(ignored("memlat-results/sweep.json", &["/memlat-results"]));
    assert!(ignored("results/", &["/results/"]));
    assert!(ignored("w.jsonl", &["/*.jsonl"]));
    assert!(!ignored("w.jsonl", &["/*.json"]));
    assert!(!ignored("docs/x.png", &["/*.png"]));
}
