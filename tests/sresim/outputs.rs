//! Output directories (docs/errors.md, "Output directories"): a command replaces all the
//! files of its result or none of them, one process at a time writes a directory, a
//! damaged or partial sweep directory is repaired or merged without losing a point, a
//! rebuilt bundle is never mixed with the old one's results, and a closed stdout ends a
//! command quietly. Every case runs the real binary.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{fails, ok, s, sresim, BIN};

use ndarray::{Array2, Array4};
use ndarray_npy::NpzWriter;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Every entry of `dir`, dot files included, with its bytes (empty for a directory).
fn everything(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read(&p).unwrap_or_default())
        })
        .collect();
    v.sort();
    v
}

/// A two-layer bundle (conv 2->4 3x3 on 5x5, fc 100->3, one sample) whose manifest
/// `source` is `source` and whose weights are multiplied by `scale`.
fn write_bundle(dir: &Path, source: &str, scale: f32) {
    std::fs::create_dir_all(dir).unwrap();
    let manifest = format!(
        r#"{{"name": "tiny", "source": "{source}",
      "layers": [
        {{"name": "conv", "kind": "conv", "in_channels": 2, "out_channels": 4,
         "kernel": [3, 3], "stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "groups": 1,
         "input_shape": [2, 5, 5], "weight": "conv.weight", "input": "conv.input"}},
        {{"name": "fc", "kind": "fc", "in_features": 100, "out_features": 3,
         "weight": "fc.weight", "input": "fc.input"}}]}}"#
    );
    std::fs::write(dir.join("manifest.json"), manifest).unwrap();
    let f = |i: usize| ((i * 7919) % 13) as f32 - 6.0;
    let sparse = |v: f32| if v.abs() < 3.0 { 0.0 } else { v * scale };
    let cw = Array4::from_shape_fn((4, 2, 3, 3), |(a, b, c, d)| {
        sparse(f(a * 18 + b * 9 + c * 3 + d))
    });
    let ci = Array4::from_shape_fn((1, 2, 5, 5), |(_, c, h, w)| f(c * 25 + h * 5 + w).max(0.0));
    let fw = Array2::from_shape_fn((3, 100), |(o, i)| sparse(f(o * 100 + i)));
    let fi = Array2::from_shape_fn((1, 100), |(_, i)| f(i).max(0.0));
    let mut npz = NpzWriter::new(std::fs::File::create(dir.join("tensors.npz")).unwrap());
    npz.add_array("conv.weight", &cw).unwrap();
    npz.add_array("conv.input", &ci).unwrap();
    npz.add_array("fc.weight", &fw).unwrap();
    npz.add_array("fc.input", &fi).unwrap();
    npz.finish().unwrap();
}

