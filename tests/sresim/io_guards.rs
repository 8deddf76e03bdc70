//! The one reader and the one writer (docs/errors.md, "Files are checked to be files" and
//! "Output directories"), through the binary: a file that is not a regular file is refused
//! at once wherever a config names it, an output never replaces a FIFO or a symbolic link,
//! a file-size limit is one error line, and a writer killed between two renames leaves a
//! directory that readers refuse until the next writer completes it.
#![cfg(unix)]
#![allow(clippy::disallowed_methods)] // tests and tools make their fixtures with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_sresim");

/// Runs `cmd` in `dir`; None if it has not ended within `limit` (it is then killed).
fn within(dir: &Path, args: &[&str], envs: &[(&str, &str)], limit: Duration) -> Option<Output> {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(dir)
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// The one stderr line of a run that must fail within a minute.
fn fails(dir: &Path, args: &[&str]) -> String {
    let o = within(dir, args, &[], Duration::from_secs(60))
        .unwrap_or_else(|| panic!("sresim {args:?} did not end within 60 s"));
    assert!(!o.status.success(), "sresim {args:?} succeeded");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    err
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
    assert!(ok, "mkfifo {}", p.display());
}

fn is_fifo(p: &Path) -> bool {
    std::fs::symlink_metadata(p).unwrap().file_type().is_fifo()
}

const RUN: &[&str] = &[
    "run",
    "-w",
    "lenet5",
    "--synthetic-inputs",
    "--samples",
    "1",
];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

/// A FIFO named by a config key is refused at once (it used to block the read forever),
/// with a message that names the key and says what the file is.
#[test]
fn a_fifo_named_by_a_config_key_is_refused_at_once() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    mkfifo(&d.join("f"));
    let e = fails(
        d,
        &with(RUN, &["--functional", "--set", "device.error_table=f"]),
    );
    assert!(
        e.contains("device.error_table: f: cannot read: is a FIFO, not a regular file"),
        "{e}"
    );
    let e = fails(d, &with(RUN, &["--set", "chip.preset=f"]));
    assert!(
        e.contains("chip.preset: f: cannot read: is a FIFO, not a regular file"),
        "{e}"
    );
    // A preset whose area table is a FIFO: named as such (it used to say "does not exist"),
    // and blamed on the preset file that names it.
    let isaac = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/chip/isaac.toml"),
    )
    .unwrap();
    let preset: String = isaac
        .lines()
        .map(|l| {
            if l.starts_with("area_table") {
                "area_table = \"f\"".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(d.join("p.toml"), preset).unwrap();
    let e = fails(d, &with(RUN, &["--set", "chip.preset=p.toml"]));
    assert!(
        e.contains("p.toml: area_table: f: is a FIFO, not a regular file"),
        "{e}"
    );
    // A device preset in the config's device/ directory.
    std::fs::create_dir(d.join("device")).unwrap();
    mkfifo(&d.join("device/mine.toml"));
    std::fs::write(d.join("c.toml"), "[device]\npreset = \"mine\"\n").unwrap();
    let e = fails(d, &with(RUN, &["--functional", "-c", "c.toml"]));
    assert!(
        e.contains("device/mine.toml: cannot read: is a FIFO, not a regular file"),
        "{e}"
    );
}

/// A symbolic link to /dev/zero is followed and refused as a device: nothing is read
/// (it used to grow without end).
#[test]
fn a_link_to_dev_zero_is_refused_as_a_device() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::os::unix::fs::symlink("/dev/zero", d.join("z.toml")).unwrap();
    let e = fails(d, &with(RUN, &["-c", "z.toml"]));
    assert!(
        e.contains("z.toml: cannot read config: is a device, not a regular file"),
        "{e}"
    );
    let e = fails(d, &with(RUN, &["--set", "chip.preset=z.toml"]));
    assert!(
        e.contains("chip.preset: z.toml: cannot read: is a device"),
        "{e}"
    );
    let e = fails(
        d,
        &with(RUN, &["--functional", "--set", "device.error_table=z.toml"]),
    );
    assert!(
        e.contains("device.error_table: z.toml: cannot read: is a device"),
        "{e}"
    );
}

/// `--dump-trace` onto a FIFO is refused and the FIFO stays one (it used to be replaced by
/// a regular file); `--float-logits` onto a symbolic link is refused and the link and its
/// target stay as they were (the link used to be replaced).
#[test]
fn outputs_never_replace_a_fifo_or_a_link() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    mkfifo(&d.join("trace"));
    let e = fails(
        d,
        &["memory", "--workload", "resnet18", "--dump-trace", "trace"],
    );
    assert!(
        e.contains("--dump-trace: trace: not a regular file: cannot replace it"),
        "{e}"
    );
    assert!(is_fifo(&d.join("trace")));
    mkfifo(&d.join("lists"));
    let e = fails(
        d,
        &[
            "memory",
            "--workload",
            "resnet18",
            "--dump-access-list",
            "lists",
        ],
    );
    assert!(e.contains("lists is not a directory"), "{e}");
    assert!(is_fifo(&d.join("lists")));

    std::fs::write(d.join("target.npy"), "kept").unwrap();
    std::os::unix::fs::symlink("target.npy", d.join("l.npy")).unwrap();
    let e = fails(
        d,
        &["accuracy", "--samples", "1", "--float-logits", "l.npy"],
    );
    assert!(
        e.contains("--float-logits: l.npy: is a symbolic link: sresim does not replace one"),
        "{e}"
    );
    assert!(std::fs::symlink_metadata(d.join("l.npy"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(d.join("target.npy")).unwrap(),
        "kept"
    );
}

/// Dot-prefixed entries of `dir` (temporaries, old links, the journal).
fn dot_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect()
}

/// Under a file-size limit the write fails with EFBIG (SIGXFSZ is ignored): one error
/// line, status 1, no temporary left, and the output directory it created removed again.
/// (It used to be killed by the signal, leaving its temporaries.)
#[test]
fn a_file_size_limit_is_one_error_line() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let script =
        format!("ulimit -f 1; exec {BIN} run -w lenet5 --synthetic-inputs --samples 2 --out o");
    let o = Command::new("sh")
        .args(["-c", &script])
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("o/layers.csv: cannot write: File too large"),
        "{err}"
    );
    assert!(!d.join("o").exists(), "the directory it created is removed");
    assert!(dot_files(d).is_empty());
}

