//! Primitive operations, their counts, and the decomposition of every operation kind the
//! unit runs into them (docs/digital.md, "Decomposition"). Values are 16-bit fixed point
//! ([`VALUE_BYTES`] each); sums are kept at 32 bits.
//!
//! Counts saturate at `u64::MAX` instead of wrapping; the finite gate of the reports
//! refuses a saturated count.

use serde::Serialize;

/// Bytes of one activation value (16-bit).
pub const VALUE_BYTES: u64 = 2;

/// A primitive operation of the unit, priced by one entry of the energy table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Prim {
    /// 16-bit add or subtract.
    Add16,
    /// 32-bit add (an accumulator).
    Add32,
    /// 16 x 16-bit multiply.
    Mul16,
    /// 16 x 16-bit multiply into a 32-bit accumulator.
    Mac16,
    /// 16-bit compare (max, clip, ReLU).
    Compare16,
    /// exp(x) of a 16-bit value.
    Exp,
    /// 1/s of a 32-bit value.
    Reciprocal,
    /// 1/sqrt(v) of a 32-bit value.
    Rsqrt,
}

impl Prim {
    pub const ALL: [Prim; 8] = [
        Prim::Add16,
        Prim::Add32,
        Prim::Mul16,
        Prim::Mac16,
        Prim::Compare16,
        Prim::Exp,
        Prim::Reciprocal,
        Prim::Rsqrt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Prim::Add16 => "add16",
            Prim::Add32 => "add32",
            Prim::Mul16 => "mul16",
            Prim::Mac16 => "mac16",
            Prim::Compare16 => "compare16",
            Prim::Exp => "exp",
            Prim::Reciprocal => "reciprocal",
            Prim::Rsqrt => "rsqrt",
        }
    }
}

/// Primitive operations and bytes moved by one operation (or a sum of several).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct OpCounts {
    pub add16: u64,
    pub add32: u64,
    pub mul16: u64,
    pub mac16: u64,
    pub compare16: u64,
    pub exp: u64,
    pub reciprocal: u64,
    pub rsqrt: u64,
    /// Bytes read from the unit's scratch buffer (operands, norm weights).
    pub buffer_read_bytes: u64,
    /// Bytes written to the scratch buffer (results).
    pub buffer_write_bytes: u64,
    /// Bytes read from the K/V store (the right operand of an attention product: K^T or V).
    pub kv_read_bytes: u64,
    /// Bytes written to the K/V store (the keys and values of the tokens a step adds).
    pub kv_write_bytes: u64,
}

