//! Energy tables (TOML, picojoules) and the per-component breakdown.

use crate::tech::{self, TechError};
use crate::Events;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The default table (ISAAC 32 nm derived), as shipped in configs/energy/isaac-32nm.toml.
pub const DEFAULT_TABLE_TOML: &str = include_str!("../../../configs/energy/isaac-32nm.toml");

/// Per-event energies in pJ (section 8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnergyTable {
    pub name: String,
    pub dac_per_row_pj: f64,
    pub xbar_per_cell_pj: f64,
    /// ADC conversion at 8 bits; other resolutions scale by [`adc_scale`].
    pub adc_8bit_per_conversion_pj: f64,
    pub sample_hold_per_conversion_pj: f64,
    pub shift_add_per_conversion_pj: f64,
    pub input_register_per_bit_pj: f64,
    pub output_register_per_bit_pj: f64,
    pub edram_per_bit_pj: f64,
    pub index_per_bit_pj: f64,
    pub ou_formation_per_ou_pj: f64,
    /// The technology node the entries are at (nm). Left out of the serialized table at
    /// 32 (ISAAC's), so tables without it keep their fingerprints.
    #[serde(default = "base_node", skip_serializing_if = "is_base_node")]
    pub node_nm: u32,
}

fn base_node() -> u32 {
    tech::BASE_NODE
}

fn is_base_node(n: &u32) -> bool {
    *n == tech::BASE_NODE
}

#[derive(Debug, Error)]
pub enum TableError {
    #[error("{0}")]
    Parse(String),
    #[error("{key}: {value} is not a finite non-negative energy")]
    Value { key: &'static str, value: f64 },
    #[error("node_nm: {0}")]
    Node(TechError),
}

/// The one reader of a TOML table file's text into `T` (this crate's energy table, the
/// digital unit's and the cell-write table): a value of the wrong type is blamed on its
/// key, `key: message` in one line (serde's message alone does not name it), whether
/// the value is written `key = ...` or as a table `[key]`.
pub fn from_toml_text<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, TableError> {
    // A TOML date is told as one, by its key (the typed reading calls it a map).
    if let Some((key, date)) = bounds::dates::first(text) {
        let expected = match key.as_str() {
            "name" => "a string",
            _ => "a number",
        };
        return Err(TableError::Parse(bounds::dates::refusal(
            &key, &date, expected,
        )));
    }
    toml::from_str(text).map_err(|e| {
        // One line, a quoted value cut short (1e300 as an integer is 300 digits).
        let mut msg: String = e.message().replace('\n', " ");
        if let Some((end, _)) = msg.char_indices().nth(160) {
            msg = format!("{}...", &msg[..end]);
        }
        let key = e.span().and_then(|span| {
            let start = text.get(..span.start)?.rfind('\n').map_or(0, |i| i + 1);
            let line = text.get(start..)?.lines().next()?;
            // `key = value`, or a table header `[key]` where a number was expected.
            let k = match line.split_once('=') {
                Some((k, _)) => k,
                None => line.trim().strip_prefix('[')?.split(']').next()?,
            };
            let k = k.trim().trim_matches(['"', '[', ']']);
            (!k.is_empty() && !msg.contains(&format!("`{k}`")) && !k.chars().any(char::is_control))
                .then(|| k.chars().take(80).collect::<String>())
        });
        // Without a key to name (a file that is not TOML at all), the line.
        let line = e
            .span()
            .and_then(|span| text.get(..span.start))
            .map(|t| t.matches('\n').count() + 1);
        TableError::Parse(match (key, line) {
            (Some(k), _) => format!("{k}: {msg}"),
            (None, Some(n)) => format!("line {n}: {msg}"),
            (None, None) => msg,
        })
    })
}

impl EnergyTable {
    pub fn from_toml(text: &str) -> Result<Self, TableError> {
        let t: EnergyTable = from_toml_text(text)?;
        t.validate()?;
        Ok(t)
    }

    /// The embedded default table (parsed once per process: every config a sweep plans
    /// starts from it).
    pub fn isaac_32nm() -> Self {
        static TABLE: std::sync::OnceLock<EnergyTable> = std::sync::OnceLock::new();
        TABLE
            .get_or_init(|| {
                // The table is compiled in and checked by the tests: no user data can break it.
                #[allow(clippy::expect_used)]
                Self::from_toml(DEFAULT_TABLE_TOML).expect("the embedded default table is valid")
            })
            .clone()
    }

    pub fn validate(&self) -> Result<(), TableError> {
        tech::check(i64::from(self.node_nm)).map_err(TableError::Node)?;
        for (key, value) in self.entries() {
            if !(value.is_finite() && value >= 0.0) {
                return Err(TableError::Value { key, value });
            }
        }
        Ok(())
    }

