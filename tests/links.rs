//! A link or a FIFO planted at an output path (issue 28): memlat as root in a
//! shared directory must never create or write a file through a link that
//! someone else planted, nor hang on a FIFO. Every command that writes a file
//! gets a dangling link and a FIFO at each of its output paths; each refuses
//! at once with exit 2 and one line naming the flag, and nothing is created
//! at the link's target. (The remembered cache is written without a check
//! first; its replace() is tested in src/cli/files.rs.)

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/curves/amd-epyc-zen3-fc-thp-b.json")
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Every command that writes, with `{}` where the output path goes.
fn commands() -> Vec<(&'static str, Vec<String>)> {
    let fix = fixture().display().to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let quick = ["--repeats", "1", "--sample-ms", "1"];
    let mut list = vec![
        (
            "--json",
            s(&["sweep", "--to", "16K", "--no-progress", "--json", "{}"]),
        ),
        (
            "--csv",
            s(&["sweep", "--to", "16K", "--no-progress", "--csv", "{}"]),
        ),
        (
            "--plot",
            s(&["sweep", "--to", "16K", "--no-progress", "--plot", "{}.svg"]),
        ),
        ("-o", s(&["run", "-n", "16K", "-o", "{}"])),
        (
            "--plot",
            s(&["run", "-n", "16K", "--distribution", "--plot", "{}.svg"]),
        ),
        (
            "-o",
            s(&["bandwidth", "--sizes", "16K", "--threads", "1", "-o", "{}"]),
        ),
        (
            "--plot",
            s(&[
                "bandwidth",
                "--sizes",
                "16K",
                "--threads",
                "1",
                "--plot",
                "{}.svg",
            ]),
        ),
        (
            "-o",
            s(&["characterize", "--tiny", "--stages", "doctor", "-o", "{}"]),
        ),
        ("-o", s(&["plot", &fix, "-o", "{}.svg"])),
        ("-o", s(&["report", &fix, "-o", "{}"])),
        ("-o", s(&["merge", &fix, "-o", "{}"])),
        ("-o", s(&["compare", &fix, &fix, "-o", "{}"])),
    ];
    for (_, args) in &mut list {
        if ["sweep", "run", "bandwidth"].contains(&args[0].as_str()) {
            args.extend(s(&quick));
        }
    }
    list
}

/// Runs `args` with `{}` replaced by `path`: exit 2, one line naming `flag`.
fn refused(dir: &Path, args: &[String], path: &Path, flag: &str, says: &str) {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{}", &path.display().to_string()))
        .collect();
    let out = Command::cargo_bin("memlat")
        .unwrap()
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir)
        .args(&args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: ") && last.contains(flag) && last.contains(says),
        "{args:?}: wanted {flag} and '{says}' in: {err}"
    );
}

#[test]
fn a_planted_dangling_link_at_any_output_is_refused_and_nothing_is_created() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (n, (flag, args)) in commands().iter().enumerate() {
        let target = dir.join(format!("created-{n}"));
        let link = dir.join(format!("out-{n}"));
        // A plot's name carries its extension: the link is planted there.
        let planted = if args.iter().any(|a| a == "{}.svg") {
            dir.join(format!("out-{n}.svg"))
        } else {
            link.clone()
        };
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        refused(dir, args, &link, flag, "symbolic link");
        assert!(!target.exists(), "{args:?} created {}", target.display());
    }
}

#[test]
fn a_planted_fifo_at_any_output_is_refused_without_hanging() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (n, (flag, args)) in commands().iter().enumerate() {
        let fifo = dir.join(format!("fifo-{n}"));
        let planted = if args.iter().any(|a| a == "{}.svg") {
            dir.join(format!("fifo-{n}.svg"))
        } else {
            fifo.clone()
        };
        mkfifo(&planted);
        let says = if args[0] == "characterize" {
            "not a directory"
        } else {
            "a FIFO"
        };
        refused(dir, args, &fifo, flag, says);
    }
}

#[test]
fn a_link_planted_inside_the_characterize_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ch");
    std::fs::create_dir(&out).unwrap();
    let target = tmp.path().join("created");
    std::os::unix::fs::symlink(&target, out.join("doctor.json")).unwrap();
    let args: Vec<String> = ["characterize", "--tiny", "--stages", "doctor", "-o", "{}"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    refused(tmp.path(), &args, &out, "doctor.json", "symbolic link");
    assert!(!target.exists());
}

