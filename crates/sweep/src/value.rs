//! Axis values and the keys they may be bound to.
//!
//! An axis key is either a config key (`ou.rows`, `crossbar.cell_bits`, `energy.*`,
//! `chip.*`, `device.*`: any key `--set` accepts) or a parameter of the synthetic generators (`synth.*`), which
//! decide the data of built-in networks and of bundle layers without inputs.

use energy::EnergyTable;
use sim::config::DEFAULT_CONFIG_TOML;
use std::sync::OnceLock;
use toml::{Table, Value};

/// One value of an axis: a TOML scalar.
#[derive(Debug, Clone, PartialEq)]
pub enum AxisValue {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
}

impl AxisValue {
    pub fn from_toml(v: &Value) -> Option<AxisValue> {
        Some(match v {
            Value::Integer(i) => AxisValue::Int(*i),
            Value::Float(f) => AxisValue::Float(*f),
            Value::String(s) => AxisValue::Str(s.clone()),
            Value::Boolean(b) => AxisValue::Bool(*b),
            _ => return None,
        })
    }

    /// The text a point id is hashed from: distinguishes 4 from 4.0 and from "4".
    pub fn canonical(&self) -> String {
        match self {
            AxisValue::Int(i) => i.to_string(),
            AxisValue::Float(f) => format!("{f:?}"),
            AxisValue::Str(s) => format!("{s:?}"),
            AxisValue::Bool(b) => b.to_string(),
        }
    }

    /// The cell of the axis column in points.csv.
    pub fn csv(&self) -> String {
        match self {
            AxisValue::Int(i) => i.to_string(),
            AxisValue::Float(f) => format!("{f}"),
            AxisValue::Str(s) => s.clone(),
            AxisValue::Bool(b) => b.to_string(),
        }
    }

    /// The value as TOML text, for a `--set KEY=VALUE` override.
    pub fn toml_text(&self) -> String {
        match self {
            AxisValue::Str(s) => Value::String(s.clone()).to_string(),
            v => v.canonical(),
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            AxisValue::Int(i) => Some(*i as f64),
            AxisValue::Float(f) => Some(*f),
            _ => None,
        }
    }
}

/// In sweep.json: a JSON number, string or boolean; an integer is written without a
/// decimal point and a float with one (`4` and `4.0` are different values).
impl serde::Serialize for AxisValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AxisValue::Int(i) => s.serialize_i64(*i),
            AxisValue::Float(f) => s.serialize_f64(*f),
            AxisValue::Str(v) => s.serialize_str(v),
            AxisValue::Bool(b) => s.serialize_bool(*b),
        }
    }
}

impl<'de> serde::Deserialize<'de> for AxisValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<AxisValue, D::Error> {
        use serde_json::Value as J;
        match J::deserialize(d)? {
            J::Number(n) if n.is_f64() => Ok(AxisValue::Float(n.as_f64().unwrap_or_default())),
            J::Number(n) => n
                .as_i64()
                .map(AxisValue::Int)
                .ok_or_else(|| serde::de::Error::custom(format!("{n} is not a 64-bit integer"))),
            J::String(v) => Ok(AxisValue::Str(v)),
            J::Bool(b) => Ok(AxisValue::Bool(b)),
            other => Err(serde::de::Error::custom(format!(
                "{other} is not a number, string or boolean"
            ))),
        }
    }
}

impl std::fmt::Display for AxisValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.toml_text())
    }
}

/// The synthetic-generator keys an axis may vary.
pub const SYNTH_KEYS: [&str; 6] = [
    "synth.weight_sparsity",
    "synth.act_sparsity",
    "synth.structure",
    "synth.head_sparsity",
    "synth.seed",
    "synth.synthetic_inputs",
];

/// What a key sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// A config key, applied as `--set key=value`.
    Config,
    /// A synthetic-generator parameter.
    Synth,
}

