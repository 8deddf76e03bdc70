//! What `sresim run --functional` adds to a run: the datapath options from the config,
//! the layers.csv columns of the functional metrics, and `outputs.npz`.

use crate::config::Resolved;
use crate::run::RunResult;
use anyhow::{Context, Result};
use functional::{FuncOptions, Metrics};
use std::io::Write;

/// One (layer, mode) of a functional run.
#[derive(Debug, Clone, PartialEq)]
pub struct FuncResult {
    pub metrics: Metrics,
    /// The integer outputs, when dumped: `shape` row-major.
    pub outputs: Option<Vec<i64>>,
    /// `[N, Cout, Ho, Wo]` (conv) or `[N, out]` (fc).
    pub shape: Vec<usize>,
}

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

/// `[device]` of the configuration (configs/default.toml documents each key).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceCfg {
    pub preset: String,
    pub on_off_ratio: f64,
    pub sigma: f64,
    pub stuck_at_0: f64,
    pub stuck_at_1: f64,
    pub read_noise: f64,
    pub ir_drop: f64,
    pub error_table: String,
    pub seed: u64,
    /// Left out of summary.json while it is the default ("skip"); "per-read" is echoed.
    #[serde(skip_serializing_if = "is_default_sampler")]
    pub sampler: String,
    // The keys below are left out of summary.json at their defaults, as `sampler` is.
    /// Programming noise by target conductance: polynomial coefficients.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prog_noise: Vec<f64>,
    /// Seconds since programming.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub time_s: f64,
    /// Drift exponent table: rows [x, nu_mean, nu_sd].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift_nu: Vec<Vec<f64>>,
    #[serde(default = "drift_t0_s", skip_serializing_if = "is_drift_t0_s")]
    pub drift_t0_s: f64,
    /// Accumulated 1/f noise: [q, exponent, q_max, t_read_s].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift_noise: Vec<f64>,
    /// Relaxation: rows [t_s, c_0, c_1, ...].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relax: Vec<Vec<f64>>,
    /// "off" or "on".
    #[serde(default = "off", skip_serializing_if = "is_off")]
    pub drift_compensation: String,
    /// Each level's conductance law: rows [mean, sd] (or [mean] with `level_sigma`), in
    /// `level_space`'s terms and the source's unit, lowest state first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<Vec<f64>>,
    /// "conductance", "log10_resistance" or "ln_conductance".
    #[serde(default = "conductance", skip_serializing_if = "is_conductance")]
    pub level_space: String,
    /// The sd of a level as a polynomial of its mean conductance (the table's unit).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub level_sigma: Vec<f64>,
    /// "device" (the reference column drifts with the device) or "nominal".
    #[serde(
        default = "device_reference",
        skip_serializing_if = "is_device_reference"
    )]
    pub reference: String,
    /// Hold the last row of `relax` past its time instead of refusing such a time.
    #[serde(default, skip_serializing_if = "is_false")]
    pub relax_hold: bool,
}

fn conductance() -> String {
    "conductance".into()
}

fn is_conductance(s: &str) -> bool {
    s == "conductance"
}

fn device_reference() -> String {
    "device".into()
}

fn is_device_reference(s: &str) -> bool {
    s == "device"
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_default_sampler(s: &str) -> bool {
    s == "skip"
}

pub(crate) fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn drift_t0_s() -> f64 {
    functional::DRIFT_T0_S
}

fn is_drift_t0_s(x: &f64) -> bool {
    *x == functional::DRIFT_T0_S
}

fn off() -> String {
    "off".into()
}

fn is_off(s: &str) -> bool {
    s == "off"
}

impl Default for DeviceCfg {
    fn default() -> Self {
        DeviceCfg {
            preset: String::new(),
            on_off_ratio: 0.0,
            sigma: 0.0,
            stuck_at_0: 0.0,
            stuck_at_1: 0.0,
            read_noise: 0.0,
            ir_drop: 0.0,
            error_table: String::new(),
            seed: 1,
            sampler: "skip".into(),
            prog_noise: Vec::new(),
            time_s: 0.0,
            drift_nu: Vec::new(),
            drift_t0_s: functional::DRIFT_T0_S,
            drift_noise: Vec::new(),
            relax: Vec::new(),
            drift_compensation: off(),
            levels: Vec::new(),
            level_space: conductance(),
            level_sigma: Vec::new(),
            reference: device_reference(),
            relax_hold: false,
        }
    }
}

/// Presets shipped inside the binary (also in configs/device/).
const PRESETS: [(&str, &str); 7] = [
    ("ideal", include_str!("../../../configs/device/ideal.toml")),
    (
        "noisy-rram",
        include_str!("../../../configs/device/noisy-rram.toml"),
    ),
    (
        "neurosim-rram",
        include_str!("../../../configs/device/neurosim-rram.toml"),
    ),
    (
        "dlrsim-rram",
        include_str!("../../../configs/device/dlrsim-rram.toml"),
    ),
    (
        "milo-rram",
        include_str!("../../../configs/device/milo-rram.toml"),
    ),
    (
        "nandakumar-pcm",
        include_str!("../../../configs/device/nandakumar-pcm.toml"),
    ),
    (
        "wan-rram",
        include_str!("../../../configs/device/wan-rram.toml"),
    ),
];

/// `device.preset = "NAME"`: the `[device]` keys of configs/device/<name>.toml (next to
/// the config file, else shipped) replace every device key `table` leaves at its default.
pub fn apply_preset(
    table: &mut toml::Table,
    defaults: &toml::Table,
    origin: &str,
    base_dir: Option<&std::path::Path>,
) -> Result<()> {
    use anyhow::{anyhow, bail};
    let name = match table
        .get("device")
        .and_then(|d| d.get("preset"))
        .and_then(|p| p.as_str())
    {
        Some("") | None => return Ok(()),
        Some(n) => n.to_string(),
    };
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        bail!("{origin}: device.preset: '{name}' is not a preset name (letters, digits, - and _)");
    }
    let local = base_dir.map(|d| d.join("device").join(format!("{name}.toml")));
    // A local file that exists in any form is read (and refused if it is not a regular
    // file), never silently passed over for the shipped preset.
    let (label, text) = match local.filter(|p| std::fs::symlink_metadata(p).is_ok()) {
        Some(p) => (
            p.display().to_string(),
            workload::files::read_text(&p, &p.display().to_string()).map_err(anyhow::Error::msg)?,
        ),
        None => match PRESETS.iter().find(|(n, _)| *n == name) {
            Some((_, t)) => (format!("configs/device/{name}.toml"), t.to_string()),
            None => bail!(
                "{origin}: device.preset: no preset '{name}' (shipped: {}){}",
                PRESETS.map(|p| p.0).join(", "),
                workload::text::did_you_mean(&name, PRESETS.map(|p| p.0))
            ),
        },
    };
    let preset: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        anyhow!(
            "{label}: {} (expected TOML)",
            e.message().replace('\n', " ")
        )
    })?;
    let keys = preset
        .get("device")
        .and_then(|d| d.as_table())
        .ok_or_else(|| anyhow!("{label}: expected a [device] table"))?;
    let defaults = defaults.get("device").and_then(|d| d.as_table());
    let Some(device) = table.get_mut("device").and_then(|d| d.as_table_mut()) else {
        return Ok(());
    };
    for (k, v) in keys {
        if k == "preset" || defaults.is_some_and(|d| !d.contains_key(k)) {
            bail!("{label}: device.{k}: not a key a preset may set");
        }
        if device.get(k) == defaults.and_then(|d| d.get(k)) {
            device.insert(k.clone(), v.clone());
        }
    }
    Ok(())
}

