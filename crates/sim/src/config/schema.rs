//! The configuration file's tables and keys as types (configs/default.toml documents each
//! key): what a file or `--set` may say, before [`super::load`] checks and resolves it.

use anyhow::{anyhow, bail, Result};
use crossbar::Layout;
use engine::{Granularity, SignedEncoding};
use pipeline::cycle::{PipelineOptions, QueueDepth};
use pipeline::{SlowStage, Sync};
use serde::{Deserialize, Serialize};
use toml::{Table, Value};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub crossbar: CrossbarCfg,
    pub ou: OuCfg,
    pub precision: PrecisionCfg,
    pub dac: DacCfg,
    pub adc: AdcCfg,
    pub index_decoder: IndexDecoderCfg,
    pub timing: TimingCfg,
    /// The cycle engine's input queues and an optional slow stage (docs/pipeline.md).
    #[serde(default)]
    pub pipeline: PipelineCfg,
    pub mapping: MappingCfg,
    pub activation: ActivationCfg,
    pub input: InputCfg,
    pub power: PowerCfg,
    pub energy: EnergyCfg,
    /// The memory-subsystem model (`sresim memory`); see docs/memory.md.
    #[serde(default)]
    pub memory: memory::MemoryConfig,
    /// Resource limits checked before a run (docs/errors.md).
    #[serde(default)]
    pub limits: LimitsCfg,
    /// The chip around the crossbars (docs/chip.md); absent: today's unbounded model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chip: Option<crate::config::chip::ChipCfg>,
    /// Non-ideal devices of the functional datapath (docs/functional.md).
    #[serde(default)]
    pub device: crate::config::device::DeviceCfg,
    /// The technology node of the energy and area tables (docs/technology.md). Left out
    /// of the serialized config at 32 nm, so configs without it keep their fingerprints.
    #[serde(default, skip_serializing_if = "TechCfg::is_base")]
    pub tech: TechCfg,
    /// The digital vector unit (docs/digital.md). Left out of the serialized config at its
    /// defaults, so configs without it keep their fingerprints and summaries.
    #[serde(default, skip_serializing_if = "DigitalCfg::is_default")]
    pub digital: DigitalCfg,
    /// Where attention products run (docs/digital.md). Likewise left out at its defaults.
    #[serde(default, skip_serializing_if = "AttentionCfg::is_default")]
    pub attention: AttentionCfg,
}

/// `[digital]`: the digital unit's energy table and its [`digital::DigitalUnit`] keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DigitalCfg {
    /// Energy table (TOML), relative to the config file.
    pub table: String,
    pub lanes: u32,
    pub clock_ghz: f64,
    pub buffer_bytes_per_cycle: u32,
    pub kv_bytes_per_cycle: u32,
    #[serde(default)]
    pub occupancy: digital::Occupancy,
}

/// The shipped digital energy table, relative to configs/.
pub const DIGITAL_TABLE: &str = "energy/digital-45nm.toml";
/// The shipped cell-write table, relative to configs/.
pub const WRITE_TABLE: &str = "energy/cell-write-pipelayer.toml";

impl Default for DigitalCfg {
    fn default() -> Self {
        let u = digital::DigitalUnit::default();
        DigitalCfg {
            table: DIGITAL_TABLE.to_string(),
            lanes: u.lanes,
            clock_ghz: u.clock_ghz,
            buffer_bytes_per_cycle: u.buffer_bytes_per_cycle,
            kv_bytes_per_cycle: u.kv_bytes_per_cycle,
            occupancy: u.occupancy,
        }
    }
}

impl DigitalCfg {
    fn is_default(&self) -> bool {
        *self == DigitalCfg::default()
    }

    /// The unit these keys describe (not yet validated).
    pub fn unit(&self) -> digital::DigitalUnit {
        digital::DigitalUnit {
            lanes: self.lanes,
            clock_ghz: self.clock_ghz,
            buffer_bytes_per_cycle: self.buffer_bytes_per_cycle,
            kv_bytes_per_cycle: self.kv_bytes_per_cycle,
            occupancy: self.occupancy,
        }
    }
}

/// `[attention]`: where attention products run, and the cell-write table of
/// `placement = "crossbar"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttentionCfg {
    /// "digital" or "crossbar".
    pub placement: String,
    /// Cell-write table (TOML), relative to the config file.
    pub write_table: String,
}

impl Default for AttentionCfg {
    fn default() -> Self {
        AttentionCfg {
            placement: "digital".to_string(),
            write_table: WRITE_TABLE.to_string(),
        }
    }
}

impl AttentionCfg {
    fn is_default(&self) -> bool {
        *self == AttentionCfg::default()
    }
}

/// `[tech]`: the technology node, nm (one of `energy::tech::NODES`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TechCfg {
    pub node: i64,
}

impl Default for TechCfg {
    fn default() -> Self {
        TechCfg {
            node: i64::from(energy::tech::BASE_NODE),
        }
    }
}

impl TechCfg {
    fn is_base(&self) -> bool {
        self.node == i64::from(energy::tech::BASE_NODE)
    }
}

/// `[limits]`: what a run may take before it is refused with an error.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsCfg {
    /// Estimated peak bytes of loading and simulating one layer.
    pub max_layer_bytes: u64,
}

