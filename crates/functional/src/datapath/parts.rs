//! What every read of the datapath shares, below the reads and the OU walk: the
//! datapath's inputs ([`Datapath`]), the buffers a tile's reads use and write
//! ([`Reads`]), a read's rows and key ([`Span`], [`At`]), how a read turns a sum into
//! the ADC's input ([`Kind`]), when codes are shift-and-added ([`Flush`]), and the two
//! small sums every loop inlines ([`add_code`], [`plane_sum`]).

use crate::adc::Adc;
use crate::counts::CountTables;
use crate::device::Device;
use crate::program::Program;
use crate::rng::Ziggurat;
use crate::skip::{Laws, Skip};
use crossbar::Mode;
use engine::input::Pass;
use engine::{Granularity, PassPlan};

/// What one mode's datapath needs besides the program.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Datapath<'a> {
    pub program: &'a Program,
    pub plan: &'a PassPlan,
    pub mode: Mode,
    pub granularity: Granularity,
    pub ou_rows: u32,
    pub adc: Adc,
    /// Rows of each conv group's matrix.
    pub k: usize,
    pub cell_bits: usize,
    pub device: &'a Device,
    /// The layer's name as a key word of its draws.
    pub layer: u64,
    /// The laws of the skip sampler's classes of reads (None: reads draw per read).
    pub laws: Option<&'a Laws>,
    /// The counts of the fixed OUs' reads ([`CountTables`]), when tabled.
    pub counts: Option<&'a CountTables>,
}

/// What the reads of one tile use and write.
pub(crate) struct Reads {
    /// The digit planes of one cycle restricted to one OU.
    pub(super) digits: Vec<u64>,
    /// Per column of the tile being read: the sum of its codes since its last
    /// shift-and-add, each times `weight` (modulo 2^64).
    pub(super) codes: Vec<u64>,
    /// When `codes` are shift-and-added into Y.
    pub(super) flush: Flush,
    /// What a code is multiplied by as it is added to `codes`: its cycle's +-2^k
    /// ([`cycle_weight`], as a two's-complement word) when `flush` is [`Flush::Tile`],
    /// else 1 (the cycle's weight is applied by the shift-and-add).
    pub(super) weight: u64,
    /// Y of the vector, shift-and-added so far.
    pub(super) acc: Vec<i128>,
    /// The columns of the current OU read that carry current: bit j of live[j / 64].
    pub(super) live: Vec<u64>,
    /// The columns of an analog read with a non-zero sum, and the sum.
    pub(super) hits: Vec<(u32, u64)>,
    /// The standard normal draw of each of `hits` (with read noise).
    pub(super) draws: Vec<f64>,
    /// Per column, the current of a per-cell read with cached conductances.
    pub(super) currents: Vec<f64>,
    /// The open rows of a per-cell read, in row order: (the offset of the row's
    /// conductances in [`Tile::g`], its digit).
    pub(super) open: Vec<(usize, f64)>,
    /// read_noise * sqrt(S) for the small sums S (empty without read noise): the same
    /// product [`Device::noisy`] computes, looked up.
    pub(super) noise: Vec<f64>,
    /// The normal draw's tables.
    pub(super) zig: &'static Ziggurat,
    /// Whether the CPU has the features of [`Datapath::vector_native`] (checked once).
    pub(super) native: bool,
    /// The skip sampler's place in each class's stream.
    pub(super) skip: Skip,
    /// ADC conversions so far (a column of the tile per read with current), and those
    /// that clipped.
    pub(super) conversions: u64,
    pub(super) clips: u64,
    /// When calibrating: how many conversions saw each non-zero ideal sum (index: the
    /// sum; longer sums in the last entry).
    pub(super) hist: Option<Vec<u64>>,
    /// Alias draws through the general loop only (for tests: the results must not
    /// change).
    #[cfg(test)]
    pub(super) general: bool,
    /// Alias reads sum their columns from the cell planes even where the tile keeps the
    /// levels as bytes (for tests: the results must not change).
    #[cfg(test)]
    pub(super) plane_sums: bool,
}

