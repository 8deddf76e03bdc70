//! End-to-end tests of `sresim sweep`, `merge`, `plot` and `compare`: rows equal to
//! `sresim run` of the same point, resume after kill -9 and after torn writes, sharding +
//! merge equal to one unsharded run, readable plots, regression compare, bad grids.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{fails, ok, read_csv, s, sresim, write, BIN};

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

/// 2 x 2 points of the lenet5 zoo network (4 layers), dense and sre.
const SMALL: &str = r#"
workloads = ["lenet5"]
modes = ["dense", "sre"]
[axes]
"ou.rows" = [4, 16]
ou.cols = [8, 4]
"#;

#[test]
fn rows_are_those_of_sresim_run_and_ids_ignore_order() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", SMALL);
    let out = dir.path().join("out");
    let said = ok(&sresim(&["sweep", "--grid", s(&grid), "--out", s(&out)]));
    assert!(said.contains("4 points, 4 run, 0 already done"), "{said}");
    let (h, rows) = read_csv(&out.join("points.csv"));
    // 4 points x (4 layers + TOTAL) x 2 modes.
    assert_eq!(rows.len(), 40);
    let run_dir = dir.path().join("run");
    ok(&sresim(&[
        "run",
        "-w",
        "lenet5",
        "--modes",
        "dense,sre",
        "--set",
        "ou.rows=16",
        "--set",
        "ou.cols=4",
        "-q",
        "-o",
        s(&run_dir),
    ]));
    let (rh, run_rows) = read_csv(&run_dir.join("layers.csv"));
    assert_eq!(h[..4], ["point", "workload", "ou.rows", "ou.cols"]);
    assert_eq!(h[4..], rh[..]);
    let (r, c) = (col(&h, "ou.rows"), col(&h, "ou.cols"));
    let point: Vec<Vec<String>> = rows
        .iter()
        .filter(|x| x[r] == "16" && x[c] == "4")
        .map(|x| x[4..].to_vec())
        .collect();
    assert_eq!(point, run_rows);
    // Grid order: ou.rows outer, ou.cols inner in file order (8 before 4).
    let order: Vec<(&str, &str)> = rows
        .iter()
        .step_by(10)
        .map(|x| (x[r].as_str(), x[c].as_str()))
        .collect();
    assert_eq!(order, [("4", "8"), ("4", "4"), ("16", "8"), ("16", "4")]);

    // The same points listed in another order get the same ids.
    let swapped = write(
        dir.path(),
        "swapped.toml",
        "workloads = [\"lenet5\"]\nmodes = [\"dense\", \"sre\"]\n[axes]\nou.cols = [4, 8]\n\"ou.rows\" = [16, 4]\n",
    );
    let out2 = dir.path().join("out2");
    ok(&sresim(&[
        "sweep",
        "--grid",
        s(&swapped),
        "--out",
        s(&out2),
        "-q",
    ]));
    let (h2, rows2) = read_csv(&out2.join("points.csv"));
    let ids = |h: &[String], rows: &[Vec<String>]| -> BTreeSet<(String, String, String)> {
        let (r, c) = (col(h, "ou.rows"), col(h, "ou.cols"));
        rows.iter()
            .map(|x| (x[0].clone(), x[r].clone(), x[c].clone()))
            .collect()
    };
    assert_eq!(ids(&h, &rows), ids(&h2, &rows2));
    assert_eq!(ids(&h, &rows).len(), 4);
}

#[test]
fn results_do_not_depend_on_threads_or_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", SMALL);
    let mut outs = Vec::new();
    for (threads, jobs) in [("1", "1"), ("2", "2"), ("2", "4"), ("1", "3")] {
        let d = dir.path().join(format!("t{threads}j{jobs}"));
        let args = [
            "sweep",
            "-g",
            s(&grid),
            "-o",
            s(&d),
            "--threads",
            threads,
            "--jobs",
            jobs,
        ];
        ok(&sresim(&args));
        outs.push(std::fs::read(d.join("points.csv")).unwrap());
    }
    assert!(outs.iter().all(|o| *o == outs[0]));
    let e = fails(&sresim(&[
        "sweep",
        "-g",
        s(&grid),
        "-o",
        s(&dir.path().join("z")),
        "--jobs",
        "0",
    ]));
    assert!(e.contains("--jobs"), "{e}");
}

/// lenet5 with its generator varied: 3 x 12 = 36 points, enough to kill a run midway.
const LONG: &str = r#"
workloads = ["lenet5"]
modes = ["dense", "weight", "activation", "sre"]
[set]
"synth.structure" = "unstructured"
[axes]
"synth.seed" = [1, 2, 3]
"ou.rows" = [2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16]
"#;

