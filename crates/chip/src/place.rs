//! Placement and replication: which compute units, tiles and chips hold each layer of a
//! mode, and how many copies of it.
//!
//! A compute unit holds crossbars of one layer only (all its copies packed together);
//! layers take consecutive units in network order, so consecutive layers may share a
//! tile. `replication = balance` gives one more copy to the layer whose busy time per
//! copy is the longest, again and again, until that layer's next copy does not fit
//! (ISAAC's balancing). Copies share a layer's input vectors; when images stream, copies
//! beyond the vectors of one image serve the next images. With `overflow = reprogram`
//! a mode too large for the chip(s) is cut into consecutive segments that each fit; a
//! layer larger than the chip(s) fits neither way.

use crate::{ChipSpec, Count, LayerMode, Overflow, Replication};
use serde::Serialize;
use std::collections::BinaryHeap;

/// Where one layer is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayerPlace {
    pub replicas: u64,
    /// Crossbars of all copies.
    pub crossbars: u64,
    pub units: u64,
    /// Tiles touched by its units.
    pub tiles: u64,
    /// First compute unit (counted over all chips) and the segment it runs in.
    pub first_unit: u64,
    pub segment: u32,
}

impl LayerPlace {
    /// Crossbars of all copies over the crossbars of the units that hold them.
    pub fn utilization(&self, crossbars_per_unit: u32) -> Option<f64> {
        (self.units > 0)
            .then(|| self.crossbars as f64 / (self.units * crossbars_per_unit as u64) as f64)
    }
}

/// A mode on the chip(s).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Placement {
    pub chips: u64,
    pub crossbars_per_unit: u32,
    pub layers: Vec<LayerPlace>,
    /// 1 unless time-multiplexed.
    pub segments: u32,
    /// Distinct tiles occupied (the largest segment's under reprogramming).
    pub tiles_used: u64,
    /// Crossbars placed (the largest segment's) over the chips' crossbars.
    pub chip_utilization: f64,
}

/// The outcome of placing a mode.
#[derive(Debug, Clone, PartialEq)]
pub enum Placed {
    Fits(Placement),
    Reprogrammed(Placement),
    DoesNotFit {
        needed: u64,
        available: u64,
        chips: u64,
    },
}

fn units_of(crossbars: u64, replicas: u64, per_unit: u32) -> u64 {
    (crossbars * replicas).div_ceil(per_unit as u64)
}

/// Chips a mode needs with one copy of every layer (at least 1).
pub fn chips_for(spec: &ChipSpec, layers: &[LayerMode]) -> u64 {
    match spec.count {
        Count::Chips(n) => n,
        Count::Auto(_) => {
            let units: u64 = layers
                .iter()
                .map(|l| units_of(l.crossbars, 1, spec.crossbars_per_unit))
                .sum();
            units.div_ceil(spec.units_per_chip()).max(1)
        }
    }
}

/// Places one mode's layers.
pub fn place(spec: &ChipSpec, layers: &[LayerMode]) -> Placed {
    let chips = chips_for(spec, layers);
    let avail = chips * spec.units_per_chip();
    let cpu = spec.crossbars_per_unit;
    let mut replicas = vec![1u64; layers.len()];
    let units: u64 = layers.iter().map(|l| units_of(l.crossbars, 1, cpu)).sum();
    if units > avail {
        let largest = layers
            .iter()
            .map(|l| units_of(l.crossbars, 1, cpu))
            .max()
            .unwrap_or(0);
        if spec.overflow == Overflow::None || largest > avail {
            return Placed::DoesNotFit {
                needed: layers.iter().map(|l| l.crossbars).sum(),
                available: avail * cpu as u64,
                chips,
            };
        }
        // Consecutive segments, each as many layers as fit.
        let mut seg = vec![0u32; layers.len()];
        let (mut s, mut used) = (0u32, 0u64);
        for (i, l) in layers.iter().enumerate() {
            let u = units_of(l.crossbars, 1, cpu);
            if used + u > avail {
                s += 1;
                used = 0;
            }
            seg[i] = s;
            used += u;
        }
        return Placed::Reprogrammed(lay_out(spec, chips, layers, &replicas, &seg));
    }
    if spec.replication == Replication::Balance {
        balance(layers, &mut replicas, avail - units, cpu);
    }
    let seg = vec![0u32; layers.len()];
    Placed::Fits(lay_out(spec, chips, layers, &replicas, &seg))
}

/// Busy cycles per image of a layer with `r` copies in a stream of images (steady state):
/// its input vectors split evenly among them.
pub fn busy_with(busy: u64, r: u64) -> u64 {
    busy.div_ceil(r.max(1))
}

/// Busy cycles of a layer with `r` copies over a run of `vectors` input vectors: at most
/// one copy per vector can work.
pub fn busy_in_run(busy: u64, r: u64, vectors: u64) -> u64 {
    busy_with(busy, r.min(vectors.max(1)))
}

/// Gives copies to the slowest layer while its next copy fits in `spare` units.
fn balance(layers: &[LayerMode], replicas: &mut [u64], mut spare: u64, cpu: u32) {
    // Max-heap on (busy per copy, earliest layer first).
    let mut heap: BinaryHeap<(u64, std::cmp::Reverse<usize>)> = layers
        .iter()
        .enumerate()
        .filter(|(_, l)| l.crossbars > 0 && l.busy_cycles > 0)
        .map(|(i, l)| (l.busy_cycles, std::cmp::Reverse(i)))
        .collect();
    while let Some((_, std::cmp::Reverse(i))) = heap.pop() {
        let l = &layers[i];
        let r = replicas[i];
        let more = units_of(l.crossbars, r + 1, cpu) - units_of(l.crossbars, r, cpu);
        if more > spare {
            break;
        }
        spare -= more;
        replicas[i] = r + 1;
        heap.push((busy_with(l.busy_cycles, r + 1), std::cmp::Reverse(i)));
    }
}

fn lay_out(
    spec: &ChipSpec,
    chips: u64,
    layers: &[LayerMode],
    replicas: &[u64],
    seg: &[u32],
) -> Placement {
    let cpu = spec.crossbars_per_unit;
    let upt = spec.units_per_tile as u64;
    let mut out = Vec::with_capacity(layers.len());
    let mut unit = 0u64;
    let mut cur = 0u32;
    // Per segment: (units used, crossbars placed). Units are taken from 0 with no gap.
    let mut per_seg: Vec<(u64, u64)> = vec![(0, 0)];
    for (i, l) in layers.iter().enumerate() {
        if seg[i] != cur {
            cur = seg[i];
            unit = 0;
            per_seg.push((0, 0));
        }
        let r = replicas[i];
        let units = units_of(l.crossbars, r, cpu);
        let tiles = if units == 0 {
            0
        } else {
            (unit + units - 1) / upt - unit / upt + 1
        };
        if let Some(s) = per_seg.last_mut() {
            s.0 += units;
            s.1 += l.crossbars * r;
        }
        out.push(LayerPlace {
            replicas: r,
            crossbars: l.crossbars * r,
            units,
            tiles,
            first_unit: unit,
            segment: seg[i],
        });
        unit += units;
    }
    let tiles_used = per_seg.iter().map(|s| s.0.div_ceil(upt)).max().unwrap_or(0);
    let placed = per_seg.iter().map(|s| s.1).max().unwrap_or(0);
    Placement {
        chips,
        crossbars_per_unit: cpu,
        layers: out,
        segments: cur + 1,
        tiles_used,
        chip_utilization: placed as f64 / (chips * spec.crossbars_per_chip()) as f64,
    }
}
