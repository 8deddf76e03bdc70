//! The `[chip]` table of a run (docs/chip.md): its resolution into a chip description
//! and area table, the chip figures of a run, and their layers.csv columns and
//! summary.json section. Runs without `[chip]` never reach this module.

use crate::result::RunResult;
use anyhow::{anyhow, Result};
use chip::{Context, LayerMode, LayerShape, ModeChip};
use serde_json::{json, Value};
use workload::LayerSpec;

pub use crate::config::chip::{is_key, resolve, ChipCfg, ResolvedChip};

/// A layer's shape as the chip sees it: rows of its input and output, and the bytes of
/// one image it hands on at the activation width: the next layer's input (after any
/// pooling, which the producing tile does), or its own output for the last layer.
pub fn shape(l: &LayerSpec, next: Option<&LayerSpec>, input_bits: u32) -> LayerShape {
    let g = &l.geom;
    let elements = next.map_or(g.output_elements(), |n| n.geom.input_elements());
    LayerShape {
        name: l.name.clone(),
        out_rows: g.output_hw()[0] as u64,
        in_rows: g.input_hw[0] as u64,
        kernel_rows: g.kernel[0] as u64,
        stride_rows: g.stride[0] as u64,
        pad_rows: g.padding[0] as u64,
        dilation_rows: g.dilation[0] as u64,
        out_bytes: (elements as u64 * input_bits as u64).div_ceil(8),
    }
}

/// The chip figures of every mode of a finished run.
pub fn evaluate(
    c: &ResolvedChip,
    res: &RunResult,
    layers: &[LayerSpec],
    hw: &crossbar::Hardware,
    cycle_ns: f64,
) -> Result<Vec<ModeChip>> {
    let shapes: Vec<LayerShape> = layers
        .iter()
        .enumerate()
        .map(|(i, l)| shape(l, layers.get(i + 1), hw.input_bits))
        .collect();
    // The digital unit after each layer (a transformer's; none for a CNN): the cycles
    // and energy the layer-by-layer account adds (`combined_*`, docs/digital.md).
    let digital_cycles = |i: usize| {
        res.digital.as_ref().map_or(0, |d| {
            d.per_layer
                .get(i)
                .map_or(0, |l| l.crossbar_cycles(d.cycle_ns))
        })
    };
    let digital_pj = res.digital.as_ref().map(|d| d.total().energy_pj());
    let modes: Vec<(String, Vec<LayerMode>, f64)> = res
        .modes
        .iter()
        .map(|&m| {
            let per: Vec<LayerMode> = res
                .layers
                .iter()
                .filter(|r| r.mode == m)
                .enumerate()
                .map(|(i, r)| LayerMode {
                    crossbars: r.events.crossbars,
                    vectors: r.events.vectors,
                    busy_cycles: r.events.busy_cycles,
                    cycles: r.events.cycles,
                    digital_cycles: digital_cycles(i),
                })
                .collect();
            let crossbars = res.total(m).map_or(0.0, |t| t.energy.total());
            let energy = match digital_pj {
                Some(d) => crossbars + d,
                None => crossbars,
            };
            (m.to_string(), per, energy)
        })
        .collect();
    let ctx = Context {
        xbar_rows: hw.xbar_rows,
        xbar_cols: hw.xbar_cols,
        cycle_ns,
        samples: res.samples as u64,
    };
    chip::evaluate(&c.spec, &c.area, &ctx, &shapes, &modes)
        .map_err(|e| anyhow!("{}: {e}", res.network))
}

/// Columns appended to layers.csv when the run has a `[chip]` table.
pub const CHIP_COLUMNS: [&str; 13] = [
    "chip_replicas",
    "chip_crossbars",
    "chip_units",
    "chip_tiles",
    "chip_utilization",
    "chip_segment",
    "chip_busy_cycles",
    "chip_stall_cycles",
    "chip_start_cycle",
    "chip_end_cycle",
    "chip_network_bytes",
    "chip_hops",
    "chip_spill_bytes",
];