#[test]
fn kill_9_then_resume_equals_an_uninterrupted_run() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", LONG);
    let full = dir.path().join("full");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&full), "-q"]));
    let rows_per_point = 5 * 4;
    let header_len = std::fs::read_to_string(full.join("points.csv"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .len()
        + 1;

    let cut = dir.path().join("cut");
    let mut child = Command::new(BIN)
        .args([
            "sweep",
            "-g",
            s(&grid),
            "-o",
            s(&cut),
            "--threads",
            "1",
            "-q",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until a few points are on disk, then kill -9.
    let start = Instant::now();
    loop {
        let len = std::fs::metadata(cut.join("points.csv")).map_or(0, |m| m.len() as usize);
        if len > header_len + 3 * rows_per_point * 200 || start.elapsed() > Duration::from_secs(60)
        {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep ended before it was killed"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let (_, before) = read_csv(&cut.join("points.csv"));
    assert!(before.len() < 36 * rows_per_point, "killed after the end");

    let said = ok(&sresim(&[
        "sweep",
        "-g",
        s(&grid),
        "-o",
        s(&cut),
        "--resume",
    ]));
    let done: usize = said
        .split([',', ';'])
        .find_map(|p| p.trim().strip_suffix(" already done"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    assert!((1..36).contains(&done), "{said}");
    let set = |d: &Path| {
        read_csv(&d.join("points.csv"))
            .1
            .into_iter()
            .collect::<BTreeSet<_>>()
    };
    let (a, b) = (set(&full), set(&cut));
    assert_eq!(a.len(), 36 * rows_per_point);
    assert_eq!(a, b);
    // Finished sweeps are written in grid order: the files are identical.
    let bytes = |d: &Path| std::fs::read(d.join("points.csv")).unwrap();
    assert_eq!(bytes(&full), bytes(&cut));
    // Resuming a finished sweep runs nothing.
    let again = ok(&sresim(&[
        "sweep",
        "-g",
        s(&grid),
        "-o",
        s(&cut),
        "--resume",
    ]));
    assert!(again.contains("0 run, 36 already done"), "{again}");
}

#[test]
fn resume_drops_torn_lines_and_incomplete_points() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", SMALL);
    let full = dir.path().join("full");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&full), "-q"]));
    let text = std::fs::read_to_string(full.join("points.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Header, point 1 whole (10 rows), point 2's first 3 rows, half of its 4th row.
    let mut damaged: String = lines[..14].iter().map(|l| format!("{l}\n")).collect();
    damaged.push_str(&lines[14][..lines[14].len() / 2]);
    let cut = dir.path().join("cut");
    std::fs::create_dir(&cut).unwrap();
    std::fs::copy(full.join("sweep.json"), cut.join("sweep.json")).unwrap();
    std::fs::write(cut.join("points.csv"), damaged).unwrap();
    let said = ok(&sresim(&[
        "sweep",
        "-g",
        s(&grid),
        "-o",
        s(&cut),
        "--resume",
    ]));
    assert!(said.contains("3 run, 1 already done"), "{said}");
    assert_eq!(
        std::fs::read_to_string(cut.join("points.csv")).unwrap(),
        text
    );
}

/// A kept point's rows are data: a `cycles` of -5 written into a complete point survived
/// a resume (and was refused only by merge); resume now checks them as merge does and
/// changes nothing.
#[test]
fn resume_refuses_a_tampered_kept_point() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", SMALL);
    let full = dir.path().join("full");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&full), "-q"]));
    let text = std::fs::read_to_string(full.join("points.csv")).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let cycles = header.iter().position(|c| *c == "cycles").unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut cells: Vec<String> = lines[1].split(',').map(String::from).collect();
    cells[cycles] = "-5".into();
    lines[1] = cells.join(",");
    // Only the first point complete: the resume has points to run.
    let tampered: String = lines[..11].iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(full.join("points.csv"), &tampered).unwrap();
    let e = fails(&sresim(&[
        "sweep",
        "-g",
        s(&grid),
        "-o",
        s(&full),
        "--resume",
        "-q",
    ]));
    assert!(
        e.contains("points.csv: point ")
            && e.trim_end()
                .ends_with("cycles: '-5' is not a count (an unsigned 64-bit integer)"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(full.join("points.csv")).unwrap(),
        tampered
    );
}

