//! Per-OU tables of ADC counts for the fixed OUs of the dense and weight modes
//! (docs/functional.md, "The datapath in the code's words"), for per-cell reads that
//! draw nothing.
//!
//! In those modes an OU's rows are fixed (rows lo..lo + ou.rows of its tile), and with
//! one-bit digits a read's open rows are a subset of them: its mask. Without a draw, each
//! column's current is the sum of the cached conductances of the open rows in row order
//! from 0.0, and its code a function of that current, the open rows' count (IR drop, the
//! reference column's off current) and the ADC: a function of the mask. The table holds,
//! per OU, per mask and per column, that count, computed once with the very additions and
//! conversion of a read ([`Datapath::read_cached`](crate::datapath)): a subset's sum is
//! the sum of the subset without its highest row plus that row's conductance, the order
//! a read adds them in. A read is then one row of bytes added to the codes.

use crate::adc::Adc;
use crate::device::Device;
use crate::program::Program;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most bytes a mode's count tables may take by default; a program that needs more
/// reads its OUs a block of columns at a time instead (the same bits, more slowly).
pub const COUNT_TABLE_BYTES: usize = 64 << 20;

/// OUs of more rows than this are never tabled (2^rows masks per column).
pub(crate) const MAX_TABLE_ROWS: usize = 12;

static TABLE_LIMIT: AtomicUsize = AtomicUsize::new(COUNT_TABLE_BYTES);

/// Sets the most bytes of count tables a mode's datapath built from now on may hold (0:
/// none). Results do not depend on it, only speed and memory; the tests set 0 to compare
/// the two ways of reading.
pub fn set_count_table_limit(bytes: usize) {
    TABLE_LIMIT.store(bytes, Ordering::Relaxed);
}

/// The limit [`set_count_table_limit`] set.
pub(crate) fn table_limit() -> usize {
    TABLE_LIMIT.load(Ordering::Relaxed)
}

/// Every fixed OU's counts of one program read by one mode's ADC.
#[derive(Debug)]
pub(crate) struct CountTables {
    /// Per tile, the index in `ous` of its first OU.
    tiles: Vec<usize>,
    /// Per OU: where its counts start in `counts` and its clips in `clips`.
    ous: Vec<(usize, usize)>,
    /// Per OU, per mask, per column: the count (at most 255).
    counts: Vec<u8>,
    /// Per OU, per mask: how many of its columns' conversions clip.
    clips: Vec<u32>,
    /// log2 of the ADC step: a code is count << step_shift.
    pub step_shift: u32,
}

