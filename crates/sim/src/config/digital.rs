//! `[digital]` and `[attention]` resolved: the digital unit, its energy table read through
//! the guarded reader and carried to `tech.node`, the attention placement and its
//! cell-write table (docs/digital.md).

use super::schema::{AttentionCfg, DigitalCfg, DIGITAL_TABLE, WRITE_TABLE};
use anyhow::{anyhow, bail, Result};
use digital::{CellWrite, DigitalTable, DigitalUnit, Placement};
use std::path::Path;

/// The digital unit of a run, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedDigital {
    pub unit: DigitalUnit,
    /// The energy table at `tech.node`.
    pub table: DigitalTable,
    pub placement: Placement,
    /// The cost of a run-time cell write (used with `Placement::Crossbar`).
    pub write: CellWrite,
}

/// A table file named by `key` (relative to the config file, or to ./configs for the
/// default config), read through the guarded reader; the shipped table is embedded, so a
/// missing file of the shipped name is the shipped table.
fn read_table<T>(
    key: &str,
    rel: &str,
    shipped: &str,
    embedded: fn() -> T,
    parse: impl Fn(&str) -> Result<T, digital::TableError>,
    origin: &str,
    files: super::files::Files,
) -> Result<T> {
    let relp = Path::new(rel);
    let shipped_name = Path::new(shipped).file_name();
    let base_dir = match files {
        super::files::Files::Beside(d) => d,
        // Read as data: the shipped table stands for any file named (never opened).
        super::files::Files::Never => return Ok(embedded()),
    };
    let path = match base_dir {
        Some(d) => d.join(relp),
        None => Path::new("configs").join(relp),
    };
    match workload::files::read_string(&path, workload::files::MAX_TEXT_BYTES) {
        // The file is named by `key` (in the config or by `--set`): both are said, so a
        // `--set digital.table=/etc/passwd` reads as that key's file, not a config.
        Ok(text) => parse(&text).map_err(|e| anyhow!("{origin}: {key}: {}: {e}", path.display())),
        Err(_) if !path.exists() && relp.file_name() == shipped_name => Ok(embedded()),
        Err(why) => bail!("{origin}: {key}: {} {why}", path.display()),
    }
}

/// Checks `[digital]` and `[attention]` and reads their tables.
pub fn resolve(
    d: &DigitalCfg,
    a: &AttentionCfg,
    node_nm: u32,
    origin: &str,
    files: super::files::Files,
) -> Result<ResolvedDigital> {
    let unit = d.unit();
    unit.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
    let placement = Placement::parse(&a.placement).ok_or_else(|| {
        anyhow!(
            "{origin}: attention.placement: '{}' is not a placement (expected one of {}){}",
            a.placement,
            Placement::NAMES.join(", "),
            workload::text::did_you_mean(&a.placement, Placement::NAMES)
        )
    })?;
    let table = read_table(
        "digital.table",
        &d.table,
        DIGITAL_TABLE,
        DigitalTable::horowitz_45nm,
        DigitalTable::from_toml,
        origin,
        files,
    )?
    .at_node(node_nm)
    .map_err(|e| anyhow!("{origin}: tech.node: {e}"))?;
    let write = read_table(
        "attention.write_table",
        &a.write_table,
        WRITE_TABLE,
        CellWrite::pipelayer,
        CellWrite::from_toml,
        origin,
        files,
    )?;
    Ok(ResolvedDigital {
        unit,
        table,
        placement,
        write,
    })
}
