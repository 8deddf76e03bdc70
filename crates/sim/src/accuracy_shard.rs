//! Shards of one accuracy run (docs/accuracy.md, "Shards"): `sresim accuracy
//! --sample-range A..B` writes the per-sample records of samples [A, B) of every draw, with
//! every float as the 16 hex digits of its bits, and a manifest of what they belong to;
//! [`merge`] checks that shards agree and cover the run's samples exactly once, and
//! reduces their records in sample order into the [`Draws`] of the unsharded run, bit for
//! bit (the reduction is [`accuracy::reduce`]'s, fed the same records in the same order).

use crate::accuracy::{draw_records, Draws, NetInfo};
use crate::config::Resolved;
use crate::workloads::Fnv;
use accuracy::{LayerStats, Network, Reducer, SamplePath, SampleRecord};
use anyhow::{anyhow, bail, Result};
use crossbar::Mode;
use functional::Metrics;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The `format` of shard.json.
pub const FORMAT: &str = "sresim-accuracy-shard-1";
/// The manifest of a shard directory.
pub const MANIFEST: &str = "shard.json";
/// The records of a shard directory.
pub const RECORDS: &str = "records.csv";

/// shard.json: what a shard belongs to (every field but `range` is the same in every
/// shard of one run) and what the merge needs to write the run's outputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: String,
    /// A hash of every field below but `range` (16 hex digits).
    pub fingerprint: String,
    /// The version of sresim that computed the records.
    pub sresim: String,
    pub network: String,
    /// The content hash of the bundle (its manifest.json and tensors.npz).
    pub bundle: String,
    /// Where the config came from (summary.json's `config`).
    pub config_origin: String,
    pub device_seed: u64,
    pub modes: Vec<String>,
    pub draws: u32,
    /// The layers that go through the crossbar datapath (`--layers`).
    pub layers: Vec<String>,
    /// The samples of the whole run: the merged shards cover 0..samples.
    pub samples: usize,
    /// A hash of the resolved config (`config_values`).
    pub config: String,
    /// Every crossbar layer of the network, in order.
    pub layer_names: Vec<String>,
    pub labels: bool,
    /// accuracy.csv has `adc_clip_frac` (a fixed `adc.bits`).
    pub clip: bool,
    /// Draws whose records the shard holds (1 for a device that draws nothing).
    pub draws_computed: u32,
    pub draw_seeds: Vec<u64>,
    /// The resolved config (summary.json's `config_values`).
    pub config_values: serde_json::Value,
    /// The samples [start, end) of this shard.
    pub range: [usize; 2],
    /// The network's outputs a sample (its classes): every prediction and label lies
    /// below it. 0 (absent) in a shard written before it was recorded: not checked.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub classes: usize,
    /// A hash of records.csv's bytes (16 hex digits): a record edited after the shard was
    /// written is refused by the merge, whose range checks cannot see a count or a sum of
    /// squares changed within its range. Required: a shard without it (or with it empty)
    /// is refused. Not part of the fingerprint (every shard's records differ).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub records: String,
}

mod check;
mod records;
pub use check::MAX_CLASSES;

/// A reader or writer that hashes the bytes through it (records.csv's `records` hash).
struct Hashing<T> {
    inner: T,
    hash: Fnv,
}

impl<T> Hashing<T> {
    fn new(inner: T) -> Hashing<T> {
        Hashing {
            inner,
            hash: Fnv::default(),
        }
    }
}