impl CountTables {
    /// The tables of `program`'s OUs of `ou` rows, when its reads go through
    /// [`Datapath::read_cached`](crate::datapath) with one-bit digits, `adc` counts fit a
    /// byte and its step is a power of two, the tables fit the limit
    /// ([`set_count_table_limit`]), and `reads` (a sample's reads of each OU) are at least
    /// the masks of an OU: building the table costs about one sample's reads.
    pub fn build(
        program: &Program,
        device: &Device,
        adc: Adc,
        (ou, cell_bits, dac_bits): (usize, usize, u32),
        reads: u64,
    ) -> Option<Self> {
        let worth = (1..=MAX_TABLE_ROWS).contains(&ou) && reads >= 1 << ou;
        let fits = adc.max_count <= u8::MAX as u64 && adc.step.is_power_of_two();
        let cached = program.tiles.iter().all(|t| !t.g.is_empty());
        if !(worth && fits && dac_bits == 1 && cached && reads_in_blocks(device, &adc)) {
            return None;
        }
        let masks = |m: usize| 1usize << m;
        let ou_rows = |n: usize| (0..n).step_by(ou).map(move |lo| (n - lo).min(ou));
        let bytes: usize = program
            .tiles
            .iter()
            .map(|t| {
                let n = program.routes[t.route].rows.len();
                ou_rows(n)
                    .map(|m| masks(m) * (t.cols.len() + 4))
                    .sum::<usize>()
            })
            .sum();
        if bytes > table_limit() {
            return None;
        }
        let top = (1u32 << cell_bits) - 1;
        // The reference column's current per open row (one-bit digits).
        let g_ref = device.reference_off(top);
        let mut t = CountTables {
            tiles: Vec::with_capacity(program.tiles.len()),
            ous: Vec::new(),
            counts: Vec::new(),
            clips: Vec::new(),
            step_shift: adc.step.trailing_zeros(),
        };
        let mut sums = Vec::new();
        for tile in &program.tiles {
            t.tiles.push(t.ous.len());
            let ncols = tile.cols.len();
            let n = program.routes[tile.route].rows.len();
            for (o, m) in ou_rows(n).enumerate() {
                let lo = o * ou;
                t.ous.push((t.counts.len(), t.clips.len()));
                // Each mask's currents: the sum without its highest row plus that row's
                // conductances (mask 0: 0.0, no current).
                sums.clear();
                sums.resize(masks(m) * ncols, 0.0f64);
                for mask in 1..masks(m) {
                    let high = usize::BITS - 1 - mask.leading_zeros();
                    let rest = mask ^ (1 << high);
                    let row = &tile.g[(lo + high as usize) * ncols..][..ncols];
                    for j in 0..ncols {
                        sums[mask * ncols + j] = sums[rest * ncols + j] + row[j];
                    }
                }
                for mask in 0..masks(m) {
                    // One-bit digits: the open rows and the drive are the mask's rows.
                    let open = mask.count_ones();
                    let conv = Convert {
                        adc,
                        att: device.attenuation(open),
                        off: open as f64 * g_ref,
                        shift: 0,
                        negate: 0,
                    };
                    let mut clips = 0u32;
                    for &c in &sums[mask * ncols..][..ncols] {
                        let (code, clip) = conv.code::<false>(c);
                        clips += clip as u32;
                        t.counts.push((code >> t.step_shift) as u8);
                    }
                    t.clips.push(clips);
                }
            }
        }
        Some(t)
    }

    /// The counts of every column of OU `ou` of tile `tile` read with open rows `mask`,
    /// and how many of them clip.
    #[inline(always)]
    pub fn read(&self, tile: usize, ou: usize, mask: usize, ncols: usize) -> (&[u8], u32) {
        let (counts, clips) = self.ous[self.tiles[tile] + ou];
        (
            &self.counts[counts + mask * ncols..][..ncols],
            self.clips[clips + mask],
        )
    }

    /// Bytes the tables hold on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.tiles.len() * 8 + self.ous.len() * 16 + self.counts.len() + self.clips.len() * 4
    }
}

/// Whether a per-cell read of cached conductances goes through
/// [`Datapath::read_cached`](crate::datapath): it draws nothing (no read noise, no converter errors or DAC
/// noise) and the ADC's counts fit 31 bits.
pub(crate) fn reads_in_blocks(dev: &Device, adc: &Adc) -> bool {
    dev.per_cell() && dev.read_noise == 0.0 && dev.converter.is_ideal() && adc.max_count < 1 << 31
}

/// What turns a column's current into its code in [`Datapath::read_cached`](crate::datapath).
#[derive(Clone, Copy)]
pub(crate) struct Convert {
    /// max_count < 2^31.
    pub adc: Adc,
    pub att: f64,
    pub off: f64,
    /// The read's weight (`Reads::weight` of the datapath) as 2^shift, negated when `negate` is all
    /// ones (0 otherwise).
    pub shift: u32,
    pub negate: u64,
}

impl Convert {
    /// (ADC(att * I - off), whether it clips): [`Adc::convert_real`] of S' (UNIT: a
    /// step of 1), its count truncated through 32 bits.
    #[inline(always)]
    pub(crate) fn code<const UNIT: bool>(&self, current: f64) -> (u64, bool) {
        let s = self.att * current - self.off;
        let clip = self.adc.clips_real(s);
        if UNIT {
            (self.adc.count_below_2_31(s), clip)
        } else {
            let step = self.adc.step;
            (self.adc.count_below_2_31(s / step as f64) * step, clip)
        }
    }
}
