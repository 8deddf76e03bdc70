//! The exports of `sresim memory` (docs/memory.md, "Exports"): `--dump-access-list DIR`
//! writes access_list.csv and prefetch_list.csv, `--dump-trace FILE` the off-chip requests
//! of the one point as a DRAMsim3 or Ramulator 2 trace. The model hands out records one at
//! a time (`memory::export`, `memory::trace`); they are streamed into temporary files beside
//! their targets, which replace the targets only once every file is complete.

use anyhow::{anyhow, bail, Result};
use memory::export::{access_records, prefetch_records};
use memory::trace::{AddressLayout, Request, TracePoint};
use memory::{Capacity, ComputeSource, MemoryArgs, MemoryConfig, Model};
use serde::Serialize;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Line format of `--dump-trace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// `0xADDR READ|WRITE CYCLE` (DRAMsim3's trace-based CPU).
    DramSim3,
    /// `LD|ST 0xADDR` (Ramulator 2's LoadStoreTrace front end).
    Ramulator2,
}

impl TraceFormat {
    pub fn parse(s: &str) -> Result<TraceFormat> {
        match s.trim().to_ascii_lowercase().as_str() {
            "dramsim3" => Ok(TraceFormat::DramSim3),
            "ramulator2" => Ok(TraceFormat::Ramulator2),
            _ => bail!("--trace-format: '{s}' is not a trace format (dramsim3 or ramulator2)"),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TraceFormat::DramSim3 => "dramsim3",
            TraceFormat::Ramulator2 => "ramulator2",
        }
    }

    fn line(self, w: &mut impl Write, r: &Request) -> std::io::Result<()> {
        match self {
            TraceFormat::DramSim3 => {
                let op = if r.write { "WRITE" } else { "READ" };
                writeln!(w, "{:#x} {op} {}", r.addr, r.cycle)
            }
            TraceFormat::Ramulator2 => {
                let op = if r.write { "ST" } else { "LD" };
                writeln!(w, "{op} {:#x}", r.addr)
            }
        }
    }
}

/// A file of the exports, streamed into a temporary beside its target (`outdir`), which
/// replaces the target together with the other files of the command.
struct Pending {
    file: outdir::Staged,
    target: PathBuf,
}

impl Pending {
    /// The file `target` a user named (`--dump-trace`), or with `set`, one of the files of
    /// `sresim memory`'s set in a directory the user named (`--dump-access-list DIR`).
    fn new(flag: &str, target: &Path, set: bool) -> Result<Pending> {
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            bail!(
                "{flag}: cannot write {}: no directory {}",
                target.display(),
                dir.display()
            );
        }
        let file = match (set, target.file_name()) {
            (true, Some(name)) => outdir::stage(dir, &name.to_string_lossy()),
            _ => outdir::stage_file(target),
        }
        .map_err(|e| anyhow!("{flag}: {e}"))?;
        Ok(Pending {
            file,
            target: target.to_path_buf(),
        })
    }
}

/// `--dump-access-list DIR`: the two list files, and the directories this run created for
/// them, deepest first (removed again if the run fails).
struct Lists {
    access: Option<Pending>,
    prefetch: Option<Pending>,
    created: Vec<PathBuf>,
}

impl Drop for Lists {
    fn drop(&mut self) {
        self.access.take();
        self.prefetch.take();
        for d in self.created.drain(..) {
            let _ = fs::remove_dir(d);
        }
    }
}

struct Trace {
    file: Pending,
    format: TraceFormat,
    clock_hz: f64,
    capacity: Capacity,
    bandwidth: f64,
    requests: u64,
    policy: &'static str,
}

/// The exports a `sresim memory` command asked for, checked and opened, not yet written.
pub struct Exports {
    lists: Option<Lists>,
    trace: Option<Trace>,
}

#[derive(Serialize)]
struct AccessRow<'a> {
    index: usize,
    step: usize,
    layer: &'a str,
    phase: &'a str,
    tensor: &'a str,
    tile: u32,
    offset_bytes: u64,
    bytes: u64,
    kind: &'a str,
    next_read_index: Option<u32>,
    live_in: bool,
    live_out: bool,
    scope_if_hit: &'a str,
    tile_id: u32,
    address: u64,
    prefetchable: bool,
}

#[derive(Serialize)]
struct PrefetchRow<'a> {
    step: usize,
    tensor: &'a str,
    tile: u32,
    bytes: u64,
    for_step: usize,
    tile_id: u32,
    address: u64,
}

/// Exactly one value of a list flag, for `--dump-trace`.
fn one<'a>(values: &'a [String], flag: &str) -> Result<&'a str> {
    match values {
        [v] => Ok(v),
        _ => bail!(
            "--dump-trace: needs exactly one {flag} (one point), got {}: {}",
            values.len(),
            values.join(",")
        ),
    }
}

/// The export flags of `sresim memory`, unchecked.
#[derive(Debug, Clone, Default)]
pub struct ExportFlags {
    /// Directory of access_list.csv and prefetch_list.csv.
    pub dump_access_list: Option<PathBuf>,
    /// File of the one point's DRAM trace.
    pub dump_trace: Option<PathBuf>,
    /// Trace format: dramsim3 or ramulator2.
    pub trace_format: Option<String>,
    /// Clock of the DRAMsim3 issue cycles in MHz.
    pub trace_clock_mhz: Option<f64>,
}

/// The trace point `--dump-trace` asks for, its flags checked.
struct TracePlan {
    format: TraceFormat,
    mhz: f64,
    capacity: memory::Capacity,
    bandwidth: f64,
}

impl ExportFlags {
    /// Checks the values of the export flags against `args` (nothing opened or written):
    /// what [`Exports::prepare`] checks first, and `sresim memory` before it opens any
    /// directory (docs/errors.md, "Output directories": inputs, then the lock).
    pub fn check(&self, args: &MemoryArgs) -> Result<()> {
        self.trace_plan(args).map(|_| ())
    }

    fn trace_plan(&self, args: &MemoryArgs) -> Result<Option<TracePlan>> {
        if let Some(dir) = &self.dump_access_list {
            if dir.as_os_str().is_empty() {
                bail!("--dump-access-list: no directory named");
            }
            if dir.exists() && !dir.is_dir() {
                bail!("--dump-access-list: {} is not a directory", dir.display());
            }
        }
        let Some(path) = &self.dump_trace else {
            if self.trace_format.is_some() {
                bail!("--trace-format: needs --dump-trace FILE");
            }
            if self.trace_clock_mhz.is_some() {
                bail!("--trace-clock-mhz: needs --dump-trace FILE");
            }
            return Ok(None);
        };
        if path.as_os_str().is_empty() {
            bail!("--dump-trace: no file named");
        }
        let capacity = one(&args.capacity, "--capacity")?;
        let capacity = memory::parse_capacity(capacity).map_err(|e| anyhow!("--capacity: {e}"))?;
        let bandwidth = one(&args.bandwidth, "--bandwidth")?;
        let bandwidth =
            memory::parse_bandwidth(bandwidth).map_err(|e| anyhow!("--bandwidth: {e}"))?;
        let format = TraceFormat::parse(self.trace_format.as_deref().unwrap_or("dramsim3"))?;
        let mhz = self.trace_clock_mhz.unwrap_or(1000.0);
        if !(mhz.is_finite() && mhz > 0.0) {
            bail!(
                "--trace-clock-mhz: {} must be a positive number",
                bounds::finite::short(mhz)
            );
        }
        Ok(Some(TracePlan {
            format,
            mhz,
            capacity,
            bandwidth,
        }))
    }
}

impl Exports {
    /// Checks the export flags and opens their temporary files, before anything is
    /// computed; a bad value or an unwritable path is an error naming the flag.
    pub fn prepare(args: &MemoryArgs, flags: &ExportFlags) -> Result<Exports> {
        let trace = match (&flags.dump_trace, flags.trace_plan(args)?) {
            (Some(path), Some(p)) => Some(Trace {
                file: Pending::new("--dump-trace", path, false)?,
                format: p.format,
                clock_hz: p.mhz * 1e6,
                capacity: p.capacity,
                bandwidth: p.bandwidth,
                requests: 0,
                policy: "",
            }),
            _ => None,
        };
        let lists = match &flags.dump_access_list {
            None => None,
            Some(dir) => {
                let mut l = Lists {
                    access: None,
                    prefetch: None,
                    created: dir
                        .ancestors()
                        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
                        .map(Path::to_path_buf)
                        .collect(),
                };
                fs::create_dir_all(dir).map_err(|e| {
                    anyhow!("--dump-access-list: cannot create {}: {e}", dir.display())
                })?;
                let flag = "--dump-access-list";
                l.access = Some(Pending::new(flag, &dir.join("access_list.csv"), true)?);
                l.prefetch = Some(Pending::new(flag, &dir.join("prefetch_list.csv"), true)?);
                Some(l)
            }
        };
        // No two outputs at one path, and no trace under a name of the set in a directory
        // the set is written to: checked here, before anything is computed (outdir's one
        // check, which runs again at the commit).
        if let Some(t) = &trace {
            let dir_of = |p: &Path| match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let name = t.file.target.file_name().map(|n| n.to_string_lossy());
            let name = name.as_deref().unwrap_or_default();
            let trace_dir = dir_of(&t.file.target);
            let mut files: Vec<(&Path, &str, bool)> = vec![(&trace_dir, name, true)];
            if let Some(o) = &args.out {
                files.push((o, "memory_summary.json", false));
            }
            if let Some(d) = &flags.dump_access_list {
                files.push((d, "access_list.csv", false));
                files.push((d, "prefetch_list.csv", false));
            }
            outdir::check_apart("memory", &files).map_err(|e| anyhow!("--dump-trace: {e}"))?;
        }
        Ok(Exports { lists, trace })
    }

    pub fn is_empty(&self) -> bool {
        self.lists.is_none() && self.trace.is_none()
    }

    /// Streams the records of `model` into the temporary files.
    pub fn write(&mut self, model: &Model) -> Result<()> {
        let live_in: Vec<bool> = model.step.tensors.iter().map(|t| t.live_in).collect();
        let layout = AddressLayout::new(&model.list, &live_in);
        if let Some(l) = &mut self.lists {
            if let Some(p) = &mut l.access {
                write_access_list(model, &layout, p)?;
            }
            if let Some(p) = &mut l.prefetch {
                write_prefetch_list(model, &layout, p)?;
            }
        }
        if let Some(t) = &mut self.trace {
            let point = TracePoint::of(model, t.capacity, t.bandwidth);
            point.check_clock(t.clock_hz).map_err(|e| {
                anyhow!(
                    "--trace-clock-mhz: {:e} is too large: {e}",
                    t.clock_hz / 1e6
                )
            })?;
            let mut w = BufWriter::with_capacity(1 << 20, &mut t.file.file);
            let mut result = Ok(());
            let mut count = 0u64;
            point.requests(&layout, t.clock_hz, |r| {
                if result.is_ok() {
                    result = t.format.line(&mut w, &r);
                    count += 1;
                }
            });
            // The staged file names itself in a write error.
            result
                .and_then(|_| w.flush())
                .map_err(|e| anyhow!("--dump-trace: {e}"))?;
            t.requests = count;
            t.policy = model.config.policy.as_str();
        }
        Ok(())
    }

    /// The staged files, to be replaced together with the command's other outputs
    /// (`outdir::replace_staged`), and what they hold, one line each. The directories
    /// made for `--dump-access-list` are kept from here on.
    pub fn finish(mut self) -> (Vec<outdir::Staged>, Vec<String>) {
        let mut done = Vec::new();
        let mut staged = Vec::new();
        if let Some(mut l) = self.lists.take() {
            for p in [l.access.take(), l.prefetch.take()].into_iter().flatten() {
                done.push(p.target.display().to_string());
                staged.push(p.file);
            }
            l.created.clear();
        }
        if let Some(t) = self.trace.take() {
            done.push(format!(
                "{} ({} {} requests of {} B at {} and {}, {} policy)",
                t.file.target.display(),
                t.requests,
                t.format.as_str(),
                memory::trace::REQUEST_BYTES,
                t.capacity,
                memory::units::format_bandwidth(t.bandwidth),
                t.policy,
            ));
            staged.push(t.file.file);
        }
        (staged, done)
    }
}

/// A CSV error of an export: a write error names its file (the staged file says which);
/// anything else is told with the file.
fn csv_error(flag: &str, target: &str, e: csv::Error) -> anyhow::Error {
    match e.kind() {
        csv::ErrorKind::Io(_) => anyhow!("{flag}: {e}"),
        _ => anyhow!("{flag}: cannot write {target}: {e}"),
    }
}

/// A CSV writer on `p` that has written `header` (also when no row follows).
fn csv_with_header<'a>(
    p: &'a mut Pending,
    header: &[&str],
) -> Result<csv::Writer<&'a mut outdir::Staged>> {
    let target = p.target.display().to_string();
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(&mut p.file);
    w.write_record(header)
        .map_err(|e| csv_error("--dump-access-list", &target, e))?;
    Ok(w)
}

fn write_access_list(model: &Model, layout: &AddressLayout, p: &mut Pending) -> Result<()> {
    let target = p.target.display().to_string();
    let header = [
        "index",
        "step",
        "layer",
        "phase",
        "tensor",
        "tile",
        "offset_bytes",
        "bytes",
        "kind",
        "next_read_index",
        "live_in",
        "live_out",
        "scope_if_hit",
        "tile_id",
        "address",
        "prefetchable",
    ];
    let mut w = csv_with_header(p, &header)?;
    for r in access_records(&model.step, &model.list) {
        w.serialize(AccessRow {
            index: r.index,
            step: r.step,
            layer: r.layer,
            phase: r.phase,
            tensor: r.tensor,
            tile: r.tile,
            offset_bytes: r.offset_bytes,
            bytes: r.bytes,
            kind: if r.write { "write" } else { "read" },
            next_read_index: r.next_read,
            live_in: r.live_in,
            live_out: r.live_out,
            scope_if_hit: r.scope_if_hit.map_or("", |s| s.as_str()),
            tile_id: r.tile_id,
            address: layout.tile_addr[r.tile_id as usize],
            prefetchable: r.prefetchable,
        })
        .map_err(|e| csv_error("--dump-access-list", &target, e))?;
    }
    w.flush()
        .map_err(|e| csv_error("--dump-access-list", &target, e.into()))?;
    Ok(())
}

fn write_prefetch_list(model: &Model, layout: &AddressLayout, p: &mut Pending) -> Result<()> {
    let target = p.target.display().to_string();
    let header = [
        "step", "tensor", "tile", "bytes", "for_step", "tile_id", "address",
    ];
    let mut w = csv_with_header(p, &header)?;
    for r in prefetch_records(&model.step, &model.list) {
        w.serialize(PrefetchRow {
            step: r.step,
            tensor: r.tensor,
            tile: r.tile,
            bytes: r.bytes,
            for_step: r.step + 1,
            tile_id: r.tile_id,
            address: layout.tile_addr[r.tile_id as usize],
        })
        .map_err(|e| csv_error("--dump-access-list", &target, e))?;
    }
    w.flush()
        .map_err(|e| csv_error("--dump-access-list", &target, e.into()))?;
    Ok(())
}

/// The model [`outputs`] evaluates for the same flags (network, batch, mode, sequence
/// length), built again for the exports.
pub fn model(a: &MemoryArgs, cfg: &MemoryConfig, compute: &ComputeSource) -> Result<Model> {
    memory::limits::check_args(a.batch, a.seq_len).map_err(|e| anyhow!("{e}"))?;
    let mut cfg = cfg.clone();
    if let Some(m) = &a.mode {
        cfg.mode = memory::Mode::parse(m).map_err(|e| anyhow!("--mode: {e}"))?;
    }
    let opts = memory::zoo::ZooOptions { seq_len: a.seq_len };
    let graph = memory::report::load_network(&a.workload, a.batch, opts)?;
    Model::new(&graph, &cfg, compute).map_err(|e| anyhow!("{e}"))
}

/// The files and table of `sresim memory` for `args`: the model's, with the plot drawn
/// when they ask for it.
pub fn outputs(
    args: &MemoryArgs,
    cfg: &MemoryConfig,
    compute: ComputeSource,
) -> Result<memory::report::Outputs> {
    let mut outputs = memory::report::outputs(args, cfg, compute)?;
    if outputs.plot {
        let svg = crate::memory_plot::time_vs_capacity(&outputs.curve)?;
        outputs
            .files
            .push(("memory_vs_capacity.svg", svg.into_bytes()));
    }
    Ok(outputs)
}

/// [`outputs`] written to `args.out` (nothing without it), the table printed on stdout.
pub fn run(args: &MemoryArgs, cfg: &MemoryConfig, compute: ComputeSource) -> Result<()> {
    let dir = args
        .out
        .as_deref()
        .map(outdir::OutputDir::open)
        .transpose()?;
    outputs(args, cfg, compute)?.write(dir.as_ref(), &mut outdir::stdout())
}
