//! Recovery: replacements cut between renames, export marks, planted journals.

use super::*;
use crate::marks::EXPORT_MARK_FORMAT;

/// `files` (name, content) of `dir` staged and replaced by a writer killed after
/// `renames` renames: the journal, the temporaries not yet renamed and the old links stay.
pub(super) fn killed(dir: &Path, files: &[(&str, &str)], renames: usize) {
    let staged = files
        .iter()
        .map(|(name, text)| {
            let mut s = stage(dir, name).unwrap();
            s.write_all(text.as_bytes()).unwrap();
            s
        })
        .collect();
    LEAVE_AFTER.with(|c| c.set(Some(renames)));
    replace_staged(dir, staged).unwrap();
    LEAVE_AFTER.with(|c| c.set(None));
}

/// The state a kill between two renames leaves (the journal written, one of two files
/// renamed) is detected, and the next open of the directory completes the replacement.
#[test]
fn a_replacement_cut_between_renames_is_rolled_forward() {
    let t = tempfile::tempdir().unwrap();
    replace(
        t.path(),
        &[("layers.csv", b"old a"), ("summary.json", b"old b")],
    )
    .unwrap();
    assert!(
        !interrupted(t.path()),
        "the journal is removed after the renames"
    );
    killed(
        t.path(),
        &[("layers.csv", "new a"), ("summary.json", "new b")],
        1,
    );
    assert!(interrupted(t.path()));
    let journal = std::fs::read_to_string(t.path().join(JOURNAL)).unwrap();
    assert!(
        journal.starts_with(&format!(
            "{JOURNAL_FORMAT}\nwriter run\npid {}\n",
            std::process::id()
        )),
        "{journal}"
    );
    let read = |n: &str| std::fs::read_to_string(t.path().join(n)).unwrap();
    assert_eq!(read("layers.csv"), "new a");
    assert_eq!(read("summary.json"), "old b");
    let d = OutputDir::open(t.path()).unwrap();
    assert!(!interrupted(t.path()));
    assert_eq!(
        entries(d.path()),
        pairs(&[("layers.csv", "new a"), ("summary.json", "new b")])
    );
}

/// `memory`'s exports in two other directories, one reached through a symbolic link: the
/// journal records them resolved, and recovery completes all three directories.
#[cfg(unix)]
#[test]
fn exports_in_other_directories_are_rolled_forward() {
    let t = tempfile::tempdir().unwrap();
    let (out, lists, traces) = (t.path().join("o"), t.path().join("l"), t.path().join("t"));
    for d in [&out, &lists, &traces] {
        std::fs::create_dir(d).unwrap();
    }
    std::os::unix::fs::symlink(&traces, t.path().join("via")).unwrap();
    let mut staged = Vec::new();
    // As `memory` stages them: its set by name, the trace as the file the user named.
    for (path, text) in [
        (out.join("memory_summary.json"), "s"),
        (lists.join("access_list.csv"), "a"),
        (lists.join("prefetch_list.csv"), "p"),
        (t.path().join("via/my trace.txt"), "tr"),
    ] {
        let mut s = match path.ends_with("my trace.txt") {
            true => stage_file(&path).unwrap(),
            false => stage(
                path.parent().unwrap(),
                &path.file_name().unwrap().to_string_lossy(),
            )
            .unwrap(),
        };
        s.write_all(text.as_bytes()).unwrap();
        staged.push(s);
    }
    LEAVE_AFTER.with(|c| c.set(Some(0)));
    replace_staged(&out, staged).unwrap();
    LEAVE_AFTER.with(|c| c.set(None));
    let journal = std::fs::read_to_string(out.join(JOURNAL)).unwrap();
    let real = |p: &Path| std::fs::canonicalize(p).unwrap().display().to_string();
    assert!(
        journal.contains(&format!("dir {}\ndir {}\n", real(&lists), real(&traces))),
        "{journal}"
    );
    assert!(journal.contains(" my trace.txt\n"), "{journal}");
    // The other directories are marked: readers refuse them as they refuse the
    // journal's, and a writer of one is sent to the journal's directory.
    // Each mark names the journal's directory, and the file a user named there.
    for (d, named) in [(&lists, ""), (&traces, "file my trace.txt\n")] {
        assert!(interrupted(d), "{}", d.display());
        let mark = std::fs::read_to_string(d.join(EXPORT_MARK)).unwrap();
        assert_eq!(
            mark,
            format!("sresim-commit-export 2\njournal {}\n{named}", real(&out))
        );
        let e = OutputDir::open(d).unwrap_err().to_string();
        assert!(
            e.contains(&format!(
                "unfinished replacement whose journal is in {}",
                real(&out)
            )),
            "{e}"
        );
    }
    drop(OutputDir::open(&out).unwrap());
    assert_eq!(entries(&out), pairs(&[("memory_summary.json", "s")]));
    assert_eq!(
        entries(&lists),
        pairs(&[("access_list.csv", "a"), ("prefetch_list.csv", "p")])
    );
    assert_eq!(entries(&traces), pairs(&[("my trace.txt", "tr")]));
}

