//! The bitline sums of a read with ideal cells: its live columns (those with a cell in
//! an open row), each column's integer sum S_j over the OU's rows (popcounts of digit
//! plane x cell plane), and the loops of the common shapes of a read (one-bit digits
//! over one or two words of rows, 1- or 2-bit cells).

use super::parts::{add_code, plane_sum, Datapath, Reads, Span};
use crate::program::Tile;

/// What [`Datapath::hits`] does with each sum: keeps it as a hit, or adds its exact
/// code.
pub(super) const HITS: u8 = 0;
pub(super) const EXACT: u8 = 1;

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

impl Datapath<'_> {
    /// The integer bitline sum of column j of `tile` over the rows whose digits are in
    /// `digits`.
    #[inline(always)]
    pub(super) fn ideal_sum(&self, tile: &Tile, j: usize, span: Span, digits: &[u64]) -> u64 {
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

    /// The live columns of a read into `r.live` (every column of a compacted tile; in a
    /// dense tile the columns with a cell in an open row); the rows open.
    #[inline(always)]
    pub(super) fn live(&self, tile: &Tile, span: Span, r: &mut Reads) -> u32 {
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
    pub(super) fn live_columns<const CW: usize>(
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
    pub(super) fn sums<const HOW: u8>(
        &self,
        tile: &Tile,
        span: Span,
        sets: bool,
        r: &mut Reads,
    ) -> usize {
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
    pub(super) fn hits<const CB: usize, const WORDS: usize, const HOW: u8>(
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
}