/// When the codes a tile's columns add up are shift-and-added into Y: as late as the
/// sum of their magnitudes is sure to stay below 2^63 (a shift-and-add is 128-bit
/// arithmetic into an output that the columns of one weight's slices share: it is
/// costlier than the reads it sums).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Flush {
    /// After the tile's last input cycle of a pass: the codes carry their cycle's
    /// weight.
    Tile,
    /// After each input cycle of a tile.
    Cycle,
    /// After every read (codes so large that one cycle's sum could pass 2^63).
    Read,
}

impl Flush {
    pub(crate) fn of(dp: &Datapath) -> Self {
        // A tile's OUs in one cycle are at most its rows, each one code of at most
        // max_count * step; a pass's cycle weights 2^(c * dac.bits) sum to less than
        // 2^(cycles * dac.bits).
        let max_code = dp.adc.max_count.saturating_mul(dp.adc.step);
        let rows = (dp.program.words * 64) as u64;
        let Some(cycle) = max_code.checked_mul(rows).filter(|&c| c <= i64::MAX as u64) else {
            return Flush::Read;
        };
        let weights = 1u64.checked_shl(dp.plan.cycles * dp.plan.dac_bits);
        match weights.and_then(|w| cycle.checked_mul(w)) {
            Some(tile) if tile <= i64::MAX as u64 => Flush::Tile,
            _ => Flush::Cycle,
        }
    }
}

/// How a read turns a bitline sum into the ADC's input, decided once per vector.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    /// S' = S (an ideal device, or stuck-at faults only: they are in the cells).
    Exact,
    /// Read noise and IR drop on the integer sum: a draw only for a read with current.
    Analog,
    /// [`Kind::Analog`] with read noise drawn by the skip sampler ([`crate::skip`]).
    Skip,
    /// Off current or variation: each open cell's conductance.
    PerCell,
    /// A draw from the error table's row of (open, S).
    Table,
}

impl Kind {
    pub(super) fn of(d: &Device) -> Self {
        if d.error_table.is_some() {
            Kind::Table
        } else if d.per_cell() {
            Kind::PerCell
        } else if d.analog() {
            Kind::Analog
        } else {
            Kind::Exact
        }
    }
}

/// The signed weight of input cycle c in the shift-and-add, as (k, negative) for
/// +-2^k: 2^(c*dac.bits), or -2^(B-1) for the sign cycle of a two's-complement pass read
/// one bit at a time, and negated in the negative pass of sign-magnitude.
pub(super) fn cycle_weight(plan: &PassPlan, pass: Pass, c: u32) -> (u32, bool) {
    let k = c * plan.dac_bits;
    match pass {
        Pass::TwosComplement { bits } if plan.dac_bits == 1 && c == bits - 1 => (k, true),
        Pass::Negative => (k, true),
        _ => (k, false),
    }
}

/// Where a read happens: the fields of its random key besides the column.
#[derive(Clone, Copy)]
pub(super) struct At {
    /// [`Device::read_tile`] of the tile, vector and pass (0 for exact reads).
    pub(super) tile_key: u64,
    /// The tile's index in the program.
    pub(super) tile: usize,
    pub(super) cycle: u32,
    /// The cycle's weight +-2^shift ([`cycle_weight`]).
    pub(super) shift: u32,
    pub(super) negative: bool,
}

/// Adds a code times `weight` to a column's sum of codes (modulo 2^64, [`Reads::codes`]).
#[inline(always)]
pub(super) fn add_code(codes: &mut u64, code: u64, weight: u64) {
    *codes = codes.wrapping_add(code.wrapping_mul(weight));
}

/// sum over the cell planes c of popcount(x & planes[c]) << c: a column's bitline sum
/// for the one-bit digits `x` of the 64 rows its `planes` cover ([`Tile::planes`]).
#[inline(always)]
pub(super) fn plane_sum(planes: &[u64], x: u64) -> u64 {
    planes
        .iter()
        .enumerate()
        .fold(0u64, |s, (c, &p)| s + (((x & p).count_ones() as u64) << c))
}

/// The rows of one OU read: words wl..=wh of the digit planes, and its key.
#[derive(Clone, Copy)]
pub(super) struct Span {
    pub(super) wl: usize,
    pub(super) wh: usize,
    pub(super) digit_bits: usize,
    /// The OU's index within its (tile, column group).
    pub(super) ou_index: u64,
    /// [`Device::read_base`] of the tile and cycle (0 for exact reads).
    pub(super) base: u64,
}
