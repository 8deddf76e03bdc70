//! The worked example of docs/memory.md ("Worked example: three layers by hand"): fc1, fc2,
//! fc3 (2 -> 2 each, no bias) on a batch of 1, 1 byte per element, SGD, an 8-byte buffer.
//! Every number of the example is pinned here.
//!
//! Tensors (bytes): x 2; the weights fc1.weight, fc2.weight, fc3.weight 4 each; the
//! activations fc1, fc2, fc3 2 each; the gradients fc3.dloss, fc3.dfc2, fc2.dfc1 2 each and
//! fc1/fc2/fc3.weight.grad 4 each. Every tensor is one tile.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memory::access::{self, AccessList, Scope};
use memory::buffer::{simulate, simulate_observed, Policy};
use memory::builder::GraphBuilder;
use memory::export::{access_records, prefetch_records};
use memory::step::{self, TrainingStep};
use memory::trace::{AddressLayout, TracePoint};
use memory::{Capacity, MemoryConfig, Optimizer};

fn config() -> MemoryConfig {
    MemoryConfig {
        bytes_per_element: 1,
        optimizer: Optimizer::Sgd,
        prefetch: false,
        ..MemoryConfig::default()
    }
}

fn three_layer() -> (TrainingStep, AccessList) {
    let mut b = GraphBuilder::new("three-layer", 1);
    let x = b.input("x", vec![1, 2]);
    let y1 = b.fc("fc1", x, 2, false);
    let y2 = b.fc("fc2", y1, 2, false);
    let y3 = b.fc("fc3", y2, 2, false);
    b.output(y3);
    let g = b.finish();
    let ts = step::build(&g, &config());
    let list = access::build(&ts, config().tile_bytes);
    (ts, list)
}

#[test]
fn the_access_list_is_the_documented_one() {
    let (ts, list) = three_layer();
    let got: Vec<String> = access_records(&ts, &list)
        .map(|r| {
            format!(
                "{} {} {} {} {} {} {} {}",
                r.index,
                r.step,
                if r.write { "W" } else { "R" },
                r.tensor,
                r.bytes,
                r.next_read.map_or("-".into(), |n| n.to_string()),
                r.scope_if_hit.map_or("-", |s| s.as_str()),
                match (r.live_in, r.live_out) {
                    (true, true) => "in,out",
                    (true, false) => "in",
                    (false, true) => "out",
                    (false, false) => "-",
                },
            )
        })
        .collect();
    // index step kind tensor bytes next_read scope_if_hit live
    let want = [
        "0 0 R x 2 23 - in",
        "1 0 R fc1.weight 4 26 - in,out",
        "2 0 W fc1 2 3 - -",
        "3 1 R fc1 2 20 adjacent-layer -",
        "4 1 R fc2.weight 4 18 - in,out",
        "5 1 W fc2 2 6 - -",
        "6 2 R fc2 2 14 adjacent-layer -",
        "7 2 R fc3.weight 4 12 - in,out",
        "8 2 W fc3 2 9 - -",
        "9 3 R fc3 2 - adjacent-layer -",
        "10 3 W fc3.dloss 2 11 - -",
        "11 4 R fc3.dloss 2 15 adjacent-layer -",
        "12 4 R fc3.weight 4 32 forward-backward in,out",
        "13 4 W fc3.dfc2 2 17 - -",
        "14 5 R fc2 2 - forward-backward -",
        "15 5 R fc3.dloss 2 - intra-layer -",
        "16 5 W fc3.weight.grad 4 33 - -",
        "17 6 R fc3.dfc2 2 21 adjacent-layer -",
        "18 6 R fc2.weight 4 29 forward-backward in,out",
        "19 6 W fc2.dfc1 2 24 - -",
        "20 7 R fc1 2 - forward-backward -",
        "21 7 R fc3.dfc2 2 - intra-layer -",
        "22 7 W fc2.weight.grad 4 30 - -",
        "23 8 R x 2 - forward-backward in",
        "24 8 R fc2.dfc1 2 - adjacent-layer -",
        "25 8 W fc1.weight.grad 4 27 - -",
        "26 9 R fc1.weight 4 - forward-backward in,out",
        "27 9 R fc1.weight.grad 4 - intra-layer -",
        "28 9 W fc1.weight 4 - - in,out",
        "29 10 R fc2.weight 4 - intra-layer in,out",
        "30 10 R fc2.weight.grad 4 - intra-layer -",
        "31 10 W fc2.weight 4 - - in,out",
        "32 11 R fc3.weight 4 - intra-layer in,out",
        "33 11 R fc3.weight.grad 4 - intra-layer -",
        "34 11 W fc3.weight 4 - - in,out",
    ];
    assert_eq!(got, want);
    // 35 accesses, 104 bytes; compulsory: the first reads of x and the three weights
    // (2 + 3 * 4) and the write-backs of the three updated weights (3 * 4) = 26.
    assert_eq!(list.total_bytes(), 104);
    assert_eq!(list.compulsory_bytes(), 26);
    let steps: Vec<String> = ts
        .steps
        .iter()
        .map(|s| format!("{} {}", s.layer, s.phase.as_str()))
        .collect();
    assert_eq!(
        steps,
        [
            "fc1 forward",
            "fc2 forward",
            "fc3 forward",
            "loss loss",
            "fc3 backward-data",
            "fc3 backward-weight",
            "fc2 backward-data",
            "fc2 backward-weight",
            "fc1 backward-weight",
            "fc1 update",
            "fc2 update",
            "fc3 update",
        ]
    );
}

