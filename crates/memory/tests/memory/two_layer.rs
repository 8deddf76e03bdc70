//! A two-layer network computed by hand: fc1 (4 -> 3) and fc2 (3 -> 2) on a batch of 2,
//! 1 byte per element, SGD, every tensor one tile.
//!
//! Tensors (bytes): x 2*4 = 8, w1 3*4 = 12, y1 2*3 = 6, w2 2*3 = 6, y2 2*2 = 4, and the
//! gradients dy2 4, dy1 6, dw2 6, dw1 12.

use memory::access::{self, Scope};
use memory::buffer::{simulate, Policy};
use memory::builder::GraphBuilder;
use memory::exec::{self, Bound, ComputeSource};
use memory::step::{self, Phase};
use memory::{Capacity, MemoryConfig, Optimizer};

fn config() -> MemoryConfig {
    MemoryConfig {
        peak_macs_per_s: 1.0,
        elementwise_ops_per_s: 1.0,
        bytes_per_element: 1,
        optimizer: Optimizer::Sgd,
        prefetch: false,
        ..MemoryConfig::default()
    }
}

fn two_layer() -> (step::TrainingStep, access::AccessList) {
    let mut b = GraphBuilder::new("two-layer", 2);
    let x = b.input("x", vec![2, 4]);
    let y1 = b.fc("fc1", x, 3, false);
    let y2 = b.fc("fc2", y1, 2, false);
    b.output(y2);
    let g = b.finish();
    let ts = step::build(&g, &config());
    let list = access::build(&ts, config().tile_bytes);
    (ts, list)
}

#[test]
fn training_step_lists_forward_loss_backward_update() {
    let (ts, _) = two_layer();
    let got: Vec<(&str, Phase)> = ts
        .steps
        .iter()
        .map(|s| (s.layer.as_str(), s.phase))
        .collect();
    // fc1 reads the network input, which needs no gradient: no backward-data step for it.
    assert_eq!(
        got,
        [
            ("fc1", Phase::Forward),
            ("fc2", Phase::Forward),
            ("loss", Phase::Loss),
            ("fc2", Phase::BackwardData),
            ("fc2", Phase::BackwardWeight),
            ("fc1", Phase::BackwardWeight),
            ("fc1", Phase::Update),
            ("fc2", Phase::Update),
        ]
    );
    // MACs: fc1 2*4*3 = 24 per pass, fc2 2*3*2 = 12.
    let macs: Vec<f64> = ts.steps.iter().map(|s| s.macs).collect();
    assert_eq!(macs, [24.0, 12.0, 0.0, 12.0, 12.0, 24.0, 0.0, 0.0]);
}

#[test]
fn access_list_is_the_hand_written_one() {
    let (ts, list) = two_layer();
    let name = |t: u32| {
        ts.tensors[list.tiles[t as usize].tensor as usize]
            .name
            .as_str()
    };
    let got: Vec<(String, u64)> = list
        .accesses
        .iter()
        .map(|a| {
            let rw = if a.write { "W" } else { "R" };
            (
                format!("{rw} {}", name(a.tile)),
                list.tiles[a.tile as usize].bytes,
            )
        })
        .collect();
    let want = [
        ("R x", 8),
        ("R fc1.weight", 12),
        ("W fc1", 6),
        ("R fc1", 6),
        ("R fc2.weight", 6),
        ("W fc2", 4),
        ("R fc2", 4), // loss
        ("W fc2.dloss", 4),
        ("R fc2.dloss", 4), // fc2 backward-data: dy1 = dy2 w2
        ("R fc2.weight", 6),
        ("W fc2.dfc1", 6),
        ("R fc1", 6), // fc2 backward-weight: dw2 = y1^T dy2
        ("R fc2.dloss", 4),
        ("W fc2.weight.grad", 6),
        ("R x", 8), // fc1 backward-weight: dw1 = x^T dy1
        ("R fc2.dfc1", 6),
        ("W fc1.weight.grad", 12),
        ("R fc1.weight", 12), // updates: w -= lr * dw
        ("R fc1.weight.grad", 12),
        ("W fc1.weight", 12),
        ("R fc2.weight", 6),
        ("R fc2.weight.grad", 6),
        ("W fc2.weight", 6),
    ];
    let want: Vec<(String, u64)> = want.iter().map(|(s, b)| (s.to_string(), *b)).collect();
    assert_eq!(got, want);
    // 23 accesses: 8+12+6+6+6+4+4+4+4+6+6+6+4+6+8+6+12+12+12+12+6+6+6 = 162 bytes.
    assert_eq!(list.total_bytes(), 162);
    // Compulsory: first reads of x, w1, w2 (8+12+6) + write-backs of the updated w1, w2 (12+6).
    assert_eq!(list.compulsory_bytes(), 44);
}