    /// The table carried from its node to `node` (docs/technology.md): every CMOS entry
    /// times the CMOS energy factor; the crossbar read, set by the device (read voltage,
    /// conductance, pulse), stays. At the table's own node it is returned unchanged.
    pub fn at_node(&self, node: u32) -> Result<EnergyTable, TechError> {
        let f = tech::between(self.node_nm, node)?;
        if node == self.node_nm {
            return Ok(self.clone());
        }
        let e = f.cmos_energy;
        Ok(EnergyTable {
            name: format!("{} scaled to {node} nm", self.name),
            dac_per_row_pj: self.dac_per_row_pj * e,
            xbar_per_cell_pj: self.xbar_per_cell_pj,
            adc_8bit_per_conversion_pj: self.adc_8bit_per_conversion_pj * e,
            sample_hold_per_conversion_pj: self.sample_hold_per_conversion_pj * e,
            shift_add_per_conversion_pj: self.shift_add_per_conversion_pj * e,
            input_register_per_bit_pj: self.input_register_per_bit_pj * e,
            output_register_per_bit_pj: self.output_register_per_bit_pj * e,
            edram_per_bit_pj: self.edram_per_bit_pj * e,
            index_per_bit_pj: self.index_per_bit_pj * e,
            ou_formation_per_ou_pj: self.ou_formation_per_ou_pj * e,
            node_nm: node,
        })
    }

    /// The entries as (name, pJ), in the order of `Breakdown::COLUMNS`.
    pub fn entries(&self) -> [(&'static str, f64); 10] {
        [
            ("dac_per_row_pj", self.dac_per_row_pj),
            ("xbar_per_cell_pj", self.xbar_per_cell_pj),
            (
                "adc_8bit_per_conversion_pj",
                self.adc_8bit_per_conversion_pj,
            ),
            (
                "sample_hold_per_conversion_pj",
                self.sample_hold_per_conversion_pj,
            ),
            (
                "shift_add_per_conversion_pj",
                self.shift_add_per_conversion_pj,
            ),
            ("input_register_per_bit_pj", self.input_register_per_bit_pj),
            (
                "output_register_per_bit_pj",
                self.output_register_per_bit_pj,
            ),
            ("edram_per_bit_pj", self.edram_per_bit_pj),
            ("index_per_bit_pj", self.index_per_bit_pj),
            ("ou_formation_per_ou_pj", self.ou_formation_per_ou_pj),
        ]
    }

    /// Energy of `ev` with ADCs of `adc_bits` (energy by resolution per `law`), plus
    /// static power over `time_ns` for its crossbars (mW x ns = pJ).
    pub fn breakdown(
        &self,
        ev: &Events,
        adc_bits: u32,
        law: AdcLaw,
        static_mw_per_crossbar: f64,
        time_ns: f64,
    ) -> Breakdown {
        let conv = ev.adc_conversions as f64;
        Breakdown {
            dac: ev.rows_driven as f64 * self.dac_per_row_pj,
            xbar: ev.cells_read as f64 * self.xbar_per_cell_pj,
            adc: conv * self.adc_8bit_per_conversion_pj * law.scale(adc_bits),
            sample_hold: conv * self.sample_hold_per_conversion_pj,
            shift_add: conv * self.shift_add_per_conversion_pj,
            input_register: ev.ir_bits as f64 * self.input_register_per_bit_pj,
            output_register: ev.or_bits as f64 * self.output_register_per_bit_pj,
            edram: ev.edram_bits as f64 * self.edram_per_bit_pj,
            index: ev.index_bits_read as f64 * self.index_per_bit_pj,
            ou_formation: ev.ous_formed as f64 * self.ou_formation_per_ou_pj,
            static_: static_mw_per_crossbar * time_ns * ev.crossbars as f64,
        }
    }
}

/// ADC energy relative to 8 bits: (2^b / (b+1)) / (2^8 / 9).
pub fn adc_scale(bits: u32) -> f64 {
    let f = |b: u32| 2f64.powi(b as i32) / (b as f64 + 1.0);
    f(bits) / f(8)
}

/// How ADC energy per conversion follows the resolution `b` (`adc.energy_law`,
/// docs/technology.md). Both give the table's 8-bit entry at 8 bits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AdcLaw {
    /// The reference model's law, `E_8 · (2^b/(b+1)) / (2^8/9)` ([`adc_scale`]).
    #[default]
    Isaac,
    /// Walden's figure of merit held constant: `E = FoM_W · 2^b` with
    /// `FoM_W = E_8 / 2^8`, so `E = E_8 · 2^(b-8)`.
    Walden,
}

impl AdcLaw {
    pub const NAMES: [&'static str; 2] = ["isaac", "walden"];

    pub fn parse(s: &str) -> Option<AdcLaw> {
        match s {
            "isaac" => Some(AdcLaw::Isaac),
            "walden" => Some(AdcLaw::Walden),
            _ => None,
        }
    }

    /// Energy of a `bits`-bit conversion relative to the table's 8-bit entry.
    pub fn scale(self, bits: u32) -> f64 {
        match self {
            AdcLaw::Isaac => adc_scale(bits),
            AdcLaw::Walden => 2f64.powi(bits as i32 - 8),
        }
    }
}

/// Energy per component, pJ.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Breakdown {
    pub dac: f64,
    pub xbar: f64,
    pub adc: f64,
    pub sample_hold: f64,
    pub shift_add: f64,
    pub input_register: f64,
    pub output_register: f64,
    pub edram: f64,
    pub index: f64,
    pub ou_formation: f64,
    pub static_: f64,
}

impl Breakdown {
    /// CSV column names of the components, in [`Breakdown::values`] order.
    pub const COLUMNS: [&'static str; 11] = [
        "e_dac_pj",
        "e_xbar_pj",
        "e_adc_pj",
        "e_sh_pj",
        "e_sa_pj",
        "e_ir_pj",
        "e_or_pj",
        "e_edram_pj",
        "e_index_pj",
        "e_ouf_pj",
        "e_static_pj",
    ];