/// A directory holding a search's answer (points.csv beside search.json) is not a sweep
/// `--resume` could continue: the refusal says what it holds, with or without
/// `--resume`, and leaves it as it was.
#[test]
fn a_search_result_is_not_taken_for_a_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", SMALL);
    let out = dir.path().join("found");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("points.csv"), "point,workload\n").unwrap();
    std::fs::write(out.join("search.json"), "{}\n").unwrap();
    for more in [&[][..], &["--resume"][..]] {
        let args = [&["sweep", "-g", s(&grid), "-o", s(&out), "-q"][..], more].concat();
        let e = fails(&sresim(&args));
        assert!(
            e.contains("holds the result of `sresim search` (search.json), not a sweep: choose another --out")
                && !e.contains("--resume"),
            "{more:?}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    assert!(!out.join("sweep.json").exists());
    assert_eq!(
        std::fs::read_to_string(out.join("points.csv")).unwrap(),
        "point,workload\n"
    );
}

#[test]
fn an_existing_sweep_is_neither_overwritten_nor_mixed_with_another_grid() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", SMALL);
    let out = dir.path().join("out");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&out), "-q"]));
    let e = fails(&sresim(&["sweep", "-g", s(&grid), "-o", s(&out)]));
    assert!(
        e.contains("holds a sweep already") && e.contains("--resume"),
        "{e}"
    );
    let other = write(
        dir.path(),
        "other.toml",
        &SMALL.replace("[4, 16]", "[4, 8]"),
    );
    let e = fails(&sresim(&[
        "sweep",
        "-g",
        s(&other),
        "-o",
        s(&out),
        "--resume",
    ]));
    assert!(e.contains("sweep.json: fingerprint"), "{e}");
    let e = fails(&sresim(&[
        "sweep",
        "-g",
        s(&grid),
        "-o",
        s(&out),
        "--resume",
        "--shard",
        "0/2",
    ]));
    assert!(e.contains("shard"), "{e}");
    // A base config that changes a value changes the grid.
    let base = write(dir.path(), "base.toml", "[adc]\nper_crossbar = 4\n");
    let based = write(
        dir.path(),
        "based.toml",
        &format!("base = \"base.toml\"\n{SMALL}"),
    );
    let e = fails(&sresim(&[
        "sweep",
        "-g",
        s(&based),
        "-o",
        s(&out),
        "--resume",
    ]));
    assert!(e.contains("fingerprint"), "{e}");
    drop(base);
}

/// A point refused only when it runs (a cycle time whose figures overflow, which no
/// config check sees) used to leave sweep.json and a header-only points.csv, so the
/// corrected grid met "holds a sweep already": a fresh sweep writes nothing until its
/// first point is in.
#[test]
fn a_sweep_refused_by_its_first_point_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.toml",
        "workloads = [\"lenet5\"]\nmodes = [\"dense\"]\n[set]\n\"timing.cycle_ns\" = 1e308\n",
    );
    let out = dir.path().join("out");
    let e = fails(&sresim(&["sweep", "-g", s(&bad), "-o", s(&out), "-q"]));
    assert!(e.contains("would be inf"), "{e}");
    let left: Vec<_> = std::fs::read_dir(&out)
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    let grid = write(dir.path(), "g.toml", SMALL);
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&out), "-q"]));
    assert!(out.join("sweep.json").exists() && out.join("points.csv").exists());
}

/// A `--resume` into a directory whose sweep.json keeps the grid's fingerprint but claims
/// other points (3000^3 against 4, or another axis value) exited 0 having checked only the
/// fingerprint; it now says the directory belongs to another grid, and changes nothing.
#[test]
fn a_resume_reads_the_whole_sweep_json_and_names_another_grid() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", SMALL);
    let out = dir.path().join("out");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&out), "-q"]));
    let path = out.join("sweep.json");
    let good: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let points = std::fs::read(out.join("points.csv")).unwrap();
    let resume = || sresim(&["sweep", "-g", s(&grid), "-o", s(&out), "--resume", "-q"]);
    let claims = |edit: &dyn Fn(&mut serde_json::Value), want: &str| {
        let mut m = good.clone();
        edit(&mut m);
        let text = serde_json::to_vec_pretty(&m).unwrap();
        std::fs::write(&path, &text).unwrap();
        let e = fails(&resume());
        assert!(e.contains("out/sweep.json: ") && e.contains(want), "{e}");
        assert!(
            e.ends_with(&format!(
                "the directory belongs to another grid than {}\n",
                grid.display()
            )),
            "{e}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), text);
        assert_eq!(std::fs::read(out.join("points.csv")).unwrap(), points);
    };
    let three: Vec<u64> = (0..3000).collect();
    claims(
        &|m| {
            m["axes"] = serde_json::json!(["a", "b", "c"]);
            m["values"] = serde_json::json!([three, three, three]);
            m["point_count"] = serde_json::json!(27_000_000_000u64);
        },
        "point_count: 27000000000 points, more than the limit of 67108864",
    );
    claims(
        &|m| m["values"][0][1] = serde_json::json!(32),
        "values: not the grid's values",
    );
    claims(
        &|m| m["workloads"][0]["rows"] = serde_json::json!(7),
        "workloads: not the grid's workloads",
    );
    std::fs::write(&path, serde_json::to_vec_pretty(&good).unwrap()).unwrap();
    let said = ok(&resume());
    assert!(said.is_empty() || said.contains("0 run"), "{said}");
}