impl<W: std::io::Write> std::io::Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.feed(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<R: std::io::Read> std::io::Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.feed(&buf[..n]);
        Ok(n)
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Manifest {
    /// The fields every shard of one run shares, named, in the order a merge compares them.
    fn shared(&self) -> Vec<(&'static str, String)> {
        let mut f = vec![
            ("format", self.format.clone()),
            ("sresim", self.sresim.clone()),
            ("network", self.network.clone()),
            ("bundle", self.bundle.clone()),
            ("config_origin", self.config_origin.clone()),
            ("device_seed", self.device_seed.to_string()),
            ("modes", self.modes.join(",")),
            ("draws", self.draws.to_string()),
            ("layers", self.layers.join(",")),
            ("samples", self.samples.to_string()),
            ("config", self.config.clone()),
            ("layer_names", self.layer_names.join(",")),
            ("labels", self.labels.to_string()),
            ("clip", self.clip.to_string()),
            ("draws_computed", self.draws_computed.to_string()),
            (
                "draw_seeds",
                format!("{:?}", self.draw_seeds).replace(' ', ""),
            ),
        ];
        // Absent from shards written before it was recorded, whose fingerprints hold.
        if self.classes > 0 {
            f.push(("classes", self.classes.to_string()));
        }
        f
    }

    /// The fingerprint of the shared fields (`fingerprint`): a hash, which anyone can
    /// compute again; [`Manifest::check`] checks the fields themselves.
    pub fn hash(&self) -> String {
        let mut h = Fnv::default();
        for (k, v) in self.shared() {
            h.feed(format!("{k}={v}\n").as_bytes());
        }
        h.feed(self.config_values.to_string().as_bytes());
        h.hex()
    }

    fn range(&self) -> Range<usize> {
        self.range[0]..self.range[1]
    }

    fn paths(&self) -> Vec<String> {
        let mut p = vec!["float".to_string(), "quantized".to_string()];
        p.extend(self.modes.iter().cloned());
        p
    }
}

/// One shard's run: samples `range` of a run over `samples` samples.
pub struct ShardRun<'a> {
    pub net: &'a Network,
    pub cfg: &'a Resolved,
    pub modes: &'a [Mode],
    pub crossbar: &'a [bool],
    /// `--workload` (None: the embedded default), for the bundle's content hash.
    pub workload: Option<&'a str>,
    pub samples: usize,
    pub range: Range<usize>,
    pub draws: u32,
}

impl ShardRun<'_> {
    /// The manifest of the shard (checked before anything is computed: the config's
    /// values must read back from their JSON as the same numbers, bit for bit, or the
    /// merge could not write them).
    pub fn manifest(&self) -> Result<Manifest> {
        let cfg = self.cfg;
        let config_values = serde_json::to_value(&cfg.config)?;
        let text = config_values.to_string();
        let back: serde_json::Value = serde_json::from_str(&text)?;
        if back != config_values {
            bail!(
                "{}: the resolved config does not read back from JSON as the same values; it cannot be sharded",
                cfg.origin
            );
        }
        let mut config = Fnv::default();
        config.feed(text.as_bytes());
        let net = self.net;
        let mut m = Manifest {
            format: FORMAT.into(),
            fingerprint: String::new(),
            sresim: env!("CARGO_PKG_VERSION").into(),
            network: net.name.clone(),
            bundle: crate::workloads::bundle_hash_of(self.workload)?,
            config_origin: cfg.origin.clone(),
            device_seed: cfg.device.seed,
            modes: self.modes.iter().map(|m| m.to_string()).collect(),
            draws: self.draws,
            layers: net
                .layers
                .iter()
                .zip(self.crossbar)
                .filter(|(_, &c)| c)
                .map(|(l, _)| l.name().to_string())
                .collect(),
            samples: self.samples,
            config: config.hex(),
            layer_names: net.layers.iter().map(|l| l.name().to_string()).collect(),
            labels: net.labels.is_some(),
            clip: matches!(cfg.hw.adc_bits, crossbar::AdcBits::Fixed(_)),
            draws_computed: crate::accuracy::draws_computed(cfg, self.modes, self.draws),
            draw_seeds: (0..self.draws)
                .map(|d| crate::draws::seed(cfg.device.seed, d))
                .collect(),
            config_values,
            range: [self.range.start, self.range.end],
            classes: net.output_len(),
            records: String::new(),
        };
        m.fingerprint = m.hash();
        Ok(m)
    }

    /// Computes the shard and writes `DIR/records.csv` and `DIR/shard.json` together.
    pub fn write(
        &self,
        dir: &outdir::OutputDir,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Manifest> {
        let mut m = self.manifest()?;
        let mut w = csv::Writer::from_writer(Hashing::new(dir.stage(RECORDS)?));
        w.write_record(header(&m))?;
        let labels = self.net.labels.as_deref();
        draw_records(
            self.net,
            self.cfg,
            self.modes,
            self.crossbar,
            (self.range.clone(), self.draws),
            progress,
            |d, records| {
                for (i, r) in records.iter().enumerate() {
                    let s = self.range.start + i;
                    let label = labels.and_then(|l| l.get(s));
                    write_record(&mut w, &m, d, s, label.copied(), r)?;
                }
                Ok(())
            },
        )?;
        // A write error names the file with its directory (outdir::Staged).
        let hashed = w.into_inner().map_err(|e| anyhow!("{}", e.error()))?;
        m.records = hashed.hash.hex();
        let records = hashed.inner;
        let mut json = dir.stage(MANIFEST)?;
        serde_json::to_writer_pretty(&mut json, &m)?;
        dir.replace_staged(vec![records, json])?;
        Ok(m)
    }
}

