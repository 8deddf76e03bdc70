//! End-to-end tests of the `sresim` binary: runs on a zoo network and on a bundle the test
//! writes, the layers.csv contract, determinism, and bad flags and bundles.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{col, read_csv, sresim, BIN};

use ndarray::{Array2, Array4};
use ndarray_npy::NpzWriter;
use std::path::Path;
use std::process::Command;

const CONTRACT: &str = "network,layer,kind,mode,vectors,crossbars,ou_ops,rows_driven,cells_read,adc_conversions,index_reads,ous_formed,cycles,time_ns,energy_pj,speedup_vs_dense,energy_saving_vs_dense";

#[test]
fn zoo_run_writes_the_contract_and_totals_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = sresim(&[
        "run",
        "--workload",
        "lenet5",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (header, rows) = read_csv(&out.join("layers.csv"));
    assert!(header.join(",").starts_with(CONTRACT));
    assert!(header.iter().any(|h| h == "e_adc_pj"));
    // lenet5: 4 layers + TOTAL, 5 modes each.
    assert_eq!(rows.len(), 25);
    let (layer, mode) = (col(&header, "layer"), col(&header, "mode"));
    for m in ["dense", "weight", "activation", "sre", "ideal"] {
        let of_mode: Vec<&Vec<String>> = rows.iter().filter(|r| r[mode] == m).collect();
        let total = of_mode.iter().find(|r| r[layer] == "TOTAL").unwrap();
        for c in ["ou_ops", "rows_driven", "cells_read", "cycles", "crossbars"] {
            let i = col(&header, c);
            let sum: u64 = of_mode
                .iter()
                .filter(|r| r[layer] != "TOTAL")
                .map(|r| r[i].parse::<u64>().unwrap())
                .sum();
            assert_eq!(total[i].parse::<u64>().unwrap(), sum, "{m} {c}");
        }
        let sp: f64 = total[col(&header, "speedup_vs_dense")].parse().unwrap();
        if m == "dense" {
            assert_eq!(sp, 1.0);
        } else {
            assert!(sp > 1.0, "{m} should beat dense on a 70%-sparse network");
        }
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["network"], "lenet5");
    assert_eq!(summary["config"]["ou"]["rows"], 9);
    assert!(summary["modes"]["sre"]["energy_pj"].as_f64().unwrap() > 0.0);
}

#[test]
fn same_inputs_give_the_same_bytes_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let run = |threads: &str, name: &str| {
        let out = dir.path().join(name);
        let o = sresim(&[
            "run",
            "--workload",
            "cifar10",
            "--threads",
            threads,
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--set",
            "activation.granularity=bit",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(out.join("layers.csv")).unwrap()
    };
    assert_eq!(run("1", "a"), run("2", "b"));
}

/// A two-layer bundle: conv 2->4 3x3 pad 1 on 5x5 (signed input), fc 100->3.
fn write_bundle(dir: &Path, samples: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let manifest = r#"{"name": "tiny", "source": "written by tests/sresim/cli.rs",
      "layers": [
        {"name": "conv", "kind": "conv", "in_channels": 2, "out_channels": 4,
         "kernel": [3, 3], "stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "groups": 1,
         "input_shape": [2, 5, 5], "weight": "conv.weight", "input": "conv.input"},
        {"name": "fc", "kind": "fc", "in_features": 100, "out_features": 3,
         "weight": "fc.weight", "input": "fc.input"}]}"#;
    std::fs::write(dir.join("manifest.json"), manifest).unwrap();
    let f = |i: usize| ((i * 7919) % 13) as f32 - 6.0;
    let cw = Array4::from_shape_fn((4, 2, 3, 3), |(a, b, c, d)| {
        let v = f(a * 18 + b * 9 + c * 3 + d);
        if v.abs() < 3.0 {
            0.0
        } else {
            v
        }
    });
    let ci = Array4::from_shape_fn((samples, 2, 5, 5), |(n, c, h, w)| {
        let v = f(n * 50 + c * 25 + h * 5 + w);
        if v > 0.0 { v } else { 0.0 }
    } - if (h + w) % 7 == 0 { 1.0 } else { 0.0 });
    let fw = Array2::from_shape_fn((3, 100), |(o, i)| if (o + i) % 3 == 0 { f(i) } else { 0.0 });
    let fi = Array2::from_shape_fn((samples, 100), |(n, i)| f(n + i).max(0.0));
    let mut npz = NpzWriter::new(std::fs::File::create(dir.join("tensors.npz")).unwrap());
    npz.add_array("conv.weight", &cw).unwrap();
    npz.add_array("conv.input", &ci).unwrap();
    npz.add_array("fc.weight", &fw).unwrap();
    npz.add_array("fc.input", &fi).unwrap();
    npz.finish().unwrap();
}

#[test]
fn bundle_run_fast_equals_reference() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("tiny");
    write_bundle(&bundle, 2);
    let run = |engine: &str| {
        let out = dir.path().join(engine);
        let o = sresim(&[
            "run",
            "--workload",
            bundle.to_str().unwrap(),
            "--engine",
            engine,
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--set",
            "crossbar.rows=16",
            "--set",
            "crossbar.cols=16",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(out.join("layers.csv")).unwrap()
    };
    let fast = run("fast");
    assert_eq!(fast, run("reference"));
    // 2 layers + TOTAL, 5 modes, header.
    assert_eq!(fast.lines().count(), 16);
    assert!(fast
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("tiny,conv,conv,dense,50,"));
}

#[test]
fn samples_selects_the_first_n_and_rejects_more_than_the_bundle_holds() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("tiny");
    write_bundle(&bundle, 3);
    let o = sresim(&[
        "run",
        "--workload",
        bundle.to_str().unwrap(),
        "--samples",
        "1",
        "--modes",
        "dense",
    ]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("totals over 1 sample\n"));
    let o = sresim(&[
        "run",
        "--workload",
        bundle.to_str().unwrap(),
        "--samples",
        "4",
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error: --samples 4"), "{err}");
}

/// Every bad input: exit non-zero, one `error:` line, no output written.
#[test]
fn bad_flags_and_bundles_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("tiny");
    write_bundle(&bundle, 1);
    let broken = dir.path().join("broken");
    write_bundle(&broken, 1);
    let m = std::fs::read_to_string(broken.join("manifest.json")).unwrap();
    std::fs::write(
        broken.join("manifest.json"),
        m.replace("\"out_channels\": 4,", ""),
    )
    .unwrap();
    let b = bundle.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "--modes", "dense,fastest"], "--modes"),
        (vec!["run", "--engine", "warp"], "--engine"),
        (vec!["run", "--set", "ou.rows=999"], "ou.rows"),
        (vec!["run", "--set", "ou.depth=3"], "ou.depth"),
        (
            vec!["run", "--set", "crossbar.cell_bits=16"],
            "crossbar.cell_bits",
        ),
        (vec!["run", "--workload", "no-such-net"], "no-such-net"),
        (
            vec!["run", "--weight-sparsity", "1.5", "--workload", "lenet5"],
            "--weight-sparsity",
        ),
        (vec!["run", "--bogus-flag"], "--bogus-flag"),
        (vec!["run", "--workload", b, "--samples", "0"], "--samples"),
        (
            vec!["run", "--workload", broken.to_str().unwrap()],
            "out_channels",
        ),
        (
            vec!["run", "--config", "/nonexistent/c.toml"],
            "/nonexistent/c.toml",
        ),
    ];
    for (args, needle) in cases {
        let out = dir.path().join("never");
        let mut args = args.clone();
        let o_str = out.to_str().unwrap().to_string();
        args.extend(["--out", &o_str]);
        let o = sresim(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err} lacks {needle}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote output");
    }
}

