//! `sresim run --functional` end to end: the counts are those of a run without it, every
//! bundled workload's outputs equal the exact product in every mode, outputs.npz holds
//! them, and bad functional settings are refused with one line and nothing written.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{read_csv, sresim};

use std::path::Path;

fn run_ok(args: &[&str]) {
    let o = sresim(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Runs `workload` (its first sample) with and without --functional.
fn both(workload: &str, dir: &Path, extra: &[&str]) -> (std::path::PathBuf, std::path::PathBuf) {
    let (plain, func) = (dir.join("plain"), dir.join("func"));
    let base = ["run", "--workload", workload, "--samples", "1", "-q"];
    let with = |out: &Path, more: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend(["--out", out.to_str().unwrap()]);
        a.extend(more);
        a.extend(extra);
        run_ok(&a);
    };
    with(&plain, &[]);
    with(&func, &["--functional", "--dump-outputs"]);
    (plain, func)
}

/// The counts, cycles and energy of a functional run are byte for byte those of a run
/// without it; the functional columns come last, and the invariant holds in every mode.
fn check_bundle(workload: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (plain, func) = both(workload, dir.path(), &[]);
    let (ph, prows) = read_csv(&plain.join("layers.csv"));
    let (fh, frows) = read_csv(&func.join("layers.csv"));
    assert_eq!(fh[..ph.len()], ph[..]);
    assert_eq!(
        fh[ph.len()..],
        [
            "func_exact_frac",
            "func_rel_rmse",
            "func_max_abs_err",
            "float_rel_rmse"
        ]
    );
    assert_eq!(prows.len(), frows.len());
    for (p, f) in prows.iter().zip(&frows) {
        assert_eq!(f[..p.len()], p[..]);
        let func = &f[p.len()..];
        if f[1] == "TOTAL" {
            assert!(func.iter().all(String::is_empty), "{f:?}");
        } else {
            assert_eq!(func[0], "1", "{workload} {} {}", f[1], f[3]);
            assert_eq!(func[2], "0");
            // A float bundle: 16-bit weights and inputs stay within 1e-2 of the float
            // layer (quantization alone; mobilenetv2-nsfwjs's worst layer is at 1.8e-3).
            let float: f64 = func[3].parse().unwrap();
            assert!((0.0..1e-2).contains(&float), "{workload} {f:?}");
        }
    }
    let summary = |d: &Path| std::fs::read(d.join("summary.json")).unwrap();
    assert_eq!(summary(&plain), summary(&func));
    assert!(!plain.join("outputs.npz").exists());
    assert!(func.join("outputs.npz").exists());
}

#[test]
fn lenet5_mnist_is_exact_in_every_mode_and_its_counts_unchanged() {
    check_bundle("lenet5-mnist");
    // outputs.npz: one [N, Cout, Ho, Wo] int64 array per (layer, mode), equal across modes.
    let dir = tempfile::tempdir().unwrap();
    let (_, func) = both("lenet5-mnist", dir.path(), &["--modes", "dense,sre"]);
    let bytes = std::fs::read(func.join("outputs.npz")).unwrap();
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut names: Vec<String> = z.file_names().map(String::from).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "conv1.dense.npy",
            "conv1.sre.npy",
            "conv2.dense.npy",
            "conv2.sre.npy",
            "fc1.dense.npy",
            "fc1.sre.npy",
            "fc2.dense.npy",
            "fc2.sre.npy"
        ]
    );
    let read = |z: &mut zip::ZipArchive<_>, n: &str| {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut z.by_name(n).unwrap(), &mut v).unwrap();
        v
    };
    let conv2 = read(&mut z, "conv2.dense.npy");
    let header = String::from_utf8_lossy(&conv2[10..128]).to_string();
    assert!(header.contains("'descr': '<i8'"), "{header}");
    assert!(header.contains("'shape': (1, 50, 8, 8)"), "{header}");
    assert_eq!(conv2.len(), 128 + 50 * 64 * 8);
    assert!(conv2[128..].iter().any(|&b| b != 0));
    assert_eq!(conv2, read(&mut z, "conv2.sre.npy"));
    let fc2 = read(&mut z, "fc2.dense.npy");
    assert!(String::from_utf8_lossy(&fc2[10..128]).contains("'shape': (1, 10)"));
}

