//! Layers on their own: a bundle of layers that do not chain (here from two networks, in
//! an order no network has) runs with one `note:` line, and `--layers` (on `run`) and a
//! grid's `layers` (on `sweep`) give exactly the rows those layers have in a run of the
//! whole workload.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{ok, s, sresim};

use std::io::{Read, Write};
use std::path::Path;

/// The records of a CSV, header first.
fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .expect("csv exists");
    r.records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect()
}

/// The rows of `layer` in a layers.csv (column 1 is `layer`).
fn rows_of<'a>(rows: &'a [Vec<String>], layer: &str) -> Vec<&'a Vec<String>> {
    rows.iter().filter(|r| r[1] == layer).collect()
}

/// The raw bytes of the npz entry `name` (or `name.npy`).
fn entry(npz: &Path, name: &str) -> Vec<u8> {
    let mut z = zip::ZipArchive::new(std::fs::File::open(npz).unwrap()).unwrap();
    let file = if z.index_for_name(name).is_some() {
        name.to_string()
    } else {
        format!("{name}.npy")
    };
    let mut f = z.by_name(&file).unwrap();
    let mut b = Vec::new();
    f.read_to_end(&mut b).unwrap();
    b
}

/// A bundle of one layer of each (bundle, layer) source, renamed `<i>_<layer>`; their
/// arrays are copied byte for byte.
fn mixed_bundle(dir: &Path, picks: &[(&str, &str)]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
    let mut layers = Vec::new();
    let mut names = Vec::new();
    let mut z = zip::ZipWriter::new(std::fs::File::create(dir.join("tensors.npz")).unwrap());
    for (i, (bundle, layer)) in picks.iter().enumerate() {
        let m: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root.join(bundle).join("manifest.json")).unwrap(),
        )
        .unwrap();
        let mut l = m["layers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == *layer)
            .unwrap()
            .clone();
        let name = format!("{i}_{layer}");
        for key in ["weight", "input"] {
            let array = l[key].as_str().unwrap().to_string();
            let copy = format!("{name}.{key}");
            z.start_file(
                format!("{copy}.npy"),
                zip::write::SimpleFileOptions::default(),
            )
            .unwrap();
            z.write_all(&entry(&root.join(bundle).join("tensors.npz"), &array))
                .unwrap();
            l[key] = copy.into();
        }
        l["name"] = name.clone().into();
        layers.push(l);
        names.push(name);
    }
    z.finish().unwrap();
    let m = serde_json::json!({"name": "mixed", "source": "two networks", "layers": layers});
    std::fs::write(dir.join("manifest.json"), m.to_string()).unwrap();
    names
}

