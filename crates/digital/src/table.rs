//! The digital unit's energy table (TOML, picojoules per operation and per byte) and the
//! table of run-time cell writes (`attention.placement = "crossbar"`).

use crate::ops::{OpCounts, Prim};
use energy::tech::{self, TechError};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The shipped energy table (Horowitz ISSCC 2014, 45 nm), configs/energy/digital-45nm.toml.
pub const DEFAULT_TABLE_TOML: &str = include_str!("../../../configs/energy/digital-45nm.toml");

/// The shipped cell-write table (PipeLayer, HPCA 2017), configs/energy/cell-write-pipelayer.toml.
pub const DEFAULT_WRITE_TOML: &str =
    include_str!("../../../configs/energy/cell-write-pipelayer.toml");

/// Energy per primitive operation and per byte of buffer traffic, pJ, at `node_nm`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DigitalTable {
    pub name: String,
    /// The technology node the entries are at (nm); required, since the sources are not
    /// at the crossbar table's 32 nm.
    pub node_nm: u32,
    pub add16_pj: f64,
    pub add32_pj: f64,
    pub mul16_pj: f64,
    pub mac16_pj: f64,
    pub compare16_pj: f64,
    pub exp_pj: f64,
    pub reciprocal_pj: f64,
    pub rsqrt_pj: f64,
    pub buffer_read_per_byte_pj: f64,
    pub buffer_write_per_byte_pj: f64,
    pub kv_read_per_byte_pj: f64,
    pub kv_write_per_byte_pj: f64,
}

/// Why a table is refused; the message names the key.
#[derive(Debug, Error, PartialEq)]
pub enum TableError {
    #[error("{0}")]
    Parse(String),
    #[error("{key}: {value} is not a finite non-negative value")]
    Value { key: &'static str, value: f64 },
    #[error("{key}: {value:e} is above {max:e} {unit}, the largest a cell-write table may hold (a run-time write figure beyond it would saturate the cycle and energy counts it feeds)")]
    Above {
        key: &'static str,
        value: f64,
        max: f64,
        unit: &'static str,
    },
    #[error("node_nm: {0}")]
    Node(TechError),
}

/// A table read from TOML text, then checked by `validate`.
fn parse<T: serde::de::DeserializeOwned>(
    text: &str,
    validate: fn(&T) -> Result<(), TableError>,
) -> Result<T, TableError> {
    let t: T = energy::from_toml_text(text).map_err(|e| TableError::Parse(e.to_string()))?;
    validate(&t)?;
    Ok(t)
}

/// Energy of a costed operation by where it is spent, pJ.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Energy {
    /// The arithmetic: adds, multiplies, MACs, compares, exp, reciprocal, rsqrt.
    pub compute_pj: f64,
    /// The scratch buffer's reads and writes.
    pub buffer_pj: f64,
    /// The K/V store's reads and writes.
    pub kv_pj: f64,
}

impl Energy {
    pub fn total_pj(&self) -> f64 {
        self.compute_pj + self.buffer_pj + self.kv_pj
    }

    /// The sum of two, component by component.
    pub fn plus(&self, o: &Energy) -> Energy {
        Energy {
            compute_pj: self.compute_pj + o.compute_pj,
            buffer_pj: self.buffer_pj + o.buffer_pj,
            kv_pj: self.kv_pj + o.kv_pj,
        }
    }
}

impl DigitalTable {
    pub fn from_toml(text: &str) -> Result<Self, TableError> {
        parse(text, Self::validate)
    }