#[test]
fn ppocr_cls_mobilenetv3_is_exact_in_every_mode() {
    check_bundle("ppocr-cls-mobilenetv3");
}

/// Minutes in a debug build: `cargo test --test sresim functional:: -- --ignored`.
#[test]
#[ignore = "minutes in a debug build; run with --ignored"]
fn the_mobilenetv2_bundles_are_exact_in_every_mode() {
    for w in ["mobilenetv2-nsfwjs", "mobilenetv2-nsfwjs-pruned"] {
        check_bundle(w);
    }
}

#[test]
fn bad_functional_settings_are_one_line_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (
            &["--functional", "--set", "adc.step=0", "--out", o],
            "error: --set adc.step=0: adc.step: 0 is not a positive number",
        ),
        (
            &["--functional", "--dump-outputs"],
            "error: --dump-outputs: needs --out DIR",
        ),
        (
            &[
                "--functional",
                "--set",
                "precision.weight_bits=32",
                "--set",
                "precision.input_bits=31",
                "--out",
                o,
            ],
            "error: lenet5-mnist: layer conv1: its exact product needs 67 bits",
        ),
    ];
    for (args, want) in cases {
        let mut a = vec!["run", "-q"];
        a.extend(args);
        let r = sresim(&a);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(want), "{err}");
        assert!(!out.exists());
    }
    let r = sresim(&["run", "--dump-outputs", "-q"]);
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("--functional"));
}

#[test]
fn bad_device_settings_name_their_key_or_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let header = "open_wordlines,ideal_sum,observed_sum,probability\n";
    let short = write("short.csv", &format!("{header}9,1,1,0.5\n9,1,2,0.4\n"));
    write("field.csv", &format!("{header}9,1,1,1\n9,2,x,1\n"));
    let narrow = write("narrow.csv", &format!("{header}4,1,1,1\n"));
    let cfg = write("c.toml", "[device]\nerror_table = \"field.csv\"\n");
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--set".into(), "device.stuck_at_0=1.5".into()],
            "error: --set device.stuck_at_0=1.5: device.stuck_at_0: 1.5 is not a probability in [0, 1]".into(),
        ),
        (
            vec!["--set".into(), "device.sigma=-0.5".into()],
            "error: --set device.sigma=-0.5: device.sigma: -0.5 is not a finite number >= 0".into(),
        ),
        (
            vec!["--set".into(), format!("device.error_table={short}")],
            format!("error: {short}: line 2: probability: the rows of open_wordlines 9, ideal_sum 1 sum to 0.9"),
        ),
        (
            vec!["-c".into(), cfg.clone()],
            format!("error: {}: line 3: observed_sum: 'x' is not a finite number", dir.path().join("field.csv").display()),
        ),
        (
            vec!["--set".into(), format!("device.error_table={narrow}")],
            format!("error: {narrow}: open_wordlines: the table stops at 4 wordlines, but dense reads open up to 9"),
        ),
        (
            vec!["--set".into(), "device.time_s=-1".into()],
            "error: --set device.time_s=-1: device.time_s: -1 is not a time >= 0 (seconds)".into(),
        ),
        (
            vec!["--set".into(), "device.drift_nu=[[0.5, 0.05]]".into()],
            "error: --set device.drift_nu=[[0.5, 0.05]]: device.drift_nu: row 1: 2 values, expected [x, nu_mean, nu_sd]".into(),
        ),
        (
            vec!["--set".into(), "device.drift_compensation=yes".into()],
            "error: --set device.drift_compensation=yes: device.drift_compensation: 'yes' is not on or off".into(),
        ),
        (
            vec!["--set".into(), "adc.inl=[0.5]".into()],
            "error: --set adc.inl=[0.5]: adc.inl: one point".into(),
        ),
        (
            vec!["--set".into(), "dac.noise=-0.1".into()],
            "error: --set dac.noise=-0.1: dac.noise: -0.1 is not a finite number >= 0".into(),
        ),
        (
            vec!["--set".into(), "device.level_space=ohms".into(), "--set".into(), "device.levels=[[1.0, 0.1], [2.0, 0.1]]".into()],
            "error: --set device.level_space=ohms: device.level_space: 'ohms' is not a level space (conductance, log10_resistance, ln_conductance)".into(),
        ),
        (
            vec!["--set".into(), "device.levels=[[2.0, 0.1], [1.0, 0.1]]".into()],
            "error: --set device.levels=[[2.0, 0.1], [1.0, 0.1]]: device.levels: row 2: the rows' mean conductances must increase from row to row (lowest state first)".into(),
        ),
        (
            vec!["--set".into(), "device.preset=dlrsim-rram".into(), "--set".into(), "device.sigma=0.1".into()],
            "error: --set device.sigma=0.1: device.sigma: not with device.levels (the table gives each level's spread)".into(),
        ),
        (
            vec!["--set".into(), "device.preset=wan-rram".into(), "--set".into(), "device.time_s=31536000".into()],
            "error: --set device.time_s=31536000: device.time_s: 31536000 s is past the last row of device.relax (172800 s), where its data end".into(),
        ),
        (
            vec!["--set".into(), "device.reference=drifting".into()],
            "error: --set device.reference=drifting: device.reference: 'drifting' is not a reference (device, nominal)".into(),
        ),
        (
            vec!["--set".into(), "device.preset=nope".into()],
            "error: --set device.preset=nope: device.preset: no preset 'nope' (shipped: ideal, noisy-rram, neurosim-rram, dlrsim-rram, milo-rram, nandakumar-pcm, wan-rram)".into(),
        ),
    ];
    for (args, want) in cases {
        let mut a: Vec<String> = ["run", "-q", "--functional", "--out", o]
            .map(String::from)
            .to_vec();
        a.extend(args);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let r = sresim(&a);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success(), "{a:?}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&want), "{err}\nwanted {want}");
        assert!(!out.exists());
    }
}

