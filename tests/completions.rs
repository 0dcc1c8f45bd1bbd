//! The completion scripts and man pages that packages install: the bash
//! script, sourced in a real bash, completes commands and flags; every
//! visible command gets a man page.
#![cfg(feature = "cli")]

use std::process::Command;

use assert_cmd::cargo::cargo_bin;

/// What bash's `_memlat` offers for the words typed so far (the last one
/// being completed), or None when there is no bash to ask.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Option<Vec<String>> {
    let Ok(version) = Command::new("bash").arg("--version").output() else {
        println!("SKIPPED: no bash on PATH, the completion script is not tried");
        return None;
    };
    assert!(version.status.success());
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let line = words.join(" ");
    // As bash calls a completion function: the command, the word being
    // completed, the word before it; COMP_* describe the whole line.
    let program = format!(
        "source '{}' || exit 3
complete -p memlat || exit 4
COMP_WORDS=({})
COMP_CWORD={}
COMP_LINE='{line}'
COMP_POINT={}
_memlat memlat '{}' '{}'
printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        words.len() - 1,
        line.len(),
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bash failed on the completion script: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let registered = text.lines().next().unwrap_or("");
    assert!(
        registered.contains(" -F _memlat ") && registered.ends_with(" memlat"),
        "`complete -p memlat` after sourcing: {registered}"
    );
    Some(text.lines().skip(1).map(str::to_string).collect())
}

#[test]
fn the_bash_script_completes_commands_and_flags() {
    let out = Command::new(cargo_bin("memlat"))
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("memlat.bash");
    std::fs::write(&script, &out.stdout).unwrap();

    let Some(commands) = bash_completes(&script, &["memlat", "sw"]) else {
        return;
    };
    assert_eq!(commands, ["sweep"], "memlat sw<TAB>");
    let commands = bash_completes(&script, &["memlat", ""]).unwrap();
    for name in ["run", "sweep", "characterize", "completions", "doctor"] {
        assert!(
            commands.iter().any(|c| c == name),
            "memlat <TAB>: {commands:?}"
        );
    }
    let flags = bash_completes(&script, &["memlat", "sweep", "--str"]).unwrap();
    assert_eq!(flags, ["--strides"], "memlat sweep --str<TAB>");
    let shells = bash_completes(&script, &["memlat", "completions", "f"]).unwrap();
    assert_eq!(shells, ["fish"], "memlat completions f<TAB>");
}

#[test]
fn every_shell_gets_a_script() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = Command::new(cargo_bin("memlat"))
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "memlat completions {shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(
            // fish spells a long flag `-l strides`.
            script.contains("sweep") && script.contains("strides"),
            "the {shell} script lacks sweep --strides"
        );
    }
}

#[test]
fn man_writes_a_page_per_visible_command() {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new(cargo_bin("memlat"))
        .args(["man", "--out-dir"])
        .arg(dir.path().join("man1"))
        .status()
        .unwrap();
    assert!(status.success());
    let page = |name: &str| std::fs::read_to_string(dir.path().join("man1").join(name));
    let top = page("memlat.1").unwrap();
    assert!(
        top.starts_with(".ie") || top.contains(".TH memlat 1"),
        "{top:.200}"
    );
    let sweep = page("memlat-sweep.1").unwrap();
    assert!(sweep.contains(".TH memlat-sweep 1") && sweep.contains("strides"));
    assert!(page("memlat-completions.1").is_ok());
    // Hidden commands have no page, as they have no --help entry.
    assert!(page("memlat-ptr-chase.1").is_err() && page("memlat-man.1").is_err());
}
