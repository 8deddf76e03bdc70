//! Shards of an accuracy run (`accuracy --sample-range`) merged equal the unsharded run to
//! the last bit: every split of the samples (uneven, single-sample shards, given in any
//! order), each shard on one or two threads, with device draws, a calibrated and clipping
//! ADC and a layer selection. And the progress a run reports adds up to the work its bar
//! is given.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Tests read outputs with std::fs; a split of one range is a split.
#![allow(clippy::disallowed_methods, clippy::single_range_in_vec_init)]

use crossbar::Mode;
use proptest::prelude::*;
use sim::accuracy_shard::{merge, ShardRun};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

struct Setup {
    cfg: sim::config::Resolved,
    net: accuracy::Network,
    modes: Vec<Mode>,
    crossbar: Vec<bool>,
    draws: u32,
}

fn setup(sets: &[&str], modes: &[Mode], layers: Option<&str>, draws: u32) -> Setup {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let cfg = sim::config::load_cli(None, &sets).unwrap();
    let w = sim::accuracy::open_bundle(None, &cfg, "--workload").unwrap();
    let net = sim::accuracy::load_network(&w, &cfg).unwrap();
    let sel = layers.map(|l| workload::LayerSelector::parse(l).unwrap());
    let crossbar = sim::accuracy::crossbar_layers(&net, sel.as_ref(), "--layers").unwrap();
    Setup {
        cfg,
        net,
        modes: modes.to_vec(),
        crossbar,
        draws,
    }
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// The unsharded run's draws, as text that shows every float's bits.
fn unsharded(s: &Setup, samples: usize) -> String {
    let d = sim::accuracy::evaluate_draws(
        &s.net,
        &s.cfg,
        &s.modes,
        &s.crossbar,
        samples,
        s.draws,
        &|_| {},
    )
    .unwrap();
    format!("{:?} {:?} {:?}", d.k, d.seeds, d.evals)
}

/// Writes the shard of samples `range` of a run over `samples` into `dir`, on `threads`.
fn write(s: &Setup, samples: usize, range: Range<usize>, dir: &std::path::Path, threads: usize) {
    let out = outdir::OutputDir::open(dir).unwrap();
    let run = ShardRun {
        net: &s.net,
        cfg: &s.cfg,
        modes: &s.modes,
        crossbar: &s.crossbar,
        workload: None,
        samples,
        range,
        draws: s.draws,
    };
    pool(threads).install(|| run.write(&out, &|_| {})).unwrap();
}

/// Writes the shards `split` (shard i on 1 + i % 2 threads, or on `threads`), merges them
/// given in reverse order, and returns the merged draws as [`unsharded`] shows them.
fn sharded(s: &Setup, samples: usize, split: &[Range<usize>], threads: Option<usize>) -> String {
    let t = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    for (i, r) in split.iter().enumerate() {
        let dir = t.path().join(format!("s{i}"));
        write(s, samples, r.clone(), &dir, threads.unwrap_or(1 + i % 2));
        dirs.push(dir);
    }
    dirs.reverse();
    let m = merge(&dirs).unwrap();
    let labels = s.net.labels.as_ref().map(|l| l[..samples].to_vec());
    assert_eq!(m.info.labels, labels);
    assert_eq!(
        m.info,
        sim::accuracy::NetInfo {
            labels,
            ..sim::accuracy::NetInfo::of(&s.net)
        }
    );
    assert_eq!(m.crossbar, s.crossbar);
    assert_eq!(
        m.config_values,
        serde_json::to_value(&s.cfg.config).unwrap()
    );
    assert_eq!(m.manifest.config_origin, s.cfg.origin);
    let d = m.draws;
    format!("{:?} {:?} {:?}", d.k, d.seeds, d.evals)
}

/// Fixed splits of 5 samples: whole, a single sample then the rest, uneven thirds,
/// single samples; on an ideal device (the exact fast path), read noise over 2 draws,
/// and a calibrated 5-bit ADC that clips (its steps from the first samples of the graph
/// input, whatever the shard) with only some layers on the crossbar.
#[test]
fn merged_shards_equal_the_unsharded_run() {
    let n = 5;
    let splits: [&[Range<usize>]; 4] = [
        &[0..5],
        &[0..1, 1..5],
        &[0..2, 2..3, 3..5],
        &[0..1, 1..2, 2..3, 3..4, 4..5],
    ];
    let setups = [
        setup(&[], &[Mode::Dense, Mode::Sre], None, 1),
        setup(&["device.read_noise=0.2"], &[Mode::Dense], None, 2),
        setup(
            &[
                "adc.range=percentile:99",
                "adc.bits=5",
                "adc.calibration_samples=3",
                "device.read_noise=0.05",
            ],
            &[Mode::Sre],
            Some("conv2,fc1"),
            1,
        ),
    ];
    for (i, s) in setups.iter().enumerate() {
        let want = unsharded(s, n);
        // Every split on the fast path; the slower reads OU by OU take two of them.
        let splits = if i == 0 { &splits[..] } else { &splits[1..3] };
        for &split in splits {
            assert_eq!(sharded(s, n, split, None), want, "{split:?}");
        }
    }
    // A run over fewer samples than the graph input holds: its shards cover only those.
    let s = &setups[1];
    assert_eq!(sharded(s, 3, &[0..2, 2..3], None), unsharded(s, 3));
}

/// A shard's records.csv is the same bytes on one thread and on two.
#[test]
fn a_shard_does_not_depend_on_threads() {
    let s = setup(&["device.read_noise=0.2"], &[Mode::Dense], None, 2);
    let bytes = |threads: usize| {
        let t = tempfile::tempdir().unwrap();
        write(&s, 6, 2..5, t.path(), threads);
        std::fs::read(t.path().join("records.csv")).unwrap()
    };
    let one = bytes(1);
    assert_eq!(one, bytes(2));
    // Two draws of three samples, each a float row and a row per path (quantized, dense).
    assert_eq!(one.iter().filter(|&&b| b == b'\n').count(), 1 + 2 * 3 * 3);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5, ..ProptestConfig::default() })]

    /// Any split of 6 samples into shards, all on one thread or all on two.
    #[test]
    fn any_split_merges_to_the_unsharded_run(
        cuts in proptest::collection::btree_set(1usize..6, 0..5),
        threads in 1usize..3,
    ) {
        let n = 6;
        let s = setup(&["device.read_noise=0.1"], &[Mode::Dense, Mode::Ideal], None, 1);
        let mut bounds: Vec<usize> = vec![0];
        bounds.extend(cuts);
        bounds.push(n);
        let split: Vec<Range<usize>> = bounds.windows(2).map(|w| w[0]..w[1]).collect();
        prop_assert_eq!(sharded(&s, n, &split, Some(threads)), unsharded(&s, n));
    }
}

