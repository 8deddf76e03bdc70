//! Access list and prefetch list: the ordered tile accesses of the whole step.
//!
//! A tensor of at most `tile_bytes` is one tile; a larger one is split into equal row panels
//! (the last ones a byte smaller when it does not divide), so that a buffer smaller than the
//! tensor can still hold part of it. Each [`Pattern`] becomes the accesses of its loop nest
//! over panels. The list does not depend on the buffer capacity: every capacity is simulated
//! over the same accesses, so zero capacity costs exactly the sum of all accesses.
//!
//! Every access also carries, computed once here, the index of the next *read* of its tile
//! (Belady's priority), the reuse scope a hit on it would have, and whether it could have
//! been prefetched during the previous step.

use crate::step::{Pattern, Phase, Step, TrainingStep};
use serde::Serialize;
use std::ops::Range;

/// Sentinel next-use index: never read again.
pub const NEVER: u32 = u32::MAX;

/// Where the data of a buffer hit was last touched, relative to the hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// The same layer (another tile loop iteration, another backward step of the layer).
    IntraLayer,
    /// Producer to consumer in neighbouring layers (including loss <-> last layer).
    AdjacentLayer,
    /// Within a residual/inception/attention block, or between a block and its input.
    Block,
    /// The same (shared) weights, their gradient or state, at another time step.
    RecurrentWeight,
    /// Touched in the forward pass, reused in the backward pass or update.
    ForwardBackward,
    /// Anything farther (encoder outputs, far routes).
    LongRange,
}

