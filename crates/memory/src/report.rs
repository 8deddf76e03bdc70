//! `sresim memory`: arguments, the run, and its outputs (memory_layers.csv,
//! memory_summary.json, memory_vs_capacity.svg, a table on stdout).

use crate::access::Scope;
use crate::bundle;
use crate::config::{MemoryConfig, Mode};
use crate::exec::{Bound, ComputeSource};
use crate::graph::Graph;
use crate::model::{named_scopes, CapacityResult, Model, Point};
use crate::units::{
    format_bandwidth, format_bytes, format_seconds, parse_bandwidth, parse_capacity, Capacity,
};
use crate::zoo::{self, ZooOptions};
use anyhow::{anyhow, bail};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What `sresim memory` asks of the model (its flags, unparsed: the model checks them).
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryArgs {
    /// Network: resnet18, resnet50, vgg16, mobilenetv2, bert, gnmt, yolov4-tiny, or a bundle directory.
    pub workload: String,
    /// Samples per step.
    pub batch: usize,
    /// On-chip buffer capacities, comma-separated (16MiB, 1GB, 512KiB, inf).
    pub capacity: Vec<String>,
    /// Off-chip bandwidths, comma-separated (900GB/s, 1.5TB/s).
    pub bandwidth: Vec<String>,
    /// training or inference (default: memory.mode of the config).
    pub mode: Option<String>,
    /// Tokens per sequence (bert) or time steps (gnmt).
    pub seq_len: Option<usize>,
    /// Directory that receives memory_layers.csv, memory_summary.json and the plot
    /// (replaced atomically). Without it nothing is written.
    pub out: Option<PathBuf>,
    /// Write memory_vs_capacity.svg (always written for two or more capacities; needs --out).
    pub plot: bool,
}

impl Default for MemoryArgs {
    fn default() -> Self {
        MemoryArgs {
            workload: "resnet50".into(),
            batch: 32,
            capacity: vec!["16MiB".into()],
            bandwidth: vec!["900GB/s".into()],
            mode: None,
            seq_len: None,
            out: None,
            plot: false,
        }
    }
}

/// The network of `--workload`: a zoo name or a bundle directory.
pub fn load_network(name: &str, batch: usize, opts: ZooOptions) -> anyhow::Result<Graph> {
    // `--seq-len` sizes the sequence of bert and gnmt; on any other network it would be
    // ignored without a word.
    if opts.seq_len.is_some() && !zoo::SEQUENCE.contains(&name) {
        bail!(
            "--seq-len: '{}' has no sequence length to set (it sizes {})",
            bounds::text::printable(name),
            zoo::SEQUENCE.join(" and ")
        );
    }
    if let Some(g) = zoo::build(name, batch, opts) {
        return Ok(g);
    }
    let path = Path::new(name);
    if path.is_dir() {
        return bundle::load(path, batch).map_err(|e| anyhow!("--workload: {e:#}"));
    }
    bail!(
        "--workload: unknown network '{name}' (known: {}; or a bundle directory){}",
        zoo::NAMES.join(", "),
        network::text::did_you_mean(name, zoo::NAMES.iter().copied())
    )
}

#[derive(Serialize)]
struct LayerRow<'a> {
    network: &'a str,
    mode: &'a str,
    capacity_bytes: String,
    bandwidth_bytes_per_s: f64,
    step: String,
    layer: &'a str,
    kind: &'a str,
    phase: &'a str,
    macs: f64,
    elementwise_ops: f64,
    accessed_bytes: u64,
    read_bytes: u64,
    write_bytes: u64,
    prefetched_bytes: u64,
    compute_s: f64,
    memory_s: f64,
    time_s: f64,
    bound: &'a str,
    op_intensity: String,
    saved_intra_layer: u64,
    saved_adjacent_layer: u64,
    saved_block: u64,
    saved_recurrent_weight: u64,
    saved_forward_backward: u64,
    saved_long_range: u64,
}

