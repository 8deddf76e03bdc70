//! Inputs are checked first (docs/errors.md, "Output directories", "Limits"): a command
//! refused for its own input leaves a journal of a killed run in its --out untouched;
//! `memory` refuses a corrupt bundle array as every other command does; a layer the
//! raised memory cap lets through but the machine cannot hold is one error line.

use crate::common::{entries, fails, ok, s, BIN, QUICK_RUN};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output};

fn sresim_in(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .envs(envs.iter().copied())
        .output()
        .unwrap()
}

/// A directory D holding the journal of a run killed between its renames (the test
/// hook aborts after the first): each command refused for its own input leaves every
/// file of D as it was, the journal included (it used to complete the journal first).
#[test]
fn a_refused_command_leaves_a_journal_in_its_out_untouched() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let with = |more: &[&'static str]| [QUICK_RUN, more].concat();
    ok(&sresim_in(d, &with(&["-o", "D"]), &[]));
    let killed = sresim_in(
        d,
        &with(&["--set", "ou.rows=4", "-o", "D"]),
        &[("SRESIM_TEST_ABORT_AFTER_RENAMES", "1")],
    );
    assert!(killed.status.code().is_none(), "killed: {killed:?}");
    let out = d.join("D");
    assert!(out.join(".sresim-commit").exists());
    let before = entries(&out);
    for (args, says) in [
        (
            vec!["memory", "--workload", "lenet5", "-o", "D"],
            "unknown network",
        ),
        (
            vec![
                "memory",
                "--workload",
                "resnet18",
                "--batch",
                "0",
                "-o",
                "D",
            ],
            "--batch: must be positive",
        ),
        (
            vec![
                "memory",
                "--workload",
                "resnet18",
                "--trace-format",
                "x",
                "-o",
                "D",
            ],
            "--trace-format: needs --dump-trace",
        ),
        (
            vec![
                "run",
                "-w",
                "lenet5",
                "--synthetic-inputs",
                "--samples",
                "0",
                "-o",
                "D",
            ],
            "--samples 0",
        ),
    ] {
        let e = fails(&sresim_in(d, &args, &[]));
        assert!(e.contains(says), "{args:?}: {e}");
        assert!(entries(&out) == before, "{args:?} changed D");
    }
}

/// A copy at `dir` of the committed lenet5-mnist bundle, its array `name` replaced by
/// what `change` makes of its entry's bytes.
fn bundle_with(dir: &Path, name: &str, change: impl Fn(Vec<u8>) -> Vec<u8>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/lenet5-mnist");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(src.join("manifest.json"), dir.join("manifest.json")).unwrap();
    let old = std::fs::read(src.join("tensors.npz")).unwrap();
    let mut from = zip::ZipArchive::new(std::io::Cursor::new(old)).unwrap();
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for i in 0..from.len() {
        let mut f = from.by_index(i).unwrap();
        let entry = f.name().to_string();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        if entry == format!("{name}.npy") {
            bytes = change(bytes);
        }
        z.start_file(entry, opts).unwrap();
        z.write_all(&bytes).unwrap();
    }
    std::fs::write(dir.join("tensors.npz"), z.finish().unwrap().into_inner()).unwrap();
}

/// `npy` with the first dimension of its header's shape replaced by `first`, the header
/// padded to its old length.
fn first_dimension(npy: Vec<u8>, first: &str) -> Vec<u8> {
    let len = u16::from_le_bytes([npy[8], npy[9]]) as usize;
    let text = String::from_utf8(npy[10..10 + len].to_vec()).unwrap();
    let at = text.find("'shape': (").unwrap() + "'shape': (".len();
    let end = at + text[at..].find(',').unwrap();
    let mut new = format!("{}{first}{}", &text[..at], &text[end..]);
    let body = new.trim_end().to_string();
    assert!(body.len() < len, "the header has room");
    new = format!("{body:<width$}\n", width = len - 1);
    [&npy[..10], new.as_bytes(), &npy[10 + len..]].concat()
}

/// What a test makes of an array's bytes.
type Change = Box<dyn Fn(Vec<u8>) -> Vec<u8>>;

