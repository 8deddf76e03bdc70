//! `run` of a layer wider than `limits.max_layer_bytes` (docs/perf.md, "Layers wider than
//! memory"): under a cap that forces windows of one column block, every layer's events,
//! energy and the totals equal those of the run that holds each layer whole, in every
//! mode, under every barrier policy and both activation granularities; the memory check
//! refuses a layer only when one window does not fit; the cycle engine and `--functional`
//! refuse a windowed layer with one line.

use crossbar::Mode;
use engine::EngineKind;
use sim::config::Resolved;
use sim::run::{run, RunResult, RunSpec};
use workload::{ConvGeometry, LayerKind, LayerSpec, SynthParams, Workload, ZooWorkload};

const SAMPLES: usize = 3;

fn cfg(sets: &[String]) -> Resolved {
    sim::config::load(None, sets).unwrap()
}

/// The layers of the tests: a grouped conv and an fc.
fn layers() -> Vec<LayerSpec> {
    vec![
        LayerSpec {
            name: "conv".into(),
            kind: LayerKind::Conv,
            geom: ConvGeometry::conv(8, 256, 3, 1, 1, 2, [6, 6]),
        },
        LayerSpec {
            name: "fc".into(),
            kind: LayerKind::Fc,
            geom: ConvGeometry::fc(300, 70),
        },
    ]
}

fn network(layers: Vec<LayerSpec>, structure: workload::Structure) -> ZooWorkload {
    let params = SynthParams {
        structure,
        ..SynthParams::default()
    };
    ZooWorkload::from_layers("w", layers, params)
        .unwrap()
        .with_samples(SAMPLES)
}

fn run_with(w: &dyn Workload, cfg: &Resolved, engine: EngineKind) -> anyhow::Result<RunResult> {
    run(&RunSpec {
        workload: w,
        cfg,
        modes: &Mode::ALL,
        engine,
        samples: SAMPLES,
        progress: false,
    })
}

/// The largest of the one-block needs of `w`'s layers: the cap under which a network of
/// one layer runs in windows of one block (the test checks that it does not fit whole).
fn one_block_cap(w: &dyn Workload, cfg: &Resolved) -> u64 {
    let threads = rayon::current_num_threads();
    w.layers()
        .iter()
        .map(|l| {
            let held = workload::chunk_samples(&l.geom, SAMPLES as u64);
            let need = engine::limits::window_bytes(&l.geom, held, &cfg.hw, threads, 1)
                + engine::limits::window_trace_bytes(
                    &l.geom,
                    SAMPLES as u64,
                    &cfg.hw,
                    &cfg.opts,
                    &Mode::ALL,
                );
            need as u64
        })
        .max()
        .unwrap()
}

#[test]
fn windows_of_one_block_give_the_whole_layers_results() {
    let structures = [
        workload::Structure::Unstructured,
        workload::Structure::NM { n: 2, m: 4 },
    ];
    let mut windowed = 0;
    for (structure, layer) in structures
        .iter()
        .flat_map(|s| layers().into_iter().map(move |l| (*s, l)))
    {
        let w = network(vec![layer], structure);
        for sync in ["bit", "vector", "none"] {
            for granularity in ["value", "bit"] {
                let sets = vec![
                    format!("timing.sync={sync}"),
                    format!("activation.granularity={granularity}"),
                    // Small crossbars: many blocks a layer.
                    "crossbar.cols=16".to_string(),
                    "ou.cols=4".to_string(),
                ];
                let whole_cfg = cfg(&sets);
                let cap = one_block_cap(&w, &whole_cfg);
                let mut capped = sets.clone();
                capped.push(format!("limits.max_layer_bytes={cap}"));
                let windowed_cfg = cfg(&capped);
                // The layer runs in windows of one block under that cap (counted below).
                let threads = rayon::current_num_threads();
                let l = &w.layers()[0];
                let held = workload::chunk_samples(&l.geom, SAMPLES as u64);
                let fit = engine::limits::fit(
                    &l.geom,
                    held,
                    SAMPLES as u64,
                    &windowed_cfg.hw,
                    &windowed_cfg.opts,
                    &Mode::ALL,
                    threads,
                    cap,
                    true,
                );
                match fit {
                    Ok(Some(1)) => windowed += 1,
                    Ok(None) => {}
                    other => panic!("{} {sync} {granularity}: {other:?}", l.name),
                }
                // The reference engine (slow, OU by OU) under one structure and granularity.
                let reference =
                    structure == workload::Structure::Unstructured && granularity == "value";
                let engines: &[EngineKind] = if reference {
                    &[EngineKind::Fast, EngineKind::Reference]
                } else {
                    &[EngineKind::Fast]
                };
                for &engine in engines {
                    let want = run_with(&w, &whole_cfg, engine).unwrap();
                    let got = run_with(&w, &windowed_cfg, engine).unwrap();
                    let what = format!("{structure} {sync} {granularity} {engine}");
                    assert_eq!(got.layers.len(), want.layers.len());
                    for (g, e) in got.layers.iter().zip(&want.layers) {
                        assert_eq!((&g.layer, g.mode), (&e.layer, e.mode));
                        assert_eq!(g.events, e.events, "{what} {} {}", g.layer, g.mode);
                        assert_eq!(format!("{:?}", g.energy), format!("{:?}", e.energy));
                        assert_eq!(
                            (g.passes, g.input_cycles, g.signed, g.adc_bits),
                            (e.passes, e.input_cycles, e.signed, e.adc_bits)
                        );
                    }
                    for (g, e) in got.totals.iter().zip(&want.totals) {
                        assert_eq!(g.events, e.events, "{what} TOTAL");
                    }
                }
            }
        }
    }
    // Both layers, both structures, all six configurations.
    assert_eq!(windowed, 24);
}

#[test]
fn a_window_that_does_not_fit_and_the_cycle_engine_are_refused() {
    let w = network(layers(), workload::Structure::Unstructured);
    let sets = vec!["crossbar.cols=16".to_string(), "ou.cols=4".to_string()];
    let cap = one_block_cap(&w, &cfg(&sets));
    let mut capped = sets.clone();
    capped.push(format!("limits.max_layer_bytes={cap}"));
    let e = run_with(&w, &cfg(&capped), EngineKind::Cycle).unwrap_err();
    assert!(
        e.to_string()
            .contains(": --engine cycle: this layer runs a window of column blocks"),
        "{e}"
    );
    let mut tight = sets;
    tight.push(format!("limits.max_layer_bytes={}", cap / 2));
    let e = run_with(&w, &cfg(&tight), EngineKind::Fast).unwrap_err();
    assert!(e.to_string().contains(": needs about "), "{e}");
    assert!(e.to_string().contains("limits.max_layer_bytes"), "{e}");
}
