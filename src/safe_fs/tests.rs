use super::*;

/// Gives the link at `path` to `nobody` (as root only): a link another user planted.
fn hand_to_nobody(path: &Path) -> bool {
    if euid() != 0 {
        eprintln!("skipped: not root, so no link can be given to another user");
        return false;
    }
    let c = cstring(path.as_os_str()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), 65534, 65534) }, 0);
    true
}

#[test]
fn directories_are_created_and_walked_through_own_links() {
    let tmp = tempfile::tempdir().unwrap();
    let deep = tmp.path().join("a/b/c");
    let dir = Dir::create_all(&deep, 0o755).unwrap();
    dir.create_new(OsStr::new("f"), 0o644).unwrap();
    assert!(deep.join("f").is_file());
    // A link of one's own, relative, with .. in it, is followed.
    std::os::unix::fs::symlink("a/./b/../b", tmp.path().join("mine")).unwrap();
    let via = Dir::open(&tmp.path().join("mine/c")).unwrap();
    assert_eq!(
        via.entry(OsStr::new("f")).unwrap().unwrap().kind,
        Kind::File(0)
    );
    // A file on the way is no directory.
    assert!(Dir::open(&deep.join("f/x")).is_err());
    // A loop ends.
    std::os::unix::fs::symlink("loop", tmp.path().join("loop")).unwrap();
    let err = Dir::open(&tmp.path().join("loop/x")).unwrap_err();
    assert!(err.to_string().contains("a loop"), "{err}");
}

#[test]
fn a_link_another_user_owns_is_never_followed_at_any_component() {
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    let planted = tmp.path().join("shared");
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    if !hand_to_nobody(&planted) {
        return;
    }
    for path in [planted.clone(), planted.join("x"), planted.join("x/y")] {
        let err = Dir::create_all(&path, 0o755).unwrap_err().to_string();
        assert!(err.contains("owned by user nobody"), "{err}");
    }
    // An ancestor, not the last component: still refused.
    let err = replace(&planted.join("f.json"), b"{}").unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    // Reached through a link of one's own that leads to it.
    std::os::unix::fs::symlink("shared", tmp.path().join("mine")).unwrap();
    assert!(Dir::open(&tmp.path().join("mine")).is_err());
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
}

#[test]
fn replace_writes_a_private_temporary_and_renames_it() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.json");
    replace(&path, b"old").unwrap();
    replace(&path, b"new").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"new");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    // Over a directory: refused, the content kept in the temporary.
    let err = replace(tmp.path(), b"x");
    assert!(err.is_err());
    let sub = tmp.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let err = replace(&sub, b"x").unwrap_err().to_string();
    assert!(
        err.contains("is a directory") && err.contains("kept in"),
        "{err}"
    );
}

#[test]
fn drawings_go_through_a_private_directory_that_is_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("p.svg");
    write_via(&path, |inner| {
        assert_ne!(inner, path.as_path());
        std::fs::write(inner, "<svg/>")?;
        Ok(())
    })
    .unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "<svg/>");
    assert!(write_via(&path, |_| anyhow::bail!("no")).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "<svg/>");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
}

#[test]
fn a_lock_is_held_once_and_removed_when_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("w.jsonl");
    let held = Lock::take(&path).unwrap();
    let err = Lock::take(&path).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
    assert!(err.to_string().contains("another memlat run"), "{err}");
    drop(held);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    let _again = Lock::take(&path).unwrap();
}

#[test]
fn names_are_listed_up_to_a_bound() {
    let tmp = tempfile::tempdir().unwrap();
    for k in 0..10 {
        std::fs::write(tmp.path().join(k.to_string()), "").unwrap();
    }
    let dir = Dir::open(tmp.path()).unwrap();
    let (names, more) = dir.names(4).unwrap();
    assert_eq!((names.len(), more), (4, true));
    let (names, more) = dir.names(100).unwrap();
    assert_eq!((names.len(), more), (10, false));
    dir.rename_new(OsStr::new("0"), OsStr::new("new")).unwrap();
    let taken = dir
        .rename_new(OsStr::new("1"), OsStr::new("new"))
        .unwrap_err();
    assert_eq!(taken.kind(), io::ErrorKind::AlreadyExists);
}
