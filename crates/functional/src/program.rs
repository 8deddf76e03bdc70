//! Programming the crossbars (docs/functional.md, "The datapath in the code's words"): the cells of every row
//! tile as bit-planes over its physical rows, and the route that tells which logical
//! row (input) drives each physical row.
//!
//! Two programs per layer: the dense tiling (dense, activation, ideal) and the compacted
//! one (weight, sre). Cells are written from the index table (`CompressedGroup::rows`);
//! inputs are routed at read time through the index decoder, a separate function, so a
//! wrong decode shows up as a wrong value. Stuck-at faults are applied as cells are
//! written: a fault is a property of the cell, the same in every mode.

use crate::device::Device;
use crossbar::{LayerMap, PhysCol, Polarity};
use sparsity::{CompressedGroup, Compression};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The index decoder the datapath routes compacted rows with: the logical row that
/// drives physical row `phys` of a column group.
pub type Decoder = fn(&CompressedGroup, u32) -> u32;

/// The decoder of the model: `C_g[phys]`.
pub fn index_decoder(g: &CompressedGroup, phys: u32) -> u32 {
    g.decode(phys)
}

/// One physical column of a column group, programmed in one row tile.
#[derive(Debug, Clone)]
pub(crate) struct Column {
    /// Output it adds to: g * (Cout/G) + n.
    pub out: u32,
    pub slice: u32,
    /// Weight of its code in the shift-and-add: 2^(slice * cell_bits).
    pub shift: u32,
    /// Negative polarity array: its codes are subtracted.
    pub neg: bool,
    /// The column's word of its reads' keys ([`Device::read_word`]: its polarity and
    /// its index in its polarity array, the physical column).
    pub read_word: u64,
}

impl Column {
    /// The key of the cell of this column that holds logical row `row` (a draw's words
    /// after its kind): programming faults and conductances are drawn from it.
    #[inline(always)]
    pub fn cell_key(&self, layer: u64, row: u32) -> [u64; 5] {
        [
            layer,
            self.neg as u64,
            row as u64,
            self.out as u64,
            self.slice as u64,
        ]
    }
}

/// The logical rows that drive the physical rows of a row tile, in physical order.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    /// Conv group whose input vector the rows index.
    pub group: u32,
    pub rows: Vec<u32>,
}

/// One crossbar row tile: its route and the column groups programmed on it.
#[derive(Debug, Clone)]
pub(crate) struct Tile {
    pub route: usize,
    /// Row tile index within its block (dense or compacted).
    pub t: u32,
    /// The logical row whose cells physical row i holds (the index table's view).
    pub written: Vec<u32>,
    /// The tile's programmed columns, column group after column group (every column
    /// group of a tile sees the same OUs, and a column's read does not depend on the
    /// others', so the datapath reads them in this order).
    pub cols: Vec<Column>,
    /// The cells as bit-planes, 64 physical rows (one word) after the other and, within
    /// them, one column after the other: bit i of cells[(w * cols + j) * cell_bits + c]
    /// is bit c of the level of column j's cell at physical row 64 * w + i. The planes a
    /// read of rows within one word needs are contiguous ([`Tile::word_planes`]).
    pub cells: Box<[u64]>,
    /// Words of a row's column set: ceil(cols / 64).
    pub col_words: usize,
    /// Per physical row i, the columns whose cell at row i is not 0 (after stuck-at
    /// faults): bit j of row_cols[i * col_words + j / 64]. The columns a read can find
    /// current in are the union over its open rows. Empty for a compacted tile (one
    /// column group, whose rows all hold a non-zero weight): every column is read.
    pub row_cols: Box<[u64]>,
    /// Where the skip sampler draws from alias tables (read noise on ideal cells of 1 or
    /// 2 bits, [`Tile::keeps_levels`]): every cell's level as a byte, row after row, each
    /// row padded with zeros to whole words of columns: levels[i * col_words * 64 + j] is
    /// the level of column j's cell at physical row i. A read adds its open rows' bytes
    /// to get the sums of 64 columns at a time ([`crate::datapath`]'s alias reads), where
    /// the planes take two popcounts a column. Empty otherwise.
    pub levels: Box<[u8]>,
    /// With per-cell device draws (variation or an off current) and a program under
    /// [`CONDUCTANCE_CACHE_BYTES`]: every cell's conductance, computed once from its key
    /// when the tile is programmed, row after row: g[i * cols.len() + j] for physical
    /// row i, column j (a read adds one open row to every column's current at a time).
    /// The very values a read would draw (same key, same arithmetic), so reads give the
    /// same bits with or without it. Empty otherwise.
    pub g: Box<[f64]>,
}

