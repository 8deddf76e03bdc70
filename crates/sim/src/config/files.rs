//! Where the files a config names are read from (below every part of the config that
//! reads one: chip, device, digital and the energy table).

use std::path::Path;

/// Where the files a config names are read from: `energy.table`, `digital.table`,
/// `attention.write_table`, `device.error_table`, a `chip.preset` file and its area table.
#[derive(Debug, Clone, Copy)]
pub enum Files<'a> {
    /// Relative to the config file's directory (None: the default config's places).
    Beside(Option<&'a Path>),
    /// None at all: a config that came as data (a shard's `config_values`) is checked
    /// with the shipped tables: a key naming any other file is kept as written, and the
    /// file is never opened (a preset file stands as ISAAC's preset, an error table as none).
    Never,
}
