//! Reads through the device model (docs/functional.md, "Non-ideal devices"): each open
//! cell's conductance (off current, variation, drift), cached per tile or drawn per read;
//! a draw from the error table's row; and a fixed OU's read through its count table.

use super::parts::{add_code, Datapath, Kind, Reads, Span};
use crate::counts::{reads_in_blocks, Convert, CountTables};
use crate::device::Device;
use crate::program::Tile;

impl Datapath<'_> {
    /// One read of every column of `tile` through the device model (docs/functional.md,
    /// "Non-ideal devices").
    #[inline(always)]
    pub(super) fn read_device(&self, tile: &Tile, span: Span, kind: Kind, r: &mut Reads) {
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
    pub(super) fn read_cached(&self, tile: &Tile, span: Span, att: f64, off: f64, r: &mut Reads) {
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
    pub(super) fn read_counts(
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
    pub(super) fn open_rows(&self, span: Span, digits: &[u64], mut f: impl FnMut(usize, u32)) {
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
    pub(super) fn cell_current(
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
