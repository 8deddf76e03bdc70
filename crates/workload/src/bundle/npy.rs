//! The data section of an `.npy` array, read element by element in bounded blocks.
//!
//! [`ElementReader`] reads a given number of elements of one dtype and byte order from any
//! [`Read`] (a zip entry, stored or deflated, read once front to back), [`BLOCK_BYTES`] at
//! a time, so that reading costs the same small buffers whatever the array's size.
//! [`FortranBytes`] presents a Fortran-ordered array, held whole, in C order.

use std::io::{self, Read};

/// Bytes read from the entry at a time.
pub const BLOCK_BYTES: usize = 64 << 10;

/// An element type of a bundle array, decoded from its bytes in either byte order.
pub trait Element: Copy {
    const SIZE: usize;
    /// `b` holds exactly `SIZE` bytes.
    fn decode(b: &[u8], big_endian: bool) -> Self;
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn decode(b: &[u8], big_endian: bool) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                if big_endian {
                    <$t>::from_be_bytes(a)
                } else {
                    <$t>::from_le_bytes(a)
                }
            }
        }
    )*};
}

element!(f32, f64, i8, i16, i32, i64, u8, u16, u32);

/// The error messages of a data section that is too short or too long (the texts
/// ndarray-npy uses, so that every array reports them alike).
pub(crate) const MISSING: &str = "not a valid .npy array: reached EOF before reading all data";

/// An array whose data runs on past the elements its header declares.
pub(crate) fn extra_bytes(extra: u128) -> String {
    format!("not a valid .npy array: file had {extra} extra bytes before EOF")
}

fn io_error(e: io::Error) -> String {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        MISSING.to_string()
    } else {
        format!("cannot read: {e}")
    }
}

/// Reads `elements` elements of `size` bytes from `r`, in order, a block at a time.
pub struct ElementReader<R: Read> {
    r: R,
    size: usize,
    big_endian: bool,
    /// Elements not read yet.
    left: u64,
    raw: Vec<u8>,
}

impl<R: Read> ElementReader<R> {
    /// `r` is positioned at the first data byte; elements are `size` bytes wide.
    pub fn new(r: R, size: usize, big_endian: bool, elements: u64) -> Self {
        ElementReader {
            r,
            size,
            big_endian,
            left: elements,
            raw: Vec::new(),
        }
    }

    /// Elements not read yet.
    pub fn remaining(&self) -> u64 {
        self.left
    }

    /// Replaces `out` with the next min(`max`, remaining, one block) elements; returns
    /// how many (0 only when `max` is 0 or nothing remains). `T::SIZE` must be the
    /// element size given to [`ElementReader::new`].
    pub fn next_block<T: Element>(
        &mut self,
        max: usize,
        out: &mut Vec<T>,
    ) -> Result<usize, String> {
        debug_assert_eq!(T::SIZE, self.size);
        out.clear();
        let n = (max as u64)
            .min(self.left)
            .min((BLOCK_BYTES / T::SIZE) as u64) as usize;
        if n == 0 {
            return Ok(0);
        }
        let bytes = n * T::SIZE;
        if self.raw.len() < bytes {
            self.raw.resize(bytes, 0);
        }
        self.r
            .read_exact(&mut self.raw[..bytes])
            .map_err(io_error)?;
        out.extend(
            self.raw[..bytes]
                .chunks_exact(T::SIZE)
                .map(|b| T::decode(b, self.big_endian)),
        );
        self.left -= n as u64;
        Ok(n)
    }

    /// Appends all remaining elements to `out`, which the caller has sized (the array
    /// read whole: weights, Fortran-ordered inputs).
    pub fn read_all<T: Element>(&mut self, out: &mut Vec<T>) -> Result<(), String> {
        let mut block = Vec::new();
        while self.next_block::<T>(usize::MAX, &mut block)? > 0 {
            out.extend_from_slice(&block);
        }
        Ok(())
    }

    /// After the last element: the data must end there. Reads to the end of the entry,
    /// which also makes a zip entry verify its checksum.
    pub fn finish(mut self) -> Result<(), String> {
        debug_assert_eq!(self.left, 0);
        let extra = io::copy(&mut self.r, &mut io::sink()).map_err(io_error)?;
        if extra > 0 {
            return Err(extra_bytes(extra as u128));
        }
        Ok(())
    }
}

/// The bytes of a Fortran-ordered (column-major) array, held whole, read back in C
/// (row-major) order element by element.
pub struct FortranBytes {
    data: Vec<u8>,
    size: usize,
    shape: Vec<usize>,
    /// Column-major stride (in elements) of each axis.
    strides: Vec<usize>,
    /// C-order multi-index of the next element to read, its bytes already read, and how
    /// many elements were read whole.
    index: Vec<usize>,
    partial: usize,
    done: usize,
    total: usize,
}