/// The embedded default config and the default energy table as TOML tables, parsed once
/// per process: a grid's planning classifies every key of every point (a parse per call
/// made planning cost about a millisecond a point).
fn tables() -> Result<&'static (Table, Table), String> {
    static TABLES: OnceLock<Result<(Table, Table), String>> = OnceLock::new();
    TABLES
        .get_or_init(|| {
            let defaults: Table = DEFAULT_CONFIG_TOML
                .parse()
                .map_err(|e| format!("the default config: {e}"))?;
            let energy = Table::try_from(EnergyTable::isaac_32nm())
                .map_err(|e| format!("the default energy table: {e}"))?;
            Ok((defaults, energy))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Classifies `key`, or explains why it is not one.
pub fn key_kind(key: &str) -> Result<KeyKind, String> {
    if SYNTH_KEYS.contains(&key) {
        return Ok(KeyKind::Synth);
    }
    let hint = || {
        let mut known = sim::config::known_keys();
        known.extend(SYNTH_KEYS.iter().map(|k| (*k).to_string()));
        workload::text::did_you_mean(key, known.iter().map(String::as_str))
    };
    if key.starts_with("synth.") {
        return Err(format!(
            "unknown generator key (expected one of {}){}",
            SYNTH_KEYS.join(", "),
            hint()
        ));
    }
    let known = match key.split('.').collect::<Vec<_>>().as_slice() {
        ["energy", "table"] => true,
        ["chip", k] if sim::chip::is_key(k) => true,
        ["chip", _] => {
            return Err(format!(
                "unknown chip key (chip.preset, or a key of configs/chip/isaac.toml){}",
                hint()
            ))
        }
        ["energy", k] => tables()?.1.contains_key(*k),
        _ => sim::config::is_default_leaf(&tables()?.0, key),
    };
    if known {
        Ok(KeyKind::Config)
    } else if key == "workload" || key == "workloads" {
        Err("workloads are listed in the top-level `workloads` key, not as an axis".into())
    } else if key == "modes" || key == "mode" {
        Err("modes are listed in the top-level `modes` key (every point runs all of them)".into())
    } else {
        Err(format!(
            "unknown key (a config key such as ou.rows, see configs/default.toml, or one of {}){}",
            SYNTH_KEYS.join(", "),
            hint()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_of_values() {
        let f = AxisValue::Float(1.0);
        assert_eq!(
            (f.canonical(), f.csv(), f.toml_text()),
            ("1.0".into(), "1".into(), "1.0".into())
        );
        let s = AxisValue::Str("ssl".into());
        assert_eq!(
            (s.canonical(), s.csv(), s.toml_text()),
            ("\"ssl\"".into(), "ssl".into(), "\"ssl\"".into())
        );
        assert_ne!(
            AxisValue::Int(4).canonical(),
            AxisValue::Float(4.0).canonical()
        );
    }

    #[test]
    fn values_keep_their_type_through_json() {
        let v = vec![
            AxisValue::Int(4),
            AxisValue::Float(4.0),
            AxisValue::Float(0.7),
            AxisValue::Str("4".into()),
            AxisValue::Bool(true),
        ];
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(text, r#"[4,4.0,0.7,"4",true]"#);
        let back: Vec<AxisValue> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn keys_are_classified() {
        assert_eq!(key_kind("ou.rows"), Ok(KeyKind::Config));
        assert_eq!(key_kind("energy.dac_per_row_pj"), Ok(KeyKind::Config));
        assert_eq!(key_kind("synth.structure"), Ok(KeyKind::Synth));
        for k in [
            "chip.preset",
            "chip.count",
            "chip.replication",
            "chip.schedule",
        ] {
            assert_eq!(key_kind(k), Ok(KeyKind::Config), "{k}");
        }
        assert_eq!(key_kind("device.preset"), Ok(KeyKind::Config));
        assert_eq!(key_kind("device.read_noise"), Ok(KeyKind::Config));
        assert!(key_kind("chip.colour")
            .unwrap_err()
            .contains("unknown chip key"));
        assert!(key_kind("ou.height").unwrap_err().contains("unknown key"));
        assert!(key_kind("synth.sparsity")
            .unwrap_err()
            .contains("generator"));
        assert!(key_kind("workload").unwrap_err().contains("workloads"));
        assert!(key_kind("ou").is_err());
    }
}