/// The chip columns of layer `i` of a mode (`None`: the TOTAL row); empty where the
/// mode does not fit.
pub fn values(m: &ModeChip, i: Option<usize>) -> Vec<String> {
    let (Some(p), Some(t)) = (&m.placement, &m.timing) else {
        return vec![String::new(); CHIP_COLUMNS.len()];
    };
    match i {
        Some(i) => {
            let (l, lt) = (&p.layers[i], &t.layers[i]);
            vec![
                l.replicas.to_string(),
                l.crossbars.to_string(),
                l.units.to_string(),
                l.tiles.to_string(),
                l.utilization(p.crossbars_per_unit)
                    .map_or(String::new(), |u| format!("{u}")),
                l.segment.to_string(),
                lt.busy_cycles.to_string(),
                lt.stall_cycles.to_string(),
                lt.start.to_string(),
                lt.end.to_string(),
                lt.network_bytes.to_string(),
                lt.hops.to_string(),
                lt.spill_bytes.to_string(),
            ]
        }
        None => {
            let sum =
                |f: fn(&chip::LayerPlace) -> u64| p.layers.iter().map(f).sum::<u64>().to_string();
            let tsum =
                |f: fn(&chip::LayerTiming) -> u64| t.layers.iter().map(f).sum::<u64>().to_string();
            vec![
                String::new(),
                sum(|l| l.crossbars),
                sum(|l| l.units),
                p.tiles_used.to_string(),
                format!("{}", p.chip_utilization),
                String::new(),
                tsum(|l| l.busy_cycles),
                tsum(|l| l.stall_cycles),
                "0".into(),
                t.run_cycles.to_string(),
                t.network_bytes.to_string(),
                String::new(),
                t.offchip_bytes.to_string(),
            ]
        }
    }
}

/// Per-mode chip figures a sweep's points table adds on TOTAL rows after
/// [`CHIP_COLUMNS`] (empty on layer rows): those of summary.json's `chip.modes.MODE`
/// that the TOTAL row's [`CHIP_COLUMNS`] do not already hold (`chip_tiles` is
/// `tiles_used`, `chip_utilization` the chip's, `chip_end_cycle` `run_cycles`,
/// `chip_network_bytes` and `chip_spill_bytes` the network and off-chip bytes).
pub const SUMMARY_COLUMNS: [&str; 20] = [
    "chip_fits",
    "chip_note",
    "chip_chips",
    "chip_segments",
    "chip_run_cycles",
    "chip_latency_cycles",
    "chip_latency_ns",
    "chip_cycles_per_image",
    "chip_images_per_s",
    "chip_network_pj",
    "chip_offchip_pj",
    "chip_write_cycles",
    "chip_write_pj",
    "chip_static_pj",
    "chip_energy_pj",
    "chip_area_occupied_mm2",
    "chip_area_chips_mm2",
    "chip_images_per_s_per_mm2",
    "chip_power_w",
    "chip_images_per_s_per_w",
];

/// The [`SUMMARY_COLUMNS`] of a mode (the figures of summary.json, empty where it has
/// null).
pub fn summary_values(m: &ModeChip) -> Vec<String> {
    let f = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    let n = |x: Option<u64>| x.map_or(String::new(), |v| v.to_string());
    let t = m.timing.as_ref();
    let p = m.placement.as_ref();
    vec![
        p.is_some().to_string(),
        m.note.clone().unwrap_or_default(),
        m.chips.to_string(),
        n(p.map(|p| p.segments as u64)),
        n(t.map(|t| t.run_cycles)),
        n(t.map(|t| t.latency_cycles)),
        f(t.map(|t| t.latency_ns)),
        f(t.map(|t| t.cycles_per_image)),
        f(t.map(|t| t.images_per_s)),
        f(t.map(|t| t.network_pj)),
        f(t.map(|t| t.offchip_pj)),
        n(t.map(|t| t.write_cycles)),
        f(t.map(|t| t.write_pj)),
        f(t.map(|t| t.static_pj)),
        f(m.energy_pj),
        f(m.area_occupied_mm2),
        f(Some(m.area_chips_mm2)),
        f(m.images_per_s_per_mm2),
        f(m.power_w),
        f(m.images_per_s_per_w),
    ]
}

