//! The `[memory]` table of a config file: compute throughput, element widths, optimizer,
//! mode, prefetching and the tile size of the access list.

use serde::{Deserialize, Serialize};

/// Optimizer of the training step; decides how many state tensors each weight carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Optimizer {
    /// Plain SGD: no state.
    Sgd,
    /// SGD with momentum: one velocity tensor per weight.
    Momentum,
    /// Adam: first and second moment tensors per weight.
    Adam,
}

impl Optimizer {
    /// State tensors per weight tensor (0, 1, 2).
    pub fn state_tensors(self) -> usize {
        match self {
            Optimizer::Sgd => 0,
            Optimizer::Momentum => 1,
            Optimizer::Adam => 2,
        }
    }

    /// Element-wise operations of the update per weight element (assumed:
    /// SGD w -= lr*g: 2; momentum v = m*v + g, w -= lr*v: 4; Adam with bias correction: 12).
    pub fn ops_per_element(self) -> f64 {
        match self {
            Optimizer::Sgd => 2.0,
            Optimizer::Momentum => 4.0,
            Optimizer::Adam => 12.0,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Optimizer::Sgd => "sgd",
            Optimizer::Momentum => "momentum",
            Optimizer::Adam => "adam",
        }
    }
}

/// What is modelled: a whole training step, or one forward pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Training,
    Inference,
}

impl Mode {
    pub fn parse(s: &str) -> Result<Mode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "training" | "train" => Ok(Mode::Training),
            "inference" | "infer" => Ok(Mode::Inference),
            other => Err(format!("'{other}' is not a mode (training or inference)")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Training => "training",
            Mode::Inference => "inference",
        }
    }
}

/// Where per-layer compute times come from (the caller supplies simulated figures).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComputeKind {
    /// Peak MAC/s and element-wise op/s of this table.
    Peak,
    /// Simulated per-layer times where the caller has them, peak elsewhere.
    Simulated,
}

/// The `[memory]` config table. Defaults describe a V100-class accelerator training in
/// 16-bit precision (see docs/memory.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Peak multiply-accumulates per second of the matrix engine (conv, fc, matmul, LSTM).
    pub peak_macs_per_s: f64,
    /// Element-wise operations per second (norms, activations, pooling, adds, updates).
    pub elementwise_ops_per_s: f64,
    /// Bytes of one element of weights, activations and gradients.
    pub bytes_per_element: u32,
    /// Bytes of one element of optimizer state.
    pub optimizer_bytes_per_element: u32,
    pub optimizer: Optimizer,
    pub mode: Mode,
    /// Overlap the next step's fetches with the current step's compute when there is room.
    pub prefetch: bool,
    /// Tensors larger than this are split into row panels of at most this many bytes, and
    /// matmul/conv steps walk them as a blocked loop nest.
    pub tile_bytes: u64,
    /// Which compute figures the caller should pass (`peak` or `simulated`).
    pub compute: ComputeKind,
    /// Buffer policy of the reported figures: `belady`, `lru` or `fifo`.
    pub policy: Policy,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            peak_macs_per_s: 62.5e12,
            elementwise_ops_per_s: 15.7e12,
            bytes_per_element: 2,
            optimizer_bytes_per_element: 4,
            optimizer: Optimizer::Momentum,
            mode: Mode::Training,
            prefetch: true,
            tile_bytes: 512 * 1024,
            compute: ComputeKind::Peak,
            policy: Policy::Belady,
        }
    }
}

impl MemoryConfig {
    /// Checks every value; the message names the key.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.peak_macs_per_s.is_finite() && self.peak_macs_per_s > 0.0) {
            return Err("memory.peak_macs_per_s: must be a positive number".into());
        }
        if !(self.elementwise_ops_per_s.is_finite() && self.elementwise_ops_per_s > 0.0) {
            return Err("memory.elementwise_ops_per_s: must be a positive number".into());
        }
        if self.bytes_per_element == 0 {
            return Err("memory.bytes_per_element: must be positive".into());
        }
        if self.optimizer_bytes_per_element == 0 {
            return Err("memory.optimizer_bytes_per_element: must be positive".into());
        }
        if self.tile_bytes == 0 {
            return Err("memory.tile_bytes: must be positive".into());
        }
        Ok(())
    }
}

/// Which resident data the buffer evicts when it needs room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// The data read farthest in the future (the compiler knows the whole access list).
    #[default]
    Belady,
    /// The least recently used data; dead data first.
    Lru,
    /// The data that came on chip first; dead data first.
    Fifo,
}

impl Policy {
    pub const ALL: [Policy; 3] = [Policy::Belady, Policy::Lru, Policy::Fifo];

    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Belady => "belady",
            Policy::Lru => "lru",
            Policy::Fifo => "fifo",
        }
    }

    pub fn parse(s: &str) -> Result<Policy, String> {
        Policy::ALL
            .into_iter()
            .find(|p| p.as_str() == s.trim().to_ascii_lowercase())
            .ok_or_else(|| format!("'{s}' is not a buffer policy (belady, lru or fifo)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_round_trips() {
        let c = MemoryConfig::default();
        assert!(c.validate().is_ok());
        let s = serde_json::to_string(&c).unwrap();
        let back: MemoryConfig = serde_json::from_str(&s).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn unknown_keys_and_bad_values_are_rejected() {
        assert!(serde_json::from_str::<MemoryConfig>(r#"{"bandwith": 1}"#).is_err());
        let c: MemoryConfig = serde_json::from_str(r#"{"optimizer": "adam"}"#).unwrap();
        assert_eq!(c.optimizer.state_tensors(), 2);
        let c = MemoryConfig {
            bytes_per_element: 0,
            ..MemoryConfig::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .starts_with("memory.bytes_per_element"));
    }
}
