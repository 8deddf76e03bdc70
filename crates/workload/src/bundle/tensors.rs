//! Arrays of tensors.npz in any supported dtype, and their quantization.
//!
//! Float arrays (float32, float64) are quantized per section 2; integer arrays (int8,
//! int16, int32, int64, uint8, uint16, uint32) are used as they are after a range check.
//! Neither is ever widened into a second full-size copy: elements are converted one by
//! one on the way to the i32 result.
//!
//! An array's `.npy` header (dtype and shape) is read on its own first ([`Npz::header`]),
//! so that the caller can check the shape against the manifest geometry and the memory
//! limit before a single data byte is allocated: a corrupt or hostile header can never
//! make the loader allocate more than the geometry allows.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufReader, Cursor, Read, Seek, SeekFrom};

use ndarray::ArrayD;
use ndarray_npy::npy::header::Header;
use ndarray_npy::{ReadNpyError, ReadNpyExt, ReadableElement};
use zip::ZipArchive;

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

/// Element types a bundle array may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
}

impl Dtype {
    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            Dtype::I8 | Dtype::U8 => 1,
            Dtype::I16 | Dtype::U16 => 2,
            Dtype::F32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::F64 | Dtype::I64 => 8,
        }
    }

    /// From a numpy type descriptor such as `<f4`, `|u1` or `>i8`.
    fn from_descr(d: &str) -> Option<Dtype> {
        let rest = d.strip_prefix(['<', '>', '|', '='])?;
        Some(match rest {
            "f4" => Dtype::F32,
            "f8" => Dtype::F64,
            "i1" => Dtype::I8,
            "i2" => Dtype::I16,
            "i4" => Dtype::I32,
            "i8" => Dtype::I64,
            "u1" => Dtype::U8,
            "u2" => Dtype::U16,
            "u4" => Dtype::U32,
            _ => return None,
        })
    }
}

/// What an array's header says: its dtype and shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayHeader {
    pub dtype: Dtype,
    pub shape: Vec<usize>,
}

impl ArrayHeader {
    /// Elements of the array (saturating: a shape whose product overflows is huge anyway).
    pub fn elements(&self) -> u128 {
        self.shape
            .iter()
            .fold(1u128, |a, &d| a.saturating_mul(d as u128))
    }
}

/// npy headers longer than this are refused (numpy itself writes a few hundred bytes and
/// refuses to read more than 10 000 by default).
const MAX_HEADER_BYTES: usize = 65_536;
const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// An open npz archive (a zip of `.npy` files).
pub struct Npz<R: Read + Seek> {
    zip: ZipArchive<R>,
}

impl<R: Read + Seek> Npz<R> {
    pub fn new(reader: R) -> Result<Self, String> {
        ZipArchive::new(reader)
            .map(|zip| Npz { zip })
            .map_err(|e| format!("not a readable npz archive: {e}"))
    }

    /// Array names, with a single `.npy` suffix stripped (as numpy does).
    pub fn names(&self) -> HashSet<String> {
        self.zip
            .file_names()
            .map(|n| n.strip_suffix(".npy").unwrap_or(n).to_string())
            .collect()
    }

    /// The zip entry holding array `name`: `name`, else `name.npy`.
    fn entry(&self, name: &str) -> Result<String, String> {
        let npy = format!("{name}.npy");
        let found = [name, npy.as_str()]
            .into_iter()
            .find(|n| self.zip.index_for_name(n).is_some())
            .map(str::to_string);
        found.ok_or_else(|| "no such array".to_string())
    }

