//! The interface every workload (zoo network or bundle) offers to the simulator.
//!
//! Layers are loaded one at a time, so that a run holds one layer's weights in memory,
//! never the whole network's; a layer's inputs are streamed a few samples at a time
//! ([`Workload::stream_inputs`]), so that memory does not grow with the samples replayed.
//! Every source checks the arguments of a load with [`check_load`], and lists the
//! products of two activations its graph holds with [`off_crossbar_ops`].

use anyhow::bail;

use crate::geometry::{ConvGeometry, LayerSpec};
use crate::layer::{LayerWeights, QuantLayer};
use crate::quant::Precision;

/// One attention block of [`Workload::heads_kept`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadsKept {
    /// The block's crossbar layers (its q/k/v or qkv projections and its attn_out), as
    /// indices into [`Workload::layers`].
    pub layers: Vec<usize>,
    /// Query heads that remain.
    pub kept: usize,
    /// Query heads of the block.
    pub heads: usize,
}

/// Input elements held at once when a layer's samples stream: a chunk is as many whole
/// samples as fit in 1 Mi elements (4 MiB quantized), and at least one. Enough vectors
/// for every thread (a 56 x 56 x 64 input fits 5 samples, 15,680 vectors), few enough
/// that memory stops growing with the samples early.
pub const CHUNK_INPUT_ELEMENTS: u64 = 1 << 20;

/// Samples of a layer streamed per chunk when `samples` are replayed: all of them if
/// they fit in [`CHUNK_INPUT_ELEMENTS`], else as many as fit, at least one.
pub fn chunk_samples(geom: &ConvGeometry, samples: u64) -> u64 {
    let per_sample = (geom.input_elements() as u64).max(1);
    (CHUNK_INPUT_ELEMENTS / per_sample).clamp(1, samples.max(1))
}

/// Receives the quantized inputs of consecutive whole samples, `[n, C, H, W]` row-major.
pub type SampleSink<'s> = dyn FnMut(&[i32]) -> anyhow::Result<()> + 's;

/// Receives the quantized inputs of consecutive whole samples and, beside them, the
/// float values they were quantized from (empty when the workload has none).
pub type FloatSampleSink<'s> = dyn FnMut(&[i32], &[f64]) -> anyhow::Result<()> + 's;

/// The float layer a quantized layer stands for (a bundle with float weights and float
/// inputs): the weights as stored, and the float value of one integer step of each side,
/// so that a quantized output Y dequantizes to Y * weight_step * input_step.
#[derive(Debug, Clone, PartialEq)]
pub struct FloatLayer {
    /// [Cout, Cin/G, R, S] row-major.
    pub weights: Vec<f32>,
    /// max|w| / (2^(weight_bits-1) - 1).
    pub weight_step: f64,
    /// max / (2^input_bits - 1) (unsigned inputs) or max|x| / (2^(input_bits-1) - 1).
    pub input_step: f64,
}

/// A layer's quantized weights, loadable a range of output channels at a time (the
/// synthetic generators): what a run reads of a layer too wide to hold at once, one
/// window of column blocks after another (docs/perf.md, "Layers wider than memory").
pub trait ColumnWeights: Send + Sync {
    /// The signedness of the layer's whole input tensor, as [`Workload::load_weights`]
    /// gives it.
    fn signed(&self) -> bool;
    /// Output channels `cols` of the layer, `[cols.len(), Cin/G, R, S]` row-major: exactly
    /// those rows of [`Workload::load_weights`]'s weights.
    fn columns(&self, cols: std::ops::Range<usize>) -> Vec<i32>;
}

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

    /// Observations about the workload that refuse nothing, one line each, for the user
    /// to read as `note: ...` (e.g. bundle layers whose channels do not chain).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The ops of the workload's network that no crossbar computes and `run` does not
    /// count (a transformer's products of two activations), as (node, multiply-accumulates
    /// a sample), in execution order; empty for most workloads.
    fn off_crossbar(&self) -> Vec<(String, u64)> {
        Vec::new()
    }

    /// The workload's whole network as a graph of one sample (batch 1), when it has one:
    /// a built-in network's, or a bundle's `graph`. The run driver enumerates from it the
    /// ops of the digital unit (crate `digital`, docs/digital.md). None for shape files
    /// (which describe crossbar layers only) and layer selections (whose layers are not
    /// the graph's).
    fn graph(&self) -> anyhow::Result<Option<network::Graph>> {
        Ok(None)
    }

    /// The attention blocks whose heads `--head-sparsity` pruned, in network order: a
    /// pruned head computes no Q.K^T, softmax or P.V, so the digital unit's attention work
    /// of such a block is the kept heads' share. Empty when no head is pruned.
    fn heads_kept(&self) -> Vec<HeadsKept> {
        Vec::new()
    }

    /// Layer `index`'s quantized weights and the signedness of its whole input tensor
    /// (all held samples, section 2): what a run needs before the first input vector.
    fn load_weights(&self, index: usize, precision: Precision) -> anyhow::Result<LayerWeights>;

    /// Whether [`Workload::weight_columns`] gives every layer's weights by columns:
    /// known before anything is generated, for the memory check.
    fn loads_columns(&self) -> bool {
        false
    }

    /// Layer `index`'s weights a range of output channels at a time, when the workload
    /// can ([`Workload::loads_columns`]; None otherwise: bundles hold their arrays
    /// whole). Whatever a whole-layer quantity needs (a scale, a pruning threshold) is
    /// computed here, once.
    fn weight_columns(
        &self,
        _index: usize,
        _precision: Precision,
    ) -> anyhow::Result<Option<Box<dyn ColumnWeights + '_>>> {
        Ok(None)
    }

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

    /// Layer `index`'s float layer, when its weights and its inputs are both float
    /// arrays (None otherwise: integer arrays, synthetic inputs, generated networks).
    fn float_layer(
        &self,
        _index: usize,
        _precision: Precision,
    ) -> anyhow::Result<Option<FloatLayer>> {
        Ok(None)
    }

    /// [`Workload::stream_inputs`], with each chunk's float values beside its quantized
    /// ones when [`Workload::float_layer`] has a float layer (empty otherwise).
    fn stream_float_inputs(
        &self,
        index: usize,
        precision: Precision,
        samples: usize,
        chunk: usize,
        sink: &mut FloatSampleSink<'_>,
    ) -> anyhow::Result<()> {
        self.stream_inputs(index, precision, samples, chunk, &mut |q| sink(q, &[]))
    }

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

