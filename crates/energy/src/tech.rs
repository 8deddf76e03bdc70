//! Technology nodes (`tech.node`): the factors that carry the 32 nm tables to 45, 22, 14
//! and 7 nm, derived from published scaling data (docs/technology.md, one source per factor).
//!
//! - CMOS energy per operation: Stillmaker & Baas 2017 ("Scaling equations for the accurate
//!   prediction of CMOS device performance from 180 nm to 7 nm", Integration 58), Table 5:
//!   the energy factor of a node is `a·V² + b·V + c` with its high-performance (HP)
//!   coefficients, taken at the node's nominal supply (the PTM supplies DNN+NeuroSim uses).
//! - CMOS area: their node-to-node area scaling factors (the row of 32 nm).
//! - Crossbar cell area: an F² cell, `(node / 32)²`.
//! - 22 nm, which their tables do not hold, sits between 32 and 20 nm, geometrically in the
//!   feature size: `f(22) = f(32)^(1-t) · f(20)^t`, `t = ln(32/22) / ln(32/20)`.
//!
//! Every factor is relative to 32 nm, so the 32 nm tables are multiplied by exactly 1.

use thiserror::Error;

/// The nodes `tech.node` accepts, largest first.
pub const NODES: [u32; 5] = [45, 32, 22, 14, 7];

/// The node of the shipped tables (ISAAC's).
pub const BASE_NODE: u32 = 32;

/// Multipliers of a table's entries from 32 nm to a node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Factors {
    /// CMOS energy per operation (logic, registers, eDRAM, DAC drivers, sample-and-hold,
    /// shift-and-add, the ADC at a fixed resolution, routers).
    pub cmos_energy: f64,
    /// CMOS area (periphery, registers, eDRAM, buses, routers, the ADC).
    pub cmos_area: f64,
    /// Crossbar area: an F² cell.
    pub cell_area: f64,
}

#[derive(Debug, Error, PartialEq)]
#[error("{node} is not a supported node (expected one of {})", nodes_list())]
pub struct TechError {
    pub node: i64,
}

fn nodes_list() -> String {
    NODES.map(|n| n.to_string()).join(", ")
}

/// Stillmaker & Baas Table 5, HP: energy factor `a·V² + b·V + c` and the nominal supply V
/// (PTM HP models: 45 nm 1.0 V, 32 nm 0.9 V, 20 nm 0.9 V, 14 nm 0.8 V, 7 nm 0.7 V).
const ENERGY_FIT: [(u32, [f64; 3], f64); 5] = [
    (45, [1.018, -0.3107, 0.1539], 1.0),
    (32, [0.8367, -0.4341, 0.1701], 0.9),
    (20, [0.373, -0.1582, 0.04104], 0.9),
    (14, [0.2363, -0.09675, 0.02239], 0.8),
    (7, [0.1776, -0.09097, 0.02447], 0.7),
];

/// Stillmaker & Baas, area scaling factors from 32 nm to each node.
const AREA_FROM_32: [(u32, f64); 5] = [(45, 2.2), (32, 1.0), (20, 0.46), (14, 0.38), (7, 0.13)];

/// The energy factor of a node of the fit (absolute, not yet relative to 32 nm).
fn energy_fit(node: u32) -> f64 {
    ENERGY_FIT
        .iter()
        .find(|(n, _, _)| *n == node)
        .map_or(f64::NAN, |(_, [a, b, c], v)| a * v * v + b * v + c)
}

fn area_fit(node: u32) -> f64 {
    AREA_FROM_32
        .iter()
        .find(|(n, _)| *n == node)
        .map_or(f64::NAN, |(_, f)| *f)
}

/// Weight of 20 nm when 22 nm is placed between 32 and 20 nm: ln(32/22) / ln(32/20).
fn t22() -> f64 {
    (32f64 / 22.0).ln() / (32f64 / 20.0).ln()
}

/// `f` at `node`, with 22 nm interpolated geometrically between 32 and 20 nm.
fn at(node: u32, f: fn(u32) -> f64) -> f64 {
    if node == 22 {
        let t = t22();
        f(32).powf(1.0 - t) * f(20).powf(t)
    } else {
        f(node)
    }
}

/// Checks `node` against [`NODES`].
pub fn check(node: i64) -> Result<u32, TechError> {
    NODES
        .iter()
        .copied()
        .find(|n| i64::from(*n) == node)
        .ok_or(TechError { node })
}