impl FortranBytes {
    /// Reads all `shape.product() * size` data bytes of `r` (the caller has checked the
    /// size against the memory limit); then checks the data ends there.
    pub fn read<R: Read>(mut r: R, size: usize, shape: &[usize]) -> Result<Self, String> {
        let total: usize = shape.iter().product();
        let mut data = vec![0u8; total * size];
        r.read_exact(&mut data).map_err(io_error)?;
        ElementReader::new(r, size, false, 0).finish()?;
        let mut strides = Vec::with_capacity(shape.len());
        let mut s = 1;
        for &d in shape {
            strides.push(s);
            s *= d;
        }
        Ok(FortranBytes {
            data,
            size,
            shape: shape.to_vec(),
            strides,
            index: vec![0; shape.len()],
            partial: 0,
            done: 0,
            total,
        })
    }
}

impl FortranBytes {
    /// Byte offset of the element at the current C-order index.
    fn offset(&self) -> usize {
        let e: usize = self
            .index
            .iter()
            .zip(&self.strides)
            .map(|(i, s)| i * s)
            .sum();
        e * self.size
    }

    /// Moves the C-order index to the next element: the last axis fastest.
    fn advance(&mut self) {
        self.done += 1;
        for (i, &d) in self.index.iter_mut().zip(&self.shape).rev() {
            *i += 1;
            if *i < d {
                break;
            }
            *i = 0;
        }
    }
}

impl Read for FortranBytes {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut written = 0;
        while self.done < self.total && written < buf.len() {
            let at = self.offset() + self.partial;
            let n = (self.size - self.partial).min(buf.len() - written);
            buf[written..written + n].copy_from_slice(&self.data[at..at + n]);
            written += n;
            self.partial += n;
            if self.partial == self.size {
                self.partial = 0;
                self.advance();
            }
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_both_byte_orders_across_blocks() {
        // 40,000 u16 = 80,000 bytes: two blocks (32,768 elements, then 7,232).
        let v: Vec<u16> = (0..40_000u32).map(|i| (i * 7) as u16).collect();
        for big in [false, true] {
            let bytes: Vec<u8> = v
                .iter()
                .flat_map(|x| {
                    if big {
                        x.to_be_bytes()
                    } else {
                        x.to_le_bytes()
                    }
                })
                .collect();
            let mut r = ElementReader::new(&bytes[..], 2, big, 40_000);
            let mut block = Vec::new();
            assert_eq!(r.next_block::<u16>(usize::MAX, &mut block).unwrap(), 32_768);
            assert_eq!(block[..3], [0, 7, 14]);
            let mut rest: Vec<u16> = Vec::new();
            r.read_all(&mut rest).unwrap();
            assert_eq!(rest[..], v[32_768..]);
            r.finish().unwrap();
        }
        assert_eq!(f32::decode(&[0x3f, 0x80, 0, 0], true), 1.0);
        assert_eq!(i16::decode(&[0xfe, 0xff], false), -2);
    }

    #[test]
    fn short_and_long_data_are_errors() {
        let bytes = [1u8, 2, 3];
        let mut r = ElementReader::new(&bytes[..], 2, false, 2);
        assert_eq!(r.read_all::<u16>(&mut Vec::new()).unwrap_err(), MISSING);
        let r = ElementReader::new(&bytes[..], 2, false, 1);
        let mut r = r;
        assert_eq!(r.next_block::<u16>(5, &mut Vec::new()), Ok(1));
        assert_eq!(
            r.finish().unwrap_err(),
            "not a valid .npy array: file had 1 extra bytes before EOF"
        );
    }

    #[test]
    fn fortran_bytes_read_in_c_order() {
        // Logical [2, 3] with value 10*i + j, stored column-major: 0, 10, 1, 11, 2, 12.
        let stored = [0u8, 10, 1, 11, 2, 12];
        let mut f = FortranBytes::read(&stored[..], 1, &[2, 3]).unwrap();
        let mut out = Vec::new();
        f.read_to_end(&mut out).unwrap();
        assert_eq!(out, [0, 1, 2, 10, 11, 12]);
        // Elements wider than the buffer: [2, 2] of u16 read one byte at a time.
        let stored: Vec<u8> = [1u16, 3, 2, 4]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut f = FortranBytes::read(&stored[..], 2, &[2, 2]).unwrap();
        let mut bytes = Vec::new();
        let mut one = [0u8; 1];
        while f.read(&mut one).unwrap() == 1 {
            bytes.push(one[0]);
        }
        assert_eq!(bytes, [1, 0, 2, 0, 3, 0, 4, 0]);
        assert_eq!(
            FortranBytes::read(&stored[..5], 1, &[2, 3]).err().unwrap(),
            MISSING
        );
    }
}
