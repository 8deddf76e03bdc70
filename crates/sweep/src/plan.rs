//! A grid, checked down to every point before anything runs, and how one point runs.
//!
//! A point is a config (the base file with `--set key=value` for every fixed and axis
//! config key), a workload opened with the point's generator parameters, and one
//! `run::run` over every mode of the grid (with the functional datapath under
//! `functional = true`, and the bundle's network under `accuracy = true`); its rows are
//! the rows of layers.csv prefixed with the point id, the workload and the axis values,
//! followed by the extra columns of [`super::extra`].

use super::extra::Extras;
use super::grid::{near, split_kinds, Grid, Point};
use super::value::AxisValue;
use anyhow::{anyhow, bail, Result};
use sim::config::{self, Resolved};
use sim::workloads::Synth;
use sim::{report, run};
use std::path::{Path, PathBuf};
use workload::Workload;

/// A grid and everything derived from it.
#[derive(Debug)]
pub struct Plan {
    pub grid: Grid,
    /// Every point of the grid, in grid order.
    pub points: Vec<Point>,
    /// The columns of points.csv.
    pub columns: Vec<String>,
    /// Which columns beyond layers.csv's it has ([`super::extra`]).
    pub extras: Extras,
    /// Rows each point writes: (layers + 1 TOTAL) x modes.
    pub rows: Vec<usize>,
    /// Work of each point, in the progress units of [`run::work`]: its cycle runs, and
    /// with accuracy columns its accuracy path ([`sim::accuracy::work`]).
    pub work: Vec<u64>,
    /// Identifies the grid's content (see [`Plan::new`]).
    pub fingerprint: String,
    /// What each workload of the grid is opened as (a bundle path next to the grid, or
    /// the name as written).
    open_as: Vec<String>,
    /// Each bundle file the fingerprint hashed, with the file it was then (device and
    /// inode): a point is kept only while every one is still that file ([`Plan::run_point`]).
    bundle_files: Vec<(PathBuf, workload::files::FileId)>,
}

/// The columns of points.csv for the given axis keys and extra columns.
pub fn columns(axis_keys: &[String], extra: &[String]) -> Vec<String> {
    let mut c = vec!["point".to_string(), "workload".to_string()];
    c.extend(axis_keys.iter().cloned());
    c.extend(report::header().iter().map(|s| s.to_string()));
    c.extend(extra.iter().cloned());
    c
}

impl Plan {
    /// Checks every fixed and axis value on its own, then every point, then opens each
    /// workload once (its layer count fixes the rows of a point). The fingerprint hashes
    /// the effective base config and energy table, the fixed keys, modes, samples, engine,
    /// the axis columns in order, the sorted point ids and the content of every bundle
    /// (so a bundle rebuilt under the same name makes another grid).
    pub fn new(grid: Grid) -> Result<Plan> {
        Plan::new_with(grid, &|_| {})
    }