    /// The shipped table at its own node (45 nm), parsed once per process (a sweep
    /// resolves a config per point).
    pub fn horowitz_45nm() -> Self {
        static TABLE: std::sync::OnceLock<DigitalTable> = std::sync::OnceLock::new();
        TABLE
            .get_or_init(|| {
                // The table is compiled in and checked by the tests: no user data can break it.
                #[allow(clippy::expect_used)]
                Self::from_toml(DEFAULT_TABLE_TOML).expect("the embedded digital table is valid")
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

    /// Every entry as (key, pJ), in the order of the TOML file.
    pub fn entries(&self) -> [(&'static str, f64); 12] {
        [
            ("add16_pj", self.add16_pj),
            ("add32_pj", self.add32_pj),
            ("mul16_pj", self.mul16_pj),
            ("mac16_pj", self.mac16_pj),
            ("compare16_pj", self.compare16_pj),
            ("exp_pj", self.exp_pj),
            ("reciprocal_pj", self.reciprocal_pj),
            ("rsqrt_pj", self.rsqrt_pj),
            ("buffer_read_per_byte_pj", self.buffer_read_per_byte_pj),
            ("buffer_write_per_byte_pj", self.buffer_write_per_byte_pj),
            ("kv_read_per_byte_pj", self.kv_read_per_byte_pj),
            ("kv_write_per_byte_pj", self.kv_write_per_byte_pj),
        ]
    }

    /// The energy of one primitive operation.
    pub fn prim_pj(&self, p: Prim) -> f64 {
        match p {
            Prim::Add16 => self.add16_pj,
            Prim::Add32 => self.add32_pj,
            Prim::Mul16 => self.mul16_pj,
            Prim::Mac16 => self.mac16_pj,
            Prim::Compare16 => self.compare16_pj,
            Prim::Exp => self.exp_pj,
            Prim::Reciprocal => self.reciprocal_pj,
            Prim::Rsqrt => self.rsqrt_pj,
        }
    }

    /// The table carried from its node to `node` (docs/technology.md): every entry is
    /// CMOS logic or SRAM, so every entry times the CMOS energy factor. At the table's own
    /// node it is returned unchanged.
    pub fn at_node(&self, node: u32) -> Result<DigitalTable, TechError> {
        let f = tech::between(self.node_nm, node)?;
        if node == self.node_nm {
            return Ok(self.clone());
        }
        let e = f.cmos_energy;
        Ok(DigitalTable {
            name: format!("{} scaled to {node} nm", self.name),
            node_nm: node,
            add16_pj: self.add16_pj * e,
            add32_pj: self.add32_pj * e,
            mul16_pj: self.mul16_pj * e,
            mac16_pj: self.mac16_pj * e,
            compare16_pj: self.compare16_pj * e,
            exp_pj: self.exp_pj * e,
            reciprocal_pj: self.reciprocal_pj * e,
            rsqrt_pj: self.rsqrt_pj * e,
            buffer_read_per_byte_pj: self.buffer_read_per_byte_pj * e,
            buffer_write_per_byte_pj: self.buffer_write_per_byte_pj * e,
            kv_read_per_byte_pj: self.kv_read_per_byte_pj * e,
            kv_write_per_byte_pj: self.kv_write_per_byte_pj * e,
        })
    }

    /// The energy of `c`: each primitive's count times its entry, in the order of
    /// [`Prim::ALL`], and each byte count times its entry.
    pub fn energy(&self, c: &OpCounts) -> Energy {
        let compute_pj = Prim::ALL
            .iter()
            .map(|&p| c.get(p) as f64 * self.prim_pj(p))
            .sum();
        Energy {
            compute_pj,
            buffer_pj: c.buffer_read_bytes as f64 * self.buffer_read_per_byte_pj
                + c.buffer_write_bytes as f64 * self.buffer_write_per_byte_pj,
            kv_pj: c.kv_read_bytes as f64 * self.kv_read_per_byte_pj
                + c.kv_write_bytes as f64 * self.kv_write_per_byte_pj,
        }
    }
}

/// What writing a ReRAM cell at run time costs (a device figure: not scaled by node).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellWrite {
    pub name: String,
    /// Energy per cell written, pJ.
    pub write_pj_per_cell: f64,
    /// Time of one row's write, ns; a crossbar's rows are written one after another, the
    /// crossbars in parallel.
    pub write_ns_per_row: f64,
    /// Writes a cell survives; 0: not stated (no lifetime is derived).
    #[serde(default)]
    pub endurance_writes: u64,
}

impl CellWrite {
    pub fn from_toml(text: &str) -> Result<Self, TableError> {
        parse(text, Self::validate)
    }

    /// The shipped PipeLayer figures, parsed once per process.
    pub fn pipelayer() -> Self {
        static TABLE: std::sync::OnceLock<CellWrite> = std::sync::OnceLock::new();
        TABLE
            .get_or_init(|| {
                // Compiled in and checked by the tests.
                #[allow(clippy::expect_used)]
                Self::from_toml(DEFAULT_WRITE_TOML).expect("the embedded cell-write table is valid")
            })
            .clone()
    }

    /// The one check of a cell-write table's figures, at load: each finite, non-negative
    /// and at most [`CellWrite::MAX_PJ_PER_CELL`] / [`CellWrite::MAX_NS_PER_ROW`]. The
    /// bound is what keeps a huge figure from surfacing later as a saturated
    /// `combined_cycles` blamed on another key (docs/errors.md).
    pub fn validate(&self) -> Result<(), TableError> {
        for (key, value, max, unit) in [
            (
                "write_pj_per_cell",
                self.write_pj_per_cell,
                Self::MAX_PJ_PER_CELL,
                "pJ",
            ),
            (
                "write_ns_per_row",
                self.write_ns_per_row,
                Self::MAX_NS_PER_ROW,
                "ns",
            ),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(TableError::Value { key, value });
            }
            if value > max {
                return Err(TableError::Above {
                    key,
                    value,
                    max,
                    unit,
                });
            }
        }
        Ok(())
    }

    /// The largest energy of one cell write a table may state, pJ (1 uJ: some 10^4 times
    /// the ReRAM and PCM figures in print).
    pub const MAX_PJ_PER_CELL: f64 = 1e6;
    /// The largest time of one row's write a table may state, ns (1 ms: some 10^4 times
    /// the figures in print). A run's write latency is at most its attention products
    /// times a crossbar's rows times this, far below 2^64 cycles at any clock the
    /// `[digital]` table accepts.
    pub const MAX_NS_PER_ROW: f64 = 1e6;
}
