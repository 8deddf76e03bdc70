//! The area table (TOML, mm^2) and the area of tiles and chips.

use crate::{ChipError, ChipSpec};
use serde::{Deserialize, Serialize};

/// The default area table, as shipped in configs/chip/area-isaac-32nm.toml.
pub const ISAAC_AREA_TOML: &str = include_str!("../../../configs/chip/area-isaac-32nm.toml");

/// Component areas in mm^2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AreaTable {
    pub name: String,
    pub crossbar_mm2: f64,
    pub adc_mm2: f64,
    pub dac_per_row_mm2: f64,
    pub sample_hold_per_col_mm2: f64,
    pub unit_shift_add_mm2: f64,
    pub unit_input_register_mm2: f64,
    pub unit_output_register_mm2: f64,
    pub edram_per_kb_mm2: f64,
    pub tile_bus_mm2: f64,
    pub tile_other_mm2: f64,
    pub router_mm2: f64,
    pub chip_io_mm2: f64,
}

impl AreaTable {
    pub fn from_toml(text: &str) -> Result<AreaTable, ChipError> {
        let t: AreaTable = toml::from_str(text).map_err(|e| ChipError::Area {
            key: String::new(),
            msg: e.message().replace('\n', " "),
        })?;
        for (key, v) in [
            ("crossbar_mm2", t.crossbar_mm2),
            ("adc_mm2", t.adc_mm2),
            ("dac_per_row_mm2", t.dac_per_row_mm2),
            ("sample_hold_per_col_mm2", t.sample_hold_per_col_mm2),
            ("unit_shift_add_mm2", t.unit_shift_add_mm2),
            ("unit_input_register_mm2", t.unit_input_register_mm2),
            ("unit_output_register_mm2", t.unit_output_register_mm2),
            ("edram_per_kb_mm2", t.edram_per_kb_mm2),
            ("tile_bus_mm2", t.tile_bus_mm2),
            ("tile_other_mm2", t.tile_other_mm2),
            ("router_mm2", t.router_mm2),
            ("chip_io_mm2", t.chip_io_mm2),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ChipError::Area {
                    key: format!("{key}: "),
                    msg: format!("{v} is not a finite non-negative area"),
                });
            }
        }
        Ok(t)
    }

    pub fn isaac_32nm() -> AreaTable {
        // The embedded table is checked by a test.
        #[allow(clippy::expect_used)]
        Self::from_toml(ISAAC_AREA_TOML).expect("the embedded area table is valid")
    }

    /// One compute unit of `spec` with crossbars of `rows` x `cols`.
    pub fn unit_mm2(&self, spec: &ChipSpec, rows: u32, cols: u32) -> f64 {
        let x = spec.crossbars_per_unit as f64;
        x * (self.crossbar_mm2
            + rows as f64 * self.dac_per_row_mm2
            + cols as f64 * self.sample_hold_per_col_mm2)
            + spec.adcs_per_unit as f64 * self.adc_mm2
            + self.unit_shift_add_mm2
            + self.unit_input_register_mm2
            + self.unit_output_register_mm2
    }

    /// One tile: its units, eDRAM, bus, other logic and its share of a router.
    pub fn tile_mm2(&self, spec: &ChipSpec, rows: u32, cols: u32) -> f64 {
        spec.units_per_tile as f64 * self.unit_mm2(spec, rows, cols)
            + spec.edram_kb_per_tile * self.edram_per_kb_mm2
            + self.tile_bus_mm2
            + self.tile_other_mm2
            + self.router_mm2 / spec.tiles_per_router as f64
    }

    /// One whole chip: every tile and the off-chip links.
    pub fn chip_mm2(&self, spec: &ChipSpec, rows: u32, cols: u32) -> f64 {
        spec.tiles_per_chip() as f64 * self.tile_mm2(spec, rows, cols) + self.chip_io_mm2
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::ISAAC_PRESET_TOML;

    /// The table rebuilds ISAAC's published totals: IMA 0.0131 mm^2 (12 of them 0.157),
    /// tile 0.372 mm^2, chip 85.4 mm^2.
    #[test]
    fn isaac_table_rebuilds_the_published_totals() {
        let spec = ChipSpec::from_preset(ISAAC_PRESET_TOML, &toml::Table::new()).unwrap();
        let a = AreaTable::isaac_32nm();
        let near = |x: f64, want: f64| (x - want).abs() / want < 0.005;
        assert!(
            near(12.0 * a.unit_mm2(&spec, 128, 128), 0.157),
            "{}",
            a.unit_mm2(&spec, 128, 128)
        );
        assert!(
            near(a.tile_mm2(&spec, 128, 128), 0.372),
            "{}",
            a.tile_mm2(&spec, 128, 128)
        );
        assert!(
            near(a.chip_mm2(&spec, 128, 128), 85.4),
            "{}",
            a.chip_mm2(&spec, 128, 128)
        );
    }

    #[test]
    fn a_bad_entry_is_named() {
        let text = ISAAC_AREA_TOML.replace("adc_mm2 = 0.0012", "adc_mm2 = -1.0");
        let e = AreaTable::from_toml(&text).unwrap_err().to_string();
        assert!(e.contains("adc_mm2: -1"), "{e}");
    }
}
