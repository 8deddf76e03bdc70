//! Recovery and the set rules: two outputs at one path, another command's result and
//! another memory result kept whole, journals of one file, nothing deleted.

use super::recovery::{planted, v2, Planted};
use super::*;

/// Two files of one replacement at one path (one named twice, or through `..`), or a
/// user-named file taking a name of the set in a directory the set is written to: refused
/// before the commit, nothing written (the second rename used to replace the first).
#[test]
fn two_outputs_at_one_path_are_refused_before_the_commit() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let try_replace = |files: &[(PathBuf, bool)]| {
        let staged = files
            .iter()
            .map(|(p, named)| {
                let mut s = match named {
                    true => stage_file(p).unwrap(),
                    false => stage(
                        p.parent().unwrap(),
                        &p.file_name().unwrap().to_string_lossy(),
                    )
                    .unwrap(),
                };
                s.write_all(b"x").unwrap();
                s
            })
            .collect();
        replace_staged(&d, staged).unwrap_err().to_string()
    };
    let e = try_replace(&[
        (d.join("memory_summary.json"), false),
        (d.join("memory_summary.json"), true),
    ]);
    assert!(e.contains("two outputs of one command"), "{e}");
    let e = try_replace(&[
        (d.join("memory_summary.json"), false),
        (d.join("../d/access_list.csv"), false),
        (d.join("access_list.csv"), false),
    ]);
    assert!(e.contains("resolve to this path"), "{e}");
    let e = try_replace(&[
        (d.join("memory_layers.csv"), false),
        (d.join("memory_layers.parquet"), true),
    ]);
    assert!(
        e.contains("is one of the files `memory` writes together"),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0, "nothing written");
    // The same checks before anything is computed.
    let e = check_apart(
        "memory",
        &[
            (&d, "memory_summary.json", false),
            (&d, "prefetch_list.csv", true),
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("prefetch_list.csv: is one of the files"), "{e}");
    assert!(check_apart(
        "memory",
        &[(&d, "memory_summary.json", false), (&d, "t.trace", true)]
    )
    .is_ok());
}

/// A planted journal may not make recovery replace one file of another command's result:
/// `memory`'s user-named file taken as the run's layers.csv, or `accuracy`'s summary.json
/// (a name it shares with `run`) in a run's directory. Refused by the one-set rule of a
/// first write, nothing touched. A journal of `run` itself is completed.
#[test]
fn recovery_keeps_another_commands_result_whole() {
    let p = planted();
    std::fs::write(p.home.join("summary.json"), "run's").unwrap();
    std::fs::write(p.home.join(".summary.json.tmp.42.1"), "planted").unwrap();
    p.refused(
        &v2(
            "memory",
            "file 0 2 - memory_summary.json\nfile 0 1 - layers.csv\n",
        ),
        "layers.csv: is a file of the result `run` writes together",
    );
    p.refused(
        &v2("accuracy", "file 0 2 - accuracy.csv\nfile 0 1 - summary.json\n"),
        "holds the result of `run` (layers.csv), which shares summary.json with the result of `accuracy`",
    );
    // The writer's own other files beside it: its own result, replaced.
    std::fs::write(
        p.home.join(JOURNAL),
        v2("run", "file 0 2 - outputs.npz\nfile 0 1 - summary.json\n"),
    )
    .unwrap();
    drop(OutputDir::open(&p.home).unwrap());
    assert_eq!(
        entries(&p.home),
        pairs(&[
            (".keep", "dot"),
            (".layers.csv.tmp.42.1", "planted"),
            ("layers.csv", "mine"),
            ("summary.json", "planted"),
        ])
    );
}

/// A journal never makes recovery delete a file: a line that would name one (as a build
/// once wrote them) is refused, nothing touched; and a replacement's journal whose
/// temporaries are gone (killed at its commit point, the temporaries deleted by hand, its
/// old links there) leaves the old result whole.
#[cfg(unix)]
#[test]
fn recovery_deletes_no_file_a_journal_names() {
    let p = planted();
    std::fs::write(p.home.join("summary.json"), "old summary").unwrap();
    std::fs::write(p.home.join("outputs.npz"), "old npz").unwrap();
    p.refused(
        &v2(
            "run",
            "file 0 1 - summary.json\nfile 0 2 - layers.csv\ngone 0 outputs.npz\n",
        ),
        "not a \"dir\" or \"file\" line",
    );
    p.refused(
        "sresim-commit 3\nwriter run\npid 42\nfile 0 9 - summary.json\nfile 0 8 - outputs.npz\n",
        "its first line is not",
    );
    std::fs::remove_file(p.home.join(".layers.csv.tmp.42.1")).unwrap();
    std::fs::write(p.home.join(".layers.csv.old.42.5"), "mine").unwrap();
    std::fs::write(p.home.join(".summary.json.old.42.6"), "old summary").unwrap();
    std::fs::write(
        p.home.join(JOURNAL),
        v2("run", "file 0 1 5 layers.csv\nfile 0 2 6 summary.json\n"),
    )
    .unwrap();
    drop(OutputDir::open(&p.home).unwrap());
    assert_eq!(
        entries(&p.home),
        pairs(&[
            (".keep", "dot"),
            ("layers.csv", "mine"),
            ("outputs.npz", "old npz"),
            ("summary.json", "old summary"),
        ])
    );
}

