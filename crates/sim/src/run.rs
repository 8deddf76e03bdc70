//! The run driver: a workload, layer by layer, through every requested mode.
//!
//! One layer is loaded, mapped and compressed at a time and shared by all modes, then
//! dropped; memory does not grow with the network. Its inputs stream through every mode
//! a chunk of samples at a time ([`workload::chunk_samples`]), so memory does not
//! grow with the samples replayed either. Engines parallelize inside a chunk.

use crate::config::Resolved;
use anyhow::{anyhow, bail, Result};
use crossbar::Mode;
use energy::{Breakdown, Events};
use engine::{EngineKind, ModeRun, Prepared, Samples};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pipeline::cycle::CycleStats;
use std::time::{Duration, Instant};
use workload::{LayerKind, Workload};

pub use crate::result::{LayerResult, ModeTotal, RunResult};

/// What to run.
pub struct RunSpec<'a> {
    pub workload: &'a dyn Workload,
    pub cfg: &'a Resolved,
    pub modes: &'a [Mode],
    pub engine: EngineKind,
    pub samples: usize,
    /// Show progress on stderr: a bar on a terminal, plain lines in a log
    /// ([`crate::progress`]).
    pub progress: bool,
}

/// Progress units of preparing one weight (loading, quantizing, mapping, compressing),
/// and of setting up one mode per weight, in MACs of one mode: what that costs against
/// simulating one MAC in one mode with the fast engine, measured on vgg16 (docs/perf.md:
/// about 64 ns and 6.6 ns a weight against 0.10 ns a MAC). They keep the bar honest on a
/// layer like vgg16's fc6, whose 103 M weights take far longer to prepare than its one
/// vector per sample takes to simulate.
pub const PREPARE_UNITS_PER_WEIGHT: u64 = 600;
/// See [`PREPARE_UNITS_PER_WEIGHT`].
pub const MODE_UNITS_PER_WEIGHT: u64 = 64;

/// How a run's work is counted for progress: preparing a layer's weights, then each input
/// vector in each mode, weighted by its MACs (vectors of different layers differ by
/// orders of magnitude in work; vgg16's conv layers have 50,176 vectors of 1.7 M MACs
/// each, fc6 one of 103 M).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerWork {
    /// Units of preparing the weights and the modes (counted half after loading, half
    /// after mapping).
    pub prepare: u64,
    /// Units of one input vector in one mode (its MACs).
    pub per_vector: u64,
    /// Input vectors of the layer over the samples replayed, in all modes.
    pub vectors: u64,
}

impl LayerWork {
    pub fn of(geom: &workload::ConvGeometry, samples: usize, modes: usize) -> LayerWork {
        let vectors = geom.vectors_per_sample() as u64;
        LayerWork {
            prepare: (geom.weight_elements() as u64)
                .saturating_mul(PREPARE_UNITS_PER_WEIGHT + MODE_UNITS_PER_WEIGHT * modes as u64),
            per_vector: geom.macs_per_sample() as u64 / vectors.max(1),
            vectors: vectors
                .saturating_mul(samples as u64)
                .saturating_mul(modes as u64),
        }
    }

    pub fn total(&self) -> u64 {
        self.prepare
            .saturating_add(self.per_vector.saturating_mul(self.vectors))
    }
}

/// The progress units of a whole run of `layers` (see [`LayerWork`]).
pub fn work(layers: &[workload::LayerSpec], samples: usize, modes: usize) -> u64 {
    layers
        .iter()
        .map(|l| LayerWork::of(&l.geom, samples, modes).total())
        .fold(0, u64::saturating_add)
}

/// Where a run reports its progress, in the units of [`work`].
pub trait Progress: Sync {
    /// The run starts on layer `name`.
    fn layer(&self, _name: &str) {}
    /// `units` more are done.
    fn inc(&self, units: u64);
}

/// No progress report.
pub struct NoProgress;

impl Progress for NoProgress {
    fn inc(&self, _: u64) {}
}

pub fn run(spec: &RunSpec) -> Result<RunResult> {
    run_functional(spec, None)
}