    /// [`Plan::new`], calling `checked(n)` as each batch of `n` point configs is checked,
    /// [`Plan::checks`] in all (planning loads a config per point: a large grid takes
    /// seconds, and the sweep's bar shows them).
    pub fn new_with(grid: Grid, checked: &dyn Fn(u64)) -> Result<Plan> {
        let p = grid.path.display().to_string();
        let fixed: Vec<(String, &AxisValue)> =
            grid.set.iter().map(|(k, v)| (k.clone(), v)).collect();
        let (base_cfg, base_synth) =
            setup(&grid, &fixed).map_err(|e| anyhow!("{p}: set: {e:#}"))?;
        let keys = grid.axis_keys();
        // A value wrong on its own is named as such, unless it needs another axis (as
        // chip.replication needs chip.preset): then the points that hold it decide.
        let firsts: Vec<(String, &AxisValue)> = grid
            .axes
            .iter()
            .map(|a| (a.key.clone(), &a.values[0]))
            .chain(
                grid.explicit
                    .iter()
                    .flat_map(|(k, rows)| k.iter().cloned().zip(&rows[0])),
            )
            .collect();
        for axis in &grid.axes {
            for v in &axis.values {
                let mut pairs = fixed.clone();
                pairs.push((axis.key.clone(), v));
                if let Err(e) = setup(&grid, &pairs) {
                    let mut with = fixed.clone();
                    with.extend(firsts.iter().filter(|(k, _)| *k != axis.key).cloned());
                    with.push((axis.key.clone(), v));
                    if setup(&grid, &with).is_err() {
                        bail!("{p}: axes.{} = {v}: {e:#}", axis.key);
                    }
                }
            }
        }
        let points = grid.points();
        let mut ids: Vec<&str> = points.iter().map(|x| x.id.as_str()).collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            bail!("{p}: two points share the id {} (a repeated point?)", w[0]);
        }
        let mut extras = Extras {
            functional: grid.functional,
            chip: base_cfg.chip.is_some(),
            accuracy: grid.accuracy,
            draws: grid.accuracy && grid.draws > 1,
            adc_clip: false,
            digital: false,
        };
        // The generator parameters a workload's opening can refuse (a structure a layer
        // cannot take, head pruning of a network without attention blocks), by workload:
        // each distinct one is opened below, before anything is written.
        let open_key = |s: &Synth| {
            (
                s.structure.clone(),
                s.head_sparsity > 0.0,
                s.synthetic_inputs,
            )
        };
        let mut to_open: Vec<(&str, (String, bool, bool), usize)> = Vec::new();
        for (i, pt) in points.iter().enumerate() {
            let (cfg, synth) = setup(&grid, &grid.assignments(pt))
                .map_err(|e| anyhow!("{p}: point {} ({}): {e:#}", pt.id, grid.describe(pt)))?;
            let key = open_key(&synth);
            if key != open_key(&base_synth)
                && !to_open
                    .iter()
                    .any(|(w, k, _)| *w == pt.workload && *k == key)
            {
                to_open.push((pt.workload.as_str(), key, i));
            }
            extras.chip |= cfg.chip.is_some();
            extras.adc_clip |=
                grid.functional && matches!(cfg.hw.adc_bits, crossbar::AdcBits::Fixed(_));
            if grid.functional || grid.accuracy {
                sim::functional::check_device(&cfg, &grid.modes)
                    .map_err(|e| anyhow!("{p}: point {} ({}): {e:#}", pt.id, grid.describe(pt)))?;
            }
            checked(1);
        }
        let dir = grid.path.parent().unwrap_or(Path::new(""));
        let mut open_as = Vec::new();
        let mut layers = Vec::new();
        let mut bundles = String::new();
        let mut bundle_files = Vec::new();
        let mut work = Vec::new();
        let mut shapes = Vec::new();
        for w in &grid.workloads {
            let name = match near(dir, w) {
                Some(path) if w.contains(['/', '\\']) => path.display().to_string(),
                _ => w.clone(),
            };
            let wl = open(&grid, &name, &base_cfg, &base_synth)
                .map_err(|e| anyhow!("{p}: workloads: {e:#}"))?;
            let wl = sim::workloads::select(wl, grid.layers.as_ref(), &format!("{p}: layers"))?;
            for &(_, _, i) in to_open.iter().filter(|(pw, _, _)| *pw == w.as_str()) {
                let pt = &points[i];
                let (cfg, synth) = setup(&grid, &grid.assignments(pt))?;
                open(&grid, &name, &cfg, &synth)
                    .map_err(|e| anyhow!("{p}: point {} ({}): {e:#}", pt.id, grid.describe(pt)))?;
            }
            if let Some(n) = grid.samples {
                if n > wl.available_samples() {
                    bail!(
                        "{p}: samples: {n}: {w} holds {} sample(s)",
                        wl.available_samples()
                    );
                }
            }
            layers.push(wl.layers().len());
            extras.digital |= super::extra::has_digital(wl.as_ref())?;
            if let Some(dir) = workload::resolve::bundle_dir(&name) {
                for f in ["manifest.json", "tensors.npz"] {
                    let path = dir.join(f);
                    bundle_files.push((path.clone(), workload::files::id_at(&path)));
                }
                bundles += &format!("bundle {w}: {}\n", sim::workloads::bundle_hash(&dir)?);
            } else if workload::resolve::shape_file(&name).is_some() {
                // A network by shape is its layers: a changed file is a changed grid.
                bundles += &format!("shape file {w}: {:?}\n", wl.layers());
            }
            if grid.accuracy {
                shapes.push(super::extra::check_accuracy(&grid, &name, &base_cfg)?);
            }
            let samples = grid.samples.unwrap_or(wl.available_samples());
            work.push(run::work(wl.layers(), samples, grid.modes.len()));
            open_as.push(name);
        }
        let modes = grid.modes.len();
        // Every point is made from the grid's own workloads.
        #[allow(clippy::expect_used)]
        let workload_of = |pt: &Point| {
            let i = grid.workloads.iter().position(|w| *w == pt.workload);
            i.expect("a point's workload is in the grid")
        };
        let rows = points
            .iter()
            .map(|pt| (layers[workload_of(pt)] + 1) * modes)
            .collect();
        let mut work: Vec<u64> = points.iter().map(|pt| work[workload_of(pt)]).collect();
        if grid.accuracy {
            // A point's accuracy work depends on its config (which modes read OU by OU, the
            // ADC calibration, the draws computed): each point's is added. Every config
            // was checked above.
            for (pt, w) in points.iter().zip(&mut work) {
                let (cfg, _) = setup(&grid, &grid.assignments(pt))?;
                *w = w.saturating_add(shapes[workload_of(pt)].work(&grid, &cfg));
                checked(1);
            }
        }
        let mut text = format!(
            "sresim sweep grid v1\nbase config:\n{}\nenergy table:\n{}\n",
            toml::to_string(&base_cfg.config)?,
            toml::to_string(&base_cfg.energy)?
        );
        let mut set: Vec<String> = fixed
            .iter()
            .map(|(k, v)| format!("{k}={}", v.canonical()))
            .collect();
        set.sort();
        let modes: Vec<String> = grid.modes.iter().map(|m| m.to_string()).collect();
        text += &format!(
            "set: {}\nmodes: {}\nsamples: {:?}\nengine: {}\ncolumns: {}\npoints: {}\n",
            set.join(" "),
            modes.join(","),
            grid.samples,
            grid.engine,
            keys.join(","),
            ids.join(",")
        );
        text += &bundles;
        if let Some(sel) = &grid.layers {
            // Only when present, so that grids without it keep their fingerprints.
            text += &format!("layers: {}\n", sel.patterns().join(","));
        }
        // Likewise.
        if grid.functional {
            text += "functional: true\n";
        }
        if grid.accuracy {
            text += &format!("accuracy: samples {:?}\n", grid.accuracy_samples);
        }
        // Likewise: grids whose functional runs have no fixed ADC keep theirs.
        if extras.adc_clip {
            text += "adc_clip_frac: true\n";
        }
        // Likewise: one draw is the grid without the key.
        if grid.draws > 1 {
            text += &format!("draws: {}\n", grid.draws);
        }
        Ok(Plan {
            columns: columns(&keys, &extras.columns()),
            extras,
            fingerprint: format!("{:016x}", super::grid::fnv64(&text)),
            bundle_files,
            grid,
            points,
            rows,
            work,
            open_as,
        })
    }

    /// The point configs [`Plan::new_with`] checks for `grid`: one per point, two with
    /// accuracy columns (the accuracy path's work depends on each point's config).
    pub fn checks(grid: &Grid) -> u64 {
        let n = grid.point_count();
        if grid.accuracy {
            n.saturating_mul(2)
        } else {
            n
        }
    }

    /// Runs point `i`: its rows, in the order of layers.csv.
    pub fn run_point(&self, i: usize) -> Result<Vec<Vec<String>>> {
        self.run_point_with(i, &run::NoProgress)
    }

    /// [`Plan::run_point`], reporting progress in the units of [`Plan::work`].
    pub fn run_point_with(
        &self,
        i: usize,
        progress: &dyn run::Progress,
    ) -> Result<Vec<Vec<String>>> {
        let pt = &self.points[i];
        let g = &self.grid;
        let context = || self.context(i);
        let (cfg, synth) = self.config(i)?;
        let name = self.open_name(i)?;
        let result = (|| {
            let res = self.run_cycles(name, &cfg, &synth, progress)?;
            let acc = match g.accuracy {
                true => Some(super::extra::accuracy(g, name, &cfg, &|n| progress.inc(n))?),
                false => None,
            };
            Ok::<_, anyhow::Error>((res, acc))
        })()
        .map_err(|e| anyhow!("{}: {e:#}", context()))?;
        let (result, acc) = result;
        let prefix: Vec<String> = [pt.id.clone(), pt.workload.clone()]
            .into_iter()
            .chain(pt.values.iter().map(AxisValue::csv))
            .collect();
        // The clip column is the grid's: present at every point or at none.
        let mut result = result;
        result.adc_clip = self.extras.adc_clip;
        let mut cells = report::layers_rows(&result);
        super::extra::extend(&mut cells, &result, self.extras, acc.as_ref());
        let rows: Vec<Vec<String>> = cells
            .into_iter()
            .map(|r| prefix.iter().cloned().chain(r).collect())
            .collect();
        if rows.len() != self.rows[i] {
            bail!(
                "{}: produced {} rows, expected {}",
                context(),
                rows.len(),
                self.rows[i]
            );
        }
        // The fingerprint is of the bundles as the sweep began: a point run after one was
        // replaced (exported again) may be of the new one, and is not kept (a sweep gave
        // points of both bundles under the old one's fingerprint).
        for (path, id) in &self.bundle_files {
            if id.is_some() && workload::files::id_at(path) != *id {
                bail!(
                    "{}: {}: replaced since the sweep began (its fingerprint is of the bundle then): the points run after it are not kept; run again once the export is done",
                    context(),
                    path.display()
                );
            }
        }
        Ok(rows)
    }
}