/// A writer killed between the renames of a result (the test hook aborts the process
/// after the first one) leaves the journal: readers refuse the directory, whose layers.csv
/// is new beside an old summary.json, and the next writer completes the replacement and
/// leaves no temporary, link or journal behind.
#[test]
fn a_kill_between_renames_is_refused_then_completed() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let run = |samples: &str, envs: &[(&str, &str)]| {
        within(
            d,
            &with(&RUN[..4], &["--samples", samples, "--out", "o"]),
            envs,
            Duration::from_secs(120),
        )
        .expect("ends")
    };
    assert!(run("1", &[]).status.success());
    let killed = run("2", &[("SRESIM_TEST_ABORT_AFTER_RENAMES", "1")]);
    assert!(
        killed.status.code().is_none(),
        "killed by a signal: {killed:?}"
    );
    assert!(d.join("o/.sresim-commit").exists());
    let e = fails(d, &["compare", "o/layers.csv", "o/layers.csv"]);
    assert!(
        e.contains("o holds an unfinished replacement of its files"),
        "{e}"
    );
    let o = run("2", &[]);
    assert!(o.status.success(), "{o:?}");
    assert!(
        dot_files(&d.join("o")).is_empty(),
        "{:?}",
        dot_files(&d.join("o"))
    );
    // The completed result is whole: what a clean run into another directory writes.
    let clean = within(
        d,
        &with(&RUN[..4], &["--samples", "2", "--out", "clean"]),
        &[],
        Duration::from_secs(120),
    )
    .unwrap();
    assert!(clean.status.success());
    for f in ["layers.csv", "summary.json"] {
        assert_eq!(
            std::fs::read(d.join("o").join(f)).unwrap(),
            std::fs::read(d.join("clean").join(f)).unwrap(),
            "{f}"
        );
    }
}

/// A text file past the bound (64 MiB) is refused with one line, without being read (a
/// sparse file: its size is all there is).
#[test]
fn a_config_past_the_bound_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let f = std::fs::File::create(d.join("big.toml")).unwrap();
    f.set_len((64 << 20) + 1).unwrap();
    let e = fails(d, &with(RUN, &["-c", "big.toml"]));
    assert!(
        e.contains("big.toml: cannot read config: larger than 67108864 bytes"),
        "{e}"
    );
}