/// [`run`], and with `func` the functional datapath of every mode beside the counts
/// (which it leaves unchanged).
pub fn run_functional(spec: &RunSpec, func: Option<&functional::FuncOptions>) -> Result<RunResult> {
    let w = spec.workload;
    let total = work(w.layers(), spec.samples, spec.modes.len());
    let show = match spec.progress {
        true => crate::progress::show(false),
        false => crate::progress::Show::Nothing,
    };
    let bar = Bar::new(total, show == crate::progress::Show::Bar);
    let lines = (show == crate::progress::Show::Lines).then(|| {
        crate::progress::Lines::start(
            &format!("sresim run {}", w.name()),
            crate::progress::Count::Work("MACs"),
            total,
        )
    });
    let both = BarAndLines {
        bar: &bar,
        lines: lines.as_ref(),
        layers: w.layers().len(),
        seen: Default::default(),
    };
    let result = run_inner(spec, &both, func);
    bar.finish();
    drop(lines);
    result
}

/// A run's progress on its bar (a terminal) and in its lines (a log): the lines count
/// MACs (a weight's preparing as [`PREPARE_UNITS_PER_WEIGHT`] and
/// [`MODE_UNITS_PER_WEIGHT`] per mode of them) and name the layer.
struct BarAndLines<'a> {
    bar: &'a Bar,
    lines: Option<&'a crate::progress::Lines>,
    layers: usize,
    seen: std::sync::atomic::AtomicUsize,
}

impl Progress for BarAndLines<'_> {
    fn inc(&self, units: u64) {
        self.bar.inc(units);
        if let Some(l) = self.lines {
            l.inc(units);
        }
    }

    fn layer(&self, name: &str) {
        self.bar.layer(name);
        if let Some(l) = self.lines {
            let k = self.seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            l.note(format!("layer {k}/{} {name}", self.layers));
        }
    }
}

/// [`run`], reporting progress to `progress` (spec.progress is not looked at).
pub fn run_with(spec: &RunSpec, progress: &dyn Progress) -> Result<RunResult> {
    run_inner(spec, progress, None)
}

/// Per-mode figures of layer `name`, keyed by the layer as [`functional::FuncOptions`]
/// holds them.
fn named<T>(name: &str, xs: Vec<(Mode, T)>) -> Vec<(String, Mode, T)> {
    xs.into_iter()
        .map(|(m, x)| (name.to_string(), m, x))
        .collect()
}

/// Whether `f` needs calibration samples of each layer: a calibrated `adc.range`, or drift
/// compensation of a device that is not ideal.
fn calibrates(f: &functional::FuncOptions) -> bool {
    f.adc_range.calibrated() || (f.device.drift_compensation && !f.device.is_ideal())
}

/// `f` calibrated on the first `adc.calibration_samples` input samples of layer `i`: its
/// ADC steps (docs/functional.md, "ADC range"), then, with those steps, its
/// drift-compensation gains (docs/functional.md, "Programming noise, drift and
/// relaxation").
fn calibrated_options(
    f: &functional::FuncOptions,
    w: &dyn Workload,
    i: usize,
    prep: &Prepared,
    spec: &RunSpec,
    cfg: &Resolved,
) -> Result<functional::FuncOptions> {
    let n = (cfg.config.adc.calibration_samples as usize).min(spec.samples);
    let mut input = Vec::new();
    w.stream_inputs(i, cfg.precision(), n, n.max(1), &mut |q| {
        input.extend_from_slice(q);
        Ok(())
    })?;
    let samples = Samples::new(&input, n);
    let name = &w.layers()[i].name;
    let mut o = f.clone();
    if f.adc_range.calibrated() {
        let (hw, sim) = (&cfg.hw, &cfg.opts);
        let steps = functional::calibrate(prep, hw, sim, spec.modes, samples, f.adc_range);
        o.adc_steps = std::sync::Arc::new(named(name, steps));
    }
    if f.device.drift_compensation && !f.device.is_ideal() {
        let (hw, sim) = (&cfg.hw, &cfg.opts);
        let gains = functional::compensation_gains(prep, hw, sim, &o, spec.modes, samples);
        o.gains = std::sync::Arc::new(named(name, gains));
    }
    Ok(o)
}

/// [`run_functional`], reporting progress to `progress` (spec.progress is not looked at).
pub fn run_functional_with(
    spec: &RunSpec,
    progress: &dyn Progress,
    func: Option<&functional::FuncOptions>,
) -> Result<RunResult> {
    run_inner(spec, progress, func)
}