    pub fn values(&self) -> [f64; 11] {
        [
            self.dac,
            self.xbar,
            self.adc,
            self.sample_hold,
            self.shift_add,
            self.input_register,
            self.output_register,
            self.edram,
            self.index,
            self.ou_formation,
            self.static_,
        ]
    }

    /// Sum of the components, in column order (fixed, so totals are reproducible).
    pub fn total(&self) -> f64 {
        self.values().iter().sum()
    }

    pub fn add(&mut self, o: &Breakdown) {
        self.dac += o.dac;
        self.xbar += o.xbar;
        self.adc += o.adc;
        self.sample_hold += o.sample_hold;
        self.shift_add += o.shift_add;
        self.input_register += o.input_register;
        self.output_register += o.output_register;
        self.edram += o.edram;
        self.index += o.index;
        self.ou_formation += o.ou_formation;
        self.static_ += o.static_;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TOML date in a table file is told as a date by its key (`invalid type: map`).
    #[test]
    fn a_date_is_told_by_its_key() {
        let text =
            DEFAULT_TABLE_TOML.replace("dac_per_row_pj = 0.00326", "dac_per_row_pj = 1979-05-27");
        assert_ne!(text, DEFAULT_TABLE_TOML);
        let e = from_toml_text::<EnergyTable>(&text)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "dac_per_row_pj: a date (1979-05-27), expected a number");
        let text = DEFAULT_TABLE_TOML.replace("name = \"isaac-32nm\"", "name = 07:32:00");
        let e = from_toml_text::<EnergyTable>(&text)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "name: a time (07:32:00), expected a string");
    }

    #[test]
    fn default_table_loads_with_section_8_values() {
        let t = EnergyTable::isaac_32nm();
        assert_eq!(t.dac_per_row_pj, 0.00326);
        assert_eq!(t.adc_8bit_per_conversion_pj, 1.667);
        assert_eq!(t.index_per_bit_pj, 0.00404);
    }

    #[test]
    fn adc_scaling_and_breakdown_by_hand() {
        assert!((adc_scale(8) - 1.0).abs() < 1e-15);
        // 5 bits: (32/6) / (256/9) = 0.1875
        assert!((adc_scale(5) - 0.1875).abs() < 1e-12);
        let t = EnergyTable::isaac_32nm();
        let ev = Events {
            rows_driven: 1000,
            adc_conversions: 8,
            crossbars: 2,
            ..Events::default()
        };
        let b = t.breakdown(&ev, 5, AdcLaw::Isaac, 0.5, 10.0);
        assert!((b.dac - 3.26).abs() < 1e-12);
        // 8 conversions x 1.667 x 0.1875 = 2.5005
        assert!((b.adc - 2.5005).abs() < 1e-12);
        // static: 0.5 mW x 10 ns x 2 crossbars = 10 pJ
        assert!((b.static_ - 10.0).abs() < 1e-12);
    }

    #[test]
    fn bad_tables_are_rejected() {
        let bad = DEFAULT_TABLE_TOML.replace("dac_per_row_pj = 0.00326", "dac_per_row_pj = -1.0");
        assert!(matches!(
            EnergyTable::from_toml(&bad),
            Err(TableError::Value {
                key: "dac_per_row_pj",
                ..
            })
        ));
        let unknown = format!("{DEFAULT_TABLE_TOML}\nbogus_pj = 1.0\n");
        assert!(EnergyTable::from_toml(&unknown).is_err());
    }

