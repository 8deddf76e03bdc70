//! Quantization per docs/sre-model.md section 2 and range checks per section 9.

use thiserror::Error;

/// Word widths of weights and inputs (precision.weight_bits, precision.input_bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Precision {
    pub weight_bits: u32,
    pub input_bits: u32,
}

impl Default for Precision {
    /// The model's defaults (section 1): 16-bit weights and inputs.
    fn default() -> Self {
        Precision {
            weight_bits: 16,
            input_bits: 16,
        }
    }
}

impl Precision {
    /// Widths the integer paths can represent: weights 2..=32 bits (|q| <= 2^31 - 1),
    /// inputs 1..=31 bits (unsigned q <= 2^31 - 1). The message names the config key.
    pub fn validate(&self) -> Result<(), String> {
        if !(2..=32).contains(&self.weight_bits) {
            return Err(format!(
                "precision.weight_bits: {} is not in 2..=32",
                self.weight_bits
            ));
        }
        if !(1..=31).contains(&self.input_bits) {
            return Err(format!(
                "precision.input_bits: {} is not in 1..=31",
                self.input_bits
            ));
        }
        Ok(())
    }
}

/// What can be wrong with a tensor's values; the caller adds file and field.
#[derive(Debug, Error, PartialEq)]
pub enum QuantError {
    #[error("value at flat index {index} is not finite ({value})")]
    NotFinite { index: usize, value: f64 },
    #[error(
        "integer {value} at flat index {index} is out of range {lo}..={hi} for {bits}-bit {what}"
    )]
    OutOfRange {
        index: usize,
        value: i64,
        lo: i64,
        hi: i64,
        bits: u32,
        what: &'static str,
    },
}

/// Round half away from zero of (x / max) * scale, in float64 (section 2).
#[inline]
fn scale_round(x: f64, max: f64, scale: f64) -> i32 {
    ((x / max) * scale).round() as i32
}

fn check_finite<T: Copy + Into<f64>>(x: &[T]) -> Result<(), QuantError> {
    match x.iter().position(|&v| !v.into().is_finite()) {
        Some(index) => Err(QuantError::NotFinite {
            index,
            value: x[index].into(),
        }),
        None => Ok(()),
    }
}

/// Largest magnitude of a signed `bits`-wide symmetric integer: 2^(bits-1) - 1.
pub fn signed_max(bits: u32) -> i64 {
    (1i64 << (bits - 1)) - 1
}

/// Largest unsigned `bits`-wide integer: 2^bits - 1.
pub fn unsigned_max(bits: u32) -> i64 {
    (1i64 << bits) - 1
}

/// Per-layer symmetric weight quantization: q = round(w / max|w| * (2^(b-1) - 1)).
pub fn quantize_weights(w: &[f64], bits: u32) -> Result<Vec<i32>, QuantError> {
    quantize_weights_from(w, bits)
}

/// [`quantize_weights`] for any float element (f32 arrays are quantized without an f64 copy;
/// each element is widened to f64 before the arithmetic, so the result is the same).
pub fn quantize_weights_from<T: Copy + Into<f64>>(
    w: &[T],
    bits: u32,
) -> Result<Vec<i32>, QuantError> {
    check_finite(w)?;
    let max = w.iter().fold(0.0f64, |m, &v| m.max(v.into().abs()));
    if max == 0.0 {
        return Ok(vec![0; w.len()]);
    }
    let scale = signed_max(bits) as f64;
    Ok(w.iter()
        .map(|&v| scale_round(v.into(), max, scale))
        .collect())
}

/// Integer weights are used as they are, after a range check |q| <= 2^(b-1) - 1.
pub fn check_int_weights(w: &[i64], bits: u32) -> Result<Vec<i32>, QuantError> {
    check_int_weights_from(w, bits)
}

/// [`check_int_weights`] for any integer element that widens to i64.
pub fn check_int_weights_from<T: Copy + Into<i64>>(
    w: &[T],
    bits: u32,
) -> Result<Vec<i32>, QuantError> {
    let hi = signed_max(bits);
    w.iter()
        .enumerate()
        .map(|(index, &value)| {
            let value: i64 = value.into();
            if value.abs() > hi {
                Err(QuantError::OutOfRange {
                    index,
                    value,
                    lo: -hi,
                    hi,
                    bits,
                    what: "weight",
                })
            } else {
                Ok(value as i32)
            }
        })
        .collect()
}

/// Quantized inputs and whether the layer is signed (any element < 0).
#[derive(Debug, Clone, PartialEq)]
pub struct QuantInputs {
    pub values: Vec<i32>,
    pub signed: bool,
}