/// `memory` opens a bundle's arrays as `check` and `run` do: a weight array that is not
/// a .npy array, a graph input cut short of the data its header declares, and one whose
/// header declares 2^64-1 samples, are refused in one line (memory used to read the manifest and one header
/// and accept them).
#[test]
fn memory_refuses_a_bundle_with_a_corrupt_array() {
    let t = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, Change); 3] = [
        ("b1", "conv1.weight", Box::new(|_| b"hello world".to_vec())),
        (
            "b2",
            "graph.input",
            Box::new(|b| b[..b.len() - 100].to_vec()),
        ),
        (
            "b3",
            "graph.input",
            Box::new(|b| first_dimension(b, "18446744073709551615")),
        ),
    ];
    for (b, array, change) in cases {
        let dir = t.path().join(b);
        bundle_with(&dir, array, change);
        let check = fails(&sresim_in(t.path(), &["check", b], &[]));
        assert!(
            check.contains(&format!("{b}/tensors.npz: {array}: ")),
            "{check}"
        );
        let e = fails(&sresim_in(
            t.path(),
            &["memory", "-q", "--workload", b],
            &[],
        ));
        assert!(
            e.starts_with(&format!("error: --workload: {b}/tensors.npz: {array}: ")),
            "{e}"
        );
    }
    // The bundle itself, unchanged, is accepted.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/lenet5-mnist");
    ok(&sresim_in(
        t.path(),
        &["memory", "-q", "--workload", s(&src)],
        &[],
    ));
}

/// A 1x1 convolution padded by 2^20 (4.4e12 output positions) with limits.max_layer_bytes
/// raised to its largest value, under a 3 GB address-space limit: one error line naming
/// the layer and the bytes, exit 1 (it used to abort with a backtrace).
#[test]
fn an_allocation_the_raised_cap_lets_through_fails_in_one_line() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(
        t.path().join("wide.toml"),
        "name = \"wide\"\n[[layers]]\nname = \"c\"\nkind = \"conv\"\nin_channels = 1\n\
         out_channels = 1\nkernel = 1\npadding = 1048576\ninput_shape = [1, 1, 1]\n",
    )
    .unwrap();
    let script = format!(
        "ulimit -v 3000000; exec '{BIN}' run --workload wide.toml --set limits.max_layer_bytes=9223372036854775807 -q"
    );
    let o = sresim_sh(t.path(), &script);
    let e = fails(&o);
    assert!(
        e.starts_with("error: wide: c: cannot allocate ") && e.contains(" bytes ("),
        "{e}"
    );
    assert!(!e.contains("panicked") && !e.contains("backtrace"), "{e}");
}

fn sresim_sh(dir: &Path, script: &str) -> Output {
    Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap()
}

/// A layer that runs a window of column blocks at a time (Llama-3-8B's LM head, under the
/// default cap) is refused for `--engine cycle` before the first layer is loaded, at once
/// (the refusal used to come only when that last layer was reached, minutes later).
#[test]
fn a_windowed_layer_is_refused_for_the_cycle_engine_before_any_layer_runs() {
    let t = tempfile::tempdir().unwrap();
    let start = std::time::Instant::now();
    let args = [
        "run",
        "-q",
        "--workload",
        "llama3-8b-decode",
        "--engine",
        "cycle",
    ];
    let e = fails(&sresim_in(t.path(), &args, &[]));
    assert!(
        e.starts_with("error: llama3-8b-decode: lm_head: --engine cycle: this layer runs a window"),
        "{e}"
    );
    assert!(start.elapsed().as_secs() < 30, "{:?}", start.elapsed());
}

/// `--seq-len` sizes bert's and gnmt's sequence; on a network without one it was ignored
/// without a word, and is refused in one line (docs/memory.md).
#[test]
fn memory_refuses_a_sequence_length_for_a_network_without_one() {
    let lenet = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/lenet5-mnist");
    for w in ["resnet18", s(&lenet)] {
        let e = fails(&crate::common::sresim(&[
            "memory",
            "-q",
            "--workload",
            w,
            "--seq-len",
            "64",
        ]));
        assert!(
            e.starts_with("error: --seq-len: '") && e.contains("has no sequence length to set"),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    ok(&crate::common::sresim(&[
        "memory",
        "-q",
        "--workload",
        "bert",
        "--seq-len",
        "64",
    ]));
}