/// A field sweep.json does not have (an edit, or another format), even one nested
/// 100,000 deep, is refused by `merge` and `--resume` naming it, as shard.json refuses
/// one; nothing is written.
#[test]
fn a_sweep_json_with_a_field_it_does_not_have_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", SMALL);
    let out = dir.path().join("out");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&out), "-q"]));
    let path = out.join("sweep.json");
    let good = std::fs::read_to_string(&path).unwrap();
    let points = std::fs::read(out.join("points.csv")).unwrap();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for (field, value) in [("zz", "1".to_string()), ("deep", deep)] {
        let edited = good.replacen('{', &format!("{{\"{field}\": {value}, "), 1);
        std::fs::write(&path, &edited).unwrap();
        let e = fails(&sresim(&[
            "sweep",
            "-g",
            s(&grid),
            "-o",
            s(&out),
            "--resume",
            "-q",
        ]));
        assert!(
            e.contains("out/sweep.json") && e.contains(&format!("unknown field `{field}`")),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
        let merged = dir.path().join("merged");
        let e = fails(&sresim(&["merge", s(&out), "-o", s(&merged)]));
        assert!(e.contains(&format!("unknown field `{field}`")), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(!merged.exists());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
        assert_eq!(std::fs::read(out.join("points.csv")).unwrap(), points);
    }
}

/// A shard count is data (`--shard 0/N`, or sweep.json's `shard.count`): a merge that
/// names the shards without rows finds them from the points, never by walking N shards
/// (at 2^64 - 1 the walk allocated until the process aborted); the list is bounded.
#[test]
fn a_merge_names_absent_shards_from_the_points_whatever_the_shard_count() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", SMALL);
    let out = dir.path().join("h");
    let n = u64::MAX.to_string();
    ok(&sresim(&[
        "sweep",
        "-g",
        s(&grid),
        "-o",
        s(&out),
        "-q",
        "--shard",
        &format!("0/{n}"),
    ]));
    let e = fails(&sresim(&["merge", s(&out), "-o", s(&dir.path().join("m"))]));
    assert!(e.contains("3 of 4 points are missing"), "{e}");
    assert!(
        e.contains(&format!("(shards with no rows: 1/{n}, 2/{n}, 3/{n});")),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn shards_merge_into_the_unsharded_output() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(
        dir.path(),
        "g.toml",
        "workloads = [\"lenet5\", \"lenet5-mnist\"]\nmodes = [\"dense\", \"sre\"]\nsamples = 1\n[axes]\n\"ou.rows\" = [4, 8, 16]\n",
    );
    let whole = dir.path().join("whole");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&whole), "-q"]));
    let mut shards = Vec::new();
    let mut seen = BTreeSet::new();
    for i in 0..4 {
        let d = dir.path().join(format!("shard{i}"));
        let said = ok(&sresim(&[
            "sweep",
            "-g",
            s(&grid),
            "-o",
            s(&d),
            "--shard",
            &format!("{i}/4"),
        ]));
        // 6 points over 4 shards: 2, 2, 1, 1.
        let expect = if i < 2 { 2 } else { 1 };
        assert!(
            said.contains(&format!("shard {i}/4: {expect} of 6 points")),
            "{said}"
        );
        let ids: BTreeSet<String> = read_csv(&d.join("points.csv"))
            .1
            .into_iter()
            .map(|r| r[0].clone())
            .collect();
        assert_eq!(ids.len(), expect);
        assert!(ids.is_disjoint(&seen));
        seen.extend(ids);
        shards.push(d);
    }
    assert_eq!(seen.len(), 6);
    let merged = dir.path().join("merged");
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(|d| s(d)));
    args.extend(["--out", s(&merged)]);
    let said = ok(&sresim(&args));
    assert!(
        said.contains("merged 6 of 6 points from 4 directories"),
        "{said}"
    );
    let bytes = |d: &Path, f: &str| std::fs::read(d.join(f)).unwrap();
    assert_eq!(bytes(&whole, "points.csv"), bytes(&merged, "points.csv"));
    assert_eq!(bytes(&whole, "sweep.json"), bytes(&merged, "sweep.json"));

    // A missing shard is an error unless --partial; the result then resumes to the whole.
    // (Into `merged`, which holds them all, the same merge is complete.)
    let e = fails(&sresim(&[
        "merge",
        s(&shards[0]),
        s(&shards[1]),
        s(&shards[2]),
        "-o",
        s(&dir.path().join("three")),
    ]));
    assert!(
        e.contains("1 of 6 points are missing") && e.contains("3/4"),
        "{e}"
    );
    let part = dir.path().join("part");
    ok(&sresim(&[
        "merge",
        s(&shards[0]),
        s(&shards[3]),
        "-o",
        s(&part),
        "--partial",
    ]));
    let said = ok(&sresim(&[
        "sweep",
        "-g",
        s(&grid),
        "-o",
        s(&part),
        "--resume",
    ]));
    assert!(said.contains("3 run, 3 already done"), "{said}");
    assert_eq!(bytes(&whole, "points.csv"), bytes(&part, "points.csv"));

    // Outputs of another grid are refused.
    let other = write(
        dir.path(),
        "o.toml",
        "workloads = [\"lenet5\"]\nmodes = [\"sre\"]\n[axes]\n\"ou.rows\" = [4]\n",
    );
    let od = dir.path().join("other");
    ok(&sresim(&["sweep", "-g", s(&other), "-o", s(&od), "-q"]));
    let e = fails(&sresim(&[
        "merge",
        s(&shards[0]),
        s(&od),
        "-o",
        s(&dir.path().join("m2")),
    ]));
    assert!(
        e.contains("fingerprint") && e.contains("different grids"),
        "{e}"
    );
}