#[derive(Serialize)]
struct PhaseSummary {
    time_s: f64,
    traffic_bytes: u64,
}

#[derive(Serialize)]
struct LayerBrief {
    layer: String,
    phase: &'static str,
    time_s: f64,
    traffic_bytes: u64,
    op_intensity: Option<f64>,
}

#[derive(Serialize)]
struct PointSummary {
    capacity_bytes: Option<u64>,
    capacity: String,
    bandwidth_bytes_per_s: f64,
    time_s: f64,
    compute_s: f64,
    read_bytes: u64,
    write_bytes: u64,
    traffic_bytes: u64,
    avg_bandwidth_bytes_per_s: f64,
    bandwidth_utilization: f64,
    lru_traffic_bytes: u64,
    hits: u64,
    misses: u64,
    memory_bound_steps: usize,
    memory_bound_time_s: f64,
    saved_bytes: BTreeMap<&'static str, u64>,
    phases: BTreeMap<&'static str, PhaseSummary>,
    top_memory_bound: Vec<LayerBrief>,
}

#[derive(Serialize)]
struct Summary<'a> {
    network: &'a str,
    mode: &'a str,
    batch: usize,
    bytes_per_element: u32,
    optimizer: &'a str,
    tile_bytes: u64,
    prefetch: bool,
    /// Buffer policy of every figure but `lru_traffic_bytes`.
    policy: &'a str,
    compute_source: &'a str,
    peak_macs_per_s: f64,
    elementwise_ops_per_s: f64,
    parameters: u64,
    steps: usize,
    tiles: usize,
    accesses: usize,
    /// Traffic with no buffer: every access goes off-chip.
    all_access_bytes: u64,
    /// Traffic with an unbounded buffer: first reads and live-out writes.
    compulsory_bytes: u64,
    points: Vec<PointSummary>,
}

fn op_intensity(flops: f64, bytes: u64) -> Option<f64> {
    (bytes > 0).then(|| flops / bytes as f64)
}

fn capacity_field(c: Capacity) -> String {
    c.0.map_or("inf".into(), |b| b.to_string())
}

fn point_summary(m: &Model, p: &Point) -> PointSummary {
    let sim = &p.at.sim;
    let mut phases: BTreeMap<&'static str, PhaseSummary> = BTreeMap::new();
    let mut briefs = Vec::new();
    for (i, (s, t)) in m.step.steps.iter().zip(&p.times).enumerate() {
        let tr = &sim.steps[i];
        let e = phases.entry(s.phase.as_str()).or_insert(PhaseSummary {
            time_s: 0.0,
            traffic_bytes: 0,
        });
        e.time_s += t.time_s;
        e.traffic_bytes += tr.read_bytes + tr.write_bytes;
        if t.bound == Bound::Memory {
            briefs.push(LayerBrief {
                layer: s.layer.clone(),
                phase: s.phase.as_str(),
                time_s: t.time_s,
                traffic_bytes: tr.read_bytes + tr.write_bytes,
                op_intensity: op_intensity(m.flops(i), tr.read_bytes + tr.write_bytes),
            });
        }
    }
    let memory_bound_steps = briefs.len();
    briefs.sort_by(|a, b| b.time_s.total_cmp(&a.time_s));
    briefs.truncate(10);
    let time = p.time_s();
    PointSummary {
        capacity_bytes: p.at.capacity.0,
        capacity: p.at.capacity.to_string(),
        bandwidth_bytes_per_s: p.bandwidth,
        time_s: time,
        compute_s: m.compute.iter().sum(),
        read_bytes: sim.read_bytes(),
        write_bytes: sim.write_bytes(),
        traffic_bytes: sim.traffic(),
        avg_bandwidth_bytes_per_s: p.avg_bandwidth(),
        bandwidth_utilization: p.avg_bandwidth() / p.bandwidth,
        lru_traffic_bytes: p.at.lru_traffic,
        hits: sim.hits,
        misses: sim.misses,
        memory_bound_steps,
        memory_bound_time_s: p.memory_bound_time_s(),
        saved_bytes: named_scopes(&sim.saved_by_scope()).into_iter().collect(),
        phases,
        top_memory_bound: briefs,
    }
}