#[test]
fn belady_with_eight_bytes_moves_sixty() {
    let (ts, list) = three_layer();
    let name = |t: u32| {
        ts.tensors[list.tiles[t as usize].tensor as usize]
            .name
            .as_str()
    };
    let mut transfers = Vec::new();
    let r = simulate_observed(&list, Capacity::bytes(8), Policy::Belady, |t| {
        transfers.push(format!(
            "{} {} {} {}+{}",
            t.step,
            if t.write { "W" } else { "R" },
            name(t.tile),
            t.offset,
            t.bytes
        ))
    });
    // In the order the buffer makes them; the final write-back of fc2.weight comes last.
    let want = [
        "0 R x 0+2",                // 0: miss, kept
        "0 R fc1.weight 0+4",       // 1: miss, kept
        "1 R fc2.weight 0+4",       // 4: miss, evicts fc1.weight (@26)
        "2 R fc3.weight 0+4",       // 7: miss, evicts fc1 (@20, dirty) and 2 B of fc2.weight
        "2 W fc1 0+2",              //    (@18): fc1 written back
        "6 R fc2.weight 0+4",       // 18: miss, evicts fc3.weight.grad (@33, dirty)
        "6 W fc3.weight.grad 0+4",  //    written back
        "7 R fc1 0+2",              // 20: miss, dead: bypasses
        "7 W fc2.weight.grad 2+2",  // 22: 2 B kept, 2 B written through
        "8 R x 0+2",                // 23: miss, dead: bypasses
        "8 W fc2.weight.grad 0+2",  // 25: its 2 kept bytes evicted (@30): written back
        "9 R fc1.weight 0+4",       // 26: miss, dead: bypasses
        "9 W fc1.weight 0+4",       // 28: no room (all resident data dead): written through
        "10 R fc2.weight.grad 0+4", // 30: miss, dead: bypasses
        "11 R fc3.weight 0+4",      // 32: miss, dead: bypasses
        "11 R fc3.weight.grad 0+4", // 33: miss, dead: bypasses
        "11 W fc3.weight 0+4",      // 34: no room: written through
        "10 W fc2.weight 0+4",      // end: fc2.weight (live-out, dirty) written back
    ];
    assert_eq!(transfers, want);
    let reads: Vec<u64> = r.steps.iter().map(|s| s.read_bytes).collect();
    let writes: Vec<u64> = r.steps.iter().map(|s| s.write_bytes).collect();
    assert_eq!(reads, [6, 4, 4, 0, 0, 0, 4, 2, 2, 4, 4, 8]);
    assert_eq!(writes, [0, 0, 2, 0, 0, 0, 4, 2, 2, 4, 4, 4]);
    assert_eq!((r.read_bytes(), r.write_bytes()), (38, 22));
    // Of the 23 reads, 12 hit and 11 miss (writes are neither).
    assert_eq!((r.hits, r.misses), (12, 11));
    // Saved 104 - 60 = 44: intra-layer hits 2+2+4+4 and dead writes 2+2+4; adjacent-layer
    // hits 6 x 2 and dead writes 2+2; forward-backward hits 4+2 and the dead write 2.
    let saved = r.saved_by_scope();
    assert_eq!(saved[Scope::IntraLayer.index()], 20);
    assert_eq!(saved[Scope::AdjacentLayer.index()], 16);
    assert_eq!(saved[Scope::ForwardBackward.index()], 8);
    assert_eq!(saved.iter().sum::<u64>(), 104 - 60);
    // The limits: no buffer moves every byte, an unbounded one the compulsory 26.
    assert_eq!(
        simulate(&list, Capacity::bytes(0), Policy::Belady).traffic(),
        104
    );
    assert_eq!(
        simulate(&list, Capacity::INFINITE, Policy::Belady).traffic(),
        26
    );
}

