//! Columns of points.csv beyond those of layers.csv, each group present only when the grid
//! asks for it, so that a grid without them writes the points.csv it always did:
//!
//! - `functional = true`: the functional columns of `run --functional`, on layer rows as
//!   layers.csv has them and on TOTAL rows summed over the mode's layers
//!   ([`sim::functional::total_values`]); with a fixed `adc.bits` at some point, then
//!   `adc_clip_frac` (every point, so an auto point says 0);
//! - a `[chip]` in any point (the base config, `[set]`, an axis or an explicit point):
//!   layers.csv's `chip_*` columns, then the per-mode figures of summary.json's
//!   `chip.modes.MODE` on TOTAL rows ([`sim::chip::SUMMARY_COLUMNS`]); empty for points
//!   without a chip;
//! - `accuracy = true`: `accuracy_samples` and the network figures of `sresim accuracy`
//!   ([`sim::accuracy::FIGURES`]) on TOTAL rows, each mode's own;
//! - `draws = K` > 1 (with accuracy): `accuracy_draws` and the mean, std and 95% interval
//!   of top1, agreement and output_rel_rmse over the draws ([`sim::draws::columns`]);
//! - a workload whose network graph has the digital unit's work (a transformer:
//!   [`sim::digital::applies`]): the digital unit's columns of layers.csv
//!   ([`sim::digital::COLUMNS`]), after every other column, as `run` writes them; empty
//!   for the grid's other workloads.

use super::grid::Grid;
use anyhow::{anyhow, bail, Result};
use sim::config::Resolved;
use sim::run::RunResult;

/// Which groups of extra columns a grid's points table has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extras {
    pub functional: bool,
    pub chip: bool,
    pub accuracy: bool,
    /// Intervals over device draws (`draws` > 1).
    pub draws: bool,
    /// `adc_clip_frac` after the functional columns (functional, and a fixed `adc.bits`
    /// at some point).
    pub adc_clip: bool,
    /// The digital unit's columns, last (a workload of the grid is a transformer).
    pub digital: bool,
}

impl Extras {
    /// The extra columns, in order: functional, chip, accuracy, digital unit.
    pub fn columns(&self) -> Vec<String> {
        let mut c: Vec<&str> = Vec::new();
        if self.functional {
            c.extend(sim::functional::COLUMNS);
        }
        if self.functional && self.adc_clip {
            c.push(sim::functional::CLIP_COLUMN);
        }
        if self.chip {
            c.extend(sim::chip::CHIP_COLUMNS);
            c.extend(sim::chip::SUMMARY_COLUMNS);
        }
        if self.accuracy {
            c.push(ACCURACY_SAMPLES);
            c.extend(sim::accuracy::FIGURES);
        }
        let mut c: Vec<String> = c.into_iter().map(String::from).collect();
        if self.draws {
            c.push(ACCURACY_DRAWS.to_string());
            c.extend(sim::draws::columns());
        }
        if self.digital {
            c.extend(sim::digital::COLUMNS.iter().map(|s| s.to_string()));
        }
        c
    }
}

/// The column that says how many graph-input samples the accuracy figures cover.
pub const ACCURACY_SAMPLES: &str = "accuracy_samples";

/// The column that says over how many device draws the intervals are.
pub const ACCURACY_DRAWS: &str = "accuracy_draws";

/// Whether `col` is one of the extra columns (a result, not an axis).
pub fn is_extra_column(col: &str) -> bool {
    Extras {
        functional: true,
        chip: true,
        accuracy: true,
        draws: true,
        adc_clip: true,
        digital: true,
    }
    .columns()
    .iter()
    .any(|c| c == col)
}

/// The accuracy cells of every mode of the grid, in its order.
pub type AccuracyCells = Vec<Vec<String>>;

