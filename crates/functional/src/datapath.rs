//! One input vector through one mode's OU reads (functional-model.md sections 2 and 3).
//!
//! Per pass, the pass value u of every routed row is cut into bit-planes over the
//! physical rows of its tile. Per input cycle, the digit planes of that cycle and the
//! OUs of the mode (fixed slices of the tile, or the next ou.rows driven rows) give each
//! bitline sum S_j = sum over the OU's rows of d * c as popcounts of digit plane x cell
//! plane. The ADC turns S_j into a code; the shift-and-add weighs the code by its cycle,
//! slice, polarity and pass.

use crate::adc::Adc;
use crate::program::{Column, Program};
use crossbar::Mode;
use engine::input::Pass;
use engine::{Granularity, PassPlan};

/// What one mode's datapath needs besides the program.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Datapath<'a> {
    pub program: &'a Program,
    pub plan: &'a PassPlan,
    pub mode: Mode,
    pub granularity: Granularity,
    pub ou_rows: u32,
    pub adc: Adc,
    /// Rows of each conv group's matrix.
    pub k: usize,
}

/// Per-thread buffers of the datapath.
pub(crate) struct Scratch {
    /// Bit b of the pass values of every route: planes[(route * B + b) * words + w].
    planes: Vec<u64>,
    reads: Reads,
}

/// What the reads of one tile use and write.
struct Reads {
    /// The digit planes of one cycle restricted to one OU.
    digits: Vec<u64>,
    /// Y of the vector, shift-and-added so far.
    acc: Vec<i128>,
}

impl Scratch {
    /// Y of the last vector read.
    pub fn acc(&mut self) -> &mut [i128] {
        &mut self.reads.acc
    }

    pub fn new(dp: &Datapath, outputs: usize) -> Self {
        let b = dp.plan.applied_bits as usize;
        let w = dp.program.words;
        Scratch {
            planes: vec![0; dp.program.routes.len() * b * w],
            reads: Reads {
                digits: vec![0; dp.plan.dac_bits as usize * w],
                acc: vec![0; outputs],
            },
        }
    }
}

/// The signed weight of input cycle c in the shift-and-add: 2^(c*dac.bits), or
/// -2^(B-1) for the sign cycle of a two's-complement pass read one bit at a time.
fn cycle_weight(plan: &PassPlan, pass: Pass, c: u32) -> i128 {
    let w = 1i128 << (c * plan.dac_bits);
    match pass {
        Pass::TwosComplement { bits } if plan.dac_bits == 1 && c == bits - 1 => -w,
        Pass::Negative => -w,
        _ => w,
    }
}

