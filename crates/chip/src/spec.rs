//! The chip description: hierarchy, buffers, network, off-chip links and the policies
//! of a chip run (placement, replication, overflow, schedule, data movement).
//!
//! A chip is a mesh of routers; each router serves `tiles_per_router` tiles; a tile holds
//! `units_per_tile` compute units of `crossbars_per_unit` crossbars and one eDRAM buffer.
//! A description is a preset (configs/chip/*.toml, embedded) with any key overridden.

use crate::ChipError;
use serde::{Deserialize, Serialize};
use toml::{Table, Value};

/// The isaac preset as shipped in configs/chip/isaac.toml.
pub const ISAAC_PRESET_TOML: &str = include_str!("../../../configs/chip/isaac.toml");
/// The pp_sim preset as shipped in configs/chip/pp_sim.toml.
pub const PP_SIM_PRESET_TOML: &str = include_str!("../../../configs/chip/pp_sim.toml");

/// The text of a built-in preset, by name.
pub fn builtin_preset(name: &str) -> Option<&'static str> {
    match name {
        "isaac" => Some(ISAAC_PRESET_TOML),
        "pp_sim" => Some(PP_SIM_PRESET_TOML),
        _ => None,
    }
}

/// The most crossbars a chip, or a fixed count of chips, may hold (2^26: 4,161 isaac
/// chips).
pub const MAX_CROSSBARS: u64 = 1 << 26;

/// `chip.replication`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Replication {
    /// One copy of every layer.
    None,
    /// Copies go to the slowest layer while crossbars remain (ISAAC).
    Balance,
}

/// `chip.overflow`: what happens when a mode's layers do not all fit at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Overflow {
    /// The mode does not fit: empty chip figures and a note.
    None,
    /// Layers are time-multiplexed in consecutive segments that each fit; every segment
    /// is written into the crossbars before it runs.
    Reprogram,
}

/// `chip.schedule`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// A layer starts once the previous one has finished and its output has arrived.
    LayerByLayer,
    /// A layer starts an output row as soon as the input rows it needs have arrived;
    /// images stream through.
    Pipelined,
    /// As pipelined, except that a layer whose input rows differ from its producer's
    /// output rows (a pooling, or another resizing, between them) starts an image only
    /// once the producer's last row of that image has arrived: PP_sim's order, whose
    /// pooling runs on the producer's tile after every eDRAM read of the producer.
    PipelinedPoolBarrier,
}

/// `chip.data_movement`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataMovement {
    /// Activations move through eDRAM and the mesh at their bandwidth and hop latency.
    Mesh,
    /// Moving activations takes no time and no network energy (today's model).
    Free,
}

/// `chip.count`: a number of chips, or "auto" (as many as the largest mode needs with
/// one copy of every layer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Count {
    Chips(u64),
    Auto(AutoWord),
}

/// The word "auto".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AutoWord {
    Auto,
}

/// A validated chip description.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipSpec {
    pub name: String,
    /// Routers along x and y.
    pub mesh_x: u32,
    pub mesh_y: u32,
    pub tiles_per_router: u32,
    pub units_per_tile: u32,
    pub crossbars_per_unit: u32,
    /// ADCs per compute unit (area only: timing uses `adc.per_crossbar`).
    pub adcs_per_unit: u32,
    pub edram_kb_per_tile: f64,
    /// eDRAM bandwidth of one tile, GB/s.
    pub edram_gb_per_s: f64,
    /// Mesh link width (one flit), bits, and its clock, GHz.
    pub link_bits: u32,
    pub link_ghz: f64,
    /// Latency of one router hop, ns.
    pub hop_ns: f64,
    /// Energy of one bit crossing one router hop, pJ.
    pub router_pj_per_bit: f64,
    /// Off-chip memory (spills), GB/s and pJ per bit.
    pub offchip_gb_per_s: f64,
    pub offchip_pj_per_bit: f64,
    /// Chip-to-chip link, GB/s and pJ per bit.
    pub interchip_gb_per_s: f64,
    pub interchip_pj_per_bit: f64,
    /// Static power of a tile, mW, over the real run time of every powered tile.
    pub static_mw_per_tile: f64,
    /// ReRAM write (chip.overflow = reprogram): one crossbar row, ns and pJ; the rows of a
    /// crossbar are written one after another, all crossbars in parallel.
    pub write_ns_per_row: f64,
    pub write_pj_per_row: f64,
    /// Area table: a built-in name or a TOML file relative to the preset.
    pub area_table: String,
    pub count: Count,
    pub replication: Replication,
    pub overflow: Overflow,
    pub schedule: Schedule,
    pub data_movement: DataMovement,
}

/// The message of a key a preset's text holds that is no key of `[chip]` (`preset`
/// itself among them: a preset file names no other preset). The key is named with it even
/// when it is `preset`, the key other errors of the whole text are reported under.
pub const UNKNOWN_IN_PRESET: &str = "unknown key in the preset";

