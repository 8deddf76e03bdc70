//! Arrays of tensors.npz in any supported dtype, and their quantization.
//!
//! Float arrays (float32, float64) are quantized per section 2; integer arrays (int8,
//! int16, int32, int64, uint8, uint16, uint32) are used as they are after a range check.
//! Neither is ever widened into a second full-size copy: elements are converted one by
//! one on the way to the i32 result.
//!
//! An array's `.npy` header (dtype, byte order, layout and shape) is read on its own first
//! ([`Npz::header`]), so that the caller can check the shape against the manifest geometry
//! and the memory limit before a single data byte is allocated: a corrupt or hostile
//! header can never make the loader allocate more than the geometry allows. The data is
//! then either read whole ([`Npz::read`]: weights) or element by element in bounded blocks
//! ([`Npz::elements`]: inputs, see [`super::npy`]).

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufReader, Cursor, Read, Seek, SeekFrom};

use ndarray_npy::npy::header::Header;
use zip::read::ZipFile;
use zip::ZipArchive;

use super::header::{ArrayHeader, Dtype};
use super::npy::{Element, ElementReader, FortranBytes};
use crate::quant::{self, QuantError};

/// A seekable reader over a bundle file or bytes embedded in the binary.
pub enum NpzSource<'a> {
    File(BufReader<FileAt<'a>>),
    Bytes(Cursor<&'a [u8]>),
}

/// A reader of a file held open, at a position of its own: each read is positional
/// (`pread`), so readers of one handle never move each other, and every one reads the
/// file that was opened, whatever its path names since (a bundle replaced by a rename).
pub struct FileAt<'a> {
    file: &'a File,
    pos: u64,
}

impl<'a> FileAt<'a> {
    pub fn new(file: &'a File) -> Self {
        FileAt { file, pos: 0 }
    }
}

impl Read for FileAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(self.file, buf, self.pos)?;
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(self.file, buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for FileAt<'_> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let (base, delta) = match pos {
            SeekFrom::Start(n) => {
                self.pos = n;
                return Ok(n);
            }
            SeekFrom::Current(d) => (self.pos, d),
            SeekFrom::End(d) => (self.file.metadata()?.len(), d),
        };
        self.pos = base.checked_add_signed(delta).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the file",
            )
        })?;
        Ok(self.pos)
    }
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

/// Deepest nesting of brackets, braces and parentheses in an .npy header: a plain
/// header is a dict holding a shape tuple (2); structured dtypes, which are not
/// supported, nest a few levels more.
const MAX_HEADER_NESTING: usize = 8;

