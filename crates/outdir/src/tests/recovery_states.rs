//! Recovery and the states a journal's files can be in (recover/states.rs): a state no
//! writer and no killed recovery leaves is refused, nothing touched; every state they do
//! leave is completed, stale temporaries of earlier writers beside it or not.

use super::recovery::{killed, planted, v2};
use super::*;

/// Opens `dir`: refused in one line containing `want`, nothing in it changed.
fn refused_in(dir: &Path, want: &str) {
    let before = entries(dir);
    let e = OutputDir::open(dir).unwrap_err().to_string();
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains(".sresim-commit: refused, nothing changed: ") && e.contains(want),
        "{e}"
    );
    assert_eq!(entries(dir), before);
}

const NEW: [(&str, &str); 2] = [("layers.csv", "new a"), ("summary.json", "new b")];

/// A planted journal of two files whose second temporary is gone (read as renamed
/// already) and whose first is there replaced that first file alone: a foreign
/// layers.csv beside the run's summary.json, or a manifest.json beside a bundle's old
/// tensors.npz. No writer leaves it: both rename in the journal's line order, and remove
/// their old links only after the journal. Refused, nothing touched.
#[test]
fn a_journal_that_would_replace_one_file_alone_is_refused() {
    let p = planted();
    std::fs::write(p.home.join("summary.json"), "run's").unwrap();
    // The earlier line's temporary there, the later's gone.
    p.refused(
        &v2("run", "file 0 1 - layers.csv\nfile 0 2 - summary.json\n"),
        "/home/.layers.csv.tmp.42.1 is there while",
    );
    p.refused(
        &v2("run", "file 0 1 5 layers.csv\nfile 0 2 6 summary.json\n"),
        "after it in the journal, is gone: a writer renames its temporaries in the journal's order",
    );
    // Both temporaries there, a recorded old link gone.
    std::fs::write(p.home.join(".summary.json.tmp.42.2"), "planted").unwrap();
    std::fs::write(p.home.join(".summary.json.old.42.6"), "run's").unwrap();
    p.refused(
        &v2("run", "file 0 1 5 layers.csv\nfile 0 2 6 summary.json\n"),
        ".layers.csv.old.42.5: the old link it records for layers.csv is gone",
    );
    assert_eq!(
        std::fs::read_to_string(p.home.join("layers.csv")).unwrap(),
        "mine"
    );
    // Two files under one number: a writer numbers each file once.
    p.refused(
        &v2("run", "file 0 1 - layers.csv\nfile 0 2 1 summary.json\n"),
        "1 numbers two of its files",
    );
    // The exporter's bundle: its manifest alone.
    let t = tempfile::tempdir().unwrap();
    let b = t.path();
    std::fs::write(b.join("manifest.json"), "old manifest").unwrap();
    std::fs::write(b.join("tensors.npz"), "old tensors").unwrap();
    std::fs::write(b.join(".manifest.json.tmp.4242.1"), "{\"name\":\"x\"}").unwrap();
    std::fs::write(
        b.join(JOURNAL),
        "sresim-commit 2\nwriter export\npid 4242\nfile 0 1 - manifest.json\nfile 0 2 - tensors.npz\n",
    )
    .unwrap();
    refused_in(b, "after it in the journal, is gone");
}

/// A real journal of a replacement killed after its first rename (a new layers.csv
/// beside the old summary.json, or beside none), with its `pid` edited or two names
/// swapped: none of the temporaries it names was there, so it was "completed" by
/// renaming nothing, and removed, leaving the mixed set unmarked for every reader.
/// Refused now (its old links are gone, or another temporary of its names stands where
/// its own is gone), the journal kept; the journal as written is completed.
#[test]
fn a_real_journal_with_its_pid_or_names_edited_is_refused() {
    let pid = std::process::id();
    for old in [true, false] {
        for edit in ["pid", "swap"] {
            let t = tempfile::tempdir().unwrap();
            let d = t.path();
            if old {
                replace(d, &[("layers.csv", b"old a"), ("summary.json", b"old b")]).unwrap();
            }
            killed(d, &NEW, 1);
            let text = std::fs::read_to_string(d.join(JOURNAL)).unwrap();
            let edited = match edit {
                "pid" => text.replace(&format!("pid {pid}\n"), &format!("pid {}\n", pid + 1)),
                _ => text
                    .replace("layers.csv", "@")
                    .replace("summary.json", "layers.csv")
                    .replace('@', "summary.json"),
            };
            assert_ne!(edited, text);
            std::fs::write(d.join(JOURNAL), &edited).unwrap();
            refused_in(
                d,
                match old {
                    true => "the old link it records for",
                    false => "its pid or names are not its writer's",
                },
            );
            std::fs::write(d.join(JOURNAL), &text).unwrap();
            drop(OutputDir::open(d).unwrap());
            assert_eq!(entries(d), pairs(&NEW), "{old} {edit}");
        }
    }
    // Three files, the names of the first two swapped: the third's temporary is still
    // there, and a temporary of this pid under the other line's number stands where the
    // first line's is gone.
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let three = [NEW[0], NEW[1], ("outputs.npz", "new c")];
    killed(d, &three, 1);
    let text = std::fs::read_to_string(d.join(JOURNAL)).unwrap();
    let swapped = text
        .replace("layers.csv", "@")
        .replace("summary.json", "layers.csv")
        .replace('@', "summary.json");
    std::fs::write(d.join(JOURNAL), swapped).unwrap();
    refused_in(d, "its pid or names are not its writer's");
}

