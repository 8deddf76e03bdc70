//! What the generator is asked for ([`SynthParams`]: sparsity, its [`Structure`], input
//! kind, seed) and the seeded random stream of each tensor of a layer ([`tensor_rng`]),
//! below every generator (weights, inputs, roles) and the workload that uses them.

use std::fmt;
use std::str::FromStr;

use anyhow::bail;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// How weight zeros are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Structure {
    /// Each weight is zero independently with probability `weight_sparsity`.
    #[default]
    Unstructured,
    /// SSL-like structured sparsity: whole filters and whole unrolled rows are zero.
    Ssl,
    /// Magnitude pruning: the ceil(`weight_sparsity` x size) weights of smallest |z| of
    /// the layer are zero (unstructured positions, no small kept weight).
    Magnitude,
    /// N:M semi-structured: in every group of M consecutive rows (inputs) of a column, the
    /// N of largest |z| are kept (`n` < `m`, both in 1..=64).
    NM { n: u32, m: u32 },
}

/// The largest M of an N:M structure.
pub const MAX_M: u32 = 64;

impl fmt::Display for Structure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Structure::Unstructured => f.write_str("unstructured"),
            Structure::Ssl => f.write_str("ssl"),
            Structure::Magnitude => f.write_str("magnitude"),
            Structure::NM { n, m } => write!(f, "{n}:{m}"),
        }
    }
}

impl Structure {
    /// The zero fraction the structure fixes (N:M: 1 - N/M), if it fixes one.
    pub fn fixed_sparsity(self) -> Option<f64> {
        match self {
            Structure::NM { n, m } => Some(1.0 - n as f64 / m as f64),
            _ => None,
        }
    }
}

impl FromStr for Structure {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<Self> {
        match s {
            "unstructured" => Ok(Structure::Unstructured),
            "ssl" => Ok(Structure::Ssl),
            "magnitude" => Ok(Structure::Magnitude),
            _ => match s.split_once(':') {
                Some((n, m)) => match (n.parse::<u32>(), m.parse::<u32>()) {
                    (Ok(n), Ok(m)) if 1 <= n && n < m && m <= MAX_M => Ok(Structure::NM { n, m }),
                    _ => bail!(
                        "--structure: '{s}' is not N:M with 1 <= N < M <= {MAX_M} (e.g. 2:4, 4:8)"
                    ),
                },
                None => bail!(
                    "--structure: '{s}' is not one of unstructured, magnitude, ssl, N:M (e.g. 2:4)"
                ),
            },
        }
    }
}

/// Parameters of the synthetic generators.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthParams {
    pub seed: u64,
    /// Target fraction of zero weights, in [0, 1].
    pub weight_sparsity: f64,
    pub structure: Structure,
    /// Target fraction of zero inputs of every layer but the first, in [0, 1].
    pub act_sparsity: f64,
    /// Fraction of the query heads of every attention block pruned, in [0, 1] (layers
    /// annotated with a `role`, see [`roles`]).
    pub head_sparsity: f64,
}

impl Default for SynthParams {
    fn default() -> Self {
        SynthParams {
            seed: 1,
            weight_sparsity: 0.7,
            structure: Structure::Unstructured,
            act_sparsity: 0.5,
            head_sparsity: 0.0,
        }
    }
}

impl SynthParams {
    /// Fractions must lie in [0, 1]; the error names the command-line flag.
    pub fn validate(&self) -> anyhow::Result<()> {
        for (flag, v) in [
            ("--weight-sparsity", self.weight_sparsity),
            ("--act-sparsity", self.act_sparsity),
            ("--head-sparsity", self.head_sparsity),
        ] {
            if !(0.0..=1.0).contains(&v) {
                bail!("{flag}: {v} is not in [0, 1]");
            }
        }
        Ok(())
    }

    /// One-line recipe, used as the workload `source`. The weight sparsity an N:M
    /// structure fixes is written as that; `head_sparsity` only when heads are pruned.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "synthetic: seed={} weight_sparsity={} structure={} act_sparsity={}",
            self.seed,
            self.structure
                .fixed_sparsity()
                .unwrap_or(self.weight_sparsity),
            self.structure,
            self.act_sparsity
        );
        if self.head_sparsity > 0.0 {
            s.push_str(&format!(" head_sparsity={}", self.head_sparsity));
        }
        s
    }
}

/// Which tensor of a layer a random stream feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tensor {
    Weights = 0,
    WeightStructure = 1,
    Inputs = 2,
    /// N:M weights: one stream per chunk of whole columns.
    ColumnWeights = 3,
    /// Which heads of an attention block are pruned (the block's first layer).
    Heads = 4,
}

/// Elements per independently seeded chunk of a weight tensor.
pub const CHUNK: usize = 1 << 20;

/// The random stream of chunk `chunk` of one tensor of one layer.
pub fn tensor_rng(seed: u64, layer_index: usize, tensor: Tensor, chunk: usize) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(((layer_index as u64 * 8 + tensor as u64) << 28) + chunk as u64);
    rng
}
