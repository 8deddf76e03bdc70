//! One input vector through one mode's OU reads (docs/functional.md, "The datapath in the code's words" and "Non-ideal devices").
//!
//! Per pass, the pass value u of every routed row is cut into bit-planes over the
//! physical rows of its tile. Per input cycle, the digit planes of that cycle and the
//! OUs of the mode (fixed slices of the tile, the next ou.rows driven rows, or the whole
//! tile) give each bitline sum S_j = sum over the OU's rows of d * c as popcounts of
//! digit plane x cell plane. A non-ideal device turns S_j into S'_j ([`Device`]); the
//! ADC turns it into a code; the shift-and-add weighs the code by its cycle, slice,
//! polarity and pass.

mod alias_reads;

use crate::adc::Adc;
use crate::alias::{Lookup, Row, CLIP};
use crate::counts::{reads_in_blocks, Convert, CountTables};
use crate::device::Device;
use crate::program::{Program, Route, Tile};
use crate::rng::{mix, normal_with, wymix, ziggurat, Ziggurat, WY_STEP};
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

/// Per-thread buffers of the datapath.
pub(crate) struct Scratch {
    /// Bit b of the pass values of every route: planes[(route * B + b) * words + w].
    planes: Vec<u64>,
    reads: Reads,
}

/// What the reads of one tile use and write.
struct Reads {
    /// The digit planes of one cycle restricted to one OU.
    digits: Vec<u64>,
    /// Per column of the tile being read: the sum of its codes since its last
    /// shift-and-add, each times `weight` (modulo 2^64).
    codes: Vec<u64>,
    /// When `codes` are shift-and-added into Y.
    flush: Flush,
    /// What a code is multiplied by as it is added to `codes`: its cycle's +-2^k
    /// ([`cycle_weight`], as a two's-complement word) when `flush` is [`Flush::Tile`],
    /// else 1 (the cycle's weight is applied by the shift-and-add).
    weight: u64,
    /// Y of the vector, shift-and-added so far.
    acc: Vec<i128>,
    /// The columns of the current OU read that carry current: bit j of live[j / 64].
    live: Vec<u64>,
    /// The columns of an analog read with a non-zero sum, and the sum.
    hits: Vec<(u32, u64)>,
    /// The standard normal draw of each of `hits` (with read noise).
    draws: Vec<f64>,
    /// Per column, the current of a per-cell read with cached conductances.
    currents: Vec<f64>,
    /// The open rows of a per-cell read, in row order: (the offset of the row's
    /// conductances in [`Tile::g`], its digit).
    open: Vec<(usize, f64)>,
    /// read_noise * sqrt(S) for the small sums S (empty without read noise): the same
    /// product [`Device::noisy`] computes, looked up.
    noise: Vec<f64>,
    /// The normal draw's tables.
    zig: &'static Ziggurat,
    /// Whether the CPU has the features of [`Datapath::vector_native`] (checked once).
    native: bool,
    /// The skip sampler's place in each class's stream.
    skip: Skip,
    /// ADC conversions so far (a column of the tile per read with current), and those
    /// that clipped.
    conversions: u64,
    clips: u64,
    /// When calibrating: how many conversions saw each non-zero ideal sum (index: the
    /// sum; longer sums in the last entry).
    hist: Option<Vec<u64>>,
    /// Alias draws through the general loop only (for tests: the results must not
    /// change).
    #[cfg(test)]
    general: bool,
}

/// Whether the CPU has the features of [`Datapath::vector_native`].
fn native() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("popcnt")
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("lzcnt")
        && std::arch::is_x86_feature_detected!("sse4.1");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

impl Scratch {
    pub fn new(dp: &Datapath, outputs: usize) -> Self {
        let b = dp.plan.applied_bits as usize;
        let w = dp.program.words;
        let cols = dp.program.tiles.iter().map(|t| t.cols.len()).max();
        let cols = cols.unwrap_or(0);
        Scratch {
            planes: vec![0; dp.program.routes.len() * b * w],
            reads: Reads {
                digits: vec![0; dp.plan.dac_bits as usize * w],
                // Whole words of columns: a read's loop takes 64 sums at a time.
                codes: vec![0; cols.div_ceil(64) * 64],
                flush: Flush::of(dp),
                weight: 1,
                acc: vec![0; outputs],
                live: vec![0; cols.div_ceil(64)],
                hits: vec![(0, 0); cols],
                draws: vec![0.0; cols],
                currents: vec![0.0; cols],
                open: vec![(0, 0.0); dp.program.words * 64],
                noise: noise_table(dp),
                zig: ziggurat(),
                native: native(),
                skip: Skip::new(dp.laws),
                conversions: 0,
                clips: 0,
                hist: None,
                #[cfg(test)]
                general: false,
            },
        }
    }

    /// A scratch that also records every non-zero ideal sum of an exact read up to
    /// `top` (larger ones count as `top`): the histogram of a calibration.
    pub fn recording(dp: &Datapath, outputs: usize, top: usize) -> Self {
        let mut s = Scratch::new(dp, outputs);
        s.reads.hist = Some(vec![0; top + 1]);
        s
    }

    /// (ADC conversions, of which clipped) since the scratch was made.
    pub fn clip_counts(&self) -> (u64, u64) {
        (self.reads.conversions, self.reads.clips)
    }

    /// The histogram of a [`Scratch::recording`] (empty otherwise).
    pub fn take_histogram(&mut self) -> Vec<u64> {
        self.reads.hist.take().unwrap_or_default()
    }

    /// Shift-and-adds the codes at `flush` rather than at the latest point they fit 64
    /// bits (for tests: the results must not change).
    #[cfg(test)]
    pub fn flush_at(&mut self, flush: Flush) {
        self.reads.flush = flush;
    }

    /// Reads without the CPU features of [`Datapath::vector_native`], and draws from
    /// alias tables through the loop of any read's shape and any table's size rather
    /// than the specialised ones (for tests: the results must not change).
    #[cfg(test)]
    pub fn general_reads(&mut self) {
        self.reads.native = false;
        self.reads.general = true;
    }

