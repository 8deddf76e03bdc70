//! Streamed inputs of bundles against the whole-tensor path: every dtype, both byte
//! orders, both layouts, stored and deflated entries, any chunking.

use std::io::Write;

use ndarray::ArrayD;
use ndarray_npy::{ReadNpyExt, ReadableElement};
use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::quant::{self, QuantError};
use crate::synth::tests::streamed;

/// An element written in either byte order.
trait Raw: Copy {
    fn raw(self, big_endian: bool) -> Vec<u8>;
}

macro_rules! raw {
    ($($t:ty),*) => {$(
        impl Raw for $t {
            fn raw(self, big_endian: bool) -> Vec<u8> {
                if big_endian { self.to_be_bytes().to_vec() } else { self.to_le_bytes().to_vec() }
            }
        }
    )*};
}
raw!(f32, f64, i8, i16, i32, i64, u8, u16, u32);

/// `.npy` bytes of `values` (logical C order) under descriptor `descr`, stored
/// column-major when `fortran`.
fn npy<T: Raw>(descr: &str, shape: &[usize], values: &[T], big: bool, fortran: bool) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| format!("{d},")).collect();
    let dict = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': ({}), }}",
        if fortran { "True" } else { "False" },
        dims.join(" ")
    );
    let mut h = format!("{dict}\n").into_bytes();
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.append(&mut h);
    let n = values.len();
    for f in 0..n {
        // Fortran: the f-th stored element is the one whose reversed index is f.
        let c = if fortran {
            let (mut rest, mut c, mut stride) = (f, 0, 1);
            let mut strides = vec![0; shape.len()];
            for k in (0..shape.len()).rev() {
                strides[k] = stride;
                stride *= shape[k];
            }
            for (k, &d) in shape.iter().enumerate() {
                c += (rest % d) * strides[k];
                rest /= d;
            }
            c
        } else {
            f
        };
        out.extend(values[c].raw(big));
    }
    out
}

fn npz(entries: &[(&str, Vec<u8>)], deflate: bool) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let method = if deflate {
        zip::CompressionMethod::Deflated
    } else {
        zip::CompressionMethod::Stored
    };
    for (name, bytes) in entries {
        let opts = zip::write::SimpleFileOptions::default().compression_method(method);
        z.start_file(format!("{name}.npy"), opts).unwrap();
        z.write_all(bytes).unwrap();
    }
    z.finish().unwrap().into_inner()
}

/// One conv layer c -> 2, 1x1, on [c, h, w], weight `w`, input `x`.
fn one_conv(c: usize, h: usize, w: usize) -> String {
    json!({"name": "t", "layers": [{"name": "conv", "kind": "conv", "in_channels": c,
        "out_channels": 2, "kernel": [1, 1], "input_shape": [c, h, w],
        "weight": "w", "input": "x"}]})
    .to_string()
}

fn opts(bits: u32) -> OpenOptions {
    OpenOptions {
        precision: Precision {
            weight_bits: 8,
            input_bits: bits,
        },
        ..Default::default()
    }
}

/// The whole-tensor path: the array read whole by ndarray-npy, quantized at once.
fn reference<T: ReadableElement + Clone>(
    bytes: &[u8],
    q: impl Fn(&[T]) -> Result<quant::QuantInputs, QuantError>,
) -> Result<quant::QuantInputs, QuantError> {
    let a = ArrayD::<T>::read_npy(bytes).unwrap();
    let v: Vec<T> = a.iter().cloned().collect();
    q(&v)
}

/// A bundle of one conv layer whose input is `x` ([n, c, h, w]).
fn bundle(c: usize, x: Vec<u8>, deflate: bool, bits: u32) -> anyhow::Result<BundleWorkload> {
    let w = npy("<f4", &[2, c, 1, 1], &vec![1.0f32; 2 * c], false, false);
    let bytes = npz(&[("w", w), ("x", x)], deflate);
    BundleWorkload::from_bytes("b", &one_conv(c, 2, 3), bytes, &opts(bits))
}

/// Streams with chunks of 1, 2, 3, `take`, n and more; each equals `want` (and so does
/// load_layer), and load_weights knows the whole tensor's sign.
fn check_all_chunkings(
    w: &BundleWorkload,
    bits: u32,
    n: usize,
    take: usize,
    want: &quant::QuantInputs,
) {
    let p = opts(bits).precision;
    let per = w.layers()[0].geom.input_elements();
    for chunk in [1, 2, 3, take, n, n + 3] {
        assert_eq!(
            streamed(w, 0, p, take, chunk),
            want.values[..take * per],
            "chunk {chunk}"
        );
    }
    assert_eq!(
        w.load_layer(0, p, take).unwrap().input,
        want.values[..take * per]
    );
    assert_eq!(w.load_weights(0, p).unwrap().signed, want.signed);
}

