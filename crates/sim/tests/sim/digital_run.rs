//! The digital unit in `run` (docs/digital.md, "In a run"): a transformer's summary and
//! layers.csv carry the unit's cycles and energy, equal to crate `digital`'s cost of the
//! graph; `attention.placement = "crossbar"` gives cell writes; `tech.node` scales the
//! unit's energy by the CMOS factor; a CNN's outputs gain nothing.

use crossbar::Mode;
use engine::EngineKind;
use sim::config::Resolved;
use sim::run::{run, RunResult, RunSpec};
use workload::Workload;

const VIT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/fmnist-vit");
const MODES: [Mode; 2] = [Mode::Dense, Mode::Sre];
const SAMPLES: usize = 2;

fn cfg(sets: &[&str]) -> Resolved {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    sim::config::load(None, &sets).unwrap()
}

fn open(name: &str, cfg: &Resolved) -> Box<dyn Workload> {
    sim::workloads::open(Some(name), &Default::default(), Some(SAMPLES), cfg).unwrap()
}

fn run_on(w: &dyn Workload, cfg: &Resolved) -> RunResult {
    run(&RunSpec {
        workload: w,
        cfg,
        modes: &MODES,
        engine: EngineKind::Fast,
        samples: SAMPLES,
        progress: false,
    })
    .unwrap()
}

fn csv_rows(bytes: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_reader(bytes);
    let head = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect();
    (head, rows)
}

#[test]
fn a_transformers_digital_figures_are_the_crates_cost_of_its_graph() {
    let c = cfg(&[]);
    let w = open(VIT, &c);
    let res = run_on(w.as_ref(), &c);
    let d = res.digital.as_ref().expect("a ViT has attention");
    // The cost computed here, op by op over the samples, from the graph and the tables.
    let g = w.graph().unwrap().unwrap();
    let table = digital::DigitalTable::horowitz_45nm().at_node(32).unwrap();
    let unit = digital::DigitalUnit::default();
    let ops = digital::enumerate(&g, digital::Placement::Digital);
    let want = ops.iter().fold(digital::Cost::default(), |acc, op| {
        acc.then(&unit.cost(&op.counts.times(SAMPLES as u64), &table))
    });
    let got = d.total();
    assert_eq!(got.ops, ops.len() as u64);
    assert_eq!(got.cost.cycles, want.cycles);
    assert!(want.cycles > 0);
    let rel = |a: f64, b: f64| (a - b).abs() / b.abs().max(1e-300);
    assert!(rel(got.cost.energy.total_pj(), want.energy.total_pj()) < 1e-12);
    // Attention, softmax and norms each cost cycles and energy.
    for class in [
        digital::Class::Attention,
        digital::Class::Softmax,
        digital::Class::Norm,
    ] {
        let (_, l) = d.by_class.iter().find(|(c, _)| *c == class).unwrap();
        assert!(
            l.cost.cycles > 0 && l.cost.energy.total_pj() > 0.0,
            "{class:?}"
        );
    }
    assert!(d.writes.is_none());

    // summary.json: each mode's digital object, the combined totals beside the crossbar's.
    let s = sim::report::summary_json(&res, &c);
    assert_eq!(s["off_crossbar"]["counted"], true);
    assert_eq!(s["digital_unit"]["placement"], "digital");
    for m in MODES {
        let o = &s["modes"][m.as_str()];
        assert_eq!(o["digital"]["cycles"], want.cycles);
        assert!(
            rel(
                o["digital"]["energy_pj"].as_f64().unwrap(),
                want.energy.total_pj()
            ) < 1e-12
        );
        let xbar = o["cycles"].as_u64().unwrap();
        let combined = o["combined_cycles"].as_u64().unwrap();
        assert_eq!(combined, xbar + d.crossbar_cycles(c.cycle_ns));
        assert!(combined > xbar);
        let e = o["energy_pj"].as_f64().unwrap();
        let ce = o["combined_energy_pj"].as_f64().unwrap();
        assert!(rel(ce, e + want.energy.total_pj()) < 1e-12);
        assert_eq!(o["attention_writes"], serde_json::Value::Null);
    }

    // layers.csv: the existing columns first, unchanged; the unit's last; each TOTAL row
    // the sum of its mode's layer rows.
    let (head, rows) = csv_rows(&sim::report::layers_csv(&res).unwrap());
    let n = sim::report::header().len();
    assert_eq!(head[..n], sim::report::header()[..]);
    assert_eq!(head[n..], sim::digital::COLUMNS[..]);
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    for m in MODES {
        let mine: Vec<&Vec<String>> = rows.iter().filter(|r| r[3] == m.as_str()).collect();
        let (total, layers) = mine.split_last().unwrap();
        assert_eq!(total[1], "TOTAL");
        for name in ["digital_ops", "digital_cycles", "combined_cycles"] {
            let sum: u64 = layers
                .iter()
                .map(|r| r[col(name)].parse::<u64>().unwrap())
                .sum();
            assert_eq!(total[col(name)].parse::<u64>().unwrap(), sum, "{name}");
        }
        let sum: f64 = layers
            .iter()
            .map(|r| r[col("digital_energy_pj")].parse::<f64>().unwrap())
            .sum();
        let t: f64 = total[col("digital_energy_pj")].parse().unwrap();
        assert!(rel(t, sum) < 1e-9);
        assert_eq!(total[col("digital_ops")], ops.len().to_string());
    }
}

