//! Reads whose codes are drawn from alias tables (docs/functional.md, "Samplers"), their
//! loops fixed to the tile's cell width and the table's size.
//!
//! Under loud read noise every live column of a read draws one outcome from its class's
//! table ([`crate::alias`]), so a read's cost is its columns' draws plus what it does
//! once: its rows' digits, its live columns, the state of its draws. The walk of a
//! tile's OUs, those steps and the columns' loop are compiled together, once per cell
//! width (1 or 2 bits) and table size (8 to 64 buckets, or any): nothing is dispatched
//! or called per read (the walk picks those loops once per tile and cycle,
//! `Datapath::alias_cycle` in datapath.rs). A read of other digits or of more than two
//! words of rows takes the general loop ([`Datapath::read_live`]); both give the same
//! draws.

use super::parts::{add_code, plane_sum, Datapath, Kind, Reads, Span};
use crate::alias::{Lookup, Row, CLIP};
use crate::program::Tile;
use crate::rng::{mix, wymix, WY_STEP};

/// Key word of the skip sampler's alias-table draws: an OU read's state is
/// mix(mix(read base ^ OU index << 33 ^ ALIAS_KEY) ^ the read word of its first live
/// column).
const ALIAS_KEY: u64 = 0x2b99_2ddf_a232_49d6;

/// One word of live columns of an alias-table read ([`Datapath::alias_word`]).
#[derive(Clone, Copy)]
struct Word {
    /// The word's live columns.
    live: u64,
    /// Its first column.
    first: usize,
    /// The read's digits over its one or two words.
    x: (u64, u64),
    /// A drawn count is added times step * weight.
    step_weight: u64,
}

/// The state of a read's draws. It is keyed by its first live column's word too
/// (polarity and physical column): the reads of the two polarities' arrays, and of
/// column groups that share a tile, cycle and OU index, must not share their draws
/// (shared draws correlate their errors, and a difference of two polarities would then
/// cancel them). A read with no live column draws nothing.
#[inline(always)]
pub(super) fn alias_state(tile: &Tile, span: Span, live: &[u64]) -> u64 {
    let state = mix(span.base ^ span.ou_index << 33 ^ ALIAS_KEY);
    match live.iter().enumerate().find(|e| *e.1 != 0) {
        Some((k, &m)) => {
            let j = k * 64 + m.trailing_zeros() as usize;
            mix(state ^ tile.cols[j].read_word)
        }
        None => state,
    }
}

