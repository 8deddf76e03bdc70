//! Reads of ideal cells (stuck-at faults are in the cells): code = ADC(S) for an exact
//! read, or with read noise and IR drop on the integer sum, its noise drawn per read or
//! settled by the skip sampler ([`crate::skip`]), or drawn from its class's alias table
//! ([`super::alias_reads`]).

use super::alias_reads::alias_state;
use super::parts::{add_code, Datapath, Kind, Reads, Span};
use super::sums::{EXACT, HITS};
use crate::device::Device;
use crate::program::Tile;
use crate::rng::normal_with;

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

impl Datapath<'_> {
    /// One read of every column of `tile` with ideal cells (stuck-at faults are in the
    /// cells), with read noise and IR drop when `analog`: code = ADC(S), or
    /// ADC([`Device::analog_sum`]) with its per-OU factors hoisted. In a dense tile only
    /// the columns with a non-zero cell in an open row are read: every other column's
    /// sum is 0, its code 0, and it draws nothing (no off current without a ratio); a
    /// read without current draws nothing either.
    #[inline(always)]
    pub(super) fn read_live(&self, tile: &Tile, span: Span, kind: Kind, r: &mut Reads) {
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
    pub(super) unsafe fn read_live_native(
        &self,
        tile: &Tile,
        span: Span,
        kind: Kind,
        r: &mut Reads,
    ) {
        self.read_live_body(tile, span, kind, r)
    }

    /// The body of [`Self::read_live`].
    #[inline(always)]
    pub(super) fn read_live_body(&self, tile: &Tile, span: Span, kind: Kind, r: &mut Reads) {
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
            let state = alias_state(tile, span, &r.live[..tile.col_words]);
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
    pub(super) fn skip_codes(&self, open: u32, att: f64, n: usize, r: &mut Reads) -> usize {
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
    pub(super) fn codes<const HOW: u8>(&self, r: &mut Reads, n: usize, att: f64) {
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

    /// [`Self::read_live`] out of line: the reads of a tile in [`Self::alias_cycle`]
    /// of other shapes.
    #[inline(never)]
    pub(super) fn read_live_apart(&self, tile: &Tile, span: Span, kind: Kind, r: &mut Reads) {
        self.read_live(tile, span, kind, r)
    }
}
