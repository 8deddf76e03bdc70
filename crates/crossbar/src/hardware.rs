//! Hardware parameters of section 1 that shape the mapping and the OU.

use crate::{div_ceil, Mode};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Physical column order inside a polarity array (section 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// for n, for slice: the cells of one weight are adjacent.
    WeightMajor,
    /// for slice, for n: one slice of every weight, then the next slice.
    SliceMajor,
}

/// `adc.bits`: a fixed resolution or derived from the OU height (section 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AdcBits {
    Auto,
    Fixed(u32),
}

/// The parameters that decide mapping, OU shape and II.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Hardware {
    pub xbar_rows: u32,
    pub xbar_cols: u32,
    pub cell_bits: u32,
    pub ou_rows: u32,
    pub ou_cols: u32,
    pub weight_bits: u32,
    pub input_bits: u32,
    pub dac_bits: u32,
    pub adc_bits: AdcBits,
    pub adc_per_crossbar: u32,
    pub index_rows_per_cycle: u32,
    pub layout: Layout,
}

/// An impossible hardware configuration; `key` is the config key at fault.
#[derive(Debug, Error, PartialEq)]
#[error("{key}: {msg}")]
pub struct HardwareError {
    pub key: &'static str,
    pub msg: String,
}

fn err(key: &'static str, msg: impl Into<String>) -> HardwareError {
    HardwareError {
        key,
        msg: msg.into(),
    }
}

impl Default for Hardware {
    /// The defaults of section 1.
    fn default() -> Self {
        Hardware {
            xbar_rows: 128,
            xbar_cols: 128,
            cell_bits: 2,
            ou_rows: 9,
            ou_cols: 8,
            weight_bits: 16,
            input_bits: 16,
            dac_bits: 1,
            adc_bits: AdcBits::Auto,
            adc_per_crossbar: 8,
            index_rows_per_cycle: 9,
            layout: Layout::WeightMajor,
        }
    }
}

impl Hardware {
    /// Rejects configurations the model cannot describe.
    pub fn validate(&self) -> Result<(), HardwareError> {
        let positive = [
            ("crossbar.rows", self.xbar_rows),
            ("crossbar.cols", self.xbar_cols),
            ("crossbar.cell_bits", self.cell_bits),
            ("ou.rows", self.ou_rows),
            ("ou.cols", self.ou_cols),
            ("dac.bits", self.dac_bits),
            ("adc.per_crossbar", self.adc_per_crossbar),
            ("index_decoder.rows_per_cycle", self.index_rows_per_cycle),
        ];
        for (key, v) in positive {
            if v == 0 {
                return Err(err(key, "must be at least 1"));
            }
        }
        if self.ou_rows > self.xbar_rows {
            return Err(err(
                "ou.rows",
                format!(
                    "OU height {} exceeds crossbar.rows {}",
                    self.ou_rows, self.xbar_rows
                ),
            ));
        }
        if self.ou_cols > self.xbar_cols {
            return Err(err(
                "ou.cols",
                format!(
                    "OU width {} exceeds crossbar.cols {}",
                    self.ou_cols, self.xbar_cols
                ),
            ));
        }
        if !(2..=32).contains(&self.weight_bits) {
            return Err(err(
                "precision.weight_bits",
                format!("{} is outside 2..=32", self.weight_bits),
            ));
        }
        if !(2..=31).contains(&self.input_bits) {
            return Err(err(
                "precision.input_bits",
                format!("{} is outside 2..=31", self.input_bits),
            ));
        }
        if self.cell_bits > self.weight_bits - 1 {
            return Err(err(
                "crossbar.cell_bits",
                format!(
                    "{} exceeds the weight magnitude width {} (precision.weight_bits - 1)",
                    self.cell_bits,
                    self.weight_bits - 1
                ),
            ));
        }
        if self.cell_bits > 16 {
            return Err(err("crossbar.cell_bits", "more than 16 bits per cell"));
        }
        if self.dac_bits > self.input_bits {
            return Err(err(
                "dac.bits",
                format!(
                    "{} exceeds precision.input_bits {}",
                    self.dac_bits, self.input_bits
                ),
            ));
        }
        if self.dac_bits > 16 {
            return Err(err("dac.bits", "more than 16 bits per input cycle"));
        }
        if let AdcBits::Fixed(b) = self.adc_bits {
            if !(1..=32).contains(&b) {
                return Err(err(
                    "adc.bits",
                    format!("{b} is outside 1..=32 (or \"auto\")"),
                ));
            }
        }
        Ok(())
    }

    /// Cells per weight: cpw = ceil((weight_bits - 1) / cell_bits).
    pub fn cells_per_weight(&self) -> u32 {
        div_ceil((self.weight_bits - 1) as u64, self.cell_bits as u64) as u32
    }

    /// OU height of a mode, as used by adc.bits = auto (crossbar.rows for ideal).
    pub fn ou_height(&self, mode: Mode) -> u32 {
        match mode {
            Mode::Ideal => self.xbar_rows,
            _ => self.ou_rows,
        }
    }

    /// ADC resolution of a mode: fixed, or ceil(log2(h*(2^cell-1)*(2^dac-1)+1)).
    pub fn adc_resolution(&self, mode: Mode) -> u32 {
        match self.adc_bits {
            AdcBits::Fixed(b) => b,
            AdcBits::Auto => {
                let levels = self.ou_height(mode) as u64
                    * ((1u64 << self.cell_bits) - 1)
                    * ((1u64 << self.dac_bits) - 1)
                    + 1;
                crate::ceil_log2(levels)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_section_1() {
        let hw = Hardware::default();
        assert!(hw.validate().is_ok());
        // (16-1)/2 -> 8 cells; auto ADC: 9*3*1+1 = 28 -> 5 bits; ideal 128*3+1 = 385 -> 9 bits
        assert_eq!(hw.cells_per_weight(), 8);
        assert_eq!(hw.adc_resolution(Mode::Sre), 5);
        assert_eq!(hw.adc_resolution(Mode::Ideal), 9);
    }

    #[test]
    fn impossible_configs_name_their_key() {
        let bad = |f: fn(&mut Hardware)| {
            let mut hw = Hardware::default();
            f(&mut hw);
            hw.validate().unwrap_err().key
        };
        assert_eq!(bad(|h| h.ou_rows = 129), "ou.rows");
        assert_eq!(bad(|h| h.ou_cols = 0), "ou.cols");
        assert_eq!(bad(|h| h.cell_bits = 16), "crossbar.cell_bits");
        assert_eq!(bad(|h| h.weight_bits = 1), "precision.weight_bits");
        assert_eq!(bad(|h| h.dac_bits = 17), "dac.bits");
        assert_eq!(bad(|h| h.adc_bits = AdcBits::Fixed(0)), "adc.bits");
    }
}