/// Whether links can be planted as another user here (root gives them to
/// `nobody` with lchown); says why not otherwise.
fn as_root(test: &str) -> bool {
    // SAFETY: geteuid has no failure mode.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("{test}: skipped: needs root, to give a planted link to another user (nobody)");
        return false;
    }
    true
}

/// Plants a link at `link` to `target`, owned by `nobody` (uid 65534).
fn plant_as_nobody(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
    let c = std::ffi::CString::new(link.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; lchown changes the link itself.
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), 65534, 65534) }, 0);
}

/// A sticky, world-writable directory, as /tmp is.
fn shared_dir(root: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let shared = root.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    shared
}

fn run_in(dir: &Path, cache: &Path, args: &[String]) -> std::process::Output {
    Command::cargo_bin("memlat")
        .unwrap()
        .current_dir(dir)
        .env("XDG_CACHE_HOME", cache)
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

#[test]
fn a_link_another_user_planted_at_any_component_is_never_followed() {
    if !as_root("issue 37 #4") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let shared = shared_dir(tmp.path());
    let victim = tmp.path().join("victim");
    std::fs::create_dir_all(victim.join("sub")).unwrap();
    // A `memlat-results` planted in a shared working directory.
    plant_as_nobody(&victim, &shared.join("memlat-results"));
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let quick = ["--repeats", "1", "--sample-ms", "1"];
    let mut sweep = s(&["sweep", "--to", "16K", "--no-progress"]);
    sweep.extend(s(&quick));
    let mut levels = s(&["levels", "--iterations", "1", "--sample-ms", "1"]);
    levels.extend(s(&["--plateaus", "probe"]));
    for (args, flag) in [(sweep, "--json"), (levels, "--csv")] {
        let out = run_in(&shared, tmp.path(), &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(flag) && err.contains("owned by user nobody"),
            "{args:?}: {err}"
        );
    }
    // Any ancestor of a named file, not only its last component.
    plant_as_nobody(&victim, &shared.join("up"));
    let fix = fixture().display().to_string();
    for (args, flag) in [
        (s(&["run", "-n", "16K", "-o", "up/r.json"]), "-o/--output"),
        (
            s(&["run", "-n", "16K", "-o", "up/sub/r.json"]),
            "-o/--output",
        ),
        (
            s(&["sweep", "--to", "16K", "--json", "up/sub/s.json"]),
            "--json",
        ),
        (s(&["report", &fix, "-o", "up/r.html"]), "-o/--output"),
        (s(&["plot", &fix, "-o", "up/sub/p.svg"]), "-o/--output"),
    ] {
        let out = run_in(&shared, tmp.path(), &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(flag) && err.contains("nobody"),
            "{args:?}: {err}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(&victim).unwrap().collect();
    assert_eq!(left.len(), 1, "only sub/ in the victim: {left:?}");
    assert_eq!(std::fs::read_dir(victim.join("sub")).unwrap().count(), 0);
}

#[test]
fn a_heatmap_is_drawn_in_a_private_directory_no_link_can_reach() {
    if !as_root("issue 37 #1") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let shared = shared_dir(tmp.path());
    let secret = tmp.path().join("secret");
    std::fs::write(&secret, "precious").unwrap();
    let plot = shared.join("c.svg");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("memlat"))
        .args(["c2c", "--no-progress", "--plot"])
        .arg(&plot)
        .env("XDG_CACHE_HOME", tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The name memlat 0.2 drew into, planted while it measures.
    plant_as_nobody(&secret, &shared.join(format!(".{}.c.svg", child.id())));
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "precious",
        "{err}"
    );
    if out.status.success() {
        assert!(std::fs::read_to_string(&plot).unwrap().starts_with("<svg"));
    } else {
        eprintln!("c2c did not run here ({err}); the secret is intact");
    }
    // Nothing but the plot, the planted link and no private directory left.
    let names: Vec<String> = std::fs::read_dir(&shared)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with(".memlat-")),
        "{names:?}"
    );
}