/// `sresim memory` follows `run`: without --out it writes nothing and says how to get the
/// files; with --out it names what it wrote. Inference names no optimizer.
#[test]
fn memory_writes_only_with_out_and_says_what() {
    let dir = tempfile::tempdir().unwrap();
    let memory = |extra: &[&str]| {
        let mut a = vec!["memory", "--workload", "resnet18", "--batch", "1"];
        a.extend(extra);
        let o = Command::new(BIN)
            .args(&a)
            .current_dir(dir.path())
            .output()
            .expect("binary runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let text = memory(&["--mode", "inference"]);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("resnet18 (inference, batch 1, "),
        "{first}"
    );
    assert!(!first.contains("momentum"), "{first}");
    assert!(text.ends_with("(--out DIR writes memory_layers.csv, memory_summary.json and memory_vs_capacity.svg)\n"), "{text}");
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "wrote a file"
    );
    let text = memory(&["--capacity", "1MiB,4MiB", "--out", "m"]);
    assert!(
        text.lines().next().unwrap().contains(", momentum)"),
        "{text}"
    );
    assert!(
        text.ends_with(
            "wrote m/memory_layers.csv, m/memory_summary.json, m/memory_vs_capacity.svg\n"
        ),
        "{text}"
    );
    for f in [
        "memory_layers.csv",
        "memory_summary.json",
        "memory_vs_capacity.svg",
    ] {
        assert!(dir.path().join("m").join(f).is_file(), "{f}");
    }
    let o = sresim(&["memory", "--plot"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: --plot: needs --out DIR, the directory the plot is written to\n"
    );
}

/// On a terminal, `run` draws a progress bar on stderr for a run longer than a moment;
/// `-q` draws none and prints nothing. `script` gives the run a terminal.
#[test]
fn quiet_hides_the_progress_bar_on_a_terminal() {
    let on_tty = |extra: &str| {
        let cmd = format!("{BIN} run --workload resnet18 --modes dense,sre {extra}");
        let o = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .output()
            .expect("script (util-linux) runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let loud = on_tty("");
    assert!(
        loud.contains("% ") && loud.contains("(eta "),
        "no bar: {loud}"
    );
    assert!(loud.contains("resnet18 (21 layers"), "{loud}");
    let quiet = on_tty("-q");
    assert_eq!(quiet, "", "-q printed something");
}

/// Generator flags are taken where they make data and refused where they would make none:
/// with `--synthetic-inputs`, `--seed` and `--act-sparsity` shape the inputs of a bundle
/// layer that has none (two seeds, two results); a built-in network takes every flag.
#[test]
fn generator_flags_apply_to_generated_data_only() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("tiny");
    write_bundle(&b, 2);
    let m = std::fs::read_to_string(b.join("manifest.json")).unwrap();
    let m = m.replace(r#", "input": "fc.input"}"#, "}");
    std::fs::write(b.join("manifest.json"), m).unwrap();
    let run = |extra: &[&str], out: &str| {
        let out = dir.path().join(out);
        let mut args = vec![
            "run",
            "-q",
            "--modes",
            "sre",
            "--workload",
            common::s(&b),
            "--out",
            common::s(&out),
        ];
        args.extend_from_slice(extra);
        common::ok(&sresim(&args));
        std::fs::read(out.join("layers.csv")).unwrap()
    };
    let one = run(
        &["--synthetic-inputs", "--seed", "2", "--act-sparsity", "0.3"],
        "a",
    );
    let two = run(
        &["--synthetic-inputs", "--seed", "3", "--act-sparsity", "0.3"],
        "b",
    );
    assert_ne!(one, two);
    let e = common::fails(&sresim(&[
        "run",
        "-q",
        "--workload",
        common::s(&b),
        "--seed",
        "2",
    ]));
    assert!(
        e.starts_with("error: --seed: applies to generated inputs"),
        "{e}"
    );
    common::ok(&sresim(&[
        "run",
        "-q",
        "--modes",
        "sre",
        "--workload",
        "lenet5",
        "--layers",
        "conv1",
        "--samples",
        "1",
        "--seed",
        "2",
        "--act-sparsity",
        "0.3",
        "--weight-sparsity",
        "0.5",
        "--structure",
        "ssl",
    ]));
}

/// A missing required argument is one line that names it: clap lists the missing flags
/// on lines of their own, which cutting its message to one line used to drop.
#[test]
fn a_missing_argument_is_named_in_the_one_line() {
    let cases: [(&[&str], &[&str]); 3] = [
        (&["sweep"], &["--grid <GRID>"]),
        (&["plot", "foo.csv"], &["--x <X>", "--y <Y>"]),
        (&["accuracy-merge", "--out", "am"], &["<SHARD>..."]),
    ];
    for (args, named) in cases {
        let o = sresim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(
            e.starts_with("error: the following required arguments were not provided: "),
            "{e}"
        );
        for n in named {
            assert!(e.contains(n), "{args:?} should name {n}: {e}");
        }
    }
}

/// A stdout that cannot be written (`> /dev/full`) is one error line naming stdout and a
/// non-zero exit, for every command that prints its results there.
#[test]
#[cfg(target_os = "linux")]
fn a_full_stdout_is_one_line_naming_it() {
    const TABLE: &str = "docs/studies/data/sre-eval-networks.csv";
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let out = out.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["workloads"],
        vec![
            "run",
            "--workload",
            "lenet5",
            "--samples",
            "1",
            "--modes",
            "dense",
        ],
        vec![
            "run",
            "--workload",
            "lenet5",
            "--samples",
            "1",
            "--modes",
            "dense",
            "--out",
            out,
        ],
        vec!["check", "workloads/lenet5-mnist"],
        vec!["compare", TABLE, TABLE],
        // Help and version are output too.
        vec!["--version"],
        vec!["--help"],
        vec!["run", "--help"],
    ];
    for args in cases {
        let o = Command::new(BIN)
            .args(&args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(
            err, "error: stdout: cannot write: No space left on device\n",
            "{args:?}"
        );
    }
}

/// Runs `sresim ARGS` with `RAYON_NUM_THREADS` set to `env`; killed (and the test failed)
/// if it has not ended in `limit`, so that a pool sized from the variable (thousands of
/// threads) fails the test rather than hanging it.
fn sresim_with_rayon_env(env: &str, args: &[&str]) -> std::process::Output {
    use std::time::{Duration, Instant};
    let limit = Duration::from_secs(300);
    let mut child = Command::new(BIN)
        .args(args)
        .env("RAYON_NUM_THREADS", env)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("RAYON_NUM_THREADS={env} sresim {args:?}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn rayon_num_threads_does_not_size_the_pools() {
    // sresim sizes its pools itself (docs/errors.md "Workers"): without --threads, the
    // cores it may use, at most 1024; RAYON_NUM_THREADS is not read, so a value past the
    // limit neither starts 20000 threads nor changes a byte of the outputs.
    let dir = tempfile::tempdir().unwrap();
    let run = |env: Option<&str>, name: &str| {
        let out = dir.path().join(name);
        let args = [
            "run",
            "--workload",
            "lenet5",
            "--samples",
            "1",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ];
        let o = match env {
            Some(env) => sresim_with_rayon_env(env, &args),
            None => sresim(&args),
        };
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            o.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::read(out.join("layers.csv")).unwrap()
    };
    let plain = run(None, "plain");
    assert_eq!(run(Some("20000"), "many"), plain);
    assert_eq!(run(Some("not a number"), "text"), plain);
}

#[test]
fn tiny_and_huge_numbers_in_messages_are_in_short_form() {
    // docs/errors.md: numbers sresim prints itself in a message are in their short form.
    // `{}` of -1e-300 is 300 digits, which the 80-character cut turned into `-0.000...`,
    // hiding the value: every flag and key below printed it so.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let out = out.to_str().unwrap();
    let trace = dir.path().join("x.trace");
    let trace = trace.to_str().unwrap();
    for v in ["-1e-300", "1e-300"] {
        let set = |key: &str| format!("{key}={v}");
        let flag = |name: &str| format!("--{name}={v}");
        let cases: Vec<Vec<String>> = vec![
            vec![
                "run".into(),
                "-q".into(),
                "--set".into(),
                set("timing.cycle_ns"),
            ],
            vec![
                "run".into(),
                "-q".into(),
                "-w".into(),
                "lenet5".into(),
                flag("weight-sparsity"),
            ],
            vec![
                "run".into(),
                "-q".into(),
                "-w".into(),
                "lenet5".into(),
                flag("act-sparsity"),
            ],
            vec![
                "compare".into(),
                "/dev/null".into(),
                "/dev/null".into(),
                flag("tolerance"),
            ],
            vec![
                "run".into(),
                "-q".into(),
                "--set".into(),
                set("digital.clock_ghz"),
            ],
            vec![
                "run".into(),
                "-q".into(),
                "--set".into(),
                "chip.preset=isaac".into(),
                "--set".into(),
                set("chip.link_ghz"),
            ],
            vec![
                "run".into(),
                "-q".into(),
                "--set".into(),
                "chip.preset=isaac".into(),
                "--set".into(),
                set("chip.count"),
            ],
            vec![
                "run".into(),
                "-q".into(),
                "--set".into(),
                set("limits.max_layer_bytes"),
            ],
            vec![
                "memory".into(),
                "--workload".into(),
                "resnet18".into(),
                "-q".into(),
                "--dump-trace".into(),
                trace.into(),
                flag("trace-clock-mhz"),
            ],
        ];
        // 1e-300 is a valid sparsity, tolerance, clock...: only the keys of a type it is not.
        let mut cases: Vec<Vec<String>> = match v.starts_with('-') {
            true => cases,
            false => cases
                .into_iter()
                .filter(|c| {
                    c.iter()
                        .any(|a| a.starts_with("chip.count") || a.starts_with("limits."))
                })
                .collect(),
        };
        if v.starts_with('-') {
            for key in ["device.sigma", "dac.noise"] {
                cases.push(vec![
                    "accuracy".into(),
                    "-q".into(),
                    "--samples".into(),
                    "1".into(),
                    "--set".into(),
                    set(key),
                ]);
            }
        }
        for mut args in cases {
            args.extend(["-o".into(), out.into()]);
            if args[0] == "compare" || args[0] == "memory" {
                args.truncate(args.len() - 2);
            }
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let e = common::run_fails(&a);
            let after = e.split_once(&format!("={v}")).map_or(e.as_str(), |x| x.1);
            assert!(after.contains(v), "{a:?}: {e}");
            assert!(
                !e.contains("more characters") && e.len() < 300,
                "{a:?}: {e}"
            );
        }
    }
}