impl ChipSpec {
    /// A preset's text with `overrides` (keys of the `[chip]` table other than `preset`)
    /// applied over it, validated. Errors name the key as `chip.KEY`.
    pub fn from_preset(preset: &str, overrides: &Table) -> Result<ChipSpec, ChipError> {
        let mut t: Table = preset
            .parse()
            .map_err(|e: toml::de::Error| ChipError::Key {
                key: "preset".into(),
                msg: e.message().replace('\n', " "),
            })?;
        let known = toml::Table::try_from(ChipSpec::probe()).map_err(|e| ChipError::Key {
            key: "preset".into(),
            msg: e.to_string(),
        })?;
        for (k, v) in overrides {
            if !known.contains_key(k) {
                return Err(ChipError::Key {
                    key: k.clone(),
                    msg: "unknown key".into(),
                });
            }
            let v = match (known.get(k), v) {
                (Some(Value::Float(_)), Value::Integer(i)) => Value::Float(*i as f64),
                (_, v) => v.clone(),
            };
            t.insert(k.clone(), v);
        }
        for k in t.keys() {
            if !known.contains_key(k) {
                return Err(ChipError::Key {
                    key: k.clone(),
                    msg: UNKNOWN_IN_PRESET.into(),
                });
            }
        }
        // Deserialize key by key so that an error names its key.
        let mut probe = Table::try_from(ChipSpec::probe()).map_err(|e| ChipError::Key {
            key: "preset".into(),
            msg: e.to_string(),
        })?;
        for (k, v) in &t {
            // A TOML date is no value of a chip: told in sresim's words (a string key
            // would take its text, `count` would name the reader's private wrapper).
            if let Value::Datetime(d) = v {
                let expected = match known.get(k) {
                    _ if k == "count" => "a number of chips or \"auto\"",
                    Some(Value::String(_)) => "a string",
                    Some(Value::Boolean(_)) => "true or false",
                    _ => "a number",
                };
                return Err(ChipError::Key {
                    key: k.clone(),
                    msg: format!(
                        "{}, expected {expected}",
                        bounds::text::toml_date(&d.to_string())
                    ),
                });
            }
            let mut one = probe.clone();
            one.insert(k.clone(), v.clone());
            if let Err(e) = Value::Table(one).try_into::<ChipSpec>() {
                return Err(ChipError::Key {
                    key: k.clone(),
                    msg: format!("{v}: {}", e.message().replace('\n', " ")),
                });
            }
            probe.insert(k.clone(), v.clone());
        }
        for k in known.keys() {
            if !t.contains_key(k) {
                return Err(ChipError::Key {
                    key: k.clone(),
                    msg: "missing from the preset".into(),
                });
            }
        }
        let spec: ChipSpec =
            Value::Table(t)
                .try_into()
                .map_err(|e: toml::de::Error| ChipError::Key {
                    key: "preset".into(),
                    msg: e.message().replace('\n', " "),
                })?;
        spec.validate()?;
        Ok(spec)
    }

