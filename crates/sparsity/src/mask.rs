//! A bitset over the K logical rows of a matrix.

/// One bit per logical row; bit k set means row k is selected.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct RowMask {
    words: Vec<u64>,
    len: u32,
}

impl RowMask {
    pub fn new(len: u32) -> Self {
        RowMask {
            words: vec![0; (len as usize).div_ceil(64)],
            len,
        }
    }

    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn words(&self) -> &[u64] {
        &self.words
    }

    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }

    #[inline]
    pub fn set(&mut self, k: u32) {
        self.words[(k / 64) as usize] |= 1u64 << (k % 64);
    }

    #[inline]
    pub fn get(&self, k: u32) -> bool {
        self.words[(k / 64) as usize] >> (k % 64) & 1 == 1
    }

    /// Rows set in [lo, hi).
    #[inline]
    pub fn count_range(&self, lo: u32, hi: u32) -> u32 {
        count_range_by(&self.words, lo, hi, |_, w| w)
    }

    /// Rows set in both masks within [lo, hi): the popcount the fast engine runs on.
    #[inline]
    pub fn and_count_range(&self, other: &RowMask, lo: u32, hi: u32) -> u32 {
        count_range_by(&self.words, lo, hi, |i, w| w & other.words[i])
    }

    /// Rows set in the whole mask.
    pub fn count(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    /// Indices of the set rows, ascending.
    pub fn iter_ones(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let b = w.trailing_zeros();
                    w &= w - 1;
                    i as u32 * 64 + b
                })
            })
        })
    }
}

#[inline]
fn count_range_by(words: &[u64], lo: u32, hi: u32, word: impl Fn(usize, u64) -> u64) -> u32 {
    if lo >= hi {
        return 0;
    }
    let (wl, wh) = ((lo / 64) as usize, ((hi - 1) / 64) as usize);
    let lo_mask = !0u64 << (lo % 64);
    let hi_mask = !0u64 >> (63 - (hi - 1) % 64);
    if wl == wh {
        return (word(wl, words[wl]) & lo_mask & hi_mask).count_ones();
    }
    let mut n = (word(wl, words[wl]) & lo_mask).count_ones();
    for (i, &w) in words.iter().enumerate().take(wh).skip(wl + 1) {
        n += word(i, w).count_ones();
    }
    n + (word(wh, words[wh]) & hi_mask).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn range_counts_match_a_plain_loop(
            bits in proptest::collection::vec(any::<bool>(), 1..300),
            other in proptest::collection::vec(any::<bool>(), 300),
            a in 0u32..300, b in 0u32..300,
        ) {
            let len = bits.len() as u32;
            let (mut m, mut o) = (RowMask::new(len), RowMask::new(len));
            for k in 0..len {
                if bits[k as usize] { m.set(k); }
                if other[k as usize] { o.set(k); }
            }
            let (lo, hi) = (a.min(b).min(len), a.max(b).min(len));
            let plain = (lo..hi).filter(|&k| bits[k as usize]).count() as u32;
            let both = (lo..hi).filter(|&k| bits[k as usize] && other[k as usize]).count() as u32;
            prop_assert_eq!(m.count_range(lo, hi), plain);
            prop_assert_eq!(m.and_count_range(&o, lo, hi), both);
            prop_assert_eq!(m.iter_ones().count() as u32, m.count());
            let ones: Vec<u32> = (0..len).filter(|&k| bits[k as usize]).collect();
            prop_assert_eq!(m.iter_ones().collect::<Vec<_>>(), ones);
        }
    }
}