/// Runs `args` with writes beyond `kib` KiB per file failing (EFBIG, as a full disk
/// fails them with ENOSPC): `ulimit -f`, with SIGXFSZ ignored so the write returns an
/// error instead of killing the process.
fn with_file_size_limit(kib: u64, args: &[&str]) -> Output {
    Command::new("bash")
        .arg("-c")
        .arg(format!("trap '' XFSZ; ulimit -f {kib}; exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(args)
        .output()
        .unwrap()
}

/// A sweep whose append of a point fails part way (here a file-size limit; a full disk
/// alike) exits with one line and leaves points.csv ending in a whole row, so `plot`,
/// which follows a sweep's points.csv without the lock, still reads it.
#[test]
fn sweep_whose_append_fails_leaves_no_torn_row() {
    let dir = tempfile::tempdir().unwrap();
    let grid = common::write(
        dir.path(),
        "k.toml",
        "workloads = [\"lenet5\"]\nmodes = [\"dense\", \"sre\"]\nsamples = 1\n\
         [axes]\n\"ou.rows\" = [2, 4, 8, 9, 16]\n\"ou.cols\" = [4, 8]\n",
    );
    let out = dir.path().join("sw");
    let o = with_file_size_limit(
        4,
        &[
            "sweep",
            "--grid",
            s(&grid),
            "--out",
            s(&out),
            "-q",
            "--threads",
            "1",
        ],
    );
    let e = fails(&o);
    assert!(e.contains("points.csv: cannot append: "), "{e}");
    let points = out.join("points.csv");
    let text = std::fs::read_to_string(&points).unwrap();
    let tail = &text[text.len().saturating_sub(80)..];
    assert!(text.ends_with('\n'), "torn last row: {tail:?}");
    // Every row has the header's width (the reader refuses a short record).
    let (header, rows) = common::read_csv(&points);
    assert!(!rows.is_empty(), "no point was written before the limit");
    assert!(rows.iter().all(|r| r.len() == header.len()));
    let svg = dir.path().join("p.svg");
    ok(&sresim(&[
        "plot",
        s(&out),
        "--x",
        "ou.rows",
        "--y",
        "cycles",
        "--where",
        "ou.cols=4",
        "-o",
        s(&svg),
        "-q",
    ]));
    // The cut-off point is run again by --resume.
    ok(&sresim(&[
        "sweep",
        "--grid",
        s(&grid),
        "--out",
        s(&out),
        "--resume",
        "-q",
        "--threads",
        "1",
    ]));
}

#[test]
fn run_that_cannot_write_summary_json_keeps_the_old_layers_csv() {
    let dir = tempfile::tempdir().unwrap();
    // A long `source` makes summary.json (which records it) far larger than layers.csv.
    let bundle = dir.path().join("b");
    write_bundle(&bundle, &"x".repeat(6000), 1.0);
    let run = |out: &Path| {
        vec!["run", "--workload", s(&bundle), "-q", "--out", s(out)]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let fresh = dir.path().join("fresh");
    ok(&sresim(
        &run(&fresh).iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    let size = |n: &str| std::fs::metadata(fresh.join(n)).unwrap().len();
    // layers.csv fits under the limit, summary.json does not.
    let kib = size("layers.csv").div_ceil(1024);
    assert!(
        size("summary.json") > kib * 1024 + 1024,
        "summary.json too small"
    );

    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("layers.csv"), "network,layer\nold,run\n").unwrap();
    std::fs::write(out.join("summary.json"), "{\"old\": true}\n").unwrap();
    let before = everything(&out);
    let args = run(&out);
    let o = with_file_size_limit(kib, &args.iter().map(String::as_str).collect::<Vec<_>>());
    let e = fails(&o);
    assert!(e.contains("summary.json: cannot write"), "{e}");
    assert_eq!(everything(&out), before, "the directory changed");
}

#[test]
fn run_with_a_directory_where_summary_json_goes_keeps_the_old_layers_csv() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("summary.json")).unwrap();
    std::fs::write(out.join("layers.csv"), "network,layer\nold,run\n").unwrap();
    let before = everything(&out);
    let e = fails(&sresim(&[
        "run",
        "--workload",
        "lenet5",
        "--modes",
        "sre",
        "-q",
        "--out",
        s(&out),
    ]));
    assert_eq!(everything(&out), before, "the directory changed");
    assert!(e.contains("summary.json: is a directory"), "{e}");
}

#[test]
fn memory_that_cannot_write_a_file_changes_nothing_and_leaves_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let args = |out: &Path| {
        [
            "memory",
            "--workload",
            "resnet18",
            "--capacity",
            "1MiB,16MiB",
            "--out",
            s(out),
        ]
        .map(String::from)
    };
    let fresh = dir.path().join("fresh");
    ok(&sresim(&args(&fresh).each_ref().map(String::as_str)));
    let sizes: Vec<u64> = everything(&fresh)
        .iter()
        .map(|(_, b)| b.len() as u64)
        .collect();
    let largest = *sizes.iter().max().unwrap();
    assert!(largest > 2048, "{sizes:?}");

    let out = dir.path().join("out");
    ok(&sresim(&args(&out).each_ref().map(String::as_str)));
    std::fs::write(out.join("memory_summary.json"), "{\"old\": true}\n").unwrap();
    let before = everything(&out);
    let o = with_file_size_limit(
        (largest - 1) / 1024,
        &args(&out).each_ref().map(String::as_str),
    );
    let e = fails(&o);
    assert!(e.contains("cannot write"), "{e}");
    assert_eq!(everything(&out), before, "the directory changed");
}

#[test]
fn memory_leaves_another_writers_temporary_alone() {
    // Temporaries were named .NAME.tmp, the same in every process: one run renamed the
    // other's half-written file into place.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    for name in ["memory_layers.csv", "memory_summary.json"] {
        std::fs::write(out.join(format!(".{name}.tmp")), "another writer's").unwrap();
    }
    ok(&sresim(&[
        "memory",
        "--workload",
        "resnet18",
        "--out",
        s(&out),
    ]));
    for name in ["memory_layers.csv", "memory_summary.json"] {
        let tmp = std::fs::read_to_string(out.join(format!(".{name}.tmp"))).unwrap();
        assert_eq!(tmp, "another writer's");
        assert_ne!(std::fs::read_to_string(out.join(name)).unwrap(), tmp);
    }
}

