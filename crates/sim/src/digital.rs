//! The digital unit in a run (docs/digital.md, "In a run"): the ops of the workload's
//! graph that no crossbar computes, costed by crate `digital` over the samples replayed and
//! placed after the crossbar layer each follows; with `attention.placement = "crossbar"`
//! the run-time writes of K^T and V. Only a graph with attention, LayerNorm or RMSNorm
//! ([`digital::has_transformer_ops`]) gets figures: every other run's outputs stay as
//! they were.

use crate::config::Resolved;
use digital::{AttentionWrites, Class, Cost, CrossbarGeom, DigitalOp, Placement};

/// Bits of a value written into a crossbar at run time (the unit's 16-bit datapath).
pub const WRITTEN_VALUE_BITS: u32 = 16;

/// The run-time cell writes of some attention products, over the samples replayed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Writes {
    pub cells: u64,
    pub energy_pj: f64,
    pub latency_ns: f64,
}

impl Writes {
    fn add(&mut self, o: &Writes) {
        self.cells = self.cells.saturating_add(o.cells);
        self.energy_pj += o.energy_pj;
        self.latency_ns += o.latency_ns;
    }
}

/// What the unit does after one crossbar layer (the same in every mode), over the samples
/// replayed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LayerDigital {
    /// Graph ops the unit runs.
    pub ops: u64,
    /// Their costs, one after another.
    pub cost: Cost,
    /// Attention products' writes into crossbars (`placement = "crossbar"`; zero
    /// otherwise).
    pub writes: Writes,
}

impl LayerDigital {
    fn add(&mut self, o: &LayerDigital) {
        self.ops = self.ops.saturating_add(o.ops);
        self.cost = self.cost.then(&o.cost);
        self.writes.add(&o.writes);
    }

    /// The unit's time and the writes' latency in crossbar cycles of `cycle_ns`, each
    /// rounded up: what the layer adds to its barrier time.
    pub fn crossbar_cycles(&self, cycle_ns: f64) -> u64 {
        let writes = Cost {
            time_ns: self.writes.latency_ns,
            ..Cost::default()
        };
        self.cost
            .cycles_at(cycle_ns)
            .saturating_add(writes.cycles_at(cycle_ns))
    }

    /// Energy of the unit and of the writes, pJ.
    pub fn energy_pj(&self) -> f64 {
        self.cost.energy.total_pj() + self.writes.energy_pj
    }
}

/// The digital unit's figures of a run.
#[derive(Debug, Clone)]
pub struct DigitalResult {
    pub placement: Placement,
    /// One entry per crossbar layer of the run, in order: the ops after it (ops before
    /// the first layer go to the first).
    pub per_layer: Vec<LayerDigital>,
    /// Sums by class of op, in [`Class`] order (classes with no op left out).
    pub by_class: Vec<(Class, LayerDigital)>,
    /// The per-sample writes of every product with `placement = "crossbar"`.
    pub writes: Option<AttentionWrites>,
    /// The crossbars' `timing.cycle_ns`, which converts the unit's time to their cycles.
    pub cycle_ns: f64,
}

impl DigitalResult {
    /// The sum over layers (what a TOTAL row holds).
    pub fn total(&self) -> LayerDigital {
        let mut t = LayerDigital::default();
        for l in &self.per_layer {
            t.add(l);
        }
        t
    }

    /// The sum of the layers' crossbar cycles (each layer rounded on its own).
    pub fn crossbar_cycles(&self, cycle_ns: f64) -> u64 {
        self.per_layer
            .iter()
            .fold(0u64, |s, l| s.saturating_add(l.crossbar_cycles(cycle_ns)))
    }
}

/// Whether `graph` gets the digital unit's figures in a run: it has an attention product,
/// a LayerNorm or an RMSNorm ([`digital::has_transformer_ops`], judged with the products on
/// the unit whatever the placement).
pub fn applies(graph: &network::Graph) -> bool {
    digital::has_transformer_ops(&digital::enumerate(graph, Placement::Digital))
}

