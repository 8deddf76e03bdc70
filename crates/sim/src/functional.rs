//! What `sresim run --functional` adds to a run: the datapath options from the config,
//! the layers.csv columns of the functional metrics, and `outputs.npz`.

use crate::config::Resolved;
use crate::result::RunResult;
use anyhow::{Context, Result};
use functional::{FuncOptions, Metrics};
use std::io::Write;

pub use crate::result::FuncResult;

/// The datapath options of a run: `adc.step` of the config; outputs kept to be dumped.
pub fn options(cfg: &Resolved, dump_outputs: bool) -> FuncOptions {
    FuncOptions {
        adc_step: cfg.config.adc.step,
        adc_range: cfg.adc_range(),
        keep_outputs: dump_outputs,
        device: cfg.device.clone(),
        ..FuncOptions::default()
    }
}

/// The one memory budget (`limits.max_layer_bytes`) of a layer read through the
/// functional datapath, for `run --functional` and `accuracy` alike: what the counting
/// engines need of it (its weights, mapping and compression, `held` samples of input,
/// `engine::limits::layer_bytes`) and the datapath's programs, buffers and `kept` samples
/// of outputs (`functional::check_memory`). `run` holds a chunk of samples and keeps them
/// all with `--dump-outputs`; `accuracy` holds a batch and keeps its outputs, for the next
/// layer. A layer above the cap is refused before anything is loaded, with the same line
/// in both.
pub fn check_layer_memory(
    l: &workload::LayerSpec,
    cfg: &Resolved,
    modes: &[crossbar::Mode],
    held: u64,
    kept: u64,
) -> Result<(), functional::FuncError> {
    let threads = rayon::current_num_threads();
    let budget = functional::Budget {
        hw: &cfg.hw,
        modes,
        applied_bits: cfg.hw.input_bits,
        held_samples: held,
        kept_samples: kept,
        threads,
        per_cell: cfg.device.per_cell(),
        skip: cfg.device.skips(),
    };
    let counts = engine::limits::layer_bytes(&l.geom, held, &cfg.hw, threads);
    functional::check_memory(l, &budget, counts, cfg.config.limits.max_layer_bytes)
}

/// Columns layers.csv gains in a functional run (docs/functional.md defines them).
pub const COLUMNS: [&str; 4] = [
    "func_exact_frac",
    "func_rel_rmse",
    "func_max_abs_err",
    "float_rel_rmse",
];

/// The column of the fraction of a layer's ADC conversions that clipped (functional
/// runs with a fixed `adc.bits`; docs/functional.md, "ADC range").
pub const CLIP_COLUMN: &str = "adc_clip_frac";

/// The [`CLIP_COLUMN`] cell of `m` (empty without figures or conversions).
pub fn clip_value(m: Option<&Metrics>) -> String {
    m.and_then(Metrics::adc_clip_frac)
        .map_or(String::new(), |x| format!("{x}"))
}

/// The network's metrics in `mode`: every layer's summed (None when none has figures).
pub fn total_metrics(res: &RunResult, mode: crossbar::Mode) -> Option<Metrics> {
    let mut sum = Metrics::default();
    let mut any = false;
    for f in res
        .layers
        .iter()
        .filter(|r| r.mode == mode)
        .filter_map(|r| r.functional.as_ref())
    {
        any = true;
        sum.merge(&f.metrics);
    }
    any.then_some(sum)
}

/// The [`COLUMNS`] of one row; empty on TOTAL rows and where a figure is undefined.
pub fn values(r: Option<&FuncResult>) -> Vec<String> {
    let Some(r) = r else {
        return vec![String::new(); COLUMNS.len()];
    };
    let f = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x}"));
    let m = &r.metrics;
    vec![
        f(m.exact_frac()),
        f(m.rel_rmse()),
        if m.outputs > 0 {
            m.max_abs_err.to_string()
        } else {
            String::new()
        },
        f(m.float_rel_rmse()),
    ]
}

/// Checks, before anything runs, that the config's device covers every mode: an error
/// table must list every open-wordline count the modes read.
pub fn check_device(cfg: &Resolved, modes: &[crossbar::Mode]) -> Result<()> {
    let label = &cfg.config.device.error_table;
    functional::check_table(&cfg.device, &cfg.hw, modes, label).map_err(anyhow::Error::msg)
}

/// The [`COLUMNS`] of the whole network in `mode`: every layer's metrics summed (outputs,
/// exact outputs, squared errors and references; the largest error), so that
/// `func_rel_rmse` is ||Y - Y_exact|| over all of the mode's outputs. A sweep writes them
/// on TOTAL rows; layers.csv leaves those empty. Empty when no layer has figures.
pub fn total_values(res: &RunResult, mode: crossbar::Mode) -> Vec<String> {
    let r = total_metrics(res, mode).map(|metrics| FuncResult {
        metrics,
        outputs: None,
        shape: Vec::new(),
    });
    values(r.as_ref())
}

/// Whether a functional run's every output equals the exact product in every mode
/// (false when the run has no functional figures).
pub fn all_exact(res: &RunResult) -> bool {
    res.functional
        && res
            .modes
            .iter()
            .all(|&m| total_metrics(res, m).is_some_and(|t| t.outputs > 0 && t.exact == t.outputs))
}

/// An element type of the `.npy` arrays sresim writes: its dtype and its 8 bytes.
pub trait NpyElement: Copy {
    /// The numpy `descr` of the type (little-endian).
    const DESCR: &'static str;
    fn le_bytes(self) -> [u8; 8];
}

impl NpyElement for i64 {
    const DESCR: &'static str = "<i8";
    fn le_bytes(self) -> [u8; 8] {
        self.to_le_bytes()
    }
}

impl NpyElement for f64 {
    const DESCR: &'static str = "<f8";
    fn le_bytes(self) -> [u8; 8] {
        self.to_le_bytes()
    }
}

/// One `.npy` file (format 1.0) of int64 or float64 values.
pub fn npy<T: NpyElement>(shape: &[usize], values: &[T]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        T::DESCR
    );
    // Magic (6) + version (2) + length (2) + header, a multiple of 64, ending in '\n'.
    let pad = (64 - (10 + header.len() + 1) % 64) % 64;
    header.extend(std::iter::repeat_n(' ', pad));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + values.len() * 8);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in values {
        out.extend_from_slice(&v.le_bytes());
    }
    out
}

/// outputs.npz: one int64 array `<layer>.<mode>` per (layer, mode) whose outputs were
/// kept; None when none were.
pub fn outputs_npz(res: &RunResult) -> Result<Option<Vec<u8>>> {
    let mut any = false;
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(true);
    for r in &res.layers {
        let Some(f) = &r.functional else { continue };
        let Some(values) = &f.outputs else { continue };
        any = true;
        z.start_file(format!("{}.{}.npy", r.layer, r.mode), opts)
            .context("outputs.npz")?;
        z.write_all(&npy(&f.shape, values)).context("outputs.npz")?;
    }
    let bytes = z.finish().context("outputs.npz")?.into_inner();
    Ok(any.then_some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_headers_are_aligned_and_little_endian() {
        let b = npy(&[2, 1], &[1i64, -2]);
        assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
        let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        let header = std::str::from_utf8(&b[10..10 + hlen]).unwrap();
        assert!(header.starts_with("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 1), }"));
        assert!(header.ends_with('\n'));
        assert_eq!(
            &b[10 + hlen..],
            [1i64.to_le_bytes(), (-2i64).to_le_bytes()].concat()
        );
    }
}
