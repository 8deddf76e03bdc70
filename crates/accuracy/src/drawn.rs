//! Samples read each on a device draw of its own (`sresim search`): the layers are
//! mapped and compressed once, the float and quantized networks (which no device
//! touches) run in batches, and only the programming of the crossbars and the reads of
//! the modes are done per sample, on that sample's draw.

use crate::{batches, prediction, AccuracyError, Batch, Network, SamplePath, SampleRecord};
use crossbar::{Hardware, Mode};
use engine::{Prepared, SimOptions};
use functional::{FuncOptions, Metrics};
use rayon::prelude::*;
use std::ops::Range;

/// A batch's paths that no device touches: the float network's outputs, the quantized
/// network's path per sample and the datapath figures of its exact products.
type Shared = (Vec<f64>, Vec<SamplePath>, Vec<Vec<Metrics>>);

/// The records of samples `range`, sample i read on a device draw of its own whose
/// functional options are `draw(i)`; a mode reads layer l through the crossbar datapath
/// iff `crossbar[l]`. The float and quantized networks run `batch` samples at a time
/// (clamped to 1 for a graph that is not [`Network::batchable`]). Sample i's record is
/// that of [`crate::evaluate_samples`] over `i..i + 1` on a machine with `draw(i)`'s
/// options: a sample's record depends on neither the batch, nor the range, nor the
/// threads.
pub fn evaluate_drawn<E: From<AccuracyError> + Send>(
    net: &Network,
    (hw, sim): (&Hardware, &SimOptions),
    modes: &[Mode],
    crossbar: &[bool],
    (range, batch): (Range<usize>, usize),
    draw: &(dyn Fn(usize) -> Result<FuncOptions, E> + Sync),
) -> Result<Vec<SampleRecord>, E> {
    for l in &net.layers {
        functional::check_layer(&l.quant.spec, hw).map_err(AccuracyError::from)?;
    }
    let prepared: Vec<Prepared> = net
        .layers
        .iter()
        .map(|l| Prepared::from_weights(&l.quant, hw, sim))
        .collect();
    let on_crossbar = |l: usize| crossbar.get(l).copied().unwrap_or(true);
    let none = |_| {};
    let step = if net.batchable() { batch.max(1) } else { 1 };
    // The paths no device touches, a batch at a time: the quantized path reads no
    // crossbar layer, so it needs no programmed one.
    let shared: Vec<Shared> = batches(range.clone(), step)
        .into_par_iter()
        .map(|r| {
            let ctx = Batch {
                net,
                mapped: &[],
                on_crossbar: &on_crossbar,
                bits: hw.input_bits,
                range: r,
            };
            let float = ctx.float(&[], &none)?;
            let (quantized, exact) = ctx.path(None, &float, &[], &none)?;
            Ok((float, quantized, exact))
        })
        .collect::<Result<_, AccuracyError>>()?;
    let outs = net.output_len().max(1);
    let per_sample: Vec<(&[f64], &SamplePath, &[Metrics])> = shared
        .iter()
        .flat_map(|(float, q, exact)| {
            float
                .chunks(outs)
                .zip(q)
                .zip(exact)
                .map(|((f, q), e)| (f, q, &e[..]))
        })
        .collect();
    range
        .into_par_iter()
        .zip(per_sample)
        .map(|(i, (float, quantized, exact))| {
            let func = FuncOptions {
                keep_outputs: true,
                ..draw(i)?
            };
            let mapped: Vec<functional::Layer> = prepared
                .iter()
                .map(|p| functional::Layer::new(p, hw, sim, &func))
                .collect();
            let ctx = Batch {
                net,
                mapped: &mapped,
                on_crossbar: &on_crossbar,
                bits: hw.input_bits,
                range: i..i + 1,
            };
            let mut paths = vec![quantized.clone()];
            for &m in modes {
                let exact_mode =
                    (0..net.layers.len()).all(|l| !on_crossbar(l) || mapped[l].is_exact(m));
                paths.push(if exact_mode {
                    crate::exact_mode_path(quantized, exact, &on_crossbar)
                } else {
                    let (mut p, _) = ctx.path(Some(m), float, &[], &none)?;
                    p.remove(0)
                });
            }
            Ok(SampleRecord {
                float_prediction: prediction(net, i, float)?,
                float_sq: float.iter().map(|v| v * v).sum::<f64>(),
                paths,
            })
        })
        .collect()
}
