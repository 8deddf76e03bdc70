//! Streaming: a layer's samples fed to a `ModeRun` in any chunking give exactly the
//! numbers of replaying them all at once, for every engine and mode — counts, cycles and
//! the cycle engine's stage counters, finite queues included (the machine runs on from
//! one chunk to the next).
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::arb_case;
use crossbar::Mode;
use engine::{simulate_with_stats, EngineKind, ModeRun, Prepared, Samples};
use pipeline::cycle::QueueDepth;
use proptest::prelude::*;
use workload::LayerWeights;

/// Cuts `samples` into consecutive chunk sizes from `cuts` (each 1.., cycled).
fn chunk_sizes(samples: usize, cuts: &[usize]) -> Vec<usize> {
    let mut out = Vec::new();
    let (mut left, mut i) = (samples, 0);
    while left > 0 {
        let n = cuts[i % cuts.len()].min(left);
        out.push(n);
        left -= n;
        i += 1;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn any_chunking_equals_one_chunk(
        (layer, hw, mut opts) in arb_case(),
        cuts in prop::collection::vec(1usize..=2, 1..4),
        depth in 0usize..4,
    ) {
        let whole = Prepared::new(&layer, &hw, &opts);
        let w = LayerWeights {
            spec: layer.spec.clone(),
            weights: layer.weights.clone(),
            signed: layer.signed,
        };
        let sizes = chunk_sizes(layer.samples, &cuts);
        let per = layer.geom().input_elements();
        for engine in [EngineKind::Fast, EngineKind::Reference, EngineKind::Cycle] {
            if engine == EngineKind::Cycle && depth > 0 {
                // Finite queues deeper than one interval: only the cycle engine models them.
                opts.pipeline.queue_depth = QueueDepth::Finite(depth as u64 + 1);
            }
            for mode in Mode::ALL {
                let Ok(want) = simulate_with_stats(&whole, &hw, &opts, mode, engine, None) else {
                    continue;
                };
                let streamed = Prepared::from_weights(&w, &hw, &opts);
                let mut run = ModeRun::new(&streamed, &hw, &opts, mode, engine).unwrap();
                let mut first = 0;
                for &n in &sizes {
                    run.feed(Samples::new(&layer.input[first * per..(first + n) * per], n), None)
                        .unwrap();
                    first += n;
                }
                prop_assert_eq!(run.finish(), want, "{} {} chunks {:?}", engine, mode, sizes);
            }
        }
    }
}

/// A hand check of the cut itself: 3 samples as [2, 1], [1, 1, 1] and [3].
#[test]
fn chunk_sizes_cover_every_sample_in_order() {
    assert_eq!(chunk_sizes(3, &[2]), vec![2, 1]);
    assert_eq!(chunk_sizes(3, &[1]), vec![1, 1, 1]);
    assert_eq!(chunk_sizes(3, &[5, 1]), vec![3]);
    assert_eq!(chunk_sizes(4, &[1, 2]), vec![1, 2, 1]);
}