/// The type of a chip column of layers.csv or points.csv: `chip_fits` a boolean,
/// `chip_note` text, utilization, energies, times, areas, powers and rates floats,
/// every other a count.
pub fn kind(col: &str) -> columnar::Kind {
    use columnar::Kind;
    match col {
        "chip_fits" => Kind::Bool,
        "chip_note" => Kind::Text,
        "chip_utilization" | "chip_cycles_per_image" | "chip_power_w" => Kind::Float,
        c if c.ends_with("_pj") || c.ends_with("_ns") || c.ends_with("_mm2") => Kind::Float,
        c if c.starts_with("chip_images_per_s") => Kind::Float,
        _ => Kind::Count,
    }
}

/// summary.json's `chip` section.
pub fn json(c: &ResolvedChip, figures: &[ModeChip]) -> Value {
    json!({
        "spec": c.spec,
        "area_table": c.area,
        "crossbars_per_chip": c.spec.crossbars_per_chip(),
        "modes": figures.iter().map(|m| {
            let t = m.timing.as_ref();
            (m.mode.clone(), json!({
                "fits": m.placement.is_some(),
                "note": m.note,
                "chips": m.chips,
                "segments": m.placement.as_ref().map(|p| p.segments),
                "tiles_used": m.placement.as_ref().map(|p| p.tiles_used),
                "chip_utilization": m.placement.as_ref().map(|p| p.chip_utilization),
                "run_cycles": t.map(|t| t.run_cycles),
                "latency_cycles": t.map(|t| t.latency_cycles),
                "latency_ns": t.map(|t| t.latency_ns),
                "cycles_per_image": t.map(|t| t.cycles_per_image),
                "images_per_s": t.map(|t| t.images_per_s),
                "network_bytes": t.map(|t| t.network_bytes),
                "network_pj": t.map(|t| t.network_pj),
                "offchip_bytes": t.map(|t| t.offchip_bytes),
                "offchip_pj": t.map(|t| t.offchip_pj),
                "write_cycles": t.map(|t| t.write_cycles),
                "write_pj": t.map(|t| t.write_pj),
                "static_pj": t.map(|t| t.static_pj),
                "energy_pj": m.energy_pj,
                "area_occupied_mm2": m.area_occupied_mm2,
                "area_chips_mm2": m.area_chips_mm2,
                "images_per_s_per_mm2": m.images_per_s_per_mm2,
                "power_w": m.power_w,
                "images_per_s_per_w": m.images_per_s_per_w,
            }))
        }).collect::<serde_json::Map<String, Value>>(),
    })
}