/// Checks the arguments every `load_layer` receives.
pub(crate) fn check_load(
    w: &dyn Workload,
    index: usize,
    precision: Precision,
    samples: usize,
) -> anyhow::Result<()> {
    if index >= w.layers().len() {
        bail!(
            "{}: layer index {index} out of range (the network has {} layers)",
            w.name(),
            w.layers().len()
        );
    }
    precision.validate().map_err(anyhow::Error::msg)?;
    let avail = w.available_samples();
    if samples == 0 || samples > avail {
        bail!(
            "--samples: {samples} is not in 1..={avail} ({} holds {avail})",
            w.name()
        );
    }
    Ok(())
}

/// The MatMul nodes of a graph (batch 1) that multiply two activations (attention scores
/// and context), with their multiply-accumulates a sample: they have no weights to program,
/// so no crossbar computes them and no cycle, count or energy of `run` includes them; the
/// accuracy path computes them in float.
pub(crate) fn off_crossbar_ops(g: &network::Graph) -> Vec<(String, u64)> {
    g.nodes
        .iter()
        .filter_map(|n| match n.op {
            // Checked to fit 64 bits when the graph was built.
            network::Op::MatMul {
                batch,
                m,
                k,
                n: cols,
            } => Some((
                n.name.clone(),
                [batch, m, k, cols]
                    .iter()
                    .fold(1u64, |a, &d| a.saturating_mul(d as u64)),
            )),
            _ => None,
        })
        .collect()
}

/// The multiply-accumulates a sample of [`Workload::off_crossbar`]'s ops, summed with
/// checked arithmetic: the one place their counts are added. `Err` names the op whose
/// product (or the running total with it) does not fit 64 bits; a workload is refused at
/// open with it (docs/errors.md, "Counts that do not fit"), so a figure written never
/// holds a saturated or wrapped count.
pub fn off_crossbar_total(ops: &[(String, u64)]) -> Result<u64, &str> {
    let mut total = 0u64;
    for (name, m) in ops {
        total = match total.checked_add(*m) {
            Some(t) if *m != u64::MAX => t,
            _ => return Err(name),
        };
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_hold_at_most_1_mi_input_elements_and_at_least_one_sample() {
        // conv1_2 of vgg16: 64 x 224 x 224 = 3,211,264 elements a sample: one per chunk.
        let big = ConvGeometry::conv(64, 64, 3, 1, 1, 1, [224, 224]);
        assert_eq!(chunk_samples(&big, 1000), 1);
        // 64 x 56 x 56 = 200,704: 1,048,576 / 200,704 = 5.2 -> 5 samples.
        let mid = ConvGeometry::conv(64, 64, 3, 1, 1, 1, [56, 56]);
        assert_eq!(chunk_samples(&mid, 1000), 5);
        // fc 1000 -> 10: 1048 samples fit; fewer requested are all held.
        let fc = ConvGeometry::fc(1000, 10);
        assert_eq!(chunk_samples(&fc, 100_000), 1048);
        assert_eq!(chunk_samples(&fc, 7), 7);
        // A sample larger than the budget is still one chunk.
        let huge = ConvGeometry::conv(1024, 8, 1, 1, 0, 1, [128, 128]);
        assert_eq!(chunk_samples(&huge, 3), 1);
    }
}
