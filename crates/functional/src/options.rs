//! The settings of a functional run that are not hardware geometry ([`FuncOptions`],
//! [`AdcRange`]): below the run, the exact path and the memory budget that read them.

use crate::device::Device;
use crate::program::{index_decoder, Decoder};

/// The settings of a functional run that are not hardware geometry.
#[derive(Debug, Clone)]
pub struct FuncOptions {
    /// `adc.step`: cell levels per ADC count (1: every level distinct).
    pub adc_step: u64,
    /// Keep every output (for `--dump-outputs`); otherwise only the metrics.
    pub keep_outputs: bool,
    /// The index decoder compacted rows are routed with (the model's, or a wrong one in
    /// a mutation test).
    pub decoder: Decoder,
    /// `[device]`: the ideal device by default.
    pub device: Device,
    /// Compute a mode whose reads are provably exact ([`exact_path`]) as the exact
    /// product instead of OU by OU (on by default). Off in the tests of the datapath
    /// itself, and wherever `decoder` is not the model's (the fast path assumes it; a
    /// function's address cannot tell it reliably).
    pub exact_fast_path: bool,
    /// `adc.range`: how the ADC step of a fixed `adc.bits` is chosen.
    pub adc_range: AdcRange,
    /// Calibrated steps (`adc.range = max | percentile:P`): (layer name, mode, step),
    /// from [`calibrate`]; a (layer, mode) absent from it converts with `adc_step`.
    pub adc_steps: std::sync::Arc<Vec<(String, crossbar::Mode, u64)>>,
    /// Drift-compensation gains (`device.drift_compensation = on`): (layer name, mode,
    /// gain), from [`compensation_gains`]; a (layer, mode) absent from it is not scaled.
    pub gains: std::sync::Arc<Vec<(String, crossbar::Mode, f64)>>,
}

/// `adc.range` (docs/functional.md, "ADC range").
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum AdcRange {
    /// The step is `adc.step` (no calibration).
    #[default]
    Step,
    /// The largest sum an OU can produce at its height reaches the top code.
    Full,
    /// The P-th percentile (0 < P <= 100, nearest rank) of the non-zero ideal sums over
    /// the calibration samples reaches the top code; `max` is percentile 100.
    Percentile(f64),
}

impl AdcRange {
    /// `step`, `full`, `max` or `percentile:P`.
    pub fn parse(s: &str) -> Result<AdcRange, String> {
        match s {
            "step" => Ok(AdcRange::Step),
            "full" => Ok(AdcRange::Full),
            "max" => Ok(AdcRange::Percentile(100.0)),
            _ => {
                let p = s
                    .strip_prefix("percentile:")
                    .and_then(|p| p.parse::<f64>().ok())
                    .filter(|p| *p > 0.0 && *p <= 100.0);
                p.map(AdcRange::Percentile).ok_or_else(|| {
                    format!("'{s}' is not step, full, max or percentile:P with 0 < P <= 100")
                })
            }
        }
    }

    /// Whether the step comes from calibration samples.
    pub fn calibrated(&self) -> bool {
        matches!(self, AdcRange::Percentile(_))
    }
}

impl Default for FuncOptions {
    fn default() -> Self {
        FuncOptions {
            adc_step: 1,
            keep_outputs: false,
            decoder: index_decoder,
            device: Device::default(),
            exact_fast_path: true,
            adc_range: AdcRange::Step,
            adc_steps: Default::default(),
            gains: Default::default(),
        }
    }
}