/// The most bytes a program's [`Tile::levels`] may take: a larger program's alias reads
/// sum their columns from the cell planes (the same sums, more slowly).
pub const LEVELS_BYTES: usize = 64 << 20;

/// Whether a program's tiles keep [`Tile::levels`]: read noise drawn by the skip sampler
/// ([`Device::skips`]) on cells of 1 or 2 bits, whose reads may draw from alias tables.
pub(crate) fn keeps_levels(device: &Device, cell_bits: u32) -> bool {
    device.skips() && matches!(cell_bits, 1 | 2)
}

/// Fills every tile's [`Tile::levels`] when the program keeps them ([`keeps_levels`])
/// and they take at most [`LEVELS_BYTES`].
fn keep_levels(tiles: &mut [Tile], w: &Writer) {
    use rayon::prelude::*;
    let bytes: usize = tiles.iter().map(Tile::levels_bytes).sum();
    if keeps_levels(w.device, w.map.cell_bits) && bytes <= LEVELS_BYTES {
        let cb = w.map.cell_bits as usize;
        tiles.par_iter_mut().for_each(|t| t.keep_levels(cb));
    }
}

/// The most bytes a program's cached conductances may take by default; a larger program
/// draws each cell's conductance at every read instead (the same values, more slowly).
pub const CONDUCTANCE_CACHE_BYTES: usize = 64 << 20;

static CACHE_LIMIT: AtomicUsize = AtomicUsize::new(CONDUCTANCE_CACHE_BYTES);

/// Sets the most bytes of cached conductances a program built from now on may hold (0:
/// none, every read draws). Results do not depend on it, only speed and memory; the
/// tests set 0 to compare the two ways of reading.
pub fn set_conductance_cache_limit(bytes: usize) {
    CACHE_LIMIT.store(bytes, Ordering::Relaxed);
}

/// The limit [`set_conductance_cache_limit`] set.
pub(crate) fn conductance_cache_limit() -> usize {
    CACHE_LIMIT.load(Ordering::Relaxed)
}

impl Tile {
    /// Builds a tile from its columns and their planes (`cell_bits` planes of `words`
    /// words each, [`Writer::column`]), in order.
    fn new(
        route: usize,
        t: u32,
        written: Vec<u32>,
        (cell_bits, words): (usize, usize),
        column_sets: bool,
        columns: impl Iterator<Item = (Column, Vec<u64>)>,
    ) -> Self {
        let (mut cols, mut per_column) = (Vec::new(), Vec::new());
        for (c, planes) in columns {
            cols.push(c);
            per_column.extend_from_slice(&planes);
        }
        let col_words = cols.len().div_ceil(64);
        let per_col = cell_bits * words;
        // Word-major: for each word, each column's planes of it.
        let mut cells = Vec::with_capacity(per_column.len());
        for w in 0..words {
            for col in per_column.chunks_exact(per_col) {
                cells.extend((0..cell_bits).map(|c| col[c * words + w]));
            }
        }
        let mut row_cols = vec![
            0u64;
            if column_sets {
                written.len() * col_words
            } else {
                0
            }
        ];
        if per_col > 0 && column_sets {
            for (j, col) in per_column.chunks_exact(per_col).enumerate() {
                for w in 0..words {
                    let mut any = (0..cell_bits).fold(0u64, |a, c| a | col[c * words + w]);
                    while any != 0 {
                        let i = w * 64 + any.trailing_zeros() as usize;
                        any &= any - 1;
                        row_cols[i * col_words + j / 64] |= 1u64 << (j % 64);
                    }
                }
            }
        }
        Tile {
            route,
            t,
            written,
            cols,
            cells: cells.into_boxed_slice(),
            col_words,
            row_cols: row_cols.into_boxed_slice(),
            levels: Box::default(),
            g: Box::default(),
        }
    }

    /// Bytes of [`Tile::levels`] for the tile's cells.
    fn levels_bytes(&self) -> usize {
        self.written.len() * self.col_words * 64
    }

    /// Fills [`Tile::levels`] from the cell planes.
    fn keep_levels(&mut self, cell_bits: usize) {
        let stride = self.col_words * 64;
        let mut levels = vec![0u8; self.levels_bytes()];
        for (i, row) in levels.chunks_exact_mut(stride).enumerate() {
            for (j, level) in row[..self.cols.len()].iter_mut().enumerate() {
                // At most 3: a byte holds the sum of 85 open rows' levels.
                *level = self.level(j, i, cell_bits) as u8;
            }
        }
        self.levels = levels.into_boxed_slice();
    }