/// The units a run reports add up to the total its bar is given, with draws, a
/// calibrated ADC, modes on the exact fast path and modes read OU by OU.
#[test]
fn progress_adds_up_to_the_work() {
    for (sets, modes, draws) in [
        (&[][..], &[Mode::Dense, Mode::Ideal][..], 3),
        (&["device.read_noise=0.1"][..], &[Mode::Dense][..], 2),
        (
            &["adc.range=percentile:99", "adc.calibration_samples=2"][..],
            &[Mode::Sre][..],
            1,
        ),
        (&[][..], &[][..], 1),
    ] {
        let s = setup(sets, modes, Some("conv1,fc*"), draws);
        let done = AtomicU64::new(0);
        let samples = 3;
        sim::accuracy::evaluate_draws(
            &s.net,
            &s.cfg,
            &s.modes,
            &s.crossbar,
            samples,
            draws,
            &|n| {
                done.fetch_add(n, Ordering::Relaxed);
            },
        )
        .unwrap();
        let total =
            sim::accuracy::network_work(&s.net, &s.crossbar, &s.cfg, &s.modes, samples, draws);
        assert_eq!(done.into_inner(), total, "{sets:?} {modes:?}");
        assert!(total > 0);
    }
}

/// `accuracy-merge` parsed records but not their range: a NaN in the float row's `sq`
/// became `null` in summary.json, an infinity 0, and a `func_outputs` of 2^64 - 1 wrapped
/// the sum so that `func_exact_frac` read 1.23. Every field is now checked in its range
/// (counts below 2^64 - 1, a part not above its whole, floats finite and >= 0: sums of
/// squares), and the sums over samples are checked arithmetic.
#[test]
fn records_out_of_range_and_sums_that_wrap_are_refused() {
    let s = setup(&[], &[Mode::Dense], None, 1);
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    write(&s, 3, 0..3, &dir, 1);
    let path = dir.join("records.csv");
    let clean = std::fs::read_to_string(&path).unwrap();
    let header: Vec<String> = clean
        .lines()
        .next()
        .unwrap()
        .split(',')
        .map(String::from)
        .collect();
    let col = |suffix: &str| header.iter().position(|c| c.ends_with(suffix)).unwrap();
    // Lines: 1 the header, then per sample the float, quantized and dense rows.
    let tamper = |edits: &[(usize, usize, &str)]| {
        let mut lines: Vec<String> = clean.lines().map(String::from).collect();
        for &(line, column, value) in edits {
            let mut cells: Vec<String> = lines[line - 1].split(',').map(String::from).collect();
            cells[column] = value.to_string();
            lines[line - 1] = cells.join(",");
        }
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let e = merge(std::slice::from_ref(&dir)).err().unwrap().to_string();
        assert!(e.starts_with(&format!("{}: ", path.display())), "{e}");
        assert_eq!(e.lines().count(), 1);
        e
    };
    let sq = header.iter().position(|c| c == "sq").unwrap();
    let e = tamper(&[(2, sq, "7ff8000000000000")]);
    assert!(
        e.ends_with(
            "line 2: cell 6 (sq): '7ff8000000000000' is NaN, not a finite sum of squares (>= 0)"
        ),
        "{e}"
    );
    let e = tamper(&[(2, sq, "7ff0000000000000")]);
    assert!(e.contains("is inf, not a finite sum"), "{e}");
    let e = tamper(&[(4, col(".func_sq_err"), "bff0000000000000")]);
    assert!(
        e.contains("func_sq_err): 'bff0000000000000' is -1.0, not a finite sum"),
        "{e}"
    );
    // The smallest negative double is named in a few characters, not 330 digits.
    let e = tamper(&[(2, sq, "8000000000000001")]);
    assert!(
        e.ends_with("'8000000000000001' is -5e-324, not a finite sum of squares (>= 0)"),
        "{e}"
    );
    // Predictions and labels are classes of the network (lenet5: 10 outputs).
    let label = header.iter().position(|c| c == "label").unwrap();
    let prediction = header.iter().position(|c| c == "prediction").unwrap();
    let e = tamper(&[(2, prediction, "10")]);
    assert!(
        e.ends_with("line 2: prediction: 10 is not a class of the network (0..10)"),
        "{e}"
    );
    let e = tamper(&[(3, prediction, "4000")]);
    assert!(
        e.ends_with("line 3: prediction: 4000 is not a class of the network (0..10)"),
        "{e}"
    );
    let e = tamper(&[(2, label, "-3")]);
    assert!(
        e.ends_with("line 2: label: -3 is not a class of the network (0..10)"),
        "{e}"
    );
    let outputs = col(".func_outputs");
    let e = tamper(&[(4, outputs, "18446744073709551615")]);
    assert!(
        e.ends_with("func_outputs): 18446744073709551615, a count saturated at 2^64 - 1"),
        "{e}"
    );
    let e = tamper(&[(4, outputs + 1, "99999")]);
    assert!(e.contains(".func_exact: 99999 exceeds "), "{e}");
    // In range one by one, 2^63 + 2^62 twice wraps the sum.
    let big = (3u64 << 62).to_string();
    let e = tamper(&[(4, outputs, &big), (7, outputs, &big)]);
    assert!(
        e.contains("line 7: ") && e.contains(".func_outputs of path dense: the sum over the samples up to sample 1 (draw 0) does not fit a 64-bit count"),
        "{e}"
    );
    // In range but not what the shard computed: the largest double as a sum of squares
    // (it wrote an output_rel_rmse of 3.8e154), a count raised within its range. The
    // records' hash in shard.json refuses both.
    let edited = |e: &str| e.contains("the records were edited after the shard was written");
    assert!(edited(&tamper(&[(2, sq, "7fefffffffffffff")])));
    assert!(edited(&tamper(&[(4, outputs, "99999999999")])));
    std::fs::write(&path, &clean).unwrap();
    assert!(merge(std::slice::from_ref(&dir)).is_ok());
    // The hash cannot be dropped: a label edited with `records` emptied or removed from
    // shard.json (it is not in the fingerprint) was merged, with a wrong top-1.
    let json = dir.join("shard.json");
    let manifest = std::fs::read_to_string(&json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(v["records"].as_str().unwrap().len(), 16);
    let refused = |records: Option<&str>| {
        let mut v = v.clone();
        match records {
            Some(r) => v["records"] = serde_json::Value::from(r),
            None => {
                v.as_object_mut().unwrap().remove("records");
            }
        }
        std::fs::write(&json, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        let e = merge(std::slice::from_ref(&dir)).err().unwrap().to_string();
        assert!(
            e.starts_with(&format!("{}: records: ", json.display())),
            "{e}"
        );
        assert!(
            e.contains("is not the 16-hex-digit hash of records.csv"),
            "{e}"
        );
        assert!(e.len() < 300, "{e}");
    };
    let was: u32 = clean
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .nth(label)
        .unwrap()
        .parse()
        .unwrap();
    let other = ((was + 1) % 10).to_string();
    tamper(&[(2, label, &other)]);
    refused(Some(""));
    refused(None);
    refused(Some(&"0".repeat(100_000)));
    refused(Some("zzzzzzzzzzzzzzzz"));
    std::fs::write(&json, &manifest).unwrap();
    std::fs::write(&path, &clean).unwrap();
    assert!(merge(std::slice::from_ref(&dir)).is_ok());
}

/// A bundle's labels are classes of its network: a label of 10 or -1 on the 10-class
/// lenet5-mnist was accepted by `check`, `run` and `accuracy`, every prediction then
/// wrong without a word.
#[test]
fn labels_outside_the_networks_classes_are_refused() {
    let s = setup(&[], &[Mode::Dense], None, 1);
    let n = &s.net;
    let with = |labels: Vec<i64>| {
        accuracy::Network::new(
            &n.name,
            n.graph.clone(),
            n.layers.clone(),
            n.input.clone(),
            Some(labels),
        )
    };
    let mut labels = n.labels.clone().unwrap();
    assert!(with(labels.clone()).is_ok());
    for bad in [10, -1, 1 << 40] {
        labels[3] = bad;
        let e = with(labels.clone()).unwrap_err().to_string();
        assert!(
            e.ends_with(&format!(
                "graph.labels: sample 3's label {bad} is not a class of the network (0..10, its outputs a sample)"
            )),
            "{e}"
        );
    }
}

/// The label is a cell of a sample's float row, the same in every draw: a label on a
/// mode's row, or a later draw's float row labelling the sample otherwise, was merged
/// without a word (the cells were not read). Both are refused by file, line and column.
#[test]
fn a_label_on_a_mode_row_or_differing_between_draws_is_refused() {
    let s = setup(&["device.preset=noisy-rram"], &[Mode::Dense], None, 2);
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    write(&s, 2, 0..2, &dir, 1);
    let path = dir.join("records.csv");
    let clean = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = clean.lines().collect();
    assert_eq!(lines[0].split(',').nth(3), Some("label"));
    // The 1-based line of the row of draw `d`, sample `s`, path `p`.
    let line_of = |d: &str, s: &str, p: &str| {
        1 + lines
            .iter()
            .position(|l| l.split(',').take(3).eq([d, s, p]))
            .unwrap()
    };
    let label_at = |line: usize| lines[line - 1].split(',').nth(3).unwrap().to_string();
    let json = dir.join("shard.json");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // Writes `bytes` as records.csv with shard.json's hash of them made again, as anyone
    // can (FNV-1a of the bytes): only the rules on the cells stand between them and a merge.
    let put = |bytes: &str| {
        std::fs::write(&path, bytes).unwrap();
        let fnv = bytes.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let mut v = manifest.clone();
        v["records"] = serde_json::Value::from(format!("{fnv:016x}"));
        std::fs::write(&json, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    };
    let tamper = |line: usize, value: &str| {
        let mut all: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let mut cells: Vec<&str> = lines[line - 1].split(',').collect();
        cells[3] = value;
        all[line - 1] = cells.join(",");
        put(&(all.join("\n") + "\n"));
        let e = merge(std::slice::from_ref(&dir)).err().unwrap().to_string();
        assert!(
            e.starts_with(&format!("{}: line {line}: label: ", path.display())),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1);
        e
    };
    let float0 = line_of("0", "0", "float");
    let was = label_at(float0);
    assert!(!was.is_empty());
    let dense = line_of("0", "0", "dense");
    assert_eq!(label_at(dense), "");
    let e = tamper(dense, &was);
    assert!(
        e.ends_with(&format!(
            "label: '{was}' on a mode's row (the label is the float row's; this cell is empty)"
        )),
        "{e}"
    );
    let float1 = line_of("1", "0", "float");
    assert_eq!(label_at(float1), was);
    let other = ((was.parse::<u32>().unwrap() + 1) % 10).to_string();
    let e = tamper(float1, &other);
    assert!(
        e.ends_with(&format!(
            "label: {other}, but draw 0 labels sample 0 {was} (line {float0}): a sample has one label in every draw"
        )),
        "{e}"
    );
    // The honest bytes under a hash made again merge: the hash is made as the writer's.
    put(&clean);
    assert!(merge(std::slice::from_ref(&dir)).is_ok());
}
