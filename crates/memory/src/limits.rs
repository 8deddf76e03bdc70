//! Limits checked before the model allocates anything that grows with a user-controlled
//! size (`--batch`, `--seq-len`, `memory.tile_bytes`, `memory.bytes_per_element`, the
//! geometry of a bundle), so that a hopeless request is one clear error rather than an
//! aborted allocation or a silently wrapped byte count (docs/errors.md):
//!
//! - `--batch` at most [`MAX_BATCH`], `--seq-len` at most [`MAX_SEQ_LEN`] (the graph of a
//!   sequence model has nodes per time step), checked before the graph is built;
//! - every tensor at most [`MAX_TENSOR_BYTES`], computed in u128 from its shape;
//! - at most [`MAX_TILES`] tiles, and at most [`MAX_ACCESSES`] accesses by an upper
//!   bound computed from the loop nests before the access list is built;
//! - the bytes those accesses could move at most [`MAX_ACCESS_BYTES`], so that every
//!   traffic sum (reads, writes, both policies) fits u64.

use crate::graph::Graph;
use crate::step::{Pattern, TrainingStep};
use crate::MemoryConfig;

/// Most samples per step.
pub const MAX_BATCH: usize = 1 << 24;
/// Most tokens (BERT) or time steps (GNMT) per sequence.
pub const MAX_SEQ_LEN: usize = 1 << 12;
/// Largest tensor, bytes (64 PiB).
pub const MAX_TENSOR_BYTES: u128 = 1 << 56;
/// Most tiles of an access list (tile indices are u32).
pub const MAX_TILES: u128 = 1 << 24;
/// Most accesses of an access list: the list and the buffer simulation keep a few words
/// per access, about 2 GB at this limit.
pub const MAX_ACCESSES: u128 = 1 << 26;
/// Most bytes all accesses together could move.
pub const MAX_ACCESS_BYTES: u128 = 1 << 62;

/// Checks `--batch` and `--seq-len` (positive, within the limits) before the graph is built.
pub fn check_args(batch: usize, seq_len: Option<usize>) -> Result<(), String> {
    if batch == 0 {
        return Err("--batch: must be positive".into());
    }
    if seq_len == Some(0) {
        return Err("--seq-len: must be positive".into());
    }
    if batch > MAX_BATCH {
        return Err(format!(
            "--batch: {batch} is more than the limit of {MAX_BATCH} samples per step"
        ));
    }
    if let Some(s) = seq_len.filter(|&s| s > MAX_SEQ_LEN) {
        return Err(format!(
            "--seq-len: {s} is more than the limit of {MAX_SEQ_LEN} tokens or time steps"
        ));
    }
    Ok(())
}

/// Checks every tensor of `g` at `cfg`'s element widths before the step is built.
pub fn check_tensors(g: &Graph, cfg: &MemoryConfig) -> Result<(), String> {
    let width = cfg.bytes_per_element.max(cfg.optimizer_bytes_per_element) as u128;
    for t in &g.tensors {
        let elements = t
            .shape
            .iter()
            .fold(1u128, |a, &d| a.saturating_mul(d as u128));
        let bytes = elements.saturating_mul(width);
        if bytes > MAX_TENSOR_BYTES {
            return Err(format!(
                "{}: tensor {} {:?} at {width} bytes per element needs {bytes} bytes, more than the limit of 2^56 (lower --batch, --seq-len or memory.bytes_per_element)",
                g.name, t.name, t.shape
            ));
        }
    }
    Ok(())
}

/// Tiles of `ts` with tiles of at most `tile_bytes`, and upper bounds of its accesses and
/// of the bytes they move, without building the list.
pub fn access_bounds(ts: &TrainingStep, tile_bytes: u64) -> (u128, u128, u128) {
    let tb = tile_bytes.max(1) as u128;
    let n: Vec<u128> = ts
        .tensors
        .iter()
        .map(|t| (t.bytes as u128).div_ceil(tb).max(1))
        .collect();
    // The largest tile of a tensor: ceil(bytes / panels).
    let tile: Vec<u128> = ts
        .tensors
        .iter()
        .zip(&n)
        .map(|(t, &k)| (t.bytes as u128).div_ceil(k))
        .collect();
    let tiles = n.iter().fold(0u128, |a, &k| a.saturating_add(k));
    let (mut count, mut bytes) = (0u128, 0u128);
    let mut add = |t: usize, k: u128| {
        count = count.saturating_add(k);
        bytes = bytes.saturating_add(k.saturating_mul(tile[t]));
    };
    let chunks = |ts: &[usize]| ts.iter().map(|&t| n[t]).max().unwrap_or(1);
    for step in &ts.steps {
        for p in &step.patterns {
            match p {
                Pattern::Stream { reads, writes } => {
                    let all: Vec<usize> = reads.iter().chain(writes).copied().collect();
                    let g = chunks(&all);
                    all.iter().for_each(|&t| add(t, g));
                }
                Pattern::Gemm {
                    rows_in,
                    weights,
                    rows_out,
                } => {
                    let rows: Vec<usize> = rows_in.iter().chain(rows_out).copied().collect();
                    let g = chunks(&rows);
                    rows.iter().for_each(|&t| add(t, g));
                    weights.iter().for_each(|&w| add(w, g.saturating_mul(n[w])));
                }
                Pattern::WeightGrad { rows_in, grads, .. } => {
                    // Either loop order (access.rs picks the cheaper): both, summed.
                    let g = chunks(rows_in);
                    let panels = grads.iter().fold(0u128, |a, &d| a.saturating_add(n[d]));
                    for &t in rows_in {
                        add(t, g.saturating_add(g.saturating_mul(panels)));
                    }
                    grads
                        .iter()
                        .for_each(|&d| add(d, n[d].saturating_mul(2).saturating_mul(g + 1)));
                }
                Pattern::Gather {
                    ids, table, out, ..
                } => {
                    let g = chunks(&[*ids, *out]);
                    add(*ids, g);
                    add(*out, g);
                    add(*table, n[*table]);
                }
                Pattern::Scatter { rows_in, grad, .. } => {
                    let g = chunks(rows_in);
                    rows_in.iter().for_each(|&t| add(t, g));
                    add(*grad, n[*grad].saturating_mul(2));
                }
            }
        }
    }
    (tiles, count, bytes)
}