impl Scope {
    pub const ALL: [Scope; 6] = [
        Scope::IntraLayer,
        Scope::AdjacentLayer,
        Scope::Block,
        Scope::RecurrentWeight,
        Scope::ForwardBackward,
        Scope::LongRange,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::IntraLayer => "intra-layer",
            Scope::AdjacentLayer => "adjacent-layer",
            Scope::Block => "block",
            Scope::RecurrentWeight => "recurrent-weight",
            Scope::ForwardBackward => "forward-backward",
            Scope::LongRange => "long-range",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Tile {
    pub tensor: u32,
    pub bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Access {
    pub tile: u32,
    pub write: bool,
    pub step: u32,
    /// Index of the next read of this tile, or [`NEVER`] when the next access overwrites it
    /// or there is none: the data is dead after this access.
    pub next_read: u32,
    /// Scope of the reuse if this access hits (meaningful for reads that follow an access).
    pub scope: Scope,
    /// A read of data that existed before the previous step began (so it could be fetched
    /// while the previous step runs): the step's first access of the tile is a read and the
    /// previous step does not write it.
    pub prefetchable: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AccessList {
    pub tiles: Vec<Tile>,
    pub tensor_tiles: Vec<Range<u32>>,
    pub live_out: Vec<bool>,
    pub accesses: Vec<Access>,
    /// Accesses of each step.
    pub step_ranges: Vec<Range<usize>>,
    /// Bytes of the distinct tiles each step touches.
    pub step_footprint: Vec<u64>,
}

impl AccessList {
    /// Bytes of all accesses: the traffic of a machine without a buffer.
    pub fn total_bytes(&self) -> u64 {
        self.accesses
            .iter()
            .map(|a| self.tiles[a.tile as usize].bytes)
            .sum()
    }

    /// Compulsory traffic: every tile whose first access is a read is fetched once, and every
    /// live-out tile that is written is written back once.
    pub fn compulsory_bytes(&self) -> u64 {
        let mut seen = vec![false; self.tiles.len()];
        let mut written = vec![false; self.tiles.len()];
        let mut total = 0;
        for a in &self.accesses {
            let t = a.tile as usize;
            if !seen[t] && !a.write {
                total += self.tiles[t].bytes;
            }
            seen[t] = true;
            written[t] |= a.write;
        }
        for (t, tile) in self.tiles.iter().enumerate() {
            if written[t] && self.live_out[t] {
                total += tile.bytes;
            }
        }
        total
    }

    /// Prefetch list: for each step, the tiles of the next step that can be fetched while it
    /// runs (read by the next step before it writes them, and not written by this step).
    pub fn prefetch_list(&self) -> Vec<Vec<u32>> {
        let n = self.step_ranges.len();
        (0..n)
            .map(|s| {
                if s + 1 >= n {
                    return Vec::new();
                }
                let mut v: Vec<u32> = self.accesses[self.step_ranges[s + 1].clone()]
                    .iter()
                    .filter(|a| a.prefetchable)
                    .map(|a| a.tile)
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect()
    }
}

/// Panel count of a tensor: one panel per `tile_bytes`, at least one.
fn panels(bytes: u64, tile_bytes: u64) -> u32 {
    bytes.div_ceil(tile_bytes).max(1) as u32
}

struct Emitter<'a> {
    tiles: &'a [Range<u32>],
    out: Vec<(u32, bool)>,
}

impl Emitter<'_> {
    fn n(&self, t: usize) -> u32 {
        self.tiles[t].end - self.tiles[t].start
    }

    fn tile(&self, t: usize, p: u32) -> u32 {
        self.tiles[t].start + p
    }

    /// Panel of tensor `t` that chunk `c` of `g` covers.
    fn panel(&self, t: usize, c: u32, g: u32) -> u32 {
        (c as u64 * self.n(t) as u64 / g as u64) as u32
    }

    fn chunks(&self, ts: &[usize]) -> u32 {
        ts.iter().map(|&t| self.n(t)).max().unwrap_or(1)
    }

    fn read_chunk(&mut self, ts: &[usize], c: u32, g: u32) {
        for &t in ts {
            let p = self.panel(t, c, g);
            if c == 0 || self.panel(t, c - 1, g) != p {
                self.out.push((self.tile(t, p), false));
            }
        }
    }

    fn write_chunk(&mut self, ts: &[usize], c: u32, g: u32) {
        for &t in ts {
            let p = self.panel(t, c, g);
            if c + 1 == g || self.panel(t, c + 1, g) != p {
                self.out.push((self.tile(t, p), true));
            }
        }
    }

    fn all(&mut self, t: usize, write: bool) {
        for p in 0..self.n(t) {
            self.out.push((self.tile(t, p), write));
        }
    }

    /// Row-chunk loop over `reads` and `writes`.
    fn stream(&mut self, reads: &[usize], writes: &[usize]) {
        let all: Vec<usize> = reads.iter().chain(writes).copied().collect();
        let g = self.chunks(&all);
        for c in 0..g {
            self.read_chunk(reads, c, g);
            self.write_chunk(writes, c, g);
        }
    }

    fn pattern(&mut self, p: &Pattern, sizes: &[u64]) {
        match p {
            Pattern::Stream { reads, writes } => self.stream(reads, writes),
            Pattern::Gemm {
                rows_in,
                weights,
                rows_out,
            } => {
                let rows: Vec<usize> = rows_in.iter().chain(rows_out).copied().collect();
                let g = self.chunks(&rows);
                for c in 0..g {
                    self.read_chunk(rows_in, c, g);
                    for &w in weights {
                        self.all(w, false);
                    }
                    self.write_chunk(rows_out, c, g);
                }
            }
            Pattern::WeightGrad {
                rows_in,
                grads,
                accumulate,
            } => {
                let g = self.chunks(rows_in);
                // In u128: a product of a byte count and a panel count (which
                // crate::limits bounds) need not fit u64.
                let grad_panels: u128 = grads.iter().map(|&d| self.n(d) as u128).sum();
                let rows_bytes: u128 = rows_in.iter().map(|&t| sizes[t] as u128).sum();
                let grad_bytes: u128 = grads.iter().map(|&t| sizes[t] as u128).sum();
                let acc = *accumulate as u128;
                // Rows outer: rows read once, partial sums spilled and re-read per chunk.
                let rows_outer = rows_bytes + grad_bytes * (2 * g as u128 - 1 + acc);
                // Gradient panels outer: rows re-read per gradient panel, sums written once.
                let grads_outer = rows_bytes * grad_panels + grad_bytes * (1 + acc);
                if rows_outer < grads_outer {
                    for c in 0..g {
                        self.read_chunk(rows_in, c, g);
                        for &d in grads {
                            for p in 0..self.n(d) {
                                if c > 0 || *accumulate {
                                    self.out.push((self.tile(d, p), false));
                                }
                                self.out.push((self.tile(d, p), true));
                            }
                        }
                    }
                } else {
                    for &d in grads {
                        for p in 0..self.n(d) {
                            if *accumulate {
                                self.out.push((self.tile(d, p), false));
                            }
                            for c in 0..g {
                                self.read_chunk(rows_in, c, g);
                            }
                            self.out.push((self.tile(d, p), true));
                        }
                    }
                }
            }
            Pattern::Gather {
                ids,
                table,
                out,
                fraction,
            } => {
                let k = touched(self.n(*table), *fraction);
                let g = self.chunks(&[*ids, *out]);
                for c in 0..g {
                    self.read_chunk(&[*ids], c, g);
                    for p in (c as u64 * k as u64 / g as u64) as u32
                        ..((c as u64 + 1) * k as u64 / g as u64) as u32
                    {
                        self.out.push((self.tile(*table, p), false));
                    }
                    self.write_chunk(&[*out], c, g);
                }
            }
            Pattern::Scatter {
                rows_in,
                grad,
                fraction,
                accumulate,
            } => {
                self.stream(rows_in, &[]);
                if *accumulate {
                    for p in 0..touched(self.n(*grad), *fraction) {
                        self.out.push((self.tile(*grad, p), false));
                        self.out.push((self.tile(*grad, p), true));
                    }
                } else {
                    self.all(*grad, true);
                }
            }
        }
    }
}

/// Panels of an `n`-panel table that a lookup touching `fraction` of its rows reads.
fn touched(n: u32, fraction: f64) -> u32 {
    ((n as f64 * fraction).ceil() as u32).clamp(1, n)
}

/// Builds the access list of a training step with tiles of at most `tile_bytes`.
pub fn build(ts: &TrainingStep, tile_bytes: u64) -> AccessList {
    let mut tiles = Vec::new();
    let mut tensor_tiles = Vec::with_capacity(ts.tensors.len());
    let mut live_out = Vec::new();
    for (i, t) in ts.tensors.iter().enumerate() {
        let n = panels(t.bytes, tile_bytes);
        let start = tiles.len() as u32;
        for p in 0..n as u64 {
            let lo = t.bytes * p / n as u64;
            let hi = t.bytes * (p + 1) / n as u64;
            tiles.push(Tile {
                tensor: i as u32,
                bytes: hi - lo,
            });
            live_out.push(t.live_out);
        }
        tensor_tiles.push(start..start + n);
    }
    let sizes: Vec<u64> = ts.tensors.iter().map(|t| t.bytes).collect();
    let mut accesses = Vec::new();
    let mut step_ranges = Vec::with_capacity(ts.steps.len());
    for (s, step) in ts.steps.iter().enumerate() {
        let mut e = Emitter {
            tiles: &tensor_tiles,
            out: Vec::new(),
        };
        for p in &step.patterns {
            e.pattern(p, &sizes);
        }
        let start = accesses.len();
        accesses.extend(e.out.into_iter().map(|(tile, write)| Access {
            tile,
            write,
            step: s as u32,
            next_read: NEVER,
            scope: Scope::IntraLayer,
            prefetchable: false,
        }));
        step_ranges.push(start..accesses.len());
    }
    annotate(ts, &tiles, &mut accesses, &step_ranges);
    let step_footprint = step_ranges
        .iter()
        .map(|r| {
            let mut v: Vec<u32> = accesses[r.clone()].iter().map(|a| a.tile).collect();
            v.sort_unstable();
            v.dedup();
            v.iter().map(|&t| tiles[t as usize].bytes).sum()
        })
        .collect();
    AccessList {
        tiles,
        tensor_tiles,
        live_out,
        accesses,
        step_ranges,
        step_footprint,
    }
}

/// An access list from raw `(tile, write)` accesses, one step each, every tile its own
/// tensor (for tests and experiments on the buffer alone).
pub fn from_raw(tile_bytes: &[u64], live_out: &[bool], seq: &[(u32, bool)]) -> AccessList {
    let tiles: Vec<Tile> = tile_bytes
        .iter()
        .enumerate()
        .map(|(i, &bytes)| Tile {
            tensor: i as u32,
            bytes,
        })
        .collect();
    let mut accesses: Vec<Access> = seq
        .iter()
        .enumerate()
        .map(|(i, &(tile, write))| Access {
            tile,
            write,
            step: i as u32,
            next_read: NEVER,
            scope: Scope::IntraLayer,
            prefetchable: false,
        })
        .collect();
    annotate_next(tiles.len(), &mut accesses);
    let step_footprint = accesses
        .iter()
        .map(|a| tiles[a.tile as usize].bytes)
        .collect();
    AccessList {
        tensor_tiles: (0..tiles.len() as u32).map(|i| i..i + 1).collect(),
        tiles,
        live_out: live_out.to_vec(),
        step_ranges: (0..seq.len()).map(|i| i..i + 1).collect(),
        accesses,
        step_footprint,
    }
}

/// Next read of every access: scan backwards remembering the next access of every tile.
fn annotate_next(tiles: usize, acc: &mut [Access]) {
    let mut next: Vec<(u32, bool)> = vec![(NEVER, true); tiles];
    for i in (0..acc.len()).rev() {
        let t = acc[i].tile as usize;
        let (j, is_write) = next[t];
        acc[i].next_read = if j != NEVER && !is_write { j } else { NEVER };
        next[t] = (i as u32, acc[i].write);
    }
}

/// Fills `next_read`, `scope` and `prefetchable`.
fn annotate(ts: &TrainingStep, tiles: &[Tile], acc: &mut [Access], ranges: &[Range<usize>]) {
    annotate_next(tiles.len(), acc);
    // Scope of each access from the step of the previous access of its tile.
    let mut prev_step: Vec<u32> = vec![NEVER; tiles.len()];
    for a in acc.iter_mut() {
        let t = a.tile as usize;
        if prev_step[t] != NEVER {
            let shared = ts.tensors[tiles[t].tensor as usize].shared;
            a.scope = classify(ts, prev_step[t] as usize, a.step as usize, shared);
        }
        prev_step[t] = a.step;
    }
    // Prefetchable: first access of the tile within its step is a read, and the previous
    // step does not write the tile.
    let mut written_in: Vec<u32> = vec![NEVER; tiles.len()];
    let mut first_in: Vec<u32> = vec![NEVER; tiles.len()];
    for (s, r) in ranges.iter().enumerate() {
        let s = s as u32;
        for a in &mut acc[r.clone()] {
            let t = a.tile as usize;
            if first_in[t] != s {
                first_in[t] = s;
                let written_before = s > 0 && written_in[t] == s - 1;
                a.prefetchable = !a.write && !written_before;
            }
        }
        for a in &acc[r.clone()] {
            if a.write {
                written_in[a.tile as usize] = s;
            }
        }
    }
}

/// Reuse scope of data last touched in step `p` and reused in step `q`.
pub fn classify(ts: &TrainingStep, p: usize, q: usize, shared: bool) -> Scope {
    if p == q {
        return Scope::IntraLayer;
    }
    let (sp, sq): (&Step, &Step) = (&ts.steps[p], &ts.steps[q]);
    if sp.phase == Phase::Loss || sq.phase == Phase::Loss {
        return Scope::AdjacentLayer;
    }
    if sp.phase.is_forward() && !sq.phase.is_forward() {
        return Scope::ForwardBackward;
    }
    let (a, b) = (sp.node, sq.node);
    if shared && a != b {
        return Scope::RecurrentWeight;
    }
    if a == b {
        return Scope::IntraLayer;
    }
    if a.abs_diff(b) == 1 {
        return Scope::AdjacentLayer;
    }
    let block = |n: usize| ts.node_block.get(n).copied().flatten();
    let starts_block_after =
        |n: usize, k: Option<usize>| k.is_some_and(|k| n + 1 == ts.block_start[k]);
    let (ba, bb) = (block(a), block(b));
    if (ba.is_some() && ba == bb) || starts_block_after(a, bb) || starts_block_after(b, ba) {
        return Scope::Block;
    }
    Scope::LongRange
}
