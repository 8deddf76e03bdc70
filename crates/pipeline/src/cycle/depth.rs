//! `pipeline.queue_depth`: how many barrier intervals a crossbar's input queue holds.

use crate::{SlowStage, Sync};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Depth of every crossbar's input queue, in units of the barrier interval: input
/// vectors for `sync = vector` and `none`, input cycles for `sync = bit`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum QueueDepth {
    /// 1 for `sync = vector` and `bit`, unbounded for `none`.
    #[default]
    Auto,
    /// At most this many units (>= 1), the one being issued included.
    Finite(u64),
    Unbounded,
}

impl QueueDepth {
    /// The depth in effect under `sync` (never `Auto`).
    pub fn resolve(self, sync: Sync) -> QueueDepth {
        match (self, sync) {
            (QueueDepth::Auto, Sync::None) => QueueDepth::Unbounded,
            (QueueDepth::Auto, _) => QueueDepth::Finite(1),
            (d, _) => d,
        }
    }

    /// The barrier policy of the closed form that gives the same cycles as this depth
    /// under `sync`: depth 1 is a barrier after every interval (`bit` stays `bit`,
    /// otherwise `vector`), an unbounded queue is `none`. None for a finite depth above 1,
    /// which only the cycle engine models.
    pub fn closed_form(self, sync: Sync) -> Option<Sync> {
        match self.resolve(sync) {
            QueueDepth::Finite(1) if sync == Sync::Bit => Some(Sync::Bit),
            QueueDepth::Finite(1) => Some(Sync::Vector),
            QueueDepth::Unbounded => Some(Sync::None),
            _ => None,
        }
    }
}

impl fmt::Display for QueueDepth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueDepth::Auto => f.write_str("auto"),
            QueueDepth::Finite(n) => write!(f, "{n}"),
            QueueDepth::Unbounded => f.write_str("unbounded"),
        }
    }
}

impl FromStr for QueueDepth {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(QueueDepth::Auto),
            "unbounded" => Ok(QueueDepth::Unbounded),
            _ => match s.parse::<u64>() {
                Ok(n) if n >= 1 => Ok(QueueDepth::Finite(n)),
                _ => Err(format!(
                    "'{s}' is not a queue depth (expected \"auto\", \"unbounded\" or a number >= 1)"
                )),
            },
        }
    }
}

impl Serialize for QueueDepth {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            QueueDepth::Finite(n) => s.serialize_u64(*n),
            d => s.serialize_str(&d.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for QueueDepth {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(i64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) if n >= 1 => Ok(QueueDepth::Finite(n as u64)),
            Raw::N(n) => Err(serde::de::Error::custom(format!(
                "{n} is not a queue depth (expected \"auto\", \"unbounded\" or a number >= 1)"
            ))),
            Raw::S(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// The `[pipeline]` choices: the input queue depth and an optional slow stage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PipelineOptions {
    pub queue_depth: QueueDepth,
    pub slow_stage: Option<SlowStage>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths_resolve_and_map_to_the_closed_form() {
        use QueueDepth::*;
        assert_eq!(Auto.resolve(Sync::Vector), Finite(1));
        assert_eq!(Auto.resolve(Sync::Bit), Finite(1));
        assert_eq!(Auto.resolve(Sync::None), Unbounded);
        assert_eq!(Finite(4).resolve(Sync::None), Finite(4));
        assert_eq!(Auto.closed_form(Sync::None), Some(Sync::None));
        assert_eq!(Finite(1).closed_form(Sync::None), Some(Sync::Vector));
        assert_eq!(Unbounded.closed_form(Sync::Bit), Some(Sync::None));
        assert_eq!(Auto.closed_form(Sync::Bit), Some(Sync::Bit));
        assert_eq!(Finite(2).closed_form(Sync::Vector), None);
        assert_eq!("8".parse(), Ok(Finite(8)));
        assert_eq!("unbounded".parse(), Ok(Unbounded));
        assert!("0".parse::<QueueDepth>().is_err());
        assert_eq!(Finite(8).to_string(), "8");
    }
}
