use super::*;
use crate::commit::{scratch, write_journal};
use std::io::Write;

/// Every entry of `dir` (dot files too), sorted, with its content ("<dir>" for a directory).
fn entries(dir: &Path) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let content = std::fs::read_to_string(&p).unwrap_or_else(|_| "<dir>".into());
            (name, content)
        })
        .collect();
    v.sort();
    v
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn replace_writes_every_file_and_leaves_no_scratch() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.csv"), "old a").unwrap();
    replace(t.path(), &[("a.csv", b"new a"), ("b.json", b"new b")]).unwrap();
    assert_eq!(
        entries(t.path()),
        pairs(&[("a.csv", "new a"), ("b.json", "new b")])
    );
}

#[test]
fn a_directory_in_the_way_of_any_file_changes_nothing() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.csv"), "old a").unwrap();
    std::fs::create_dir(t.path().join("b.json")).unwrap();
    let before = entries(t.path());
    let e = replace(t.path(), &[("a.csv", b"new a"), ("b.json", b"new b")]).unwrap_err();
    assert!(e.to_string().contains("b.json: is a directory"), "{e}");
    assert_eq!(entries(t.path()), before);
}

#[test]
fn a_second_writer_of_a_locked_directory_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    let first = OutputDir::open(&out).unwrap();
    let e = OutputDir::open(&out).unwrap_err().to_string();
    if cfg!(unix) {
        assert!(e.contains("another sresim process is writing"), "{e}");
        assert_eq!(e.lines().count(), 1);
    }
    first.replace(&[("x", b"1")]).unwrap();
    drop(first);
    // The lock goes with the handle.
    let again = OutputDir::open(&out).unwrap();
    again.replace(&[("x", b"2")]).unwrap();
    assert_eq!(entries(&out), pairs(&[("x", "2")]));
}

#[test]
fn a_directory_created_for_nothing_is_removed_again() {
    let t = tempfile::tempdir().unwrap();
    let unused = t.path().join("unused");
    drop(OutputDir::open(&unused.join("deeper")).unwrap());
    assert!(!unused.exists());
    // One that existed before stays, written or not.
    std::fs::create_dir(&unused).unwrap();
    drop(OutputDir::open(&unused).unwrap());
    assert!(unused.is_dir());
    let used = t.path().join("used");
    OutputDir::open(&used).unwrap().mark_written();
    assert!(used.is_dir());
}

#[test]
fn temporaries_are_unique_per_call() {
    let t = tempfile::tempdir().unwrap();
    let a = scratch(t.path(), "x", "tmp");
    let b = scratch(t.path(), "x", "tmp");
    assert_ne!(a, b);
    let pid = std::process::id().to_string();
    assert!(a.to_string_lossy().contains(&pid));
}

#[test]
fn staged_files_replace_together_and_vanish_when_dropped() {
    let t = tempfile::tempdir().unwrap();
    replace(t.path(), &[("a", b"old a"), ("b", b"old b")]).unwrap();
    let mut a = stage(t.path(), "a").unwrap();
    a.write_all(b"new a").unwrap();
    let mut b = stage(t.path(), "b").unwrap();
    b.write_all(b"new b").unwrap();
    assert_eq!(
        entries(t.path()).len(),
        4,
        "two temporaries beside the files"
    );
    drop(b);
    let now = entries(t.path());
    assert_eq!(now.len(), 3, "b's temporary removed: {now:?}");
    assert_eq!(now[1..], pairs(&[("a", "old a"), ("b", "old b")])[..]);
    replace_staged(t.path(), vec![a]).unwrap();
    assert_eq!(entries(t.path()), pairs(&[("a", "new a"), ("b", "old b")]));
}

/// A symbolic link, a FIFO or a device where a file goes is refused before anything is
/// written, and stays what it was.
#[cfg(unix)]
#[test]
fn links_fifos_and_devices_are_refused_and_left_alone() {
    use std::os::unix::fs::FileTypeExt;
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("target"), "kept").unwrap();
    std::os::unix::fs::symlink("target", t.path().join("link")).unwrap();
    let e = replace(t.path(), &[("a", b"new a"), ("link", b"new")]).unwrap_err();
    assert!(
        e.to_string().ends_with(
            "link: is a symbolic link: sresim does not replace one (name the file it points to)"
        ),
        "{e}"
    );
    let fifo = t.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let e = stage_file(&fifo).err().unwrap();
    assert!(e.to_string().contains("fifo: not a regular file"), "{e}");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    let e = stage_file(Path::new("/dev/null")).err().unwrap();
    assert!(
        e.to_string().contains("/dev/null: not a regular file"),
        "{e}"
    );
    assert!(std::fs::symlink_metadata(t.path().join("link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(t.path().join("target")).unwrap(),
        "kept"
    );
    assert!(!t.path().join("a").exists(), "nothing written");
    assert_eq!(
        std::fs::read_dir(t.path()).unwrap().count(),
        3,
        "no temporary left"
    );
}

/// The state a kill between two renames leaves (the journal written, one of two files
/// renamed) is detected, and the next open of the directory completes the replacement.
#[test]
fn a_replacement_cut_between_renames_is_rolled_forward() {
    let t = tempfile::tempdir().unwrap();
    replace(t.path(), &[("a", b"old a"), ("b", b"old b")]).unwrap();
    assert!(
        !interrupted(t.path()),
        "the journal is removed after the renames"
    );
    let mut staged = Vec::new();
    let mut temps = Vec::new();
    let mut dst = Vec::new();
    for (name, bytes) in [("a", b"new a"), ("b", b"new b")] {
        let mut s = stage(t.path(), name).unwrap();
        s.write_all(bytes).unwrap();
        s.flush().unwrap();
        temps.push(s.tmp.0[0].clone());
        dst.push(s.target().to_path_buf());
        staged.push(s);
    }
    write_journal(t.path(), &temps, &dst, &[None, None]).unwrap();
    std::fs::rename(&temps[0], &dst[0]).unwrap();
    // Killed here: nothing runs the destructors.
    std::mem::forget(staged);
    assert!(interrupted(t.path()));
    assert_eq!(std::fs::read_to_string(&dst[0]).unwrap(), "new a");
    assert_eq!(std::fs::read_to_string(&dst[1]).unwrap(), "old b");
    let d = OutputDir::open(t.path()).unwrap();
    assert!(!interrupted(t.path()));
    assert_eq!(entries(d.path()), pairs(&[("a", "new a"), ("b", "new b")]));
}

/// A journal sresim did not write (a line that names no temporary) is refused by name.
#[test]
fn a_foreign_journal_is_refused() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join(JOURNAL), "/etc/passwd\n/tmp/x\n\n").unwrap();
    let e = OutputDir::open(t.path()).unwrap_err().to_string();
    assert!(
        e.contains(".sresim-commit: a line names no temporary beside its destination"),
        "{e}"
    );
}
