//! Crossbar geometry and the mapping of a layer's weights onto crossbars.
//!
//! This crate owns docs/model.md §1 and §3: the hardware parameters
//! ([`Hardware`]), the five designs being compared ([`Mode`]), cell slicing of a weight
//! magnitude ([`cell`]), the physical column order of both layouts, column blocks and
//! column groups ([`LayerMap`]), and the dense row tiling. Compression lives in the
//! `sparsity` crate; timing in `pipeline`.

mod hardware;
mod mapping;
mod mode;

pub use hardware::{AdcBits, Hardware, HardwareError, Layout};
pub use mapping::{
    cell, slice_mask, Block, ColumnGroup, ColumnWindow, LayerMap, PhysCol, Polarity,
};
pub use mode::Mode;

/// ceil(a / b) for b > 0.
#[inline]
pub fn div_ceil(a: u64, b: u64) -> u64 {
    a.div_ceil(b)
}

/// ceil(log2 n) for n >= 1 (0 for n = 1): the index width of a K-row matrix.
pub fn ceil_log2(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceil_log2_values() {
        assert_eq!(
            [1, 2, 3, 4, 5, 8, 9, 576].map(ceil_log2),
            [0, 1, 2, 2, 3, 3, 4, 10]
        );
    }
}
