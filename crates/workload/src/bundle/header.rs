//! What an array's `.npy` header says ([`ArrayHeader`]): its dtype ([`Dtype`]), byte
//! order, layout and shape, and the sizes they imply. Below the readers of the archive
//! (tensors.rs, inputs.rs) and the memory budget of a layer (budget.rs), which read it.

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
    /// The numpy name: `float32`, `uint8`, ...
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "float32",
            Dtype::F64 => "float64",
            Dtype::I8 => "int8",
            Dtype::I16 => "int16",
            Dtype::I32 => "int32",
            Dtype::I64 => "int64",
            Dtype::U8 => "uint8",
            Dtype::U16 => "uint16",
            Dtype::U32 => "uint32",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            Dtype::I8 | Dtype::U8 => 1,
            Dtype::I16 | Dtype::U16 => 2,
            Dtype::F32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::F64 | Dtype::I64 => 8,
        }
    }

    /// From a numpy type descriptor such as `<f4`, `|u1` or `>i8`, with whether its
    /// elements are big-endian: `>` big, `<` little, `|` (not applicable) and `=` native.
    pub(super) fn from_descr(d: &str) -> Option<(Dtype, bool)> {
        let big_endian = match d.chars().next()? {
            '>' => true,
            '<' => false,
            '|' | '=' => cfg!(target_endian = "big"),
            _ => return None,
        };
        let dtype = match &d[1..] {
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
        };
        Some((dtype, big_endian))
    }
}

/// What an array's header says: its dtype, byte order, layout and shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayHeader {
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    /// Elements stored big-endian.
    pub big_endian: bool,
    /// Stored column-major (`fortran_order: True`): only readable whole.
    pub fortran_order: bool,
}

impl ArrayHeader {
    /// Elements of the array (saturating: a shape whose product overflows is huge anyway).
    pub fn elements(&self) -> u128 {
        self.shape
            .iter()
            .fold(1u128, |a, &d| a.saturating_mul(d as u128))
    }

    /// Bytes of the data section (saturating).
    pub fn data_bytes(&self) -> u128 {
        self.elements().saturating_mul(self.dtype.size() as u128)
    }
}
