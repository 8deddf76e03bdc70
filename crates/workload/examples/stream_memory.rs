//! Streams one layer's inputs and prints a digest, to measure peak memory against the
//! number of samples (run under `/usr/bin/time -v`, "Maximum resident set size").
//!
//! ```text
//! cargo run --release -p workload --example stream_memory -- write DIR N   # a bundle of N samples
//! cargo run --release -p workload --example stream_memory -- bundle DIR CHUNK
//! cargo run --release -p workload --example stream_memory -- zoo N CHUNK
//! ```
//! The layer is a conv on a 16 x 32 x 32 float32 input (64 KiB per sample as stored,
//! 128 KiB as f64); `write` needs the whole array in memory, the other two do not.
#![allow(clippy::disallowed_methods)] // tests and tools make their fixtures with std::fs

use std::path::Path;

use anyhow::{bail, Context};
use workload::{
    BundleWorkload, ConvGeometry, LayerKind, LayerSpec, OpenOptions, Precision, SynthParams,
    Workload, ZooWorkload,
};

const C: usize = 16;
const HW: usize = 32;

fn write(dir: &Path, n: usize) -> anyhow::Result<()> {
    use ndarray::Array4;
    std::fs::create_dir_all(dir)?;
    let m = serde_json::json!({"name": "mem", "layers": [{"name": "conv", "kind": "conv",
        "in_channels": C, "out_channels": 8, "kernel": [3, 3], "padding": [1, 1],
        "input_shape": [C, HW, HW], "weight": "w", "input": "x"}]});
    std::fs::write(dir.join("manifest.json"), m.to_string())?;
    let mut z = ndarray_npy::NpzWriter::new(std::fs::File::create(dir.join("tensors.npz"))?);
    let w = Array4::<f32>::from_shape_fn((8, C, 3, 3), |(o, c, r, s)| {
        ((o * 31 + c * 7 + r * 3 + s) % 17) as f32 - 8.0
    });
    z.add_array("w", &w)?;
    let x = Array4::<f32>::from_shape_fn((n, C, HW, HW), |(i, c, h, w)| {
        ((i * 131 + c * 37 + h * 11 + w) % 251) as f32 / 25.0 - 3.0
    });
    z.add_array("x", &x)?;
    z.finish()?;
    Ok(())
}

/// Streams layer `index` with `chunk` samples per call; prints samples, calls and a
/// checksum.
fn stream(w: &dyn Workload, index: usize, chunk: usize) -> anyhow::Result<()> {
    let p = Precision::default();
    let n = w.available_samples();
    let signed = w.load_weights(index, p)?.signed;
    let (mut calls, mut sum) = (0u64, 0i64);
    w.stream_inputs(index, p, n, chunk, &mut |c| {
        calls += 1;
        sum = c
            .iter()
            .fold(sum, |s, &v| s.wrapping_mul(31).wrapping_add(v as i64));
        Ok(())
    })?;
    println!("samples {n} chunk {chunk} calls {calls} signed {signed} checksum {sum:#x}");
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize| -> anyhow::Result<usize> {
        args.get(i)
            .context("missing argument")?
            .parse()
            .context("not a number")
    };
    match args.first().map(String::as_str) {
        Some("write") => write(Path::new(args.get(1).context("missing DIR")?), num(2)?),
        Some("bundle") => {
            let opts = OpenOptions {
                max_layer_bytes: u64::MAX,
                ..Default::default()
            };
            let w = BundleWorkload::open(Path::new(args.get(1).context("missing DIR")?), &opts)?;
            stream(&w, 0, num(2)?)
        }
        Some("zoo") => {
            let layer = LayerSpec {
                name: "conv".into(),
                kind: LayerKind::Conv,
                geom: ConvGeometry::conv(C, 8, 3, 1, 1, 1, [HW, HW]),
            };
            // Layer index 1: post-ReLU inputs.
            let layers = vec![layer.clone(), layer];
            let w = ZooWorkload::from_layers("mem", layers, SynthParams::default())?
                .with_samples(num(1)?);
            stream(&w, 1, num(2)?)
        }
        _ => bail!("usage: stream_memory write DIR N | bundle DIR CHUNK | zoo N CHUNK"),
    }
}