impl Plan {
    /// `GRID: point ID (workload=W key=value ...)`, the prefix of a point's messages.
    pub fn context(&self, i: usize) -> String {
        let (g, pt) = (&self.grid, &self.points[i]);
        format!("{}: point {} ({})", g.path.display(), pt.id, g.describe(pt))
    }

    /// The config and generator parameters of point `i`.
    pub fn config(&self, i: usize) -> Result<(Resolved, Synth)> {
        let g = &self.grid;
        setup(g, &g.assignments(&self.points[i])).map_err(|e| anyhow!("{}: {e:#}", self.context(i)))
    }

    /// What point `i`'s workload is opened as (a bundle path next to the grid, or the
    /// name as written).
    pub fn open_name(&self, i: usize) -> Result<&str> {
        let g = &self.grid;
        let wi = g
            .workloads
            .iter()
            .position(|w| *w == self.points[i].workload);
        let wi = wi.ok_or_else(|| anyhow!("{}: workload not in the grid", self.context(i)))?;
        Ok(&self.open_as[wi])
    }

    /// The cycle run of a point's config (every mode of the grid on the workload's
    /// traces, with the functional datapath under `functional = true`).
    pub fn run_cycles(
        &self,
        name: &str,
        cfg: &Resolved,
        synth: &Synth,
        progress: &dyn run::Progress,
    ) -> Result<run::RunResult> {
        let g = &self.grid;
        let w = open_selected(g, name, cfg, synth)?;
        let samples = g.samples.unwrap_or(w.available_samples());
        let spec = run::RunSpec {
            workload: w.as_ref(),
            cfg,
            modes: &g.modes,
            engine: g.engine,
            samples,
            progress: false,
        };
        let func = g.functional.then(|| sim::functional::options(cfg, false));
        run::run_functional_with(&spec, progress, func.as_ref())
    }
}

