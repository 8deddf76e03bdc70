use super::*;

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