/// A mark whose journal is gone, or that is not a mark sresim writes, is refused in one
/// line and left alone; a mark naming another directory is not removed by a recovery.
#[cfg(unix)]
#[test]
fn a_stale_or_foreign_export_mark_is_refused_and_left_alone() {
    let t = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(t.path()).unwrap();
    let (home, x) = (root.join("home"), root.join("x"));
    for d in [&home, &x] {
        std::fs::create_dir(d).unwrap();
    }
    for (text, want) in [
        (
            format!("sresim-commit-export 1\njournal {}\n", home.display()),
            "holds no journal of it",
        ),
        ("rm -rf /\n".to_string(), "not a mark sresim wrote"),
        (
            "sresim-commit-export 1\njournal ../home\n".to_string(),
            "not a mark sresim wrote",
        ),
    ] {
        std::fs::write(x.join(EXPORT_MARK), &text).unwrap();
        let e = OutputDir::open(&x).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
        assert_eq!(e.lines().count(), 1);
        assert_eq!(std::fs::read_to_string(x.join(EXPORT_MARK)).unwrap(), text);
        // Readers refuse the directory meanwhile.
        assert!(interrupted(&x));
    }
    // A mark naming its own directory, which holds a journal: no writer's, so its advice
    // is not to rerun the writer of that directory (which would give this line again).
    std::fs::write(x.join(JOURNAL), "sresim-commit 2\n").unwrap();
    let text = format!("{EXPORT_MARK_FORMAT}\njournal {}\n", x.display());
    std::fs::write(x.join(EXPORT_MARK), &text).unwrap();
    let e = OutputDir::open(&x).unwrap_err().to_string();
    assert!(e.contains("not a mark sresim wrote"), "{e}");
    assert_eq!(std::fs::read_to_string(x.join(EXPORT_MARK)).unwrap(), text);
}

/// A tree to plant journals in: `home` (the output directory, holding `victim`, a
/// temporary of sresim's name pattern and a dot file), `beside` (a directory next to it
/// with a file, a dot file and a dot-named temporary).
pub(super) struct Planted {
    _t: tempfile::TempDir,
    pub(super) root: PathBuf,
    pub(super) home: PathBuf,
    pub(super) beside: PathBuf,
}

pub(super) fn planted() -> Planted {
    let t = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(t.path()).unwrap();
    let home = root.join("home");
    let beside = root.join("beside");
    for d in [&home, &beside] {
        std::fs::create_dir(d).unwrap();
    }
    for (p, text) in [
        (home.join("layers.csv"), "mine"),
        (home.join(".layers.csv.tmp.42.1"), "planted"),
        (home.join(".keep"), "dot"),
        (beside.join("victim"), "victim"),
        (beside.join(".profile"), "profile"),
        (beside.join(".t"), "planted"),
        (beside.join(".access_list.csv.tmp.42.1"), "planted"),
    ] {
        std::fs::write(p, text).unwrap();
    }
    Planted {
        _t: t,
        root,
        home,
        beside,
    }
}

impl Planted {
    /// Every entry under the root: nothing may change when a journal is refused.
    pub(super) fn snapshot(&self) -> Vec<(String, String)> {
        let mut v = Vec::new();
        for d in [&self.root, &self.home, &self.beside] {
            for (n, c) in entries(d) {
                v.push((format!("{}/{n}", d.display()), c));
            }
        }
        v
    }

