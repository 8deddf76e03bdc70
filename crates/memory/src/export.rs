//! The access list and the prefetch list as records, one at a time, for others to check the
//! model with their own buffer policy (docs/memory.md, "Exports"). Pure iterators over the
//! model's lists: nothing is copied or written here; the caller streams the records out.

use crate::access::{AccessList, Scope, NEVER};
use crate::step::TrainingStep;

/// One access of the access list, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessRecord<'a> {
    /// Position in the access list (what `next_read` refers to).
    pub index: usize,
    /// Step index, as in memory_layers.csv.
    pub step: usize,
    pub layer: &'a str,
    pub phase: &'static str,
    pub tensor: &'a str,
    /// Panel of the tensor (0 for an untiled tensor).
    pub tile: u32,
    /// First byte of the panel within its tensor.
    pub offset_bytes: u64,
    pub bytes: u64,
    pub write: bool,
    /// Index of the next read of the tile, if the data is read again before it is
    /// overwritten.
    pub next_read: Option<u32>,
    pub live_in: bool,
    pub live_out: bool,
    /// Scope of the reuse if this read hits: only for a read of a tile accessed before.
    pub scope_if_hit: Option<Scope>,
    /// Tile number over the whole list (unique; `tensor` and `tile` name it too).
    pub tile_id: u32,
    /// The step's first access of the tile is this read, and the previous step does not
    /// write the tile: it could be fetched during the previous step.
    pub prefetchable: bool,
}

/// One tile of the prefetch list: read by step `step + 1`, fetchable during step `step`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefetchRecord<'a> {
    pub step: usize,
    pub tensor: &'a str,
    pub tile: u32,
    pub tile_id: u32,
    pub bytes: u64,
}

/// First byte of every tile within its tensor (tiles of a tensor are consecutive).
pub fn tile_offsets(list: &AccessList) -> Vec<u64> {
    let mut off = vec![0; list.tiles.len()];
    for r in &list.tensor_tiles {
        let mut o = 0;
        for t in r.clone() {
            off[t as usize] = o;
            o += list.tiles[t as usize].bytes;
        }
    }
    off
}

/// The access list of `ts`, record by record.
pub fn access_records<'a>(
    ts: &'a TrainingStep,
    list: &'a AccessList,
) -> impl Iterator<Item = AccessRecord<'a>> + 'a {
    let offsets = tile_offsets(list);
    let mut seen = vec![false; list.tiles.len()];
    list.accesses.iter().enumerate().map(move |(index, a)| {
        let t = a.tile as usize;
        let tensor_id = list.tiles[t].tensor as usize;
        let tensor = &ts.tensors[tensor_id];
        let step = &ts.steps[a.step as usize];
        let before = std::mem::replace(&mut seen[t], true);
        AccessRecord {
            index,
            step: a.step as usize,
            layer: &step.layer,
            phase: step.phase.as_str(),
            tensor: &tensor.name,
            tile: a.tile - list.tensor_tiles[tensor_id].start,
            offset_bytes: offsets[t],
            bytes: list.tiles[t].bytes,
            write: a.write,
            next_read: (a.next_read != NEVER).then_some(a.next_read),
            live_in: tensor.live_in,
            live_out: tensor.live_out,
            scope_if_hit: (before && !a.write).then_some(a.scope),
            tile_id: a.tile,
            prefetchable: a.prefetchable,
        }
    })
}

/// The prefetch list of `list`, step by step (steps in order, tiles in tile order); the
/// same tiles as [`AccessList::prefetch_list`], one step's worth held at a time.
pub fn prefetch_records<'a>(
    ts: &'a TrainingStep,
    list: &'a AccessList,
) -> impl Iterator<Item = PrefetchRecord<'a>> + 'a {
    let n = list.step_ranges.len();
    (0..n.saturating_sub(1)).flat_map(move |s| {
        let mut tiles: Vec<u32> = list.accesses[list.step_ranges[s + 1].clone()]
            .iter()
            .filter(|a| a.prefetchable)
            .map(|a| a.tile)
            .collect();
        tiles.sort_unstable();
        tiles.dedup();
        tiles.into_iter().map(move |t| {
            let tile = list.tiles[t as usize];
            let tensor_id = tile.tensor as usize;
            PrefetchRecord {
                step: s,
                tensor: &ts.tensors[tensor_id].name,
                tile: t - list.tensor_tiles[tensor_id].start,
                tile_id: t,
                bytes: tile.bytes,
            }
        })
    })
}