/// `memory` replaces its reports and its trace in one step: killed after the first
/// rename, the journal in --out lists the trace too, and the next writer of --out puts
/// the trace of the killed run in place (what a clean run writes).
#[test]
fn memory_reports_and_trace_are_one_replacement() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let memory = |out: &str, trace: &str, envs: &[(&str, &str)]| {
        let args = [
            "memory",
            "--workload",
            "resnet18",
            "--batch",
            "2",
            "--out",
            out,
            "--dump-trace",
            trace,
        ];
        within(d, &args, envs, Duration::from_secs(120)).expect("ends")
    };
    std::fs::write(d.join("t.trace"), "old").unwrap();
    let killed = memory("o", "t.trace", &[("SRESIM_TEST_ABORT_AFTER_RENAMES", "1")]);
    assert!(
        killed.status.code().is_none(),
        "killed by a signal: {killed:?}"
    );
    assert!(d.join("o/.sresim-commit").exists());
    assert_eq!(std::fs::read_to_string(d.join("t.trace")).unwrap(), "old");
    // Any writer of o completes the replacement first.
    let o = within(d, &with(RUN, &["--out", "o"]), &[], Duration::from_secs(60));
    assert!(o.unwrap().status.success());
    assert!(!d.join("o/.sresim-commit").exists());
    assert!(memory("clean", "clean.trace", &[]).status.success());
    assert_eq!(
        std::fs::read(d.join("t.trace")).unwrap(),
        std::fs::read(d.join("clean.trace")).unwrap()
    );
    assert!(dot_files(d).is_empty() && dot_files(&d.join("o")).is_empty());
}

/// `memory --dump-access-list` puts files in a second directory: killed between the
/// renames, that directory holds a new access_list.csv beside an old prefetch_list.csv.
/// It carries the mark of the replacement until it is complete, so its readers refuse
/// it and a writer of it is sent to the directory holding the journal; the next writer
/// of --out completes both directories.
#[test]
fn a_killed_memory_export_directory_is_refused_until_completed() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let memory = |batch: &str, out: &str, dump: &str, envs: &[(&str, &str)]| {
        let args = [
            "memory",
            "--workload",
            "resnet18",
            "--batch",
            batch,
            "--out",
            out,
            "--dump-access-list",
            dump,
        ];
        within(d, &args, envs, Duration::from_secs(120)).expect("ends")
    };
    assert!(memory("1", "md", "mdx", &[]).status.success());
    let old_prefetch = std::fs::read(d.join("mdx/prefetch_list.csv")).unwrap();
    let killed = memory(
        "2",
        "md",
        "mdx",
        &[("SRESIM_TEST_ABORT_AFTER_RENAMES", "3")],
    );
    assert!(killed.status.code().is_none(), "killed: {killed:?}");
    assert!(d.join("md/.sresim-commit").exists());
    assert!(d.join("mdx/.sresim-commit-export").exists());
    // Mixed: the first export renamed, the second not yet.
    assert_eq!(
        std::fs::read(d.join("mdx/prefetch_list.csv")).unwrap(),
        old_prefetch
    );
    // A reader of the export directory refuses it.
    let plot = ["plot", "mdx/access_list.csv", "--x", "step", "--y", "bytes"];
    let p = within(d, &plot, &[], Duration::from_secs(60)).unwrap();
    let e = String::from_utf8_lossy(&p.stderr);
    assert!(!p.status.success());
    assert!(e.contains("mdx holds an unfinished replacement"), "{e}");
    // A writer of it is sent to the directory of the journal, and changes nothing.
    let r = within(
        d,
        &with(RUN, &["--out", "mdx"]),
        &[],
        Duration::from_secs(60),
    )
    .unwrap();
    let e = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success());
    assert!(
        e.contains("unfinished replacement whose journal is in"),
        "{e}"
    );
    assert!(e.contains("/md:") || e.contains("/md "), "{e}");
    assert!(!d.join("mdx/layers.csv").exists());
    // The next writer of md completes both directories and removes the mark.
    let md = within(
        d,
        &with(RUN, &["--out", "md"]),
        &[],
        Duration::from_secs(60),
    );
    assert!(md.unwrap().status.success());
    assert!(!d.join("md/.sresim-commit").exists());
    assert!(!d.join("mdx/.sresim-commit-export").exists());
    assert!(memory("2", "clean", "cleanx", &[]).status.success());
    for f in ["access_list.csv", "prefetch_list.csv"] {
        assert_eq!(
            std::fs::read(d.join("mdx").join(f)).unwrap(),
            std::fs::read(d.join("cleanx").join(f)).unwrap(),
            "{f}"
        );
    }
    assert!(
        dot_files(&d.join("mdx")).is_empty(),
        "{:?}",
        dot_files(&d.join("mdx"))
    );
}