    /// Plants `journal` in home and opens it: the open must fail with one line containing
    /// `want`, and nothing under the root change (the journal stays).
    pub(super) fn refused(&self, journal: &str, want: &str) {
        std::fs::write(self.home.join(JOURNAL), journal).unwrap();
        let before = self.snapshot();
        let e = OutputDir::open(&self.home).unwrap_err().to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.contains(".sresim-commit: refused, nothing changed: ") && e.contains(want),
            "{journal:?}: {e}"
        );
        assert_eq!(self.snapshot(), before, "{journal:?}");
    }
}

pub(super) fn v2(writer: &str, body: &str) -> String {
    format!("{JOURNAL_FORMAT}\nwriter {writer}\npid 42\n{body}")
}

/// Journals of the format sresim wrote before (three absolute paths a file) that made
/// the next writer replace a file beside the output directory, or delete a dot file
/// elsewhere (the old link), or follow `..`: refused now, nothing touched.
#[test]
fn planted_path_journals_touch_nothing() {
    let p = planted();
    let (b, h) = (p.beside.display(), p.home.display());
    p.refused(
        &format!("{b}/.t\n{b}/victim\n\n"),
        "written by an earlier sresim",
    );
    p.refused(
        &format!("{h}/.layers.csv.tmp.42.1\n{h}/layers.csv\n{b}/.profile\n"),
        "written by an earlier sresim",
    );
    p.refused(
        &format!("{h}/../beside/.t\n{h}/../beside/victim\n\n"),
        "written by an earlier sresim",
    );
}

/// Journals of this format that name anything but the writer's own files in the
/// directory: absolute paths, `..`, dot files, another command's files, directories it
/// could not have recorded, links on the way.
#[cfg(unix)]
#[test]
fn planted_journals_naming_other_files_touch_nothing() {
    let p = planted();
    let b = p.beside.display().to_string();
    p.refused(
        &v2("run", &format!("file 0 1 - {b}/victim\n")),
        "is not a plain file name",
    );
    p.refused(
        &v2("run", "file 0 1 - ../beside/victim\n"),
        "is not a plain file name",
    );
    p.refused(&v2("run", "file 0 1 - .keep\n"), "is not a plain file name");
    p.refused(
        &v2("run", "file 0 1 - tensors.npz\n"),
        "tensors.npz is not a file `run` writes",
    );
    p.refused(
        &v2("export", "file 0 1 - layers.csv\n"),
        "layers.csv is not a file `export` writes",
    );
    // Another directory only for memory's exports, absolute and resolved; its dot files
    // are never a name.
    p.refused(
        &v2("run", &format!("dir {b}\nfile 1 1 - victim\n")),
        "at most 0 directories",
    );
    p.refused(
        &v2("memory", &format!("dir {b}\nfile 1 1 2 .profile\n")),
        "is not a plain file name",
    );
    p.refused(
        &v2(
            "memory",
            &format!(
                "dir {}/home/../beside\nfile 1 1 - access_list.csv\n",
                p.root.display()
            ),
        ),
        "without . or ..",
    );
    // Written otherwise than sresim writes a resolved path (`Path` equality would take
    // `/./`, `//` or a trailing `/` for it), or the journal's own directory, which a
    // writer records as directory 0: both once renamed the planted temporaries.
    p.refused(
        &v2(
            "memory",
            &format!(
                "dir {}/./beside\nfile 1 1 - access_list.csv\n",
                p.root.display()
            ),
        ),
        "nor a doubled or trailing /",
    );
    p.refused(
        &v2("memory", &format!("dir {b}/\nfile 1 1 - access_list.csv\n")),
        "nor a doubled or trailing /",
    );
    p.refused(
        &v2(
            "memory",
            &format!(
                "dir {}\nfile 0 2 - memory_summary.json\nfile 1 1 - layers.csv\n",
                p.home.display()
            ),
        ),
        "the journal's own directory",
    );
    std::os::unix::fs::symlink(&p.beside, p.root.join("link")).unwrap();
    p.refused(
        &v2(
            "memory",
            &format!(
                "dir {}/link\nfile 1 1 - access_list.csv\n",
                p.root.display()
            ),
        ),
        "a symbolic link on its way",
    );
}

