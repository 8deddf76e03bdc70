//! One result set a directory, whole (docs/errors.md, "One result set, whole"): no
//! command replaces one file of another command's result alone, or writes its own result
//! over part of one; each reproduction is refused in one line, nothing changed.

use crate::common::{entries as files, fails, ok, s, sresim, write, QUICK_RUN as RUN};
use std::path::Path;

#[test]
fn a_file_written_alone_never_replaces_one_file_of_a_result() {
    let t = tempfile::tempdir().unwrap();
    let ll = t.path().join("LL");
    let mut args = RUN.to_vec();
    args.extend(["-o", s(&ll)]);
    ok(&sresim(&args));
    let before = files(&ll);
    let (layers, summary) = (ll.join("layers.csv"), ll.join("summary.json"));
    let e = fails(&sresim(&[
        "plot",
        s(&layers),
        "--x",
        "mode",
        "--y",
        "cycles",
        "-o",
        s(&layers),
    ]));
    assert!(
        e.contains("layers.csv: is a file of the result `run` writes together")
            && e.contains("(summary.json): written alone it would leave a mixed set"),
        "{e}"
    );
    let e = fails(&sresim(&[
        "accuracy",
        "-q",
        "--samples",
        "1",
        "--float-logits",
        s(&summary),
    ]));
    assert!(
        e.contains("--float-logits: ") && e.contains("`run` writes together"),
        "{e}"
    );
    let e = fails(&sresim(&[
        "memory",
        "-q",
        "--workload",
        "workloads/lenet5-mnist",
        "--batch",
        "1",
        "--capacity",
        "2MiB",
        "--dump-trace",
        s(&layers),
    ]));
    assert!(
        e.contains("--dump-trace: ") && e.contains("`run` writes together"),
        "{e}"
    );
    assert_eq!(files(&ll), before, "nothing changed");
    // A figure of its own name beside the run is fine.
    ok(&sresim(&[
        "plot",
        s(&layers),
        "--x",
        "mode",
        "--y",
        "cycles",
        "-o",
        s(&ll.join("f.svg")),
    ]));

    // A sweep's points.csv replaced by a figure: refused, and the sweep resumes.
    let grid = write(
        t.path(),
        "g.toml",
        "workloads = [\"lenet5\"]\nmodes = [\"sre\"]\n[axes]\n\"ou.rows\" = [4, 16]\n",
    );
    let sw = t.path().join("SW");
    ok(&sresim(&[
        "sweep",
        "-q",
        "--grid",
        s(&grid),
        "--out",
        s(&sw),
    ]));
    let before = files(&sw);
    let e = fails(&sresim(&[
        "plot",
        s(&sw),
        "--x",
        "ou.rows",
        "--y",
        "cycles",
        "--where",
        "layer=TOTAL",
        "-o",
        s(&sw.join("points.csv")),
    ]));
    assert!(
        e.contains("`sweep` writes together") && e.contains("(sweep.json)"),
        "{e}"
    );
    assert_eq!(files(&sw), before);
    ok(&sresim(&[
        "sweep",
        "-q",
        "--grid",
        s(&grid),
        "--out",
        s(&sw),
        "--resume",
    ]));
}

#[test]
fn a_result_never_goes_over_part_of_another_commands_result() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("D");
    let mut run = RUN.to_vec();
    run.extend(["-o", s(&d)]);
    ok(&sresim(&run));
    let before = files(&d);
    let acc = ["accuracy", "-q", "--samples", "2", "--out", s(&d)];
    let e = fails(&sresim(&acc));
    assert!(
        e.contains("holds the result of `run` (layers.csv), which shares summary.json with the result of `accuracy`"),
        "{e}"
    );
    assert_eq!(files(&d), before, "nothing changed");
    // The other way round: a run over an accuracy result.
    let a = t.path().join("A");
    let mut acc_a = acc.to_vec();
    acc_a.pop();
    acc_a.push(s(&a));
    ok(&sresim(&acc_a));
    let before = files(&a);
    let mut run = RUN.to_vec();
    run.extend(["-o", s(&a)]);
    let e = fails(&sresim(&run));
    assert!(
        e.contains("holds the result of `accuracy` (accuracy.csv)"),
        "{e}"
    );
    assert_eq!(files(&a), before);
    // The same command again replaces its own result.
    ok(&sresim(&acc_a));
}

/// `plot`'s default figure is named from column names, which are data: a column named
/// `../../evil` (or an absolute path) used to put the figure two levels up (or anywhere);
/// it lands next to the table now, under one file name.
#[test]
fn a_default_figure_stays_next_to_its_table() {
    let t = tempfile::tempdir().unwrap();
    let ab = t.path().join("a/b");
    std::fs::create_dir_all(&ab).unwrap();
    let abs = t.path().join("abs");
    let table = write(
        &ab,
        "t.csv",
        &format!(
            "layer,mode,x,../../evil,{}\nTOTAL,m,1,2,3\nTOTAL,m,2,3,4\n",
            abs.display()
        ),
    );
    let said = ok(&sresim(&[
        "plot",
        s(&table),
        "--x",
        "x",
        "--y",
        "../../evil",
    ]));
    assert!(ab.join("_._.._evil-vs-x.svg").is_file(), "{said}");
    ok(&sresim(&["plot", s(&table), "--x", "x", "--y", s(&abs)]));
    let mut names: Vec<String> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a"], "nothing written outside a/b");
    let beside = std::fs::read_dir(&ab).unwrap().count();
    assert_eq!(beside, 3, "t.csv and the two figures");
}