/// The bundle `name`'s network through every mode of the grid, on the point's config;
/// `progress` gets the units of [`AccuracyShape::work`] as they are done.
pub fn accuracy(
    grid: &Grid,
    name: &str,
    cfg: &Resolved,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<AccuracyCells> {
    let p = grid.path.display().to_string();
    let what = format!("{p}: accuracy: workload");
    let w = sim::accuracy::open_bundle(Some(name), cfg, &what)?;
    let net = sim::accuracy::load_network(&w, cfg).map_err(|e| anyhow!("{p}: accuracy: {e:#}"))?;
    let samples = match grid.accuracy_samples {
        None => net.samples,
        Some(n) if n > net.samples => bail!(
            "{p}: accuracy_samples: {n}: the graph input of {} holds {} samples",
            net.name,
            net.samples
        ),
        Some(n) => n,
    };
    let crossbar =
        sim::accuracy::crossbar_layers(&net, grid.layers.as_ref(), &format!("{p}: layers"))?;
    let draws = sim::accuracy::evaluate_draws(
        &net,
        cfg,
        &grid.modes,
        &crossbar,
        samples,
        grid.draws,
        progress,
    )?;
    let net = sim::accuracy::NetInfo::of(&net);
    let ev = draws.first();
    Ok(ev
        .modes
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let mut v = vec![samples.to_string()];
            v.extend(sim::accuracy::figures(&net, ev, path).map(sim::accuracy::cell));
            if draws.k > 1 {
                v.push(draws.k.to_string());
                v.extend(draws.interval_cells(&net, i + 1));
            }
            v
        })
        .collect())
}

/// What the progress of a point's accuracy columns needs of its bundle's network.
#[derive(Debug, Clone)]
pub struct AccuracyShape {
    geoms: Vec<workload::ConvGeometry>,
    crossbar: Vec<bool>,
    samples: usize,
    available: usize,
}

impl AccuracyShape {
    /// The progress units of [`accuracy`] at a point of config `cfg`
    /// ([`sim::accuracy::work`]).
    pub fn work(&self, grid: &Grid, cfg: &Resolved) -> u64 {
        let geoms: Vec<&workload::ConvGeometry> = self.geoms.iter().collect();
        sim::accuracy::work(
            &geoms,
            &self.crossbar,
            cfg,
            &grid.modes,
            (self.samples, self.available),
            grid.draws,
        )
    }
}

/// Checks, before anything runs, that `name` is a bundle whose network the accuracy path
/// reads, with the samples and layers the grid asks for; returns what its work needs.
pub fn check_accuracy(grid: &Grid, name: &str, cfg: &Resolved) -> Result<AccuracyShape> {
    let p = grid.path.display().to_string();
    let w = sim::accuracy::open_bundle(Some(name), cfg, &format!("{p}: accuracy: workload"))?;
    let net = sim::accuracy::load_network(&w, cfg).map_err(|e| anyhow!("{p}: accuracy: {e:#}"))?;
    if let Some(n) = grid.accuracy_samples.filter(|&n| n > net.samples) {
        bail!(
            "{p}: accuracy_samples: {n}: the graph input of {} holds {} samples",
            net.name,
            net.samples
        );
    }
    let crossbar =
        sim::accuracy::crossbar_layers(&net, grid.layers.as_ref(), &format!("{p}: layers"))?;
    Ok(AccuracyShape {
        geoms: net.layers.iter().map(|l| l.geom().clone()).collect(),
        crossbar,
        samples: grid.accuracy_samples.unwrap_or(net.samples),
        available: net.samples,
    })
}