fn layer_rows<'a>(
    m: &'a Model,
    p: &'a Point,
    accessed: &[u64],
    w: &mut csv::Writer<Vec<u8>>,
) -> anyhow::Result<()> {
    let mode = m.step.mode.as_str();
    let cap = capacity_field(p.at.capacity);
    let mut total = LayerRow {
        network: &m.step.network,
        mode,
        capacity_bytes: cap.clone(),
        bandwidth_bytes_per_s: p.bandwidth,
        step: String::new(),
        layer: "TOTAL",
        kind: "",
        phase: "",
        macs: 0.0,
        elementwise_ops: 0.0,
        accessed_bytes: 0,
        read_bytes: 0,
        write_bytes: 0,
        prefetched_bytes: 0,
        compute_s: 0.0,
        memory_s: 0.0,
        time_s: 0.0,
        bound: "",
        op_intensity: String::new(),
        saved_intra_layer: 0,
        saved_adjacent_layer: 0,
        saved_block: 0,
        saved_recurrent_weight: 0,
        saved_forward_backward: 0,
        saved_long_range: 0,
    };
    let mut flops = 0.0;
    for (i, s) in m.step.steps.iter().enumerate() {
        let tr = &p.at.sim.steps[i];
        let t = &p.times[i];
        let sv = |k: Scope| tr.saved[k.index()];
        let row = LayerRow {
            network: &m.step.network,
            mode,
            capacity_bytes: cap.clone(),
            bandwidth_bytes_per_s: p.bandwidth,
            step: i.to_string(),
            layer: &s.layer,
            kind: s.kind,
            phase: s.phase.as_str(),
            macs: s.macs,
            elementwise_ops: s.ops,
            accessed_bytes: accessed[i],
            read_bytes: tr.read_bytes,
            write_bytes: tr.write_bytes,
            prefetched_bytes: t.prefetched_bytes,
            compute_s: t.compute_s,
            memory_s: t.memory_s,
            time_s: t.time_s,
            bound: t.bound.as_str(),
            op_intensity: op_intensity(m.flops(i), tr.read_bytes + tr.write_bytes)
                .map_or(String::new(), |v| format!("{v:.4}")),
            saved_intra_layer: sv(Scope::IntraLayer),
            saved_adjacent_layer: sv(Scope::AdjacentLayer),
            saved_block: sv(Scope::Block),
            saved_recurrent_weight: sv(Scope::RecurrentWeight),
            saved_forward_backward: sv(Scope::ForwardBackward),
            saved_long_range: sv(Scope::LongRange),
        };
        flops += m.flops(i);
        total.macs += row.macs;
        total.elementwise_ops += row.elementwise_ops;
        total.accessed_bytes += row.accessed_bytes;
        total.read_bytes += row.read_bytes;
        total.write_bytes += row.write_bytes;
        total.prefetched_bytes += row.prefetched_bytes;
        total.compute_s += row.compute_s;
        total.memory_s += row.memory_s;
        total.time_s += row.time_s;
        total.saved_intra_layer += row.saved_intra_layer;
        total.saved_adjacent_layer += row.saved_adjacent_layer;
        total.saved_block += row.saved_block;
        total.saved_recurrent_weight += row.saved_recurrent_weight;
        total.saved_forward_backward += row.saved_forward_backward;
        total.saved_long_range += row.saved_long_range;
        w.serialize(row)?;
    }
    total.bound = if total.memory_s > total.compute_s {
        Bound::Memory.as_str()
    } else {
        Bound::Compute.as_str()
    };
    total.op_intensity = op_intensity(flops, total.read_bytes + total.write_bytes)
        .map_or(String::new(), |v| format!("{v:.4}"));
    w.serialize(total)?;
    Ok(())
}