/// Every check of `spec` (and of `func`) made before anything is simulated: the sample
/// count, the memory limits and the functional datapath's limits. [`run_functional`] makes
/// them first; a command that writes an output directory makes them before it opens it
/// (docs/errors.md, "Output directories": inputs, then the lock). Returns, per layer, the
/// column window of a layer loaded a window at a time (None: whole).
pub fn check(spec: &RunSpec, func: Option<&functional::FuncOptions>) -> Result<Vec<Option<u128>>> {
    let w = spec.workload;
    if spec.samples == 0 || spec.samples > w.available_samples() {
        bail!(
            "--samples {}: {} holds {} sample(s)",
            spec.samples,
            w.name(),
            w.available_samples()
        );
    }
    let cfg = spec.cfg;
    let fits = check_limits(spec)?;
    // A layer that runs a window of column blocks at a time is refused, before the first
    // layer is loaded, by what holds a layer whole: --functional and the cycle engine.
    for (l, per) in w.layers().iter().zip(&fits) {
        if per.is_none() {
            continue;
        }
        if func.is_some() {
            bail!(
                "{}: {}: --functional holds a layer whole, and this one runs a window of column blocks at a time (its weights do not fit limits.max_layer_bytes at once): raise limits.max_layer_bytes",
                w.name(),
                l.name
            );
        }
        if spec.engine == EngineKind::Cycle {
            bail!(
                "{}: {}: {}",
                w.name(),
                l.name,
                engine::EngineError::CycleWindow
            );
        }
    }
    if let Some(f) = func {
        let label = &cfg.config.device.error_table;
        functional::check_table(&f.device, &cfg.hw, spec.modes, label)
            .map_err(anyhow::Error::msg)?;
        for l in w.layers() {
            functional::check_layer(l, &cfg.hw)
                .map_err(|e| anyhow::anyhow!("{}: {e}", w.name()))?;
            // The programs, buffers and kept outputs beside what the counts need: the
            // budget `accuracy` applies too.
            let held = workload::chunk_samples(&l.geom, spec.samples as u64);
            let kept = if f.keep_outputs {
                spec.samples as u64
            } else {
                0
            };
            crate::functional::check_layer_memory(l, cfg, spec.modes, held, kept)
                .map_err(|e| anyhow::anyhow!("{}: {e}", w.name()))?;
        }
    }
    Ok(fits)
}

