//! `--prefetchers off` against stand-in MSR files (`MEMLAT_MSR_ROOT`): the
//! saved values come back after a normal exit and after Ctrl-C (exit 130).
#![cfg(target_arch = "x86_64")]

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

/// Every register memlat may change, by vendor and family. (In these plain
/// files 0x1A0 and 0x1A4 overlap, unlike real MSRs, so tests compare with
/// what the files held before the run.)
const MSRS: [u64; 4] = [0x1A0, 0x1A4, 0xC000_0108, 0xC001_1022];
const ORIGINAL: u64 = 0x40;

/// Whether the memlat under test reads `MEMLAT_MSR_ROOT`: only a debug
/// build does (a release build never writes registers a variable names), so
/// under `cargo test --release` these tests skip, saying so.
fn stand_ins_read() -> bool {
    if cfg!(debug_assertions) {
        return true;
    }
    eprintln!(
        "skipped: a release build never reads MEMLAT_MSR_ROOT (src/platform/prefetch/msr.rs); run `cargo test` without --release"
    );
    false
}

fn fake_root(dir: &Path) {
    for cpu in 0..2 {
        let cpu_dir = dir.join(cpu.to_string());
        std::fs::create_dir_all(&cpu_dir).unwrap();
        let file = File::create(cpu_dir.join("msr")).unwrap();
        file.set_len(0xC001_1022 + 64).unwrap();
        for msr in MSRS {
            file.write_all_at(&ORIGINAL.to_ne_bytes(), msr).unwrap();
        }
    }
}

fn values(dir: &Path) -> Vec<u64> {
    let mut out = Vec::new();
    for cpu in 0..2 {
        let file = OpenOptions::new()
            .read(true)
            .open(dir.join(cpu.to_string()).join("msr"))
            .unwrap();
        for msr in MSRS {
            let mut bytes = [0u8; 8];
            file.read_exact_at(&mut bytes, msr).unwrap();
            out.push(u64::from_ne_bytes(bytes));
        }
    }
    out
}

fn profile(dir: &Path) -> String {
    let path = dir.join("tiny.txt");
    std::fs::write(&path, "name: tiny\nL1: 8K\nL2: 64K\n").unwrap();
    path.display().to_string()
}

#[test]
fn saved_values_come_back_after_a_normal_exit() {
    if !stand_ins_read() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("cpu");
    fake_root(&root);
    let before = values(&root);
    let out = Command::new(assert_cmd::cargo::cargo_bin("memlat"))
        .current_dir(dir.path())
        .env("MEMLAT_MSR_ROOT", &root)
        .env("MEMLAT_STATE_DIR", dir.path())
        .args([
            "levels",
            "--machine",
            &profile(dir.path()),
            "--iterations",
            "1",
        ])
        .args([
            "--sample-ms",
            "1",
            "--prefetchers",
            "off",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let status = v["prefetchers"].as_str().unwrap();
    if status.starts_with("off") {
        assert!(status.contains("restored on exit"), "{status}");
        assert_eq!(values(&root), before);
    } else {
        // A processor without a documented register: said, nothing written.
        assert!(status.contains("no documented prefetcher MSR"), "{status}");
        assert_eq!(values(&root), before);
    }
}

#[test]
fn ctrl_c_restores_and_exits_130() {
    if !stand_ins_read() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("cpu");
    fake_root(&root);
    let before = values(&root);
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("memlat"))
        .current_dir(dir.path())
        .env("MEMLAT_MSR_ROOT", &root)
        .env("MEMLAT_STATE_DIR", dir.path())
        .args([
            "levels",
            "--machine",
            &profile(dir.path()),
            "--iterations",
            "100000",
        ])
        .args(["--sample-ms", "5", "--prefetchers", "off"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            let status = child.wait().unwrap();
            panic!("memlat ended ({status}) before measuring: {seen}");
        }
        seen += &line;
        if line.starts_with("measuring") {
            break;
        }
    }
    if !seen.contains("prefetchers: off") {
        let _ = child.kill();
        let _ = child.wait();
        assert!(seen.contains("no documented prefetcher MSR"), "{seen}");
        return;
    }
    let changed = values(&root);
    if changed == before {
        let _ = child.kill();
        let _ = child.wait();
        panic!("nothing was written");
    }
    // SAFETY: kill only sends SIGINT to the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(values(&root), before);
}

/// A long sweep with `--prefetchers off` against the fake registers, its
/// state file in `dir`; returns the child once it has started measuring, or
/// `None` when this processor has no documented register (nothing to test).
fn long_sweep(dir: &Path, root: &Path) -> Option<std::process::Child> {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("memlat"))
        .current_dir(dir)
        .env("MEMLAT_MSR_ROOT", root)
        .env("MEMLAT_STATE_DIR", dir)
        .args(["sweep", "--from", "1K", "--to", "16M", "--ratio", "1.01"])
        .args(["--repeats", "3", "--sample-ms", "5", "--no-progress"])
        .args(["--json", "s.json", "--prefetchers", "off"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            let status = child.wait().unwrap();
            panic!("memlat ended ({status}) before measuring: {seen}");
        }
        seen += &line;
        if line.starts_with("memlat sweep:") {
            break;
        }
    }
    if !seen.contains("prefetchers: off") {
        let _ = child.kill();
        let _ = child.wait();
        assert!(seen.contains("no documented prefetcher MSR"), "{seen}");
        return None;
    }
    // Keep draining stderr so the child never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut rest = String::new();
        while stderr.read_line(&mut rest).unwrap_or(0) > 0 {}
    });
    Some(child)
}

