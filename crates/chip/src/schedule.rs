//! Schedules: how long a run takes on the chip, row by row.
//!
//! Each layer's busy time W (with its copies: `ceil(W / replicas)`) is spread over its
//! output rows of every image in order, row j taking `floor((j+1)W/R) - floor(jW/R)`
//! cycles of the R rows (integers that add up to W exactly). A row's output is ready
//! `L - 1` cycles after its last OU issues, then crosses the link to the next layer: the
//! link carries one row after another, each taking its share of the transfer time of
//! the layer's output (bytes / min(link, eDRAM) bandwidth, plus the off-chip write and
//! read of an output larger than the eDRAM of the tiles that receive it), and arrives
//! `hops x hop_ns` later.
//!
//! - layer-by-layer: a layer starts once every row of the previous one has arrived; its
//!   output is sent after its last row. With free data movement and one copy this is
//!   exactly the sum of the layers' `W + L - 1`.
//! - pipelined: an output row starts as soon as the input rows its kernel window needs
//!   have arrived and the layer's previous row has issued; rows of image n+1 follow those
//!   of image n.
//! - pipelined-pool-barrier: pipelined, but a layer whose input was pooled (its input
//!   rows differ from its producer's output rows) waits for the producer's last row of
//!   the image, as PP_sim orders a pooling after all of its producer's reads.
//!
//! The digital unit: a layer followed by digital ops (`LayerMode::digital_cycles` D over
//! the run, image n's share `floor((n+1)D/N) - floor(nD/N)` of the N samples) holds its
//! output until the unit has run after it, as the layer-by-layer account of a run places
//! the unit after the layer's barrier. Layer by layer, the unit runs once the layer's
//! last row is ready and its output is sent after it; pipelined, the unit runs image n's
//! share once the layer's last row of image n is ready and the unit has finished image
//! n-1, and image n's rows are sent after it. The unit after one layer is a stage of its
//! own (no contention with the unit after another layer). D = 0 leaves every figure as
//! it was.
//!
//! Copies: within the run a layer's busy time is `ceil(W / min(copies, vectors))`; in
//! the steady state of a stream of images, copies beyond one image's vectors serve the
//! next images, so a stage takes `ceil(W / copies)` per run's worth of images.

use crate::place::{busy_in_run, busy_with, Placement};
use crate::ChipError;
use crate::{ChipSpec, Context, DataMovement, LayerMode, LayerShape, Schedule};
use serde::Serialize;

/// Timing of one layer in a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LayerTiming {
    /// First row started, last row's output ready (cycles from the start of the run).
    pub start: u64,
    pub end: u64,
    /// Busy cycles with its copies.
    pub busy_cycles: u64,
    /// Cycles the layer waited for its input after it started (pipelined), or for the
    /// previous layer's output to arrive (layer-by-layer).
    pub stall_cycles: u64,
    /// Its output sent to the next layer: bytes over the run, hops, transfer cycles.
    pub network_bytes: u64,
    pub hops: u64,
    pub transfer_cycles: u64,
    /// Bytes of its output written to and read back from off-chip memory.
    pub spill_bytes: u64,
}

/// Timing of a mode's run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timing {
    pub layers: Vec<LayerTiming>,
    /// The run's samples, first input row to last output row.
    pub run_cycles: u64,
    /// One image alone, in cycles and ns.
    pub latency_cycles: u64,
    pub latency_ns: f64,
    /// Steady state: the slowest stage (pipelined) or the run (otherwise), per image.
    pub cycles_per_image: f64,
    pub images_per_s: f64,
    /// Byte-hops are `network_bytes x hops` of each layer.
    pub network_bytes: u64,
    /// Mesh and inter-chip energy: `router_pj` + `interchip_pj`.
    pub network_pj: f64,
    /// The parts of `network_pj` from `chip.router_pj_per_bit` (hops on the mesh) and
    /// `chip.interchip_pj_per_bit` (transfers between chips), kept apart so that a part
    /// that is not finite is blamed on its own key (docs/errors.md); not an output.
    #[serde(skip)]
    pub router_pj: f64,
    #[serde(skip)]
    pub interchip_pj: f64,
    pub offchip_bytes: u64,
    pub offchip_pj: f64,
    pub write_cycles: u64,
    pub write_pj: f64,
    pub static_pj: f64,
}

/// A row's share of `total` cycles spread over `rows` rows.
fn share(total: u64, rows: u64, j: u64) -> u64 {
    let t = total as u128;
    let r = rows.max(1) as u128;
    let j = j as u128;
    ((t * (j + 1)) / r - (t * j) / r) as u64
}