    /// The keys of a description (of a preset file and of `[chip]`).
    pub fn keys() -> Vec<String> {
        toml::Table::try_from(ChipSpec::probe())
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// A well-formed description used to know the keys and their types.
    fn probe() -> ChipSpec {
        ChipSpec {
            name: String::new(),
            mesh_x: 1,
            mesh_y: 1,
            tiles_per_router: 1,
            units_per_tile: 1,
            crossbars_per_unit: 1,
            adcs_per_unit: 1,
            edram_kb_per_tile: 1.0,
            edram_gb_per_s: 1.0,
            link_bits: 1,
            link_ghz: 1.0,
            hop_ns: 0.0,
            router_pj_per_bit: 0.0,
            offchip_gb_per_s: 1.0,
            offchip_pj_per_bit: 0.0,
            interchip_gb_per_s: 1.0,
            interchip_pj_per_bit: 0.0,
            static_mw_per_tile: 0.0,
            write_ns_per_row: 0.0,
            write_pj_per_row: 0.0,
            area_table: String::new(),
            count: Count::Chips(1),
            replication: Replication::None,
            overflow: Overflow::None,
            schedule: Schedule::LayerByLayer,
            data_movement: DataMovement::Free,
        }
    }

    /// Every count at least 1, every rate positive and finite, every energy, latency and
    /// power finite and non-negative, and the chip's crossbar count representable.
    pub fn validate(&self) -> Result<(), ChipError> {
        let err = |key: &str, msg: String| ChipError::Key {
            key: key.into(),
            msg,
        };
        for (key, v) in [
            ("mesh_x", self.mesh_x),
            ("mesh_y", self.mesh_y),
            ("tiles_per_router", self.tiles_per_router),
            ("units_per_tile", self.units_per_tile),
            ("crossbars_per_unit", self.crossbars_per_unit),
            ("link_bits", self.link_bits),
        ] {
            if v == 0 {
                return Err(err(key, "0 (expected a number >= 1)".into()));
            }
        }
        for (key, v) in [
            ("edram_kb_per_tile", self.edram_kb_per_tile),
            ("edram_gb_per_s", self.edram_gb_per_s),
            ("link_ghz", self.link_ghz),
            ("offchip_gb_per_s", self.offchip_gb_per_s),
            ("interchip_gb_per_s", self.interchip_gb_per_s),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(err(key, format!("{v} is not a positive finite number")));
            }
        }
        for (key, v) in [
            ("hop_ns", self.hop_ns),
            ("router_pj_per_bit", self.router_pj_per_bit),
            ("offchip_pj_per_bit", self.offchip_pj_per_bit),
            ("interchip_pj_per_bit", self.interchip_pj_per_bit),
            ("static_mw_per_tile", self.static_mw_per_tile),
            ("write_ns_per_row", self.write_ns_per_row),
            ("write_pj_per_row", self.write_pj_per_row),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(err(key, format!("{v} is not a finite non-negative number")));
            }
        }
        // Bounded so that every product fits and balancing (a step per crossbar at most)
        // stays fast.
        let per_chip = [
            self.mesh_y,
            self.tiles_per_router,
            self.units_per_tile,
            self.crossbars_per_unit,
        ]
        .iter()
        .try_fold(self.mesh_x as u64, |a, &b| a.checked_mul(b as u64))
        .filter(|&n| n <= MAX_CROSSBARS);
        let Some(per_chip) = per_chip else {
            return Err(err(
                "crossbars_per_unit",
                "mesh_x x mesh_y x tiles_per_router x units_per_tile x crossbars_per_unit is more than 2^26 crossbars a chip".into(),
            ));
        };
        if let Count::Chips(n) = self.count {
            if n == 0 {
                return Err(err(
                    "count",
                    "0 (expected \"auto\" or a number >= 1)".into(),
                ));
            }
            match n.checked_mul(per_chip) {
                Some(t) if t <= MAX_CROSSBARS => {}
                _ => {
                    return Err(err(
                        "count",
                        format!("{n} chips of {per_chip} crossbars is more than 2^26 crossbars"),
                    ))
                }
            }
        }
        Ok(())
    }

    pub fn tiles_per_chip(&self) -> u64 {
        self.mesh_x as u64 * self.mesh_y as u64 * self.tiles_per_router as u64
    }

    pub fn units_per_chip(&self) -> u64 {
        self.tiles_per_chip() * self.units_per_tile as u64
    }

    pub fn crossbars_per_chip(&self) -> u64 {
        self.units_per_chip() * self.crossbars_per_unit as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn over(k: &str, v: Value) -> Result<ChipSpec, ChipError> {
        let mut t = Table::new();
        t.insert(k.into(), v);
        ChipSpec::from_preset(ISAAC_PRESET_TOML, &t)
    }

    #[test]
    fn presets_hold_their_published_hierarchy() {
        let isaac = ChipSpec::from_preset(ISAAC_PRESET_TOML, &Table::new()).unwrap();
        assert_eq!(isaac.tiles_per_chip(), 168);
        assert_eq!(isaac.crossbars_per_chip(), 16_128);
        let pp = ChipSpec::from_preset(PP_SIM_PRESET_TOML, &Table::new()).unwrap();
        assert_eq!(pp.tiles_per_chip(), 14 * 13 * 4);
        assert_eq!(pp.crossbars_per_chip(), 14 * 13 * 4 * 12 * 8);
    }

    #[test]
    fn errors_name_the_key() {
        let e = |k: &str, v: Value| over(k, v).unwrap_err().to_string();
        assert!(e("mesh_x", Value::Integer(0)).starts_with("chip.mesh_x: 0"));
        assert!(e("link_ghz", Value::Float(f64::NAN)).starts_with("chip.link_ghz: NaN"));
        assert!(e("hop_ns", Value::Float(-1.0)).starts_with("chip.hop_ns"));
        assert!(e("colour", Value::Integer(1)).starts_with("chip.colour: unknown key"));
        assert!(e("schedule", Value::String("soon".into())).starts_with("chip.schedule: "));
        assert!(e("count", Value::String("many".into())).starts_with("chip.count: "));
        assert!(e("count", Value::Integer(0)).starts_with("chip.count: 0"));
        assert_eq!(
            e("count", Value::Integer(5000)),
            "chip.count: 5000 chips of 16128 crossbars is more than 2^26 crossbars"
        );
        assert!(e("mesh_x", Value::Integer(4_000_000_000)).starts_with("chip.crossbars_per_unit: "));
        assert!(e("mesh_x", Value::Integer(-3)).starts_with("chip.mesh_x: "));
        let ok = over("count", Value::String("auto".into())).unwrap();
        assert_eq!(ok.count, Count::Auto(AutoWord::Auto));
        assert_eq!(over("hop_ns", Value::Integer(2)).unwrap().hop_ns, 2.0);
        assert_eq!(
            over("schedule", Value::String("pipelined".into()))
                .unwrap()
                .schedule,
            Schedule::Pipelined
        );
    }
}