impl OpCounts {
    pub fn get(&self, p: Prim) -> u64 {
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

    fn fields(&mut self) -> [&mut u64; 12] {
        [
            &mut self.add16,
            &mut self.add32,
            &mut self.mul16,
            &mut self.mac16,
            &mut self.compare16,
            &mut self.exp,
            &mut self.reciprocal,
            &mut self.rsqrt,
            &mut self.buffer_read_bytes,
            &mut self.buffer_write_bytes,
            &mut self.kv_read_bytes,
            &mut self.kv_write_bytes,
        ]
    }

    /// Every count times `k` (`rows` copies of one row's counts).
    pub fn times(mut self, k: u64) -> OpCounts {
        for f in self.fields() {
            *f = f.saturating_mul(k);
        }
        self
    }

    /// Every count divided by `k`, rounded up (a whole batch's counts to one sample's).
    pub fn per(mut self, k: u64) -> OpCounts {
        let k = k.max(1);
        for f in self.fields() {
            *f = f.div_ceil(k);
        }
        self
    }

    /// Every count times `part / whole`, rounded up: the share of an operation over
    /// `whole` equal parts (heads) that `part` of them do. Exact when every count is a
    /// multiple of `whole`, as a per-head operation's are.
    pub fn share(mut self, part: u64, whole: u64) -> OpCounts {
        let whole = whole.max(1) as u128;
        for f in self.fields() {
            let v = (*f as u128 * part as u128).div_ceil(whole);
            *f = u64::try_from(v).unwrap_or(u64::MAX);
        }
        self
    }

    /// The sum of two, count by count.
    pub fn plus(mut self, mut o: OpCounts) -> OpCounts {
        for (a, b) in self.fields().into_iter().zip(o.fields()) {
            *a = a.saturating_add(*b);
        }
        self
    }

    /// Primitive operations of every kind (bytes not included).
    pub fn ops(&self) -> u64 {
        Prim::ALL
            .iter()
            .fold(0u64, |s, &p| s.saturating_add(self.get(p)))
    }

    /// Element-wise traffic: `inputs` values read and `outputs` values written.
    fn stream(mut self, inputs: u64, outputs: u64) -> OpCounts {
        self.buffer_read_bytes = inputs.saturating_mul(VALUE_BYTES);
        self.buffer_write_bytes = outputs.saturating_mul(VALUE_BYTES);
        self
    }
}

/// Softmax over `rows` rows of `n` values: n max-compares (a running max from the most
/// negative code), n subtracts, n exps, n - 1 adds at 32 bits, 1 reciprocal, n multiplies;
/// each value read once and written once.
pub fn softmax(rows: u64, n: u64) -> OpCounts {
    OpCounts {
        compare16: n,
        add16: n,
        exp: n,
        add32: n.saturating_sub(1),
        reciprocal: 1,
        mul16: n,
        ..Default::default()
    }
    .stream(n, n)
    .times(rows)
}

/// LayerNorm over `rows` rows of `d`: the mean (d - 1 adds, 1 multiply by 1/d), d
/// subtracts, the variance (d MACs of the squares, 1 multiply by 1/d), + epsilon (1 add),
/// 1 rsqrt, d multiplies by it, d by the scale, d adds of the bias. Reads the row and its
/// scale and bias (3d values), writes d.
pub fn layernorm(rows: u64, d: u64) -> OpCounts {
    OpCounts {
        // d - 1 adds of the sum, 1 of epsilon.
        add32: d,
        mul16: d.saturating_mul(2).saturating_add(2),
        add16: d.saturating_mul(2),
        mac16: d,
        rsqrt: 1,
        ..Default::default()
    }
    .stream(d.saturating_mul(3), d)
    .times(rows)
}

/// RMSNorm over `rows` rows of `d`: d MACs of the squares, 1 multiply by 1/d, + epsilon
/// (1 add), 1 rsqrt, d multiplies by it, d by the scale. Reads the row and its scale (2d),
/// writes d.
pub fn rmsnorm(rows: u64, d: u64) -> OpCounts {
    OpCounts {
        mac16: d,
        mul16: d.saturating_mul(2).saturating_add(1),
        add32: 1,
        rsqrt: 1,
        ..Default::default()
    }
    .stream(d.saturating_mul(2), d)
    .times(rows)
}

/// One element of GELU by I-BERT's integer-only form x/2 (1 + erf(x/sqrt 2)), erf a
/// second-order polynomial of the clipped |x|: 1 multiply (x/sqrt 2), 2 compares (|x|, the
/// clip), the polynomial (1 add, 2 multiplies, 1 add), 1 add (1 + erf), 1 multiply by x
/// (the halving is a shift, free): 4 multiplies, 3 adds, 2 compares.
const GELU: OpCounts = OpCounts {
    mul16: 4,
    add16: 3,
    compare16: 2,
    ..ZERO
};

/// One element of erf alone (I-BERT's polynomial): 2 compares, 2 adds, 2 multiplies.
const ERF: OpCounts = OpCounts {
    mul16: 2,
    add16: 2,
    compare16: 2,
    ..ZERO
};

/// One element of sigmoid 1/(1 + exp(-x)): 1 exp, 1 add, 1 reciprocal.
const SIGMOID: OpCounts = OpCounts {
    exp: 1,
    add16: 1,
    reciprocal: 1,
    ..ZERO
};

/// One element of tanh 2/(1 + exp(-2x)) - 1 (the doubling a shift): 1 exp, 2 adds,
/// 1 reciprocal.
const TANH: OpCounts = OpCounts {
    exp: 1,
    add16: 2,
    reciprocal: 1,
    ..ZERO
};

/// One element of SiLU x sigmoid(x): a sigmoid and 1 multiply.
const SILU: OpCounts = OpCounts {
    exp: 1,
    add16: 1,
    reciprocal: 1,
    mul16: 1,
    ..ZERO
};

const ZERO: OpCounts = OpCounts {
    add16: 0,
    add32: 0,
    mul16: 0,
    mac16: 0,
    compare16: 0,
    exp: 0,
    reciprocal: 0,
    rsqrt: 0,
    buffer_read_bytes: 0,
    buffer_write_bytes: 0,
    kv_read_bytes: 0,
    kv_write_bytes: 0,
};

/// An element-wise function applied to `n` elements, one read and one write each.
fn each(one: OpCounts, n: u64) -> OpCounts {
    one.times(n).stream(n, n)
}

/// GELU over `n` elements (I-BERT's integer-only form; see [`GELU`]).
pub fn gelu(n: u64) -> OpCounts {
    each(GELU, n)
}

/// erf over `n` elements (I-BERT's polynomial).
pub fn erf(n: u64) -> OpCounts {
    each(ERF, n)
}

pub fn sigmoid(n: u64) -> OpCounts {
    each(SIGMOID, n)
}

pub fn tanh(n: u64) -> OpCounts {
    each(TANH, n)
}

/// SiLU (swish) over `n` elements: x sigmoid(x).
pub fn silu(n: u64) -> OpCounts {
    each(SILU, n)
}

/// A ReLU-family or clipping function over `n` elements: `compares` compares, `muls`
/// multiplies and `adds` adds each.
pub fn clamp_like(n: u64, compares: u64, muls: u64, adds: u64) -> OpCounts {
    let one = OpCounts {
        compare16: compares,
        mul16: muls,
        add16: adds,
        ..ZERO
    };
    each(one, n)
}

/// sqrt over `n` elements as x rsqrt(x): 1 rsqrt and 1 multiply each.
pub fn sqrt(n: u64) -> OpCounts {
    each(
        OpCounts {
            rsqrt: 1,
            mul16: 1,
            ..ZERO
        },
        n,
    )
}

/// An element-wise add or subtract of `inputs` operands into `n` outputs (a residual add
/// is 2 inputs): (inputs - 1) adds per output; every operand read, the output written.
pub fn add(n: u64, inputs: u64) -> OpCounts {
    OpCounts {
        add16: n.saturating_mul(inputs.saturating_sub(1)),
        ..ZERO
    }
    .stream(n.saturating_mul(inputs), n)
}

/// An element-wise product of `inputs` operands into `n` outputs.
pub fn mul(n: u64, inputs: u64) -> OpCounts {
    OpCounts {
        mul16: n.saturating_mul(inputs.saturating_sub(1)),
        ..ZERO
    }
    .stream(n.saturating_mul(inputs), n)
}

/// An element-wise quotient a / b into `n` outputs, b holding `divisors` distinct values
/// (1: a scalar, broadcast): one reciprocal per divisor, one multiply per output.
pub fn div(n: u64, divisors: u64) -> OpCounts {
    OpCounts {
        reciprocal: divisors,
        mul16: n,
        ..ZERO
    }
    .stream(n.saturating_add(divisors), n)
}

/// Folded inference BatchNorm (a scale and a shift) over `n` elements.
pub fn batchnorm(n: u64) -> OpCounts {
    clamp_like(n, 0, 1, 1)
}

/// Max pooling: `outputs` windows of `window` values, window - 1 compares each; each
/// input value read once (a line buffer holds the overlap), each output written.
pub fn maxpool(outputs: u64, window: u64, inputs: u64) -> OpCounts {
    OpCounts {
        compare16: outputs.saturating_mul(window.saturating_sub(1)),
        ..ZERO
    }
    .stream(inputs, outputs)
}

/// Average pooling: window - 1 adds at 32 bits and 1 multiply by 1/window per output.
pub fn avgpool(outputs: u64, window: u64, inputs: u64) -> OpCounts {
    OpCounts {
        add32: outputs.saturating_mul(window.saturating_sub(1)),
        mul16: outputs,
        ..ZERO
    }
    .stream(inputs, outputs)
}

/// Local response normalization, per output: `summed` MACs of the squares, 1 multiply by
/// alpha/size, 1 add of the bias, the power -beta as 2 rsqrt and 1 multiply (exact for
/// beta = 0.75, x^-0.75 = rsqrt(x) rsqrt(rsqrt(x)); other betas priced alike), 1 multiply
/// by x.
pub fn lrn(n: u64, summed: u64) -> OpCounts {
    each(
        OpCounts {
            mac16: summed,
            mul16: 3,
            add16: 1,
            rsqrt: 2,
            ..ZERO
        },
        n,
    )
}

/// The element-wise gates of `hidden` LSTM units at one step: 3 sigmoids, 2 tanh, 3
/// multiplies and 1 add each (c = f c + i g, h = o tanh c). The gate products with the
/// weights are weight products, not the unit's.
pub fn lstm_gates(hidden: u64) -> OpCounts {
    let one = SIGMOID.times(3).plus(TANH.times(2)).plus(OpCounts {
        mul16: 3,
        add16: 1,
        ..ZERO
    });
    // x_t, h_{t-1}'s gate sums (4 per unit) and c_{t-1} read; h_t and c_t written.
    one.times(hidden)
        .stream(hidden.saturating_mul(5), hidden.saturating_mul(2))
}

/// An attention product of two activations, `batch` products [m, k] x [k, n]: b m k n
/// MACs; the left operand read from the buffer once, the right one (K^T or V) from the
/// K/V store once (the unit keeps each fetched value for every row that uses it), the
/// output written once; `kv_written` values of the right operand written to the K/V store
/// (the keys or values of the tokens this step adds).
pub fn matmul(batch: u64, m: u64, k: u64, n: u64, kv_written: u64) -> OpCounts {
    let s = |a: u64, b: u64, c: u64| a.saturating_mul(b).saturating_mul(c);
    OpCounts {
        mac16: s(batch, m, k).saturating_mul(n),
        buffer_read_bytes: s(batch, m, k).saturating_mul(VALUE_BYTES),
        buffer_write_bytes: s(batch, m, n).saturating_mul(VALUE_BYTES),
        kv_read_bytes: s(batch, k, n).saturating_mul(VALUE_BYTES),
        kv_write_bytes: kv_written.saturating_mul(VALUE_BYTES),
        ..ZERO
    }
}
