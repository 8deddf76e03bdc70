//! A search grid (docs/search.md): a sweep grid (crates/sweep's parser and checks) with a
//! `[search]` table that says which axes make the groups the answer is given for.
//!
//! ```toml
//! workloads = ["lenet5-mnist"]
//! modes = ["dense", "sre"]
//! accuracy = true                      # required: a search judges top-1
//! accuracy_samples = 500               # the most samples a design point gets
//! [axes]
//! "device.preset" = ["milo-rram", "dlrsim-rram"]
//! "adc.bits" = [4, 6]
//! "ou.rows" = [2, 4, 8, 9, 16, 32, 64, 128]
//! [search]
//! by = ["device.preset", "adc.bits"]   # one answer per workload and these values
//! first_samples = 100                  # the first look; each look doubles it
//! ```

use anyhow::{anyhow, bail, Result};
use std::path::Path;
use sweep::grid::Grid;

/// The first look's samples without `first_samples`.
pub const DEFAULT_FIRST_SAMPLES: usize = 100;

/// What `[search]` says, checked against the grid.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The grid (it has `accuracy = true`).
    pub grid: Grid,
    /// Indices in [`Grid::axis_keys`] of the group axes (`by`).
    pub by: Vec<usize>,
    pub first_samples: usize,
}

impl Spec {
    /// Reads `path` as a grid of at most `max_points` points (`--max-points`, checked by
    /// the grid parser as for a sweep) and checks its `[search]` table (required) and the
    /// sweep keys a search does not take.
    pub fn load(path: &Path, max_points: u64) -> Result<Spec> {
        Spec::of(Grid::load(path, max_points)?)
    }

    /// [`Spec::load`] of a parsed grid.
    pub fn of(grid: Grid) -> Result<Spec> {
        let p = grid.path.display().to_string();
        let Some(table) = grid.search.clone() else {
            bail!("{p}: search: absent (a search grid has a [search] table, e.g. by = [\"device.preset\"]; docs/search.md)");
        };
        let toml::Value::Table(t) = table else {
            bail!("{p}: search: expected a table");
        };
        if let Some(k) = t
            .keys()
            .find(|k| !["by", "first_samples"].contains(&k.as_str()))
        {
            bail!("{p}: search.{k}: unknown key (expected by, first_samples)");
        }
        let keys = grid.axis_keys();
        let mut by = Vec::new();
        if let Some(v) = t.get("by") {
            let list = v
                .as_array()
                .ok_or_else(|| anyhow!("{p}: search.by: expected a list of axis keys"))?;
            for item in list {
                let k = item
                    .as_str()
                    .ok_or_else(|| anyhow!("{p}: search.by: {item} is not an axis key"))?;
                let i = keys.iter().position(|x| x == k).ok_or_else(|| {
                    anyhow!(
                        "{p}: search.by: {k} is not an axis of the grid (axes: {})",
                        keys.join(", ")
                    )
                })?;
                if by.contains(&i) {
                    bail!("{p}: search.by: {k} is listed twice");
                }
                by.push(i);
            }
        }
        let first_samples = match t.get("first_samples") {
            None => DEFAULT_FIRST_SAMPLES,
            Some(toml::Value::Integer(n)) if *n >= 1 => *n as usize,
            Some(v) => bail!("{p}: search.first_samples: {v} is not a positive number of samples"),
        };
        if grid.draws > 1 {
            bail!("{p}: draws: a search gives every sample a device draw of its own (docs/search.md); leave draws out");
        }
        if grid.functional {
            bail!("{p}: functional: a search reports no functional columns; leave it out");
        }
        if !grid.accuracy {
            bail!("{p}: accuracy: a search judges top-1: set accuracy = true");
        }
        Ok(Spec {
            grid,
            by,
            first_samples,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        let g = Grid::parse(text, Path::new("s.toml"), sweep::grid::DEFAULT_MAX_POINTS).unwrap();
        Spec::of(g).unwrap_err().to_string()
    }

    const HEAD: &str =
        "accuracy = true\nworkloads = [\"lenet5-mnist\"]\n[axes]\n\"ou.rows\" = [4, 8]\n\"adc.bits\" = [6]\n";

    #[test]
    fn bad_search_tables_name_the_file_and_field() {
        assert!(err(HEAD).starts_with("s.toml: search: absent"));
        let e = err(&format!("{HEAD}[search]\nby = [\"ou.cols\"]\n"));
        assert!(
            e.starts_with("s.toml: search.by: ou.cols is not an axis"),
            "{e}"
        );
        let e = err(&format!(
            "{HEAD}[search]\nby = [\"adc.bits\", \"adc.bits\"]\n"
        ));
        assert!(e.contains("search.by: adc.bits is listed twice"), "{e}");
        let e = err(&format!("{HEAD}[search]\nfirst_samples = 0\n"));
        assert!(
            e.starts_with("s.toml: search.first_samples: 0 is not"),
            "{e}"
        );
        let e = err(&format!("{HEAD}[search]\nbudget = 0.01\n"));
        assert!(e.starts_with("s.toml: search.budget: unknown key"), "{e}");
        let e = err(&format!("draws = 3\n{HEAD}[search]\n"));
        assert!(e.starts_with("s.toml: draws: a search gives"), "{e}");
        let e = err("workloads = [\"lenet5-mnist\"]\n[search]\n");
        assert!(
            e.starts_with("s.toml: accuracy: a search judges top-1"),
            "{e}"
        );
    }

    #[test]
    fn a_good_table_gives_the_group_axes() {
        let g = Grid::parse(
            &format!("{HEAD}[search]\nby = [\"adc.bits\"]\nfirst_samples = 20\n"),
            Path::new("s.toml"),
            sweep::grid::DEFAULT_MAX_POINTS,
        )
        .unwrap();
        let s = Spec::of(g).unwrap();
        assert_eq!(s.by, [1]);
        assert_eq!(s.first_samples, 20);
        assert!(s.grid.accuracy);
    }
}