impl Datapath<'_> {
    /// Y of `vector` (groups * K inputs) into `s.acc` (groups * Cout/G outputs), before
    /// the two's-complement correction of multi-bit digits ([`Self::correction`]).
    pub fn vector(&self, vector: &[i32], s: &mut Scratch) {
        s.reads.acc.iter_mut().for_each(|a| *a = 0);
        let plan = self.plan;
        let bits = plan.applied_bits as usize;
        let words = self.program.words;
        for &pass in &plan.passes {
            s.planes.iter_mut().for_each(|p| *p = 0);
            for (r, route) in self.program.routes.iter().enumerate() {
                let inputs = &vector[route.group as usize * self.k..][..self.k];
                let planes = &mut s.planes[r * bits * words..][..bits * words];
                for (i, &row) in route.rows.iter().enumerate() {
                    let mut u = pass.value(inputs[row as usize]);
                    while u != 0 {
                        let b = u.trailing_zeros() as usize;
                        planes[b * words + i / 64] |= 1u64 << (i % 64);
                        u &= u - 1;
                    }
                }
            }
            for c in 0..plan.cycles {
                let weight = cycle_weight(plan, pass, c);
                for tile in &self.program.tiles {
                    let route = &self.program.routes[tile.route];
                    let planes = &s.planes[tile.route * bits * words..][..bits * words];
                    self.tile_cycle(tile, route.rows.len(), planes, c, weight, &mut s.reads);
                }
            }
        }
    }

    /// Every OU read of one tile in input cycle c.
    fn tile_cycle(
        &self,
        tile: &crate::program::Tile,
        n: usize,
        planes: &[u64],
        c: u32,
        weight: i128,
        r: &mut Reads,
    ) {
        let words = self.program.words;
        let dac = self.plan.dac_bits as usize;
        let bits = self.plan.applied_bits as usize;
        let first = c as usize * dac;
        let digit_bits = dac.min(bits - first);
        let digit =
            |w: usize| (0..digit_bits).fold(0u64, |a, d| a | planes[(first + d) * words + w]);
        // A read carries current only where some row's digit is non-zero.
        if (0..words).all(|w| digit(w) == 0) {
            return;
        }
        // Which rows this mode drives (skipping modes only), for OU formation.
        let driven = |w: usize| match self.granularity {
            Granularity::Value => (0..bits).fold(0u64, |a, b| a | planes[b * words + w]),
            Granularity::Bit => digit(w),
        };
        let ou = self.ou_rows as usize;
        let mut read = |lo: usize, hi: usize| {
            if lo >= hi {
                return;
            }
            // The digit planes of this cycle restricted to rows [lo, hi).
            let mut any = false;
            for w in lo / 64..=(hi - 1) / 64 {
                let mut m = !0u64;
                if w == lo / 64 {
                    m &= !0u64 << (lo % 64);
                }
                if w == (hi - 1) / 64 {
                    m &= !0u64 >> (63 - (hi - 1) % 64);
                }
                for d in 0..digit_bits {
                    let v = planes[(first + d) * words + w] & m;
                    r.digits[d * words + w] = v;
                    any |= v != 0;
                }
            }
            if !any {
                return;
            }
            // Every column group of a tile sees the same OUs (a compacted tile holds
            // one group); ideal reads all used columns of the block at once.
            let span = lo / 64..=(hi - 1) / 64;
            for cols in &tile.groups {
                self.read_columns(
                    cols,
                    span.clone(),
                    digit_bits,
                    weight,
                    &r.digits,
                    &mut r.acc,
                );
            }
        };
        match self.mode {
            Mode::Ideal => read(0, n),
            Mode::Dense | Mode::Weight => {
                for lo in (0..n).step_by(ou) {
                    read(lo, (lo + ou).min(n));
                }
            }
            Mode::Activation | Mode::Sre => {
                // The next ou.rows driven rows form an OU; the undriven rows between
                // them have a zero digit and add nothing to the physical span read.
                let mut count = 0;
                let mut lo = 0;
                for w in 0..words {
                    let mut m = driven(w);
                    while m != 0 {
                        let i = w * 64 + m.trailing_zeros() as usize;
                        m &= m - 1;
                        if count == 0 {
                            lo = i;
                        }
                        count += 1;
                        if count == ou {
                            read(lo, i + 1);
                            count = 0;
                        }
                    }
                }
                if count > 0 {
                    read(lo, n);
                }
            }
        }
    }

    /// One read of `cols` over the rows whose digits are in `s.digits`.
    #[inline]
    fn read_columns(
        &self,
        cols: &[Column],
        span: std::ops::RangeInclusive<usize>,
        digit_bits: usize,
        weight: i128,
        digits: &[u64],
        acc: &mut [i128],
    ) {
        let words = self.program.words;
        let cell_bits = self.plan_cell_bits(cols);
        for col in cols {
            let mut sum = 0u64;
            for w in span.clone() {
                for d in 0..digit_bits {
                    let x = digits[d * words + w];
                    if x == 0 {
                        continue;
                    }
                    for cb in 0..cell_bits {
                        let n = (x & col.planes[cb * words + w]).count_ones() as u64;
                        sum += n << (d + cb);
                    }
                }
            }
            let code = self.adc.convert(sum);
            if code != 0 {
                let v = weight * ((code as i128) << col.shift);
                let a = &mut acc[col.out as usize];
                if col.neg {
                    *a -= v;
                } else {
                    *a += v;
                }
            }
        }
    }

    #[inline]
    fn plan_cell_bits(&self, cols: &[Column]) -> usize {
        cols.first()
            .map_or(0, |c| c.planes.len() / self.program.words)
    }
}