    /// Cells of the tile: columns x physical rows.
    fn cell_count(&self) -> usize {
        self.cols.len() * self.written.len()
    }

    /// The `cell_bits` planes of column j over the 64 rows of word w.
    #[inline(always)]
    pub fn planes(&self, j: usize, w: usize, cell_bits: usize) -> &[u64] {
        &self.cells[(w * self.cols.len() + j) * cell_bits..][..cell_bits]
    }

    /// The CB planes of every column over the 64 rows of word w, column after column
    /// (none for CB = 0).
    #[inline(always)]
    pub fn word_planes<const CB: usize>(&self, w: usize) -> &[[u64; CB]] {
        if CB == 0 {
            return &[];
        }
        let n = self.cols.len();
        self.cells[w * n * CB..][..n * CB].as_chunks::<CB>().0
    }

    /// The level of column j's cell at physical row i.
    #[inline(always)]
    pub fn level(&self, j: usize, i: usize, cell_bits: usize) -> u32 {
        let planes = self.planes(j, i / 64, cell_bits);
        (0..cell_bits)
            .map(|c| (((planes[c] >> (i % 64)) & 1) as u32) << c)
            .sum()
    }

    /// Fills [`Tile::g`]: each cell's level read back from its planes, its conductance
    /// drawn from its key as [`Device::conductance`] does at a read.
    fn cache_conductances(&mut self, w: &Writer) {
        let cb = w.map.cell_bits as usize;
        let top = (1u32 << w.map.cell_bits) - 1;
        let g_off = w.device.g_off(top);
        let g_top = top as f64 + g_off;
        let ncols = self.cols.len();
        let mut g = vec![0.0; self.cell_count()];
        for (j, col) in self.cols.iter().enumerate() {
            for (i, &k) in self.written.iter().enumerate() {
                let level = self.level(j, i, cb);
                g[i * ncols + j] =
                    w.device
                        .conductance(col.cell_key(w.layer, k), level, g_off, g_top);
            }
        }
        self.g = g.into_boxed_slice();
    }
}

/// Caches the conductances of every tile of a program when the device draws them per
/// cell and they fit [`CONDUCTANCE_CACHE_BYTES`].
fn cache_conductances(tiles: &mut [Tile], w: &Writer) {
    use rayon::prelude::*;
    let cells: usize = tiles.iter().map(Tile::cell_count).sum();
    if !w.device.per_cell() || cells.saturating_mul(8) > conductance_cache_limit() {
        return;
    }
    tiles.par_iter_mut().for_each(|t| t.cache_conductances(w));
}

/// Every crossbar of one tiling of a layer.
#[derive(Debug, Clone)]
pub struct Program {
    pub(crate) routes: Vec<Route>,
    pub(crate) tiles: Vec<Tile>,
    /// Words of a bit-plane: ceil(crossbar.rows / 64).
    pub(crate) words: usize,
}

impl Program {
    /// Bytes the program holds on the heap (what [`crate::program_bytes`] bounds).
    pub fn heap_bytes(&self) -> usize {
        let routes: usize = self.routes.iter().map(|r| r.rows.len() * 4).sum();
        let tiles: usize = self
            .tiles
            .iter()
            .map(|t| {
                t.written.len() * 4
                    + t.cols.len() * std::mem::size_of::<Column>()
                    + t.cells.len() * 8
                    + t.row_cols.len() * 8
                    + t.levels.len()
                    + t.g.len() * 8
            })
            .sum();
        routes
            + tiles
            + self.routes.len() * std::mem::size_of::<Route>()
            + self.tiles.len() * std::mem::size_of::<Tile>()
    }
}

/// How cells are written: the device's stuck-at faults, keyed by the layer's name.
#[derive(Clone, Copy)]
pub(crate) struct Writer<'a> {
    pub map: &'a LayerMap,
    pub weights: &'a [i32],
    pub device: &'a Device,
    pub layer: u64,
    pub words: usize,
}

