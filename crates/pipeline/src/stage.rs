//! Pipeline stages, depth and initiation interval.

use crossbar::{div_ceil, Hardware, Mode};
use sparsity::ou_sizes;

/// The stages an OU passes through (section 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    InputRegister,
    IndexDecode,
    OuFormation,
    CrossbarRead,
    Adc,
    ShiftAdd,
    OutputRegister,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::InputRegister => "input_register",
            Stage::IndexDecode => "index_decode",
            Stage::OuFormation => "ou_formation",
            Stage::CrossbarRead => "crossbar_read",
            Stage::Adc => "adc",
            Stage::ShiftAdd => "shift_add",
            Stage::OutputRegister => "output_register",
        }
    }
}

/// The stages of a mode, in order: index decode only with compression, OU formation
/// only with input skipping.
pub fn stages(mode: Mode) -> Vec<Stage> {
    use Stage::*;
    let mut s = vec![InputRegister];
    if mode.compacted() {
        s.push(IndexDecode);
    }
    if mode.skips_inputs() {
        s.push(OuFormation);
    }
    s.extend([CrossbarRead, Adc, ShiftAdd, OutputRegister]);
    s
}

/// Pipeline depth L: dense and ideal 5, weight and activation 6, sre 7.
pub fn depth(mode: Mode) -> u64 {
    stages(mode).len() as u64
}

/// Initiation interval of one OU of `rows` x `cols`:
/// max(1, ceil(cols / adc.per_crossbar), ceil(rows / index_decoder.rows_per_cycle)),
/// the last term only where an index decoder is in the pipeline.
#[inline]
pub fn ii(rows: u32, cols: u32, mode: Mode, hw: &Hardware) -> u64 {
    let adc = div_ceil(cols as u64, hw.adc_per_crossbar as u64);
    let idx = if mode.compacted() {
        div_ceil(rows as u64, hw.index_rows_per_cycle as u64)
    } else {
        0
    };
    adc.max(idx).max(1)
}

/// Issue time of `rows` rows of one column group of width `cols`, cut into OUs of
/// ou.rows (the last may be smaller): the sum of their II.
#[inline]
pub fn issue_rows(rows: u32, cols: u32, mode: Mode, hw: &Hardware) -> u64 {
    if rows == 0 {
        return 0;
    }
    let full = (rows / hw.ou_rows) as u64;
    let rest = rows % hw.ou_rows;
    let mut t = full * ii(hw.ou_rows, cols, mode, hw);
    if rest > 0 {
        t += ii(rest, cols, mode, hw);
    }
    debug_assert_eq!(
        t,
        ou_sizes(rows, hw.ou_rows)
            .map(|r| ii(r, cols, mode, hw))
            .sum::<u64>()
    );
    t
}

/// A layer with busy time W takes W + L - 1 cycles (0 if W = 0).
pub fn layer_cycles(w: u64, mode: Mode) -> u64 {
    if w == 0 {
        0
    } else {
        w + depth(mode) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths_and_ii() {
        assert_eq!(Mode::ALL.map(depth), [5, 6, 6, 7, 5]);
        let hw = Hardware {
            adc_per_crossbar: 4,
            index_rows_per_cycle: 3,
            ..Hardware::default()
        };
        // 9x8 OU: ADC ceil(8/4)=2; index ceil(9/3)=3 only in weight/sre.
        assert_eq!(ii(9, 8, Mode::Dense, &hw), 2);
        assert_eq!(ii(9, 8, Mode::Sre, &hw), 3);
        assert_eq!(ii(2, 3, Mode::Weight, &hw), 1);
        // 20 rows, ou.rows 9: OUs of 9, 9, 2 rows, 8 cols. sre II: max(1, 2, 3) = 3 twice,
        // then max(1, ceil(8/4) = 2, ceil(2/3) = 1) = 2 -> 3 + 3 + 2 = 8
        assert_eq!(issue_rows(20, 8, Mode::Sre, &hw), 8);
        assert_eq!(issue_rows(0, 8, Mode::Sre, &hw), 0);
        assert_eq!(layer_cycles(0, Mode::Sre), 0);
        assert_eq!(layer_cycles(10, Mode::Sre), 16);
    }
}
