//! A GNMT-like translator: 4 encoder and 4 decoder LSTM layers of 1024 units unrolled over
//! `steps` time steps (layer by layer, as cuDNN runs a stack), residual adds from the third
//! layer on, dot-product attention over the encoder outputs after the first decoder layer,
//! and a 32000-word output projection. The first encoder layer is unidirectional here.

use crate::builder::GraphBuilder;
use crate::graph::{Graph, TensorId};

const HIDDEN: usize = 1024;
const VOCAB: usize = 32000;
const LAYERS: usize = 4;

/// Runs one LSTM layer over all steps; `inputs[t]` is x_t. Returns h_t for every step.
fn lstm_layer(b: &mut GraphBuilder, p: &str, inputs: &[TensorId]) -> Vec<TensorId> {
    let input = b.shape(inputs[0])[1];
    b.begin_block(p);
    let w = b.lstm_weights(p, input, HIDDEN);
    let mut state = None;
    let mut hs = Vec::with_capacity(inputs.len());
    for (t, &x) in inputs.iter().enumerate() {
        let (h, c) = b.lstm_cell(&format!("{p}.t{t}"), x, state, w, t);
        state = Some((h, c));
        hs.push(h);
    }
    b.end_block();
    hs
}

fn residual(b: &mut GraphBuilder, p: &str, hs: &[TensorId], xs: &[TensorId]) -> Vec<TensorId> {
    hs.iter()
        .zip(xs)
        .enumerate()
        .map(|(t, (&h, &x))| b.add(&format!("{p}.residual.t{t}"), &[h, x]))
        .collect()
}

fn embed(b: &mut GraphBuilder, p: &str, steps: usize) -> Vec<TensorId> {
    let n = b.batch();
    let table = b.weight(&format!("{p}.weight"), vec![VOCAB, HIDDEN]);
    (0..steps)
        .map(|t| {
            let ids = b.input(&format!("{p}.ids.t{t}"), vec![n]);
            b.embedding(&format!("{p}.t{t}"), ids, table)
        })
        .collect()
}

pub fn gnmt(batch: usize, steps: usize) -> Graph {
    let mut b = GraphBuilder::new("gnmt", batch);
    // Encoder.
    let mut xs = embed(&mut b, "encoder.embedding", steps);
    for l in 0..LAYERS {
        let p = format!("encoder.lstm{l}");
        let hs = lstm_layer(&mut b, &p, &xs);
        xs = if l >= 2 {
            residual(&mut b, &p, &hs, &xs)
        } else {
            hs
        };
    }
    let memory = b.stack("encoder.output", &xs);
    // Decoder.
    let emb = embed(&mut b, "decoder.embedding", steps);
    let h0 = lstm_layer(&mut b, "decoder.lstm0", &emb);
    b.begin_block("decoder.attention");
    let ctx: Vec<TensorId> = h0
        .iter()
        .enumerate()
        .map(|(t, &q)| {
            let p = format!("decoder.attention.t{t}");
            let s = b.matmul(
                &format!("{p}.scores"),
                q,
                memory,
                batch,
                1,
                HIDDEN,
                steps,
                vec![batch, steps],
            );
            let a = b.softmax(&format!("{p}.softmax"), s);
            b.matmul(
                &format!("{p}.context"),
                a,
                memory,
                batch,
                1,
                steps,
                HIDDEN,
                vec![batch, HIDDEN],
            )
        })
        .collect();
    b.end_block();
    let mut xs = h0;
    for l in 1..LAYERS {
        let p = format!("decoder.lstm{l}");
        let ins: Vec<TensorId> = xs
            .iter()
            .zip(&ctx)
            .enumerate()
            .map(|(t, (&x, &c))| b.concat(&format!("{p}.input.t{t}"), &[x, c]))
            .collect();
        let hs = lstm_layer(&mut b, &p, &ins);
        xs = if l >= 2 {
            residual(&mut b, &p, &hs, &xs)
        } else {
            hs
        };
    }
    let top = b.stack("decoder.output", &xs);
    let y = b.fc("classifier", top, VOCAB, true);
    b.output(y);
    b.finish()
}