impl<'a> Datapath<'a> {
    /// The table a vector's reads draw from through [`Self::alias_cycle`], when they
    /// do: alias draws ([`Kind::Skip`] with a table) of 1- or 2-bit cells.
    #[inline(always)]
    pub(super) fn alias_lookup(&self, kind: Kind, r: &Reads) -> Option<&'a Lookup> {
        #[cfg(test)]
        if r.general {
            return None;
        }
        let _ = r;
        let lookup = self.laws.and_then(|l| l.lookup.as_ref())?;
        (kind == Kind::Skip && matches!(self.cell_bits, 1 | 2)).then_some(lookup)
    }

    /// One read of a tile of CB-bit cells ([`Self::alias_cycle`]) whose codes are drawn
    /// from `lookup` (2^KB buckets, 0: any): one-bit digits over one word of rows
    /// (WORDS = 1) or two.
    #[inline(always)]
    pub(super) fn alias_read<const CB: usize, const WORDS: usize, const KB: u64>(
        &self,
        tile: &Tile,
        span: Span,
        lookup: &Lookup,
        r: &mut Reads,
    ) {
        let open = self.live(tile, span, r);
        let state = alias_state(tile, span, &r.live[..tile.col_words]);
        self.alias_codes::<CB, WORDS, KB>(tile, span, r, lookup.row(open), state);
    }

    /// Each live column's code of a read drawn from its class's alias table
    /// ([`crate::alias`]) as its sum is read (CB and WORDS as in [`Self::hits`]), with
    /// the low 32 bits of wyrand's next output from the OU's `state` (the live columns
    /// in order: thread-free), and its clips counted. What the loop needs is copied into
    /// locals first, and the planes and the sums of codes cut to the tile's columns: a
    /// column's planes and its sum take one bounds check, and nothing is reloaded per
    /// column.
    #[inline(always)]
    pub(super) fn alias_codes<const CB: usize, const WORDS: usize, const KB: u64>(
        &self,
        tile: &Tile,
        span: Span,
        r: &mut Reads,
        row: Row,
        mut state: u64,
    ) {
        let mut bytes = false;
        if CB > 0 {
            // A sum of one-bit digits over these words is at most their open rows times
            // the top level: within the row's classes, the buckets are read without a
            // bounds check; a read beyond them takes the checked loop.
            let x2 = if WORDS == 2 { r.digits[span.wh] } else { 0 };
            let open = (r.digits[span.wl].count_ones() + x2.count_ones()) as u64;
            let largest = open * ((1 << CB) - 1);
            if largest > row.largest_sum() {
                return self.alias_codes::<0, 1, 0>(tile, span, r, row, state);
            }
            // The sums a word at a time from the levels' bytes where the tile keeps them
            // and no sum can pass a byte.
            bytes = !tile.levels.is_empty() && largest <= u8::MAX as u64;
            #[cfg(test)]
            if r.plane_sums {
                bytes = false;
            }
        }
        let ncols = tile.cols.len();
        // A drawn count is added times step * weight (the code times its weight, modulo
        // 2^64), its clips counted here and added once.
        let (step_weight, mut clips) = (self.adc.step.wrapping_mul(r.weight), 0u64);
        let Reads {
            live,
            codes,
            digits,
            ..
        } = r;
        let cut = if CB == 0 { 0 } else { ncols };
        let planes = &tile.word_planes::<CB>(span.wl)[..cut];
        let x = digits[span.wl];
        let (planes2, x2) = if WORDS == 2 {
            (&tile.word_planes::<CB>(span.wh)[..cut], digits[span.wh])
        } else {
            (&[][..], 0)
        };
        // A word of columns at a time: their sums ([`Reads::codes`] holds whole words)
        // and planes found by the column's bit, the sums without a bounds check.
        let words = codes.as_chunks_mut::<64>().0;
        for (k, (&m, sums)) in live[..tile.col_words].iter().zip(words).enumerate() {
            let at = (k * 64).min(planes.len());
            let p1 = &planes[at..][..(planes.len() - at).min(64)];
            let p2 = if WORDS == 2 {
                &planes2[at..][..p1.len()]
            } else {
                p1
            };
            let word = Word {
                live: m,
                first: k * 64,
                x: (x, x2),
                step_weight,
            };
            if bytes {
                // The sums of the word's 64 columns at once: each open row adds its
                // cells' levels (bytes, [`Tile::levels`]), 64 columns in a few vector
                // additions; byte b is column first + b's sum (0 where no open cell).
                let sums8 = level_sums(tile, span, (x, x2), k);
                state = self.alias_word::<CB, WORDS, KB, true>(
                    tile,
                    span,
                    digits,
                    (&[], &[]),
                    &sums8,
                    sums,
                    row,
                    word,
                    state,
                    &mut clips,
                );
                continue;
            }
            // A whole word of columns: their planes indexed without a bounds check (two
            // calls of one loop, so that one of them knows the length; p2 is p1 for one
            // word).
            if p1.len() == 64 {
                state = self.alias_word::<CB, WORDS, KB, false>(
                    tile,
                    span,
                    digits,
                    (&p1[..64], &p2[..64]),
                    &[0; 64],
                    sums,
                    row,
                    word,
                    state,
                    &mut clips,
                );
            } else {
                state = self.alias_word::<CB, WORDS, KB, false>(
                    tile,
                    span,
                    digits,
                    (p1, p2),
                    &[0; 64],
                    sums,
                    row,
                    word,
                    state,
                    &mut clips,
                );
            }
        }
        r.clips += clips;
    }

    /// The reads of the live columns of one word of [`Self::alias_codes`]: their sums
    /// the bytes of `sums8` (BYTES) or popcounts of `p1` and `p2`, the planes of its
    /// columns; the state after its draws.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn alias_word<const CB: usize, const WORDS: usize, const KB: u64, const BYTES: bool>(
        &self,
        tile: &Tile,
        span: Span,
        digits: &[u64],
        (p1, p2): (&[[u64; CB]], &[[u64; CB]]),
        sums8: &[u8; 64],
        sums: &mut [u64; 64],
        row: Row,
        word: Word,
        mut state: u64,
        clips: &mut u64,
    ) -> u64 {
        let (mut m, (x, x2), mut n) = (word.live, word.x, 0);
        while m != 0 {
            let b = m.trailing_zeros() as usize % 64;
            m &= m - 1;
            let s = if CB == 0 {
                self.ideal_sum(tile, word.first + b, span, digits)
            } else if BYTES {
                sums8[b] as u64
            } else if WORDS == 2 {
                plane_sum(&p1[b], x) + plane_sum(&p2[b], x2)
            } else {
                plane_sum(&p1[b], x)
            };
            state = state.wrapping_add(WY_STEP);
            let v = wymix(state) as u32;
            let mut v = if CB == 0 {
                row.outcome_of::<KB>(s, v)
            } else {
                // SAFETY: s <= row.largest_sum() ([`Self::alias_codes`]).
                unsafe { row.outcome_unchecked::<KB>(s, v) }
            };
            // A clip is rare: counted off the loop's path.
            if v >= CLIP {
                std::hint::cold_path();
                n += 1;
                v &= !CLIP;
            }
            add_code(&mut sums[b], v as u64, word.step_weight);
        }
        *clips += n;
        state
    }
}

/// The bitline sums of word `k` of a tile's columns for the one-bit digits `x` (rows of
/// word `span.wl`) and `x2` (of `span.wh`, 0 for a read within one word): byte b the sum
/// over the open rows of the level of column 64k + b, from [`Tile::levels`] (the caller
/// checks that no sum passes 255).
#[inline(always)]
fn level_sums(tile: &Tile, span: Span, (x, x2): (u64, u64), k: usize) -> [u8; 64] {
    let stride = tile.col_words * 64;
    let mut acc = [0u8; 64];
    for (w, mut open) in [(span.wl, x), (span.wh, x2)] {
        while open != 0 {
            let i = w * 64 + open.trailing_zeros() as usize;
            open &= open - 1;
            let at = i * stride + k * 64;
            let Some(row) = tile.levels.get(at..).and_then(|r| r.first_chunk::<64>()) else {
                continue;
            };
            for (a, &l) in acc.iter_mut().zip(row) {
                *a = a.wrapping_add(l);
            }
        }
    }
    acc
}