    /// Reads and checks only the header of array `name`.
    pub fn header(&mut self, name: &str) -> Result<ArrayHeader, String> {
        let entry = self.entry(name)?;
        let mut f = self
            .zip
            .by_name(&entry)
            .map_err(|e| format!("cannot read: {e}"))?;
        // magic (6), version (2), header length (2 bytes in v1, 4 in v2 and v3)
        let mut pre = [0u8; 12];
        let short = |e: io::Error| format!("not a valid .npy array: header cut short ({e})");
        f.read_exact(&mut pre[..6]).map_err(short)?;
        if &pre[..6] != MAGIC {
            return Err("not a valid .npy array: bad magic string".into());
        }
        f.read_exact(&mut pre[6..10]).map_err(short)?;
        let (len, pre_len) = match pre[6] {
            1 => (u16::from_le_bytes([pre[8], pre[9]]) as usize, 10),
            2 | 3 => {
                f.read_exact(&mut pre[10..12]).map_err(short)?;
                let l = u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]]);
                (usize::try_from(l).unwrap_or(usize::MAX), 12)
            }
            v => return Err(format!("not a valid .npy array: format version {v}")),
        };
        if len > MAX_HEADER_BYTES {
            return Err(format!(
                "not a valid .npy array: header of {len} bytes (at most {MAX_HEADER_BYTES})"
            ));
        }
        let header = Header::from_reader(&mut Cursor::new(&pre[..pre_len]).chain(f))
            .map_err(|e| format!("not a valid .npy array: {e}"))?;
        // The descriptor prints as a Python literal: '<f4' for the plain dtypes.
        let descr = header.type_descriptor.to_string();
        let dtype = descr
            .strip_prefix('\'')
            .and_then(|d| d.strip_suffix('\''))
            .and_then(Dtype::from_descr)
            .ok_or_else(|| {
                format!(
                    "dtype {descr} is not supported (float32, float64, int8..int64, uint8..uint32)"
                )
            })?;
        Ok(ArrayHeader {
            dtype,
            shape: header.shape,
        })
    }

    /// Reads array `name`, whose header the caller has read and checked (its size is what
    /// the data allocation will be).
    pub fn read(&mut self, name: &str, header: &ArrayHeader) -> Result<AnyArray, String> {
        let entry = self.entry(name)?;
        let f = self
            .zip
            .by_name(&entry)
            .map_err(|e| format!("cannot read: {e}"))?;
        let data = match header.dtype {
            Dtype::F32 => Data::F32(read_vec(f)?),
            Dtype::F64 => Data::F64(read_vec(f)?),
            Dtype::I8 => Data::I8(read_vec(f)?),
            Dtype::I16 => Data::I16(read_vec(f)?),
            Dtype::I32 => Data::I32(read_vec(f)?),
            Dtype::I64 => Data::I64(read_vec(f)?),
            Dtype::U8 => Data::U8(read_vec(f)?),
            Dtype::U16 => Data::U16(read_vec(f)?),
            Dtype::U32 => Data::U32(read_vec(f)?),
        };
        Ok(AnyArray {
            shape: header.shape.clone(),
            data,
        })
    }
}

/// The elements of an npy stream in logical (row-major) order, whatever its layout.
fn read_vec<T: ReadableElement + Clone, R: Read>(r: R) -> Result<Vec<T>, String> {
    let a = ArrayD::<T>::read_npy(r).map_err(|e| match e {
        ReadNpyError::Io(e) => format!("cannot read: {e}"),
        e => format!("not a valid .npy array: {e}"),
    })?;
    Ok(if a.is_standard_layout() {
        let (v, offset) = a.into_raw_vec_and_offset();
        match offset {
            Some(0) | None => v,
            Some(o) => v.get(o..).map(<[T]>::to_vec).unwrap_or_default(),
        }
    } else {
        a.iter().cloned().collect()
    })
}

#[derive(Debug, Clone, PartialEq)]
enum Data {
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

/// One array, in the dtype it was stored with, elements in row-major order.
#[derive(Debug, Clone, PartialEq)]
pub struct AnyArray {
    shape: Vec<usize>,
    data: Data,
}

/// Evaluates `$float` for float arrays and `$int` for integer arrays, `$a` bound to the data.
macro_rules! dispatch {
    ($arr:expr, $a:ident => float $float:expr, int $int:expr) => {
        match $arr {
            Data::F32($a) => $float,
            Data::F64($a) => $float,
            Data::I8($a) => $int,
            Data::I16($a) => $int,
            Data::I32($a) => $int,
            Data::I64($a) => $int,
            Data::U8($a) => $int,
            Data::U16($a) => $int,
            Data::U32($a) => $int,
        }
    };
}

impl AnyArray {
    /// An array from an ndarray (tests and callers holding data in memory).
    pub fn from_f32(a: &ArrayD<f32>) -> AnyArray {
        AnyArray {
            shape: a.shape().to_vec(),
            data: Data::F32(a.iter().copied().collect()),
        }
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Weights per section 2 (float) or as is after the range check (integer).
    pub fn weights(&self, bits: u32) -> Result<Vec<i32>, QuantError> {
        dispatch!(&self.data, a => float quant::quantize_weights_from(a, bits),
                  int quant::check_int_weights_from(a, bits))
    }

    /// Inputs per section 2 (float) or as is after the range check (integer).
    pub fn inputs(&self, bits: u32) -> Result<QuantInputs, QuantError> {
        dispatch!(&self.data, a => float quant::quantize_inputs_from(a, bits),
                  int quant::check_int_inputs_from(a, bits))
    }
}

/// `[a,b,c]` as the error messages print shapes.
pub fn fmt_shape(s: &[usize]) -> String {
    let parts: Vec<String> = s.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(","))
}