/// Refuses an access list above [`MAX_TILES`], [`MAX_ACCESSES`] or [`MAX_ACCESS_BYTES`].
pub fn check_access_list(ts: &TrainingStep, tile_bytes: u64) -> Result<(), String> {
    let (tiles, accesses, bytes) = access_bounds(ts, tile_bytes);
    let hint = "raise memory.tile_bytes or lower --batch or --seq-len";
    if tiles > MAX_TILES {
        return Err(format!(
            "memory.tile_bytes: {tile_bytes}: {} splits into {tiles} tiles, more than the limit of {MAX_TILES} ({hint})",
            ts.network
        ));
    }
    if accesses > MAX_ACCESSES {
        return Err(format!(
            "memory.tile_bytes: {tile_bytes}: the access list of {} could hold {accesses} accesses, more than the limit of {MAX_ACCESSES} ({hint})",
            ts.network
        ));
    }
    if bytes > MAX_ACCESS_BYTES {
        return Err(format!(
            "{}: the accesses could move {bytes} bytes, more than the limit of 2^62 (lower --batch, --seq-len or memory.bytes_per_element)",
            ts.network
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zoo::{self, ZooOptions};
    use crate::{access, step};

    /// The bounds computed before building hold for the list built: the tile count
    /// exactly, the accesses and the bytes they move from above.
    #[test]
    fn access_bounds_hold_for_every_network() {
        let opts = ZooOptions { seq_len: Some(8) };
        for name in zoo::NAMES {
            let g = zoo::build(name, 2, opts).unwrap();
            for tile_bytes in [1 << 12, 1 << 16, 1 << 19, u64::MAX] {
                let cfg = MemoryConfig {
                    tile_bytes,
                    ..MemoryConfig::default()
                };
                check_tensors(&g, &cfg).unwrap();
                let ts = step::build(&g, &cfg);
                let (tiles, accesses, bytes) = access_bounds(&ts, tile_bytes);
                let list = access::build(&ts, tile_bytes);
                assert_eq!(tiles, list.tiles.len() as u128, "{name} {tile_bytes}");
                assert!(
                    accesses >= list.accesses.len() as u128,
                    "{name} {tile_bytes}"
                );
                assert!(bytes >= list.total_bytes() as u128, "{name} {tile_bytes}");
            }
        }
    }

    #[test]
    fn oversized_requests_name_their_knob() {
        assert!(check_args(MAX_BATCH, Some(MAX_SEQ_LEN)).is_ok());
        assert!(check_args(MAX_BATCH + 1, None)
            .unwrap_err()
            .starts_with("--batch: 16777217 is more than"));
        assert!(check_args(1, Some(usize::MAX))
            .unwrap_err()
            .starts_with("--seq-len: 18446744073709551615"));
        // conv1's output at batch 32: 32 x 64 x 112 x 112 x (2^32 - 1) B = 1.1e17 > 2^56.
        let g = zoo::build("resnet18", 32, ZooOptions::default()).unwrap();
        let wide = MemoryConfig {
            bytes_per_element: u32::MAX,
            ..MemoryConfig::default()
        };
        let e = check_tensors(&g, &wide).unwrap_err();
        assert!(e.contains("memory.bytes_per_element"), "{e}");
        let cfg = MemoryConfig::default();
        let ts = step::build(&g, &cfg);
        let e = check_access_list(&ts, 1).unwrap_err();
        assert!(
            e.starts_with("memory.tile_bytes: 1: resnet18 splits into "),
            "{e}"
        );
        assert!(check_access_list(&ts, cfg.tile_bytes).is_ok());
    }
}