#[derive(Debug, Clone)]
enum Case {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

/// `len` values of a random dtype that fit 8-bit inputs (ints) or any values (floats).
fn case(len: usize) -> impl Strategy<Value = Case> {
    use proptest::collection::vec;
    let signed_f = prop_oneof![Just(-3.0), Just(0.0)];
    prop_oneof![
        (vec(0.0f32..4.0, len), signed_f.clone())
            .prop_map(|(v, o)| Case::F32(v.iter().map(|x| x + o as f32).collect())),
        (vec(0.0f64..4.0, len), signed_f)
            .prop_map(|(v, o)| Case::F64(v.iter().map(|x| x + o).collect())),
        vec(-127i8..=127, len).prop_map(Case::I8),
        vec(0i16..=255, len).prop_map(Case::I16),
        vec(-127i32..=127, len).prop_map(Case::I32),
        vec(0i64..=255, len).prop_map(Case::I64),
        vec(0u8..=255, len).prop_map(Case::U8),
        vec(0u16..=255, len).prop_map(Case::U16),
        vec(0u32..=255, len).prop_map(Case::U32),
        Just(Case::F32(vec![0.0; len])),
    ]
}

/// The npy bytes of a case and its whole-tensor quantization.
fn encode(
    case: &Case,
    shape: &[usize],
    big: bool,
    fortran: bool,
    bits: u32,
) -> (Vec<u8>, quant::QuantInputs) {
    let e = if big { '>' } else { '<' };
    macro_rules! go {
        ($v:expr, $d:expr, $t:ty, $q:path) => {{
            let descr = if $d.ends_with('1') {
                format!("|{}", $d)
            } else {
                format!("{e}{}", $d)
            };
            let b = npy(&descr, shape, $v, big, fortran);
            let r = reference::<$t>(&b, |x| $q(x, bits)).unwrap();
            (b, r)
        }};
    }
    match case {
        Case::F32(v) => go!(v, "f4", f32, quant::quantize_inputs_from),
        Case::F64(v) => go!(v, "f8", f64, quant::quantize_inputs_from),
        Case::I8(v) => go!(v, "i1", i8, quant::check_int_inputs_from),
        Case::I16(v) => go!(v, "i2", i16, quant::check_int_inputs_from),
        Case::I32(v) => go!(v, "i4", i32, quant::check_int_inputs_from),
        Case::I64(v) => go!(v, "i8", i64, quant::check_int_inputs_from),
        Case::U8(v) => go!(v, "u1", u8, quant::check_int_inputs_from),
        Case::U16(v) => go!(v, "u2", u16, quant::check_int_inputs_from),
        Case::U32(v) => go!(v, "u4", u32, quant::check_int_inputs_from),
    }
}

fn geometry_and_case() -> impl Strategy<Value = (usize, usize, usize, Case)> {
    (1usize..4, 1usize..6).prop_flat_map(|(c, n)| {
        (1..=n).prop_flat_map(move |take| case(n * c * 6).prop_map(move |v| (c, n, take, v)))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Streamed inputs equal the whole-tensor quantization of the array ndarray-npy reads,
    /// for every dtype, byte order, layout and entry compression, under any chunking.
    #[test]
    fn streamed_bundle_inputs_equal_the_whole_tensor(
        (c, n, take, values) in geometry_and_case(),
        big in any::<bool>(), fortran in any::<bool>(), deflate in any::<bool>(),
        bits in 8u32..17,
    ) {
        let shape = [n, c, 2, 3];
        let (bytes, want) = encode(&values, &shape, big, fortran, bits);
        let w = bundle(c, bytes, deflate, bits).unwrap();
        check_all_chunkings(&w, bits, n, take, &want);
    }
}

#[test]
fn native_and_not_applicable_byte_orders_read_as_little_endian_here() {
    // '=' (native) and '|' (not applicable) on a little-endian machine: as '<'.
    let v: Vec<f32> = (0..12).map(|i| i as f32 - 5.0).collect();
    let want = quant::quantize_inputs_from(&v, 8).unwrap();
    for d in ["<f4", "=f4", "|f4"] {
        if cfg!(target_endian = "big") && d != "<f4" {
            continue;
        }
        let w = bundle(2, npy(d, &[1, 2, 2, 3], &v, false, false), false, 8).unwrap();
        check_all_chunkings(&w, 8, 1, 1, &want);
    }
}

/// Arrays larger than one read block: chunks end in the middle of blocks and blocks in
/// the middle of samples; errors name the flat index in the whole array.
#[test]
fn arrays_across_read_blocks() {
    // 3 samples of 3 x 80 x 70 = 16,800 f64 (134,400 bytes each, two blocks and more).
    let (c, h, w) = (3, 80, 70);
    let per = c * h * w;
    let v: Vec<f64> = (0..3 * per)
        .map(|i| ((i * 37) % 1001) as f64 / 100.0 - 2.0)
        .collect();
    let m = json!({"name": "t", "layers": [{"name": "conv", "kind": "conv", "in_channels": c,
        "out_channels": 1, "kernel": [1, 1], "input_shape": [c, h, w],
        "weight": "w", "input": "x"}]})
    .to_string();
    let wt = npy("<f4", &[1, c, 1, 1], &[1.0f32, 2.0, 3.0], false, false);
    let open = |x: Vec<u8>, deflate: bool, bits: u32| {
        let bytes = npz(&[("w", wt.clone()), ("x", x)], deflate);
        BundleWorkload::from_bytes("b", &m, bytes, &opts(bits))
    };
    let want = quant::quantize_inputs_from(&v, 12).unwrap();
    for deflate in [false, true] {
        let b = open(npy(">f8", &[3, c, h, w], &v, true, false), deflate, 12).unwrap();
        check_all_chunkings(&b, 12, 3, 3, &want);
        check_all_chunkings(&b, 12, 3, 2, &want);
    }
    // A NaN at flat index 40,000 (the third block of f64, sample 2).
    let mut bad = v.clone();
    bad[40_000] = f64::NAN;
    let e = open(npy("<f8", &[3, c, h, w], &bad, false, false), true, 12).unwrap_err();
    assert_eq!(
        e.to_string(),
        "b/tensors.npz: x: value at flat index 40000 is not finite (NaN)"
    );
    // u16 inputs, one out of 8-bit range at flat index 45,123: the error names it; a
    // later, larger value does not hide it.
    let mut u: Vec<u16> = (0..3 * per).map(|i| (i % 200) as u16).collect();
    u[45_123] = 300;
    u[50_000] = 4000;
    let x = npy("<u2", &[3, c, h, w], &u, false, false);
    let e = open(x.clone(), false, 8).unwrap_err();
    assert_eq!(
        e.to_string(),
        "b/tensors.npz: x: integer 300 at flat index 45123 is out of range 0..=255 for 8-bit input"
    );
    // Opened at 12 bits it fits; streamed at 8 bits the same error comes before any sample.
    let b = open(x, false, 12).unwrap();
    let p8 = opts(8).precision;
    let mut calls = 0;
    let e = b
        .stream_inputs(0, p8, 1, 1, &mut |_| {
            calls += 1;
            Ok(())
        })
        .unwrap_err();
    assert_eq!(calls, 0);
    assert!(
        e.to_string()
            .ends_with("integer 300 at flat index 45123 is out of range 0..=255 for 8-bit input"),
        "{e}"
    );
    let want = quant::check_int_inputs_from(&u, 12).unwrap();
    check_all_chunkings(&b, 12, 3, 3, &want);
}

#[test]
fn a_bundle_changed_after_open_is_an_error_not_other_values() {
    let dir = tempfile::tempdir().unwrap();
    let write = |x: Vec<u8>| {
        std::fs::write(dir.path().join("manifest.json"), one_conv(1, 2, 3)).unwrap();
        let w = npy("<f4", &[2, 1, 1, 1], &[1.0f32, -1.0], false, false);
        std::fs::write(
            dir.path().join("tensors.npz"),
            npz(&[("w", w), ("x", x)], true),
        )
        .unwrap();
    };
    let v: Vec<f32> = (0..12).map(|i| i as f32).collect();
    write(npy("<f4", &[2, 1, 2, 3], &v, false, false));
    let b = BundleWorkload::open(dir.path(), &opts(8)).unwrap();
    let p = opts(8).precision;
    // Twice the values: above the max open recorded.
    let doubled: Vec<f32> = v.iter().map(|x| 2.0 * x).collect();
    write(npy("<f4", &[2, 1, 2, 3], &doubled, false, false));
    let e = b.load_layer(0, p, 2).unwrap_err().to_string();
    assert!(
        e.ends_with("tensors.npz: x: changed since the bundle was opened"),
        "{e}"
    );
    // Another dtype: the header differs.
    write(npy(
        "<f8",
        &[2, 1, 2, 3],
        &v.iter().map(|&x| x as f64).collect::<Vec<_>>(),
        false,
        false,
    ));
    let e = b.load_layer(0, p, 2).unwrap_err().to_string();
    assert!(
        e.ends_with("tensors.npz: x: header changed since it was checked (now float64 [2,1,2,3])"),
        "{e}"
    );
}

/// An array held by two entries (`w` beside `w.npy`) was read from whichever the lookup
/// found first; the archive is now refused, naming the array.
#[test]
fn an_array_held_by_two_entries_is_refused() {
    let a = npy("<f4", &[2], &[1.0f32, 2.0], false, false);
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for name in ["w.npy", "w"] {
        z.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        z.write_all(&a).unwrap();
    }
    let bytes = z.finish().unwrap().into_inner();
    let e = tensors::Npz::new(std::io::Cursor::new(bytes))
        .err()
        .unwrap();
    assert_eq!(
        e,
        "array w: held by two entries of the archive (one entry an array)"
    );
    let one = npz(&[("w", a)], false);
    assert!(tensors::Npz::new(std::io::Cursor::new(one)).is_ok());
}