#[test]
fn the_slurm_example_runs_shards_and_merges_them() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", SMALL);
    let whole = dir.path().join("whole");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&whole), "-q"]));
    let out = dir.path().join("slurm");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/examples/slurm-sweep.sh");
    let job = |args: &[&str], task: Option<usize>| {
        let mut c = Command::new("sh");
        c.arg(script)
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("GRID", &grid)
            .env("OUT", &out)
            .env("N", "3")
            .env("SRESIM", BIN)
            .env("SLURM_CPUS_PER_TASK", "1");
        if let Some(i) = task {
            c.env("SLURM_ARRAY_TASK_ID", i.to_string());
        }
        c.output().unwrap()
    };
    // The array tasks, in any order (here the last first), then the dependent merge.
    for i in [2, 0, 1] {
        ok(&job(&["task"], Some(i)));
    }
    let said = ok(&job(&["merge"], None));
    assert!(
        said.contains("merged 4 of 4 points from 3 directories"),
        "{said}"
    );
    let bytes = |d: &Path| std::fs::read(d.join("points.csv")).unwrap();
    assert_eq!(bytes(&whole), bytes(&out));
    // A task outside an array says so.
    let o = job(&["task"], None);
    assert!(!o.status.success());
}

#[test]
fn generator_axes_vary_the_synthetic_data() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(
        dir.path(),
        "g.toml",
        "workloads = [\"lenet5\"]\nmodes = [\"dense\", \"weight\"]\n[set]\n\"synth.structure\" = \"ssl\"\n[axes]\n\"synth.weight_sparsity\" = [0.5, 0.9]\n",
    );
    let out = dir.path().join("out");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&out), "-q"]));
    let (h, rows) = read_csv(&out.join("points.csv"));
    let run_dir = dir.path().join("run");
    ok(&sresim(&[
        "run",
        "-w",
        "lenet5",
        "--modes",
        "dense,weight",
        "--structure",
        "ssl",
        "--weight-sparsity",
        "0.9",
        "-q",
        "-o",
        s(&run_dir),
    ]));
    let (_, run_rows) = read_csv(&run_dir.join("layers.csv"));
    let sp = col(&h, "synth.weight_sparsity");
    let at = |v: &str| -> Vec<Vec<String>> {
        rows.iter()
            .filter(|r| r[sp] == v)
            .map(|r| r[3..].to_vec())
            .collect()
    };
    assert_eq!(at("0.9"), run_rows);
    // SSL removes whole rows and filters: fewer crossbars in weight mode at 0.9.
    let xb = col(&h, "crossbars") - 3;
    let total_weight = |v: &str| -> u64 {
        let r = at(v)
            .into_iter()
            .find(|r| r[1] == "TOTAL" && r[3] == "weight")
            .unwrap();
        r[xb].parse().unwrap()
    };
    assert!(total_weight("0.9") < total_weight("0.5"));
}

