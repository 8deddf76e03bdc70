//! The digital vector unit of the Sparse ReRAM Engine: the operations of a network that
//! cannot live in static crossbar weights, counted and costed (docs/digital.md).
//!
//! It owns:
//! - the unit ([`DigitalUnit`]: lanes, the lane cycles of each primitive, clock, the
//!   bandwidths of its scratch buffer and K/V store) and the cost of an operation on it
//!   ([`Cost`]: cycles = the largest of compute, buffer and K/V cycles; energy by part);
//! - its energy table ([`DigitalTable`], TOML, shipped as configs/energy/digital-45nm.toml
//!   from Horowitz ISSCC 2014 at 45 nm, carried to `tech.node` by `energy::tech`);
//! - the decomposition of every operation kind into primitives and bytes ([`ops`]);
//! - the enumeration of a `network::Graph`'s nodes that no crossbar computes, in execution
//!   order, with their counts per sample and their place after the crossbar layers
//!   ([`enumerate()`]);
//! - `attention.placement = "crossbar"`: K^T and V written into crossbars at run time, the
//!   cells, energy, latency and wear of those writes ([`attention`], priced by a
//!   [`CellWrite`] table, configs/energy/cell-write-pipelayer.toml).
//!
//! It deliberately does not know files, the command line, the run driver or the
//! crossbar engines: it reads no file (tables arrive as text or are compiled in), and
//! returns figures that a driver places between its crossbar layers.
//!
//! ```
//! use digital::{cost_graph, DigitalTable, DigitalUnit, Placement};
//! let g = network::zoo::build("bert", 1, network::zoo::ZooOptions { seq_len: Some(128) })
//!     .expect("bert is in the zoo");
//! let costed = cost_graph(&g, Placement::Digital, &DigitalUnit::default(),
//!     &DigitalTable::horowitz_45nm());
//! let attention_macs: u64 = costed.iter().map(|(op, _)| op.counts.mac16).sum::<u64>();
//! assert!(attention_macs >= 12 * 2 * 128 * 128 * 768); // 2 T^2 d a layer, and the norms
//! ```

pub mod attention;
pub mod enumerate;
pub mod ops;
pub mod table;
pub mod unit;

pub use attention::{crossbar_attention, AttentionWrite, AttentionWrites, CrossbarGeom};
pub use enumerate::{enumerate, has_transformer_ops, Class, DigitalOp, Placement};
pub use ops::{OpCounts, Prim};
pub use table::{CellWrite, DigitalTable, Energy, TableError};
pub use unit::{Cost, DigitalUnit, Occupancy, UnitError};

/// Every op of `graph` the unit runs ([`enumerate()`]) with its cost per sample on `unit`
/// priced by `table`, in execution order.
pub fn cost_graph(
    graph: &network::Graph,
    placement: Placement,
    unit: &DigitalUnit,
    table: &DigitalTable,
) -> Vec<(DigitalOp, Cost)> {
    enumerate(graph, placement)
        .into_iter()
        .map(|op| {
            let c = unit.cost(&op.counts, table);
            (op, c)
        })
        .collect()
}

/// The ops one after another: their costs summed.
pub fn total(costed: &[(DigitalOp, Cost)]) -> Cost {
    costed
        .iter()
        .fold(Cost::default(), |acc, (_, c)| acc.then(c))
}