/// A journal planted in a shared output directory is data: one that names a file beside
/// the directory (the format sresim wrote before: absolute paths), or a dot file elsewhere
/// as an old link, used to make the next `run -o` replace or delete it. Now the run is
/// refused in one line and nothing changes, the planted journal included.
#[test]
fn a_planted_journal_makes_the_next_writer_touch_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(t.path()).unwrap();
    std::fs::create_dir(d.join("o")).unwrap();
    std::fs::write(d.join("victim"), "victim").unwrap();
    std::fs::write(d.join(".profile"), "profile").unwrap();
    std::fs::write(d.join(".t"), "planted").unwrap();
    let shown = d.display();
    for journal in [
        format!("{shown}/.t\n{shown}/victim\n{shown}/.profile\n"),
        "sresim-commit 2\nwriter run\npid 7\nfile 0 1 - ../victim\n".to_string(),
        "sresim-commit 2\nwriter run\npid 7\nfile 0 1 - tensors.npz\n".to_string(),
    ] {
        std::fs::write(d.join("o/.sresim-commit"), &journal).unwrap();
        let e = fails(&d, &with(RUN, &["--out", "o"]));
        assert!(
            e.starts_with("error: o/.sresim-commit: refused, nothing changed: "),
            "{journal:?}: {e}"
        );
        let read = |n: &str| std::fs::read_to_string(d.join(n)).unwrap();
        assert_eq!(
            (read("victim"), read(".profile"), read(".t")),
            ("victim".into(), "profile".into(), "planted".into())
        );
        assert_eq!(read("o/.sresim-commit"), journal);
        assert_eq!(std::fs::read_dir(d.join("o")).unwrap().count(), 1);
    }
}

/// An accuracy shard streams records.csv to its temporary: under a file-size limit the
/// error names the file with its directory (it said `records.csv: cannot write`).
#[test]
fn a_shard_past_a_file_size_limit_names_its_directory() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let script = format!(
        "ulimit -f 16; exec {BIN} accuracy --samples 100 --modes dense -q --sample-range 0..100 --out s"
    );
    let o = Command::new("sh")
        .args(["-c", &script])
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: s/records.csv: cannot write: File too large"),
        "{err}"
    );
    assert!(!d.join("s").exists(), "the directory it created is removed");
}

/// The trained LeNet-5 bundle: a memory run of it takes a moment.
fn lenet_bundle() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("workloads/lenet5-mnist")
        .display()
        .to_string()
}

/// Every file of a directory (name, content), dot files included.
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// A `memory` killed between its renames leaves the mark of its journal (in mo) in its
/// export directory mx. Every writer of mx is refused until mo is completed, with or
/// without an --out of its own, for the lists or a trace, and mx is left as it was, the
/// mark included: such writers used to exit 0 and remove the mark, so that completing mo
/// later left mx with one list of batch 2 beside one of batch 1.
#[test]
fn every_writer_of_a_marked_export_directory_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let w = lenet_bundle();
    let memory = |args: &[&str], envs: &[(&str, &str)]| {
        let all = with(&["memory", "--workload", &w, "-q"], args);
        within(d, &all, envs, Duration::from_secs(120)).expect("ends")
    };
    let lists = ["-o", "mo", "--dump-access-list", "mx", "--batch"];
    assert!(memory(&with(&lists, &["1"]), &[]).status.success());
    let killed = memory(
        &with(&lists, &["2"]),
        &[("SRESIM_TEST_ABORT_AFTER_RENAMES", "3")],
    );
    assert!(killed.status.code().is_none(), "killed: {killed:?}");
    assert!(d.join("mx/.sresim-commit-export").exists());
    let before = files_of(&d.join("mx"));
    let point = ["--capacity", "1MiB", "--bandwidth", "1GB/s"];
    for args in [
        vec!["-o", "other", "--dump-access-list", "mx", "--batch", "1"],
        with(&["-o", "other", "--dump-trace", "mx/t.trace"], &point),
        vec!["--dump-access-list", "mx", "--batch", "1"],
        with(&["--dump-trace", "mx/t.trace"], &point),
    ] {
        let e = fails(d, &with(&["memory", "--workload", &w, "-q"], &args));
        assert!(
            e.contains("mx/.sresim-commit-export: its files are part of an unfinished replacement whose journal is in"),
            "{args:?}: {e}"
        );
        assert_eq!(files_of(&d.join("mx")), before, "{args:?}");
        assert!(!d.join("other").exists(), "{args:?}");
    }
    // The next writer of mo completes mx: both lists of batch 2, as a clean run writes.
    assert!(memory(&["-o", "mo", "--batch", "1"], &[]).status.success());
    assert!(!d.join("mx/.sresim-commit-export").exists());
    let clean = [
        "-o",
        "clean",
        "--dump-access-list",
        "cleanx",
        "--batch",
        "2",
    ];
    assert!(memory(&clean, &[]).status.success());
    assert_eq!(files_of(&d.join("mx")), files_of(&d.join("cleanx")));
}