fn run_inner(
    spec: &RunSpec,
    progress: &dyn Progress,
    func: Option<&functional::FuncOptions>,
) -> Result<RunResult> {
    let w = spec.workload;
    let fits = check(spec, func)?;
    let cfg = spec.cfg;
    let mut layers = Vec::new();
    let precision = cfg.precision();
    for (i, spec_l) in w.layers().iter().enumerate() {
        progress.layer(&spec_l.name);
        let lw = LayerWork::of(&spec_l.geom, spec.samples, spec.modes.len());
        if let Some(per) = fits[i] {
            layers.extend(run_windowed(spec, i, per, progress, &lw)?);
            continue;
        }
        let weights = w.load_weights(i, precision)?;
        progress.inc(lw.prepare / 2);
        let prep = Prepared::from_weights(&weights, &cfg.hw, &cfg.opts);
        progress.inc(lw.prepare - lw.prepare / 2);
        let mut runs = spec
            .modes
            .iter()
            .map(|&mode| ModeRun::new(&prep, &cfg.hw, &cfg.opts, mode, spec.engine))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow::anyhow!("{}: {e}", cfg.origin))?;
        // The float layer (float bundles) a functional run compares outputs with.
        let float = match func {
            Some(_) => w.float_layer(i, precision)?,
            None => None,
        };
        let floats = float.is_some();
        // `adc.range = max | percentile:P`: the layer's steps, and with
        // `device.drift_compensation = on` its gains (read with the device at its time),
        // calibrated on its first inputs before any is read.
        let calibrated;
        let func = match func {
            Some(f) if calibrates(f) => {
                calibrated = calibrated_options(f, w, i, &prep, spec, cfg)?;
                Some(&calibrated)
            }
            other => other,
        };
        let flayer =
            func.map(|f| functional::Layer::new(&prep, &cfg.hw, &cfg.opts, f).with_float(float));
        let mut frun = flayer
            .as_ref()
            .map(|l| functional::LayerRun::new(l, spec.modes));
        // The inputs stream a chunk of samples at a time through every mode at once.
        let per_sample = spec_l.geom.input_elements();
        let chunk = workload::chunk_samples(&spec_l.geom, spec.samples as u64) as usize;
        let tick = |n: u64| progress.inc(n.saturating_mul(lw.per_vector));
        let mut feed = |input: &[i32], float_input: &[f64]| {
            let samples = Samples::new(input, input.len() / per_sample.max(1));
            for r in runs.iter_mut() {
                r.feed(samples, Some(&tick))
                    .map_err(|e| anyhow!("{}: {}: {e}", w.name(), spec_l.name))?;
            }
            if let Some(f) = frun.as_mut() {
                f.feed_float(samples, float_input);
            }
            Ok(())
        };
        if floats {
            w.stream_float_inputs(i, precision, spec.samples, chunk, &mut feed)?;
        } else {
            w.stream_inputs(i, precision, spec.samples, chunk, &mut |q| feed(q, &[]))?;
        }
        let mut fouts = frun.map(|f| f.finish()).unwrap_or_default().into_iter();
        let shape = match spec_l.kind {
            // A projection over T tokens: channel-major, as the crossbar computes it.
            LayerKind::Fc if spec_l.geom.vectors_per_sample() > 1 => vec![
                spec.samples,
                spec_l.geom.out_channels,
                spec_l.geom.vectors_per_sample(),
            ],
            LayerKind::Fc => vec![spec.samples, spec_l.geom.out_channels],
            LayerKind::Conv => {
                let [ho, wo] = spec_l.geom.output_hw();
                vec![spec.samples, spec_l.geom.out_channels, ho, wo]
            }
        };
        for (&mode, r) in spec.modes.iter().zip(runs) {
            let (events, stats) = r.finish();
            let mut l = layer_result(cfg, spec_l, mode, events, &prep.plan, weights.signed);
            l.pipeline = stats;
            l.functional = fouts.next().map(|f| crate::functional::FuncResult {
                metrics: f.metrics,
                outputs: f.outputs,
                shape: shape.clone(),
            });
            layers.push(l);
        }
    }
    let totals = spec
        .modes
        .iter()
        .map(|&mode| {
            let mut t = ModeTotal {
                mode,
                events: Events::default(),
                energy: Breakdown::default(),
                time_ns: 0.0,
                pipeline: None,
            };
            for r in layers.iter().filter(|r| r.mode == mode) {
                t.events.add(&r.events);
                t.energy.add(&r.energy);
                if let Some(s) = &r.pipeline {
                    t.pipeline.get_or_insert_with(CycleStats::default).add(s);
                }
            }
            t.time_ns = t.events.cycles as f64 * cfg.cycle_ns;
            t
        })
        .collect();
    let mut res = RunResult {
        network: w.name().to_string(),
        source: w.source().to_string(),
        samples: spec.samples,
        engine: spec.engine,
        modes: spec.modes.to_vec(),
        layers,
        totals,
        chip: None,
        functional: func.is_some(),
        adc_clip: func.is_some() && matches!(cfg.hw.adc_bits, crossbar::AdcBits::Fixed(_)),
        off_crossbar: w.off_crossbar(),
        crossbar_macs: w
            .layers()
            .iter()
            .map(|l| l.geom.macs_per_sample() as u64)
            .fold(0u64, u64::saturating_add),
        digital: None,
    };
    // The digital unit after the layers: the same work in every mode.
    if let Some(g) = w.graph()? {
        res.digital = crate::digital::evaluate(
            &g,
            w.layers().len(),
            spec.samples as u64,
            cfg,
            &w.heads_kept(),
        );
    }
    crate::report::check_finite(&res, cfg)?;
    if let Some(c) = &cfg.chip {
        res.chip = Some(crate::chip::evaluate(
            c,
            &res,
            w.layers(),
            &cfg.hw,
            cfg.cycle_ns,
        )?);
        crate::report::check_chip(&res, cfg)?;
    }
    Ok(res)
}

