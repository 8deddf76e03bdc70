//! The five designs compared by a run (section 6).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Which design is simulated: what an OU may skip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Every row of every tile, OU by OU (the baseline).
    Dense,
    /// Weight compression only: compacted rows, every cycle.
    Weight,
    /// Dynamic OU formation only: active rows of the dense tiling.
    Activation,
    /// Both: active compacted rows.
    Sre,
    /// Whole-crossbar activation, one op per tile per input cycle (ISAAC-like).
    Ideal,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::Dense,
        Mode::Weight,
        Mode::Activation,
        Mode::Sre,
        Mode::Ideal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Dense => "dense",
            Mode::Weight => "weight",
            Mode::Activation => "activation",
            Mode::Sre => "sre",
            Mode::Ideal => "ideal",
        }
    }

    /// Weight and sre use the compacted tiling (section 4); the others the dense one.
    pub fn compacted(self) -> bool {
        matches!(self, Mode::Weight | Mode::Sre)
    }

    /// Activation and sre skip inactive rows (dynamic OU formation).
    pub fn skips_inputs(self) -> bool {
        matches!(self, Mode::Activation | Mode::Sre)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown mode '{s}' (expected dense, weight, activation, sre or ideal){}",
                    workload::text::did_you_mean(s, Mode::ALL.iter().map(|m| m.as_str()))
                )
            })
    }
}