/// The factors from 32 nm to `node`.
pub fn factors(node: u32) -> Result<Factors, TechError> {
    let node = check(i64::from(node))?;
    if node == BASE_NODE {
        return Ok(Factors {
            cmos_energy: 1.0,
            cmos_area: 1.0,
            cell_area: 1.0,
        });
    }
    let ratio = node as f64 / BASE_NODE as f64;
    Ok(Factors {
        cmos_energy: at(node, energy_fit) / energy_fit(BASE_NODE),
        cmos_area: at(node, area_fit),
        cell_area: ratio * ratio,
    })
}

/// The factors from a table at `from` to `to` (each relative to 32 nm, divided).
pub fn between(from: u32, to: u32) -> Result<Factors, TechError> {
    let (f, t) = (factors(from)?, factors(to)?);
    Ok(Factors {
        cmos_energy: t.cmos_energy / f.cmos_energy,
        cmos_area: t.cmos_area / f.cmos_area,
        cell_area: t.cell_area / f.cell_area,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_two_is_exactly_one() {
        let f = factors(32).unwrap();
        assert_eq!((f.cmos_energy, f.cmos_area, f.cell_area), (1.0, 1.0, 1.0));
        assert_eq!(between(32, 32).unwrap(), f);
    }

    /// 14 nm by hand: HP14 at 0.8 V = 0.2363·0.64 - 0.09675·0.8 + 0.02239 = 0.096222;
    /// HP32 at 0.9 V = 0.8367·0.81 - 0.4341·0.9 + 0.1701 = 0.457137 (the paper's own
    /// worked example, corrected: 0.4571); 0.096222 / 0.457137 = 0.210488.
    /// Area: 0.38 (the paper's 32 -> 14 nm factor); cell (14/32)² = 0.19140625.
    #[test]
    fn fourteen_nm_by_hand() {
        let f = factors(14).unwrap();
        assert!((energy_fit(32) - 0.457137).abs() < 1e-9);
        assert!((f.cmos_energy - 0.096222 / 0.457137).abs() < 1e-9);
        assert!((f.cmos_energy - 0.210488).abs() < 1e-6);
        assert_eq!(f.cmos_area, 0.38);
        assert_eq!(f.cell_area, 0.19140625);
    }

    /// 22 nm lies between 32 and 20 nm on both energy and area, closer to 20 nm
    /// (t = ln(32/22)/ln(32/20) = 0.7972).
    #[test]
    fn twenty_two_is_between_thirty_two_and_twenty() {
        let f = factors(22).unwrap();
        let e20 = energy_fit(20) / energy_fit(32);
        assert!((t22() - 0.797_2).abs() < 1e-4);
        assert!(f.cmos_energy < 1.0 && f.cmos_energy > e20);
        assert!(f.cmos_area < 1.0 && f.cmos_area > 0.46);
        assert!((f.cmos_area - 0.46f64.powf(t22())).abs() < 1e-12);
    }

    #[test]
    fn every_factor_falls_with_the_node() {
        let all: Vec<Factors> = NODES.iter().map(|n| factors(*n).unwrap()).collect();
        for w in all.windows(2) {
            assert!(w[1].cmos_energy < w[0].cmos_energy, "{w:?}");
            assert!(w[1].cmos_area < w[0].cmos_area, "{w:?}");
            assert!(w[1].cell_area < w[0].cell_area, "{w:?}");
        }
    }

    #[test]
    fn between_composes() {
        let (a, b, c) = (
            factors(45).unwrap(),
            factors(7).unwrap(),
            between(45, 7).unwrap(),
        );
        assert!((c.cmos_energy - b.cmos_energy / a.cmos_energy).abs() < 1e-15);
        assert!((c.cell_area - (7.0f64 / 45.0).powi(2)).abs() < 1e-15);
    }

    #[test]
    fn unknown_nodes_are_refused_with_the_list() {
        for bad in [28, 0, -7, 10, 65] {
            let e = factors_i64(bad).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("{bad} is not a supported node (expected one of 45, 32, 22, 14, 7)")
            );
        }
    }

    fn factors_i64(n: i64) -> Result<Factors, TechError> {
        check(n).and_then(factors)
    }
}