/// The digital unit's figures of `graph` run over `samples` samples in `layers` crossbar
/// layers, or None when the graph has no transformer op (a CNN: its outputs unchanged).
/// `kept` lists the attention blocks whose heads are pruned: their attention products
/// and softmax (the ops placed after one of the block's layers) do the kept heads' share
/// of the work.
pub fn evaluate(
    graph: &network::Graph,
    layers: usize,
    samples: u64,
    cfg: &Resolved,
    kept: &[workload::HeadsKept],
) -> Option<DigitalResult> {
    let d = &cfg.digital;
    let ops: Vec<DigitalOp> = digital::enumerate(graph, d.placement);
    // The gate on the ops with the products on the unit: the same for both placements.
    let gate = match d.placement {
        Placement::Digital => digital::has_transformer_ops(&ops),
        Placement::Crossbar => applies(graph),
    };
    if !gate || layers == 0 {
        return None;
    }
    let slot = |after: Option<usize>| after.unwrap_or(0).min(layers - 1);
    let mut per_layer = vec![LayerDigital::default(); layers];
    let mut classes: Vec<(Class, LayerDigital)> = Vec::new();
    for op in &ops {
        let counts = heads_share(op, kept);
        let one = LayerDigital {
            ops: 1,
            cost: d.unit.cost(&counts.times(samples), &d.table),
            writes: Writes::default(),
        };
        per_layer[slot(op.after_layer)].add(&one);
        match classes.iter_mut().find(|(c, _)| *c == op.class) {
            Some((_, s)) => s.add(&one),
            None => classes.push((op.class, one)),
        }
    }
    classes.sort_by_key(|(c, _)| *c);
    let writes = (d.placement == Placement::Crossbar).then(|| {
        let hw = &cfg.hw;
        let geom = CrossbarGeom::new(hw.xbar_rows, hw.xbar_cols, WRITTEN_VALUE_BITS, hw.cell_bits);
        digital::crossbar_attention(graph, geom, &d.write)
    });
    if let Some(w) = &writes {
        for p in &w.products {
            let n = samples as f64;
            per_layer[slot(p.after_layer)].writes.add(&Writes {
                cells: p.cells_written.saturating_mul(samples),
                energy_pj: p.energy_pj * n,
                latency_ns: p.latency_ns * n,
            });
        }
    }
    Some(DigitalResult {
        placement: d.placement,
        per_layer,
        by_class: classes,
        writes,
        cycle_ns: cfg.cycle_ns,
    })
}

/// An op's per-sample counts, cut to the kept heads' share when it is an attention
/// product or a softmax of a block with pruned heads (a pruned head computes no Q.K^T,
/// softmax or P.V; every such count is a sum of equal per-head parts).
fn heads_share(op: &DigitalOp, kept: &[workload::HeadsKept]) -> digital::OpCounts {
    if !matches!(op.class, Class::Attention | Class::Softmax) {
        return op.counts;
    }
    let block = op
        .after_layer
        .and_then(|i| kept.iter().find(|b| b.layers.contains(&i)));
    match block {
        Some(b) => op.counts.share(b.kept as u64, b.heads as u64),
        None => op.counts,
    }
}

/// The columns the digital unit adds at the end of layers.csv (transformer runs only).
pub const COLUMNS: [&str; 13] = [
    "digital_ops",
    "digital_cycles",
    "digital_time_ns",
    "digital_energy_pj",
    "digital_compute_pj",
    "digital_buffer_pj",
    "digital_kv_pj",
    "attention_write_cells",
    "attention_write_pj",
    "attention_write_ns",
    "combined_cycles",
    "combined_time_ns",
    "combined_energy_pj",
];

/// Whether a column of [`COLUMNS`] holds floats (times and energies).
pub fn is_float(col: &str) -> bool {
    COLUMNS.contains(&col) && (col.ends_with("_ns") || col.ends_with("_pj"))
}

/// The [`COLUMNS`] of a row whose crossbar figures are `cycles` and `energy_pj`, with the
/// unit's work `l` after it, which adds `extra` crossbar cycles (a layer's
/// [`LayerDigital::crossbar_cycles`]; on a TOTAL row their sum,
/// [`DigitalResult::crossbar_cycles`]).
pub fn values(
    l: &LayerDigital,
    cycles: u64,
    energy_pj: f64,
    extra: u64,
    cycle_ns: f64,
) -> Vec<String> {
    let combined = cycles.saturating_add(extra);
    let e = &l.cost.energy;
    vec![
        l.ops.to_string(),
        l.cost.cycles.to_string(),
        format!("{}", l.cost.time_ns),
        format!("{}", e.total_pj()),
        format!("{}", e.compute_pj),
        format!("{}", e.buffer_pj),
        format!("{}", e.kv_pj),
        l.writes.cells.to_string(),
        format!("{}", l.writes.energy_pj),
        format!("{}", l.writes.latency_ns),
        combined.to_string(),
        format!("{}", combined as f64 * cycle_ns),
        format!("{}", energy_pj + l.energy_pj()),
    ]
}

/// A cost as summary.json states it.
fn cost_json(l: &LayerDigital) -> serde_json::Value {
    let e = &l.cost.energy;
    serde_json::json!({
        "ops": l.ops,
        "cycles": l.cost.cycles,
        "compute_cycles": l.cost.compute_cycles,
        "buffer_cycles": l.cost.buffer_cycles,
        "kv_cycles": l.cost.kv_cycles,
        "time_ns": l.cost.time_ns,
        "energy_pj": e.total_pj(),
        "compute_pj": e.compute_pj,
        "buffer_pj": e.buffer_pj,
        "kv_pj": e.kv_pj,
    })
}