/// The cells of one layer's figures, as records.csv names them after the layer.
const LAYER_CELLS: [&str; 13] = [
    "crossbar",
    "func_outputs",
    "func_exact",
    "func_sq_err",
    "func_sq_exact",
    "func_max_abs_err",
    "func_float_outputs",
    "func_float_sq_err",
    "func_float_sq_ref",
    "func_adc_conversions",
    "func_adc_clips",
    "float_sq_err",
    "float_sq",
];

fn header(m: &Manifest) -> Vec<String> {
    let mut h: Vec<String> = ["draw", "sample", "path", "label", "prediction", "sq"]
        .map(String::from)
        .to_vec();
    for l in &m.layer_names {
        h.extend(LAYER_CELLS.iter().map(|c| format!("{l}.{c}")));
    }
    h
}

/// A float as the 16 hex digits of its bits.
fn hex(v: f64) -> String {
    format!("{:016x}", v.to_bits())
}

/// The rows of one sample `s` of draw `d`: the float network (its prediction, ||y||^2 and
/// the label), then each path (its prediction, ||y - y_float||^2 and every layer's figures).
fn write_record<W: std::io::Write>(
    w: &mut csv::Writer<W>,
    m: &Manifest,
    d: usize,
    s: usize,
    label: Option<i64>,
    r: &SampleRecord,
) -> Result<()> {
    let lead = |path: &str, prediction: usize, sq: f64, label: String| {
        vec![
            d.to_string(),
            s.to_string(),
            path.to_string(),
            label,
            prediction.to_string(),
            hex(sq),
        ]
    };
    let empty = vec![String::new(); LAYER_CELLS.len() * m.layer_names.len()];
    let mut row = lead(
        "float",
        r.float_prediction,
        r.float_sq,
        label.map_or(String::new(), |l| l.to_string()),
    );
    row.extend(empty);
    w.write_record(&row)?;
    for (name, p) in m.paths().iter().skip(1).zip(&r.paths) {
        let mut row = lead(name, p.prediction, p.output_sq_err, String::new());
        for st in &p.layers {
            let f = &st.func;
            row.extend([
                (st.crossbar as u8).to_string(),
                f.outputs.to_string(),
                f.exact.to_string(),
                hex(f.sq_err),
                hex(f.sq_exact),
                f.max_abs_err.to_string(),
                f.float_outputs.to_string(),
                hex(f.float_sq_err),
                hex(f.float_sq_ref),
                f.adc_conversions.to_string(),
                f.adc_clips.to_string(),
                hex(st.float_sq_err),
                hex(st.float_sq),
            ]);
        }
        w.write_record(&row)?;
    }
    Ok(())
}