/// The destination check of a first write applies to recovery: a journal whose file is
/// a symbolic link now (to a file elsewhere) is refused, and so is one whose temporary
/// is a link; the other file of the journal is not renamed either.
#[cfg(unix)]
#[test]
fn recovery_checks_destinations_like_a_first_write() {
    let p = planted();
    let outside = p.beside.join("victim");
    std::os::unix::fs::symlink(&outside, p.home.join("summary.json")).unwrap();
    std::fs::write(p.home.join(".summary.json.tmp.42.2"), "planted").unwrap();
    p.refused(
        &v2("run", "file 0 1 - layers.csv\nfile 0 2 - summary.json\n"),
        "summary.json: is a symbolic link",
    );
    std::fs::remove_file(p.home.join("summary.json")).unwrap();
    std::fs::remove_file(p.home.join(".summary.json.tmp.42.2")).unwrap();
    std::os::unix::fs::symlink(&outside, p.home.join(".summary.json.tmp.42.2")).unwrap();
    p.refused(
        &v2("run", "file 0 1 - layers.csv\nfile 0 2 - summary.json\n"),
        ".summary.json.tmp.42.2: not a regular file",
    );
    std::fs::remove_file(p.home.join(".summary.json.tmp.42.2")).unwrap();
    std::fs::create_dir(p.home.join(".summary.json.old.42.3")).unwrap();
    p.refused(
        &v2("run", "file 0 1 - layers.csv\nfile 0 2 3 summary.json\n"),
        ".summary.json.old.42.3: not a regular file",
    );
}

/// What a valid journal may do, and only that: a temporary of its pid renamed over its
/// file, its old link removed; a temporary of another pid, a dot file and other files
/// left alone.
#[test]
fn a_valid_journal_touches_only_its_files() {
    let p = planted();
    std::fs::write(p.home.join(".layers.csv.tmp.43.1"), "other pid").unwrap();
    std::fs::write(p.home.join(".layers.csv.old.42.9"), "old link").unwrap();
    std::fs::write(
        p.home.join(JOURNAL),
        v2("run", "file 0 2 - summary.json\nfile 0 1 9 layers.csv\n"),
    )
    .unwrap();
    drop(OutputDir::open(&p.home).unwrap());
    assert_eq!(
        entries(&p.home),
        pairs(&[
            (".keep", "dot"),
            (".layers.csv.tmp.43.1", "other pid"),
            ("layers.csv", "planted"),
        ])
    );
    assert_eq!(
        entries(&p.beside).len(),
        4,
        "nothing beside the directory touched"
    );
}