/// The validated device of `[device]`; the error table is read relative to the config
/// file (or the working directory).
pub fn resolve_device(
    cfg: &DeviceCfg,
    origin: &str,
    base_dir: Option<&std::path::Path>,
) -> Result<functional::Device> {
    let table = if cfg.error_table.is_empty() {
        None
    } else {
        let p = std::path::Path::new(&cfg.error_table);
        let p = match base_dir {
            Some(d) if p.is_relative() => d.join(p),
            _ => p.to_path_buf(),
        };
        let label = p.display().to_string();
        let text =
            workload::files::read_string(&p, workload::files::MAX_TEXT_BYTES).map_err(|e| {
                anyhow::anyhow!("{origin}: device.error_table: {label}: cannot read: {e}")
            })?;
        Some(functional::ErrorTable::parse(&text, &label).map_err(anyhow::Error::msg)?)
    };
    let sampler = functional::Sampler::parse(&cfg.sampler).ok_or_else(|| {
        anyhow::anyhow!(
            "{origin}: device.sampler: '{}' is not a sampler ({})",
            cfg.sampler,
            functional::Sampler::NAMES.join(", ")
        )
    })?;
    let drift_nu = cfg
        .drift_nu
        .iter()
        .enumerate()
        .map(|(i, r)| {
            <[f64; 3]>::try_from(r.as_slice()).map_err(|_| {
                anyhow::anyhow!(
                    "{origin}: device.drift_nu: row {}: {} values, expected [x, nu_mean, nu_sd]",
                    i + 1,
                    r.len()
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let drift_compensation = match cfg.drift_compensation.as_str() {
        "on" => true,
        "off" => false,
        other => anyhow::bail!("{origin}: device.drift_compensation: '{other}' is not on or off"),
    };
    let space = functional::LevelSpace::parse(&cfg.level_space).ok_or_else(|| {
        anyhow::anyhow!(
            "{origin}: device.level_space: '{}' is not a level space ({})",
            cfg.level_space,
            functional::LevelSpace::NAMES.join(", ")
        )
    })?;
    let levels = functional::Levels::new(space, cfg.levels.clone(), cfg.level_sigma.clone())
        .map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
    let reference = functional::Reference::parse(&cfg.reference).ok_or_else(|| {
        anyhow::anyhow!(
            "{origin}: device.reference: '{}' is not a reference ({})",
            cfg.reference,
            functional::Reference::NAMES.join(", ")
        )
    })?;
    let device = functional::Device {
        on_off_ratio: (cfg.on_off_ratio != 0.0).then_some(cfg.on_off_ratio),
        sigma: cfg.sigma,
        stuck_at_0: cfg.stuck_at_0,
        stuck_at_1: cfg.stuck_at_1,
        read_noise: cfg.read_noise,
        ir_drop: cfg.ir_drop,
        error_table: table,
        seed: cfg.seed,
        sampler,
        aging: functional::Aging {
            prog_noise: cfg.prog_noise.clone(),
            time_s: cfg.time_s,
            drift_nu,
            drift_t0_s: cfg.drift_t0_s,
            drift_noise: cfg.drift_noise.clone(),
            relax: cfg.relax.clone(),
            relax_hold: cfg.relax_hold,
        },
        drift_compensation,
        converter: Default::default(),
        levels,
        reference,
    };
    device
        .validate()
        .map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
    Ok(device)
}