/// Router (x, y) and chip of a compute unit.
fn position(spec: &ChipSpec, unit: u64) -> (u64, u64, u64) {
    let chip = unit / spec.units_per_chip();
    let tile = (unit % spec.units_per_chip()) / spec.units_per_tile as u64;
    let router = tile / spec.tiles_per_router as u64;
    (
        router % spec.mesh_x as u64,
        router / spec.mesh_x as u64,
        chip,
    )
}

/// The last producer row (of one image) that output row `ho` of `c` needs.
fn needed_row(p: &LayerShape, c: &LayerShape, ho: u64) -> u64 {
    let last_in = c.in_rows.saturating_sub(1);
    let reach = ho * c.stride_rows + c.dilation_rows * c.kernel_rows.saturating_sub(1);
    let y = reach.saturating_sub(c.pad_rows).min(last_in);
    let p_last = p.out_rows.saturating_sub(1);
    if p.out_rows == c.in_rows {
        y
    } else if c.in_rows <= 1 || p.out_rows <= 1 {
        p_last
    } else {
        // Pooling or resizing between the layers: rows map in proportion.
        ((y + 1) * p.out_rows)
            .div_ceil(c.in_rows)
            .saturating_sub(1)
            .min(p_last)
    }
}

/// Data movement from layer i to layer i+1: (transfer cycles over the run, hop cycles,
/// hops, spill bytes, network pJ, off-chip pJ).
struct Link {
    transfer: u64,
    hop_cycles: u64,
    hops: u64,
    bytes: u64,
    spill_bytes: u64,
    router_pj: f64,
    interchip_pj: f64,
    offchip_pj: f64,
}

/// Most cycles one derived duration (a transfer, a hop, a reprogramming) may take: 2^48,
/// so that the schedule's sums over layers, rows and images stay far inside u64 (a
/// cast would saturate at 2^64 - 1 and a sum then wrap, making the chip faster).
pub const MAX_DERIVED_CYCLES: u64 = 1 << 48;

/// `ns` as whole cycles of `ctx.cycle_ns`, or the refusal naming `key` (the chip key
/// whose value made it) and `what` took that long.
fn cycles(ns: f64, ctx: &Context, key: &str, value: f64, what: &str) -> Result<u64, ChipError> {
    bounds::finite::to_count(|| what.to_string(), ns / ctx.cycle_ns, MAX_DERIVED_CYCLES).map_err(
        |e| ChipError::Key {
            key: key.into(),
            msg: format!(
                "{value:e} is out of range: {} would be {} cycles (timing.cycle_ns = {}), more than 2^48",
                e.figure, e.value, ctx.cycle_ns
            ),
        },
    )
}

fn link(
    spec: &ChipSpec,
    ctx: &Context,
    shapes: &[LayerShape],
    p: &Placement,
    i: usize,
) -> Result<Link, ChipError> {
    let none = Link {
        transfer: 0,
        hop_cycles: 0,
        hops: 0,
        bytes: 0,
        spill_bytes: 0,
        router_pj: 0.0,
        interchip_pj: 0.0,
        offchip_pj: 0.0,
    };
    if i + 1 >= shapes.len() || spec.data_movement == DataMovement::Free {
        return Ok(none);
    }
    let (a, b) = (&p.layers[i], &p.layers[i + 1]);
    let from = position(spec, a.first_unit + a.units.saturating_sub(1));
    let to = position(spec, b.first_unit);
    let hops = from.0.abs_diff(to.0) + from.1.abs_diff(to.1);
    let cross = from.2 != to.2;
    let bytes = shapes[i].out_bytes * ctx.samples;
    // GB/s is bytes per ns; the slowest of the rates, with its key for messages.
    let mut rates = vec![
        (
            "link_ghz",
            spec.link_ghz,
            spec.link_bits as f64 / 8.0 * spec.link_ghz,
        ),
        ("edram_gb_per_s", spec.edram_gb_per_s, spec.edram_gb_per_s),
    ];
    if cross {
        rates.push((
            "interchip_gb_per_s",
            spec.interchip_gb_per_s,
            spec.interchip_gb_per_s,
        ));
    }
    let (mut key, mut value, rate) =
        rates.into_iter().fold(
            ("", 0.0, f64::INFINITY),
            |a, r| if r.2 < a.2 { r } else { a },
        );
    let capacity = spec.edram_kb_per_tile * 1024.0 * b.tiles.max(1) as f64;
    let spill = shapes[i].out_bytes as f64 > capacity;
    let spill_bytes = if spill { 2 * bytes } else { 0 };
    let mut ns = bytes as f64 / rate;
    if spill {
        let off = spill_bytes as f64 / spec.offchip_gb_per_s;
        if off > ns {
            (key, value) = ("offchip_gb_per_s", spec.offchip_gb_per_s);
        }
        ns += off;
    }
    let bits = bytes as f64 * 8.0;
    let layer = &shapes[i].name;
    Ok(Link {
        transfer: cycles(ns, ctx, key, value, &format!("the transfer after {layer}"))?,
        hop_cycles: cycles(
            hops as f64 * spec.hop_ns,
            ctx,
            "hop_ns",
            spec.hop_ns,
            &format!("the hops after {layer}"),
        )?,
        hops,
        bytes,
        spill_bytes,
        router_pj: bits * hops as f64 * spec.router_pj_per_bit,
        interchip_pj: if cross {
            bits * spec.interchip_pj_per_bit
        } else {
            0.0
        },
        offchip_pj: spill_bytes as f64 * 8.0 * spec.offchip_pj_per_bit,
    })
}

