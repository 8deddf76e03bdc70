//! Section 5: passes, input cycles, digits and active rows.

use crossbar::{div_ceil, Hardware};
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// `activation.granularity`: what makes a row inactive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Granularity {
    /// A row is inactive in every cycle of a pass when its pass value is 0.
    Value,
    /// A row is inactive in a cycle when its current input digit is 0.
    Bit,
}

impl FromStr for Granularity {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "value" => Ok(Granularity::Value),
            "bit" => Ok(Granularity::Bit),
            _ => Err(format!("unknown granularity '{s}' (expected value or bit)")),
        }
    }
}

/// `input.signed_encoding`: how a signed layer's inputs are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SignedEncoding {
    TwosComplement,
    SignMagnitude,
}

impl FromStr for SignedEncoding {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "twos-complement" => Ok(SignedEncoding::TwosComplement),
            "sign-magnitude" => Ok(SignedEncoding::SignMagnitude),
            _ => Err(format!(
                "unknown encoding '{s}' (expected twos-complement or sign-magnitude)"
            )),
        }
    }
}

/// One pass of a vector through the crossbars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Unsigned layer: the value itself.
    Unsigned,
    /// Signed layer, two's complement: q mod 2^input_bits.
    TwosComplement { bits: u32 },
    /// Signed layer, sign-magnitude: max(q, 0).
    Positive,
    /// Signed layer, sign-magnitude: max(-q, 0).
    Negative,
}

impl Pass {
    /// The value row k applies in this pass.
    #[inline]
    pub fn value(self, q: i32) -> u64 {
        match self {
            Pass::Unsigned => q as u64,
            Pass::TwosComplement { bits } => (q as i64 as u64) & ((1u64 << bits) - 1),
            Pass::Positive => q.max(0) as u64,
            Pass::Negative => (-(q.min(0) as i64)) as u64,
        }
    }
}

/// How a layer's vectors are applied: passes, applied bits and input cycles per pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassPlan {
    pub passes: Vec<Pass>,
    pub applied_bits: u32,
    /// n_cyc = ceil(applied_bits / dac.bits).
    pub cycles: u32,
    pub dac_bits: u32,
}

impl PassPlan {
    pub fn new(signed: bool, encoding: SignedEncoding, hw: &Hardware) -> Self {
        let (passes, applied_bits) = match (signed, encoding) {
            (false, _) => (vec![Pass::Unsigned], hw.input_bits),
            (true, SignedEncoding::TwosComplement) => (
                vec![Pass::TwosComplement {
                    bits: hw.input_bits,
                }],
                hw.input_bits,
            ),
            (true, SignedEncoding::SignMagnitude) => {
                (vec![Pass::Positive, Pass::Negative], hw.input_bits - 1)
            }
        };
        PassPlan {
            passes,
            applied_bits,
            cycles: div_ceil(applied_bits as u64, hw.dac_bits as u64) as u32,
            dac_bits: hw.dac_bits,
        }
    }

    /// Digit b of pass value u: (u >> (b * dac.bits)) & (2^dac.bits - 1).
    #[inline]
    pub fn digit(&self, u: u64, b: u32) -> u64 {
        (u >> (b * self.dac_bits)) & ((1u64 << self.dac_bits) - 1)
    }

    /// Whether a row with pass value `u` is driven in input cycle `b`.
    #[inline]
    pub fn active(&self, g: Granularity, u: u64, b: u32) -> bool {
        match g {
            Granularity::Value => u != 0,
            Granularity::Bit => self.digit(u, b) != 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_and_digits() {
        let hw = Hardware {
            input_bits: 4,
            dac_bits: 2,
            ..Hardware::default()
        };
        // two's complement, 4 bits: -3 -> 0b1101; digits (2-bit) 01, 11
        let p = PassPlan::new(true, SignedEncoding::TwosComplement, &hw);
        assert_eq!((p.passes.len(), p.applied_bits, p.cycles), (1, 4, 2));
        let u = p.passes[0].value(-3);
        assert_eq!(u, 0b1101);
        assert_eq!((p.digit(u, 0), p.digit(u, 1)), (1, 3));
        // sign-magnitude: 3 applied bits -> 2 cycles, two passes
        let s = PassPlan::new(true, SignedEncoding::SignMagnitude, &hw);
        assert_eq!((s.passes.len(), s.applied_bits, s.cycles), (2, 3, 2));
        assert_eq!((s.passes[0].value(-3), s.passes[1].value(-3)), (0, 3));
        // bit granularity: 4 = 0b0100 is inactive in cycle 0 (digit 00), active in cycle 1
        assert!(!p.active(Granularity::Bit, 4, 0));
        assert!(p.active(Granularity::Bit, 4, 1));
        assert!(p.active(Granularity::Value, 4, 0));
    }
}
