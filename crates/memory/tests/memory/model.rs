//! The model on the zoo networks: limits, monotonicity and Belady's reads <= LRU's on real access
//! lists, reuse scopes, inference mode, simulated compute, and the errors of `outputs`.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memory::access::Scope;
use memory::buffer::{simulate, Policy};
use memory::exec::ComputeSource;
use memory::model::Model;
use memory::report::{load_network, outputs, MemoryArgs};
use memory::step::{Phase, TensorClass};
use memory::zoo::{self, ZooOptions};
use memory::{Capacity, MemoryConfig, Mode};
use std::collections::HashMap;

const MIB: u64 = 1 << 20;

fn model(name: &str, batch: usize, cfg: &MemoryConfig) -> Model {
    let opts = ZooOptions { seq_len: Some(8) };
    let g = zoo::build(name, batch, opts).unwrap();
    Model::new(&g, cfg, &ComputeSource::Peak).unwrap()
}

#[test]
fn every_network_meets_the_limits_and_never_gains_traffic_with_capacity() {
    for mode in [Mode::Training, Mode::Inference] {
        let cfg = MemoryConfig {
            mode,
            ..MemoryConfig::default()
        };
        for name in zoo::NAMES {
            let m = model(name, 4, &cfg);
            let l = &m.list;
            let inf = simulate(l, Capacity::INFINITE, Policy::Belady);
            assert_eq!(inf.traffic(), l.compulsory_bytes(), "{name} {mode:?}");
            assert_eq!(
                simulate(l, Capacity::bytes(0), Policy::Belady).traffic(),
                l.total_bytes()
            );
            let mut last = u64::MAX;
            for k in 0..12 {
                let cap = Capacity::bytes((MIB / 4) << k);
                let b = simulate(l, cap, Policy::Belady);
                let lru = simulate(l, cap, Policy::Lru);
                assert!(
                    b.traffic() <= last,
                    "{name} {mode:?} {cap}: {} > {last}",
                    b.traffic()
                );
                // Belady's reads are optimal; its write-backs are not weighed (docs/memory.md),
                // so only the reads are compared.
                assert!(
                    b.read_bytes() <= lru.read_bytes(),
                    "{name} {mode:?} {cap}: LRU reads less"
                );
                assert_eq!(
                    b.traffic() + b.saved_by_scope().iter().sum::<u64>(),
                    l.total_bytes()
                );
                last = b.traffic();
            }
        }
    }
}

#[test]
fn compulsory_training_traffic_is_weights_state_and_input() {
    // resnet18, batch 2, 2 B/element, momentum in 4 B/element: every weight is read and written
    // once (2+2 B per parameter), its momentum too (4+4 B), and the input images are read.
    let cfg = MemoryConfig::default();
    let m = model("resnet18", 2, &cfg);
    let params = 11_689_512u64;
    let input = 2 * 3 * 224 * 224 * 2;
    assert_eq!(m.list.compulsory_bytes(), params * (2 + 2 + 4 + 4) + input);
    // Inference: weights and images read, logits (2 x 1000) written.
    let inf = model(
        "resnet18",
        2,
        &MemoryConfig {
            mode: Mode::Inference,
            ..cfg
        },
    );
    assert_eq!(
        inf.list.compulsory_bytes(),
        params * 2 + input + 2 * 1000 * 2
    );
}

fn saved(m: &Model, cap: Capacity) -> [u64; 6] {
    simulate(&m.list, cap, Policy::Belady).saved_by_scope()
}

#[test]
fn reuse_scopes_appear_where_the_network_has_them() {
    let cfg = MemoryConfig::default();
    let big = Capacity::bytes(1 << 40);
    let r = saved(&model("resnet50", 2, &cfg), big);
    for s in [
        Scope::IntraLayer,
        Scope::AdjacentLayer,
        Scope::Block,
        Scope::ForwardBackward,
    ] {
        assert!(r[s.index()] > 0, "resnet50 {s:?}");
    }
    assert_eq!(
        r[Scope::RecurrentWeight.index()],
        0,
        "resnet50 has no shared weights"
    );
    let g = saved(&model("gnmt", 2, &cfg), big);
    assert!(g[Scope::RecurrentWeight.index()] > 0);
    // Inference keeps nothing for a backward pass.
    let inf = MemoryConfig {
        mode: Mode::Inference,
        ..cfg
    };
    let r = saved(&model("resnet50", 2, &inf), big);
    assert_eq!(r[Scope::ForwardBackward.index()], 0);
    assert!(r[Scope::AdjacentLayer.index()] > 0);
}

#[test]
fn training_step_has_every_phase_and_adam_state() {
    let cfg = MemoryConfig {
        optimizer: memory::Optimizer::Adam,
        ..MemoryConfig::default()
    };
    let m = model("resnet50", 2, &cfg);
    let phases: Vec<Phase> = m.step.steps.iter().map(|s| s.phase).collect();
    for p in [
        Phase::Forward,
        Phase::Loss,
        Phase::BackwardData,
        Phase::BackwardWeight,
        Phase::Backward,
        Phase::GradAccumulate,
        Phase::Update,
    ] {
        assert!(phases.contains(&p), "{p:?}");
    }
    // Phases come in the order forward, loss, backward, update.
    let first = |p: Phase| phases.iter().position(|&q| q == p).unwrap();
    assert!(first(Phase::Loss) > phases.iter().rposition(|&p| p == Phase::Forward).unwrap());
    assert!(
        first(Phase::Update)
            > phases
                .iter()
                .rposition(|&p| p == Phase::BackwardData)
                .unwrap()
    );
    // Adam: two state tensors per weight tensor, in 4-byte elements.
    let weights = m
        .step
        .tensors
        .iter()
        .filter(|t| t.class == TensorClass::Weight)
        .count();
    let states: Vec<_> = m
        .step
        .tensors
        .iter()
        .filter(|t| t.class == TensorClass::OptState)
        .collect();
    assert_eq!(states.len(), 2 * weights);
    assert!(states.iter().all(|t| t.live_in && t.live_out));
    // One gradient sum per residual block input (16 blocks).
    assert_eq!(
        phases
            .iter()
            .filter(|&&p| p == Phase::GradAccumulate)
            .count(),
        16
    );
}

