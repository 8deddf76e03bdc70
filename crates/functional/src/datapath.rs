//! One input vector through one mode's OU reads (docs/functional.md, "The datapath in the code's words" and "Non-ideal devices").
//!
//! Per pass, the pass value u of every routed row is cut into bit-planes over the
//! physical rows of its tile. Per input cycle, the digit planes of that cycle and the
//! OUs of the mode (fixed slices of the tile, the next ou.rows driven rows, or the whole
//! tile) give each bitline sum S_j = sum over the OU's rows of d * c as popcounts of
//! digit plane x cell plane. A non-ideal device turns S_j into S'_j ([`Device`]); the
//! ADC turns it into a code; the shift-and-add weighs the code by its cycle, slice,
//! polarity and pass.
//!
//! This file is the walk: a vector's passes, each tile's input cycles, its OUs, the
//! shift-and-add. What it calls sits below it, each file using only those listed before it in
//! this list: [`parts`] (what every read shares), [`sums`] (live columns and bitline
//! sums of ideal cells), [`alias_reads`] (codes drawn from alias tables), [`live_reads`]
//! (reads of ideal cells, exact or with read noise and IR drop), [`device_reads`] (reads
//! through the device model and the count tables).

mod alias_reads;
mod device_reads;
mod live_reads;
mod parts;
mod sums;

use crate::alias::Lookup;
use crate::device::Device;
use crate::program::{Route, Tile};
use crate::rng::ziggurat;
use crate::skip::Skip;
use crossbar::Mode;
use engine::Granularity;
use parts::{cycle_weight, At, Kind, Reads, Span};

pub(crate) use parts::{Datapath, Flush};

/// Per-thread buffers of the datapath.
pub(crate) struct Scratch {
    /// Bit b of the pass values of every route: planes[(route * B + b) * words + w].
    planes: Vec<u64>,
    reads: Reads,
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
                #[cfg(test)]
                plane_sums: false,
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

    /// Sums the columns of alias reads from the cell planes even where the tile keeps
    /// the levels as bytes (for tests: the results must not change).
    #[cfg(test)]
    pub fn plane_sums(&mut self) {
        self.reads.plane_sums = true;
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

    /// [`Self::tile_cycle`] of a vector whose reads draw from `lookup`
    /// ([`Self::alias_lookup`]), in the loops of the tile's cell width and the table's
    /// size.
    #[inline(always)]
    fn alias_cycle(&self, tc: TileCycle, lookup: &Lookup, r: &mut Reads) {
        #[cfg(target_arch = "x86_64")]
        if r.native {
            // SAFETY: `native` is set only when the CPU has the features.
            unsafe { self.alias_cycle_native(tc, lookup, r) };
            return;
        }
        self.alias_cycle_any(tc, lookup, r)
    }

    /// [`Self::alias_cycle`] with the CPU features of [`Self::vector_native`], out of
    /// line: the loops have the registers to themselves.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,avx2,bmi1,bmi2,lzcnt,sse4.1")]
    #[inline(never)]
    unsafe fn alias_cycle_native(&self, tc: TileCycle, lookup: &Lookup, r: &mut Reads) {
        self.alias_cycle_body(tc, lookup, r)
    }

    /// [`Self::alias_cycle`] without them.
    #[inline(never)]
    fn alias_cycle_any(&self, tc: TileCycle, lookup: &Lookup, r: &mut Reads) {
        self.alias_cycle_body(tc, lookup, r)
    }

    #[inline(always)]
    fn alias_cycle_body(&self, tc: TileCycle, lookup: &Lookup, r: &mut Reads) {
        let l = Some(lookup);
        match (self.cell_bits, lookup.kbits()) {
            (1, 3) => self.tile_cycle::<1, 3>(tc, l, r),
            (1, 4) => self.tile_cycle::<1, 4>(tc, l, r),
            (1, 5) => self.tile_cycle::<1, 5>(tc, l, r),
            (1, 6) => self.tile_cycle::<1, 6>(tc, l, r),
            (1, _) => self.tile_cycle::<1, 0>(tc, l, r),
            (_, 3) => self.tile_cycle::<2, 3>(tc, l, r),
            (_, 4) => self.tile_cycle::<2, 4>(tc, l, r),
            (_, 5) => self.tile_cycle::<2, 5>(tc, l, r),
            (_, 6) => self.tile_cycle::<2, 6>(tc, l, r),
            (_, _) => self.tile_cycle::<2, 0>(tc, l, r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adc::Adc;
    use crate::counts::reads_in_blocks;

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