/// Refuses results with a time or a rate that is not a finite number (a tiny but
/// positive throughput or bandwidth overflows f64): no output holds one. The message
/// names the config key or flag.
pub fn check_finite(m: &Model, points: &[Point]) -> anyhow::Result<()> {
    let total: f64 = m.compute.iter().sum();
    if let Some(i) = (0..m.compute.len()).find(|&i| !m.compute[i].is_finite()) {
        bail!(
            "memory.peak_macs_per_s, memory.elementwise_ops_per_s: {:e}, {:e} are too small: the compute time of {} would be {}, not a finite number",
            m.config.peak_macs_per_s,
            m.config.elementwise_ops_per_s,
            m.step.steps[i].layer,
            m.compute[i]
        );
    }
    if !total.is_finite() {
        bail!(
            "memory.peak_macs_per_s, memory.elementwise_ops_per_s: {:e}, {:e} are too small: the compute time of the step would be {total}, not a finite number",
            m.config.peak_macs_per_s,
            m.config.elementwise_ops_per_s
        );
    }
    for p in points {
        let figures = p.times.iter().flat_map(|t| [t.memory_s, t.time_s]).chain([
            p.time_s(),
            p.avg_bandwidth(),
            p.avg_bandwidth() / p.bandwidth,
            p.memory_bound_time_s(),
        ]);
        for x in figures {
            if !x.is_finite() {
                bail!(
                    "--bandwidth: {:e} B/s is too small: the time at capacity {} would be {x}, not a finite number",
                    p.bandwidth,
                    p.at.capacity
                );
            }
        }
    }
    Ok(())
}

/// Checks `args` against `cfg` and loads the network (a bundle read and checked) without
/// running the model: what `sresim memory` checks before it opens a directory
/// (docs/errors.md, "Output directories": inputs first, then the lock).
pub fn check(args: &MemoryArgs, cfg: &MemoryConfig) -> anyhow::Result<()> {
    let p = parse(args, cfg)?;
    let opts = ZooOptions {
        seq_len: args.seq_len,
    };
    let graph = load_network(&args.workload, args.batch, opts)?;
    crate::limits::check_tensors(&graph, &p.cfg).map_err(|e| anyhow!("{e}"))
}

struct Parsed {
    capacities: Vec<Capacity>,
    bandwidths: Vec<f64>,
    cfg: MemoryConfig,
}

