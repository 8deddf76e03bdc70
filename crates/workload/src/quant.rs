//! Quantization per docs/model.md §2 and range checks per §9.

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
    /// inputs 2..=31 bits (unsigned q <= 2^31 - 1; one bit is too few for the sign of a
    /// signed layer). The same ranges as `crossbar::Hardware::validate`. The message names
    /// the config key.
    pub fn validate(&self) -> Result<(), String> {
        if !(2..=32).contains(&self.weight_bits) {
            return Err(format!(
                "precision.weight_bits: {} is not in 2..=32",
                self.weight_bits
            ));
        }
        if !(2..=31).contains(&self.input_bits) {
            return Err(format!(
                "precision.input_bits: {} is not in 2..=31",
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
    #[error("value at flat index {index} is {value:e}, beyond the float32 range the model holds values in (|x| <= {:e})", f32::MAX)]
    BeyondFloat32 { index: usize, value: f64 },
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

/// Largest magnitude of a float value a bundle may hold: float32's largest finite value.
/// float64 arrays are accepted, but the model holds weights in float32 (the functional
/// path's float layers) and sums the float network's products and squares in float64: a
/// larger value, finite only in float64, becomes infinity or overflows a sum downstream,
/// and the error would surface far from the file that caused it.
pub const FLOAT_LIMIT: f64 = f32::MAX as f64;

/// The one check of every float value read from a bundle (weights, inputs, biases, the
/// graph input, Constant arrays): finite and within [`FLOAT_LIMIT`]. `index` is the flat
/// index the error names.
#[inline]
pub fn check_value(index: usize, value: f64) -> Result<(), QuantError> {
    if !value.is_finite() {
        Err(QuantError::NotFinite { index, value })
    } else if value.abs() > FLOAT_LIMIT {
        Err(QuantError::BeyondFloat32 { index, value })
    } else {
        Ok(())
    }
}

/// [`check_value`] of every element, in flat order.
pub fn check_values<T: Copy + Into<f64>>(x: &[T]) -> Result<(), QuantError> {
    x.iter()
        .enumerate()
        .try_for_each(|(i, &v)| check_value(i, v.into()))
}

fn check_finite<T: Copy + Into<f64>>(x: &[T]) -> Result<(), QuantError> {
    check_values(x)
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
            // Not `value.abs()`: |i64::MIN| does not fit i64 (it wraps to itself).
            if value.unsigned_abs() > hi as u64 {
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

/// What quantizing a float input tensor needs to know of the whole tensor, gathered
/// element by element in flat order (so a tensor can be read a block at a time): whether
/// any element is negative and max|x|. The first non-finite element is an error.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FloatStats {
    /// Elements seen so far (the flat index of the next one).
    pub seen: usize,
    pub signed: bool,
    pub max: f64,
}

impl FloatStats {
    #[inline]
    pub fn push(&mut self, x: f64) -> Result<(), QuantError> {
        check_value(self.seen, x)?;
        self.signed |= x < 0.0;
        self.max = self.max.max(x.abs());
        self.seen += 1;
        Ok(())
    }

    /// The scale of a `bits`-wide quantization of the tensor.
    pub fn scale(&self, bits: u32) -> InputScale {
        InputScale::new(self.signed, self.max, bits)
    }
}

/// Float input quantization once the whole tensor's signedness and max|x| are known
/// (section 2): unsigned layers to 0..2^b - 1 by max(x); signed layers to
/// +-(2^(b-1) - 1) by max|x|; an all-zero tensor to zeros. The one copy of the
/// per-element arithmetic, whether a tensor is quantized whole or a chunk at a time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InputScale {
    max: f64,
    scale: f64,
}

impl InputScale {
    pub fn new(signed: bool, max: f64, bits: u32) -> Self {
        let scale = if signed {
            signed_max(bits)
        } else {
            unsigned_max(bits)
        } as f64;
        InputScale { max, scale }
    }

    /// The float value of one integer step (x ~ q * step): max / scale, 0 for an
    /// all-zero tensor.
    pub fn step(&self) -> f64 {
        if self.max == 0.0 {
            0.0
        } else {
            self.max / self.scale
        }
    }

    #[inline]
    pub fn quantize(&self, x: f64) -> i32 {
        if self.max == 0.0 {
            0
        } else {
            scale_round(x, self.max, self.scale)
        }
    }
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
    let mut stats = FloatStats::default();
    for &v in x {
        stats.push(v.into())?;
    }
    let scale = stats.scale(bits);
    Ok(QuantInputs {
        values: x.iter().map(|&v| scale.quantize(v.into())).collect(),
        signed: stats.signed,
    })
}

/// The range check of an integer input tensor for one precision (section 9), gathered
/// element by element in flat order. The allowed range depends on whether any element
/// is negative, known only at the end, so the first element outside either candidate
/// range is remembered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntStats {
    bits: u32,
    seen: usize,
    range: IntRange,
    /// First (index, value) with |x| > 2^(b-1) - 1 (fails if the tensor is signed).
    over_signed: Option<(usize, i64)>,
    /// First (index, value) with x > 2^b - 1 (fails if it is not).
    over_unsigned: Option<(usize, i64)>,
}

/// Smallest and largest element of an integer tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntRange {
    pub min: i64,
    pub max: i64,
}

impl IntRange {
    /// True iff any element is negative.
    pub fn signed(&self) -> bool {
        self.min < 0
    }

    /// True iff every element lies in the range for `bits`-wide inputs.
    pub fn fits(&self, bits: u32) -> bool {
        if self.signed() {
            self.min >= -signed_max(bits) && self.max <= signed_max(bits)
        } else {
            self.max <= unsigned_max(bits)
        }
    }
}

impl IntStats {
    pub fn new(bits: u32) -> Self {
        IntStats {
            bits,
            seen: 0,
            range: IntRange {
                min: i64::MAX,
                max: i64::MIN,
            },
            over_signed: None,
            over_unsigned: None,
        }
    }

    #[inline]
    pub fn push(&mut self, x: i64) {
        if self.over_signed.is_none() && (x > signed_max(self.bits) || x < -signed_max(self.bits)) {
            self.over_signed = Some((self.seen, x));
        }
        if self.over_unsigned.is_none() && x > unsigned_max(self.bits) {
            self.over_unsigned = Some((self.seen, x));
        }
        self.range.min = self.range.min.min(x);
        self.range.max = self.range.max.max(x);
        self.seen += 1;
    }

    /// The tensor's range, or the first element out of range for its signedness.
    pub fn finish(self) -> Result<IntRange, QuantError> {
        let signed = self.range.signed();
        let (lo, hi, over) = if signed {
            let m = signed_max(self.bits);
            (-m, m, self.over_signed)
        } else {
            (0, unsigned_max(self.bits), self.over_unsigned)
        };
        match over {
            Some((index, value)) => Err(QuantError::OutOfRange {
                index,
                value,
                lo,
                hi,
                bits: self.bits,
                what: if signed { "signed input" } else { "input" },
            }),
            None => Ok(self.range),
        }
    }
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
    let mut stats = IntStats::new(bits);
    for &v in x {
        stats.push(v.into());
    }
    let range = stats.finish()?;
    Ok(QuantInputs {
        values: x.iter().map(|&v| v.into() as i32).collect(),
        signed: range.signed(),
    })
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

    /// A float64 value past float32's range (1e300) is finite but refused, by weights,
    /// inputs and the one value check alike, naming its index and the limit; float32's
    /// own extremes pass.
    #[test]
    fn values_beyond_the_float32_range_are_refused() {
        let max = f32::MAX as f64;
        assert!(check_values(&[max, -max, 0.0]).is_ok());
        let above = f64::from_bits(max.to_bits() + 1);
        for (x, shown) in [(1e300, "1e300"), (-above, "-3.402823466385289e38")] {
            let e = quantize_weights(&[0.5, x], 16).unwrap_err();
            assert_eq!(e, QuantError::BeyondFloat32 { index: 1, value: x });
            assert_eq!(
                e.to_string(),
                format!("value at flat index 1 is {shown}, beyond the float32 range the model holds values in (|x| <= 3.4028235e38)")
            );
            assert!(quantize_inputs(&[x], 8).is_err());
            let mut st = FloatStats::default();
            st.push(1.0).unwrap();
            assert_eq!(
                st.push(x),
                Err(QuantError::BeyondFloat32 { index: 1, value: x })
            );
        }
        assert!(matches!(
            check_value(3, f64::NEG_INFINITY),
            Err(QuantError::NotFinite { index: 3, .. })
        ));
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

    /// The definitions of section 2 and 9, written out over a whole slice.
    fn reference_float(x: &[f64], bits: u32) -> Result<QuantInputs, QuantError> {
        // The first value that is not finite, or past float32's largest (1e300 is).
        if let Some(index) = x
            .iter()
            .position(|v| v.is_nan() || v.abs() > f32::MAX as f64)
        {
            let value = x[index];
            return Err(match value.is_finite() {
                true => QuantError::BeyondFloat32 { index, value },
                false => QuantError::NotFinite { index, value },
            });
        }
        let signed = x.iter().any(|&v| v < 0.0);
        let max = x.iter().fold(0.0f64, |m, &v| m.max(v.abs()));
        let scale = if signed {
            signed_max(bits)
        } else {
            unsigned_max(bits)
        } as f64;
        let values = x
            .iter()
            .map(|&v| {
                if max == 0.0 {
                    0
                } else {
                    ((v / max) * scale).round() as i32
                }
            })
            .collect();
        Ok(QuantInputs { values, signed })
    }

    fn reference_int(x: &[i64], bits: u32) -> Result<QuantInputs, QuantError> {
        let signed = x.iter().any(|&v| v < 0);
        let (lo, hi) = if signed {
            (-signed_max(bits), signed_max(bits))
        } else {
            (0, unsigned_max(bits))
        };
        if let Some(index) = x.iter().position(|&v| v < lo || v > hi) {
            return Err(QuantError::OutOfRange {
                index,
                value: x[index],
                lo,
                hi,
                bits,
                what: if signed { "signed input" } else { "input" },
            });
        }
        let values = x.iter().map(|&v| v as i32).collect();
        Ok(QuantInputs { values, signed })
    }

    fn float_elem() -> impl proptest::strategy::Strategy<Value = f64> {
        use proptest::prelude::*;
        prop_oneof![
            8 => -4.0f64..4.0,
            1 => Just(0.0),
            1 => prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(-0.0), Just(1e300)],
        ]
    }

    proptest::proptest! {
        /// Gathering the statistics element by element changes no value and no error.
        #[test]
        fn streamed_statistics_match_the_definition(
            x in proptest::collection::vec(float_elem(), 0..40),
            n in proptest::collection::vec(-300i64..300, 0..40),
            bits in 1u32..12,
        ) {
            // Compared as text: NaN != NaN.
            proptest::prop_assert_eq!(
                format!("{:?}", quantize_inputs(&x, bits)),
                format!("{:?}", reference_float(&x, bits))
            );
            proptest::prop_assert_eq!(check_int_inputs(&n, bits), reference_int(&n, bits));
            // A range that fits for one width is known to fit without a second look.
            let mut st = IntStats::new(31);
            n.iter().for_each(|&v| st.push(v));
            let range = st.finish().unwrap();
            proptest::prop_assert_eq!(range.fits(bits), reference_int(&n, bits).is_ok());
        }
    }

    #[test]
    fn int_stats_report_the_first_offender_for_the_final_signedness() {
        // 4 bits: unsigned 0..=15, signed -7..=7. 9 fails only if signed; 20 fails both.
        let mut s = IntStats::new(4);
        [3, 9, 20].iter().for_each(|&v| s.push(v));
        assert!(matches!(
            s.finish(),
            Err(QuantError::OutOfRange {
                index: 2,
                value: 20,
                lo: 0,
                hi: 15,
                ..
            })
        ));
        let mut s = IntStats::new(4);
        [3, 9, -1].iter().for_each(|&v| s.push(v));
        assert!(matches!(
            s.finish(),
            Err(QuantError::OutOfRange {
                index: 1,
                value: 9,
                lo: -7,
                hi: 7,
                ..
            })
        ));
    }
}
