//! The chip around the crossbars (docs/chip.md).
//!
//! The engines say what one layer costs in one mode with every crossbar it needs; this
//! crate puts the layers of a network on a chip of finite size ([`ChipSpec`]): which
//! compute units and tiles hold each layer and how many copies (`replication`), whether
//! a mode fits at all (or is time-multiplexed with ReRAM writes: `overflow`), how long
//! a run takes when activations move through eDRAM and the mesh and layers run one after
//! another or as a row-by-row pipeline (`schedule`), and the area of what is occupied.
//!
//! A model crate: it reads no file and knows no command line. The driver passes each
//! layer's shape ([`LayerShape`]) and, per mode, what the engines counted
//! ([`LayerMode`]); [`evaluate`] returns the chip figures of every mode.

mod area;
mod layer;
mod place;
mod schedule;
mod spec;

pub use area::{AreaTable, ISAAC_AREA_TOML};
pub use place::{place, LayerPlace, Placed, Placement};
pub use schedule::{schedule, LayerTiming, Timing};
pub use spec::{
    builtin_preset, AutoWord, ChipSpec, Count, DataMovement, Overflow, Replication, Schedule,
    ISAAC_PRESET_TOML, PP_SIM_PRESET_TOML, UNKNOWN_IN_PRESET,
};

pub use layer::{ChipError, Context, LayerMode, LayerShape};

use serde::Serialize;

/// The finite gate of a mode's chip figures (every number its columns, its JSON section
/// and its table hold): a figure that is not finite refuses the configuration, naming
/// the chip key of its largest energy component (or of the static power).
fn check_finite(spec: &ChipSpec, m: &ModeChip) -> Result<(), ChipError> {
    let Some(t) = &m.timing else {
        return Ok(());
    };
    let parts = [
        ("static_mw_per_tile", spec.static_mw_per_tile, t.static_pj),
        ("router_pj_per_bit", spec.router_pj_per_bit, t.router_pj),
        (
            "interchip_pj_per_bit",
            spec.interchip_pj_per_bit,
            t.interchip_pj,
        ),
        ("offchip_pj_per_bit", spec.offchip_pj_per_bit, t.offchip_pj),
        ("write_pj_per_row", spec.write_pj_per_row, t.write_pj),
    ];
    let figures = [
        ("chip energy_pj", m.energy_pj),
        ("chip power_w", m.power_w),
        ("chip images_per_s", Some(t.images_per_s)),
        ("chip images_per_s_per_w", m.images_per_s_per_w),
        ("chip images_per_s_per_mm2", m.images_per_s_per_mm2),
        ("chip latency_ns", Some(t.latency_ns)),
        ("chip static_pj", Some(t.static_pj)),
        ("chip network_pj", Some(t.network_pj)),
        ("chip offchip_pj", Some(t.offchip_pj)),
        ("chip write_pj", Some(t.write_pj)),
    ];
    for (name, v) in figures {
        let Some(v) = v else { continue };
        if let Err(e) = bounds::finite::check(|| format!("{name} of {}", m.mode), v) {
            // The component that overflowed (NaN counts as the largest).
            let (key, value, _) = parts
                .iter()
                .copied()
                .max_by(|a, b| {
                    let k = |x: f64| if x.is_nan() { f64::INFINITY } else { x };
                    k(a.2).total_cmp(&k(b.2))
                })
                .unwrap_or(parts[0]);
            return Err(ChipError::Key {
                key: key.into(),
                msg: format!("{value:e} is too large: {e}"),
            });
        }
    }
    Ok(())
}

/// Chip figures of one mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeChip {
    pub mode: String,
    /// Chips used (a fixed `chip.count`, or what the mode needs under "auto").
    pub chips: u64,
    /// Placement (None when the mode fits neither way).
    pub placement: Option<Placement>,
    pub timing: Option<Timing>,
    /// Why the figures are empty, or how the mode was made to fit.
    pub note: Option<String>,
    /// Area of the tiles the mode occupies and of the whole chip(s), mm^2.
    pub area_occupied_mm2: Option<f64>,
    pub area_chips_mm2: f64,
    /// Energy of the run: the dynamic energy the driver passes (the engines', and the
    /// digital unit's for a transformer) plus network, off-chip, write and static
    /// energy, pJ.
    pub energy_pj: Option<f64>,
    pub images_per_s_per_mm2: Option<f64>,
    pub power_w: Option<f64>,
    pub images_per_s_per_w: Option<f64>,
}