/// A preset is the [device] keys of its file; a key given explicitly wins over it. A
/// noisy device changes values, never counts.
#[test]
fn presets_and_noise_change_values_not_counts() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, noisy) = both(
        "lenet5-mnist",
        dir.path(),
        &[
            "--set",
            "device.preset=noisy-rram",
            "--set",
            "device.sigma=0",
        ],
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(noisy.join("summary.json")).unwrap()).unwrap();
    let dev = &summary["config"]["device"];
    assert_eq!(dev["read_noise"], 0.02);
    assert_eq!(dev["sigma"], 0.0);
    let (ph, prows) = read_csv(&plain.join("layers.csv"));
    let (_, nrows) = read_csv(&noisy.join("layers.csv"));
    let mut inexact = 0;
    for (p, n) in prows.iter().zip(&nrows) {
        assert_eq!(n[..ph.len()], p[..]);
        if n[1] != "TOTAL" && n[ph.len()] != "1" {
            inexact += 1;
            let rmse: f64 = n[ph.len() + 1].parse().unwrap();
            assert!(rmse > 0.0 && rmse.is_finite());
        }
    }
    assert!(inexact > 0);
}

/// A PCM a day after programming: drift costs every layer a third of its output, and
/// the per-layer compensation calibrated at read time gives most of it back; the config
/// echoes the keys it sets, and a run that sets none echoes none of them.
#[test]
fn drift_over_a_day_and_its_compensation_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let rmse = |comp: &str| {
        let out = dir.path().join(comp);
        run_ok(&[
            "run",
            "--workload",
            "lenet5-mnist",
            "--samples",
            "1",
            "-q",
            "--functional",
            "--modes",
            "dense",
            "--out",
            out.to_str().unwrap(),
            "--set",
            "device.preset=nandakumar-pcm",
            "--set",
            "device.time_s=86400",
            "--set",
            &format!("device.drift_compensation={comp}"),
            "--set",
            "precision.weight_bits=9",
            "--set",
            "crossbar.cell_bits=8",
        ]);
        let (h, rows) = read_csv(&out.join("layers.csv"));
        let col = h.iter().position(|c| c == "func_rel_rmse").unwrap();
        let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
        assert!(summary.contains("\"time_s\": 86400"), "{summary}");
        rows.iter()
            .filter(|r| r[1] != "TOTAL")
            .map(|r| r[col].parse::<f64>().unwrap())
            .collect::<Vec<_>>()
    };
    let (off, on) = (rmse("off"), rmse("on"));
    for (a, b) in off.iter().zip(&on) {
        assert!(*a > 0.25 && *b < 0.15, "off {off:?} on {on:?}");
    }
    let plain = dir.path().join("plain");
    run_ok(&[
        "run",
        "--samples",
        "1",
        "-q",
        "--out",
        plain.to_str().unwrap(),
    ]);
    let summary = std::fs::read_to_string(plain.join("summary.json")).unwrap();
    for key in [
        "time_s",
        "prog_noise",
        "drift",
        "relax",
        "inl",
        "gain_error",
        "offset",
        "\"noise\"",
    ] {
        assert!(!summary.contains(key), "{key} in {summary}");
    }
}