#[test]
fn every_catchable_signal_puts_the_registers_back() {
    if !stand_ins_read() {
        return;
    }
    use std::os::unix::process::ExitStatusExt;
    let signals = [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGPIPE,
        libc::SIGSEGV,
        libc::SIGBUS,
    ];
    for signal in signals {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("cpu");
        fake_root(&root);
        let before = values(&root);
        let Some(mut child) = long_sweep(dir.path(), &root) else {
            return;
        };
        assert_ne!(
            values(&root),
            before,
            "signal {signal}: nothing was written"
        );
        assert!(dir.path().join("prefetchers.state").exists());
        // SAFETY: kill only sends a signal to the child we started.
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().unwrap();
        assert_eq!(
            values(&root),
            before,
            "signal {signal} left the registers changed"
        );
        assert!(
            !dir.path().join("prefetchers.state").exists(),
            "signal {signal}: the state file outlived a successful restore"
        );
        match signal {
            libc::SIGSEGV | libc::SIGBUS => assert_eq!(status.signal(), Some(signal)),
            _ => assert_eq!(status.code(), Some(128 + signal), "signal {signal}"),
        }
    }
}

#[test]
fn after_kill_9_prefetchers_restore_puts_them_back() {
    if !stand_ins_read() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("cpu");
    fake_root(&root);
    let before = values(&root);
    let Some(mut child) = long_sweep(dir.path(), &root) else {
        return;
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let changed = values(&root);
    assert_ne!(
        changed, before,
        "SIGKILL cannot be caught: the registers stay changed"
    );
    let state = dir.path().join("prefetchers.state");
    let recorded = std::fs::read(&state).unwrap();
    // A second run must not take the changed values for originals.
    let again = Command::new(assert_cmd::cargo::cargo_bin("memlat"))
        .env("MEMLAT_MSR_ROOT", &root)
        .env("MEMLAT_STATE_DIR", dir.path())
        .args(["run", "-n", "16K", "--prefetchers", "off"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("prefetchers --restore"), "{err}");
    assert_eq!(
        std::fs::read(&state).unwrap(),
        recorded,
        "state file untouched"
    );
    assert_eq!(values(&root), changed);
    let out = Command::new(assert_cmd::cargo::cargo_bin("memlat"))
        .env("MEMLAT_MSR_ROOT", &root)
        .env("MEMLAT_STATE_DIR", dir.path())
        .args(["prefetchers", "--restore"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(values(&root), before);
    assert!(!dir.path().join("prefetchers.state").exists());
}

#[test]
fn a_state_file_naming_other_files_or_registers_is_not_trusted() {
    if !stand_ins_read() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("cpu");
    fake_root(&root);
    let before = values(&root);
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let state = dir.path().join("prefetchers.state");
    let restore = |text: &str| {
        std::fs::write(&state, text).unwrap();
        Command::new(assert_cmd::cargo::cargo_bin("memlat"))
            .env("MEMLAT_MSR_ROOT", &root)
            .env("MEMLAT_STATE_DIR", dir.path())
            .args(["prefetchers", "--restore"])
            .output()
            .unwrap()
    };
    // Another root: the writes would go to any file the line names.
    let out = restore(&format!(
        "root {}\n0 0x0 0x4141414141414141\n",
        victim.display()
    ));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not trusted"));
    // A register memlat never changes.
    let out = restore(&format!("root {}\n0 0x10 0x1\n", root.display()));
    assert!(String::from_utf8_lossy(&out.stderr).contains("never changes"));
    // Garbage: shown, kept.
    let out = restore("root\n$$$\n");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("$$$"));
    assert!(state.exists(), "a corrupt state file is kept for the user");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(values(&root), before);
}