/// Chip figures of every mode, in the order given.
pub fn evaluate(
    spec: &ChipSpec,
    area: &AreaTable,
    ctx: &Context,
    layers: &[LayerShape],
    modes: &[(String, Vec<LayerMode>, f64)],
) -> Result<Vec<ModeChip>, ChipError> {
    let mut out = Vec::with_capacity(modes.len());
    for (mode, per_layer, dynamic_pj) in modes {
        let placed = place(spec, per_layer);
        let chip_mm2 = area.chip_mm2(spec, ctx.xbar_rows, ctx.xbar_cols);
        let tile_mm2 = area.tile_mm2(spec, ctx.xbar_rows, ctx.xbar_cols);
        let (placement, note) = match placed {
            Placed::Fits(p) => (Some(p), None),
            Placed::Reprogrammed(p) => {
                let n = format!(
                    "time-multiplexed in {} segments with ReRAM writes",
                    p.segments
                );
                (Some(p), Some(n))
            }
            Placed::DoesNotFit { needed, available, chips } => (
                None,
                Some(format!(
                    "does not fit: {needed} crossbars needed, {available} available on {chips} chip(s)"
                )),
            ),
        };
        let chips = placement
            .as_ref()
            .map_or_else(|| place::chips_for(spec, per_layer), |p| p.chips);
        let timing = placement
            .as_ref()
            .map(|p| schedule(spec, ctx, layers, per_layer, p))
            .transpose()?;
        let mut m = ModeChip {
            mode: mode.clone(),
            chips,
            area_chips_mm2: chips as f64 * chip_mm2,
            area_occupied_mm2: placement.as_ref().map(|p| p.tiles_used as f64 * tile_mm2),
            placement,
            note,
            energy_pj: None,
            images_per_s_per_mm2: None,
            power_w: None,
            images_per_s_per_w: None,
            timing: None,
        };
        if let Some(t) = timing {
            let powered_tiles = chips * spec.tiles_per_chip();
            let static_w = spec.static_mw_per_tile * 1e-3 * powered_tiles as f64;
            let energy = dynamic_pj + t.network_pj + t.offchip_pj + t.write_pj + t.static_pj;
            let per_image_pj = (energy - t.static_pj) / ctx.samples.max(1) as f64;
            let power = per_image_pj * 1e-12 * t.images_per_s + static_w;
            m.energy_pj = Some(energy);
            m.images_per_s_per_mm2 =
                (m.area_chips_mm2 > 0.0).then(|| t.images_per_s / m.area_chips_mm2);
            m.power_w = Some(power);
            m.images_per_s_per_w = (power > 0.0).then(|| t.images_per_s / power);
            m.timing = Some(t);
            check_finite(spec, &m)?;
        }
        out.push(m);
    }
    if !out.is_empty() && out.iter().all(|m| m.placement.is_none()) {
        // The mode closest to fitting: the fewest crossbars at once (its largest layer
        // when it may be time-multiplexed).
        let needed_of = |l: &[LayerMode]| match spec.overflow {
            Overflow::Reprogram => l.iter().map(|x| x.crossbars).max().unwrap_or(0),
            Overflow::None => l.iter().map(|x| x.crossbars).sum(),
        };
        let (i, needed) = modes
            .iter()
            .enumerate()
            .map(|(i, (_, l, _))| (i, needed_of(l)))
            .min_by_key(|&(_, n)| n)
            .unwrap_or((0, 0));
        let chips = out[i].chips;
        let per_chip = spec.crossbars_per_chip();
        return Err(ChipError::NoModeFits {
            mode: modes[i].0.clone(),
            needed,
            available: chips * per_chip,
            chips,
            per_chip,
        });
    }
    Ok(out)
}