/// What [`merge`] found: the run's draws and what its outputs need besides.
pub struct Merged {
    pub info: NetInfo,
    pub draws: Draws,
    /// The first shard's manifest (every shard shares its fields but `range`).
    pub manifest: Manifest,
    /// summary.json's `config_values`.
    pub config_values: serde_json::Value,
    /// Whether each crossbar layer went through the datapath.
    pub crossbar: Vec<bool>,
}

/// Reads the shard directories `inputs` and reduces their records into the run's draws.
/// Refused: a shard whose manifest differs from the first's in a shared field, shards
/// that overlap, samples of the run no shard holds, records that are not the manifest's.
pub fn merge(inputs: &[PathBuf]) -> Result<Merged> {
    if inputs.is_empty() {
        bail!("accuracy-merge: no shard directory given");
    }
    let mut shards: Vec<(PathBuf, Manifest)> = Vec::with_capacity(inputs.len());
    for dir in inputs {
        let path = dir.join(MANIFEST);
        let label = path.display().to_string();
        let text = workload::files::read_text(&path, &label).map_err(|e| anyhow!(e))?;
        // Repeated keys refused, in config_values too (serde_json keeps the last one).
        let head: serde_json::Value =
            workload::json::parse(&text).map_err(|e| anyhow!("{label}: {e}"))?;
        if head.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            bail!(
                "{label}: format: {} (expected \"{FORMAT}\": not a shard of `sresim accuracy --sample-range`)",
                head.get("format").map_or("absent".to_string(), |f| f.to_string())
            );
        }
        let m: Manifest = workload::json::typed(head).map_err(|e| anyhow!("{label}: {e}"))?;
        if m.fingerprint != m.hash() {
            bail!("{label}: fingerprint: {} is not the hash of the shard's fields (was shard.json edited?)", m.fingerprint);
        }
        m.check(&label)?;
        // The hash of records.csv is required: without it a record edited within its
        // range (a label, a count) would be merged as what the shard computed.
        if m.records.len() != 16 || !m.records.bytes().all(|b| b.is_ascii_hexdigit()) {
            let shown: String = m.records.chars().take(24).collect();
            let more = if m.records.chars().count() > 24 {
                "..."
            } else {
                ""
            };
            bail!(
                "{label}: records: {:?} is not the 16-hex-digit hash of records.csv: a shard must carry it (one written before sresim recorded it: compute it again)",
                shown + more
            );
        }
        if m.range[0] >= m.range[1] || m.range[1] > m.samples {
            bail!(
                "{label}: range: {}..{} is not a range of the run's {} samples",
                m.range[0],
                m.range[1],
                m.samples
            );
        }
        if let Some((first, f)) = shards.first() {
            for ((name, a), (_, b)) in f.shared().into_iter().zip(m.shared()) {
                if a != b {
                    bail!(
                        "{label}: {name}: {b} differs from {a} of {}: the shards belong to different runs",
                        first.join(MANIFEST).display()
                    );
                }
            }
            if m.fingerprint != f.fingerprint {
                bail!(
                    "{label}: fingerprint: {} differs from {} of {}: the shards belong to different runs",
                    m.fingerprint,
                    f.fingerprint,
                    first.join(MANIFEST).display()
                );
            }
        }
        shards.push((dir.clone(), m));
    }
    shards.sort_by_key(|(_, m)| m.range);
    check_cover(&shards)?;
    let m = shards[0].1.clone();
    let modes = m
        .modes
        .iter()
        .map(|t| t.parse::<Mode>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow!("{}: modes: {e}", shards[0].0.join(MANIFEST).display()))?;
    let mut readers = shards
        .iter()
        .map(|(dir, m)| RecordReader::open(dir, m))
        .collect::<Result<Vec<_>>>()?;
    let mut labels: Vec<i64> = Vec::with_capacity(m.samples);
    let mut evals = Vec::with_capacity(m.draws_computed as usize);
    for d in 0..m.draws_computed as usize {
        let mut reducer = Reducer::new(&modes, m.layer_names.len());
        for r in &mut readers {
            for s in r.range.clone() {
                let (rec, label) = r.next(d, s)?;
                if d == 0 {
                    labels.extend(label);
                }
                // Checked sums: a record in range can still carry a count whose sum over
                // the samples wraps (2^64 - 1 made func_exact_frac read 1.23).
                reducer.try_add(&rec).map_err(|o| {
                    let path = match o.path {
                        None => "float".to_string(),
                        Some(p) => m.paths()[p + 1].clone(),
                    };
                    let column = match o.layer {
                        None => o.sum.to_string(),
                        Some(l) => format!("{}.{}", m.layer_names[l], o.sum),
                    };
                    anyhow!(
                        "{}: line {}: {column} of path {path}: the sum over the samples up to sample {s} (draw {d}) does not fit a {}",
                        r.label,
                        r.line,
                        if o.sum.contains("sq") { "double" } else { "64-bit count" }
                    )
                })?;
            }
        }
        evals.push(reducer.finish());
    }
    for r in &mut readers {
        r.end()?;
    }
    let info = NetInfo {
        name: m.network.clone(),
        layers: m.layer_names.clone(),
        labels: m.labels.then_some(labels),
    };
    for ev in &evals {
        crate::accuracy::check_figures(&info, ev, &m.config_origin)?;
    }
    Ok(Merged {
        crossbar: m.layer_names.iter().map(|l| m.layers.contains(l)).collect(),
        config_values: m.config_values.clone(),
        draws: Draws {
            k: m.draws,
            seeds: m.draw_seeds.clone(),
            evals,
        },
        info,
        manifest: m,
    })
}