/// Appends the extra cells to the rows of `res` (layer rows, layer-major then in the
/// run's mode order, then one TOTAL row per mode, as [`sim::report::layers_rows`]).
pub fn extend(
    rows: &mut [Vec<String>],
    res: &RunResult,
    extras: Extras,
    accuracy: Option<&AccuracyCells>,
) {
    let per_mode = res.modes.len().max(1);
    let n_layers = res.layers.len();
    let func_cols = sim::functional::COLUMNS.len() + res.adc_clip as usize;
    for (i, row) in rows.iter_mut().enumerate() {
        let (layer, m) = if i < n_layers {
            (Some(i / per_mode), i % per_mode)
        } else {
            (None, i - n_layers)
        };
        if extras.functional && layer.is_none() {
            // The run wrote empty functional cells on TOTAL rows: the network's instead.
            let at = row.len() - func_cols;
            row.truncate(at);
            row.extend(sim::functional::total_values(res, res.modes[m]));
            if res.adc_clip {
                let total = sim::functional::total_metrics(res, res.modes[m]);
                row.push(sim::functional::clip_value(total.as_ref()));
            }
        }
        if extras.chip {
            match res.chip.as_ref().and_then(|c| c.get(m)) {
                Some(c) => {
                    row.extend(sim::chip::values(c, layer));
                    match layer {
                        None => row.extend(sim::chip::summary_values(c)),
                        Some(_) => {
                            row.extend(vec![String::new(); sim::chip::SUMMARY_COLUMNS.len()])
                        }
                    }
                }
                None => {
                    let n = sim::chip::CHIP_COLUMNS.len() + sim::chip::SUMMARY_COLUMNS.len();
                    row.extend(vec![String::new(); n]);
                }
            }
        }
        if extras.accuracy {
            match (layer, accuracy.and_then(|a| a.get(m))) {
                (None, Some(cells)) => row.extend(cells.iter().cloned()),
                _ => {
                    let draws = match extras.draws {
                        true => 1 + sim::draws::columns().len(),
                        false => 0,
                    };
                    row.extend(vec![
                        String::new();
                        1 + sim::accuracy::FIGURES.len() + draws
                    ])
                }
            }
        }
        if extras.digital {
            match sim::report::digital_values(res, i) {
                Some(d) => row.extend(d),
                None => row.extend(vec![String::new(); sim::digital::COLUMNS.len()]),
            }
        }
    }
}

/// Whether the workload `wl` (as the grid opens it, its layers selected) gets the digital
/// unit's figures in a run: its graph has an attention product, a LayerNorm or an RMSNorm
/// (the gate of [`sim::digital::evaluate`]).
pub fn has_digital(wl: &dyn workload::Workload) -> Result<bool> {
    Ok(match wl.graph()? {
        Some(g) => !wl.layers().is_empty() && sim::digital::applies(&g),
        None => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use columnar::Kind;
    use std::collections::HashMap;

    #[test]
    fn extra_columns_are_typed_in_parquet() {
        let all = Extras {
            functional: true,
            chip: true,
            accuracy: true,
            draws: true,
            adc_clip: true,
            digital: true,
        };
        let meta = crate::store::Meta {
            extra_columns: all.columns(),
            ..crate::synth::meta(16, 2)
        };
        let kinds: HashMap<String, Kind> = meta
            .typed_columns()
            .into_iter()
            .map(|c| (c.name.clone(), c.kind))
            .collect();
        for (c, k) in [
            ("func_rel_rmse", Kind::Float),
            ("chip_replicas", Kind::Count),
            ("chip_utilization", Kind::Float),
            ("chip_fits", Kind::Bool),
            ("chip_note", Kind::Text),
            ("chip_chips", Kind::Count),
            ("chip_run_cycles", Kind::Count),
            ("chip_latency_ns", Kind::Float),
            ("chip_cycles_per_image", Kind::Float),
            ("chip_images_per_s", Kind::Float),
            ("chip_static_pj", Kind::Float),
            ("chip_area_chips_mm2", Kind::Float),
            ("chip_images_per_s_per_mm2", Kind::Float),
            ("chip_power_w", Kind::Float),
            ("chip_images_per_s_per_w", Kind::Float),
            ("accuracy_samples", Kind::Count),
            ("top1", Kind::Float),
            ("agreement", Kind::Float),
            ("output_rel_rmse", Kind::Float),
            ("accuracy_draws", Kind::Count),
            ("adc_clip_frac", Kind::Float),
            ("top1_mean", Kind::Float),
            ("top1_ci_low", Kind::Float),
            ("agreement_std", Kind::Float),
            ("output_rel_rmse_ci_high", Kind::Float),
            ("digital_ops", Kind::Count),
            ("digital_cycles", Kind::Count),
            ("digital_energy_pj", Kind::Float),
            ("attention_write_cells", Kind::Count),
            ("combined_cycles", Kind::Count),
            ("combined_energy_pj", Kind::Float),
        ] {
            assert_eq!(kinds[c], k, "{c}");
        }
        // Every extra column is a result column for compare, and none is an axis name.
        assert!(all.columns().iter().all(|c| is_extra_column(c)));
        assert!(!is_extra_column("ou.rows"));
        assert_eq!(Extras::default().columns(), Vec::<String>::new());
    }
}