/// Kills the child when dropped, so a failed assertion leaves no process behind.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_second_writer_of_a_directory_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut long = Running(
        Command::new(BIN)
            .args(["run", "--workload", "vgg16", "--engine", "reference", "-q"])
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // The directory appears when the run takes its lock, once its inputs are checked.
    let t0 = Instant::now();
    while !out.exists() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(long.0.try_wait().unwrap().is_none(), "the long run ended");
    let grid = dir.path().join("g.toml");
    std::fs::write(&grid, "workloads = [\"lenet5\"]\nmodes = [\"sre\"]\n").unwrap();
    let second: [&[&str]; 4] = [
        &["run", "--workload", "lenet5", "-q", "--out", s(&out)],
        &["memory", "--workload", "resnet18", "--out", s(&out)],
        &["sweep", "-g", s(&grid), "-q", "-o", s(&out)],
        &["merge", s(&out), "-o", s(&out)],
    ];
    for args in second {
        let e = fails(&sresim(args));
        assert!(
            e.contains("another sresim process is writing this directory"),
            "{args:?}: {e}"
        );
        assert!(out.read_dir().unwrap().next().is_none(), "{args:?} wrote");
    }
    assert_eq!(out.read_dir().unwrap().count(), 0);
    drop(long);
    // The lock ends with the process that held it, however it ended.
    ok(&sresim(&[
        "run",
        "--workload",
        "lenet5",
        "-q",
        "--out",
        s(&out),
    ]));
}

/// 2 x 2 points of the lenet5 zoo network, dense and sre.
const SMALL: &str = r#"
workloads = ["lenet5"]
modes = ["dense", "sre"]
[axes]
"ou.rows" = [4, 16]
ou.cols = [8, 4]
"#;

fn sweep(grid: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["sweep", "-g", s(grid), "-o", s(out), "-q"];
    args.extend(extra);
    sresim(&args)
}

#[test]
fn resume_repairs_a_points_csv_cut_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("g.toml");
    std::fs::write(&grid, SMALL).unwrap();
    let full = dir.path().join("full");
    ok(&sweep(&grid, &full, &[]));
    let whole = std::fs::read(full.join("points.csv")).unwrap();
    let header = whole.iter().position(|&b| b == b'\n').unwrap() + 1;
    let second_line = header + whole[header..].iter().position(|&b| b == b'\n').unwrap() + 1;
    let cuts = [
        0,
        header / 2,
        header - 1,
        header,
        header + 7,
        second_line,
        whole.len() / 2,
        whole.len() - 1,
    ];
    for cut in cuts {
        let d = dir.path().join(format!("cut{cut}"));
        std::fs::create_dir(&d).unwrap();
        std::fs::copy(full.join("sweep.json"), d.join("sweep.json")).unwrap();
        std::fs::write(d.join("points.csv"), &whole[..cut]).unwrap();
        ok(&sweep(&grid, &d, &["--resume"]));
        let repaired = std::fs::read(d.join("points.csv")).unwrap();
        assert!(repaired == whole, "cut at byte {cut}: points.csv differs");
        // And a second resume finds nothing to do.
        let again = sresim(&["sweep", "-g", s(&grid), "-o", s(&d), "--resume"]);
        assert!(ok(&again).contains("0 run, 4 already done"), "cut {cut}");
    }
}