/// Shards sorted by range must cover 0..samples, each sample once.
fn check_cover(shards: &[(PathBuf, Manifest)]) -> Result<()> {
    let mut end = 0;
    let mut prev: Option<&Path> = None;
    for (dir, m) in shards {
        let label = dir.join(MANIFEST).display().to_string();
        let (a, b) = (m.range[0], m.range[1]);
        if a < end {
            let other = prev.map_or(String::new(), |p| p.join(MANIFEST).display().to_string());
            bail!("{label}: range: {a}..{b} overlaps the samples ..{end} of {other}");
        }
        if a > end {
            bail!("{label}: range: {a}..{b} leaves samples {end}..{a} of the run in no shard (a shard is missing)");
        }
        end = b;
        prev = Some(dir);
    }
    let samples = shards.first().map_or(0, |(_, m)| m.samples);
    if end < samples {
        let (dir, m) = &shards[shards.len() - 1];
        bail!(
            "{}: range: {}..{end} is the last shard, and samples {end}..{samples} of the run are in no shard (a shard is missing)",
            dir.join(MANIFEST).display(),
            m.range[0]
        );
    }
    Ok(())
}

/// records.csv of one shard, read row by row in the order it was written.
struct RecordReader {
    /// The columns (the header).
    names: Vec<String>,
    label: String,
    rows: csv::StringRecordsIntoIter<Hashing<std::fs::File>>,
    /// shard.json's hash of records.csv (16 hex digits, checked when shard.json is read).
    records: String,
    range: Range<usize>,
    paths: Vec<String>,
    layers: usize,
    /// Per layer of the network, whether it is one of the run's `layers` (through the
    /// datapath on a mode's path).
    datapath: Vec<bool>,
    labels: bool,
    /// Predictions and labels lie below it (0: not recorded, not checked).
    classes: usize,
    line: u64,
    /// Per sample of the range, the label draw 0's float row gave and its line: every
    /// later draw's must be the same (the label is the sample's, not the draw's).
    draw0_labels: Vec<(Option<i64>, u64)>,
}
