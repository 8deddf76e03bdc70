//! The interface every workload (zoo network or bundle) offers to the simulator.
//!
//! Layers are loaded one at a time, so that a run holds one layer's weights in memory,
//! never the whole network's; a layer's inputs are streamed a few samples at a time
//! ([`Workload::stream_inputs`]), so that memory does not grow with the samples replayed.

use crate::geometry::LayerSpec;
use crate::layer::{LayerWeights, QuantLayer};
use crate::quant::Precision;

/// Receives the quantized inputs of consecutive whole samples, `[n, C, H, W]` row-major.
pub type SampleSink<'s> = dyn FnMut(&[i32]) -> anyhow::Result<()> + 's;

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

    /// Layer `index`'s quantized weights and the signedness of its whole input tensor
    /// (all held samples, section 2): what a run needs before the first input vector.
    fn load_weights(&self, index: usize, precision: Precision) -> anyhow::Result<LayerWeights>;

    /// Streams the quantized inputs of the first `samples` samples of layer `index` to
    /// `sink`, in sample order, at most `chunk` (>= 1) whole samples per call. Values are
    /// quantized over the whole tensor, exactly as [`Workload::load_layer`] does, so the
    /// chunking never changes a value; memory held is proportional to `chunk`, not to
    /// `samples`. An error of `sink` stops the stream and is returned.
    fn stream_inputs(
        &self,
        index: usize,
        precision: Precision,
        samples: usize,
        chunk: usize,
        sink: &mut SampleSink<'_>,
    ) -> anyhow::Result<()>;

    /// Loads layer `index` with the first `samples` samples held in memory, quantized per
    /// section 2 (tests, summaries and small runs; the run driver streams instead).
    fn load_layer(
        &self,
        index: usize,
        precision: Precision,
        samples: usize,
    ) -> anyhow::Result<QuantLayer> {
        let w = self.load_weights(index, precision)?;
        let mut input = Vec::new();
        self.stream_inputs(index, precision, samples, samples.max(1), &mut |c| {
            input.extend_from_slice(c);
            Ok(())
        })?;
        Ok(QuantLayer {
            spec: w.spec,
            weights: w.weights,
            input,
            samples,
            signed: w.signed,
        })
    }
}
