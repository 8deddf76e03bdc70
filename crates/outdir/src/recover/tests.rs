//! Tests of the journal parser: what a writer could not have written is refused.

use super::*;

fn head(writer: &str) -> String {
    format!("{JOURNAL_FORMAT}\nwriter {writer}\npid 42\n")
}

#[test]
fn a_journal_parses_into_what_its_writer_could_write() {
    let j = parse(&(head("run") + "file 0 1 2 layers.csv\nfile 0 3 - summary.json\n")).unwrap();
    assert_eq!(j.writer.name, "run");
    assert_eq!(j.pid, 42);
    assert_eq!(
        j.files[0],
        File {
            dir: 0,
            tmp: 1,
            old: Some(2),
            name: "layers.csv".into(),
            alone: false
        }
    );
    assert_eq!(j.files[1].old, None);
    // The one user-named file of memory may hold spaces.
    let j = parse(&(head("memory") + "file 0 1 - memory_summary.json\nfile 0 2 - my trace.txt\n"))
        .unwrap();
    assert_eq!(j.files[1].name, "my trace.txt");
}

#[test]
fn anything_a_writer_could_not_write_is_refused() {
    let bad = |body: &str, want: &str| {
        let e = parse(body).unwrap_err();
        assert!(e.contains(want), "{body:?}: {e}");
    };
    bad("/tmp/a\n/tmp/b\n\n", "earlier sresim");
    bad("hello\n", "first line");
    bad(&(head("rm") + "file 0 1 - x\n"), "writer \"rm\"");
    bad(
        &format!("{JOURNAL_FORMAT}\nwriter run\npid 0\n"),
        "pid \"0\"",
    );
    bad(
        &format!("{JOURNAL_FORMAT}\nwriter run\npid -1\n"),
        "pid \"-1\"",
    );
    bad(&(head("run")), "names no file");
    // One file is replaced by one rename, never under a journal.
    for (w, f) in [
        ("run", "layers.csv"),
        ("export", "manifest.json"),
        ("accuracy", "accuracy.csv"),
        ("memory", "t.trace"),
    ] {
        bad(
            &(head(w) + &format!("file 0 1 - {f}\n")),
            &format!("it names one file ({f})"),
        );
    }
    // Paths, dot names and another command's files.
    bad(
        &(head("run") + "file 0 1 - /etc/passwd\n"),
        "not a plain file name",
    );
    bad(
        &(head("run") + "file 0 1 - ../layers.csv\n"),
        "not a plain file name",
    );
    bad(
        &(head("run") + "file 0 1 - .bashrc\n"),
        "not a plain file name",
    );
    bad(
        &(head("run") + "file 0 1 - tensors.npz\n"),
        "tensors.npz is not a file `run` writes",
    );
    bad(
        &(head("export") + "file 0 1 - notes.txt\n"),
        "notes.txt is not a file",
    );
    bad(
        &(head("memory") + "file 0 1 - a.txt\nfile 0 2 - b.txt\n"),
        "b.txt is not a file",
    );
    // Its exports go to a recorded directory together; any other name of its set there
    // is the one file the user named, and a journal has one.
    bad(
        &(head("memory")
            + "dir /tmp\nfile 0 1 - memory_summary.json\nfile 1 2 - memory_layers.csv\nfile 1 3 - memory_summary.json\n"),
        "memory_summary.json in a recorded directory is not a file `memory` exports there",
    );
    bad(
        &(head("memory")
            + "dir /tmp\nfile 0 1 - memory_summary.json\nfile 1 2 - access_list.csv\nfile 1 3 - t.trace\n"),
        "access_list.csv in a recorded directory is not a file `memory` exports there",
    );
    bad(
        &(head("memory") + "file 0 1 - memory_summary.json\nfile 0 2 - access_list.csv\n"),
        "`memory` writes access_list.csv and prefetch_list.csv together",
    );
    bad(
        &(head("memory")
            + "dir /tmp\nfile 0 1 - t.trace\nfile 1 2 - access_list.csv\nfile 1 3 - prefetch_list.csv\n"),
        "no file of its set lies in the journal's own directory",
    );
    // Numbers as a writer prints them, directories it records.
    bad(
        &(head("run") + "file 0 01 - layers.csv\n"),
        "01 is not a number",
    );
    bad(
        &(head("run") + "file 0 +1 - layers.csv\n"),
        "+1 is not a number",
    );
    bad(
        &(head("run") + "file 1 1 - layers.csv\n"),
        "1 is not a directory",
    );
    bad(
        &(head("run") + "dir /tmp\nfile 0 1 - layers.csv\n"),
        "at most 0 directories",
    );
    bad(
        &(head("memory") + "dir tmp\nfile 1 1 - access_list.csv\n"),
        "not an absolute path",
    );
    bad(
        &(head("memory") + "dir /tmp/../etc\nfile 1 1 - access_list.csv\n"),
        "without . or ..",
    );
    // Written otherwise than as a writer prints a resolved path.
    for d in ["/tmp/./adv", "/tmp/", "//tmp", "/tmp//adv", "/tmp/."] {
        bad(
            &(head("memory") + &format!("dir {d}\nfile 1 1 - access_list.csv\n")),
            "nor a doubled or trailing /",
        );
    }
    bad(
        &(head("memory") + "dir /\nfile 0 1 - access_list.csv\nfile 0 2 - prefetch_list.csv\n"),
        "no file of the journal lies in it",
    );
    bad(
        &(head("run") + "file 0 1 - layers.csv\nfile 0 2 - layers.csv\n"),
        "named twice",
    );
    bad(
        &(head("run") + "rename a b\n"),
        "not a \"dir\" or \"file\" line",
    );
    // A journal never names a file to remove (a line of a build that wrote them is
    // refused).
    let run = head("run") + "file 0 1 - layers.parquet\nfile 0 2 - summary.json\n";
    bad(
        &(run.clone() + "gone 0 layers.csv\n"),
        "not a \"dir\" or \"file\" line",
    );
    bad(
        &(run.replace(JOURNAL_FORMAT, "sresim-commit 3") + "gone 0 layers.csv\n"),
        "its first line is not",
    );
    assert_eq!(parse(&run).unwrap().files.len(), 2);
}