#[test]
fn crossbar_placement_writes_k_and_v_into_crossbars() {
    let c = cfg(&["attention.placement=crossbar"]);
    let w = open(VIT, &c);
    let res = run_on(w.as_ref(), &c);
    let d = res.digital.as_ref().unwrap();
    let t = d.total();
    let g = w.graph().unwrap().unwrap();
    let geom = digital::CrossbarGeom::new(128, 128, 16, 2);
    let per_sample = digital::crossbar_attention(&g, geom, &digital::CellWrite::pipelayer());
    assert!(per_sample.cells_written > 0);
    assert_eq!(t.writes.cells, per_sample.cells_written * SAMPLES as u64);
    let rel = |a: f64, b: f64| (a - b).abs() / b.abs();
    assert!(rel(t.writes.energy_pj, per_sample.energy_pj * SAMPLES as f64) < 1e-12);
    assert!(t.writes.latency_ns > 0.0);
    // The products left the unit; softmax and norms stayed.
    assert!(d
        .by_class
        .iter()
        .all(|(c, _)| *c != digital::Class::Attention));
    assert!(d
        .by_class
        .iter()
        .any(|(c, _)| *c == digital::Class::Softmax));
    let s = sim::report::summary_json(&res, &c);
    let aw = &s["modes"]["sre"]["attention_writes"];
    assert_eq!(aw["cells_written"], t.writes.cells);
    assert!(aw["energy_pj"].as_f64().unwrap() > 0.0);
    assert_eq!(s["off_crossbar"]["counted"], false);
    assert_eq!(s["config"]["attention"]["placement"], "crossbar");
}

#[test]
fn tech_node_scales_the_units_energy_by_the_cmos_factor() {
    let at = |node: &str| {
        let c = cfg(&[&format!("tech.node={node}")]);
        let w = open(VIT, &c);
        run_on(w.as_ref(), &c).digital.unwrap().total()
    };
    let (a, b) = (at("45"), at("14"));
    let f = energy::tech::between(45, 14).unwrap().cmos_energy;
    assert!(f < 1.0);
    let rel = |x: f64, y: f64| (x - y).abs() / y.abs();
    assert!(rel(b.cost.energy.total_pj(), a.cost.energy.total_pj() * f) < 1e-9);
    assert!(rel(b.cost.energy.kv_pj, a.cost.energy.kv_pj * f) < 1e-9);
    assert_eq!(a.cost.cycles, b.cost.cycles);
}

#[test]
fn a_cnn_gains_no_digital_figure() {
    let c = cfg(&[]);
    let w = open("lenet5", &c);
    assert!(w.graph().unwrap().is_some());
    let res = run_on(w.as_ref(), &c);
    assert!(res.digital.is_none());
    let (head, _) = csv_rows(&sim::report::layers_csv(&res).unwrap());
    assert_eq!(head, sim::report::header());
    let s = sim::report::summary_json(&res, &c);
    assert!(s.get("digital_unit").is_none());
    assert!(s["modes"]["sre"].get("digital").is_none());
    assert!(s["config"].get("digital").is_none() && s["config"].get("attention").is_none());
    assert!(!sim::report::summary_table(&res).contains("digital unit"));
    // An exported CNN classifier ends with a softmax: still a CNN.
    let nsfw = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../workloads/mobilenetv2-nsfwjs"
    );
    let w = sim::workloads::open(Some(nsfw), &Default::default(), Some(1), &c).unwrap();
    let g = w.graph().unwrap().unwrap();
    let ops = digital::enumerate(&g, digital::Placement::Digital);
    assert!(ops.iter().any(|o| o.class == digital::Class::Softmax));
    assert!(!digital::has_transformer_ops(&ops));
    let res = run(&RunSpec {
        workload: w.as_ref(),
        cfg: &c,
        modes: &[Mode::Sre],
        engine: EngineKind::Fast,
        samples: 1,
        progress: false,
    })
    .unwrap();
    assert!(res.digital.is_none());
}

#[test]
fn bad_digital_keys_are_named() {
    let err = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        sim::config::load(None, &sets).unwrap_err().to_string()
    };
    let e = err(&["attention.placement=gpu"]);
    assert!(e.contains("attention.placement: 'gpu'"), "{e}");
    let e = err(&["digital.lanes=0"]);
    assert!(e.contains("digital.lanes"), "{e}");
    let e = err(&["digital.clock_ghz=-1"]);
    assert!(e.contains("digital.clock_ghz"), "{e}");
    let e = err(&["digital.table=energy/none.toml"]);
    assert!(
        e.contains("digital.table") && e.contains("none.toml"),
        "{e}"
    );
    let e = err(&["attention.write_table=energy/none.toml"]);
    assert!(e.contains("attention.write_table"), "{e}");
    // A table that is not a digital table names the file and the key.
    let e = err(&["digital.table=energy/isaac-32nm.toml"]);
    assert!(e.contains("isaac-32nm.toml"), "{e}");
}