#[test]
fn prefetch_list_and_trace_of_the_example() {
    let (ts, list) = three_layer();
    let pf: Vec<String> = prefetch_records(&ts, &list)
        .map(|p| format!("{} {}", p.step, p.tensor))
        .collect();
    assert_eq!(
        pf,
        [
            "0 fc2.weight",
            "1 fc3.weight",
            "3 fc3.weight",
            "4 fc2",
            "4 fc3.dloss",
            "5 fc2.weight",
            "5 fc3.dfc2",
            "6 fc1",
            "6 fc3.dfc2",
            "7 x",
            "7 fc2.dfc1",
            "8 fc1.weight",
            "9 fc2.weight",
            "9 fc2.weight.grad",
            "10 fc3.weight",
            "10 fc3.weight.grad",
        ]
    );
    // Layout: live-in x, fc1.weight, fc2.weight, fc3.weight at 0, 4 Ki, 8 Ki, 12 Ki, then the
    // temporaries in tensor order, 4 KiB apart (fc1 at 16 Ki ... fc1.weight.grad at 48 Ki).
    let live_in: Vec<bool> = ts.tensors.iter().map(|t| t.live_in).collect();
    let layout = AddressLayout::new(&list, &live_in);
    let names: Vec<&str> = ts.tensors.iter().map(|t| t.name.as_str()).collect();
    let at = |n: &str| layout.tensor_addr[names.iter().position(|&m| m == n).unwrap()];
    assert_eq!(
        [
            at("x"),
            at("fc1.weight"),
            at("fc2.weight"),
            at("fc3.weight")
        ],
        [0, 4096, 8192, 12288]
    );
    assert_eq!([at("fc1"), at("fc1.weight.grad")], [16384, 49152]);
    // Zero compute, 1 B/s and a 1 Hz clock: a cycle per byte, requests back to back.
    let tp = TracePoint::new(
        &list,
        Capacity::bytes(8),
        Policy::Belady,
        &[0.0; 12],
        1.0,
        false,
    );
    let mut lines = Vec::new();
    tp.requests(&layout, 1.0, |r| {
        lines.push(format!(
            "{:#x} {} {}",
            r.addr,
            if r.write { "WRITE" } else { "READ" },
            r.cycle
        ))
    });
    assert_eq!(
        lines,
        [
            "0x0 READ 0",
            "0x1000 READ 2",
            "0x2000 READ 6",
            "0x3000 READ 10",
            "0x4000 WRITE 14",
            "0x2000 READ 16",
            "0x9000 WRITE 20",
            "0x4000 READ 24",
            "0xb002 WRITE 26",
            "0x0 READ 28",
            "0xb000 WRITE 30",
            "0x1000 READ 32",
            "0x1000 WRITE 36",
            "0xb000 READ 40",
            "0x2000 WRITE 44",
            "0x3000 READ 48",
            "0x9000 READ 52",
            "0x3000 WRITE 56",
        ]
    );
}