/// Lines added to the stdout summary.
pub fn table(figures: &[ModeChip]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<11}{:>6}{:>8}{:>14}{:>14}{:>12}{:>12}",
        "chip", "chips", "tiles", "latency", "images/s", "area mm2", "img/s/mm2"
    );
    let latency = memory::units::Column::fit(
        figures
            .iter()
            .filter_map(|m| m.timing.as_ref())
            .map(|t| t.latency_ns),
        memory::units::NANOSECONDS,
        3,
    );
    for m in figures {
        match (&m.placement, &m.timing) {
            (Some(p), Some(t)) => {
                let _ = writeln!(
                    s,
                    "{:<11}{:>6}{:>8}{:>14}{:>14.1}{:>12.1}{:>12.2}",
                    m.mode,
                    m.chips,
                    p.tiles_used,
                    latency.show(t.latency_ns),
                    t.images_per_s,
                    m.area_chips_mm2,
                    m.images_per_s_per_mm2.unwrap_or(0.0)
                );
            }
            _ => {
                let _ = writeln!(s, "{:<11}{}", m.mode, m.note.as_deref().unwrap_or("-"));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use crate::config::{self, Resolved};
    use crate::report;
    use crate::run::{run, RunResult, RunSpec};
    use crossbar::Mode;
    use engine::EngineKind;
    use workload::{SynthParams, ZooWorkload};

    fn lenet5(sets: &[&str]) -> anyhow::Result<(RunResult, Resolved)> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let cfg = config::load(None, &sets)?;
        let w = ZooWorkload::new("lenet5", SynthParams::default())?.with_samples(2);
        let res = run(&RunSpec {
            workload: &w,
            cfg: &cfg,
            modes: &Mode::ALL,
            engine: EngineKind::Fast,
            samples: 2,
            progress: false,
        })?;
        Ok((res, cfg))
    }

    /// PP_sim's LeNet, dense, one image, on the pp_sim preset with free data movement.
    fn pp_sim_lenet(schedule: &str) -> chip::Timing {
        let sets = [
            "chip.preset=pp_sim".to_string(),
            "chip.data_movement=free".to_string(),
            format!("chip.schedule={schedule}"),
        ];
        let cfg = config::load(None, &sets).unwrap();
        let w = ZooWorkload::new("pp_sim-lenet", SynthParams::default()).unwrap();
        let res = run(&RunSpec {
            workload: &w,
            cfg: &cfg,
            modes: &[Mode::Dense],
            engine: EngineKind::Fast,
            samples: 1,
            progress: false,
        })
        .unwrap();
        let figures = res.chip.unwrap();
        figures[0].timing.clone().unwrap()
    }

    /// Every boundary of PP_sim's LeNet is pooled (conv1, conv2) or reads a one-row output
    /// (conv3 and the fc layers): PP_sim's order, the pool barrier, takes exactly as long
    /// as layer by layer with free movement, while rows pipeline conv2 under conv1.
    #[test]
    fn pool_barrier_on_pp_sim_lenet_is_layer_by_layer() {
        let lbl = pp_sim_lenet("layer-by-layer");
        let bar = pp_sim_lenet("pipelined-pool-barrier");
        let pip = pp_sim_lenet("pipelined");
        assert_eq!(bar.run_cycles, lbl.run_cycles);
        assert_eq!(bar.layers[1].start, lbl.layers[0].end);
        assert!(pip.layers[1].start < lbl.layers[0].end / 2);
        assert!(pip.run_cycles < bar.run_cycles);
        assert_eq!(bar.cycles_per_image, pip.cycles_per_image);
    }

    fn csv_rows(bytes: &[u8]) -> Vec<Vec<String>> {
        csv::Reader::from_reader(bytes)
            .records()
            .map(|r| r.unwrap().iter().map(String::from).collect())
            .collect()
    }

    /// Without [chip], nothing of the chip appears; with it, layers.csv gains the chip
    /// columns after all others and every other column keeps its bytes.
    #[test]
    fn chip_columns_are_appended_and_change_nothing_else() {
        let (plain, cfg) = lenet5(&[]).unwrap();
        assert!(plain.chip.is_none() && cfg.chip.is_none());
        let s = report::summary_json(&plain, &cfg);
        assert!(s.get("chip").is_none() && s["config"].get("chip").is_none());
        let plain_csv = report::layers_csv(&plain).unwrap();
        let head = String::from_utf8(plain_csv.clone()).unwrap();
        assert_eq!(head.lines().next().unwrap(), report::header().join(","));

        let (chipped, cfg) = lenet5(&["chip.preset=isaac", "chip.schedule=pipelined"]).unwrap();
        let csv = report::layers_csv(&chipped).unwrap();
        let text = String::from_utf8(csv.clone()).unwrap();
        let mut want = report::header();
        want.extend(super::CHIP_COLUMNS);
        assert_eq!(text.lines().next().unwrap(), want.join(","));
        let (a, b) = (csv_rows(&plain_csv), csv_rows(&csv));
        assert_eq!(a.len(), b.len());
        let n = report::header().len();
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x[..], y[..n]);
            assert_eq!(y.len(), n + super::CHIP_COLUMNS.len());
            assert!(y[n..]
                .iter()
                .all(|v| !v.contains("NaN") && !v.contains("inf")));
        }
        let s = report::summary_json(&chipped, &cfg);
        assert_eq!(s["chip"]["crossbars_per_chip"], 16128);
        assert_eq!(s["config"]["chip"]["preset"], "isaac");
        assert!(s["chip"]["modes"]["sre"]["images_per_s"].as_f64().unwrap() > 0.0);
    }

    /// Unbounded chip, free data movement, one copy, layer by layer: every mode's run
    /// takes exactly today's cycles and energy, and each layer exactly its own cycles.
    #[test]
    fn unbounded_free_layer_by_layer_equals_today() {
        let sets = [
            "chip.preset=isaac",
            "chip.count=auto",
            "chip.data_movement=free",
            "chip.replication=none",
            "chip.schedule=layer-by-layer",
        ];
        let (res, _) = lenet5(&sets).unwrap();
        let figures = res.chip.as_ref().unwrap();
        for (m, f) in res.modes.iter().zip(figures) {
            let t = f.timing.as_ref().unwrap();
            let total = res.total(*m).unwrap();
            assert_eq!(t.run_cycles, total.events.cycles, "{m}");
            assert_eq!(f.energy_pj, Some(total.energy.total()), "{m}");
            let layers: Vec<_> = res.layers.iter().filter(|r| r.mode == *m).collect();
            for (l, lt) in layers.iter().zip(&t.layers) {
                assert_eq!(lt.end - lt.start, l.events.cycles, "{m} {}", l.layer);
            }
        }
    }

    #[test]
    fn bad_chip_keys_are_one_line_errors_naming_the_key() {
        let err = |sets: &[&str]| lenet5(sets).unwrap_err().to_string();
        assert_eq!(
            err(&["chip.preset=isaac", "chip.mesh_x=0"]),
            "default config: chip.mesh_x: 0 (expected a number >= 1)"
        );
        assert!(err(&["chip.colour=1"]).starts_with("--set chip.colour: unknown key"));
        assert!(err(&["chip.preset=nowhere.toml"]).contains("chip.preset: 'nowhere.toml'"));
        assert!(err(&["chip.mesh_x=2"]).contains("chip.preset: missing"));
        let e = config::load_str(
            "[chip]\npreset = \"isaac\"\ncolour = 3\n",
            "c.toml",
            None,
            &[],
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "c.toml: chip.colour: unknown key (see configs/chip/isaac.toml)"
        );
        // One tile of one unit (8 crossbars): no mode of lenet5 fits.
        let e = err(&[
            "chip.preset=isaac",
            "chip.mesh_x=1",
            "chip.mesh_y=1",
            "chip.tiles_per_router=1",
            "chip.units_per_tile=1",
        ]);
        assert!(e.starts_with("lenet5: no mode fits the chip: "), "{e}");
        assert!(
            e.contains("8 available on 1 chip(s) of 8") && !e.contains('\n'),
            "{e}"
        );
    }

    /// 256 crossbars: lenet5's dense mapping (492) does not fit, its compacted one does.
    #[test]
    fn a_mode_that_does_not_fit_gets_a_note_and_empty_figures() {
        let (res, cfg) = lenet5(&[
            "chip.preset=isaac",
            "chip.mesh_x=1",
            "chip.mesh_y=1",
            "chip.tiles_per_router=1",
            "chip.units_per_tile=32",
        ])
        .unwrap();
        let s = report::summary_json(&res, &cfg);
        let dense = &s["chip"]["modes"]["dense"];
        assert_eq!(dense["fits"], false);
        assert!(dense["note"]
            .as_str()
            .unwrap()
            .contains("492 crossbars needed, 256 available"));
        assert!(dense["images_per_s"].is_null());
        assert_eq!(s["chip"]["modes"]["sre"]["fits"], true);
        let rows = csv_rows(&report::layers_csv(&res).unwrap());
        let n = report::header().len();
        for r in &rows {
            assert_eq!(
                r[n..].iter().all(String::is_empty),
                r[3] == "dense" || r[3] == "activation" || r[3] == "ideal",
                "{r:?}"
            );
        }
    }
}