#[test]
fn explicit_points_are_one_more_axis() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(
        dir.path(),
        "g.toml",
        "workloads = [\"lenet5\"]\nmodes = [\"sre\"]\n[axes]\n\"adc.per_crossbar\" = [4, 8]\n[[points]]\n\"ou.rows\" = 9\n\"ou.cols\" = 8\n[[points]]\n\"ou.rows\" = 16\n\"ou.cols\" = 16\n",
    );
    let out = dir.path().join("out");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&out), "-q"]));
    let (h, rows) = read_csv(&out.join("points.csv"));
    assert_eq!(h[2..5], ["adc.per_crossbar", "ou.rows", "ou.cols"]);
    let combos: Vec<[&str; 3]> = rows
        .iter()
        .filter(|r| r[col(&h, "layer")] == "TOTAL")
        .map(|r| [r[2].as_str(), r[3].as_str(), r[4].as_str()])
        .collect();
    assert_eq!(
        combos,
        [
            ["4", "9", "8"],
            ["4", "16", "16"],
            ["8", "9", "8"],
            ["8", "16", "16"]
        ]
    );
}

#[test]
fn plot_writes_a_labelled_svg() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", SMALL);
    let out = dir.path().join("out");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&out), "-q"]));
    let svg = dir.path().join("p.svg");
    let said = ok(&sresim(&[
        "plot",
        s(&out),
        "--x",
        "ou.rows",
        "--y",
        "speedup_vs_dense",
        "--series",
        "mode",
        "--where",
        "ou.cols=8",
        "-o",
        s(&svg),
    ]));
    assert!(said.contains("p.svg"), "{said}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "{}", &text[..60.min(text.len())]);
    // plotters writes the content of each <text> element on a line of its own.
    let lines: BTreeSet<&str> = text.lines().collect();
    // Human names and units, never the raw columns; the title says what the rows share.
    for needle in [
        "dense",
        "sre",
        "mode",
        "OU height (wordlines)",
        "speedup over dense",
        "speedup over dense vs OU height (lenet5, OU width 8 bitlines)",
        "4",
        "16",
    ] {
        assert!(lines.contains(needle), "{needle} is not a text of the SVG");
    }
    assert!(!text.contains("speedup_vs_dense") && !text.contains("ou.rows"));
    // Two series (the first two palette colours), two points each: per series one line
    // in the plot and one in the legend, and a marker at each point and in the legend:
    // a circle outline for the first, a square outline (a closed polyline) for the second.
    let count = |tag: &str, color: &str| {
        text.lines()
            .filter(|l| l.starts_with(tag) && l.contains(&format!("stroke=\"{color}\"")))
            .count()
    };
    assert_eq!(
        (count("<polyline", "#3F90DA"), count("<circle", "#3F90DA")),
        (2, 3)
    );
    assert_eq!(
        (count("<polyline", "#FFA90E"), count("<circle", "#FFA90E")),
        (2 + 3, 0)
    );

    // Two filters on one column are alternatives: both widths, one series each.
    let both = dir.path().join("both.svg");
    ok(&sresim(&[
        "plot",
        s(&out),
        "--x",
        "ou.rows",
        "--y",
        "cycles",
        "--series",
        "mode,ou.cols",
        "--where",
        "ou.cols=8",
        "--where",
        "ou.cols=4",
        "-o",
        s(&both),
    ]));
    let text = std::fs::read_to_string(&both).unwrap();
    for series in ["dense, 8", "sre, 8", "dense, 4", "sre, 4", "mode, OU width"] {
        assert!(text.lines().any(|l| l == series), "{series}");
    }
    assert!(
        text.lines().any(|l| l.contains("OU width 8 or 4")),
        "title names both filters"
    );

    // Without the ou.cols filter each (mode, ou.rows) has two rows: the error says why.
    let e = fails(&sresim(&[
        "plot",
        s(&out),
        "--x",
        "ou.rows",
        "--y",
        "cycles",
    ]));
    assert!(e.contains("they differ in ou.cols"), "{e}");
    let e = fails(&sresim(&[
        "plot",
        s(&out),
        "--x",
        "ou.rows",
        "--y",
        "kind",
        "--where",
        "layer=conv1",
        "--where",
        "ou.cols=8",
    ]));
    assert!(e.contains("not a number"), "{e}");
    let e = fails(&sresim(&[
        "plot",
        s(&out),
        "--x",
        "ou.height",
        "--y",
        "cycles",
    ]));
    assert!(e.contains("--x: no column 'ou.height'"), "{e}");
}

/// Writes `rows` under `header` as a CSV file.
fn write_csv(path: &Path, header: &[String], rows: &[Vec<String>]) {
    let mut w = csv::Writer::from_path(path).unwrap();
    w.write_record(header).unwrap();
    for r in rows {
        w.write_record(r).unwrap();
    }
    w.flush().unwrap();
}

