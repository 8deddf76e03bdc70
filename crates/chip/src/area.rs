//! The area table (TOML, mm^2) and the area of tiles and chips.

use crate::{ChipError, ChipSpec};
use energy::tech::{self, TechError};
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
    /// The technology node the areas are at (nm); left out of the serialized table at 32.
    #[serde(default = "base_node", skip_serializing_if = "is_base_node")]
    pub node_nm: u32,
}

fn base_node() -> u32 {
    tech::BASE_NODE
}

fn is_base_node(n: &u32) -> bool {
    *n == tech::BASE_NODE
}

impl AreaTable {
    pub fn from_toml(text: &str) -> Result<AreaTable, ChipError> {
        // The one table reader: a wrong type or a date is blamed on its key.
        let t: AreaTable = energy::from_toml_text(text).map_err(|e| ChipError::Area {
            key: String::new(),
            msg: e.to_string(),
        })?;
        for (key, v) in t.entries() {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ChipError::Area {
                    key: format!("{key}: "),
                    msg: format!("{v} is not a finite non-negative area"),
                });
            }
        }
        tech::check(i64::from(t.node_nm)).map_err(|e| ChipError::Area {
            key: "node_nm: ".into(),
            msg: e.to_string(),
        })?;
        Ok(t)
    }

    /// The entries as (name, mm^2), in file order.
    pub fn entries(&self) -> [(&'static str, f64); 12] {
        [
            ("crossbar_mm2", self.crossbar_mm2),
            ("adc_mm2", self.adc_mm2),
            ("dac_per_row_mm2", self.dac_per_row_mm2),
            ("sample_hold_per_col_mm2", self.sample_hold_per_col_mm2),
            ("unit_shift_add_mm2", self.unit_shift_add_mm2),
            ("unit_input_register_mm2", self.unit_input_register_mm2),
            ("unit_output_register_mm2", self.unit_output_register_mm2),
            ("edram_per_kb_mm2", self.edram_per_kb_mm2),
            ("tile_bus_mm2", self.tile_bus_mm2),
            ("tile_other_mm2", self.tile_other_mm2),
            ("router_mm2", self.router_mm2),
            ("chip_io_mm2", self.chip_io_mm2),
        ]
    }

    /// The table carried from its node to `node` (docs/technology.md): crossbars as F²
    /// cells, every CMOS block by the CMOS area factor; the off-chip links (pads and
    /// PHYs, set by the interface) stay. At the table's own node it is returned unchanged.
    pub fn at_node(&self, node: u32) -> Result<AreaTable, TechError> {
        let f = tech::between(self.node_nm, node)?;
        if node == self.node_nm {
            return Ok(self.clone());
        }
        let a = f.cmos_area;
        Ok(AreaTable {
            name: format!("{} scaled to {node} nm", self.name),
            crossbar_mm2: self.crossbar_mm2 * f.cell_area,
            adc_mm2: self.adc_mm2 * a,
            dac_per_row_mm2: self.dac_per_row_mm2 * a,
            sample_hold_per_col_mm2: self.sample_hold_per_col_mm2 * a,
            unit_shift_add_mm2: self.unit_shift_add_mm2 * a,
            unit_input_register_mm2: self.unit_input_register_mm2 * a,
            unit_output_register_mm2: self.unit_output_register_mm2 * a,
            edram_per_kb_mm2: self.edram_per_kb_mm2 * a,
            tile_bus_mm2: self.tile_bus_mm2 * a,
            tile_other_mm2: self.tile_other_mm2 * a,
            router_mm2: self.router_mm2 * a,
            chip_io_mm2: self.chip_io_mm2,
            node_nm: node,
        })
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

    /// Every entry but the off-chip links falls at each smaller node; 32 nm is the table.
    #[test]
    fn areas_fall_with_the_node() {
        let a = AreaTable::isaac_32nm();
        assert_eq!(a.at_node(32).unwrap(), a);
        let spec = ChipSpec::from_preset(ISAAC_PRESET_TOML, &toml::Table::new()).unwrap();
        let tables: Vec<AreaTable> = tech::NODES.iter().map(|n| a.at_node(*n).unwrap()).collect();
        for w in tables.windows(2) {
            let (big, small) = (w[0].entries(), w[1].entries());
            for ((k, x), (_, y)) in big.iter().zip(&small) {
                if *k == "chip_io_mm2" {
                    assert_eq!(x, y);
                } else {
                    assert!(y < x, "{k}: {} {x} -> {} {y}", w[0].node_nm, w[1].node_nm);
                }
            }
            assert!(w[1].chip_mm2(&spec, 128, 128) < w[0].chip_mm2(&spec, 128, 128));
        }
    }

    /// 14 nm by hand: ADC 0.0012 x 0.38 = 0.000456 mm^2 (CMOS area factor 32 -> 14 nm);
    /// crossbar 0.000025 x (14/32)^2 = 0.00000478515625 mm^2.
    #[test]
    fn fourteen_nm_entries_by_hand() {
        let a = AreaTable::isaac_32nm().at_node(14).unwrap();
        assert!((a.adc_mm2 - 0.000456).abs() < 1e-15);
        assert!((a.crossbar_mm2 - 0.000_004_785_156_25).abs() < 1e-18);
        assert_eq!(a.name, "isaac-32nm scaled to 14 nm");
        // Back to 32 nm from a table declared at 14 nm.
        let back = a.at_node(32).unwrap();
        assert!((back.adc_mm2 - 0.0012).abs() < 1e-15);
    }

    #[test]
    fn a_bad_entry_is_named() {
        let text = ISAAC_AREA_TOML.replace("adc_mm2 = 0.0012", "adc_mm2 = -1.0");
        let e = AreaTable::from_toml(&text).unwrap_err().to_string();
        assert!(e.contains("adc_mm2: -1"), "{e}");
    }

    /// A value of the wrong type is named by its key (it named none), and a TOML date is
    /// told as a date (it was `invalid type: map`).
    #[test]
    fn a_wrong_type_or_a_date_is_named_by_its_key() {
        let text = ISAAC_AREA_TOML.replace("adc_mm2 = 0.0012", "adc_mm2 = \"x\"");
        let e = AreaTable::from_toml(&text).unwrap_err().to_string();
        assert!(e.contains("adc_mm2: invalid type: string"), "{e}");
        let text = ISAAC_AREA_TOML.replace("adc_mm2 = 0.0012", "adc_mm2 = 1979-05-27");
        let e = AreaTable::from_toml(&text).unwrap_err().to_string();
        assert!(
            e.contains("adc_mm2: a date (1979-05-27), expected a number"),
            "{e}"
        );
    }
}
