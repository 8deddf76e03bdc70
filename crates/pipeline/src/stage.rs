//! Pipeline stages, depth and initiation interval.

use crossbar::{div_ceil, Hardware, Mode};
use serde::{Deserialize, Serialize};
use sparsity::ou_sizes;
use std::fmt;
use std::str::FromStr;

/// The stages an OU passes through (section 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 7] = [
        Stage::InputRegister,
        Stage::IndexDecode,
        Stage::OuFormation,
        Stage::CrossbarRead,
        Stage::Adc,
        Stage::ShiftAdd,
        Stage::OutputRegister,
    ];

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

    /// Position in [`Stage::ALL`].
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether a mode's pipeline has this stage.
    pub fn in_mode(self, mode: Mode) -> bool {
        match self {
            Stage::IndexDecode => mode.compacted(),
            Stage::OuFormation => mode.skips_inputs(),
            _ => true,
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Stage {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Stage::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Stage::ALL.iter().map(|s| s.as_str()).collect();
                format!("unknown stage '{s}' (expected {})", names.join(", "))
            })
    }
}

/// The stages of a mode, in order: index decode only with compression, OU formation
/// only with input skipping.
pub fn stages(mode: Mode) -> Vec<Stage> {
    Stage::ALL.into_iter().filter(|s| s.in_mode(mode)).collect()
}

/// Pipeline depth L: dense and ideal 5, weight and activation 6, sre 7.
pub fn depth(mode: Mode) -> u64 {
    stages(mode).len() as u64
}

/// A stage made slower than the model's 1 cycle to study a bottleneck
/// (`pipeline.slow_stage`, `pipeline.slow_stage_cycles`): every OU spends at least
/// `cycles` cycles in it, so its II is at least `cycles` in every engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SlowStage {
    pub stage: Stage,
    pub cycles: u32,
}

/// What an OU costs in each stage of a mode (section 7), with an optional slow stage.
///
/// The demand of a stage is 1 cycle, except the ADCs, ceil(cols / adc.per_crossbar), the
/// index decoder, ceil(rows / index_decoder.rows_per_cycle), and the slow stage, at least
/// its `cycles`. An OU's II is the largest demand; it occupies its slowest stage (the
/// first in pipeline order with that demand) for II cycles and every other stage 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StageModel {
    mode: Mode,
    ou_rows: u32,
    adc_per_crossbar: u64,
    index_rows_per_cycle: u64,
    /// The slow stage and its cycles, only when the mode has that stage.
    slow: Option<(Stage, u64)>,
}

