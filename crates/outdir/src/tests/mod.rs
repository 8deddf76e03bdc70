use super::*;
use crate::commit::scratch;
use crate::commit::tests::LEAVE_AFTER;
use crate::marks::JOURNAL_FORMAT;
use std::io::Write;

/// Every entry of `dir` (dot files too), sorted, with its content ("<dir>" for a directory,
/// "-> TARGET" for a symbolic link).
fn entries(dir: &Path) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let content = match std::fs::read_link(&p) {
                Ok(t) => format!("-> {}", t.display()),
                Err(_) => std::fs::read_to_string(&p).unwrap_or_else(|_| "<dir>".into()),
            };
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
    std::fs::write(t.path().join("layers.csv"), "old a").unwrap();
    replace(
        t.path(),
        &[("layers.csv", b"new a"), ("summary.json", b"new b")],
    )
    .unwrap();
    assert_eq!(
        entries(t.path()),
        pairs(&[("layers.csv", "new a"), ("summary.json", "new b")])
    );
}

#[test]
fn a_directory_in_the_way_of_any_file_changes_nothing() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("layers.csv"), "old a").unwrap();
    std::fs::create_dir(t.path().join("summary.json")).unwrap();
    let before = entries(t.path());
    let e = replace(
        t.path(),
        &[("layers.csv", b"new a"), ("summary.json", b"new b")],
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("summary.json: is a directory"),
        "{e}"
    );
    assert_eq!(entries(t.path()), before);
}

/// Files that no writer of names.rs replaces together are refused before anything is
/// renamed: recovery would refuse their journal.
#[test]
fn files_of_no_writer_are_refused_before_the_commit() {
    let t = tempfile::tempdir().unwrap();
    let e = replace(t.path(), &[("layers.csv", b"a"), ("notes.txt", b"b")]).unwrap_err();
    assert!(
        e.to_string()
            .contains("layers.csv, notes.txt are not the files of one result sresim writes"),
        "{e}"
    );
    assert!(entries(t.path()).is_empty());
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

/// A reader outside sresim that holds the directory's lock shared (docs/errors.md) makes
/// a writer wait until it lets go, not fail.
#[cfg(unix)]
#[test]
fn a_writer_waits_for_readers_holding_the_lock_shared() {
    use rustix::fs::{flock, FlockOperation};
    let t = tempfile::tempdir().unwrap();
    let reader = std::fs::File::open(t.path()).unwrap();
    flock(&reader, FlockOperation::LockShared).unwrap();
    let start = std::time::Instant::now();
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(reader);
    });
    let d = OutputDir::open(t.path()).unwrap();
    assert!(start.elapsed() >= std::time::Duration::from_millis(250));
    release.join().unwrap();
    // While it writes, a reader's shared lock is not granted.
    let r = std::fs::File::open(t.path()).unwrap();
    assert!(flock(&r, FlockOperation::NonBlockingLockShared).is_err());
    drop(d);
    assert!(flock(&r, FlockOperation::NonBlockingLockShared).is_ok());
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
    let a = scratch(t.path(), "x", "tmp").0;
    let b = scratch(t.path(), "x", "tmp").0;
    assert_ne!(a, b);
    let pid = std::process::id().to_string();
    assert!(a.to_string_lossy().contains(&pid));
}

#[test]
fn staged_files_replace_together_and_vanish_when_dropped() {
    let t = tempfile::tempdir().unwrap();
    replace(
        t.path(),
        &[("layers.csv", b"old a"), ("summary.json", b"old b")],
    )
    .unwrap();
    let mut a = stage(t.path(), "layers.csv").unwrap();
    a.write_all(b"new a").unwrap();
    let mut b = stage(t.path(), "summary.json").unwrap();
    b.write_all(b"new b").unwrap();
    assert_eq!(
        entries(t.path()).len(),
        4,
        "two temporaries beside the files"
    );
    drop(b);
    let now = entries(t.path());
    assert_eq!(now.len(), 3, "b's temporary removed: {now:?}");
    assert_eq!(
        now[1..],
        pairs(&[("layers.csv", "old a"), ("summary.json", "old b")])[..]
    );
    // One file of a set alone: only its command, in its own output directory.
    let e = replace_staged(t.path(), vec![a]).unwrap_err().to_string();
    assert!(
        e.contains("written alone it would leave a mixed set"),
        "{e}"
    );
    let mut a = stage(t.path(), "layers.csv").unwrap();
    a.write_all(b"new a").unwrap();
    OutputDir::open(t.path())
        .unwrap()
        .replace_staged(vec![a])
        .unwrap();
    assert_eq!(
        entries(t.path()),
        pairs(&[("layers.csv", "new a"), ("summary.json", "old b")])
    );
}