/// No writer journals a replacement of one file (one file is one rename): a planted
/// journal naming one file of a result, with its temporary beside it, would replace that
/// file alone and leave a mixed set. Refused, nothing touched.
#[test]
fn a_journal_of_one_file_is_refused() {
    let p = planted();
    std::fs::write(p.home.join("summary.json"), "run's").unwrap();
    p.refused(
        &v2("run", "file 0 1 - layers.csv\n"),
        "it names one file (layers.csv), and a writer journals only a replacement of two files or more",
    );
    assert_eq!(
        std::fs::read_to_string(p.home.join("layers.csv")).unwrap(),
        "mine"
    );
}

/// The recorded directories of a `memory` journal, held to the rules its first write
/// applied there (`sets::whole`): the file the user named may not take a name of
/// `memory`'s own set beside another file of it (another memory result, or a pair of
/// lists), and the lists may not go beside another memory result's reports, nor the
/// reports beside lists written apart. Planted with the marks a writer leaves, such
/// journals replaced one file of another result alone; refused now, nothing touched.
/// Where the same names mix nothing (a directory holding no other file of the set), the
/// journal is completed.
#[cfg(unix)]
#[test]
fn recovery_keeps_another_memory_result_whole_in_a_recorded_directory() {
    let reports = "file 0 1 - memory_layers.csv\nfile 0 2 - memory_summary.json\n";
    let plant = |p: &Planted, holds: &[&str], journal: &str, mark: &str| {
        for n in holds {
            std::fs::write(p.beside.join(n), "theirs").unwrap();
        }
        for (n, k) in [("memory_layers.csv", 1), ("memory_summary.json", 2)] {
            std::fs::write(p.home.join(format!(".{n}.tmp.42.{k}")), "m").unwrap();
        }
        std::fs::write(
            p.beside.join(EXPORT_MARK),
            format!(
                "sresim-commit-export 2\njournal {}\n{mark}",
                p.home.display()
            ),
        )
        .unwrap();
        std::fs::write(p.home.join(JOURNAL), journal).unwrap();
    };
    let result = ["memory_layers.csv", "memory_summary.json"];
    let lists = ["access_list.csv", "prefetch_list.csv"];
    // The trace named as a file of memory's set, beside another file of that set.
    for (holds, name) in [
        (&result, "memory_layers.csv"),
        (&result, "memory_summary.json"),
        (&lists, "access_list.csv"),
    ] {
        let p = planted();
        let b = p.beside.display().to_string();
        std::fs::write(p.beside.join(format!(".{name}.tmp.42.0")), "EVIL").unwrap();
        let journal = v2("memory", &format!("dir {b}\n{reports}file 1 0 - {name}\n"));
        plant(&p, holds, &journal, &format!("file {name}\n"));
        p.refused(
            &journal,
            &format!(
                "{b}/{name}: is a file of the result `memory` writes together, and {b} holds that result"
            ),
        );
        // Where no other file of the set lies, a trace of that name is one a user may
        // name: completed.
        for n in holds.iter().filter(|n| **n != name) {
            std::fs::remove_file(p.beside.join(n)).unwrap();
        }
        drop(OutputDir::open(&p.home).unwrap());
        assert_eq!(
            std::fs::read_to_string(p.beside.join(name)).unwrap(),
            "EVIL"
        );
    }
    // The lists beside another memory result's reports.
    let p = planted();
    let b = p.beside.display().to_string();
    for (n, k) in lists.iter().zip([3, 4]) {
        std::fs::write(p.beside.join(format!(".{n}.tmp.42.{k}")), "EVIL").unwrap();
    }
    let journal = v2(
        "memory",
        &format!("dir {b}\n{reports}file 1 3 - access_list.csv\nfile 1 4 - prefetch_list.csv\n"),
    );
    plant(&p, &["memory_summary.json"], &journal, "");
    p.refused(
        &journal,
        &format!("{b}: holds a result of `memory` (memory_summary.json): access_list.csv and prefetch_list.csv written there apart from it"),
    );
    std::fs::remove_file(p.beside.join("memory_summary.json")).unwrap();
    drop(OutputDir::open(&p.home).unwrap());
    assert_eq!(
        std::fs::read_to_string(p.beside.join("access_list.csv")).unwrap(),
        "EVIL"
    );
    // The reports beside lists written apart from any result: refused as `memory -o`.
    let p = planted();
    let b = p.beside.display().to_string();
    std::fs::write(p.home.join("access_list.csv"), "theirs").unwrap();
    std::fs::write(p.beside.join(".t.trace.tmp.42.0"), "trace").unwrap();
    let journal = v2("memory", &format!("dir {b}\n{reports}file 1 0 - t.trace\n"));
    plant(&p, &[], &journal, "file t.trace\n");
    p.refused(
        &journal,
        &format!(
            "{}: holds access_list.csv, written apart from a result of `memory`",
            p.home.display()
        ),
    );
}