/// The deepest nesting of `(`, `[` and `{` in `text` (quoted strings included: a
/// bound, not a parse).
fn nesting_depth(text: &[u8]) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for &b in text {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The first key the header's dictionary names twice: the parser keeps the last
/// (`'shape': (1,), 'shape': (4, 2, 3, 3)` read as the second), so a header that says two
/// things is refused rather than read as one of them. The keys compared are the parsed
/// ones, by the parser the array is read with: `'d\x65scr'` is `descr` written another
/// way. A header that does not parse has no keys here (the parser then says why).
fn repeated_key(text: &[u8]) -> Option<String> {
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    let value: py_literal::Value = std::str::from_utf8(text).ok()?.parse().ok()?;
    let py_literal::Value::Dict(entries) = value else {
        return None;
    };
    let mut keys: Vec<String> = Vec::new();
    for (key, _) in entries {
        let name = match key {
            py_literal::Value::String(s) => s,
            other => other.to_string(),
        };
        if keys.contains(&name) {
            return Some(name);
        }
        keys.push(name);
    }
    None
}

/// npy headers longer than this are refused (numpy itself writes a few hundred bytes and
/// refuses to read more than 10 000 by default).
const MAX_HEADER_BYTES: usize = 65_536;
const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// The number of entries the archive's end-of-central-directory record declares (None
/// when it cannot be read or the archive is zip64, whose count the zip reader checks).
/// The reader is left at its start.
fn central_directory_entries<R: Read + Seek>(reader: &mut R) -> Option<usize> {
    const EOCD: [u8; 4] = [0x50, 0x4b, 0x05, 0x06];
    let len = reader.seek(SeekFrom::End(0)).ok()?;
    // The record is 22 bytes and a comment of at most 65535.
    let tail = len.min(22 + 65535);
    let found = (|| {
        reader.seek(SeekFrom::Start(len - tail)).ok()?;
        let mut buf = vec![0u8; usize::try_from(tail).ok()?];
        reader.read_exact(&mut buf).ok()?;
        let at = buf.windows(4).rposition(|w| w == EOCD)?;
        let rec = buf.get(at..at + 22)?;
        let total = u16::from_le_bytes([rec[10], rec[11]]);
        (total != u16::MAX).then_some(usize::from(total))
    })();
    reader.seek(SeekFrom::Start(0)).ok()?;
    found
}

/// An open npz archive (a zip of `.npy` files).
pub struct Npz<R: Read + Seek> {
    zip: ZipArchive<R>,
    /// Most bytes the data of one array read whole may take (`limits.max_layer_bytes`).
    max_bytes: u64,
}

impl<R: Read + Seek> Npz<R> {
    /// An archive whose arrays are read whole only within `limits.max_layer_bytes`'s
    /// default; see [`Npz::with_limit`].
    pub fn new(reader: R) -> Result<Self, String> {
        Self::with_limit(reader, super::budget::DEFAULT_MAX_LAYER_BYTES)
    }

    /// An archive whose arrays are read whole only when their data, as its header
    /// declares it, takes at most `max_bytes` (checked before anything is allocated).
    pub fn with_limit(mut reader: R, max_bytes: u64) -> Result<Self, String> {
        let declared = central_directory_entries(&mut reader);
        let zip =
            ZipArchive::new(reader).map_err(|e| format!("not a readable npz archive: {e}"))?;
        // One entry an array: `w` beside `w.npy` (or `w.npy` twice) names one array twice,
        // and which of them was read depended on the lookup order (a manifest key named
        // twice is refused for the same reason).
        let mut seen = HashSet::with_capacity(zip.len());
        for n in zip.file_names() {
            let array = n.strip_suffix(".npy").unwrap_or(n);
            if !seen.insert(array) {
                return Err(format!(
                    "array {array}: held by two entries of the archive (one entry an array)"
                ));
            }
        }
        // The zip reader keeps one entry of a name given twice (the last): the count the
        // archive's end record declares tells them apart.
        if zip.file_names().count() != zip.len() || declared.is_some_and(|n| n != zip.len()) {
            return Err("two entries of the archive have one name (one entry an array)".into());
        }
        Ok(Npz { zip, max_bytes })
    }

    /// Checks that the data `h` declares fits `max_bytes` before it is allocated.
    fn check_size(&self, h: &ArrayHeader) -> Result<usize, String> {
        let at = |e: String| {
            format!(
                "shape {}: {e} (limits.max_layer_bytes)",
                fmt_shape(&h.shape)
            )
        };
        let n = bounds::size::elements(&h.shape, u64::MAX).map_err(at)?;
        bounds::size::bytes(n, h.dtype.size() as usize, self.max_bytes).map_err(at)?;
        Ok(n)
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
        self.open_array(name).map(|(h, _, _)| h)
    }

    /// Reads and checks the header of array `name`, and that its entry holds exactly the
    /// data that header declares, by the entry's size in the archive, the data not read:
    /// a reader of headers alone (`sresim memory`) refuses what a full read would (the
    /// same messages as [`ElementReader`](super::npy::ElementReader)'s).
    pub fn header_and_length(&mut self, name: &str) -> Result<ArrayHeader, String> {
        let (h, f, header_bytes) = self.open_array(name)?;
        let stored = u128::from(f.size()).saturating_sub(header_bytes as u128);
        let declared = h.data_bytes();
        if stored < declared {
            return Err(super::npy::MISSING.to_string());
        }
        if stored > declared {
            return Err(super::npy::extra_bytes(stored - declared));
        }
        Ok(h)
    }

    /// The header of array `name` and its zip entry, positioned at the first data byte.
    /// Also the bytes of the entry before its data (preamble and header).
    fn open_array(&mut self, name: &str) -> Result<(ArrayHeader, ZipFile<'_, R>, usize), String> {
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
        // The header text is read first (at most MAX_HEADER_BYTES) and its nesting
        // checked: the literal parser takes time exponential in the depth of nested
        // brackets (20 levels: 20 s), and no supported header nests deeper than 2.
        let mut text = vec![0u8; len];
        f.read_exact(&mut text).map_err(short)?;
        let depth = nesting_depth(&text);
        if depth > MAX_HEADER_NESTING {
            return Err(format!(
                "not a valid .npy array: header nests brackets {depth} deep (at most {MAX_HEADER_NESTING})"
            ));
        }
        if let Some(k) = repeated_key(&text) {
            return Err(format!(
                "not a valid .npy array: header names '{}' twice (a header names each key once)",
                crate::text::clip(&k)
            ));
        }
        // The parser reads the preamble again, then the header text.
        let mut whole = Cursor::new(&pre[..pre_len]).chain(Cursor::new(&text[..]));
        let header = Header::from_reader(&mut whole).map_err(|e| {
            format!(
                "not a valid .npy array: {}",
                crate::text::clip(&e.to_string())
            )
        })?;
        // The descriptor prints as a Python literal: '<f4' for the plain dtypes.
        let descr = header.type_descriptor.to_string();
        let (dtype, big_endian) = descr
            .strip_prefix('\'')
            .and_then(|d| d.strip_suffix('\''))
            .and_then(Dtype::from_descr)
            .ok_or_else(|| {
                format!(
                    "dtype {} is not supported (float32, float64, int8..int64, uint8..uint32)",
                    crate::text::clip(&descr)
                )
            })?;
        let h = ArrayHeader {
            dtype,
            shape: header.shape,
            big_endian,
            fortran_order: header.layout.is_fortran(),
        };
        Ok((h, f, pre_len + len))
    }

    /// The elements of array `name` in logical (C) order, read a block at a time; the
    /// caller has read and checked `header`, which the entry must still carry. A
    /// Fortran-ordered array is read whole first (the caller's memory estimate counts it).
    pub fn elements(
        &mut self,
        name: &str,
        header: &ArrayHeader,
    ) -> Result<ElementReader<Box<dyn Read + '_>>, String> {
        if header.fortran_order {
            // Held whole to be read back in C order (the header is checked equal below).
            self.check_size(header)?;
        }
        let (h, f, _) = self.open_array(name)?;
        if h != *header {
            return Err(format!(
                "header changed since it was checked (now {} {})",
                h.dtype.name(),
                fmt_shape(&h.shape)
            ));
        }
        let size = h.dtype.size() as usize;
        let elements = u64::try_from(h.elements()).unwrap_or(u64::MAX);
        let r: Box<dyn Read + '_> = if h.fortran_order {
            Box::new(FortranBytes::read(f, size, &h.shape)?)
        } else {
            Box::new(f)
        };
        Ok(ElementReader::new(r, size, h.big_endian, elements))
    }

    /// Reads array `name` whole, whose header the caller has read and checked (its size
    /// is what the data allocation will be).
    pub fn read(&mut self, name: &str, header: &ArrayHeader) -> Result<AnyArray, String> {
        let n = self.check_size(header)?;
        let mut r = self.elements(name, header)?;
        let data = match header.dtype {
            Dtype::F32 => Data::F32(read_vec(&mut r, n)?),
            Dtype::F64 => Data::F64(read_vec(&mut r, n)?),
            Dtype::I8 => Data::I8(read_vec(&mut r, n)?),
            Dtype::I16 => Data::I16(read_vec(&mut r, n)?),
            Dtype::I32 => Data::I32(read_vec(&mut r, n)?),
            Dtype::I64 => Data::I64(read_vec(&mut r, n)?),
            Dtype::U8 => Data::U8(read_vec(&mut r, n)?),
            Dtype::U16 => Data::U16(read_vec(&mut r, n)?),
            Dtype::U32 => Data::U32(read_vec(&mut r, n)?),
        };
        r.finish()?;
        Ok(AnyArray {
            shape: header.shape.clone(),
            data,
        })
    }
}