fn parse(args: &MemoryArgs, cfg: &MemoryConfig) -> anyhow::Result<Parsed> {
    cfg.validate().map_err(|e| anyhow!("{e}"))?;
    crate::limits::check_args(args.batch, args.seq_len).map_err(|e| anyhow!("{e}"))?;
    if args.capacity.is_empty() {
        bail!("--capacity: give at least one capacity");
    }
    if args.bandwidth.is_empty() {
        bail!("--bandwidth: give at least one bandwidth");
    }
    if args.plot && args.out.is_none() {
        bail!("--plot: needs --out DIR, the directory the plot is written to");
    }
    let capacities = args
        .capacity
        .iter()
        .map(|s| parse_capacity(s).map_err(|e| anyhow!("--capacity: {e}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let bandwidths = args
        .bandwidth
        .iter()
        .map(|s| parse_bandwidth(s).map_err(|e| anyhow!("--bandwidth: {e}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // Each value is one point: a value listed twice, even spelt two ways (900GB/s and
    // 0.9TB/s), would write its rows twice, and compare and plot refuse a table whose
    // rows repeat; refused as a grid refuses it (docs/errors.md, "sresim memory").
    repeated("--capacity", "capacity", &args.capacity, &capacities)?;
    repeated("--bandwidth", "bandwidth", &args.bandwidth, &bandwidths)?;
    let mut cfg = cfg.clone();
    if let Some(m) = &args.mode {
        cfg.mode = Mode::parse(m).map_err(|e| anyhow!("--mode: {e}"))?;
    }
    Ok(Parsed {
        capacities,
        bandwidths,
        cfg,
    })
}

/// Refuses the first value of `values` (parsed from `given`, in order) equal to an
/// earlier one, naming both as written.
fn repeated<T: PartialEq>(
    flag: &str,
    what: &str,
    given: &[String],
    values: &[T],
) -> anyhow::Result<()> {
    for (j, v) in values.iter().enumerate() {
        if let Some(i) = values[..j].iter().position(|u| u == v) {
            let (a, b) = (given[i].trim(), given[j].trim());
            if a == b {
                bail!(
                    "{flag}: {a} is listed twice (a value listed twice would write its rows twice)"
                );
            }
            bail!("{flag}: {a} and {b} are the same {what}, a value listed twice (it would write its rows twice)");
        }
    }
    Ok(())
}

/// What a memory run writes: the files of `--out` and the table for stdout.
pub struct Outputs {
    /// memory_layers.csv, memory_summary.json and, when drawn, memory_vs_capacity.svg.
    pub files: Vec<(&'static str, Vec<u8>)>,
    pub table: String,
    /// The figures of memory_vs_capacity.svg.
    pub curve: Curve,
    /// Whether memory_vs_capacity.svg is to be drawn (`--plot`, or two or more
    /// capacities); the caller draws it and appends it to `files`.
    pub plot: bool,
}

/// Step time and off-chip traffic at every (capacity, bandwidth) point: what the plot of
/// time and traffic against capacity draws.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub network: String,
    pub mode: Mode,
    pub batch: usize,
    /// Time of the compute alone (an unbounded bandwidth), in seconds.
    pub compute_s: f64,
    pub points: Vec<CurvePoint>,
}

/// One point of a [`Curve`].
#[derive(Debug, Clone, PartialEq)]
pub struct CurvePoint {
    /// On-chip capacity in bytes (None: unbounded).
    pub capacity: Option<u64>,
    /// Off-chip bandwidth in bytes per second.
    pub bandwidth: f64,
    pub time_s: f64,
    /// Off-chip traffic in bytes.
    pub traffic: u64,
}

impl Curve {
    fn new(m: &Model, points: &[Point]) -> Curve {
        Curve {
            network: m.step.network.clone(),
            mode: m.step.mode,
            batch: m.step.batch,
            compute_s: m.compute.iter().sum::<f64>(),
            points: points
                .iter()
                .map(|p| CurvePoint {
                    capacity: p.at.capacity.0,
                    bandwidth: p.bandwidth,
                    time_s: p.time_s(),
                    traffic: p.traffic(),
                })
                .collect(),
        }
    }
}

impl Outputs {
    /// Replaces the files in `dir` together (none without `--out`), then prints the
    /// table and what was written.
    pub fn write(
        &self,
        dir: Option<&outdir::OutputDir>,
        stdout: &mut dyn Write,
    ) -> anyhow::Result<()> {
        self.write_with(dir, Vec::new(), stdout)
    }

    /// [`Outputs::write`], replacing `exports` (staged files of other directories: the
    /// access lists and the trace) in the same all-or-none step as the files of `dir`.
    pub fn write_with(
        &self,
        dir: Option<&outdir::OutputDir>,
        exports: Vec<outdir::Staged>,
        stdout: &mut dyn Write,
    ) -> anyhow::Result<()> {
        let mut staged = Vec::with_capacity(self.files.len() + exports.len());
        if let Some(dir) = dir {
            for (name, bytes) in &self.files {
                let mut s = dir.stage(name)?;
                // A write error names the file (outdir::Staged).
                s.write_all(bytes)?;
                staged.push(s);
            }
        }
        staged.extend(exports);
        // The journal of the replacement goes to the result directory, else beside the
        // first export.
        let journal_dir = match (dir, staged.first()) {
            (Some(d), _) => Some(d.path().to_path_buf()),
            (None, Some(s)) => s.target().parent().map(std::path::Path::to_path_buf),
            (None, None) => None,
        };
        if let Some(j) = journal_dir {
            match dir {
                Some(d) => d.replace_staged(staged)?,
                None => outdir::replace_staged(&j, staged)?,
            }
        }
        stdout.write_all(self.table.as_bytes())?;
        match dir {
            Some(dir) => {
                let paths: Vec<String> = self
                    .files
                    .iter()
                    .map(|(n, _)| bounds::text::path(&dir.path().join(n)))
                    .collect();
                writeln!(stdout, "wrote {}", paths.join(", "))?;
            }
            None => writeln!(
                stdout,
                "(--out DIR writes memory_layers.csv, memory_summary.json and memory_vs_capacity.svg)"
            )?,
        }
        stdout.flush()?;
        Ok(())
    }
}

/// Runs the model for every (capacity, bandwidth) of `args`: the files and the table,
/// all computed before anything is written.
pub fn outputs(
    args: &MemoryArgs,
    cfg: &MemoryConfig,
    compute: ComputeSource,
) -> anyhow::Result<Outputs> {
    let p = parse(args, cfg)?;
    let opts = ZooOptions {
        seq_len: args.seq_len,
    };
    let graph = load_network(&args.workload, args.batch, opts)?;
    if let ComputeSource::Simulated(map) = &compute {
        let mut unknown: Vec<&String> = map
            .keys()
            .filter(|k| !graph.nodes.iter().any(|n| &n.name == *k))
            .collect();
        unknown.sort();
        if !unknown.is_empty() {
            eprintln!(
                "warning: no layer of {} is named {} (their simulated times are not used)",
                graph.name,
                unknown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    let model = Model::new(&graph, &p.cfg, &compute).map_err(|e| anyhow!("{e}"))?;
    let results: Vec<CapacityResult> = p.capacities.iter().map(|&c| model.simulate(c)).collect();
    let points: Vec<Point> = results
        .iter()
        .flat_map(|r| p.bandwidths.iter().map(|&bw| model.point(r, bw)))
        .collect();

    check_finite(&model, &points)?;
    let accessed = model.accessed_bytes();
    let mut w = csv::Writer::from_writer(Vec::new());
    for pt in &points {
        layer_rows(&model, pt, &accessed, &mut w)?;
    }
    let csv_bytes = w
        .into_inner()
        .map_err(|e| anyhow!("memory_layers.csv: {e}"))?;
    let summary = Summary {
        network: &graph.name,
        mode: p.cfg.mode.as_str(),
        batch: args.batch,
        bytes_per_element: p.cfg.bytes_per_element,
        optimizer: p.cfg.optimizer.as_str(),
        tile_bytes: p.cfg.tile_bytes,
        prefetch: p.cfg.prefetch,
        policy: p.cfg.policy.as_str(),
        compute_source: compute.name(),
        peak_macs_per_s: p.cfg.peak_macs_per_s,
        elementwise_ops_per_s: p.cfg.elementwise_ops_per_s,
        parameters: graph.parameters(),
        steps: model.step.steps.len(),
        tiles: model.list.tiles.len(),
        accesses: model.list.accesses.len(),
        all_access_bytes: model.list.total_bytes(),
        compulsory_bytes: model.list.compulsory_bytes(),
        points: points.iter().map(|pt| point_summary(&model, pt)).collect(),
    };
    let json = serde_json::to_vec_pretty(&summary)?;

    let files = vec![
        ("memory_layers.csv", csv_bytes),
        ("memory_summary.json", json),
    ];
    let finite = p.capacities.iter().filter(|c| !c.is_infinite()).count();
    let plot = args.plot || p.capacities.len() >= 2;
    if plot && finite < 2 {
        eprintln!("warning: memory_vs_capacity.svg needs two finite capacities to draw a line");
    }
    let table = table(&model, &summary, &points);
    Ok(Outputs {
        files,
        table,
        curve: Curve::new(&model, &points),
        plot,
    })
}

/// The readable summary printed on stdout.
fn table(m: &Model, s: &Summary, points: &[Point]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} ({}, batch {}, {} B/element{}): {} steps, {} tiles, {} accesses",
        s.network,
        s.mode,
        s.batch,
        s.bytes_per_element,
        // Inference updates no weight: no optimizer to name.
        if s.mode == Mode::Training.as_str() {
            format!(", {}", s.optimizer)
        } else {
            String::new()
        },
        s.steps,
        s.tiles,
        s.accesses
    );
    let _ = writeln!(
        o,
        "traffic without a buffer {}, compulsory {}; compute {} ({} compute)",
        format_bytes(s.all_access_bytes as f64),
        format_bytes(s.compulsory_bytes as f64),
        format_seconds(m.compute.iter().sum()),
        s.compute_source
    );
    let _ = writeln!(
        o,
        "{:>10} {:>11} {:>11} {:>11} {:>11} {:>10} {:>9} {:>10}",
        "capacity", "bandwidth", "time", "traffic", "avg BW", "BW used", "mem-bound", "LRU traffic"
    );
    // One unit and precision per column: the one its largest value reads in.
    use crate::units::{Column, BYTES, BYTES_PER_S, SECONDS};
    let time = Column::fit(s.points.iter().map(|p| p.time_s), SECONDS, 3);
    let traffic = Column::fit(s.points.iter().map(|p| p.traffic_bytes as f64), BYTES, 2);
    let bw = Column::fit(
        s.points.iter().map(|p| p.avg_bandwidth_bytes_per_s),
        BYTES_PER_S,
        2,
    );
    for (p, ps) in points.iter().zip(&s.points) {
        let _ = writeln!(
            o,
            "{:>10} {:>11} {:>11} {:>11} {:>11} {:>9.1}% {:>8.1}% {:>+10.1}%",
            p.at.capacity.to_string(),
            format_bandwidth(p.bandwidth),
            time.show(ps.time_s),
            traffic.show(ps.traffic_bytes as f64),
            bw.show(ps.avg_bandwidth_bytes_per_s),
            100.0 * ps.bandwidth_utilization,
            100.0 * ps.memory_bound_time_s / ps.time_s.max(f64::MIN_POSITIVE),
            100.0 * (ps.lru_traffic_bytes as f64 / (ps.traffic_bytes.max(1)) as f64 - 1.0),
        );
    }
    if let (Some(p), Some(ps)) = (points.first(), s.points.first()) {
        let _ = writeln!(
            o,
            "at {} and {}: traffic saved by reuse scope",
            p.at.capacity,
            format_bandwidth(p.bandwidth)
        );
        let saved = Column::fit(ps.saved_bytes.values().map(|b| *b as f64), BYTES, 2);
        for (name, b) in &ps.saved_bytes {
            let _ = writeln!(o, "  {name:<17} {:>12}", saved.show(*b as f64));
        }
        let _ = writeln!(
            o,
            "  {} of {} steps memory-bound; the longest:",
            ps.memory_bound_steps, s.steps
        );
        let top = || ps.top_memory_bound.iter().take(5);
        let time = Column::fit(top().map(|b| b.time_s), SECONDS, 3);
        let traffic = Column::fit(top().map(|b| b.traffic_bytes as f64), BYTES, 2);
        for b in top() {
            let _ = writeln!(
                o,
                "  {:<40} {:<16} {:>11} {:>11}  {:.1} flop/B",
                b.layer,
                b.phase,
                time.show(b.time_s),
                traffic.show(b.traffic_bytes as f64),
                b.op_intensity.unwrap_or(f64::INFINITY)
            );
        }
    }
    o
}