/// A write error of a staged file names the file with its directory, through any writer
/// stacked on it.
#[cfg(unix)]
#[test]
fn a_write_error_names_the_file_and_its_directory() {
    let t = tempfile::tempdir().unwrap();
    let mut s = stage(t.path(), "records.csv").unwrap();
    // A write to a full device: /dev/full answers every write with ENOSPC.
    s.file = std::io::BufWriter::with_capacity(
        0,
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap(),
    );
    let mut w = std::io::BufWriter::new(&mut s);
    w.write_all(b"a,b\n").unwrap();
    let e = w.flush().unwrap_err().to_string();
    let want = format!("{}: cannot write: ", t.path().join("records.csv").display());
    assert!(e.starts_with(&want), "{e}");
}

/// A symbolic link, a FIFO or a device where a file goes is refused before anything is
/// written, and stays what it was.
#[cfg(unix)]
#[test]
fn links_fifos_and_devices_are_refused_and_left_alone() {
    use std::os::unix::fs::FileTypeExt;
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("target"), "kept").unwrap();
    std::os::unix::fs::symlink("target", t.path().join("summary.json")).unwrap();
    let e = replace(
        t.path(),
        &[("layers.csv", b"new a"), ("summary.json", b"new")],
    )
    .unwrap_err();
    assert!(
        e.to_string().ends_with(
            "summary.json: is a symbolic link: sresim does not replace one (name the file it points to)"
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
    assert!(std::fs::symlink_metadata(t.path().join("summary.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(t.path().join("target")).unwrap(),
        "kept"
    );
    assert!(!t.path().join("layers.csv").exists(), "nothing written");
    assert_eq!(
        std::fs::read_dir(t.path()).unwrap().count(),
        3,
        "no temporary left"
    );
}

mod kill;
mod recovery;
mod recovery_sets;
mod recovery_states;

/// A temporary of a rolled-back replacement left where recovery may not touch it, under
/// the name this process takes next (a later process of the same id): the next
/// replacement takes another name and goes through, the left file untouched.
#[test]
fn a_left_temporary_of_the_same_name_is_stepped_over() {
    let t = tempfile::tempdir().unwrap();
    let (next, _) = scratch(t.path(), "layers.csv", "tmp");
    let mut taken = Vec::new();
    // The next few names of every kind a replacement takes here (this thread is the only
    // one of this test, but other tests of the process draw N too: take many).
    let serial: u64 = next
        .file_name()
        .unwrap()
        .to_string_lossy()
        .rsplit('.')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    for n in serial + 1..serial + 40 {
        for name in ["layers.csv", "summary.json"] {
            for kind in ["tmp", "old"] {
                let p = t.path().join(crate::names::scratch_name(
                    name,
                    kind,
                    std::process::id(),
                    n,
                ));
                std::fs::write(&p, "left").unwrap();
                taken.push(p);
            }
        }
    }
    replace(t.path(), &[("layers.csv", b"a"), ("summary.json", b"b")]).unwrap();
    replace(t.path(), &[("layers.csv", b"c"), ("summary.json", b"d")]).unwrap();
    assert_eq!(
        std::fs::read_to_string(t.path().join("layers.csv")).unwrap(),
        "c"
    );
    assert_eq!(
        std::fs::read_to_string(t.path().join("summary.json")).unwrap(),
        "d"
    );
    for p in &taken {
        assert_eq!(std::fs::read_to_string(p).unwrap(), "left");
    }
}

/// One result set a directory, whole: a file written alone may not take a name of a
/// set in a directory holding another file of that set (`plot -o RUN/layers.csv`,
/// `--float-logits RUN/summary.json`, `plot -o SWEEP/points.csv`), and a set may not go
/// where another command's set sharing a name with it is (`accuracy --out RUN`). Each
/// is refused, nothing changed; anything else goes through.
#[test]
fn a_result_set_is_never_mixed_with_a_file_of_another_command() {
    let t = tempfile::tempdir().unwrap();
    let dir = |n: &str| {
        let d = t.path().join(n);
        std::fs::create_dir_all(&d).unwrap();
        d
    };
    let (run, sweep, acc, free) = (dir("run"), dir("sweep"), dir("acc"), dir("free"));
    replace(&run, &[("layers.csv", b"l"), ("summary.json", b"s")]).unwrap();
    replace(&sweep, &[("sweep.json", b"j"), ("points.csv", b"p")]).unwrap();
    replace(&acc, &[("accuracy.csv", b"a"), ("summary.json", b"s")]).unwrap();
    let snapshot = || {
        [&run, &sweep, &acc]
            .iter()
            .map(|d| entries(d))
            .collect::<Vec<_>>()
    };
    let before = snapshot();
    let alone = "written alone it would leave a mixed set";
    for (d, name) in [
        (&run, "layers.csv"),
        (&run, "summary.json"),
        (&sweep, "points.csv"),
        (&sweep, "points.parquet"),
        (&acc, "summary.json"),
    ] {
        // `plot --out`: one file, outside a command's own output directory.
        let e = replace(d, &[(name, b"<svg/>")]).unwrap_err().to_string();
        assert!(e.contains(alone) && e.lines().count() == 1, "{e}");
        // `--float-logits`, `--dump-trace`: refused where it is staged, before anything
        // is computed.
        let e = stage_file(&d.join(name)).err().unwrap().to_string();
        assert!(e.contains(alone), "{e}");
    }
    let e = replace(&run, &[("accuracy.csv", b"a"), ("summary.json", b"s")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("holds the result of `run` (layers.csv), which shares summary.json with the result of `accuracy`"),
        "{e}"
    );
    let e = OutputDir::open(&acc)
        .unwrap()
        .replace(&[("layers.csv", b"l"), ("summary.json", b"s")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("holds the result of `accuracy` (accuracy.csv)"),
        "{e}"
    );
    let e = replace(&sweep, &[("search.json", b"j"), ("points.csv", b"p")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("holds the result of `sweep` (sweep.json)"),
        "{e}"
    );
    assert_eq!(snapshot(), before, "nothing changed");
    // A figure of another name beside a set, a set's own file in its own directory, a
    // set beside one it shares no name with, a lone file of a set's name elsewhere.
    replace(&run, &[("cycles-vs-mode.svg", b"<svg/>")]).unwrap();
    OutputDir::open(&sweep)
        .unwrap()
        .replace(&[("points.csv", b"p2")])
        .unwrap();
    replace(
        &run,
        &[("memory_summary.json", b"m"), ("memory_layers.csv", b"m")],
    )
    .unwrap();
    replace(&free, &[("summary.json", b"<svg/>")]).unwrap();
    replace(&free, &[("summary.json", b"<svg/> 2")]).unwrap();
    replace(&run, &[("layers.csv", b"l2"), ("summary.json", b"s2")]).unwrap();
}

/// A command's result replacing its earlier one in its own output directory removes, in
/// the same replacement, the files of the earlier result the new set does not hold (an
/// outputs.npz, a table of the other format); a replacement of one file, or one outside a
/// command's own directory, removes nothing.
#[test]
fn a_replacement_removes_what_is_left_of_the_result_it_replaces() {
    let t = tempfile::tempdir().unwrap();
    let d = OutputDir::open(t.path()).unwrap();
    d.replace(&[
        ("layers.csv", b"1"),
        ("summary.json", b"1"),
        ("outputs.npz", b"1"),
    ])
    .unwrap();
    std::fs::write(t.path().join("notes.txt"), "mine").unwrap();
    d.replace(&[("layers.csv", b"2"), ("summary.json", b"2")])
        .unwrap();
    assert_eq!(
        entries(t.path()),
        pairs(&[
            ("layers.csv", "2"),
            ("notes.txt", "mine"),
            ("summary.json", "2")
        ])
    );
    d.replace(&[("layers.parquet", b"3"), ("summary.json", b"3")])
        .unwrap();
    assert_eq!(
        entries(t.path()),
        pairs(&[
            ("layers.parquet", "3"),
            ("notes.txt", "mine"),
            ("summary.json", "3")
        ])
    );
    d.replace(&[("summary.json", b"4")]).unwrap();
    assert!(t.path().join("layers.parquet").exists());
    replace(t.path(), &[("layers.csv", b"5"), ("summary.json", b"5")]).unwrap();
    assert!(t.path().join("layers.parquet").exists());
    // Files of a run's names beside no run result (no summary.json) are the user's: a
    // first result leaves them.
    let u = tempfile::tempdir().unwrap();
    std::fs::write(u.path().join("outputs.npz"), "mine").unwrap();
    std::fs::write(u.path().join("layers.parquet"), "mine").unwrap();
    let d = OutputDir::open(u.path()).unwrap();
    d.replace(&[("layers.csv", b"1"), ("summary.json", b"1")])
        .unwrap();
    assert_eq!(
        entries(u.path()),
        pairs(&[
            ("layers.csv", "1"),
            ("layers.parquet", "mine"),
            ("outputs.npz", "mine"),
            ("summary.json", "1")
        ])
    );
}
