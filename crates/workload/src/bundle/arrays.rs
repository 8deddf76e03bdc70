//! Whole arrays of a bundle by name, for the accuracy path (the network input, labels,
//! biases, float weights): arrays the layer traces do not describe. Every float value
//! passes [`crate::quant::check_value`] (finite, within the float32 range).

use super::{BundleWorkload, StoredValues};
use anyhow::anyhow;

impl BundleWorkload {
    /// Whether tensors.npz holds an array called `name`.
    pub fn has_array(&self, name: &str) -> anyhow::Result<bool> {
        Ok(self.reader()?.names().contains(name))
    }

    /// The shape array `name`'s header declares, read without its data (to check it
    /// before the array is read).
    pub fn array_shape(&self, name: &str) -> anyhow::Result<Vec<usize>> {
        let mut npz = self.reader()?;
        npz.header(name)
            .map(|h| h.shape)
            .map_err(|e| anyhow!("{}: {name}: {e}", self.npz_label))
    }

    /// Array `name` as float64 values in row-major order, with its shape; whether it was
    /// stored as floats. Values that are not finite or beyond the float32 range are refused.
    pub fn read_f64(&self, name: &str) -> anyhow::Result<(Vec<usize>, Vec<f64>, bool)> {
        let a = self.reread(name)?;
        let v = a.to_f64();
        crate::quant::check_values(&v).map_err(|e| anyhow!("{}: {name}: {e}", self.npz_label))?;
        Ok((a.shape().to_vec(), v, a.is_float()))
    }

    /// Array `name` as [`StoredValues`] (float32, float64 and uint8 kept as stored), with its
    /// shape. Values that are not finite or beyond the float32 range are refused.
    pub fn read_values(&self, name: &str) -> anyhow::Result<(Vec<usize>, StoredValues)> {
        let a = self.reread(name)?;
        let shape = a.shape().to_vec();
        let v = a.into_values();
        v.check()
            .map_err(|e| anyhow!("{}: {name}: {e}", self.npz_label))?;
        Ok((shape, v))
    }

    /// Integer array `name` as int64 values, with its shape; a float array is refused.
    pub fn read_i64(&self, name: &str) -> anyhow::Result<(Vec<usize>, Vec<i64>)> {
        let a = self.reread(name)?;
        let v = a
            .to_i64()
            .ok_or_else(|| anyhow!("{}: {name}: expected an integer array", self.npz_label))?;
        Ok((a.shape().to_vec(), v))
    }

    /// `manifest.json`'s label in error messages.
    pub fn manifest_label(&self) -> &str {
        &self.manifest_label
    }
}
