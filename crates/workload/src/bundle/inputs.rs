//! A bundle's input arrays, streamed: [`scan`] reads an array once at open and records
//! what quantization needs of the whole tensor ([`InputStats`]: sign, max|x| or the
//! integer range, after the finiteness and range checks); [`stream`] then reads it front
//! to back again and quantizes a chunk of samples at a time with those statistics, so
//! every value is the one whole-tensor quantization gives. Memory held is the read blocks
//! and one chunk, never the array (a Fortran-ordered array is held whole by its reader).

use std::io::Read;

use super::header::{ArrayHeader, Dtype};
use super::npy::{Element, ElementReader};
use crate::quant::{FloatStats, IntRange, IntStats};
use crate::source::FloatSampleSink;

/// What open records of one input array.
#[derive(Debug, Clone, PartialEq)]
pub struct InputStats {
    /// The header open checked; the array must still carry it when streamed.
    pub header: ArrayHeader,
    pub values: Values,
}

/// Whole-tensor statistics of a float or an integer array.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Values {
    Float(FloatStats),
    /// Range of an integer array (checked for the precision given at open).
    Int(IntRange),
}

impl InputStats {
    /// True iff any element of the whole tensor is negative.
    pub fn signed(&self) -> bool {
        match self.values {
            Values::Float(f) => f.signed,
            Values::Int(r) => r.signed(),
        }
    }
}

/// Calls `$f::<T>($args)` with `T` the float element type of `$dtype`, or `$i::<T>` with
/// the integer one.
macro_rules! by_dtype {
    ($dtype:expr, $f:ident, $i:ident, ($($arg:expr),*)) => {
        match $dtype {
            Dtype::F32 => $f::<f32, _>($($arg),*),
            Dtype::F64 => $f::<f64, _>($($arg),*),
            Dtype::I8 => $i::<i8, _>($($arg),*),
            Dtype::I16 => $i::<i16, _>($($arg),*),
            Dtype::I32 => $i::<i32, _>($($arg),*),
            Dtype::I64 => $i::<i64, _>($($arg),*),
            Dtype::U8 => $i::<u8, _>($($arg),*),
            Dtype::U16 => $i::<u16, _>($($arg),*),
            Dtype::U32 => $i::<u32, _>($($arg),*),
        }
    };
}

/// Reads all of `r` (the array of `header`) once: the first non-finite float, or the first
/// integer out of range for `bits`-wide inputs, is an error naming its flat index.
pub fn scan<R: Read>(
    r: ElementReader<R>,
    header: &ArrayHeader,
    bits: u32,
) -> Result<InputStats, String> {
    let values = by_dtype!(header.dtype, scan_float, scan_int, (r, bits))?;
    Ok(InputStats {
        header: header.clone(),
        values,
    })
}

fn scan_float<T: Element + Into<f64>, R: Read>(
    mut r: ElementReader<R>,
    _bits: u32,
) -> Result<Values, String> {
    let (mut stats, mut block) = (FloatStats::default(), Vec::<T>::new());
    while r.next_block(usize::MAX, &mut block)? > 0 {
        for &v in &block {
            stats.push(v.into()).map_err(|e| e.to_string())?;
        }
    }
    r.finish()?;
    Ok(Values::Float(stats))
}

fn scan_int<T: Element + Into<i64>, R: Read>(
    mut r: ElementReader<R>,
    bits: u32,
) -> Result<Values, String> {
    let (mut stats, mut block) = (IntStats::new(bits), Vec::<T>::new());
    while r.next_block(usize::MAX, &mut block)? > 0 {
        block.iter().for_each(|&v| stats.push(v.into()));
    }
    r.finish()?;
    stats.finish().map(Values::Int).map_err(|e| e.to_string())
}

/// Where and how much to stream.
pub struct Stream<'a> {
    /// `<file>: <array>`, prefixed to the stream's own errors.
    pub label: &'a str,
    /// Elements of one sample (C * H * W).
    pub per_sample: usize,
    pub samples: usize,
    pub chunk: usize,
    pub input_bits: u32,
}