/// The content hash of a bundle: 64-bit FNV-1a (as [`super::grid::fnv64`]) over the
/// length and bytes of manifest.json, then of tensors.npz.
fn open(grid: &Grid, name: &str, cfg: &Resolved, synth: &Synth) -> Result<Box<dyn Workload>> {
    sim::workloads::open(Some(name), synth, grid.samples, cfg)
}

/// [`open`], restricted to the grid's `layers`.
fn open_selected(
    grid: &Grid,
    name: &str,
    cfg: &Resolved,
    synth: &Synth,
) -> Result<Box<dyn Workload>> {
    let w = open(grid, name, cfg, synth)?;
    sim::workloads::select(w, grid.layers.as_ref(), "layers")
}

/// The config and generator parameters of a list of assignments.
fn setup(grid: &Grid, pairs: &[(String, &AxisValue)]) -> Result<(Resolved, Synth)> {
    let (cfg_pairs, synth_pairs) = split_kinds(pairs);
    let sets: Vec<String> = cfg_pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", v.toml_text()))
        .collect();
    let cfg = config::load(grid.base.as_deref(), &sets)?;
    let mut synth = default_synth();
    for (k, v) in synth_pairs {
        let number = || {
            v.as_f64()
                .ok_or_else(|| anyhow!("{k}: {v} is not a number"))
        };
        match k.as_str() {
            "synth.weight_sparsity" => synth.weight_sparsity = number()?,
            "synth.act_sparsity" => synth.act_sparsity = number()?,
            "synth.head_sparsity" => synth.head_sparsity = number()?,
            "synth.structure" => match v {
                AxisValue::Str(s) => synth.structure = s.clone(),
                _ => bail!(
                    "{k}: {v} is not a string (unstructured, magnitude, ssl or N:M such as \"2:4\")"
                ),
            },
            "synth.seed" => match v {
                AxisValue::Int(s) if *s >= 0 => synth.seed = *s as u64,
                _ => bail!("{k}: {v} is not a non-negative integer"),
            },
            "synth.synthetic_inputs" => match v {
                AxisValue::Bool(b) => synth.synthetic_inputs = *b,
                _ => bail!("{k}: {v} is not true or false"),
            },
            _ => unreachable!("split_kinds passes generator keys only"),
        }
    }
    sim::workloads::synth_params(&synth)?;
    Ok((cfg, synth))
}