impl Writer<'_> {
    fn column(
        &self,
        group: u32,
        pol: Polarity,
        phys: u32,
        col: PhysCol,
        logical: &[u32],
    ) -> (Column, Vec<u64>) {
        let map = self.map;
        let (cb, words) = (map.cell_bits as usize, self.words);
        let top = (1u32 << map.cell_bits) - 1;
        let column = Column {
            out: group * map.cols_per_group + col.n,
            slice: col.slice,
            shift: col.slice * map.cell_bits,
            neg: pol == Polarity::Neg,
            read_word: Device::read_word(pol == Polarity::Neg, phys),
        };
        let mut planes = vec![0u64; cb * words];
        for (i, &k) in logical.iter().enumerate() {
            let c = map.cell_at(self.weights, group, pol, col, k);
            let mut c = self
                .device
                .programmed(column.cell_key(self.layer, k), c, top);
            while c != 0 {
                let b = c.trailing_zeros() as usize;
                planes[b * words + i / 64] |= 1u64 << (i % 64);
                c &= c - 1;
            }
        }
        (column, planes)
    }

    /// The physical columns of column group `cg_i` with their index in the polarity array.
    fn group_cols(&self, cg_i: usize) -> impl Iterator<Item = (u32, PhysCol)> + '_ {
        let map = self.map;
        let cg = &map.col_groups[cg_i];
        let block = &map.blocks[cg.block as usize];
        // Blocks of one (group, polarity) are consecutive: the column's offset in the
        // polarity array is the used columns of the blocks before it plus its place.
        let first_block = map
            .blocks
            .iter()
            .position(|b| b.group == block.group && b.polarity == block.polarity)
            .unwrap_or(0);
        let before: u32 = map.blocks[first_block..cg.block as usize]
            .iter()
            .map(|b| b.used_cols)
            .sum();
        let in_block: u32 = map.col_groups[block.col_groups.start..cg_i]
            .iter()
            .map(|g| g.width())
            .sum();
        cg.cols
            .iter()
            .enumerate()
            .map(move |(j, &c)| (before + in_block + j as u32, c))
    }
}

impl Program {
    /// The dense tiling: row tile t of every block holds logical rows t*X .. t*X+X.
    pub(crate) fn dense(w: &Writer) -> Self {
        let map = w.map;
        let tiles_per_block = map.dense_row_tiles();
        let mut routes = Vec::new();
        for group in 0..map.groups {
            for t in 0..tiles_per_block {
                routes.push(Route {
                    group,
                    rows: map.dense_tile_range(t).collect(),
                });
            }
        }
        let mut tiles = Vec::new();
        for block in &map.blocks {
            for t in 0..tiles_per_block {
                let route = (block.group * tiles_per_block + t) as usize;
                let rows = routes[route].rows.clone();
                let columns: Vec<_> = block
                    .col_groups
                    .clone()
                    .flat_map(|cg_i| w.group_cols(cg_i))
                    .map(|(phys, c)| w.column(block.group, block.polarity, phys, c, &rows))
                    .collect();
                tiles.push(Tile::new(
                    route,
                    t,
                    rows,
                    (map.cell_bits as usize, w.words),
                    true,
                    columns.into_iter(),
                ));
            }
        }
        cache_conductances(&mut tiles, w);
        keep_levels(&mut tiles, w);
        Program {
            routes,
            tiles,
            words: w.words,
        }
    }

    /// The compacted tiling: physical row i of compacted tile t of a column group holds
    /// logical row C_g[t*X + i] (the index table); the decoder routes its input.
    pub(crate) fn compacted(w: &Writer, comp: &Compression, decoder: Decoder) -> Self {
        let map = w.map;
        let x = map.xbar_rows;
        let mut routes = Vec::new();
        let mut tiles = Vec::new();
        for (bi, block) in map.blocks.iter().enumerate() {
            for t in 0..comp.block_tiles[bi] {
                for cg_i in block.col_groups.clone() {
                    let g = &comp.groups[cg_i];
                    let n = g.tile_rows(t, x);
                    if n == 0 {
                        continue;
                    }
                    let first = (t * x) as usize;
                    let written = g.rows[first..first + n as usize].to_vec();
                    let cols: Vec<_> = w
                        .group_cols(cg_i)
                        .map(|(phys, c)| w.column(block.group, block.polarity, phys, c, &written))
                        .collect();
                    routes.push(Route {
                        group: block.group,
                        rows: (0..n).map(|i| decoder(g, t * x + i)).collect(),
                    });
                    tiles.push(Tile::new(
                        routes.len() - 1,
                        t,
                        written,
                        (map.cell_bits as usize, w.words),
                        false,
                        cols.into_iter(),
                    ));
                }
            }
        }
        cache_conductances(&mut tiles, w);
        keep_levels(&mut tiles, w);
        Program {
            routes,
            tiles,
            words: w.words,
        }
    }
}