#[test]
fn simulated_times_replace_peak_for_named_layers() {
    let cfg = MemoryConfig::default();
    let g = zoo::build("resnet18", 2, ZooOptions::default()).unwrap();
    let peak = Model::new(&g, &cfg, &ComputeSource::Peak).unwrap();
    let sim = Model::new(
        &g,
        &cfg,
        &ComputeSource::Simulated(HashMap::from([("conv1".to_string(), 1.0)])),
    )
    .unwrap();
    for (i, s) in peak.step.steps.iter().enumerate() {
        match (s.layer.as_str(), s.phase) {
            ("conv1", Phase::Forward) => assert_eq!(sim.compute[i], 1.0),
            // Backward-weight of conv1 has the forward MACs: the same simulated second.
            ("conv1", Phase::BackwardWeight) => assert_eq!(sim.compute[i], 1.0),
            _ => assert_eq!(sim.compute[i], peak.compute[i], "{}", s.layer),
        }
    }
}

#[test]
fn bad_arguments_are_one_line_errors_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let base = MemoryArgs {
        out: Some(dir.path().to_path_buf()),
        ..MemoryArgs::default()
    };
    let cfg = MemoryConfig::default();
    let err = |a: MemoryArgs| {
        let Err(e) = outputs(&a, &cfg, ComputeSource::Peak) else {
            panic!("{a:?} accepted")
        };
        e.to_string()
    };
    let e = err(MemoryArgs {
        capacity: vec!["16MB".into(), "lots".into()],
        ..base.clone()
    });
    assert!(e.starts_with("--capacity:") && !e.contains('\n'), "{e}");
    let e = err(MemoryArgs {
        bandwidth: vec!["0GB/s".into()],
        ..base.clone()
    });
    assert!(
        e.starts_with("--bandwidth:") && e.contains("positive"),
        "{e}"
    );
    let e = err(MemoryArgs {
        workload: "alexnet".into(),
        ..base.clone()
    });
    assert!(
        e.starts_with("--workload: unknown network 'alexnet'"),
        "{e}"
    );
    let e = err(MemoryArgs {
        mode: Some("eval".into()),
        ..base.clone()
    });
    assert!(e.starts_with("--mode:"), "{e}");
    let e = err(MemoryArgs {
        batch: 0,
        ..base.clone()
    });
    assert!(e.starts_with("--batch:"), "{e}");
    let bad = MemoryConfig {
        peak_macs_per_s: 0.0,
        ..cfg.clone()
    };
    let Err(e) = outputs(&base, &bad, ComputeSource::Peak) else {
        panic!("peak_macs_per_s = 0 accepted")
    };
    let e = e.to_string();
    assert!(e.starts_with("memory.peak_macs_per_s:"), "{e}");
    assert!(load_network("resnet50", 1, ZooOptions::default()).is_ok());
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing written on error"
    );
}

#[test]
fn a_capacity_or_bandwidth_listed_twice_is_refused_naming_the_flag() {
    // Each value is a point: listed twice it wrote its rows twice, a table compare and
    // plot refuse. Two spellings of one value are the same value.
    let cfg = MemoryConfig::default();
    let args = |capacity: &[&str], bandwidth: &[&str]| MemoryArgs {
        workload: "resnet18".into(),
        capacity: capacity.iter().map(|s| s.to_string()).collect(),
        bandwidth: bandwidth.iter().map(|s| s.to_string()).collect(),
        ..MemoryArgs::default()
    };
    let err = |a: MemoryArgs| match memory::report::check(&a, &cfg) {
        Ok(()) => panic!("{a:?} accepted"),
        Err(e) => e.to_string(),
    };
    let e = err(args(&["16MiB", "1GB", "16MiB"], &["900GB/s"]));
    assert_eq!(
        e,
        "--capacity: 16MiB is listed twice (a value listed twice would write its rows twice)"
    );
    let e = err(args(&["16MiB"], &["900GB/s", "0.9TB/s"]));
    assert_eq!(
        e,
        "--bandwidth: 900GB/s and 0.9TB/s are the same bandwidth, a value listed twice (it would write its rows twice)"
    );
    let e = err(args(&["16777216B", "16MiB"], &["900GB/s"]));
    assert!(e.starts_with("--capacity: 16777216B and 16MiB "), "{e}");
    let e = err(args(&["inf", "INF"], &["900GB/s"]));
    assert!(e.starts_with("--capacity: inf and INF "), "{e}");
    // Different values are points of their own.
    memory::report::check(
        &args(&["16MiB", "16MB", "inf"], &["900GB/s", "1TB/s"]),
        &cfg,
    )
    .unwrap();
}