/// A one-layer fc bundle of float weights and inputs, `weight` [out, in] and `input`
/// [samples, in], as f32 or (`int`) i32 arrays.
fn tiny_fc(dir: &Path, weight: &[&[f64]], input: &[&[f64]], int: bool) {
    use ndarray::Array2;
    use ndarray_npy::NpzWriter;
    std::fs::create_dir_all(dir).unwrap();
    let (o, i) = (weight.len(), weight[0].len());
    let manifest = format!(
        r#"{{"name": "tinyfc", "source": "written by tests/sresim/functional.rs",
          "layers": [{{"name": "fc", "kind": "fc", "in_features": {i}, "out_features": {o},
          "weight": "fc.weight", "input": "fc.input"}}]}}"#
    );
    std::fs::write(dir.join("manifest.json"), manifest).unwrap();
    let w = Array2::from_shape_fn((o, i), |(a, b)| weight[a][b]);
    let x = Array2::from_shape_fn((input.len(), i), |(a, b)| input[a][b]);
    let mut npz = NpzWriter::new(std::fs::File::create(dir.join("tensors.npz")).unwrap());
    if int {
        npz.add_array("fc.weight", &w.mapv(|v| v as i32)).unwrap();
        npz.add_array("fc.input", &x.mapv(|v| v as i32)).unwrap();
    } else {
        npz.add_array("fc.weight", &w.mapv(|v| v as f32)).unwrap();
        npz.add_array("fc.input", &x.mapv(|v| v as f32)).unwrap();
    }
    npz.finish().unwrap();
}

/// float_rel_rmse of each (layer, mode) row of a functional run of `bundle`.
fn float_rel_rmse(bundle: &Path, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        "run",
        "--workload",
        bundle.to_str().unwrap(),
        "--functional",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ];
    a.extend(extra);
    run_ok(&a);
    let (h, rows) = read_csv(&out.join("layers.csv"));
    let c = h.iter().position(|x| x == "float_rel_rmse").unwrap();
    rows.iter()
        .filter(|r| r[1] != "TOTAL")
        .map(|r| r[c].clone())
        .collect()
}

#[test]
fn float_rel_rmse_compares_the_dequantized_output_with_the_float_layer() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("tinyfc");
    tiny_fc(&b, &[&[1.0, -0.5]], &[&[0.3, 0.9]], false);
    // 4-bit weights: scale 7 by max|w| 1 -> q_w = [7, round(-3.5) = -4], step 1/7.
    // 4-bit unsigned inputs: scale 15 by max 0.9 -> q_in = [5, 15], step 0.06.
    // Y = 35 - 60 = -25 -> -25 * 0.06 / 7; float 0.3 - 0.45 = -0.15.
    let want = ((-25.0 * 0.9 / 15.0 / 7.0) - (0.3f32 as f64 * 1.0 - 0.9f32 as f64 * 0.5)).abs()
        / (0.3f32 as f64 - 0.9f32 as f64 * 0.5).abs();
    let bits = [
        "--set",
        "precision.weight_bits=4",
        "--set",
        "precision.input_bits=4",
    ];
    let got = float_rel_rmse(&b, &dir.path().join("o4"), &bits);
    assert_eq!(got.len(), 5);
    for g in &got {
        let g: f64 = g.parse().unwrap();
        assert!((g - want).abs() < 1e-6 * want, "{g} against {want}");
    }
    assert!((want - 0.428_571).abs() < 1e-3);
    // The same with an ADC that clips: the error is the mode's, against the same float.
    let clip = float_rel_rmse(
        &b,
        &dir.path().join("clip"),
        &[bits.as_slice(), &["--set", "adc.bits=1"]].concat(),
    );
    assert!(clip.iter().all(|g| g.parse::<f64>().unwrap() > want));
    // An integer bundle has no float layer: empty.
    let ib = dir.path().join("intfc");
    tiny_fc(&ib, &[&[3.0, -2.0]], &[&[1.0, 4.0]], true);
    let empty = float_rel_rmse(&ib, &dir.path().join("int"), &[]);
    assert!(empty.iter().all(String::is_empty), "{empty:?}");
}