#[test]
fn merge_never_leaves_fewer_points_than_the_output_held() {
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("g.toml");
    std::fs::write(&grid, SMALL).unwrap();
    let full = dir.path().join("full");
    ok(&sweep(&grid, &full, &[]));
    let before = everything(&full);
    let shard = dir.path().join("s1");
    ok(&sweep(&grid, &shard, &["--shard", "1/3"]));
    let said = ok(&sresim(&["merge", s(&shard), "--partial", "-o", s(&full)]));
    assert!(said.contains("merged 4 of 4 points"), "{said}");
    assert_eq!(everything(&full), before);
    // Without --partial too: the points already there count.
    ok(&sresim(&["merge", s(&shard), "-o", s(&full)]));
    assert_eq!(everything(&full), before);
    // A partial directory grows by what the merge brings.
    let part = dir.path().join("part");
    ok(&sweep(&grid, &part, &["--shard", "0/3"]));
    // Shard 0/3 holds 2 points, 1/3 one.
    let grown = ok(&sresim(&["merge", s(&shard), "--partial", "-o", s(&part)]));
    assert!(grown.contains("merged 3 of 4 points"), "{grown}");
    let same = ok(&sresim(&["merge", s(&shard), "--partial", "-o", s(&part)]));
    assert!(same.contains("merged 3 of 4 points"), "{same}");
}

#[test]
fn a_rebuilt_bundle_is_another_grid_for_resume_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("b");
    write_bundle(&bundle, "first build", 1.0);
    let grid = dir.path().join("g.toml");
    std::fs::write(
        &grid,
        "workloads = [\"./b\"]\nmodes = [\"sre\"]\n[axes]\n\"ou.rows\" = [4, 8]\n",
    )
    .unwrap();
    let old = dir.path().join("old");
    ok(&sweep(&grid, &old, &["--shard", "0/2"]));
    // Same name, same shapes, other weights.
    write_bundle(&bundle, "first build", 2.0);
    let e = fails(&sweep(&grid, &old, &["--shard", "0/2", "--resume"]));
    assert!(e.contains("fingerprint"), "{e}");
    let new = dir.path().join("new");
    ok(&sweep(&grid, &new, &["--shard", "1/2"]));
    let merged: PathBuf = dir.path().join("merged");
    let e = fails(&sresim(&["merge", s(&old), s(&new), "-o", s(&merged)]));
    assert!(e.contains("different grids"), "{e}");
    // The unchanged bundle keeps its fingerprint.
    let again = dir.path().join("again");
    ok(&sweep(&grid, &again, &["--shard", "0/2"]));
    ok(&sresim(&["merge", s(&again), s(&new), "-o", s(&merged)]));
}

/// Runs `args` with stdout a pipe whose reading end is closed as soon as the process has
/// started; returns the outcome of the first attempt in which a write met the closed
/// pipe (a process that wrote everything before the close exits 0: tried again).
fn with_closed_stdout(args: &[&str]) -> Output {
    // The pipe is closed right after the spawn; on a loaded machine the child may still
    // write first, and then it either succeeds or (compare) fails for its own reason.
    // Try again until a write meets the closed pipe; the last attempt is what is judged.
    let mut last = None;
    for _ in 0..50 {
        let mut child = Command::new(BIN)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        if o.status.code() == Some(141) {
            return o;
        }
        last = Some(o);
    }
    last.unwrap()
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.csv");
    let b = dir.path().join("b.csv");
    std::fs::write(&a, "x,y\n1,2\n").unwrap();
    std::fs::write(&b, "x,y\n1,3\n").unwrap();
    let cases: [&[&str]; 3] = [
        &["workloads"],
        &["run", "--workload", "lenet5", "--modes", "sre"],
        &["compare", s(&a), s(&b)],
    ];
    for args in cases {
        let o = with_closed_stdout(args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(e, "", "{args:?}");
        // 128 + SIGPIPE, what a shell reports for a process ended by a closed pipe.
        assert_eq!(o.status.code(), Some(141), "{args:?}");
    }
}