/// Layer `i` of a run, a window of at most `per` column blocks at a time
/// (`engine::columns`): each window's weights generated, mapped and compressed, every
/// input vector fed to it in every mode, and the windows' events added up to exactly the
/// whole layer's. Progress counts the layer's preparing a share per window and its
/// vectors as a run of the whole layer would.
fn run_windowed(
    spec: &RunSpec,
    i: usize,
    per: u128,
    progress: &dyn Progress,
    lw: &LayerWork,
) -> Result<Vec<LayerResult>> {
    use std::sync::atomic::{AtomicU64, Ordering};
    let (w, cfg) = (spec.workload, spec.cfg);
    let spec_l = &w.layers()[i];
    let precision = cfg.precision();
    let Some(cols) = w.weight_columns(i, precision)? else {
        bail!(
            "{}: {}: its weights do not fit limits.max_layer_bytes and cannot be loaded by columns",
            w.name(),
            spec_l.name
        );
    };
    let signed = cols.signed();
    let map = crossbar::LayerMap::new(&spec_l.geom, &cfg.hw);
    let per = usize::try_from(per).unwrap_or(usize::MAX);
    let windows = engine::columns::windows(&map, per);
    let n = windows.len().max(1) as u64;
    let mut parts: Vec<_> = spec
        .modes
        .iter()
        .map(|&m| engine::columns::Parts::new(m))
        .collect();
    let per_sample = spec_l.geom.input_elements();
    let chunk = workload::chunk_samples(&spec_l.geom, spec.samples as u64) as usize;
    // Vectors fed over every window and mode: each window's are 1/n of the layer's work.
    let seen = AtomicU64::new(0);
    let tick = |k: u64| {
        let before = seen.fetch_add(k, Ordering::Relaxed);
        let units = |v: u64| (v as u128 * lw.per_vector as u128 / n as u128) as u64;
        progress.inc(units(before + k) - units(before));
    };
    for (j, win) in windows.iter().enumerate() {
        let j = j as u64;
        let wmap = map.window(win.group, win.blocks.clone(), &cfg.hw);
        let mut weights = Vec::new();
        if let Some(cw) = wmap.window {
            for r in cw.channels(map.cols_per_group) {
                weights.extend(cols.columns(r));
            }
        }
        let share = |j: u64| (lw.prepare as u128 * j as u128 / n as u128) as u64;
        progress.inc(share(j + 1) - share(j));
        let prep = Prepared::window(spec_l, &weights, signed, wmap, &cfg.hw, &cfg.opts);
        let mut runs = spec
            .modes
            .iter()
            .map(|&mode| ModeRun::part(&prep, &cfg.hw, &cfg.opts, mode, spec.engine))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow!("{}: {}: {e}", w.name(), spec_l.name))?;
        w.stream_inputs(i, precision, spec.samples, chunk, &mut |q| {
            let samples = Samples::new(q, q.len() / per_sample.max(1));
            for r in runs.iter_mut() {
                r.feed(samples, Some(&tick))
                    .map_err(|e| anyhow!("{}: {}: {e}", w.name(), spec_l.name))?;
            }
            Ok(())
        })?;
        for (p, r) in parts.iter_mut().zip(runs) {
            let (ev, busy, _) = r.finish_part();
            p.add(&ev, busy);
        }
    }
    let plan = engine::PassPlan::new(signed, cfg.opts.encoding, &cfg.hw);
    Ok(spec
        .modes
        .iter()
        .zip(parts)
        .map(|(&mode, p)| layer_result(cfg, spec_l, mode, p.finish(), &plan, signed))
        .collect())
}

/// A layer's result in one mode from its events: its time at the clock, its ADC's
/// resolution in that mode and its energy (no pipeline statistics, no functional values:
/// the caller adds those it has).
fn layer_result(
    cfg: &Resolved,
    spec_l: &workload::LayerSpec,
    mode: Mode,
    events: Events,
    plan: &engine::PassPlan,
    signed: bool,
) -> LayerResult {
    let time_ns = events.cycles as f64 * cfg.cycle_ns;
    let adc_bits = cfg.hw.adc_resolution(mode);
    let energy = cfg.energy.breakdown(
        &events,
        adc_bits,
        cfg.adc_law,
        cfg.static_mw_per_crossbar,
        time_ns,
    );
    LayerResult {
        layer: spec_l.name.clone(),
        kind: spec_l.kind,
        mode,
        events,
        energy,
        time_ns,
        adc_bits,
        passes: plan.passes.len() as u32,
        input_cycles: plan.cycles,
        signed,
        pipeline: None,
        functional: None,
    }
}

/// Refuses, before anything is loaded or simulated, a network whose counts could overflow
/// u64 or one of whose layers needs more memory than `limits.max_layer_bytes` (a layer
/// of generated weights: one window of column blocks); returns how each layer runs
/// (`engine::limits::fit`: whole, or in windows of at most that many blocks).
fn check_limits(spec: &RunSpec) -> Result<Vec<Option<u128>>> {
    let by_columns = spec.workload.loads_columns();
    let layers: Vec<engine::limits::LayerRef> = spec
        .workload
        .layers()
        .iter()
        .map(|l| engine::limits::LayerRef {
            name: &l.name,
            geom: &l.geom,
            held_samples: workload::chunk_samples(&l.geom, spec.samples as u64),
            by_columns,
        })
        .collect();
    engine::limits::check_network(
        &layers,
        spec.samples as u64,
        &spec.cfg.hw,
        &spec.cfg.opts,
        spec.modes,
        spec.cfg.config.limits.max_layer_bytes,
        rayon::current_num_threads(),
    )
    .map_err(|e| anyhow::anyhow!("{}: {e}", spec.workload.name()))
}

