//! How far a mode's outputs are from the exact product (docs/functional.md, "What a run computes"),
//! reduced as outputs stream, in the outputs' order (so the figures do not depend on
//! threads or on how samples were chunked).

/// Sums over every output of a (layer, mode).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics {
    pub outputs: u64,
    /// Outputs equal to the exact product.
    pub exact: u64,
    /// Sum of (Y - Y_exact)^2.
    pub sq_err: f64,
    /// Sum of Y_exact^2.
    pub sq_exact: f64,
    pub max_abs_err: u64,
    /// Outputs compared with the float layer (0 without one).
    pub float_outputs: u64,
    /// Sum of (Y * step - Y_float)^2, Y dequantized.
    pub float_sq_err: f64,
    /// Sum of Y_float^2.
    pub float_sq_ref: f64,
    /// ADC conversions of the reads that carried current: a conversion per column of
    /// the tile read.
    pub adc_conversions: u64,
    /// Those whose sum clipped (docs/functional.md, "ADC range").
    pub adc_clips: u64,
}

impl Metrics {
    #[inline]
    pub fn add(&mut self, y: i64, exact: i64) {
        let e = (y as i128 - exact as i128).unsigned_abs();
        self.outputs += 1;
        self.exact += (e == 0) as u64;
        let ef = e as f64;
        self.sq_err += ef * ef;
        let x = exact as f64;
        self.sq_exact += x * x;
        self.max_abs_err = self.max_abs_err.max(e.min(u64::MAX as u128) as u64);
    }

    /// Adds the comparison of one output dequantized (`y` times the product of the
    /// weight and input steps) with the float layer's `reference`.
    #[inline]
    pub fn add_float(&mut self, dequantized: f64, reference: f64) {
        let e = dequantized - reference;
        self.float_outputs += 1;
        self.float_sq_err += e * e;
        self.float_sq_ref += reference * reference;
    }

    /// ||Y * step - Y_float|| / ||Y_float|| (None without a float layer, or when its
    /// output is all zero).
    pub fn float_rel_rmse(&self) -> Option<f64> {
        (self.float_outputs > 0 && self.float_sq_ref > 0.0)
            .then(|| (self.float_sq_err / self.float_sq_ref).sqrt())
    }

    /// Fraction of ADC conversions that clipped: 0 where outputs were computed without a
    /// conversion counted (no read carried current, or an `adc.bits = auto` converter,
    /// which never clips and whose conversions are not counted); None without outputs.
    pub fn adc_clip_frac(&self) -> Option<f64> {
        if self.adc_conversions > 0 {
            Some(self.adc_clips as f64 / self.adc_conversions as f64)
        } else {
            (self.outputs > 0).then_some(0.0)
        }
    }

    /// [`Metrics::merge`] when every sum fits: else `self` is left as it was and the
    /// name of the first sum that would not (a count past 2^64 - 1, a float sum past the
    /// largest double) is returned. The same additions in the same order as `merge`, so
    /// the same bits.
    pub fn checked_merge(&mut self, o: &Metrics) -> Result<(), &'static str> {
        let count = |a: u64, b: u64, name| a.checked_add(b).ok_or(name);
        let float = |a: f64, b: f64, name| Some(a + b).filter(|s| s.is_finite()).ok_or(name);
        *self = Metrics {
            outputs: count(self.outputs, o.outputs, "func_outputs")?,
            exact: count(self.exact, o.exact, "func_exact")?,
            sq_err: float(self.sq_err, o.sq_err, "func_sq_err")?,
            sq_exact: float(self.sq_exact, o.sq_exact, "func_sq_exact")?,
            max_abs_err: self.max_abs_err.max(o.max_abs_err),
            float_outputs: count(self.float_outputs, o.float_outputs, "func_float_outputs")?,
            float_sq_err: float(self.float_sq_err, o.float_sq_err, "func_float_sq_err")?,
            float_sq_ref: float(self.float_sq_ref, o.float_sq_ref, "func_float_sq_ref")?,
            adc_conversions: count(
                self.adc_conversions,
                o.adc_conversions,
                "func_adc_conversions",
            )?,
            adc_clips: count(self.adc_clips, o.adc_clips, "func_adc_clips")?,
        };
        Ok(())
    }

    /// Adds the sums of `o` (max_abs_err the larger).
    pub fn merge(&mut self, o: &Metrics) {
        self.outputs += o.outputs;
        self.exact += o.exact;
        self.sq_err += o.sq_err;
        self.sq_exact += o.sq_exact;
        self.max_abs_err = self.max_abs_err.max(o.max_abs_err);
        self.float_outputs += o.float_outputs;
        self.float_sq_err += o.float_sq_err;
        self.float_sq_ref += o.float_sq_ref;
        self.adc_conversions += o.adc_conversions;
        self.adc_clips += o.adc_clips;
    }

    /// Fraction of outputs equal to the exact product (None without outputs).
    pub fn exact_frac(&self) -> Option<f64> {
        (self.outputs > 0).then(|| self.exact as f64 / self.outputs as f64)
    }

    /// ||Y - Y_exact|| / ||Y_exact|| (None when the exact output is all zero).
    pub fn rel_rmse(&self) -> Option<f64> {
        (self.sq_exact > 0.0).then(|| (self.sq_err / self.sq_exact).sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_of_a_few_outputs() {
        let mut m = Metrics::default();
        for (y, x) in [(3, 3), (5, 4), (-2, 0), (0, 0)] {
            m.add(y, x);
        }
        assert_eq!((m.outputs, m.exact, m.max_abs_err), (4, 2, 2));
        assert_eq!(m.exact_frac(), Some(0.5));
        // errors 0,1,2,0 -> 5; exact 9 + 16 = 25 -> sqrt(5/25)
        assert_eq!(m.rel_rmse(), Some((5.0f64 / 25.0).sqrt()));
        let mut z = Metrics::default();
        z.add(1, 0);
        assert_eq!(z.rel_rmse(), None);
        assert_eq!(Metrics::default().exact_frac(), None);
        assert_eq!(m.float_rel_rmse(), None);
        let mut f = Metrics::default();
        // errors 0.5, -1 -> 1.25; reference 4 + 1 -> 5
        f.add_float(2.5, 2.0);
        f.add_float(0.0, 1.0);
        assert_eq!(f.float_rel_rmse(), Some((1.25f64 / 5.0).sqrt()));
        let mut big = Metrics::default();
        big.add(i64::MAX, i64::MIN);
        assert_eq!(big.max_abs_err, u64::MAX);
    }
}
