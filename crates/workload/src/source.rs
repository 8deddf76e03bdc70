//! The interface every workload (zoo network or bundle) offers to the simulator.
//!
//! Layers are loaded one at a time, so that a run holds one layer's weights and inputs
//! in memory, never the whole network's.

use crate::geometry::LayerSpec;
use crate::layer::QuantLayer;
use crate::quant::Precision;

/// A network whose layers can be loaded one by one, quantized to a precision.
pub trait Workload: Send + Sync {
    /// Network name as printed in layers.csv (`network` column).
    fn name(&self) -> &str;
    /// Where the weights and inputs come from (manifest `source`, or the generator recipe).
    fn source(&self) -> &str;
    /// The crossbar-mapped layers (conv, fc), in simulation order.
    fn layers(&self) -> &[LayerSpec];
    /// How many input samples the workload holds (the upper bound of `--samples`).
    fn available_samples(&self) -> usize;
    /// Loads layer `index` with the first `samples` samples, quantized per section 2.
    fn load_layer(
        &self,
        index: usize,
        precision: Precision,
        samples: usize,
    ) -> anyhow::Result<QuantLayer>;
}
