//! `[chip]` of the configuration (docs/chip.md): its keys, and its resolution into a chip
//! description and area table at the config's technology node.

use anyhow::{anyhow, bail, Result};
use chip::{AreaTable, ChipSpec};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use toml::Table;

/// `[chip]`: a preset (a built-in name or a file relative to the config) and any of its
/// keys overridden.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChipCfg {
    #[serde(default)]
    pub preset: String,
    #[serde(flatten)]
    pub overrides: Table,
}

/// A validated `[chip]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedChip {
    pub spec: ChipSpec,
    pub area: AreaTable,
}

/// Is `key` a key of `[chip]`?
pub fn is_key(key: &str) -> bool {
    key == "preset" || ChipSpec::keys().iter().any(|k| k == key)
}

/// Reads the preset and the area table (relative to the config file, or to the current
/// directory for the default config), checks every key, and carries the area table and
/// the router energy from the area table's node to `node_nm` (docs/technology.md; a
/// `chip.router_pj_per_bit` set by the user is the figure used at that node).
pub fn resolve(
    cfg: &ChipCfg,
    node_nm: u32,
    origin: &str,
    files: super::files::Files,
) -> Result<ResolvedChip> {
    let base_dir = match files {
        super::files::Files::Beside(d) => d,
        super::files::Files::Never => None,
    };
    let never = matches!(files, super::files::Files::Never);
    let at = |rel: &str| -> PathBuf {
        match base_dir {
            Some(d) => d.join(rel),
            None => PathBuf::from(rel),
        }
    };
    if cfg.preset.is_empty() {
        bail!("{origin}: chip.preset: missing (expected \"isaac\", \"pp_sim\" or a preset file)");
    }
    let (text, preset_dir) = match chip::builtin_preset(&cfg.preset) {
        Some(t) => (t.to_string(), None),
        // A config read as data opens no file: a preset file it names stands as ISAAC's
        // preset, so its `[chip]` overrides are still checked (docs/errors.md).
        None if never => (
            chip::builtin_preset("isaac")
                .unwrap_or_default()
                .to_string(),
            None,
        ),
        None => {
            let path = at(&cfg.preset);
            let text = workload::files::read_string(&path, workload::files::MAX_TEXT_BYTES)
                .map_err(|e| {
                    if std::fs::symlink_metadata(&path).is_ok() {
                        anyhow!("{origin}: chip.preset: {}: cannot read: {e}", path.display())
                    } else {
                        anyhow!(
                            "{origin}: chip.preset: '{}' is neither \"isaac\", \"pp_sim\" nor a readable file ({e}){}",
                            cfg.preset,
                            workload::text::did_you_mean(&cfg.preset, ["isaac", "pp_sim"])
                        )
                    }
                })?;
            (text, path.parent().map(Path::to_path_buf))
        }
    };
    // A bad value of a preset file, one that `[chip]` does not override, is that file's
    // mistake: named by its path and its own key (docs/errors.md, "[chip]"), not blamed
    // on the config that names the file.
    let preset_file = preset_dir.as_ref().map(|_| at(&cfg.preset));
    let spec =
        ChipSpec::from_preset(&text, &cfg.overrides).map_err(|e| match (&preset_file, &e) {
            (Some(file), chip::ChipError::Key { key, msg }) if !cfg.overrides.contains_key(key) => {
                match key.as_str() {
                    "preset" if msg != chip::UNKNOWN_IN_PRESET => {
                        anyhow!("{}: {msg}", bounds::text::path(file))
                    }
                    _ => anyhow!("{}: {key}: {msg}", bounds::text::path(file)),
                }
            }
            _ => anyhow!("{origin}: {e}"),
        })?;
    let rel = Path::new(&spec.area_table);
    let path = match &preset_dir {
        Some(d) => d.join(rel),
        None => at(&spec.area_table),
    };
    // The area table a preset file names (and `[chip]` does not override) is that
    // file's key, relative to its directory: a missing one is its mistake, as any other
    // value of it is.
    let owner = match &preset_file {
        Some(f) if !cfg.overrides.contains_key("area_table") => {
            format!("{}: area_table", bounds::text::path(f))
        }
        _ => format!("{origin}: chip.area_table"),
    };
    let shipped = rel.file_name().is_some_and(|f| f == "area-isaac-32nm.toml");
    let area = if never {
        AreaTable::isaac_32nm()
    } else if std::fs::symlink_metadata(&path).is_ok() {
        let text = workload::files::read_string(&path, workload::files::MAX_TEXT_BYTES)
            .map_err(|e| anyhow!("{owner}: {}: {e}", path.display()))?;
        AreaTable::from_toml(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?
    } else if shipped {
        AreaTable::isaac_32nm()
    } else {
        bail!("{owner}: {} does not exist", path.display());
    };
    let mut spec = spec;
    if node_nm != area.node_nm && !cfg.overrides.contains_key("router_pj_per_bit") {
        let f = energy::tech::between(area.node_nm, node_nm)
            .map_err(|e| anyhow!("{origin}: tech.node: {e}"))?;
        spec.router_pj_per_bit *= f.cmos_energy;
    }
    let area = area
        .at_node(node_nm)
        .map_err(|e| anyhow!("{origin}: tech.node: {e}"))?;
    Ok(ResolvedChip { spec, area })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve_in(dir: &Path, overrides: Table) -> String {
        let cfg = ChipCfg {
            preset: "mine.toml".into(),
            overrides,
        };
        format!(
            "{:#}",
            resolve(
                &cfg,
                32,
                "c.toml",
                super::super::files::Files::Beside(Some(dir))
            )
            .unwrap_err()
        )
    }

    #[test]
    fn a_bad_value_of_a_preset_file_is_named_in_that_file() {
        let dir = tempfile::tempdir().unwrap();
        let text = chip::builtin_preset("isaac").unwrap();
        let file = dir.path().join("mine.toml");
        std::fs::write(&file, text.replace("mesh_x = 7", "mesh_x = 0")).unwrap();
        let shown = bounds::text::path(&file);
        assert_eq!(
            resolve_in(dir.path(), Table::new()),
            format!("{shown}: mesh_x: 0 (expected a number >= 1)")
        );
        std::fs::write(&file, text.replace("hop_ns = 0.833", "hop_ns = \"x\"")).unwrap();
        let e = resolve_in(dir.path(), Table::new());
        assert!(e.starts_with(&format!("{shown}: hop_ns: ")), "{e}");
        std::fs::write(&file, "mesh_x = [").unwrap();
        let e = resolve_in(dir.path(), Table::new());
        assert!(e.starts_with(&format!("{shown}: ")), "{e}");
        // A preset file naming another preset holds a key no preset holds: named.
        std::fs::write(&file, format!("preset = \"isaac\"\n{text}")).unwrap();
        assert_eq!(
            resolve_in(dir.path(), Table::new()),
            format!("{shown}: preset: unknown key in the preset")
        );
        // A value the config's [chip] gives is the config's.
        std::fs::write(&file, text).unwrap();
        let mut over = Table::new();
        over.insert("mesh_y".into(), toml::Value::Integer(0));
        assert_eq!(
            resolve_in(dir.path(), over),
            "c.toml: chip.mesh_y: 0 (expected a number >= 1)"
        );
    }

    /// A preset file's own area table that does not exist is that file's mistake, named by
    /// its key; the same table set in `[chip]` is the config's.
    #[test]
    fn a_preset_files_missing_area_table_is_named_in_that_file() {
        let dir = tempfile::tempdir().unwrap();
        let text = chip::builtin_preset("isaac").unwrap();
        let file = dir.path().join("mine.toml");
        let with = |v: &str| text.replace("area_table = \"area-isaac-32nm.toml\"", v);
        std::fs::write(&file, with("area_table = \"nonexist.toml\"")).unwrap();
        let shown = bounds::text::path(&file);
        let missing = dir.path().join("nonexist.toml");
        assert_eq!(
            resolve_in(dir.path(), Table::new()),
            format!("{shown}: area_table: {} does not exist", missing.display())
        );
        let mut over = Table::new();
        over.insert(
            "area_table".into(),
            toml::Value::String("other.toml".into()),
        );
        assert_eq!(
            resolve_in(dir.path(), over),
            format!(
                "c.toml: chip.area_table: {} does not exist",
                dir.path().join("other.toml").display()
            )
        );
        // A date where a preset file's value stands is told as a date, by its key.
        for (key, line, expected) in [
            ("area_table", "area_table = 1979-05-27", "a string"),
            (
                "name",
                "area_table = \"area-isaac-32nm.toml\"\nname = 1979-05-27",
                "a string",
            ),
            (
                "count",
                "area_table = \"area-isaac-32nm.toml\"\ncount = 1979-05-27T07:32:00",
                "a number of chips or \"auto\"",
            ),
        ] {
            let body = with(line);
            let body = match key {
                "name" => body.replacen("name = \"isaac\"\n", "", 1),
                "count" => body.replacen("count = 1 ", "# ", 1),
                _ => body,
            };
            std::fs::write(&file, body).unwrap();
            let e = resolve_in(dir.path(), Table::new());
            let date = if key == "count" {
                "a date and time (1979-05-27T07:32:00)"
            } else {
                "a date (1979-05-27)"
            };
            assert_eq!(e, format!("{shown}: {key}: {date}, expected {expected}"));
        }
    }
}
