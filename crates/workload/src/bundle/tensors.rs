//! Arrays of tensors.npz in any supported dtype, and their quantization.
//!
//! Float arrays (float32, float64) are quantized per section 2; integer arrays (int8,
//! int16, int32, int64, uint8, uint16, uint32) are used as they are after a range check.
//! Neither is ever widened into a second full-size copy: elements are converted one by
//! one on the way to the i32 result.

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read, Seek, SeekFrom};

use ndarray::{ArrayD, IxDyn, OwnedRepr};
use ndarray_npy::{NpzReader, ReadNpyError, ReadNpzError, ReadableElement};

use crate::quant::{self, QuantError, QuantInputs};

/// A seekable reader over a bundle file or bytes embedded in the binary.
pub enum NpzSource<'a> {
    File(BufReader<File>),
    Bytes(Cursor<&'a [u8]>),
}

impl Read for NpzSource<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            NpzSource::File(f) => f.read(buf),
            NpzSource::Bytes(c) => c.read(buf),
        }
    }
}

impl Seek for NpzSource<'_> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self {
            NpzSource::File(f) => f.seek(pos),
            NpzSource::Bytes(c) => c.seek(pos),
        }
    }
}

/// One array, in the dtype it was stored with, in standard (row-major) layout.
#[derive(Debug, Clone, PartialEq)]
pub enum AnyArray {
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
    I8(ArrayD<i8>),
    I16(ArrayD<i16>),
    I32(ArrayD<i32>),
    I64(ArrayD<i64>),
    U8(ArrayD<u8>),
    U16(ArrayD<u16>),
    U32(ArrayD<u32>),
}

/// Evaluates `$float` for float arrays and `$int` for integer arrays, `$a` bound to the array.
macro_rules! dispatch {
    ($arr:expr, $a:ident => float $float:expr, int $int:expr) => {
        match $arr {
            AnyArray::F32($a) => $float,
            AnyArray::F64($a) => $float,
            AnyArray::I8($a) => $int,
            AnyArray::I16($a) => $int,
            AnyArray::I32($a) => $int,
            AnyArray::I64($a) => $int,
            AnyArray::U8($a) => $int,
            AnyArray::U16($a) => $int,
            AnyArray::U32($a) => $int,
        }
    };
}

fn data<T>(a: &ArrayD<T>) -> &[T] {
    a.as_slice().expect("arrays are kept in standard layout")
}

/// Outcome of trying one element type.
enum Try<T> {
    Found(T),
    WrongType(String),
}

fn try_read<R, T>(npz: &mut NpzReader<R>, name: &str) -> Result<Try<ArrayD<T>>, String>
where
    R: Read + Seek,
    T: ReadableElement + Clone,
{
    match npz.by_name::<OwnedRepr<T>, IxDyn>(name) {
        Ok(a) if a.is_standard_layout() => Ok(Try::Found(a)),
        Ok(a) => Ok(Try::Found(a.as_standard_layout().into_owned())),
        Err(ReadNpzError::Npy(ReadNpyError::WrongDescriptor(d))) => {
            Ok(Try::WrongType(d.to_string()))
        }
        Err(e) => Err(format!("cannot read: {e}")),
    }
}

impl AnyArray {
    /// Reads array `name`, whatever its supported dtype. The caller checks it exists.
    pub fn read<R: Read + Seek>(npz: &mut NpzReader<R>, name: &str) -> Result<AnyArray, String> {
        macro_rules! attempt {
            ($t:ty, $v:ident) => {
                match try_read::<R, $t>(npz, name)? {
                    Try::Found(a) => return Ok(AnyArray::$v(a)),
                    Try::WrongType(d) => d,
                }
            };
        }
        attempt!(f32, F32);
        attempt!(f64, F64);
        attempt!(i8, I8);
        attempt!(i16, I16);
        attempt!(i32, I32);
        attempt!(i64, I64);
        attempt!(u8, U8);
        attempt!(u16, U16);
        let dtype = attempt!(u32, U32);
        Err(format!(
            "dtype {dtype} is not supported (float32, float64, int8..int64, uint8..uint32)"
        ))
    }

    pub fn shape(&self) -> &[usize] {
        dispatch!(self, a => float a.shape(), int a.shape())
    }

    /// Weights per section 2 (float) or as is after the range check (integer).
    pub fn weights(&self, bits: u32) -> Result<Vec<i32>, QuantError> {
        dispatch!(self, a => float quant::quantize_weights_from(data(a), bits),
                  int quant::check_int_weights_from(data(a), bits))
    }

    /// Inputs per section 2 (float) or as is after the range check (integer).
    pub fn inputs(&self, bits: u32) -> Result<QuantInputs, QuantError> {
        dispatch!(self, a => float quant::quantize_inputs_from(data(a), bits),
                  int quant::check_int_inputs_from(data(a), bits))
    }
}

/// `[a,b,c]` as the error messages print shapes.
pub fn fmt_shape(s: &[usize]) -> String {
    let parts: Vec<String> = s.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(","))
}