    /// Y of the last vector read.
    pub fn acc(&mut self) -> &mut [i128] {
        &mut self.reads.acc
    }
}

/// Entries of the table of read_noise * sqrt(S) at most (8 KiB): larger sums are
/// computed.
pub(crate) const NOISE_TABLE: usize = 1024;

/// read_noise * sqrt(S) for S = 0 .. the largest sum of a read (capped at
/// [`NOISE_TABLE`] entries), empty without read noise.
fn noise_table(dp: &Datapath) -> Vec<f64> {
    let rn = dp.device.read_noise;
    if rn == 0.0 {
        return Vec::new();
    }
    let rows = (dp.program.words * 64) as u64;
    let top = (1u64 << dp.cell_bits) - 1;
    let digit = (1u64 << dp.plan.dac_bits) - 1;
    let len = rows
        .saturating_mul(top)
        .saturating_mul(digit)
        .saturating_add(1)
        .min(NOISE_TABLE as u64);
    (0..len).map(|s| rn * (s as f64).sqrt()).collect()
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
enum Kind {
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
    fn of(d: &Device) -> Self {
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
fn cycle_weight(plan: &PassPlan, pass: Pass, c: u32) -> (u32, bool) {
    let k = c * plan.dac_bits;
    match pass {
        Pass::TwosComplement { bits } if plan.dac_bits == 1 && c == bits - 1 => (k, true),
        Pass::Negative => (k, true),
        _ => (k, false),
    }
}

/// Where a read happens: the fields of its random key besides the column.
#[derive(Clone, Copy)]
struct At {
    /// [`Device::read_tile`] of the tile, vector and pass (0 for exact reads).
    tile_key: u64,
    /// The tile's index in the program.
    tile: usize,
    cycle: u32,
    /// The cycle's weight +-2^shift ([`cycle_weight`]).
    shift: u32,
    negative: bool,
}

impl Datapath<'_> {
    /// Y of input vector number `index` of the layer (`vector`: groups * K inputs) into
    /// the scratch's accumulator (groups * Cout/G outputs), before the two's-complement
    /// correction of multi-bit digits.
    pub fn vector(&self, vector: &[i32], index: u64, s: &mut Scratch) {
        #[cfg(target_arch = "x86_64")]
        if s.reads.native {
            // SAFETY: the CPU has been checked to support these features.
            unsafe { self.vector_native(vector, index, s) };
            return;
        }
        self.vector_any(vector, index, s)
    }

    /// [`Self::vector`] compiled with popcnt, AVX2, BMI1/2 and lzcnt (most of the work is
    /// popcounts, bit scans and shifts by a variable count; BMI2's shifts need no count
    /// register). No fused multiply-add is enabled: floating-point results are the same
    /// bits as without.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,avx2,bmi1,bmi2,lzcnt,sse4.1")]
    unsafe fn vector_native(&self, vector: &[i32], index: u64, s: &mut Scratch) {
        self.vector_any(vector, index, s)
    }

    #[inline(always)]
    fn vector_any(&self, vector: &[i32], index: u64, s: &mut Scratch) {
        s.reads.acc.iter_mut().for_each(|a| *a = 0);
        let plan = self.plan;
        let bits = plan.applied_bits as usize;
        let words = self.program.words;
        let kind = match (Kind::of(self.device), self.laws) {
            (Kind::Analog, Some(_)) => Kind::Skip,
            (kind, _) => kind,
        };
        if kind == Kind::Skip {
            s.reads.skip.start(self.device.seed, self.layer, index);
        }
        let lookup = self.alias_lookup(kind, &s.reads);
        for (p, &pass) in plan.passes.iter().enumerate() {
            s.planes.iter_mut().for_each(|p| *p = 0);
            for (r, route) in self.program.routes.iter().enumerate() {
                let inputs = &vector[route.group as usize * self.k..][..self.k];
                let planes = &mut s.planes[r * bits * words..][..bits * words];
                for (i, &row) in route.rows.iter().enumerate() {
                    let mut u = pass.value(inputs[row as usize]);
                    while u != 0 {
                        let b = u.trailing_zeros() as usize;
                        planes[b * words + i / 64] |= 1u64 << (i % 64);
                        u &= u - 1;
                    }
                }
            }
            // Tile after tile, each through every cycle while its cells are in cache
            // (the shift-and-add is integer arithmetic: the order does not matter).
            for (ti, tile) in self.program.tiles.iter().enumerate() {
                let route = &self.program.routes[tile.route];
                let planes = &s.planes[tile.route * bits * words..][..bits * words];
                let tile_key = match kind {
                    Kind::Exact => 0,
                    _ => self
                        .device
                        .read_tile(self.layer, route.group, tile.t, index, p as u64),
                };
                for c in 0..plan.cycles {
                    let (shift, negative) = cycle_weight(plan, pass, c);
                    let at = At {
                        tile_key,
                        tile: ti,
                        cycle: c,
                        shift,
                        negative,
                    };
                    s.reads.weight = match s.reads.flush {
                        // +-2^shift modulo 2^64 (shift < 63 for a tile's flush).
                        Flush::Tile if negative => (1u64 << shift).wrapping_neg(),
                        Flush::Tile => 1u64 << shift,
                        _ => 1,
                    };
                    let tc = TileCycle {
                        tile,
                        route,
                        planes,
                        at,
                        kind,
                    };
                    match lookup {
                        Some(l) => self.alias_cycle(tc, l, &mut s.reads),
                        None => self.tile_cycle::<0, 0>(tc, None, &mut s.reads),
                    }
                }
                if s.reads.flush == Flush::Tile {
                    self.shift_add::<true>(tile, 0, false, &mut s.reads);
                }
            }
        }
    }

    /// Every OU read of one tile in one input cycle, then the shift-and-add of the sum
    /// of each column's codes. CB > 0: the reads draw from `lookup`, their tile's cells
    /// of CB bits, its tables of 2^KB buckets (0: any) ([`Self::alias_cycle`]).
    #[inline(always)]
    fn tile_cycle<const CB: usize, const KB: u64>(
        &self,
        tc: TileCycle,
        lookup: Option<&Lookup>,
        r: &mut Reads,
    ) {
        let TileCycle {
            tile,
            route,
            planes,
            at,
            kind,
        } = tc;
        let n = route.rows.len();
        let words = self.program.words;
        let dac = self.plan.dac_bits as usize;
        let bits = self.plan.applied_bits as usize;
        let first = at.cycle as usize * dac;
        let digit_bits = dac.min(bits - first);
        let digit =
            |w: usize| (0..digit_bits).fold(0u64, |a, d| a | planes[(first + d) * words + w]);
        // A read carries current only where some row's digit is non-zero.
        if (0..words).all(|w| digit(w) == 0) {
            return;
        }
        // The key words shared by every read of this tile and cycle, hashed once.
        let base = match kind {
            Kind::Exact => 0,
            _ => Device::read_cycle(at.tile_key, at.cycle),
        };
        let ou = self.ou_rows as usize;
        let cyc = Cycle {
            planes,
            first,
            digit_bits,
            base,
            kind,
            at,
            lookup,
        };
        match self.mode {
            Mode::Ideal => self.ou_read::<CB, KB>(tile, &cyc, 0, n, 0, r),
            Mode::Dense | Mode::Weight => {
                for (j, lo) in (0..n).step_by(ou).enumerate() {
                    self.ou_read::<CB, KB>(tile, &cyc, lo, (lo + ou).min(n), j as u64, r);
                }
            }
            Mode::Activation | Mode::Sre => {
                // The next ou.rows driven rows form an OU; the undriven rows between
                // them have a zero digit and add nothing to the physical span read.
                let driven = |w: usize| match self.granularity {
                    Granularity::Value => (0..bits).fold(0u64, |a, b| a | planes[b * words + w]),
                    Granularity::Bit => digit(w),
                };
                let (mut count, mut lo, mut j) = (0, 0, 0);
                for w in 0..words {
                    let mut m = driven(w);
                    while m != 0 {
                        let i = w * 64 + m.trailing_zeros() as usize;
                        m &= m - 1;
                        if count == 0 {
                            lo = i;
                        }
                        count += 1;
                        if count == ou {
                            self.ou_read::<CB, KB>(tile, &cyc, lo, i + 1, j, r);
                            count = 0;
                            j += 1;
                        }
                    }
                }
                if count > 0 {
                    self.ou_read::<CB, KB>(tile, &cyc, lo, n, j, r);
                }
            }
        }
        if r.flush == Flush::Cycle {
            self.shift_add::<false>(tile, at.shift, at.negative, r);
        }
    }

    /// Shift-and-add: a column's codes (SIGNED: a sum of weighted codes below 2^63 in
    /// magnitude, [`Flush::Tile`]; else a sum of codes), weighted by its slice, its
    /// polarity and 2^shift (negated when `negative`), into Y, and the sums set to 0
    /// (integer arithmetic modulo 2^128: the order and the grouping of the reads do not
    /// matter).
    #[inline(always)]
    fn shift_add<const SIGNED: bool>(
        &self,
        tile: &Tile,
        shift: u32,
        negative: bool,
        r: &mut Reads,
    ) {
        let ncols = tile.cols.len();
        for (col, codes) in tile.cols.iter().zip(&mut r.codes[..ncols]) {
            let c = std::mem::take(codes);
            if c != 0 {
                // c * 2^(slice shift + shift) modulo 2^128 (0 from 128 bits on),
                // subtracted for a negative column or weight, not for both.
                let c = if SIGNED { c as i64 as i128 } else { c as i128 };
                let v = c.checked_shl(col.shift + shift).unwrap_or(0);
                let a = &mut r.acc[col.out as usize];
                *a = if col.neg != negative {
                    a.wrapping_sub(v)
                } else {
                    a.wrapping_add(v)
                };
            }
        }
    }

    /// One OU read of rows [lo, hi) of `tile`: every column's code added to its sum
    /// (CB and KB as in [`Self::tile_cycle`]).
    #[inline(always)]
    fn ou_read<const CB: usize, const KB: u64>(
        &self,
        tile: &Tile,
        cyc: &Cycle,
        lo: usize,
        hi: usize,
        ou_index: u64,
        r: &mut Reads,
    ) {
        let (planes, first, digit_bits) = (cyc.planes, cyc.first, cyc.digit_bits);
        let words = self.program.words;
        if lo >= hi {
            return;
        }
        // The digit planes of this cycle restricted to rows [lo, hi).
        let (wl, wh) = (lo / 64, (hi - 1) / 64);
        let mut any = 0u64;
        for w in wl..=wh {
            let mut m = !0u64;
            if w == wl {
                m &= !0u64 << (lo % 64);
            }
            if w == wh {
                m &= !0u64 >> (63 - (hi - 1) % 64);
            }
            for d in 0..digit_bits {
                let v = planes[(first + d) * words + w] & m;
                r.digits[d * words + w] = v;
                any |= v;
            }
        }
        if any == 0 {
            return;
        }
        r.conversions += tile.cols.len() as u64;
        // Every column group of a tile sees the same OUs (a compacted tile holds one
        // group; ideal reads all used columns of the block at once), and a column's read
        // does not depend on the others': the columns are read in their order in the
        // tile.
        let span = Span {
            wl,
            wh,
            digit_bits,
            ou_index,
            base: cyc.base,
        };
        match (cyc.kind, self.counts) {
            _ if CB > 0 => match (digit_bits, wh - wl, cyc.lookup) {
                (1, 0, Some(l)) => self.alias_read::<CB, 1, KB>(tile, span, l, r),
                (1, 1, Some(l)) => self.alias_read::<CB, 2, KB>(tile, span, l, r),
                _ => self.read_live_apart(tile, span, cyc.kind, r),
            },
            (Kind::Exact | Kind::Analog | Kind::Skip, _) => self.read_live(tile, span, cyc.kind, r),
            (Kind::PerCell, Some(t)) => self.read_counts(t, tile, cyc.at.tile, (lo, hi), span, r),
            (kind, _) => self.read_device(tile, span, kind, r),
        }
        if r.flush == Flush::Read {
            self.shift_add::<false>(tile, cyc.at.shift, cyc.at.negative, r);
        }
    }

    /// The integer bitline sum of column j of `tile` over the rows whose digits are in
    /// `digits`.
    #[inline(always)]
    fn ideal_sum(&self, tile: &Tile, j: usize, span: Span, digits: &[u64]) -> u64 {
        let (words, cb) = (self.program.words, self.cell_bits);
        if span.wl == span.wh && span.digit_bits == 1 {
            // The common read: one-bit digits, an OU within one word.
            return plane_sum(tile.planes(j, span.wl, cb), digits[span.wl]);
        }
        let mut sum = 0u64;
        for w in span.wl..=span.wh {
            let planes = tile.planes(j, w, cb);
            for d in 0..span.digit_bits {
                let x = digits[d * words + w];
                if x != 0 {
                    sum += plane_sum(planes, x) << d;
                }
            }
        }
        sum
    }

    /// One read of every column of `tile` with ideal cells (stuck-at faults are in the
    /// cells), with read noise and IR drop when `analog`: code = ADC(S), or
    /// ADC([`Device::analog_sum`]) with its per-OU factors hoisted. In a dense tile only
    /// the columns with a non-zero cell in an open row are read: every other column's
    /// sum is 0, its code 0, and it draws nothing (no off current without a ratio); a
    /// read without current draws nothing either.
    #[inline(always)]
    fn read_live(&self, tile: &Tile, span: Span, kind: Kind, r: &mut Reads) {
        #[cfg(target_arch = "x86_64")]
        if r.native {
            // SAFETY: `native` is set only when the CPU has the features.
            unsafe { self.read_live_native(tile, span, kind, r) };
            return;
        }
        self.read_live_body(tile, span, kind, r)
    }

    /// [`Self::read_live_body`] out of line, with the CPU features of
    /// [`Self::vector_native`]: its loops get the registers to themselves rather than
    /// sharing them with the whole of the vector's walk (which spilled its pointers).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,avx2,bmi1,bmi2,lzcnt,sse4.1")]
    #[inline(never)]
    unsafe fn read_live_native(&self, tile: &Tile, span: Span, kind: Kind, r: &mut Reads) {
        self.read_live_body(tile, span, kind, r)
    }

    /// The body of [`Self::read_live`].
    #[inline(always)]
    fn read_live_body(&self, tile: &Tile, span: Span, kind: Kind, r: &mut Reads) {
        let dev = self.device;
        let open = self.live(tile, span, r);
        let sets = !tile.row_cols.is_empty();
        if kind == Kind::Exact {
            if r.hist.is_some() {
                // Calibration: each non-zero sum recorded, then converted.
                let n = self.sums::<HITS>(tile, span, sets, r);
                let Reads {
                    hist,
                    hits,
                    codes,
                    clips,
                    weight,
                    ..
                } = r;
                if let Some(h) = hist.as_mut() {
                    let top = h.len() - 1;
                    for &(j, s) in &hits[..n] {
                        h[(s as usize).min(top)] += 1;
                        *clips += self.adc.clips(s) as u64;
                        add_code(&mut codes[j as usize], self.adc.convert(s), *weight);
                    }
                }
                return;
            }
            // code = ADC(S), added to the column's sum as it is read.
            self.sums::<EXACT>(tile, span, sets, r);
            return;
        }
        // The sums first, then the draws of the columns with current: every draw is a
        // chain of its own, and a loop that holds nothing else lets the CPU overlap them.
        // The common shapes of a read get loops of their own (no per-column branch on
        // the shape).
        if let (Kind::Skip, Some(lookup)) = (kind, self.laws.and_then(|l| l.lookup.as_ref())) {
            // Each sum's code drawn from its class's alias table as it is read, in the
            // loop of any shape and table (the common shapes take [`Self::alias_cycle`]).
            let state = alias_reads::alias_state(tile, span, &r.live[..tile.col_words]);
            self.alias_codes::<0, 1, 0>(tile, span, r, lookup.row(open), state);
            return;
        }
        let n = self.sums::<HITS>(tile, span, sets, r);
        let att = dev.attenuation(open);
        // The skip sampler settles the reads of its classes; the others (left at the
        // front of the hits) draw their own noise below, as the per-read sampler does.
        let n = match kind {
            Kind::Skip => self.skip_codes(open, att, n, r),
            _ => n,
        };
        let noisy = dev.read_noise > 0.0;
        if noisy {
            // The standard normal draws z' first, a loop of integer work and table
            // lookups, then the arithmetic of the reads: two short chains per column.
            let ou = span.ou_index;
            for (z, &(j, _)) in r.draws.iter_mut().zip(&r.hits[..n]) {
                let col = &tile.cols[j as usize];
                let key = Device::read_hash(span.base, col.read_word, ou);
                *z = normal_with(r.zig, key);
            }
        }
        // code = ADC(att * S'), S' = I + (read_noise * sqrt(I)) * z' (Device::noisy).
        match (noisy, self.adc.unit()) {
            (true, true) => self.codes::<{ Codes::NoisyUnit as u8 }>(r, n, att),
            (true, false) => self.codes::<{ Codes::Noisy as u8 }>(r, n, att),
            (false, _) => self.codes::<{ Codes::Attenuated as u8 }>(r, n, att),
        }
    }

    /// Adds the code of each of the first `n` hits of a read to its column's sum under
    /// the skip sampler when its class is settled by it ([`Skip::code`]); the hits whose
    /// class draws per read or is beyond the table are moved, in order, to the front of
    /// the hits: their count. (Kept apart, they go through the per-read sampler's loops,
    /// which overlap the draws of many columns: the same bits as that sampler's.)
    ///
    /// A settled read clips exactly when its noise-free sum att * S does: a class whose
    /// reads can clip draws per read unless its sum is noise-free ([`crate::skip`]).
    #[inline(always)]
    fn skip_codes(&self, open: u32, att: f64, n: usize, r: &mut Reads) -> usize {
        let Some(laws) = self.laws else { return n };
        // Without a branch on which reads draw per read (their classes mix at random).
        let mut direct = 0;
        for i in 0..n {
            let (j, sum) = r.hits[i];
            let c = laws.class(sum, open).unwrap_or(laws.len());
            let (code, per_read) = r.skip.code(laws, c);
            let w = if per_read { 0 } else { r.weight };
            add_code(&mut r.codes[j as usize], code, w);
            r.clips += (!per_read && self.adc.clips_real(att * sum as f64)) as u64;
            r.hits[direct] = (j, sum);
            direct += per_read as usize;
        }
        direct
    }

    /// Adds the code of each of the first `n` hits of a read to its column's sum:
    /// ADC(att times S'), with S' = I + (read_noise * sqrt(I)) * z' when noisy
    /// (Device::noisy), and the unit ADC's branch-free count when it is one.
    /// (Const-generic loops rather than closures: a closure left out of line loses the
    /// CPU features of the read.)
    #[inline(always)]
    fn codes<const HOW: u8>(&self, r: &mut Reads, n: usize, att: f64) {
        let (rn, adc) = (self.device.read_noise, self.adc);
        for (&(j, sum), &z) in r.hits[..n].iter().zip(&r.draws) {
            // (A sum is far below 2^63: the signed conversion is one instruction.)
            let current = sum as i64 as f64;
            let code = if HOW == Codes::Attenuated as u8 {
                r.clips += adc.clips_real(att * current) as u64;
                adc.convert_real(att * current)
            } else {
                let a = match r.noise.get(sum as usize) {
                    Some(&a) => a,
                    None => rn * current.sqrt(),
                };
                let s = att * (current + a * z);
                r.clips += adc.clips_real(s) as u64;
                if HOW == Codes::NoisyUnit as u8 {
                    adc.count_below_2_53(s)
                } else {
                    adc.convert_real(s)
                }
            };
            add_code(&mut r.codes[j as usize], code, r.weight);
        }
    }

    /// The live columns of a read into `r.live` (every column of a compacted tile; in a
    /// dense tile the columns with a cell in an open row); the rows open.
    #[inline(always)]
    fn live(&self, tile: &Tile, span: Span, r: &mut Reads) -> u32 {
        let words = self.program.words;
        let cw = tile.col_words;
        let Reads { live, digits, .. } = r;
        let live = &mut live[..cw];
        live.iter_mut().for_each(|m| *m = 0);
        let sets = !tile.row_cols.is_empty();
        if !sets {
            // A compacted tile: every column.
            let n = tile.cols.len();
            for (k, m) in live.iter_mut().enumerate() {
                let left = n - k * 64;
                *m = if left >= 64 { !0 } else { (1u64 << left) - 1 };
            }
        }
        match (sets, cw) {
            (true, 1) => self.live_columns::<1>(tile, span, digits, live),
            (true, 2) => self.live_columns::<2>(tile, span, digits, live),
            _ => {
                let mut open = 0u32;
                for w in span.wl..=span.wh {
                    let mut nz = (0..span.digit_bits).fold(0u64, |a, d| a | digits[d * words + w]);
                    open += nz.count_ones();
                    while sets && nz != 0 {
                        let i = w * 64 + nz.trailing_zeros() as usize;
                        nz &= nz - 1;
                        for (m, &c) in live.iter_mut().zip(&tile.row_cols[i * cw..][..cw]) {
                            *m |= c;
                        }
                    }
                }
                open
            }
        }
    }

    /// The live columns of a read of a dense tile of CW words of columns (the union of
    /// its open rows' column sets) into `live`, held in registers as they are built; the
    /// rows open.
    #[inline(always)]
    fn live_columns<const CW: usize>(
        &self,
        tile: &Tile,
        span: Span,
        digits: &[u64],
        live: &mut [u64],
    ) -> u32 {
        let words = self.program.words;
        let sets = tile.row_cols.as_chunks::<CW>().0;
        let mut acc = [0u64; CW];
        let mut open = 0u32;
        for w in span.wl..=span.wh {
            let mut nz = (0..span.digit_bits).fold(0u64, |a, d| a | digits[d * words + w]);
            open += nz.count_ones();
            while nz != 0 {
                let i = w * 64 + nz.trailing_zeros() as usize;
                nz &= nz - 1;
                for (a, &c) in acc.iter_mut().zip(&sets[i]) {
                    *a |= c;
                }
            }
        }
        live.copy_from_slice(&acc);
        open
    }

    /// [`Self::hits`] in the loop of the read's shape: one-bit digits over one word, or
    /// two (an OU across a word's end, an ideal read of 65..128 rows), of 1- or 2-bit
    /// cells; any other read the general loop.
    #[inline(always)]
    fn sums<const HOW: u8>(&self, tile: &Tile, span: Span, sets: bool, r: &mut Reads) -> usize {
        match (span_words(span), self.cell_bits) {
            (1, 1) => self.hits::<1, 1, HOW>(tile, span, sets, r),
            (1, 2) => self.hits::<2, 1, HOW>(tile, span, sets, r),
            (2, 1) => self.hits::<1, 2, HOW>(tile, span, sets, r),
            (2, 2) => self.hits::<2, 2, HOW>(tile, span, sets, r),
            _ => self.hits::<0, 1, HOW>(tile, span, sets, r),
        }
    }

    /// The live columns of a read with a non-zero sum into `r.hits`, in order; their
    /// count. CB = 1 or 2: a one-bit-digit read of CB-bit cells over WORDS = 1 or 2
    /// words; CB = 0: any read (`sets`: a dense tile, whose read visits only columns
    /// with a cell in an open row).
    /// HOW = [`EXACT`]: each sum's code ADC(S) added to its column's instead (no hits,
    /// count 0).
    #[inline(always)]
    fn hits<const CB: usize, const WORDS: usize, const HOW: u8>(
        &self,
        tile: &Tile,
        span: Span,
        sets: bool,
        r: &mut Reads,
    ) -> usize {
        let mut n = 0;
        // The planes of every column over the read's words (CB > 0), and its digits.
        let planes = tile.word_planes::<CB>(span.wl);
        let x = r.digits[span.wl];
        let (planes2, x2) = if WORDS == 2 {
            (tile.word_planes::<CB>(span.wh), r.digits[span.wh])
        } else {
            (&[][..], 0)
        };
        for (k, &m) in r.live[..tile.col_words].iter().enumerate() {
            let mut m = m;
            while m != 0 {
                let j = k * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                let s = if CB == 0 {
                    self.ideal_sum(tile, j, span, &r.digits)
                } else if WORDS == 2 {
                    plane_sum(&planes[j], x) + plane_sum(&planes2[j], x2)
                } else {
                    plane_sum(&planes[j], x)
                };
                debug_assert!(
                    s > 0 || !sets,
                    "a column with a cell in an open row carries current"
                );
                if HOW == EXACT {
                    r.clips += self.adc.clips(s) as u64;
                    add_code(&mut r.codes[j], self.adc.convert(s), r.weight);
                    continue;
                }
                // No current, no draw: S' = 0, code 0 (kept without a branch).
                r.hits[n] = (j as u32, s);
                n += (s != 0) as usize;
            }
        }
        n
    }

    /// One read of every column of `tile` through the device model (docs/functional.md,
    /// "Non-ideal devices").
    #[inline(always)]
    fn read_device(&self, tile: &Tile, span: Span, kind: Kind, r: &mut Reads) {
        let dev = self.device;
        let words = self.program.words;
        let top = (1u32 << self.cell_bits) - 1;
        let g_off = dev.g_off(top);
        // Rows open (non-zero digit) and the digits applied, shared by every column.
        let (mut open, mut drive) = (0u32, 0u64);
        for w in span.wl..=span.wh {
            let mut nz = 0u64;
            for d in 0..span.digit_bits {
                let x = r.digits[d * words + w];
                nz |= x;
                drive += (x.count_ones() as u64) << d;
            }
            open += nz.count_ones();
        }
        let ncols = tile.cols.len();
        let g_top = top as f64 + g_off;
        // The reference column's current per applied digit (g_off, or its drifted mean).
        let g_ref = dev.reference_off(top);
        // With DAC noise the reference column sees the same noisy drives: its off
        // current is the sum of the applied digits times g_ref.
        let dac_noise = dev.converter.dac_noise > 0.0;
        let off = if dac_noise {
            let mut applied = 0.0;
            self.open_rows(span, &r.digits, |i, d| {
                applied += dev.drive(span.base, i, d)
            });
            applied * g_ref
        } else {
            drive as f64 * g_ref
        };
        let adc_errors = dev.converter.adc_errors();
        let cached = kind == Kind::PerCell && !tile.g.is_empty();
        if cached && reads_in_blocks(dev, &self.adc) {
            self.read_cached(tile, span, dev.attenuation(open), off, r);
            return;
        }
        if cached {
            // Every column's I = sum over the open rows i of d_i * G(i), in row order,
            // one open row at a time across the columns: each column's additions are
            // those of cell_current, in its order (the same bits), and the columns'
            // chains of additions run side by side.
            let currents = &mut r.currents[..ncols];
            currents.iter_mut().for_each(|c| *c = 0.0);
            self.open_rows(span, &r.digits, |i, d| {
                let row = &tile.g[i * ncols..][..ncols];
                if dac_noise {
                    let d = dev.drive(span.base, i, d);
                    for (c, &g) in currents.iter_mut().zip(row) {
                        *c += d * g;
                    }
                } else if d == 1 {
                    // 1.0 * g is g: the same bits without the product.
                    for (c, &g) in currents.iter_mut().zip(row) {
                        *c += g;
                    }
                } else {
                    let d = d as f64;
                    for (c, &g) in currents.iter_mut().zip(row) {
                        *c += d * g;
                    }
                }
            });
            if dev.read_noise == 0.0 && !adc_errors {
                // No draw: S' = att * I - drive * g_off ([`Device::analog_sum`] without
                // noise, the same operations: the same bits), column after column in a
                // loop of its own.
                let att = dev.attenuation(open);
                let (adc, w) = (self.adc, r.weight);
                let sums = r.codes[..ncols].iter_mut().zip(&r.currents[..ncols]);
                let mut clips = 0;
                if adc.unit() {
                    // (convert_real of a unit ADC is this count.)
                    for (codes, &c) in sums {
                        let s = att * c - off;
                        clips += adc.clips_real(s) as u64;
                        add_code(codes, adc.count_below_2_53(s), w);
                    }
                } else {
                    for (codes, &c) in sums {
                        let s = att * c - off;
                        clips += adc.clips_real(s) as u64;
                        add_code(codes, adc.convert_real(s), w);
                    }
                }
                r.clips += clips;
                return;
            }
        }
        for (j, (col, codes)) in tile.cols.iter().zip(r.codes.iter_mut()).enumerate() {
            let s = match kind {
                Kind::PerCell => {
                    let key = Device::read_hash(span.base, col.read_word, span.ou_index);
                    let current = if cached {
                        r.currents[j]
                    } else {
                        self.cell_current(tile, j, span, (g_off, g_top), &r.digits)
                    };
                    dev.attenuation(open) * dev.noisy(current, key) - off
                }
                Kind::Table => {
                    let sum = self.ideal_sum(tile, j, span, &r.digits);
                    let key = Device::read_hash(span.base, col.read_word, span.ou_index);
                    match &dev.error_table {
                        Some(t) => dev.table_sum(t, sum, open, key),
                        None => sum as f64,
                    }
                }
                Kind::Exact | Kind::Analog | Kind::Skip => {
                    self.ideal_sum(tile, j, span, &r.digits) as f64
                }
            };
            let s = if adc_errors {
                dev.converter.adc_input(s, &self.adc)
            } else {
                s
            };
            r.clips += self.adc.clips_real(s) as u64;
            add_code(codes, self.adc.convert_real(s), r.weight);
        }
    }

    /// A read of cached conductances that draws nothing (no read noise, DAC noise or
    /// converter errors): each column's I = sum over the open rows i of d_i * G(i) in row
    /// order from 0.0 (the additions of [`Self::cell_current`]: the same bits), then
    /// S' = att * I - off, its code and whether it clips. A block of columns at a time,
    /// their currents in registers: the columns' chains of additions run side by side
    /// and no current goes through memory.
    #[inline(always)]
    fn read_cached(&self, tile: &Tile, span: Span, att: f64, off: f64, r: &mut Reads) {
        let ncols = tile.cols.len();
        let mut n = 0;
        let rows = &mut r.open;
        self.open_rows(span, &r.digits, |i, d| {
            rows[n] = (i * ncols, d as f64);
            n += 1;
        });
        let (shift, negate) = weight_shift(r.weight);
        let conv = Convert {
            adc: self.adc,
            att,
            off,
            shift,
            negate,
        };
        let (g, rows, codes) = (&tile.g[..], &r.open[..n], &mut r.codes[..ncols]);
        r.clips += match (span.digit_bits == 1, self.adc.step == 1) {
            (true, true) => cached_columns::<true, true>(g, rows, conv, codes),
            (true, false) => cached_columns::<true, false>(g, rows, conv, codes),
            (false, true) => cached_columns::<false, true>(g, rows, conv, codes),
            (false, false) => cached_columns::<false, false>(g, rows, conv, codes),
        };
    }

    /// A read of a fixed OU (rows lo..hi) through its count table: the row of its
    /// open rows' mask added to the codes, weighted as [`Self::read_cached`] weights.
    #[inline(always)]
    fn read_counts(
        &self,
        t: &CountTables,
        tile: &Tile,
        ti: usize,
        (lo, hi): (usize, usize),
        span: Span,
        r: &mut Reads,
    ) {
        let m = hi - lo;
        let (w, b) = (lo / 64, lo % 64);
        let mut x = r.digits[w] >> b;
        if b + m > 64 {
            x |= r.digits[w + 1] << (64 - b);
        }
        let mask = (x & ((1u64 << m) - 1)) as usize;
        let ncols = tile.cols.len();
        let (counts, clips) = t.read(ti, span.ou_index as usize, mask, ncols);
        r.clips += clips as u64;
        let (shift, negate) = weight_shift(r.weight);
        // code * weight = count << (step shift + shift), 0 from 64 bits on.
        let Some(shift) = Some(shift + t.step_shift).filter(|&s| s < 64) else {
            return;
        };
        for (sum, &k) in r.codes[..ncols].iter_mut().zip(counts) {
            let weighted = (((k as u64) << shift) ^ negate).wrapping_sub(negate);
            *sum = sum.wrapping_add(weighted);
        }
    }

    /// Calls `f(i, d_i)` for every open row i of a read, in row order, with its digit.
    #[inline(always)]
    fn open_rows(&self, span: Span, digits: &[u64], mut f: impl FnMut(usize, u32)) {
        let words = self.program.words;
        for w in span.wl..=span.wh {
            let mut nz = (0..span.digit_bits).fold(0u64, |a, d| a | digits[d * words + w]);
            while nz != 0 {
                let b = nz.trailing_zeros() as usize;
                nz &= nz - 1;
                let d: u32 = (0..span.digit_bits)
                    .map(|x| ((digits[x * words + w] >> b & 1) as u32) << x)
                    .sum();
                f(w * 64 + b, d);
            }
        }
    }

    /// I with each cell's conductance drawn from its key.
    fn cell_current(
        &self,
        tile: &Tile,
        j: usize,
        span: Span,
        (g_off, g_top): (f64, f64),
        digits: &[u64],
    ) -> f64 {
        let col = &tile.cols[j];
        let dev = self.device;
        // I = sum over the open rows i of d_i * G(i), in row order.
        let mut current = 0.0;
        self.open_rows(span, digits, |i, d| {
            let level = tile.level(j, i, self.cell_bits);
            let cell = col.cell_key(self.layer, tile.written[i]);
            current += dev.drive(span.base, i, d) * dev.conductance(cell, level, g_off, g_top);
        });
        current
    }
}

/// A read's weight 1, 2^k or -2^k modulo 2^64 ([`Reads::weight`]) as (k, mask): code *
/// weight is (code << k), two's-complement negated when the mask is all ones (the same
/// word modulo 2^64).
#[inline(always)]
fn weight_shift(w: u64) -> (u32, u64) {
    let negative = !w.is_power_of_two();
    let k = if negative { w.wrapping_neg() } else { w }.trailing_zeros();
    (k, if negative { !0 } else { 0 })
}

/// Every column's code of a [`Datapath::read_cached`] read added to its sum (`rows`: the
/// open rows' offsets in `g` and digits, ONES: every digit 1), 8 columns at a time
/// (two AVX registers of currents), then one; the count of codes that clipped.
#[inline(always)]
fn cached_columns<const ONES: bool, const UNIT: bool>(
    g: &[f64],
    rows: &[(usize, f64)],
    conv: Convert,
    codes: &mut [u64],
) -> u64 {
    let (mut clips, mut j) = (0, 0);
    let n = codes.len();
    while j + 8 <= n {
        clips += cached_block::<8, ONES, UNIT>(g, j, rows, conv, &mut codes[j..j + 8]);
        j += 8;
    }
    while j < n {
        clips += cached_block::<1, ONES, UNIT>(g, j, rows, conv, &mut codes[j..j + 1]);
        j += 1;
    }
    clips
}

/// [`cached_columns`] of the B columns from column j.
#[inline(always)]
fn cached_block<const B: usize, const ONES: bool, const UNIT: bool>(
    g: &[f64],
    j: usize,
    rows: &[(usize, f64)],
    conv: Convert,
    codes: &mut [u64],
) -> u64 {
    let mut current = [0.0f64; B];
    for &(at, d) in rows {
        let row = &g[at + j..][..B];
        for (c, &x) in current.iter_mut().zip(row) {
            // (1.0 * G is G: the same bits without the product.)
            *c += if ONES { x } else { d * x };
        }
    }
    let mut clips = 0;
    for (sum, &c) in codes.iter_mut().zip(&current) {
        let (code, clip) = conv.code::<UNIT>(c);
        clips += clip as u64;
        // code * weight: (code << shift), two's-complement negated by the mask.
        let weighted = ((code << conv.shift) ^ conv.negate).wrapping_sub(conv.negate);
        *sum = sum.wrapping_add(weighted);
    }
    clips
}

/// Adds a code times `weight` to a column's sum of codes (modulo 2^64, [`Reads::codes`]).
#[inline(always)]
fn add_code(codes: &mut u64, code: u64, weight: u64) {
    *codes = codes.wrapping_add(code.wrapping_mul(weight));
}

/// sum over the cell planes c of popcount(x & planes[c]) << c: a column's bitline sum
/// for the one-bit digits `x` of the 64 rows its `planes` cover ([`Tile::planes`]).
#[inline(always)]
fn plane_sum(planes: &[u64], x: u64) -> u64 {
    planes
        .iter()
        .enumerate()
        .fold(0u64, |s, (c, &p)| s + (((x & p).count_ones() as u64) << c))
}

/// What [`Datapath::hits`] does with each sum: keeps it as a hit, or adds its exact
/// code.
const HITS: u8 = 0;
const EXACT: u8 = 1;

/// The shape of a read's loop ([`Datapath::sums`]): 1 for one-bit digits over one word,
/// 2 over two words, 0 for any other read.
#[inline(always)]
fn span_words(span: Span) -> usize {
    match (span.digit_bits, span.wh - span.wl) {
        (1, 0) => 1,
        (1, 1) => 2,
        _ => 0,
    }
}

/// How [`Datapath::codes`] turns a hit into a code.
#[derive(Clone, Copy)]
#[repr(u8)]
enum Codes {
    /// ADC(att * (I + a z')) with the unit ADC's branch-free count.
    NoisyUnit,
    /// ADC(att * (I + a z')).
    Noisy,
    /// ADC(att * I): IR drop without read noise.
    Attenuated,
}

/// A tile's reads in one input cycle ([`Datapath::tile_cycle`]).
#[derive(Clone, Copy)]
struct TileCycle<'t> {
    tile: &'t Tile,
    route: &'t Route,
    /// The bit-planes of the pass values of the tile's route.
    planes: &'t [u64],
    at: At,
    kind: Kind,
}

/// What the OU reads of one tile in one input cycle share.
struct Cycle<'a> {
    /// The tile's route's bit-planes of the pass values.
    planes: &'a [u64],
    /// The first bit-plane of the cycle's digits, and how many.
    first: usize,
    digit_bits: usize,
    /// [`Device::read_base`] of the tile and cycle (0 for exact reads).
    base: u64,
    kind: Kind,
    at: At,
    /// The alias tables its reads draw from in [`Datapath::alias_cycle`].
    lookup: Option<&'a Lookup>,
}