/// Two outputs of one `memory` run at one path: the trace used to replace
/// memory_summary.json (or access_list.csv) in the same commit, one of them lost, and the
/// command exit 0. Refused in one line before anything is written; a trace of another
/// name beside the set is fine.
#[test]
fn two_outputs_of_one_memory_run_never_share_a_path() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let w = lenet_bundle();
    std::fs::create_dir(d.join("D")).unwrap();
    let point = ["--capacity", "1MiB", "--bandwidth", "1GB/s"];
    let base = ["memory", "--workload", &w, "-q"];
    for (args, path) in [
        (
            vec!["-o", "D", "--dump-trace", "D/memory_summary.json"],
            "D/memory_summary.json",
        ),
        (
            vec![
                "--dump-trace",
                "D/access_list.csv",
                "--dump-access-list",
                "D",
            ],
            "D/access_list.csv",
        ),
        // Not written by this run (csv), but a name of the set there.
        (
            vec!["-o", "D", "--dump-trace", "D/memory_layers.parquet"],
            "D/memory_layers.parquet",
        ),
    ] {
        let e = fails(d, &with(&with(&base, &args), &point));
        assert!(
            e.starts_with(&format!("error: --dump-trace: {path}: "))
                && e.contains("name another file"),
            "{args:?}: {e}"
        );
        assert_eq!(
            std::fs::read_dir(d.join("D")).unwrap().count(),
            0,
            "{args:?}"
        );
    }
    let ok = with(
        &base,
        &[
            "-o",
            "D",
            "--dump-trace",
            "D/t.trace",
            "--dump-access-list",
            "D",
        ],
    );
    let o = within(d, &with(&ok, &point), &[], Duration::from_secs(120)).unwrap();
    assert!(o.status.success(), "{o:?}");
    assert_eq!(std::fs::read_dir(d.join("D")).unwrap().count(), 5);
}

/// A `memory` journal planted in an output directory, recording a directory beside it
/// with a temporary of the journal's pid there: the next `run -o` used to replace that
/// directory's summary.json (or access_list.csv). A real writer marks the directory before
/// any rename; without the mark the journal is refused, nothing touched, or, with every
/// temporary it names still there (a writer killed before its marks), rolled back: the
/// journal goes, nothing beside is touched, and the run writes its result.
#[test]
fn a_planted_memory_journal_never_replaces_a_file_beside() {
    let t = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(t.path()).unwrap();
    std::fs::create_dir(d.join("out")).unwrap();
    std::fs::create_dir(d.join("victim")).unwrap();
    let read = |p: String| std::fs::read_to_string(d.join(p)).unwrap();
    for name in ["summary.json", "access_list.csv"] {
        std::fs::write(d.join("victim").join(name), "VICTIM").unwrap();
        std::fs::write(d.join(format!("victim/.{name}.tmp.777.0")), "planted").unwrap();
        let journal = format!(
            "sresim-commit 2\nwriter memory\npid 777\ndir {}\nfile 1 0 - {name}\nfile 0 9 - memory_summary.json\n",
            d.join("victim").display()
        );
        // A file of it renamed already (its temporary gone): refused.
        let renamed = journal.clone();
        std::fs::write(d.join("out/.sresim-commit"), &renamed).unwrap();
        let e = fails(&d, &with(RUN, &["-q", "--out", "out"]));
        assert!(
            e.starts_with("error: out/.sresim-commit: refused, nothing changed: ")
                && e.contains("holds no mark .sresim-commit-export"),
            "{name}: {e}"
        );
        assert_eq!(read("out/.sresim-commit".into()), renamed);
        // Nothing renamed yet: rolled back.
        std::fs::write(d.join("out/.memory_summary.json.tmp.777.9"), "new").unwrap();
        std::fs::write(d.join("out/.sresim-commit"), &journal).unwrap();
        let o = within(
            &d,
            &with(RUN, &["-q", "--out", "out"]),
            &[],
            Duration::from_secs(60),
        )
        .unwrap();
        assert!(o.status.success(), "{name}: {o:?}");
        assert!(!d.join("out/.sresim-commit").exists());
        assert!(!d.join("out/.memory_summary.json.tmp.777.9").exists());
        assert!(d.join("out/layers.csv").is_file());
        assert_eq!(read(format!("victim/{name}")), "VICTIM");
        assert_eq!(read(format!("victim/.{name}.tmp.777.0")), "planted");
    }
}