/// A placed mode with its links, ready to be timed.
struct Run<'a> {
    spec: &'a ChipSpec,
    ctx: &'a Context,
    shapes: &'a [LayerShape],
    modes: &'a [LayerMode],
    p: &'a Placement,
    links: &'a [Link],
    write_cycles: u64,
}

/// Rows of `images` images through every layer; returns per-layer timing (start, end,
/// stall) and the end of the run.
fn simulate(r: &Run, images: u64) -> (Vec<LayerTiming>, u64) {
    let Run {
        spec,
        ctx,
        shapes,
        modes,
        p,
        links,
        write_cycles,
    } = *r;
    let pipelined = spec.schedule != Schedule::LayerByLayer;
    let pool_barrier = spec.schedule == Schedule::PipelinedPoolBarrier;
    let mut out = Vec::with_capacity(shapes.len());
    let mut prev_arrival: Vec<u64> = Vec::new();
    let mut seg = u32::MAX;
    let mut t0 = 0u64;
    let mut run_end = 0u64;
    for (i, (shape, m)) in shapes.iter().zip(modes).enumerate() {
        let place = &p.layers[i];
        if place.segment != seg {
            seg = place.segment;
            // A new segment is written once the previous one has finished.
            t0 = run_end + if p.segments > 1 { write_cycles } else { 0 };
        }
        let busy = busy_in_run(m.busy_cycles, place.replicas, m.vectors);
        let depth = m.cycles.saturating_sub(m.busy_cycles);
        let rows_run = ctx.samples * shape.out_rows;
        let rows = images * shape.out_rows;
        let all_in = prev_arrival.last().copied().unwrap_or(t0).max(t0);
        let mut finish = Vec::with_capacity(rows as usize);
        let mut lt = LayerTiming::default();
        let mut prev_finish = 0u64;
        for j in 0..rows {
            let ready = if i == 0 || prev_arrival.is_empty() {
                t0
            } else if pipelined {
                let (img, ho) = (j / shape.out_rows, j % shape.out_rows);
                let p = &shapes[i - 1];
                let row = if pool_barrier && p.out_rows != shape.in_rows {
                    p.out_rows.saturating_sub(1)
                } else {
                    needed_row(p, shape, ho)
                };
                let need = img * p.out_rows + row;
                prev_arrival[need as usize].max(t0)
            } else {
                all_in
            };
            let start = if j == 0 {
                lt.start = ready;
                ready
            } else {
                lt.stall_cycles += ready.saturating_sub(prev_finish);
                ready.max(prev_finish)
            };
            prev_finish = start + share(busy, rows_run, j);
            finish.push(prev_finish);
        }
        let last = finish.last().copied().unwrap_or(all_in);
        let tail = if busy > 0 { depth } else { 0 };
        lt.end = last + tail;
        // The digital unit after the layer: when each image's output may leave.
        let digital = m.digital_cycles;
        let mut released: Vec<u64> = Vec::new();
        if digital > 0 {
            if pipelined {
                let mut unit_free = 0u64;
                for n in 0..images {
                    let j = ((n + 1) * shape.out_rows).saturating_sub(1) as usize;
                    let ready = finish.get(j).copied().unwrap_or(last) + tail;
                    unit_free = ready.max(unit_free) + share(digital, ctx.samples, n);
                    released.push(unit_free);
                }
                lt.end = lt.end.max(unit_free);
            } else {
                // floor(images x D / N): the shares of the images run.
                let d = (digital as u128 * images as u128 / ctx.samples.max(1) as u128) as u64;
                lt.end += d;
            }
        }
        lt.busy_cycles = busy;
        if !pipelined && i > 0 {
            lt.stall_cycles = lt
                .start
                .saturating_sub(out.last().map_or(t0, |l: &LayerTiming| l.end));
        }
        // Send the rows over the link.
        let lk = &links[i];
        let mut link_free = 0u64;
        prev_arrival = finish
            .iter()
            .enumerate()
            .map(|(j, &f)| {
                let avail = if !pipelined {
                    lt.end
                } else if digital > 0 {
                    let n = j as u64 / shape.out_rows.max(1);
                    released.get(n as usize).copied().unwrap_or(lt.end)
                } else {
                    f + tail
                };
                let s = avail.max(link_free);
                link_free = s + share(lk.transfer, rows_run, j as u64);
                link_free + lk.hop_cycles
            })
            .collect();
        run_end = run_end.max(lt.end);
        out.push(lt);
    }
    (out, run_end)
}