/// The rows of one OU read: words wl..=wh of the digit planes, and its key.
#[derive(Clone, Copy)]
struct Span {
    wl: usize,
    wh: usize,
    digit_bits: usize,
    /// The OU's index within its (tile, column group).
    ou_index: u64,
    /// [`Device::read_base`] of the tile and cycle (0 for exact reads).
    base: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_without_a_draw_take_the_blocks_and_no_other_does() {
        // Variation and an off current (the dlrsim-rram preset of earlier releases).
        let cells = Device {
            on_off_ratio: Some(19.05),
            sigma: 0.162,
            ..Device::default()
        };
        let adc = Adc::new(5, 1);
        assert!(reads_in_blocks(&cells, &adc));
        // A level table (dlrsim-rram's): per cell, nothing drawn at a read.
        let table = Device {
            levels: crate::levels::Levels::new(
                crate::levels::LevelSpace::Log10Resistance,
                vec![vec![2.62, 0.38], vec![1.34, 0.06]],
                vec![],
            )
            .unwrap(),
            ..Device::default()
        };
        assert!(reads_in_blocks(&table, &adc));
        assert!(!table.skips() && Kind::of(&table) == Kind::PerCell);
        assert!(reads_in_blocks(&cells, &Adc::new(31, 3)));
        assert!(
            !reads_in_blocks(&cells, &Adc::new(32, 1)),
            "counts past 31 bits"
        );
        assert!(!reads_in_blocks(&Device::default(), &adc), "ideal cells");
        let noisy = Device {
            read_noise: 0.01,
            ..cells.clone()
        };
        assert!(!reads_in_blocks(&noisy, &adc), "read noise");
        let mut dac = cells.clone();
        dac.converter.dac_noise = 0.1;
        assert!(!reads_in_blocks(&dac, &adc), "DAC noise");
        let mut offset = cells.clone();
        offset.converter.offset = 0.5;
        assert!(!reads_in_blocks(&offset, &adc), "ADC offset");
    }
}
