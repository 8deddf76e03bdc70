//! Shards (`--shard I/N`) and `sresim merge`.
//!
//! Shard I of N (0 <= I < N) owns the points whose rank among the grid's point ids,
//! sorted, is I modulo N: shard sizes differ by at most one, and the split depends only
//! on the set of points, not on the order the grid file lists axes and values in.
//! `merge` joins the directories of any shards of one grid (same fingerprint) into one
//! directory whose points.csv is byte for byte that of an unsharded run. The points the
//! output directory already holds of the same grid are merged too, so a merge never
//! leaves a directory with fewer points than it had.

use super::store::{csv_bytes, scan, Meta};
use anyhow::{bail, Result};
use outdir::OutputDir;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("'{s}' is not I/N with 0 <= I < N (e.g. 0/4)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    pub fn describe(s: Option<Shard>) -> String {
        match s {
            None => "all points (no --shard)".into(),
            Some(s) => format!("shard {}/{}", s.index, s.count),
        }
    }
}

/// The indices (in grid order) of the points `shard` owns.
pub fn select(ids: &[&str], shard: Option<Shard>) -> Vec<usize> {
    let Some(s) = shard else {
        return (0..ids.len()).collect();
    };
    let mut sorted: Vec<&str> = ids.to_vec();
    sorted.sort_unstable();
    let rank: HashMap<&str, usize> = sorted.iter().enumerate().map(|(r, id)| (*id, r)).collect();
    (0..ids.len())
        .filter(|&i| rank[ids[i]] % s.count == s.index)
        .collect()
}

/// `sresim merge DIR... --out OUT`. Every input must be a finished sweep directory of the
/// same grid; together with the points OUT already holds of it they must cover every
/// point unless `partial`.
pub fn merge(inputs: &[PathBuf], out: &Path, partial: bool) -> Result<String> {
    let Some(first) = inputs.first() else {
        bail!("merge: no input directory given");
    };
    let out_dir = OutputDir::open(out)?;
    let meta = Meta::read(first)?;
    let mut sources: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let already = out.join("sweep.json").exists();
    if already {
        let m = Meta::read(out)?;
        if m.fingerprint != meta.fingerprint {
            bail!(
                "{}/sweep.json: fingerprint: the directory holds another grid's sweep",
                out.display()
            );
        }
        if out.join("points.csv").exists() {
            sources.push(out);
        }
    }
    let expected = meta.expected();
    let cols = meta.columns();
    let mut by_point: HashMap<String, Vec<Vec<String>>> = HashMap::new();
    let mut from: HashMap<String, &Path> = HashMap::new();
    for &dir in &sources {
        let m = Meta::read(dir)?;
        if m.fingerprint != meta.fingerprint {
            bail!(
                "{}/sweep.json: fingerprint: {} differs from {} of {}: the outputs belong to different grids",
                dir.display(),
                m.fingerprint,
                meta.fingerprint,
                first.display()
            );
        }
        let path = dir.join("points.csv");
        let s = scan(&path, &cols, &expected)?;
        let (_, incomplete) = s.split(&expected);
        if s.torn || !incomplete.is_empty() {
            bail!(
                "{}: {} has an unfinished point (run `sresim sweep --resume` on that directory first)",
                path.display(),
                incomplete.first().map_or("a torn last line".into(), |id| format!("point {id}"))
            );
        }
        for id in s.order {
            let rows = &s.by_point[&id];
            match by_point.get(&id) {
                Some(prev) if prev != rows => bail!(
                    "{}: point {id}: rows differ from those in {}",
                    path.display(),
                    from[&id].display()
                ),
                Some(_) => {}
                None => {
                    by_point.insert(id.clone(), rows.clone());
                    from.insert(id, dir);
                }
            }
        }
    }
    let order: Vec<String> = meta.points.iter().map(|p| p.id.clone()).collect();
    let missing: Vec<&String> = order
        .iter()
        .filter(|id| !by_point.contains_key(*id))
        .collect();
    if !missing.is_empty() && !partial {
        let ids: Vec<&str> = order.iter().map(String::as_str).collect();
        let shards = meta
            .shard
            .map(|s| {
                let absent: Vec<String> = (0..s.count)
                    .filter(|&i| {
                        let own = select(
                            &ids,
                            Some(Shard {
                                index: i,
                                count: s.count,
                            }),
                        );
                        own.iter().all(|&j| !by_point.contains_key(&order[j]))
                    })
                    .map(|i| format!("{i}/{}", s.count))
                    .collect();
                format!(" (shards with no rows: {})", absent.join(", "))
            })
            .unwrap_or_default();
        bail!(
            "merge: {} of {} points are missing, e.g. {}{shards}; --partial merges what is there",
            missing.len(),
            order.len(),
            missing[0]
        );
    }
    let merged = Meta {
        shard: None,
        ..meta.clone()
    };
    let present: Vec<String> = order
        .iter()
        .filter(|id| by_point.contains_key(*id))
        .cloned()
        .collect();
    out_dir.replace(&[
        ("points.csv", &csv_bytes(&cols, &present, &by_point)?),
        ("sweep.json", &merged.json()?),
    ])?;
    let kept = if already {
        " (with the points it held)"
    } else {
        ""
    };
    Ok(format!(
        "merged {} of {} points from {} directories into {}/points.csv{kept}",
        present.len(),
        order.len(),
        inputs.len(),
        out.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_points_evenly() {
        let ids = ["e", "a", "d", "b", "c"];
        // sorted: a b c d e -> ranks 0..4; shard 0/2 owns a, c, e; 1/2 owns b, d.
        let s0 = select(&ids, Some("0/2".parse().unwrap()));
        let s1 = select(&ids, Some("1/2".parse().unwrap()));
        let names = |v: &[usize]| v.iter().map(|&i| ids[i]).collect::<Vec<_>>();
        assert_eq!(names(&s0), ["e", "a", "c"]);
        assert_eq!(names(&s1), ["d", "b"]);
        assert_eq!(select(&ids, None), [0, 1, 2, 3, 4]);
        for bad in ["2/2", "1", "a/3", "0/0", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