/// Adds to a mode's object of summary.json (whose crossbar figures are `cycles` and
/// `energy_pj`) its `digital` and `attention_writes` objects and the combined totals.
pub fn extend_mode_json(
    o: &mut serde_json::Map<String, serde_json::Value>,
    d: &DigitalResult,
    cycles: u64,
    energy_pj: f64,
) {
    use serde_json::{json, Value};
    let t = d.total();
    let mut digital = cost_json(&t);
    if let Some(m) = digital.as_object_mut() {
        m.insert("placement".into(), json!(placement_name(d.placement)));
        m.insert(
            "crossbar_cycles".into(),
            json!(t.cost.cycles_at(d.cycle_ns)),
        );
        let by_class: serde_json::Map<String, Value> = d
            .by_class
            .iter()
            .map(|(c, l)| (c.name().to_string(), cost_json(l)))
            .collect();
        m.insert("by_class".into(), Value::Object(by_class));
    }
    o.insert("digital".into(), digital);
    let writes = match &d.writes {
        None => Value::Null,
        Some(w) => json!({
            "cells_written": t.writes.cells,
            "energy_pj": t.writes.energy_pj,
            "latency_ns": t.writes.latency_ns,
            "crossbars": w.crossbars,
            "cells_written_per_sample": w.cells_written,
            "writes_per_cell_per_sample": w.writes_per_cell,
            "inferences_to_wear_out": w.inferences_to_wear_out,
        }),
    };
    o.insert("attention_writes".into(), writes);
    let combined = cycles.saturating_add(d.crossbar_cycles(d.cycle_ns));
    o.insert("combined_cycles".into(), json!(combined));
    o.insert(
        "combined_time_ns".into(),
        json!(combined as f64 * d.cycle_ns),
    );
    o.insert(
        "combined_energy_pj".into(),
        json!(energy_pj + t.energy_pj()),
    );
}

fn placement_name(p: Placement) -> &'static str {
    match p {
        Placement::Digital => "digital",
        Placement::Crossbar => "crossbar",
    }
}

/// summary.json's `digital_unit`: the unit, its table at `tech.node` and, with
/// `placement = "crossbar"`, the cell-write table.
pub fn unit_json(d: &DigitalResult, cfg: &Resolved) -> serde_json::Value {
    let r = &cfg.digital;
    serde_json::json!({
        "placement": placement_name(d.placement),
        "unit": r.unit,
        "table": r.table,
        "write_table": (d.placement == Placement::Crossbar).then_some(&r.write),
    })
}

/// The lines the run's printed table gains: the unit's work (the same in every mode) and
/// the combined totals of each mode, whose crossbar totals are `totals` (mode, cycles,
/// energy in pJ).
pub fn table(d: &DigitalResult, totals: &[(String, u64, f64)]) -> String {
    use memory::units::{Column, NANOSECONDS, PICOJOULES};
    use std::fmt::Write as _;
    let t = d.total();
    let mut s = String::new();
    let time = Column::fit([t.cost.time_ns], NANOSECONDS, 3);
    let energy = Column::fit([t.cost.energy.total_pj()], PICOJOULES, 3);
    let _ = writeln!(
        s,
        "digital unit (attention {}): {} ops, {} cycles, {}, {} in every mode",
        placement_name(d.placement),
        t.ops,
        t.cost.cycles,
        time.show(t.cost.time_ns),
        energy.show(t.cost.energy.total_pj())
    );
    if d.writes.is_some() {
        let wt = Column::fit([t.writes.latency_ns], NANOSECONDS, 3);
        let we = Column::fit([t.writes.energy_pj], PICOJOULES, 3);
        let _ = writeln!(
            s,
            "attention writes into crossbars: {} cells, {}, {}",
            t.writes.cells,
            wt.show(t.writes.latency_ns),
            we.show(t.writes.energy_pj)
        );
    }
    let extra = d.crossbar_cycles(d.cycle_ns);
    let rows: Vec<(String, u64, f64, f64)> = totals
        .iter()
        .map(|(mode, cycles, energy_pj)| {
            let c = cycles.saturating_add(extra);
            (
                mode.clone(),
                c,
                c as f64 * d.cycle_ns,
                energy_pj + t.energy_pj(),
            )
        })
        .collect();
    let time = Column::fit(rows.iter().map(|r| r.2), NANOSECONDS, 3);
    let energy = Column::fit(rows.iter().map(|r| r.3), PICOJOULES, 3);
    let _ = writeln!(
        s,
        "{:<11}{:>16}{:>13}{:>13}   (crossbars + digital unit)",
        "combined", "cycles", "time", "energy"
    );
    for (m, c, ns, pj) in rows {
        let _ = writeln!(
            s,
            "{m:<11}{c:>16}{:>13}{:>13}",
            time.show(ns),
            energy.show(pj)
        );
    }
    s
}