/// A result replacing an earlier one of its command removes what the earlier one had and
/// it has not: `run --dump-outputs` then `run` used to leave the old outputs.npz beside
/// the new tables, `memory --dump-access-list D -o D` then `memory -o D` the old lists,
/// `--format parquet` then csv the old table (one result a directory).
#[test]
fn a_result_leaves_nothing_of_the_one_it_replaces() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("D");
    let mut run = RUN.to_vec();
    run.extend(["--functional", "--dump-outputs", "-o", s(&d)]);
    ok(&sresim(&run));
    assert!(d.join("outputs.npz").is_file());
    let mut plain = RUN.to_vec();
    plain.extend(["-o", s(&d), "--format", "parquet"]);
    ok(&sresim(&plain));
    let names = |d: &Path| -> Vec<String> { files(d).into_iter().map(|f| f.0).collect() };
    assert_eq!(names(&d), ["layers.parquet", "summary.json"]);
    plain.truncate(plain.len() - 2);
    ok(&sresim(&plain));
    assert_eq!(names(&d), ["layers.csv", "summary.json"]);
    let m = t.path().join("M");
    let memory = |more: &[&str]| {
        let mut a = vec![
            "memory",
            "-q",
            "--workload",
            "workloads/lenet5-mnist",
            "--batch",
            "1",
            "--out",
            s(&m),
        ];
        a.extend(more);
        ok(&sresim(&a));
    };
    memory(&["--dump-access-list", s(&m)]);
    assert!(m.join("access_list.csv").is_file() && m.join("prefetch_list.csv").is_file());
    memory(&[]);
    let left = names(&m);
    assert!(
        !left.iter().any(|n| n.ends_with("_list.csv"))
            && left.contains(&"memory_summary.json".to_string()),
        "{left:?}"
    );
}

/// `memory --dump-access-list D` where D holds another memory result (its
/// memory_summary.json) would replace that result's two lists and leave its reports
/// beside another run's lists: refused in one line, with no --out or another one, and
/// crossed (`-o X --dump-access-list Y`), D unchanged. Its own `-o D --dump-access-list D`
/// replaces the whole set, and a directory holding only lists takes new ones.
#[test]
fn access_lists_never_replace_those_of_another_memory_result() {
    let t = tempfile::tempdir().unwrap();
    let (d, e, x) = (t.path().join("D"), t.path().join("E"), t.path().join("X"));
    let lenet = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/lenet5-mnist");
    let memory = |more: &[&str]| {
        let mut a = vec!["memory", "-q", "--workload"];
        a.extend(more);
        sresim(&a)
    };
    ok(&memory(&[
        "resnet18",
        "-o",
        s(&d),
        "--dump-access-list",
        s(&d),
    ]));
    let before = files(&d);
    for args in [
        vec![s(&lenet), "--dump-access-list", s(&d)],
        vec![s(&lenet), "-o", s(&e), "--dump-access-list", s(&d)],
    ] {
        let err = fails(&memory(&args));
        assert!(
            err.starts_with(&format!(
                "error: --dump-access-list: {}: holds a result of `memory` (memory_summary.json)",
                d.display()
            )) && err.contains("would leave a mixed set"),
            "{err}"
        );
        assert_eq!(files(&d), before, "{args:?}");
        assert!(!e.exists(), "nothing written: {args:?}");
    }
    // Crossed: X's own result, and its lists sent to D.
    ok(&memory(&[s(&lenet), "-o", s(&x)]));
    let x_before = files(&x);
    fails(&memory(&[
        s(&lenet),
        "-o",
        s(&x),
        "--dump-access-list",
        s(&d),
    ]));
    assert_eq!(files(&d), before);
    assert_eq!(files(&x), x_before);
    // The same directory as its own --out (named another way): the whole set replaced.
    let again = d.join("..").join("D");
    ok(&memory(&[
        s(&lenet),
        "-o",
        s(&d),
        "--dump-access-list",
        s(&again),
    ]));
    let summary = std::fs::read_to_string(d.join("memory_summary.json")).unwrap();
    let list = std::fs::read_to_string(d.join("access_list.csv")).unwrap();
    assert!(!summary.contains("resnet18"), "{summary}");
    assert!(list.contains("graph.input"), "lenet5-mnist's lists");
    // Lists alone take new lists.
    let l = t.path().join("L");
    ok(&memory(&["resnet18", "--dump-access-list", s(&l)]));
    ok(&memory(&[s(&lenet), "--dump-access-list", s(&l)]));
    // The other way round: reports sent where lists lie written apart from any result
    // would read as one set with them; refused, nothing written. With their own lists,
    // the whole set replaces them.
    let lists = files(&l);
    let err = fails(&memory(&["resnet18", "-o", s(&l)]));
    assert!(
        err.starts_with(&format!(
            "error: --out: {}: holds access_list.csv",
            l.display()
        )) && err.contains("written apart from a result of `memory`"),
        "{err}"
    );
    assert_eq!(files(&l), lists);
    fails(&memory(&[
        "resnet18",
        "-o",
        s(&l),
        "--dump-access-list",
        s(&e),
    ]));
    assert_eq!(files(&l), lists);
    assert!(!e.exists());
    ok(&memory(&[
        "resnet18",
        "-o",
        s(&l),
        "--dump-access-list",
        s(&l),
    ]));
    assert!(l.join("memory_summary.json").exists());
    // Beside their own result's reports, lists go with the result a new one replaces.
    ok(&memory(&[s(&lenet), "-o", s(&l)]));
    assert!(!l.join("access_list.csv").exists());
}