/// Timing of one placed mode.
pub fn schedule(
    spec: &ChipSpec,
    ctx: &Context,
    shapes: &[LayerShape],
    modes: &[LayerMode],
    p: &Placement,
) -> Result<Timing, ChipError> {
    let links: Vec<Link> = (0..shapes.len())
        .map(|i| link(spec, ctx, shapes, p, i))
        .collect::<Result<_, _>>()?;
    let write_cycles = cycles(
        ctx.xbar_rows as f64 * spec.write_ns_per_row,
        ctx,
        "write_ns_per_row",
        spec.write_ns_per_row,
        "the write of a crossbar",
    )?;
    let run = Run {
        spec,
        ctx,
        shapes,
        modes,
        p,
        links: &links,
        write_cycles,
    };
    let (mut layers, run_cycles) = simulate(&run, ctx.samples);
    let (one, _) = simulate(&run, 1);
    let latency_cycles = one.last().map_or(0, |l| l.end);
    for (l, lk) in layers.iter_mut().zip(&links) {
        l.network_bytes = lk.bytes;
        l.hops = lk.hops;
        l.transfer_cycles = lk.transfer;
        l.spill_bytes = lk.spill_bytes;
    }
    let samples = ctx.samples.max(1) as f64;
    let cycles_per_image = if spec.schedule != Schedule::LayerByLayer && p.segments == 1 {
        modes
            .iter()
            .zip(&p.layers)
            .zip(&links)
            .map(|((m, l), lk)| {
                busy_with(m.busy_cycles, l.replicas)
                    .max(lk.transfer)
                    .max(m.digital_cycles)
            })
            .max()
            .unwrap_or(0) as f64
            / samples
    } else {
        run_cycles as f64 / samples
    };
    let images_per_s = if cycles_per_image > 0.0 {
        1e9 / (cycles_per_image * ctx.cycle_ns)
    } else {
        0.0
    };
    let written: u64 = if p.segments > 1 {
        p.layers.iter().map(|l| l.crossbars).sum()
    } else {
        0
    };
    let powered_tiles = p.chips * spec.tiles_per_chip();
    Ok(Timing {
        run_cycles,
        latency_cycles,
        latency_ns: latency_cycles as f64 * ctx.cycle_ns,
        cycles_per_image,
        images_per_s,
        network_bytes: links.iter().filter(|l| l.hops > 0).map(|l| l.bytes).sum(),
        network_pj: links.iter().map(|l| l.router_pj + l.interchip_pj).sum(),
        router_pj: links.iter().map(|l| l.router_pj).sum(),
        interchip_pj: links.iter().map(|l| l.interchip_pj).sum(),
        offchip_bytes: links.iter().map(|l| l.spill_bytes).sum(),
        offchip_pj: links.iter().map(|l| l.offchip_pj).sum(),
        write_cycles: if p.segments > 1 {
            write_cycles * p.segments as u64
        } else {
            0
        },
        write_pj: written as f64 * ctx.xbar_rows as f64 * spec.write_pj_per_row,
        static_pj: spec.static_mw_per_tile
            * powered_tiles as f64
            * run_cycles as f64
            * ctx.cycle_ns,
        layers,
    })
}