/// The remaining `n` elements of `r`.
fn read_vec<T: Element, R: Read>(r: &mut ElementReader<R>, n: usize) -> Result<Vec<T>, String> {
    let mut v = Vec::with_capacity(n);
    r.read_all(&mut v)?;
    Ok(v)
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

/// Values read as f64 a range at a time, held in the dtype they were stored with, so
/// that a large float32 or uint8 array (a network's graph input) takes its own size in
/// memory, not eight bytes a value. Widening to f64 is exact.
#[derive(Debug, Clone, PartialEq)]
pub enum StoredValues {
    F32(Vec<f32>),
    F64(Vec<f64>),
    U8(Vec<u8>),
}

impl StoredValues {
    pub fn len(&self) -> usize {
        match self {
            StoredValues::F32(a) => a.len(),
            StoredValues::F64(a) => a.len(),
            StoredValues::U8(a) => a.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements `range` widened to f64.
    pub fn to_f64(&self, range: std::ops::Range<usize>) -> Vec<f64> {
        match self {
            StoredValues::F32(a) => a[range].iter().map(|&v| v as f64).collect(),
            StoredValues::F64(a) => a[range].to_vec(),
            StoredValues::U8(a) => a[range].iter().map(|&v| v as f64).collect(),
        }
    }

    /// [`crate::quant::check_values`] of a float array (a uint8 array has nothing to check).
    pub fn check(&self) -> Result<(), crate::quant::QuantError> {
        match self {
            StoredValues::F32(a) => crate::quant::check_values(a),
            StoredValues::F64(a) => crate::quant::check_values(a),
            StoredValues::U8(_) => Ok(()),
        }
    }
}

impl From<Vec<f64>> for StoredValues {
    fn from(v: Vec<f64>) -> StoredValues {
        StoredValues::F64(v)
    }
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
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The values of a float array as f32 (what the bundled float layers are stored
    /// as; an f64 array is rounded), None for an integer array.
    pub fn floats(&self) -> Option<Vec<f32>> {
        match &self.data {
            Data::F32(a) => Some(a.clone()),
            Data::F64(a) => Some(a.iter().map(|&v| v as f32).collect()),
            _ => None,
        }
    }

    /// max|x| of a float array (0 for an integer array).
    pub fn float_max(&self) -> f64 {
        match &self.data {
            Data::F32(a) => a.iter().fold(0.0f64, |m, &v| m.max((v as f64).abs())),
            Data::F64(a) => a.iter().fold(0.0f64, |m, &v| m.max(v.abs())),
            _ => 0.0,
        }
    }

    /// Every element widened to f64 (u32 and i64 exactly up to 2^53).
    // One macro arm serves every element type, f64 and i64 included.
    #[allow(clippy::unnecessary_cast)]
    pub fn to_f64(&self) -> Vec<f64> {
        dispatch!(&self.data, a => float a.iter().map(|&v| v as f64).collect(),
                  int a.iter().map(|&v| v as f64).collect())
    }

    /// The values as [`StoredValues`]: float32, float64 and uint8 arrays as stored (no copy),
    /// the other integer arrays widened to f64.
    pub fn into_values(self) -> StoredValues {
        match self.data {
            Data::F32(a) => StoredValues::F32(a),
            Data::F64(a) => StoredValues::F64(a),
            Data::U8(a) => StoredValues::U8(a),
            _ => StoredValues::F64(self.to_f64()),
        }
    }

    /// Every element as i64, or None for a float array.
    #[allow(clippy::unnecessary_cast)]
    pub fn to_i64(&self) -> Option<Vec<i64>> {
        dispatch!(&self.data, a => float { let _ = a; None },
                  int Some(a.iter().map(|&v| v as i64).collect()))
    }

    /// Whether the array holds floats.
    pub fn is_float(&self) -> bool {
        matches!(self.data, Data::F32(_) | Data::F64(_))
    }

    /// Weights per section 2 (float) or as is after the range check (integer).
    pub fn weights(&self, bits: u32) -> Result<Vec<i32>, QuantError> {
        dispatch!(&self.data, a => float quant::quantize_weights_from(a, bits),
                  int quant::check_int_weights_from(a, bits))
    }
}

/// `[a,b,c]` as the error messages print shapes.
pub fn fmt_shape(s: &[usize]) -> String {
    let parts: Vec<String> = s.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(","))
}

#[cfg(test)]
mod header_tests {
    use super::repeated_key;

    #[test]
    fn a_header_key_named_twice_is_found() {
        let k = |t: &str| repeated_key(t.as_bytes());
        assert_eq!(
            k("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'shape': (4, 2), }"),
            Some("shape".into())
        );
        assert_eq!(
            k("{\"descr\": '<f4', 'descr' : '<f8', 'shape': (3,)}"),
            Some("descr".into())
        );
        // Values that look like keys (a string value, a nested dict) are not keys.
        assert_eq!(
            k("{'descr': 'shape', 'fortran_order': False, 'shape': (4,), }"),
            None
        );
        assert_eq!(k("{'descr': [('shape', '<f4')], 'shape': (2,)}"), None);
        assert_eq!(k("{'a\\'b': 1, 'shape': ()}"), None);
        assert_eq!(k("{'shape"), None);
    }

    #[test]
    fn a_key_written_with_an_escape_is_the_key_it_decodes_to() {
        let k = |t: &str| repeated_key(t.as_bytes());
        let tail = "'fortran_order': False, 'shape': (20, 1, 5, 5)";
        for (twin, key) in [
            ("'d\\x65scr'", "descr"),
            ("'d\\u0065scr'", "descr"),
            ("'d\\U00000065scr'", "descr"),
            ("'d\\145scr'", "descr"),
            ("'fortran\\x5forder'", "fortran_order"),
            ("'sh\\x61pe'", "shape"),
        ] {
            let h = format!("{{'descr': '>f4', {tail}, {twin}: '<f4'}}         \n");
            assert_eq!(k(&h), Some(key.to_string()), "{h}");
        }
        // An escape that decodes to another name is another key.
        assert_eq!(
            k(&format!("{{'descr': '<f4', {tail}, 'd\\x66scr': 1}}")),
            None
        );
    }
}
