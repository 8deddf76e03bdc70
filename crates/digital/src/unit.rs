//! The vector unit: its lanes, how long each primitive occupies a lane, its clock and its
//! buffers' bandwidths; and the cycles and energy of a costed operation.

use crate::ops::{OpCounts, Prim};
use crate::table::{DigitalTable, Energy};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Lane cycles of one primitive: a lane issues one operation of occupancy 1 per cycle;
/// `ops per cycle` of a kind is `lanes / occupancy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Occupancy {
    pub add16: u32,
    pub add32: u32,
    pub mul16: u32,
    pub mac16: u32,
    pub compare16: u32,
    pub exp: u32,
    pub reciprocal: u32,
    pub rsqrt: u32,
}

impl Default for Occupancy {
    /// One cycle for the adder, multiplier and comparator operations; a special function
    /// holds its lane for as many cycles as its decomposition has multiplies (each lane
    /// has one multiplier): exp 4, reciprocal 4 (2 Newton steps of 2), rsqrt 6 (2 of 3).
    fn default() -> Self {
        Occupancy {
            add16: 1,
            add32: 1,
            mul16: 1,
            mac16: 1,
            compare16: 1,
            exp: 4,
            reciprocal: 4,
            rsqrt: 6,
        }
    }
}

impl Occupancy {
    pub fn get(&self, p: Prim) -> u32 {
        match p {
            Prim::Add16 => self.add16,
            Prim::Add32 => self.add32,
            Prim::Mul16 => self.mul16,
            Prim::Mac16 => self.mac16,
            Prim::Compare16 => self.compare16,
            Prim::Exp => self.exp,
            Prim::Reciprocal => self.reciprocal,
            Prim::Rsqrt => self.rsqrt,
        }
    }
}

/// The digital vector unit (docs/digital.md, "The unit").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DigitalUnit {
    /// Parallel lanes, each with one adder, one multiplier and one comparator.
    pub lanes: u32,
    /// Clock of the unit, GHz.
    pub clock_ghz: f64,
    /// Bytes the scratch buffer reads or writes per cycle.
    pub buffer_bytes_per_cycle: u32,
    /// Bytes the K/V store reads or writes per cycle.
    pub kv_bytes_per_cycle: u32,
    #[serde(default)]
    pub occupancy: Occupancy,
}

impl Default for DigitalUnit {
    /// 64 lanes at 1.2 GHz (the clock of the crossbar table's digital components), a
    /// scratch buffer of one 16-bit value per lane per cycle (128 B) and a K/V store of one
    /// 64-byte line per cycle.
    fn default() -> Self {
        DigitalUnit {
            lanes: 64,
            clock_ghz: 1.2,
            buffer_bytes_per_cycle: 128,
            kv_bytes_per_cycle: 64,
            occupancy: Occupancy::default(),
        }
    }
}

/// Why a unit is refused; the message names the key.
#[derive(Debug, Error, PartialEq)]
pub enum UnitError {
    #[error("digital.{key}: {value} is not a positive number")]
    NotPositive { key: &'static str, value: f64 },
}

/// Cycles and energy of an operation on the unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Cost {
    /// Lane cycles of its primitives over the lanes, rounded up.
    pub compute_cycles: u64,
    /// Its scratch-buffer bytes over the buffer's bandwidth, rounded up.
    pub buffer_cycles: u64,
    /// Its K/V-store bytes over the store's bandwidth, rounded up.
    pub kv_cycles: u64,
    /// The largest of the three: compute and both memories overlap within an operation.
    pub cycles: u64,
    /// `cycles` at the unit's clock.
    pub time_ns: f64,
    pub energy: Energy,
}

impl Cost {
    /// Two operations one after the other: cycles, time and energy add.
    pub fn then(&self, o: &Cost) -> Cost {
        Cost {
            compute_cycles: self.compute_cycles.saturating_add(o.compute_cycles),
            buffer_cycles: self.buffer_cycles.saturating_add(o.buffer_cycles),
            kv_cycles: self.kv_cycles.saturating_add(o.kv_cycles),
            cycles: self.cycles.saturating_add(o.cycles),
            time_ns: self.time_ns + o.time_ns,
            energy: self.energy.plus(&o.energy),
        }
    }

    /// The time in whole cycles of another clock of `cycle_ns` (the crossbars'
    /// `timing.cycle_ns`), rounded up.
    pub fn cycles_at(&self, cycle_ns: f64) -> u64 {
        if cycle_ns.is_nan() || cycle_ns <= 0.0 || self.time_ns.is_nan() || self.time_ns <= 0.0 {
            return 0;
        }
        let c = (self.time_ns / cycle_ns).ceil();
        if c >= u64::MAX as f64 {
            u64::MAX
        } else {
            c as u64
        }
    }
}

impl DigitalUnit {
    pub fn validate(&self) -> Result<(), UnitError> {
        let o = &self.occupancy;
        let checks: [(&'static str, f64); 12] = [
            ("lanes", f64::from(self.lanes)),
            ("clock_ghz", self.clock_ghz),
            (
                "buffer_bytes_per_cycle",
                f64::from(self.buffer_bytes_per_cycle),
            ),
            ("kv_bytes_per_cycle", f64::from(self.kv_bytes_per_cycle)),
            ("occupancy.add16", f64::from(o.add16)),
            ("occupancy.add32", f64::from(o.add32)),
            ("occupancy.mul16", f64::from(o.mul16)),
            ("occupancy.mac16", f64::from(o.mac16)),
            ("occupancy.compare16", f64::from(o.compare16)),
            ("occupancy.exp", f64::from(o.exp)),
            ("occupancy.reciprocal", f64::from(o.reciprocal)),
            ("occupancy.rsqrt", f64::from(o.rsqrt)),
        ];
        for (key, value) in checks {
            if !(value.is_finite() && value > 0.0) {
                return Err(UnitError::NotPositive { key, value });
            }
        }
        Ok(())
    }

    /// Lane cycles of `c`'s primitives: each count times its occupancy.
    pub fn lane_cycles(&self, c: &OpCounts) -> u64 {
        Prim::ALL.iter().fold(0u64, |s, &p| {
            s.saturating_add(c.get(p).saturating_mul(u64::from(self.occupancy.get(p))))
        })
    }

    /// The cost of one operation with counts `c`, priced by `table`. A unit that fails
    /// [`Self::validate`] must not be passed (zero lanes or bandwidths count as one).
    pub fn cost(&self, c: &OpCounts, table: &DigitalTable) -> Cost {
        let over = |n: u64, per: u32| n.div_ceil(u64::from(per.max(1)));
        let compute_cycles = over(self.lane_cycles(c), self.lanes);
        let buffer_cycles = over(
            c.buffer_read_bytes.saturating_add(c.buffer_write_bytes),
            self.buffer_bytes_per_cycle,
        );
        let kv_cycles = over(
            c.kv_read_bytes.saturating_add(c.kv_write_bytes),
            self.kv_bytes_per_cycle,
        );
        let cycles = compute_cycles.max(buffer_cycles).max(kv_cycles);
        Cost {
            compute_cycles,
            buffer_cycles,
            kv_cycles,
            cycles,
            time_ns: cycles as f64 / self.clock_ghz,
            energy: table.energy(c),
        }
    }
}