    #[test]
    fn thirty_two_nm_is_the_table_itself() {
        let t = EnergyTable::isaac_32nm();
        assert_eq!(t.at_node(32).unwrap(), t);
        // The serialized table (summary.json) does not name its node at 32 nm.
        assert!(!toml::to_string(&t).unwrap().contains("node_nm"));
    }

    /// Every entry at 14 nm by hand: CMOS entries x 0.096222 / 0.457137 (Stillmaker &
    /// Baas Table 5, HP14 at 0.8 V over HP32 at 0.9 V), the crossbar read unchanged.
    #[test]
    fn fourteen_nm_table_by_hand() {
        let t = EnergyTable::isaac_32nm().at_node(14).unwrap();
        let f = 0.096222 / 0.457137;
        assert!((t.adc_8bit_per_conversion_pj - 1.667 * f).abs() < 1e-9);
        // 1.667 x 0.210488 = 0.350884 pJ per 8-bit conversion.
        assert!((t.adc_8bit_per_conversion_pj - 0.350884).abs() < 1e-6);
        assert!((t.edram_per_bit_pj - 0.0674 * f).abs() < 1e-12);
        assert_eq!(t.xbar_per_cell_pj, 0.0000153);
        assert_eq!(t.node_nm, 14);
        assert_eq!(t.name, "isaac-32nm scaled to 14 nm");
    }

    /// Energy per event falls at every smaller node for every CMOS entry; the crossbar
    /// read (set by the device) stays.
    #[test]
    fn energies_fall_with_the_node() {
        let base = EnergyTable::isaac_32nm();
        let tables: Vec<EnergyTable> = crate::tech::NODES
            .iter()
            .map(|n| base.at_node(*n).unwrap())
            .collect();
        for w in tables.windows(2) {
            for ((k, x), (_, y)) in w[0].entries().iter().zip(w[1].entries()) {
                if *k == "xbar_per_cell_pj" {
                    assert_eq!(*x, y);
                } else {
                    assert!(
                        y < *x,
                        "{k}: {} nm {x} -> {} nm {y}",
                        w[0].node_nm,
                        w[1].node_nm
                    );
                }
            }
        }
    }

    /// A table declared at 22 nm is carried to 7 nm by the ratio of the two nodes'
    /// factors, and to 22 nm unchanged.
    #[test]
    fn a_table_at_another_node() {
        let text = format!("{DEFAULT_TABLE_TOML}\nnode_nm = 22\n");
        let t = EnergyTable::from_toml(&text).unwrap();
        assert_eq!(t.at_node(22).unwrap(), t);
        let f = crate::tech::between(22, 7).unwrap().cmos_energy;
        let e = crate::tech::factors(7).unwrap().cmos_energy
            / crate::tech::factors(22).unwrap().cmos_energy;
        assert!((f - e).abs() < 1e-15);
        assert!((t.at_node(7).unwrap().dac_per_row_pj - 0.00326 * e).abs() < 1e-15);
        let bad = format!("{DEFAULT_TABLE_TOML}\nnode_nm = 28\n");
        let err = EnergyTable::from_toml(&bad).unwrap_err().to_string();
        assert!(
            err.starts_with("node_nm: 28 is not a supported node"),
            "{err}"
        );
    }

    /// ADC energy by resolution: both laws give the 8-bit entry at 8 bits; Walden's
    /// constant figure of merit doubles the energy per bit (E = E_8 * 2^(b-8)); the
    /// reference law is (2^b/(b+1)) / (2^8/9).
    #[test]
    fn adc_energy_follows_its_law() {
        for law in [AdcLaw::Isaac, AdcLaw::Walden] {
            assert_eq!(law.scale(8), 1.0);
        }
        for b in 1..16 {
            assert_eq!(AdcLaw::Walden.scale(b + 1), 2.0 * AdcLaw::Walden.scale(b));
            let want = (2f64.powi(b as i32) / (b as f64 + 1.0)) / (256.0 / 9.0);
            assert!((AdcLaw::Isaac.scale(b) - want).abs() < 1e-15);
        }
        // 5 bits: Walden 1/8, the reference law 0.1875.
        assert_eq!(AdcLaw::Walden.scale(5), 0.125);
        assert!((AdcLaw::Isaac.scale(5) - 0.1875).abs() < 1e-12);
        let t = EnergyTable::isaac_32nm();
        let ev = Events {
            adc_conversions: 4,
            ..Events::default()
        };
        // 4 conversions at 6 bits: 4 x 1.667 x 2^-2 = 1.667 pJ.
        let b = t.breakdown(&ev, 6, AdcLaw::Walden, 0.0, 0.0);
        assert!((b.adc - 1.667).abs() < 1e-12);
        assert_eq!(AdcLaw::parse("walden"), Some(AdcLaw::Walden));
        assert_eq!(AdcLaw::parse("Walden"), None);
    }
}