/// Files someone else made are never moved by recovery: a journal, a temporary or an old
/// link of another user is refused, nothing touched, even when the journal is one its
/// writer could have written (a `memory` journal recording the directory beside, with a
/// temporary planted there). Making a file of another user needs root; elsewhere the
/// test has nothing to plant and checks only that the user's own journal recovers.
#[cfg(unix)]
#[test]
fn files_of_another_user_are_never_moved() {
    use std::os::unix::fs::chown;
    let root_user = rustix::process::geteuid().is_root();
    let other = 54_321;
    let p = planted();
    let beside = p.beside.display().to_string();
    let memory = v2(
        "memory",
        &format!("dir {beside}\nfile 0 9 - memory_summary.json\nfile 1 2 - prefetch_list.csv\nfile 1 1 - access_list.csv\n"),
    );
    // The mark a writer leaves in its export directory before any rename.
    std::fs::write(
        p.beside.join(EXPORT_MARK),
        format!("sresim-commit-export 2\njournal {}\n", p.home.display()),
    )
    .unwrap();
    if !root_user {
        eprintln!("not root: no file of another user can be made; own journal only");
        std::fs::write(p.home.join(JOURNAL), &memory).unwrap();
        drop(OutputDir::open(&p.home).unwrap());
        assert_eq!(
            std::fs::read_to_string(p.beside.join("access_list.csv")).unwrap(),
            "planted"
        );
        return;
    }
    // The temporary beside is another user's.
    chown(
        p.beside.join(".access_list.csv.tmp.42.1"),
        Some(other),
        None,
    )
    .unwrap();
    p.refused(
        &memory,
        &format!(
            "{beside}/.access_list.csv.tmp.42.1 is owned by user {other}, not by this user (0)"
        ),
    );
    // The journal is another user's (its temporary in the directory itself).
    let run = v2("run", "file 0 2 - summary.json\nfile 0 1 - layers.csv\n");
    std::fs::write(p.home.join(JOURNAL), &run).unwrap();
    chown(p.home.join(JOURNAL), Some(other), None).unwrap();
    let before = p.snapshot();
    let e = OutputDir::open(&p.home).unwrap_err().to_string();
    assert!(
        e.contains(
            ".sresim-commit: refused, nothing changed: owned by user 54321, not by this user (0)"
        ),
        "{e}"
    );
    assert_eq!(p.snapshot(), before);
    // An old link of another user is not removed.
    std::fs::remove_file(p.home.join(JOURNAL)).unwrap();
    std::fs::write(p.home.join(".layers.csv.old.42.3"), "theirs").unwrap();
    chown(p.home.join(".layers.csv.old.42.3"), Some(other), None).unwrap();
    p.refused(
        &v2("run", "file 0 2 - summary.json\nfile 0 1 3 layers.csv\n"),
        ".layers.csv.old.42.3 is owned by user 54321",
    );
    // The same journal with the user's own files recovers.
    chown(p.home.join(".layers.csv.old.42.3"), Some(0), None).unwrap();
    drop(OutputDir::open(&p.home).unwrap());
    assert_eq!(
        std::fs::read_to_string(p.home.join("layers.csv")).unwrap(),
        "planted"
    );
    assert!(!p.home.join(".layers.csv.old.42.3").exists());
}

/// A `memory` journal recording a directory that holds no mark of it is not one sresim
/// wrote (a writer marks each directory of its exports before its first rename there):
/// planted in an output directory, it made the next `run -o` replace a file beside it.
/// Refused now, nothing touched, or, with every temporary it names still there (a writer
/// killed before its marks were all written), rolled back, nothing outside touched; with
/// the mark naming this journal's directory (and recording the user-named file) it is
/// completed.
#[cfg(unix)]
#[test]
fn recovery_renames_into_a_recorded_directory_only_under_its_mark() {
    let p = planted();
    let b = p.beside.display().to_string();
    std::fs::write(p.beside.join("summary.json"), "victim").unwrap();
    std::fs::write(p.beside.join(".summary.json.tmp.42.0"), "planted").unwrap();
    std::fs::write(p.beside.join(".prefetch_list.csv.tmp.42.2"), "planted").unwrap();
    // Each with the reports of the journal's own directory.
    let report = "file 0 9 - memory_summary.json\n";
    let named = v2(
        "memory",
        &format!("dir {b}\n{report}file 1 0 - summary.json\n"),
    );
    let listed = v2(
        "memory",
        &format!("dir {b}\n{report}file 1 1 - access_list.csv\nfile 1 2 - prefetch_list.csv\n"),
    );
    // With a file of the journal already renamed (its temporary gone): refused.
    for journal in [&named, &listed] {
        p.refused(
            journal,
            &format!("{b}: holds no mark .sresim-commit-export naming"),
        );
    }
    // With every temporary still there, it is a replacement killed before its marks were
    // all written: rolled back, nothing in the unmarked directory touched.
    std::fs::remove_file(p.home.join(JOURNAL)).unwrap();
    for journal in [&named, &listed] {
        let before = p.snapshot();
        std::fs::write(p.home.join(".memory_summary.json.tmp.42.9"), "new").unwrap();
        std::fs::write(p.home.join(JOURNAL), journal).unwrap();
        drop(OutputDir::open(&p.home).unwrap());
        assert_eq!(p.snapshot(), before, "{journal}");
    }
    // A mark naming another directory is another replacement's.
    let mark = |home: &Path, file: &str| {
        std::fs::write(
            p.beside.join(EXPORT_MARK),
            format!("sresim-commit-export 2\njournal {}\n{file}", home.display()),
        )
        .unwrap();
    };
    mark(&p.root, "");
    p.refused(&named, "holds no mark .sresim-commit-export naming");
    // The mark of this journal, recording another user-named file (or none).
    mark(&p.home, "file trace.txt\n");
    p.refused(
        &named,
        "its mark records trace.txt as the file named by the user, not summary.json",
    );
    mark(&p.home, "");
    p.refused(
        &named,
        "its mark records no file as the file named by the user",
    );
    // The mark as the writer left it: completed, the mark removed.
    mark(&p.home, "file summary.json\n");
    std::fs::write(p.home.join(JOURNAL), &named).unwrap();
    drop(OutputDir::open(&p.home).unwrap());
    let read = |n: &str| std::fs::read_to_string(p.beside.join(n)).unwrap();
    assert_eq!(read("summary.json"), "planted");
    assert!(!p.beside.join(EXPORT_MARK).exists());
    assert!(!p.home.join(JOURNAL).exists());
}