#[test]
fn compare_reports_changes_beyond_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", SMALL);
    let out = dir.path().join("out");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&out), "-q"]));
    let old = out.join("points.csv");
    let (h, rows) = read_csv(&old);
    let cy = col(&h, "cycles");
    let variant = |name: &str, f: &dyn Fn(&mut Vec<Vec<String>>)| {
        let mut r = rows.clone();
        f(&mut r);
        let p = dir.path().join(name);
        write_csv(&p, &h, &r);
        p
    };
    let scale = |r: &mut Vec<Vec<String>>, k: f64| {
        let c: f64 = r[3][cy].parse().unwrap();
        r[3][cy] = format!("{}", (c * k).round());
    };

    // Equal.
    let same = variant("same.csv", &|_| {});
    let said = ok(&sresim(&["compare", s(&old), s(&same)]));
    assert!(said.contains("40 rows compared: 0 changed"), "{said}");
    // +0.5% with tolerance 1%: equal; with the default (exact): changed.
    let small = variant("small.csv", &|r| scale(r, 1.005));
    ok(&sresim(&[
        "compare",
        s(&old),
        s(&small),
        "--tolerance",
        "0.01",
    ]));
    let o = sresim(&["compare", s(&old), s(&small)]);
    fails(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("cycles"));
    // +2% with tolerance 1%: changed, and the line says which row and column.
    let big = variant("big.csv", &|r| scale(r, 1.02));
    let o = sresim(&["compare", s(&old), s(&big), "--tolerance", "0.01"]);
    let e = fails(&o);
    assert!(e.contains("differ beyond relative tolerance 0.01"), "{e}");
    let text = String::from_utf8_lossy(&o.stdout);
    let layer = &rows[3][col(&h, "layer")];
    assert!(
        text.contains(&format!("layer={layer}")) && text.contains("cycles "),
        "{text}"
    );
    assert!(
        text.contains("(+2.000%)") || text.contains("(+1.99"),
        "{text}"
    );
    assert!(text.contains("1 changed beyond"), "{text}");
    // A row missing, a row added.
    let missing = variant("missing.csv", &|r| {
        r.remove(7);
    });
    let o = sresim(&["compare", s(&old), s(&missing), "--tolerance", "0.01"]);
    fails(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("missing from NEW: workload=lenet5"));
    let o = sresim(&["compare", s(&missing), s(&old), "--tolerance", "0.01"]);
    fails(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 added in NEW"));
    // layers.csv of two runs (keys network, layer, mode).
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    ok(&sresim(&["run", "-w", "lenet5", "-q", "-o", s(&a)]));
    ok(&sresim(&[
        "run",
        "-w",
        "lenet5",
        "-q",
        "-o",
        s(&b),
        "--set",
        "ou.rows=8",
    ]));
    ok(&sresim(&["compare", s(&a), s(&a)]));
    let o = sresim(&["compare", s(&a), s(&b), "--tolerance", "0.01"]);
    fails(&o);
    assert!(String::from_utf8_lossy(&o.stdout)
        .contains("changed network=lenet5 layer=conv1 mode=dense: "));
    // Different key columns cannot be matched.
    let e = fails(&sresim(&["compare", s(&old), s(&a)]));
    assert!(e.contains("keyed by different columns"), "{e}");
}

#[test]
fn bad_grids_and_flags_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cases: [(&str, &str); 13] = [
        (
            "workloads = [\"lenet5\"]\n[axes]\n\"ou.height\" = [4]\n",
            "axes.ou.height: unknown key",
        ),
        (
            "workloads = [\"lenet5\"]\n[axes]\n\"ou.rows\" = []\n",
            "axes.ou.rows: the list is empty",
        ),
        (
            "workloads = [\"lenet5\"]\n[axes]\n\"ou.rows\" = 4\n",
            "axes.ou.rows: expected a list",
        ),
        (
            "workloads = [\"lenet5\"]\n[axes]\n\"ou.rows\" = [4, 200]\n",
            "axes.ou.rows = 200: ",
        ),
        (
            "workloads = [\"lenet5\"]\n[axes]\n\"ou.rows\" = [4, 4]\n",
            "value 4 is listed twice",
        ),
        (
            "workloads = [\"lenet5\"]\n[axes]\n\"synth.weight_sparsity\" = [1.5]\n",
            "axes.synth.weight_sparsity = 1.5: ",
        ),
        (
            "workloads = [\"lenet5\"]\n[axes]\nworkload = [\"vgg16\"]\n",
            "top-level `workloads`",
        ),
        (
            "workloads = [\"lenet6\"]\n",
            "workloads: --workload: 'lenet6'",
        ),
        ("workloads = []\n", "workloads: the list is empty"),
        ("workloads = [\"lenet5\"]\nmodes = [\"fast\"]\n", "--modes"),
        ("workload = [\"lenet5\"]\n", "unknown field `workload`"),
        ("workloads = [\"lenet5\"]\n[axes\n", "g.toml: "),
        (
            "base = \"nope.toml\"\nworkloads = [\"lenet5\"]\n",
            "base: nope.toml does not exist",
        ),
    ];
    for (text, want) in cases {
        let g = write(dir.path(), "g.toml", text);
        let e = fails(&sresim(&["sweep", "-g", s(&g), "-o", s(&out)]));
        assert!(e.contains(&format!("{}: ", s(&g))), "{e}");
        assert!(e.contains(want), "{text}: {e}");
        assert!(!out.exists(), "nothing is written for a bad grid");
    }
    let g = write(dir.path(), "g.toml", SMALL);
    for bad in ["4/4", "x", "1/0"] {
        let e = fails(&sresim(&[
            "sweep",
            "-g",
            s(&g),
            "-o",
            s(&out),
            "--shard",
            bad,
        ]));
        assert!(e.contains("--shard"), "{e}");
    }
    let e = fails(&sresim(&[
        "sweep",
        "-g",
        s(&dir.path().join("none.toml")),
        "-o",
        s(&out),
    ]));
    assert!(e.contains("none.toml: cannot read"), "{e}");
}