#[test]
fn a_bundle_of_independent_layers_runs_with_a_note() {
    // block_1_expand takes 16 channels and makes 96; Conv1 of the other network takes the
    // 3-channel image, which no earlier layer of this bundle produces.
    let tmp = tempfile::tempdir().unwrap();
    let b = tmp.path().join("mixed");
    std::fs::create_dir(&b).unwrap();
    let picks = [
        ("mobilenetv2-nsfwjs-pruned", "block_1_expand"),
        ("mobilenetv2-nsfwjs", "Conv1"),
        ("mobilenetv2-nsfwjs", "block_1_depthwise"),
    ];
    let names = mixed_bundle(&b, &picks);
    let out = tmp.path().join("out");
    let o = sresim(&["run", "--workload", s(&b), "--out", s(&out), "-q"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    let notes: Vec<&str> = err.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(
        notes[0].contains(
            "manifest.json: layers[1].in_channels: 3 channels are produced by no earlier layer"
        ),
        "{err}"
    );
    let mixed = csv_rows(&out.join("layers.csv"));
    // Each layer gives the rows it gives in its own network, run alone with --layers.
    for ((bundle, layer), name) in picks.iter().zip(&names) {
        let alone = tmp.path().join(name);
        ok(&sresim(&[
            "run",
            "--workload",
            &format!("workloads/{bundle}"),
            "--layers",
            layer,
            "--out",
            s(&alone),
            "-q",
        ]));
        let want = csv_rows(&alone.join("layers.csv"));
        let (got, want) = (rows_of(&mixed, name), rows_of(&want, layer));
        assert_eq!(got.len(), 5);
        for (g, w) in got.iter().zip(&want) {
            // Columns after network and layer: kind, mode and every count and energy.
            assert_eq!(g[2..], w[2..], "{name}");
        }
    }
}

#[test]
fn selected_layers_give_their_rows_of_the_whole_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (all, some) = (tmp.path().join("all"), tmp.path().join("some"));
    ok(&sresim(&["run", "--out", s(&all), "-q"]));
    let o = ok(&sresim(&[
        "run",
        "--layers",
        "fc*,conv2",
        "--out",
        s(&some),
    ]));
    assert!(
        o.starts_with("--layers: 3 of 4 layers: conv2, fc1, fc2\n"),
        "{o}"
    );
    let (all, some) = (
        csv_rows(&all.join("layers.csv")),
        csv_rows(&some.join("layers.csv")),
    );
    assert_eq!(all[0], some[0], "same header");
    for layer in ["conv2", "fc1", "fc2"] {
        assert_eq!(rows_of(&some, layer), rows_of(&all, layer), "{layer}");
    }
    assert!(rows_of(&some, "conv1").is_empty());
    // TOTAL sums the selected layers only.
    let cycles = some[0].iter().position(|h| h == "cycles").unwrap();
    let mode = some[0].iter().position(|h| h == "mode").unwrap();
    for t in rows_of(&some, "TOTAL") {
        let sum: u64 = some[1..]
            .iter()
            .filter(|r| r[mode] == t[mode] && r[1] != "TOTAL")
            .map(|r| r[cycles].parse::<u64>().unwrap())
            .sum();
        assert_eq!(t[cycles].parse::<u64>().unwrap(), sum);
    }
}

#[test]
fn a_pattern_matching_nothing_is_one_error_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = sresim(&["run", "--layers", "conv1,conv9", "--out", s(&out)]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err,
        "error: --layers: 'conv9' matches no layer of lenet5-mnist (its layers: conv1, conv2, fc1, fc2)\n"
    );
    assert!(!out.exists());
    let o = sresim(&["run", "--layers", "conv1,", "--out", s(&out)]);
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("error: --layers: expected layer names"));
    // The same in a grid, before any point runs.
    std::fs::write(
        tmp.path().join("g.toml"),
        "workloads = [\"lenet5\"]\nlayers = [\"fc*\"]\nmodes = [\"dense\"]\n",
    )
    .unwrap();
    let g = tmp.path().join("g.toml");
    let o = sresim(&["sweep", "--grid", s(&g), "--out", s(&out)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "error: {}: layers: 'fc*' matches no layer of lenet5",
            g.display()
        )),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn a_grid_with_layers_gives_the_rows_of_the_whole_grid() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = |layers: &str| {
        format!("workloads = [\"lenet5\"]\n{layers}modes = [\"dense\", \"sre\"]\n[axes]\n\"ou.rows\" = [4, 16]\n")
    };
    let (g_all, g_some) = (tmp.path().join("all.toml"), tmp.path().join("some.toml"));
    std::fs::write(&g_all, grid("")).unwrap();
    std::fs::write(&g_some, grid("layers = [\"conv?\"]\n")).unwrap();
    let (all, some) = (tmp.path().join("all"), tmp.path().join("some"));
    ok(&sresim(&[
        "sweep",
        "--grid",
        s(&g_all),
        "--out",
        s(&all),
        "-q",
    ]));
    ok(&sresim(&[
        "sweep",
        "--grid",
        s(&g_some),
        "--out",
        s(&some),
        "-q",
    ]));
    let (all, some) = (
        csv_rows(&all.join("points.csv")),
        csv_rows(&some.join("points.csv")),
    );
    assert_eq!(all[0], some[0]);
    let layer = all[0].iter().position(|h| h == "layer").unwrap();
    let convs = |rows: &[Vec<String>]| -> Vec<Vec<String>> {
        rows[1..]
            .iter()
            .filter(|r| r[layer].starts_with("conv"))
            .cloned()
            .collect()
    };
    // 2 points x 2 modes x (2 conv layers + TOTAL).
    assert_eq!(some.len() - 1, 2 * 2 * 3);
    assert_eq!(convs(&some), convs(&all));
}