impl StageModel {
    pub fn new(mode: Mode, hw: &Hardware, slow: Option<SlowStage>) -> Self {
        StageModel {
            mode,
            ou_rows: hw.ou_rows,
            adc_per_crossbar: hw.adc_per_crossbar as u64,
            index_rows_per_cycle: hw.index_rows_per_cycle as u64,
            slow: slow
                .filter(|s| s.stage.in_mode(mode))
                .map(|s| (s.stage, s.cycles as u64)),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Pipeline depth L of the mode.
    pub fn depth(&self) -> u64 {
        depth(self.mode)
    }

    /// Cycles an OU of `rows` x `cols` needs in `stage` (1 for a stage the mode lacks).
    #[inline]
    pub fn demand(&self, stage: Stage, rows: u32, cols: u32) -> u64 {
        let own = match stage {
            Stage::Adc => div_ceil(cols as u64, self.adc_per_crossbar),
            Stage::IndexDecode if self.mode.compacted() => {
                div_ceil(rows as u64, self.index_rows_per_cycle)
            }
            _ => 1,
        };
        match self.slow {
            Some((s, c)) if s == stage => own.max(c).max(1),
            _ => own.max(1),
        }
    }

    /// Initiation interval of one OU of `rows` x `cols`:
    /// max(1, ceil(cols / adc.per_crossbar), ceil(rows / index_decoder.rows_per_cycle),
    /// slow_stage_cycles), the index term only where an index decoder is in the pipeline
    /// and the slow term only where the slow stage is.
    #[inline]
    pub fn ii(&self, rows: u32, cols: u32) -> u64 {
        let adc = div_ceil(cols as u64, self.adc_per_crossbar);
        let idx = if self.mode.compacted() {
            div_ceil(rows as u64, self.index_rows_per_cycle)
        } else {
            0
        };
        let slow = self.slow.map_or(0, |(_, c)| c);
        adc.max(idx).max(slow).max(1)
    }

    /// The stage an OU of `rows` x `cols` occupies for its II cycles: the first stage in
    /// pipeline order whose demand equals the II; None when the II is 1 (no stage is
    /// slower than the others).
    pub fn slowest(&self, rows: u32, cols: u32) -> Option<Stage> {
        let ii = self.ii(rows, cols);
        if ii == 1 {
            return None;
        }
        Stage::ALL
            .into_iter()
            .find(|&s| s.in_mode(self.mode) && self.demand(s, rows, cols) == ii)
    }

    /// Issue time of `rows` rows of one column group of width `cols`, cut into OUs of
    /// ou.rows (the last may be smaller): the sum of their II.
    #[inline]
    pub fn issue_rows(&self, rows: u32, cols: u32) -> u64 {
        if rows == 0 {
            return 0;
        }
        let full = (rows / self.ou_rows) as u64;
        let rest = rows % self.ou_rows;
        let mut t = full * self.ii(self.ou_rows, cols);
        if rest > 0 {
            t += self.ii(rest, cols);
        }
        debug_assert_eq!(
            t,
            ou_sizes(rows, self.ou_rows)
                .map(|r| self.ii(r, cols))
                .sum::<u64>()
        );
        t
    }
}

/// Initiation interval of one OU of `rows` x `cols` without a slow stage:
/// max(1, ceil(cols / adc.per_crossbar), ceil(rows / index_decoder.rows_per_cycle)),
/// the last term only where an index decoder is in the pipeline.
#[inline]
pub fn ii(rows: u32, cols: u32, mode: Mode, hw: &Hardware) -> u64 {
    StageModel::new(mode, hw, None).ii(rows, cols)
}

/// [`StageModel::issue_rows`] without a slow stage.
#[inline]
pub fn issue_rows(rows: u32, cols: u32, mode: Mode, hw: &Hardware) -> u64 {
    StageModel::new(mode, hw, None).issue_rows(rows, cols)
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

    #[test]
    fn slowest_stage_and_slow_stage() {
        let hw = Hardware {
            adc_per_crossbar: 4,
            index_rows_per_cycle: 3,
            ..Hardware::default()
        };
        let sre = StageModel::new(Mode::Sre, &hw, None);
        // 9x8: decode 3 > ADC 2 -> index decode; 2x8: decode 1 < ADC 2 -> ADC; 2x4: all 1.
        assert_eq!(sre.slowest(9, 8), Some(Stage::IndexDecode));
        assert_eq!(sre.slowest(2, 8), Some(Stage::Adc));
        assert_eq!(sre.slowest(2, 4), None);
        // 6x8: decode 2 = ADC 2: the tie goes to the earlier stage.
        assert_eq!(sre.slowest(6, 8), Some(Stage::IndexDecode));
        // Dense has no decoder: 9x8 is ADC-bound with II 2.
        assert_eq!(
            StageModel::new(Mode::Dense, &hw, None).slowest(9, 8),
            Some(Stage::Adc)
        );
        // A 4-cycle shift-and-add: every OU's II is at least 4 and that stage is slowest.
        let slow = Some(SlowStage {
            stage: Stage::ShiftAdd,
            cycles: 4,
        });
        let m = StageModel::new(Mode::Sre, &hw, slow);
        assert_eq!((m.ii(9, 8), m.slowest(9, 8)), (4, Some(Stage::ShiftAdd)));
        assert_eq!((m.ii(2, 4), m.demand(Stage::Adc, 2, 4)), (4, 1));
        // 20 rows: 3 OUs of II 4.
        assert_eq!(m.issue_rows(20, 8), 12);
        // A 2-cycle index decoder changes nothing in dense (no decoder) ...
        let idx2 = Some(SlowStage {
            stage: Stage::IndexDecode,
            cycles: 2,
        });
        assert_eq!(StageModel::new(Mode::Dense, &hw, idx2).ii(1, 1), 1);
        // ... and in weight raises a 1-row OU to 2 but leaves a 9-row OU at ceil(9/3) = 3.
        let w = StageModel::new(Mode::Weight, &hw, idx2);
        assert_eq!((w.ii(1, 1), w.ii(9, 1)), (2, 3));
        assert_eq!("adc".parse::<Stage>(), Ok(Stage::Adc));
        assert!("dac".parse::<Stage>().unwrap_err().contains("shift_add"));
    }
}