/// The generator parameters of `sresim run` without flags.
fn default_synth() -> Synth {
    Synth::default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A point whose workload refuses its generator parameters (head pruning of a network
    /// without attention blocks) failed only when it ran, after sweep.json and the header
    /// of points.csv were written; the plan now opens each workload with every distinct
    /// such parameter set of its points.
    /// A bundle replaced (exported again) after the sweep began: the points run after it
    /// are refused, not kept (a sweep wrote points of both bundles under the old one's
    /// fingerprint).
    #[cfg(unix)]
    #[test]
    fn a_point_run_after_its_bundle_was_replaced_is_not_kept() {
        let t = tempfile::tempdir().unwrap();
        let b = t.path().join("b");
        std::fs::create_dir(&b).unwrap();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/lenet5-mnist");
        for f in ["manifest.json", "tensors.npz"] {
            std::fs::copy(repo.join(f), b.join(f)).unwrap();
        }
        let text = format!(
            "workloads = [{:?}]\nmodes = [\"dense\"]\nsamples = 1\n[axes]\n\"ou.rows\" = [4, 8]\n",
            b.display().to_string()
        );
        let grid = Grid::parse(&text, &t.path().join("g.toml"), 1000).unwrap();
        let plan = Plan::new(grid).unwrap();
        assert!(plan.run_point(0).is_ok());
        // The same bytes, another file: as an exporter's rename leaves it.
        std::fs::copy(b.join("tensors.npz"), b.join(".t")).unwrap();
        std::fs::rename(b.join(".t"), b.join("tensors.npz")).unwrap();
        let e = format!("{:#}", plan.run_point(1).unwrap_err());
        assert!(
            e.contains("tensors.npz: replaced since the sweep began"),
            "{e}"
        );
    }

    #[test]
    fn a_point_its_workload_refuses_is_refused_by_the_plan() {
        let grid =
            |text: &str| super::super::grid::Grid::parse(text, Path::new("g.toml"), 1000).unwrap();
        let bad = grid("workloads = [\"lenet5\"]\n[axes]\n\"synth.head_sparsity\" = [0, 0.5]\n");
        let e = format!("{:#}", Plan::new(bad).err().unwrap());
        assert!(e.starts_with("g.toml: point "), "{e}");
        assert!(e.contains("synth.head_sparsity=0.5"), "{e}");
        assert!(e.contains("lenet5 has no attention block"), "{e}");
        assert_eq!(e.lines().count(), 1);
        let good =
            grid("workloads = [\"lenet5\"]\n[axes]\n\"synth.weight_sparsity\" = [0.5, 0.9]\n");
        assert!(Plan::new(good).is_ok());
    }

    /// Counts the units a point reports.
    #[derive(Default)]
    struct Units(AtomicU64);

    impl run::Progress for Units {
        fn inc(&self, units: u64) {
            self.0.fetch_add(units, Ordering::Relaxed);
        }
    }

    /// The bar of a sweep with accuracy columns is given, per point, exactly the units the
    /// point then reports: the cycle runs and the accuracy path (samples x paths x draws,
    /// the ADC calibration), whatever the point's device and ADC make of the modes.
    #[test]
    fn a_points_work_is_the_units_it_reports() {
        let grid = Grid::parse(
            "workloads = [\"lenet5-mnist\"]\nmodes = [\"dense\", \"ideal\"]\nsamples = 1\n\
             accuracy = true\naccuracy_samples = 2\ndraws = 2\n\
             [set]\n\"adc.calibration_samples\" = 2\n\
             [axes]\n\"device.read_noise\" = [0.0, 0.1]\n\"adc.range\" = [\"step\", \"percentile:99\"]\n",
            Path::new("g.toml"),
            crate::grid::DEFAULT_MAX_POINTS,
        )
        .unwrap();
        let checks = Plan::checks(&grid);
        let seen = AtomicU64::new(0);
        let plan = Plan::new_with(grid, &|n| {
            seen.fetch_add(n, Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(plan.points.len(), 4);
        // With accuracy columns every point's config is checked twice.
        assert_eq!((checks, seen.into_inner()), (8, 8));
        let cfg = config::load(None, &[]).unwrap();
        let wl =
            sim::workloads::open(Some("lenet5-mnist"), &Synth::default(), Some(1), &cfg).unwrap();
        let cycles = run::work(wl.layers(), 1, 2);
        for i in 0..plan.points.len() {
            let units = Units::default();
            plan.run_point_with(i, &units).unwrap();
            assert_eq!(units.0.into_inner(), plan.work[i], "point {i}");
            // The accuracy path is counted beside the cycle run.
            assert!(plan.work[i] > cycles, "point {i}");
        }
        // Points whose modes read OU by OU (read noise, a calibrated ADC) weigh more than
        // the ideal one, whose modes take the exact fast path.
        let (min, max) = (plan.work.iter().min(), plan.work.iter().max());
        assert!(*max.unwrap() > 10 * *min.unwrap());
    }

    /// Planning reports each point config it checks, as many as [`Plan::checks`] says (the
    /// sweep's planning bar runs to its end), and reporting changes nothing in the plan.
    #[test]
    fn planning_reports_every_point_it_checks() {
        let text = "workloads = [\"pp_sim-lenet\", \"lenet5\"]\nmodes = [\"dense\"]\nsamples = 1\n\
                    [axes]\n\"ou.rows\" = [4, 8, 9]\n\"synth.seed\" = [1, 2]\n\"tech.node\" = [32, 7]\n";
        let grid =
            || Grid::parse(text, Path::new("g.toml"), crate::grid::DEFAULT_MAX_POINTS).unwrap();
        let seen = AtomicU64::new(0);
        let calls = AtomicU64::new(0);
        let plan = Plan::new_with(grid(), &|n| {
            seen.fetch_add(n, Ordering::Relaxed);
            calls.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(plan.points.len(), 24);
        assert_eq!(Plan::checks(&grid()), 24);
        assert_eq!((seen.into_inner(), calls.into_inner()), (24, 24));
        let quiet = Plan::new(grid()).unwrap();
        assert_eq!(plan.fingerprint, quiet.fingerprint);
        assert_eq!((plan.rows, plan.work), (quiet.rows, quiet.work));
    }
}