/// Streams the first `s.samples` samples of `r` (the array `stats` describes) to `sink`,
/// at most `s.chunk` samples per call, quantized with the whole-tensor statistics, and
/// with `floats` beside them the float values of a float array (empty otherwise). Integer
/// arrays must fit `s.input_bits` (the caller checks [`IntRange::fits`] first). A value
/// the statistics rule out means the file changed since open: an error, never a silently
/// different value.
pub fn stream<R: Read>(
    r: ElementReader<R>,
    stats: &InputStats,
    s: &Stream<'_>,
    floats: bool,
    sink: &mut FloatSampleSink<'_>,
) -> anyhow::Result<()> {
    let changed = || anyhow::anyhow!("{}: changed since the bundle was opened", s.label);
    match stats.values {
        Values::Float(f) => {
            let scale = f.scale(s.input_bits);
            let q = |x: f64| {
                (x.is_finite() && x.abs() <= f.max && (f.signed || x >= 0.0))
                    .then(|| scale.quantize(x))
            };
            match stats.header.dtype {
                Dtype::F32 => {
                    let f = floats.then_some(f64::from as fn(f32) -> f64);
                    stream_with(r, s, sink, |v: f32| q(v.into()), f, changed)
                }
                Dtype::F64 => {
                    let f = floats.then_some((|v| v) as fn(f64) -> f64);
                    stream_with(r, s, sink, q, f, changed)
                }
                _ => Err(changed()),
            }
        }
        Values::Int(range) => {
            let q = |x: i64| (range.min..=range.max).contains(&x).then_some(x as i32);
            match stats.header.dtype {
                Dtype::I8 => stream_with(r, s, sink, |v: i8| q(v.into()), None, changed),
                Dtype::I16 => stream_with(r, s, sink, |v: i16| q(v.into()), None, changed),
                Dtype::I32 => stream_with(r, s, sink, |v: i32| q(v.into()), None, changed),
                Dtype::I64 => stream_with(r, s, sink, q, None, changed),
                Dtype::U8 => stream_with(r, s, sink, |v: u8| q(v.into()), None, changed),
                Dtype::U16 => stream_with(r, s, sink, |v: u16| q(v.into()), None, changed),
                Dtype::U32 => stream_with(r, s, sink, |v: u32| q(v.into()), None, changed),
                Dtype::F32 | Dtype::F64 => Err(changed()),
            }
        }
    }
}

/// The chunking loop: reads at most what the current chunk still needs, quantizes it with
/// `q` (None: a value open never saw) and hands each full chunk (or the last one) on,
/// with the values as floats by `float` when given.
fn stream_with<T: Element, R: Read>(
    mut r: ElementReader<R>,
    s: &Stream<'_>,
    sink: &mut FloatSampleSink<'_>,
    q: impl Fn(T) -> Option<i32>,
    float: Option<fn(T) -> f64>,
    changed: impl Fn() -> anyhow::Error,
) -> anyhow::Result<()> {
    let total = s.samples * s.per_sample;
    let chunk = s.chunk.max(1).min(s.samples) * s.per_sample;
    let mut out: Vec<i32> = Vec::with_capacity(chunk);
    let mut fout: Vec<f64> = Vec::with_capacity(if float.is_some() { chunk } else { 0 });
    let mut block = Vec::<T>::new();
    let mut sent = 0;
    while sent < total {
        let this_chunk = chunk.min(total - sent);
        let n = r
            .next_block(this_chunk - out.len(), &mut block)
            .map_err(|e| anyhow::anyhow!("{}: {e}", s.label))?;
        if n == 0 {
            return Err(changed());
        }
        for &v in &block {
            out.push(q(v).ok_or_else(&changed)?);
        }
        if let Some(f) = float {
            fout.extend(block.iter().map(|&v| f(v)));
        }
        if out.len() == this_chunk {
            sink(&out, &fout)?;
            sent += out.len();
            out.clear();
            fout.clear();
        }
    }
    Ok(())
}

/// Whole samples `[n, tokens, d]` (token-major, as a sequence is stored) laid out
/// `[n, d, tokens]` in `out` (channel-major, the order the crossbar reads a layer's
/// input vectors in); an empty `x` gives an empty `out`.
pub fn tokens_to_channels<T: Copy>(x: &[T], tokens: usize, d: usize, out: &mut Vec<T>) {
    out.clear();
    let per = tokens * d;
    for sample in x.chunks(per.max(1)) {
        for c in 0..d {
            out.extend((0..tokens).map(|t| sample[t * d + c]));
        }
    }
}

#[cfg(test)]
mod token_tests {
    use super::tokens_to_channels;

    #[test]
    fn a_sequence_is_transposed_sample_by_sample() {
        // Two samples of 3 tokens x 2 features: token t, feature c = 100 s + 10 t + c.
        let x: Vec<i32> = (0..2)
            .flat_map(|s| (0..3).flat_map(move |t| (0..2).map(move |c| 100 * s + 10 * t + c)))
            .collect();
        let mut out = Vec::new();
        tokens_to_channels(&x, 3, 2, &mut out);
        assert_eq!(out, [0, 10, 20, 1, 11, 21, 100, 110, 120, 101, 111, 121]);
        tokens_to_channels::<f64>(&[], 3, 2, &mut Vec::new());
    }
}
