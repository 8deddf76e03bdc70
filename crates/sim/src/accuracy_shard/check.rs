//! shard.json's fields range-checked where they are parsed (docs/errors.md): the
//! fingerprint is a hash anyone can compute again, so it tells that shards agree, not
//! that a field is what `accuracy` writes.

use super::Manifest;
use anyhow::{anyhow, bail, Result};

/// The most classes a shard may say its network has (an output of 2^32 - 1 values).
pub const MAX_CLASSES: usize = u32::MAX as usize;

impl Manifest {
    /// Every field of a shard.json read back, in its range, where it is parsed: the
    /// fingerprint is a hash anyone can compute again, so it tells that the shards agree,
    /// not that a field is what `accuracy` writes. `draws` 1 to [`MAX_DRAWS`], its
    /// `draw_seeds` those of `device_seed` (one per draw), `draws_computed` 1 or `draws`,
    /// `classes` at most [`MAX_CLASSES`], `layers` and `layer_names` not empty,
    /// every layer one of the network's, `config_values` a config (every key of its type),
    /// and the names (`network`, layers, modes) printable: no control character reaches
    /// accuracy.csv or the terminal.
    ///
    /// [`MAX_DRAWS`]: crate::draws::MAX_DRAWS
    pub(super) fn check(&self, label: &str) -> Result<()> {
        use crate::draws::{seed, MAX_DRAWS};
        if !(1..=MAX_DRAWS).contains(&self.draws) {
            bail!(
                "{label}: draws: {} is not a number of device draws (1 to {MAX_DRAWS})",
                self.draws
            );
        }
        let want: Vec<u64> = (0..self.draws).map(|d| seed(self.device_seed, d)).collect();
        if self.draw_seeds != want {
            bail!(
                "{label}: draw_seeds: not the seeds of draws 0..{} of device_seed {} (was shard.json edited?)",
                self.draws,
                self.device_seed
            );
        }
        if self.draws_computed != 1 && self.draws_computed != self.draws {
            bail!(
                "{label}: draws_computed: {} is neither 1 (a device that draws nothing) nor draws ({})",
                self.draws_computed,
                self.draws
            );
        }
        if self.classes > MAX_CLASSES {
            bail!(
                "{label}: classes: {} is more outputs than a network has (at most {MAX_CLASSES})",
                self.classes
            );
        }
        for (field, list) in [("layers", &self.layers), ("layer_names", &self.layer_names)] {
            if list.is_empty() {
                bail!("{label}: {field}: empty (a shard runs at least one)");
            }
        }
        if let Some(l) = self.layers.iter().find(|l| !self.layer_names.contains(l)) {
            bail!(
                "{label}: layers: '{}' is not one of the network's layers (layer_names)",
                bounds::text::printable(l)
            );
        }
        let names = std::iter::once(("network", &self.network))
            .chain(self.layer_names.iter().map(|l| ("layer_names", l)))
            .chain(self.modes.iter().map(|m| ("modes", m)));
        for (field, name) in names.chain([("config_origin", &self.config_origin)]) {
            let empty = name.is_empty() && field != "config_origin";
            if empty || name.chars().any(char::is_control) {
                bail!(
                    "{label}: {field}: '{}' is not a printable name (empty, or with a control character)",
                    bounds::text::printable(name)
                );
            }
        }
        crate::config::check_values(&self.config_values).map_err(|e| anyhow!("{label}: {e}"))?;
        Ok(())
    }
}