#[test]
fn the_shipped_grids_are_valid() {
    use sweep::{grid::Grid, plan::Plan};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seen = Vec::new();
    for path in common::tracked_files(root, "configs/sweeps") {
        if path.extension().is_some_and(|e| e == "toml") {
            let plan =
                Plan::new(Grid::load(&path, sweep::grid::DEFAULT_MAX_POINTS).unwrap()).unwrap();
            let name = path.file_stem().unwrap().to_str().unwrap().to_string();
            seen.push((name, plan.points.len()));
        }
    }
    seen.sort();
    // The point counts the files' comments state.
    let expect = [
        ("adcs", 15),
        ("cell-bits", 12),
        ("chip-replication", 8),
        ("crossbar-size", 12),
        ("ou-accuracy", 8),
        ("ou-size", 72),
        ("precision", 12),
        ("ssl-sparsity", 63),
        ("tech-node", 15),
    ];
    let expect: Vec<(String, usize)> = expect.iter().map(|(n, k)| (n.to_string(), *k)).collect();
    assert_eq!(seen, expect);
}

#[test]
fn structure_and_head_axes_give_the_rows_of_run() {
    let dir = tempfile::tempdir().unwrap();
    let fc = |name: &str, i: usize, o: usize, role: &str, heads: &str| {
        format!("[[layers]]\nname = \"{name}\"\nkind = \"fc\"\nin_features = {i}\nout_features = {o}\ntokens = 4\nrole = \"{role}\"\n{heads}")
    };
    let enc = [
        fc("qkv", 16, 48, "qkv", "heads = 4\n"),
        fc("o", 16, 16, "attn_out", "heads = 4\n"),
        fc("up", 16, 64, "ffn_up", ""),
        fc("down", 64, 16, "ffn_down", ""),
    ]
    .concat();
    let shape = write(dir.path(), "enc.toml", &enc);
    let grid = write(
        dir.path(),
        "g.toml",
        &format!(
            "workloads = [{:?}]\nmodes = [\"dense\", \"sre\"]\n[axes]\n\"synth.structure\" = [\"magnitude\", \"2:4\"]\n\"synth.head_sparsity\" = [0.0, 0.5]\n",
            s(&shape)
        ),
    );
    let out = dir.path().join("out");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&out), "-q"]));
    let (h, rows) = read_csv(&out.join("points.csv"));
    let (st, hs) = (col(&h, "synth.structure"), col(&h, "synth.head_sparsity"));
    let first = h.iter().position(|c| c == "network").unwrap();
    let at = |structure: &str, heads: &str| -> Vec<Vec<String>> {
        rows.iter()
            .filter(|r| r[st] == structure && r[hs] == heads)
            .map(|r| r[first..].to_vec())
            .collect()
    };
    let run = |flags: &[&str]| -> Vec<Vec<String>> {
        let run_dir = dir.path().join("run");
        let mut a = vec![
            "run",
            "-w",
            s(&shape),
            "--modes",
            "dense,sre",
            "-q",
            "-o",
            s(&run_dir),
        ];
        a.extend_from_slice(flags);
        ok(&sresim(&a));
        read_csv(&run_dir.join("layers.csv")).1
    };
    assert_eq!(
        at("2:4", "0.5"),
        run(&["--structure", "2:4", "--head-sparsity", "0.5"])
    );
    assert_eq!(at("magnitude", "0"), run(&["--structure", "magnitude"]));
    assert_ne!(at("2:4", "0.5"), at("2:4", "0"));
}