/// A progress bar on stderr that appears only for runs longer than a moment and only
/// when stderr is a terminal (without one, [`crate::progress::Lines`] say the progress).
struct Bar {
    pb: Option<ProgressBar>,
    start: Instant,
    shown: std::sync::atomic::AtomicBool,
}

impl Bar {
    fn new(total: u64, enabled: bool) -> Self {
        let pb = enabled.then(|| {
            let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
            // A constant template: an invariant, not user data.
            #[allow(clippy::expect_used)]
            pb.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:40} {percent:>3}% {msg} (eta {eta})",
                )
                .expect("valid template"),
            );
            pb
        });
        Bar {
            pb,
            start: Instant::now(),
            shown: false.into(),
        }
    }
}

impl Progress for Bar {
    fn inc(&self, n: u64) {
        use std::sync::atomic::Ordering;
        if let Some(pb) = &self.pb {
            pb.inc(n);
            if self.start.elapsed() > Duration::from_millis(400)
                && !self.shown.swap(true, Ordering::Relaxed)
            {
                pb.set_draw_target(ProgressDrawTarget::stderr());
            }
        }
    }

    fn layer(&self, m: &str) {
        if let Some(pb) = &self.pb {
            pb.set_message(m.to_string());
        }
    }
}

impl Bar {
    fn finish(&self) {
        if let Some(pb) = &self.pb {
            pb.finish_and_clear();
        }
    }
}

/// The modes of a `--modes` list (or a grid's `modes`), each once, in the order given.
pub fn parse_modes(list: &[String]) -> Result<Vec<Mode>> {
    let mut modes = Vec::new();
    for m in list {
        let mode: Mode = m.trim().parse().map_err(|e| anyhow!("--modes: {e}"))?;
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    if modes.is_empty() {
        return Err(anyhow!("--modes: no mode given"));
    }
    Ok(modes)
}

/// Most worker threads (`--threads`) and points in flight (`sweep --jobs`): far more
/// than any machine's cores, few enough that starting them cannot exhaust the system
/// (each thread has its own stack and, for a job, a layer in memory).
pub const MAX_WORKERS: usize = 1024;

/// Checks `--threads` or `--jobs`: at least 1, at most [`MAX_WORKERS`].
pub fn check_workers(flag: &str, n: Option<usize>) -> Result<()> {
    match n {
        Some(0) => Err(anyhow!("{flag}: must be at least 1")),
        Some(n) if n > MAX_WORKERS => Err(anyhow!(
            "{flag}: {n} is more than the limit of {MAX_WORKERS} (this machine has {} cores; results do not depend on it)",
            std::thread::available_parallelism().map_or(1, |c| c.get())
        )),
        _ => Ok(()),
    }
}

/// The worker count when `--threads` is not given: the cores this process may use
/// (`available_parallelism` follows CPU affinity and cgroup quotas), at most
/// [`MAX_WORKERS`]. sresim decides it itself: `RAYON_NUM_THREADS` is not read, since a
/// pool left to rayon's default (`num_threads(0)`) would take any value from it, past
/// the limit (docs/errors.md "Workers").
pub fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |c| c.get())
        .min(MAX_WORKERS)
}

/// The worker pool of `--threads` (checked by [`check_workers`]), else of
/// [`default_workers`]. Every pool sresim builds comes from here or
/// [`init_global_pool`], so none is sized by the environment.
pub fn worker_pool(flag: &str, threads: Option<usize>) -> Result<rayon::ThreadPool> {
    check_workers(flag, threads)?;
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or_else(default_workers))
        .build()
        .map_err(|e| anyhow!("{flag}: {e}"))
}

/// Sizes rayon's global pool (used by work outside a [`worker_pool`]) with
/// [`default_workers`] before anything uses it, so that rayon never sizes it from
/// `RAYON_NUM_THREADS`. Called once, at the start of `main`; a pool already built (a
/// second call) is left as it is.
pub fn init_global_pool() {
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(default_workers())
        .build_global();
}

#[cfg(test)]
mod tests;
