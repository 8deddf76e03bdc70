//! `attention.placement = "crossbar"`: the attention products computed in crossbars, with
//! their right operands (K^T for Q.K^T, V for P.V) written into the crossbars at run time
//! (docs/digital.md, "Attention in crossbars"). What the writes cost: cells written, write
//! energy and latency, and the wear they put on the cells.

use crate::table::CellWrite;
use network::{Graph, Op};
use serde::Serialize;

/// The crossbars K^T and V are written into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CrossbarGeom {
    pub rows: u32,
    pub cols: u32,
    /// Cells one 16-bit value takes, side by side in its row (value bits over bits per
    /// cell, rounded up: 8 at 2 bits a cell).
    pub cells_per_value: u32,
}

impl CrossbarGeom {
    /// `rows` x `cols` crossbars of `cell_bits`-bit cells holding `value_bits`-bit values.
    pub fn new(rows: u32, cols: u32, value_bits: u32, cell_bits: u32) -> CrossbarGeom {
        CrossbarGeom {
            rows,
            cols,
            cells_per_value: value_bits.div_ceil(cell_bits.max(1)),
        }
    }
}

/// The writes of one attention product, per sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttentionWrite {
    /// Index into `graph.nodes`.
    pub node: usize,
    pub name: String,
    /// Index into `graph.crossbar_layers()` of the last crossbar layer before it.
    pub after_layer: Option<usize>,
    /// Products of one sample (heads).
    pub heads: u64,
    /// The product's multiply-accumulates of one sample, now in crossbars.
    pub macs: u64,
    /// Crossbars holding the operand of every head: ceil(k / rows) x ceil(n cells / cols)
    /// each.
    pub crossbars: u64,
    /// Cells written: the values the step adds (every value in an encoder or a prefill,
    /// one token's in a decode step) times the cells of a value.
    pub cells_written: u64,
    /// Rows written one after another in the busiest crossbar (the heads' crossbars are
    /// written in parallel).
    pub serial_row_writes: u64,
    pub energy_pj: f64,
    pub latency_ns: f64,
}

/// The writes of a whole graph, per sample (one inference).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttentionWrites {
    pub products: Vec<AttentionWrite>,
    pub cells_written: u64,
    pub energy_pj: f64,
    /// The products' write latencies one after another (layers depend on each other).
    pub latency_ns: f64,
    /// Crossbars provisioned: every product's operand in crossbars of its own.
    pub crossbars: u64,
    /// Cells written per inference over the cells provisioned (wear spread evenly over
    /// them); 0 with nothing provisioned.
    pub writes_per_cell: f64,
    /// Inferences until the cells reach `endurance_writes`, at `writes_per_cell`; None when
    /// the write table states no endurance or nothing is written.
    pub inferences_to_wear_out: Option<f64>,
}

/// The write cost of every attention product of `graph` placed in crossbars of `geom`,
/// written at `write`'s cost.
pub fn crossbar_attention(graph: &Graph, geom: CrossbarGeom, write: &CellWrite) -> AttentionWrites {
    let producers = graph.producers();
    let samples = graph.batch.max(1) as u64;
    let (rows, cols) = (u64::from(geom.rows.max(1)), u64::from(geom.cols.max(1)));
    let cpv = u64::from(geom.cells_per_value.max(1));
    let mut crossbar_seen = 0usize;
    let mut products = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        if node.crossbar_layer().is_some() {
            crossbar_seen += 1;
            continue;
        }
        let Op::MatMul { batch, m, k, n } = node.op else {
            continue;
        };
        let (m, k, n) = (m as u64, k as u64, n as u64);
        let heads = (batch as u64).div_ceil(samples);
        let context = node
            .inputs
            .first()
            .is_some_and(|&t| crate::enumerate::from_softmax(graph, &producers, t));
        // P.V: V [L, dh], the step's rows appended; Q.K^T: K^T [dh, L], its columns.
        let (values, rows_touched) = if context {
            (m.min(k).saturating_mul(n), m.min(k))
        } else {
            (k.saturating_mul(m.min(n)), k)
        };
        let per_head = k
            .div_ceil(rows)
            .saturating_mul(n.saturating_mul(cpv).div_ceil(cols));
        let cells = heads.saturating_mul(values).saturating_mul(cpv);
        let serial = rows_touched.min(rows);
        products.push(AttentionWrite {
            node: i,
            name: node.name.clone(),
            after_layer: crossbar_seen.checked_sub(1),
            heads,
            macs: heads.saturating_mul(m).saturating_mul(k).saturating_mul(n),
            crossbars: heads.saturating_mul(per_head),
            cells_written: cells,
            serial_row_writes: serial,
            energy_pj: cells as f64 * write.write_pj_per_cell,
            latency_ns: serial as f64 * write.write_ns_per_row,
        });
    }
    let cells_written = products
        .iter()
        .fold(0u64, |s, p| s.saturating_add(p.cells_written));
    let crossbars = products
        .iter()
        .fold(0u64, |s, p| s.saturating_add(p.crossbars));
    let provisioned = crossbars as f64 * (rows * cols) as f64;
    let writes_per_cell = if provisioned > 0.0 {
        cells_written as f64 / provisioned
    } else {
        0.0
    };
    let inferences_to_wear_out = (write.endurance_writes > 0 && writes_per_cell > 0.0)
        .then(|| write.endurance_writes as f64 / writes_per_cell);
    AttentionWrites {
        cells_written,
        energy_pj: products.iter().map(|p| p.energy_pj).sum(),
        latency_ns: products.iter().map(|p| p.latency_ns).sum(),
        crossbars,
        writes_per_cell,
        inferences_to_wear_out,
        products,
    }
}