/// A writer killed after its last rename and the removal of its marks, before the journal
/// went: the recorded directories hold no mark and nothing to rename. The journal is
/// completed (removed); nothing in the unmarked directory is touched.
#[cfg(unix)]
#[test]
fn an_unmarked_directory_with_nothing_to_rename_is_left_alone() {
    let p = planted();
    let b = p.beside.display().to_string();
    std::fs::write(p.beside.join(".access_list.csv.old.42.5"), "old link").unwrap();
    std::fs::remove_file(p.beside.join(".access_list.csv.tmp.42.1")).unwrap();
    let before = entries(&p.beside);
    std::fs::write(
        p.home.join(JOURNAL),
        v2(
            "memory",
            &format!("dir {b}\nfile 0 9 - memory_summary.json\nfile 1 1 5 access_list.csv\nfile 1 2 - prefetch_list.csv\n"),
        ),
    )
    .unwrap();
    drop(OutputDir::open(&p.home).unwrap());
    assert!(!p.home.join(JOURNAL).exists());
    assert_eq!(entries(&p.beside), before);
}

/// Every writer, with or without an output directory of its own, is refused in a
/// directory holding the mark or the journal of an unfinished replacement, and the mark
/// or journal is left as it is (a writer used to replace the mark, then remove it).
#[test]
fn a_marked_or_journaled_directory_is_never_written_into() {
    let t = tempfile::tempdir().unwrap();
    let (home, x) = (t.path().join("home"), t.path().join("x"));
    std::fs::create_dir(&x).unwrap();
    killed_with_export(&home, &x);
    let mark = std::fs::read_to_string(x.join(EXPORT_MARK)).unwrap();
    let e = stage(&x, "access_list.csv").err().unwrap().to_string();
    assert!(
        e.contains("unfinished replacement whose journal is in"),
        "{e}"
    );
    let e = stage_file(&x.join("t.trace")).err().unwrap().to_string();
    assert!(
        e.contains("unfinished replacement whose journal is in"),
        "{e}"
    );
    let e = replace(&x, &[("plot.svg", b"svg")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unfinished replacement whose journal is in"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(x.join(EXPORT_MARK)).unwrap(), mark);
    assert!(!x.join("plot.svg").exists() && !x.join("t.trace").exists());
    // The journal's own directory: only a writer that opens it completes it.
    let e = stage_file(&home.join("t.trace")).err().unwrap().to_string();
    assert!(
        e.contains("holds an unfinished replacement of its files"),
        "{e}"
    );
    drop(OutputDir::open(&home).unwrap());
    assert!(!x.join(EXPORT_MARK).exists());
    assert!(stage_file(&x.join("t.trace")).is_ok());
}

/// `memory_summary.json` in `home` and `access_list.csv` in `x`, killed before the first
/// rename: the journal in `home`, the mark in `x`.
fn killed_with_export(home: &Path, x: &Path) {
    std::fs::create_dir_all(home).unwrap();
    let mut staged = Vec::new();
    for path in [home.join("memory_summary.json"), x.join("access_list.csv")] {
        let mut s = stage_file(&path).unwrap();
        s.write_all(b"new").unwrap();
        staged.push(s);
    }
    LEAVE_AFTER.with(|c| c.set(Some(0)));
    replace_staged(home, staged).unwrap();
    LEAVE_AFTER.with(|c| c.set(None));
    assert!(x.join(EXPORT_MARK).exists() && home.join(JOURNAL).exists());
}