/// Input quantization over the whole tensor (all samples): unsigned layers to
/// 0..2^b - 1 by max(x); signed layers to +-(2^(b-1) - 1) by max|x|.
pub fn quantize_inputs(x: &[f64], bits: u32) -> Result<QuantInputs, QuantError> {
    quantize_inputs_from(x, bits)
}

/// [`quantize_inputs`] for any float element (widened to f64 element by element).
pub fn quantize_inputs_from<T: Copy + Into<f64>>(
    x: &[T],
    bits: u32,
) -> Result<QuantInputs, QuantError> {
    check_finite(x)?;
    let signed = x.iter().any(|&v| v.into() < 0.0);
    let max = x.iter().fold(0.0f64, |m, &v| m.max(v.into().abs()));
    if max == 0.0 {
        return Ok(QuantInputs {
            values: vec![0; x.len()],
            signed,
        });
    }
    let scale = if signed {
        signed_max(bits)
    } else {
        unsigned_max(bits)
    } as f64;
    Ok(QuantInputs {
        values: x
            .iter()
            .map(|&v| scale_round(v.into(), max, scale))
            .collect(),
        signed,
    })
}

/// Integer inputs are used as they are, after the range check of section 9.
pub fn check_int_inputs(x: &[i64], bits: u32) -> Result<QuantInputs, QuantError> {
    check_int_inputs_from(x, bits)
}

/// [`check_int_inputs`] for any integer element that widens to i64.
pub fn check_int_inputs_from<T: Copy + Into<i64>>(
    x: &[T],
    bits: u32,
) -> Result<QuantInputs, QuantError> {
    let signed = x.iter().any(|&v| v.into() < 0);
    let (lo, hi) = if signed {
        (-signed_max(bits), signed_max(bits))
    } else {
        (0, unsigned_max(bits))
    };
    let values = x
        .iter()
        .enumerate()
        .map(|(index, &value)| {
            let value: i64 = value.into();
            if value < lo || value > hi {
                Err(QuantError::OutOfRange {
                    index,
                    value,
                    lo,
                    hi,
                    bits,
                    what: if signed { "signed input" } else { "input" },
                })
            } else {
                Ok(value as i32)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(QuantInputs { values, signed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_round_half_away_from_zero() {
        // max|w| = 2, 4 bits -> scale 7: 1.0 -> 3.5 -> 4; -1.0 -> -4; 0.5 -> 1.75 -> 2
        let q = quantize_weights(&[2.0, 1.0, -1.0, 0.5, 0.0, -2.0], 4).unwrap();
        assert_eq!(q, vec![7, 4, -4, 2, 0, -7]);
    }

    #[test]
    fn unsigned_and_signed_inputs() {
        // unsigned, 3 bits -> scale 7 by max 4: 2 -> 3.5 -> 4
        let u = quantize_inputs(&[0.0, 2.0, 4.0], 3).unwrap();
        assert_eq!((u.values, u.signed), (vec![0, 4, 7], false));
        // signed, 3 bits -> scale 3 by max|x| 4: -2 -> -1.5 -> -2
        let s = quantize_inputs(&[-2.0, 4.0, 1.0], 3).unwrap();
        assert_eq!((s.values, s.signed), (vec![-2, 3, 1], true));
        assert_eq!(quantize_inputs(&[0.0, 0.0], 8).unwrap().values, vec![0, 0]);
    }

    #[test]
    fn non_finite_and_out_of_range_are_errors() {
        assert!(matches!(
            quantize_weights(&[1.0, f64::NAN], 8),
            Err(QuantError::NotFinite { index: 1, .. })
        ));
        assert!(check_int_weights(&[127, -127], 8).is_ok());
        assert!(check_int_weights(&[128], 8).is_err());
        assert!(check_int_inputs(&[255, 0], 8).is_ok());
        assert!(check_int_inputs(&[256], 8).is_err());
        assert!(check_int_inputs(&[-128, 1], 8).is_err());
    }

    #[test]
    fn f32_and_narrow_integers_take_the_same_path() {
        // 0.1f32 widens to 0.100000001490116; max 0.4 -> 0.1/0.4*127 = 31.75 -> 32 either way.
        let w32 = [0.4f32, 0.1, -0.3];
        let w64: Vec<f64> = w32.iter().map(|&v| v as f64).collect();
        assert_eq!(quantize_weights_from(&w32, 8).unwrap(), vec![127, 32, -95]);
        assert_eq!(quantize_weights_from(&w32, 8), quantize_weights(&w64, 8));
        assert_eq!(
            quantize_inputs_from(&[f32::INFINITY], 8),
            Err(QuantError::NotFinite {
                index: 0,
                value: f64::INFINITY
            })
        );
        assert_eq!(
            check_int_inputs_from(&[255u8, 3], 8).unwrap().values,
            vec![255, 3]
        );
        assert!(check_int_weights_from(&[-128i8], 8).is_err());
    }
}