impl Default for LimitsCfg {
    fn default() -> Self {
        LimitsCfg {
            max_layer_bytes: workload::bundle::DEFAULT_MAX_LAYER_BYTES,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrossbarCfg {
    pub rows: u32,
    pub cols: u32,
    pub cell_bits: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OuCfg {
    pub rows: u32,
    pub cols: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrecisionCfg {
    pub weight_bits: u32,
    pub input_bits: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DacCfg {
    pub bits: u32,
    /// --functional: noise of each driven row's digit, in DAC LSB (docs/functional.md,
    /// "Converter errors"); left out of summary.json at 0.
    #[serde(default, skip_serializing_if = "crate::config::device::is_zero")]
    pub noise: f64,
}

/// `adc.bits`: "auto" or a number of bits.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AdcBitsCfg {
    Fixed(u32),
    Named(String),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdcCfg {
    pub bits: AdcBitsCfg,
    pub per_crossbar: u32,
    /// Cell levels per ADC count of the functional datapath (docs/functional.md).
    #[serde(default = "one")]
    pub step: u64,
    /// How the step of a fixed `adc.bits` is chosen: `step` (adc.step), `full`, `max` or
    /// `percentile:P` (docs/functional.md, "ADC range"). Left out of the serialized
    /// config at its default, so configs without it keep their fingerprints.
    #[serde(default = "step_range", skip_serializing_if = "is_step_range")]
    pub range: String,
    /// Samples of each layer's input the calibration of `max` and `percentile:P` reads
    /// (the first ones).
    #[serde(
        default = "calibration_samples",
        skip_serializing_if = "is_calibration_samples"
    )]
    pub calibration_samples: u64,
    /// --functional: converter errors (docs/functional.md, "Converter errors"), each left
    /// out of summary.json at its default (none).
    #[serde(default, skip_serializing_if = "crate::config::device::is_zero")]
    pub offset: f64,
    #[serde(default, skip_serializing_if = "crate::config::device::is_zero")]
    pub gain_error: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inl: Vec<f64>,
    /// ADC energy by resolution: "isaac" (the reference model's law) or "walden" (a
    /// constant Walden figure of merit; docs/technology.md). Left out of the serialized
    /// config at its default.
    #[serde(default = "isaac_law", skip_serializing_if = "is_isaac_law")]
    pub energy_law: String,
}

fn isaac_law() -> String {
    "isaac".into()
}

fn is_isaac_law(s: &str) -> bool {
    s == "isaac"
}

fn one() -> u64 {
    1
}

fn step_range() -> String {
    "step".into()
}

fn is_step_range(s: &str) -> bool {
    s == "step"
}

/// The default of `adc.calibration_samples`.
pub const CALIBRATION_SAMPLES: u64 = 16;

fn calibration_samples() -> u64 {
    CALIBRATION_SAMPLES
}

fn is_calibration_samples(n: &u64) -> bool {
    *n == CALIBRATION_SAMPLES
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexDecoderCfg {
    pub rows_per_cycle: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimingCfg {
    pub cycle_ns: f64,
    pub sync: Sync,
}

/// `[pipeline]`: queue depth "auto" | N | "unbounded"; slow stage "none" | a stage name.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineCfg {
    pub queue_depth: QueueDepthCfg,
    pub slow_stage: String,
    pub slow_stage_cycles: u32,
}

impl Default for PipelineCfg {
    fn default() -> Self {
        PipelineCfg {
            queue_depth: QueueDepthCfg::Named("auto".into()),
            slow_stage: "none".into(),
            slow_stage_cycles: 1,
        }
    }
}

/// `pipeline.queue_depth`: "auto", "unbounded" or a number.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum QueueDepthCfg {
    Number(i64),
    Named(String),
    /// Anything else, refused with a message that names the key.
    Other(Value),
}

impl PipelineCfg {
    pub(crate) fn resolve(&self, origin: &str) -> Result<PipelineOptions> {
        let queue_depth = match &self.queue_depth {
            QueueDepthCfg::Number(n) => n.to_string().parse::<QueueDepth>(),
            QueueDepthCfg::Named(s) => s.parse::<QueueDepth>(),
            QueueDepthCfg::Other(v) => Err(format!(
                "{v} is not a queue depth (expected \"auto\", \"unbounded\" or a number >= 1)"
            )),
        }
        .map_err(|e| anyhow!("{origin}: pipeline.queue_depth: {e}"))?;
        let cycles = self.slow_stage_cycles;
        if cycles == 0 {
            bail!("{origin}: pipeline.slow_stage_cycles: 0 (expected a number of cycles >= 1)");
        }
        let slow_stage = match self.slow_stage.as_str() {
            "none" if cycles == 1 => None,
            "none" => bail!(
                "{origin}: pipeline.slow_stage_cycles: {cycles} with no slow stage (set pipeline.slow_stage to a stage name)"
            ),
            name => Some(SlowStage {
                stage: name
                    .parse()
                    .map_err(|e| anyhow!("{origin}: pipeline.slow_stage: {e} or \"none\""))?,
                cycles,
            }),
        };
        Ok(PipelineOptions {
            queue_depth,
            slow_stage,
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MappingCfg {
    pub layout: Layout,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActivationCfg {
    pub granularity: Granularity,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputCfg {
    pub signed_encoding: SignedEncoding,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerCfg {
    pub static_mw_per_crossbar: f64,
}

/// `[energy]`: the table file, and optional per-entry overrides (same names as the table).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnergyCfg {
    pub table: String,
    #[serde(flatten)]
    pub overrides: Table,
}