#[test]
fn limits_and_a_twelve_byte_buffer() {
    let (ts, list) = two_layer();
    assert_eq!(
        simulate(&list, Capacity::INFINITE, Policy::Belady).traffic(),
        44
    );
    assert_eq!(
        simulate(&list, Capacity::bytes(0), Policy::Belady).traffic(),
        162
    );

    // 12-byte buffer, Belady over bytes (access index: next read):
    //  0 R x 8 miss, kept (next @14).  1 R w1 12 miss; only the 4 free bytes keep part of it.
    //  2 W y1 6: evicts those 4 bytes of w1 (@17) and 2 of x (@14).  3 R y1 hit (adjacent).
    //  4 R w2 6 miss: evicts the rest of x (@14, the farthest).
    //  5 W y2 4: evicts 4 bytes of y1 (@11, dirty): write-back 4.  6 R y2 hit (adjacent).
    //  7 W dy2 4: drops dead y2 (its write saved, adjacent).  8 R dy2 hit (adjacent).
    //  9 R w2 hit (forward-backward).  10 W dy1 6: evicts w2 (@20, clean).
    // 11 R y1: 2 bytes hit (forward-backward), 4 missed.  12 R dy2 hit (intra-layer).
    // 13 W dw2 6: drops dead y1 (2 saved, forward-backward) and dy2 (4 saved, intra-layer).
    // 14 R x 8 miss.  15 R dy1 hit (adjacent).  16 W dw1 12: drops dead dy1 (6 saved,
    //    adjacent) and evicts dirty dw2 (@21): write-back 6.
    // 17 R w1 12 miss.  18 R dw1 hit (intra-layer).  19 W w1 12: no room, written through.
    // 20 R w2 6 miss.  21 R dw2 6 miss.  22 W w2 6 written through.  dw1 dies on chip (12
    //    saved, intra-layer).
    let r = simulate(&list, Capacity::bytes(12), Policy::Belady);
    let reads: Vec<u64> = r.steps.iter().map(|s| s.read_bytes).collect();
    let writes: Vec<u64> = r.steps.iter().map(|s| s.write_bytes).collect();
    assert_eq!(reads, [8 + 12, 6, 0, 0, 4, 8, 12, 6 + 6]);
    assert_eq!(writes, [0, 4, 0, 0, 0, 6, 12, 6]);
    assert_eq!(r.traffic(), 90);
    let saved = r.saved_by_scope();
    // intra-layer 4+12 (hits) + 4+12 (writes); adjacent 6+4+4+6 + 4+6; fwd-bwd 6+2 + 2.
    assert_eq!(saved[Scope::IntraLayer.index()], 32);
    assert_eq!(saved[Scope::AdjacentLayer.index()], 30);
    assert_eq!(saved[Scope::ForwardBackward.index()], 10);
    assert_eq!(saved.iter().sum::<u64>(), 162 - 90);

    // Timing at 1 MAC/s, 1 op/s, 1 B/s: fc1 forward computes 24 s and moves 20 B (compute-
    // bound, 24 s); the fc2 update computes 2*6 = 12 ops and moves 18 B (memory-bound, 18 s).
    let compute = exec::compute_times(&ts, &config(), &ComputeSource::Peak);
    let t = exec::time_steps(&list, &r, &compute, Capacity::bytes(12), 1.0, false);
    assert_eq!((t[0].time_s, t[0].bound), (24.0, Bound::Compute));
    assert_eq!(
        (t[7].compute_s, t[7].time_s, t[7].bound),
        (12.0, 18.0, Bound::Memory)
    );
}

#[test]
fn prefetch_hides_the_next_layers_weights_behind_compute() {
    let (ts, list) = two_layer();
    let r = simulate(&list, Capacity::INFINITE, Policy::Belady);
    let compute = exec::compute_times(&ts, &config(), &ComputeSource::Peak);
    // Unbounded buffer: fc1 forward reads x and w1 (20 B) in its 24 s; its 4 s of slack fetch
    // 4 of the 6 bytes of w2, which fc2 forward (12 s of compute) then no longer waits for.
    let off = exec::time_steps(&list, &r, &compute, Capacity::INFINITE, 1.0, false);
    let on = exec::time_steps(&list, &r, &compute, Capacity::INFINITE, 1.0, true);
    assert_eq!(off[1].memory_s, 6.0);
    assert_eq!((on[1].prefetched_bytes, on[1].memory_s), (4, 2.0));
    let pf = list.prefetch_list();
    let names: Vec<&str> = pf[0]
        .iter()
        .map(|&t| {
            ts.tensors[list.tiles[t as usize].tensor as usize]
                .name
                .as_str()
        })
        .collect();
    // During fc1 forward, fc2 forward's weights can be fetched (its input is being produced).
    assert_eq!(names, ["fc2.weight"]);
}