/// A real journal whose temporaries were deleted by hand after a kill (before or after
/// its first rename): a destination still the file its old link keeps was never renamed
/// over, so the journal is refused, the links and the files left as they are (it was
/// completed: the links, the only copy of the old files, removed and a mixed set left
/// unmarked).
#[cfg(unix)]
#[test]
fn a_real_journal_whose_temporaries_were_deleted_is_refused() {
    let pid = std::process::id();
    for (renames, deleted) in [(1, "summary.json"), (0, "layers.csv")] {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        replace(d, &[("layers.csv", b"old a"), ("summary.json", b"old b")]).unwrap();
        killed(d, &NEW, renames);
        let text = std::fs::read_to_string(d.join(JOURNAL)).unwrap();
        let tmp = std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().into_string().unwrap())
            .find(|n| n.starts_with(&format!(".{deleted}.tmp.{pid}.")))
            .unwrap();
        std::fs::remove_file(d.join(tmp)).unwrap();
        let before = entries(d);
        refused_in(d, "the temporary was removed, not renamed");
        assert_eq!(entries(d), before, "{renames}");
        assert_eq!(std::fs::read_to_string(d.join(JOURNAL)).unwrap(), text);
    }
}

/// Temporaries of writers killed before their journal (dot files nothing removes:
/// another process's, or one of this pid under a number its journal does not use) beside
/// a real journal killed before, between or after its renames: it is completed, the stale
/// temporaries left as they are. The one state where they stop it: a journal that records
/// no old link (a first write) killed after its last rename, before it was removed, holds
/// nothing of its own, as a journal whose pid was edited; refused, nothing changed, and
/// completed once the stale temporaries are deleted (docs/errors.md).
#[test]
fn stale_temporaries_beside_a_real_journal_leave_it_recoverable() {
    let pid = std::process::id();
    let stale = [
        format!(".layers.csv.tmp.{}.0", pid + 1),
        format!(".summary.json.tmp.{}.1", pid + 1),
        format!(".summary.json.tmp.{pid}.999999"),
    ];
    for (old, renames) in [
        (true, 0),
        (true, 1),
        (true, 2),
        (false, 0),
        (false, 1),
        (false, 2),
    ] {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        if old {
            replace(d, &[("layers.csv", b"old a"), ("summary.json", b"old b")]).unwrap();
        }
        for s in &stale {
            std::fs::write(d.join(s), "stale").unwrap();
        }
        killed(d, &NEW, renames.min(1));
        if renames == 2 {
            // The writer's last rename, then the kill.
            let own = format!(".summary.json.tmp.{pid}.");
            let tmp = entries(d)
                .into_iter()
                .map(|(n, _)| n)
                .find(|n| n.starts_with(&own) && !stale.contains(n))
                .unwrap();
            std::fs::rename(d.join(tmp), d.join("summary.json")).unwrap();
        }
        if !old && renames == 2 {
            refused_in(d, "its pid or names are not its writer's");
            for s in &stale {
                std::fs::remove_file(d.join(s)).unwrap();
            }
        }
        drop(OutputDir::open(d).unwrap_or_else(|e| panic!("{old} {renames}: {e}")));
        let mut want = pairs(&NEW);
        if old || renames < 2 {
            want.extend(stale.iter().map(|s| (s.clone(), "stale".to_string())));
            want.sort();
        }
        assert_eq!(entries(d), want, "{old} {renames}");
    }
}