/// `--out FILE` where FILE is a regular file: said so, not "cannot create: File exists".
#[test]
fn an_output_directory_that_is_a_file_is_said_to_be_one() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("F"), "mine").unwrap();
    let e = fails(t.path(), &with(RUN, &["--out", "F"]));
    assert!(e.contains("error: F: not a directory"), "{e}");
    assert_eq!(std::fs::read_to_string(t.path().join("F")).unwrap(), "mine");
}

/// A local ./workloads/NAME/ whose manifest.json cannot be read (a FIFO, a link to
/// /dev/zero, a directory, absent) is the user's: `run --workload NAME` refuses it by its
/// file, and never runs the repository's bundle of that name in its place; a shape file
/// `./workloads/NAME.toml` in any form likewise. `sresim workloads` lists each with what
/// is wrong rather than leave it out.
#[test]
fn a_local_workload_that_cannot_be_read_is_never_passed_over() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let w = d.join("workloads");
    // Each local entry takes the name of one of the repository's bundles, but x.
    let cases = [
        (
            "fmnist-cnn",
            "fmnist-cnn/manifest.json",
            "is a FIFO, not a regular file",
        ),
        (
            "fmnist-cnn-ssl",
            "fmnist-cnn-ssl/manifest.json",
            "is a device, not a regular file",
        ),
        (
            "fmnist-resnet20",
            "fmnist-resnet20/manifest.json",
            "is a directory, not a file",
        ),
        (
            "lenet5-mnist-ssl",
            "lenet5-mnist-ssl/manifest.json",
            "does not exist",
        ),
        ("x", "x.toml", "is a FIFO, not a regular file"),
        (
            "fmnist-vit",
            "fmnist-vit.toml",
            "is a device, not a regular file",
        ),
        // The entry itself no folder: a link to a drive not mounted, a FIFO, a file.
        (
            "lenet5-mnist",
            "lenet5-mnist/manifest.json",
            "does not exist",
        ),
        (
            "fmnist-vit-relu",
            "fmnist-vit-relu/manifest.json",
            "is not a directory",
        ),
        (
            "fmnist-resnet20-pruned",
            "fmnist-resnet20-pruned/manifest.json",
            "is not a directory",
        ),
    ];
    for dir in [
        "fmnist-cnn",
        "fmnist-cnn-ssl",
        "fmnist-resnet20",
        "lenet5-mnist-ssl",
    ] {
        std::fs::create_dir_all(w.join(dir)).unwrap();
    }
    mkfifo(&w.join("fmnist-cnn/manifest.json"));
    std::os::unix::fs::symlink("/dev/zero", w.join("fmnist-cnn-ssl/manifest.json")).unwrap();
    std::fs::create_dir(w.join("fmnist-resnet20/manifest.json")).unwrap();
    mkfifo(&w.join("x.toml"));
    std::os::unix::fs::symlink("/dev/zero", w.join("fmnist-vit.toml")).unwrap();
    std::os::unix::fs::symlink("/mnt/not-mounted/lenet5-mnist", w.join("lenet5-mnist")).unwrap();
    mkfifo(&w.join("fmnist-vit-relu"));
    std::fs::write(w.join("fmnist-resnet20-pruned"), "x").unwrap();
    for (name, file, why) in cases {
        let e = fails(d, &["run", "--workload", name, "-q", "-o", "ob"]);
        assert!(
            e.starts_with(&format!("error: workloads/{file}: ")) && e.contains(why),
            "{name}: {e}"
        );
        assert!(!d.join("ob").exists(), "{name}: nothing written");
    }
    let o = within(d, &["workloads"], &[], Duration::from_secs(120)).expect("workloads ends");
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8(o.stdout).unwrap();
    for (name, file, why) in cases {
        let row = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} not listed:\n{out}"));
        assert!(
            row.contains(&format!("(unreadable: workloads/{file}: ")) && row.contains(why),
            "{name}: {row}"
        );
    }
    assert!(is_fifo(&w.join("x.toml")) && is_fifo(&w.join("fmnist-cnn/manifest.json")));
}