#[test]
fn finer_precision_lowers_float_rel_rmse() {
    let dir = tempfile::tempdir().unwrap();
    let at = |bits: u32| -> Vec<f64> {
        let (wb, ib) = (
            format!("precision.weight_bits={bits}"),
            format!("precision.input_bits={bits}"),
        );
        let out = dir.path().join(bits.to_string());
        float_rel_rmse(
            Path::new("lenet5-mnist"),
            &out,
            &[
                "--samples",
                "1",
                "--modes",
                "dense,sre",
                "--set",
                &wb,
                "--set",
                &ib,
            ],
        )
        .iter()
        .map(|g| g.parse().unwrap())
        .collect()
    };
    let (coarse, mid, fine) = (at(6), at(10), at(16));
    for ((c, m), f) in coarse.iter().zip(&mid).zip(&fine) {
        assert!(c > m && m > f && *f > 0.0, "{c} {m} {f}");
    }
}

#[test]
fn a_functional_run_whose_programs_exceed_the_memory_bound_is_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let cap = ["--set", "limits.max_layer_bytes=16777216"];
    // The counts of lenet5-mnist fit 16 MiB; its functional programs do not.
    let plain = dir.path().join("plain");
    run_ok(&[&["run", "-q", "--out", plain.to_str().unwrap()], &cap[..]].concat());
    let func = dir.path().join("func");
    let o = sresim(
        &[
            &["run", "-q", "--functional", "--out", func.to_str().unwrap()],
            &cap[..],
        ]
        .concat(),
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: lenet5-mnist: layer fc1: a functional run of it needs about")
            && err.contains("limits.max_layer_bytes = 16 MiB"),
        "{err}"
    );
    assert!(!func.exists());
}

/// The table's `exact` and `rel-err` columns of one `--functional` run of lenet5-mnist's
/// fc2 (one sample, dense and sre), and its standard output whole.
fn table_of(extra: &[&str]) -> (Vec<(String, String, String)>, String) {
    let mut args = vec![
        "run",
        "--workload",
        "lenet5-mnist",
        "--functional",
        "--samples",
        "1",
        "--layers",
        "fc2",
        "--modes",
        "dense,sre",
    ];
    args.extend_from_slice(extra);
    let out = common::ok(&sresim(&args));
    let header = out.lines().find(|l| l.starts_with("mode")).unwrap();
    assert!(header.ends_with("exact    rel-err"), "{header}");
    let rows = out
        .lines()
        .filter(|l| l.starts_with("dense") || l.starts_with("sre"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = f.len();
            (f[0].to_string(), f[n - 2].to_string(), f[n - 1].to_string())
        })
        .collect();
    (rows, out)
}

#[test]
fn the_run_table_shows_the_functional_error_and_says_when_noise_rounded_away() {
    // Ideal device: exact in every mode, and no note (nothing was asked of the device).
    let (rows, out) = table_of(&[]);
    assert_eq!(rows.len(), 2);
    for (_, exact, err) in &rows {
        assert_eq!((exact.as_str(), err.as_str()), ("100.0%", "0.00e0"));
    }
    assert!(!out.contains("note:"), "{out}");
    // A read noise far below half a level: every read rounds back, and the note says so.
    let (rows, out) = table_of(&["--set", "device.read_noise=0.0001"]);
    assert!(rows.iter().all(|r| r.1 == "100.0%"), "{out}");
    assert!(out.contains("note: the [device] is not ideal"), "{out}");
    // Visible noise: some outputs miss, the error is positive, and no note.
    let (rows, out) = table_of(&["--set", "device.read_noise=0.2"]);
    for (mode, exact, err) in &rows {
        assert_ne!(exact, "100.0%", "{mode}: {out}");
        assert!(err.parse::<f64>().unwrap() > 0.0, "{mode}: {out}");
    }
    assert!(!out.contains("note:"), "{out}");
    // Without --functional the table keeps its columns.
    let plain = common::ok(&sresim(&["run", "--samples", "1", "--layers", "fc2"]));
    let header = plain.lines().find(|l| l.starts_with("mode")).unwrap();
    assert!(header.ends_with("crossbars"), "{header}");
}
