//! The output directory of a sweep: sweep.json (what grid it belongs to) and points.csv
//! (the rows of every finished point).
//!
//! points.csv only grows by whole points: each finished point's rows go out in one write,
//! then a flush and an fsync. A point is complete iff all its rows — (layers + 1) x modes,
//! recorded per point in sweep.json — are present. On resume a torn trailing line and the
//! rows of incomplete points are dropped (the file is rewritten through a rename), so no
//! half-written row survives and no point is counted twice; a points.csv cut anywhere,
//! down to zero bytes, is repaired the same way (its header rewritten). When every point of the run
//! is complete the file is rewritten in grid order, so the final bytes do not depend on
//! the order in which points finished.

use super::index::{index, lookup, Index, RowWriter, Run, RunReader, Total};
use super::plan::{columns, Plan};
use super::shard::Shard;
use anyhow::{anyhow, bail, Context, Result};
use outdir::OutputDir;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub const FORMAT: &str = "sresim-sweep-1";

/// sweep.json.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Meta {
    pub format: String,
    pub sresim_version: String,
    /// The grid file the sweep was started with (for people; identity is the fingerprint).
    pub grid: String,
    pub fingerprint: String,
    pub axes: Vec<String>,
    pub modes: Vec<String>,
    /// The share of the points this directory holds; None: all of them.
    pub shard: Option<Shard>,
    /// Every point of the grid (not only the shard's), in grid order.
    pub points: Vec<PointMeta>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PointMeta {
    pub id: String,
    pub workload: String,
    /// The axis cells, aligned with `axes`.
    pub values: Vec<String>,
    /// Rows the point writes.
    pub rows: usize,
}

impl Meta {
    pub fn of(plan: &Plan, shard: Option<Shard>) -> Meta {
        Meta {
            format: FORMAT.into(),
            sresim_version: env!("CARGO_PKG_VERSION").into(),
            grid: plan.grid.path.display().to_string(),
            fingerprint: plan.fingerprint.clone(),
            axes: plan.grid.axis_keys(),
            modes: plan.grid.modes.iter().map(|m| m.to_string()).collect(),
            shard,
            points: plan
                .points
                .iter()
                .zip(&plan.rows)
                .map(|(p, &rows)| PointMeta {
                    id: p.id.clone(),
                    workload: p.workload.clone(),
                    values: p.values.iter().map(|v| v.csv()).collect(),
                    rows,
                })
                .collect(),
        }
    }

    /// Reads `dir/sweep.json` (streamed: the text is never held whole).
    pub fn read(dir: &Path) -> Result<Meta> {
        let meta: Meta = read_json(dir)?;
        check_format(dir, &meta.format)?;
        Ok(meta)
    }

    /// The fingerprint of `dir/sweep.json`, its points skipped over.
    pub fn read_fingerprint(dir: &Path) -> Result<String> {
        #[derive(Deserialize)]
        struct Head {
            format: String,
            fingerprint: String,
        }
        let head: Head = read_json(dir)?;
        check_format(dir, &head.format)?;
        Ok(head.fingerprint)
    }

    pub fn json(&self) -> Result<Vec<u8>> {
        Ok(serde_json::to_vec_pretty(self)?)
    }

    pub fn columns(&self) -> Vec<String> {
        columns(&self.axes)
    }
}

fn read_json<T: serde::de::DeserializeOwned>(dir: &Path) -> Result<T> {
    let path = dir.join("sweep.json");
    let file =
        std::fs::File::open(&path).map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))?;
    serde_json::from_reader(std::io::BufReader::with_capacity(1 << 16, file))
        .map_err(|e| anyhow!("{}: not a sweep description: {e}", path.display()))
}

fn check_format(dir: &Path, format: &str) -> Result<()> {
    if format != FORMAT {
        bail!(
            "{}: format: '{format}' is not {FORMAT}",
            dir.join("sweep.json").display()
        );
    }
    Ok(())
}

/// points.csv with no rows: its header.
pub fn header_bytes(cols: &[String]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(cols)?;
    w.into_inner().context("csv buffer")
}

/// Makes `dir` ready for a run of `plan` and returns the ids of the points already
/// complete. Without `resume`, a directory that holds a sweep is an error; with it, a
/// directory of another grid or shard is, and a damaged points.csv is repaired: complete
/// points kept, a torn tail and incomplete points dropped, the header rewritten.
pub fn prepare(
    dir: &OutputDir,
    plan: &Plan,
    shard: Option<Shard>,
    resume: bool,
) -> Result<HashSet<String>> {
    let d = dir.path().display();
    let meta = Meta::of(plan, shard);
    let csv_path = dir.path().join("points.csv");
    let has_meta = dir.path().join("sweep.json").exists();
    if !resume && (has_meta || csv_path.exists()) {
        bail!("{d}: holds a sweep already (--resume continues it, or choose another --out)");
    }
    let empty = header_bytes(&meta.columns())?;
    if !has_meta {
        if csv_path.exists() {
            bail!("{d}: has points.csv but no sweep.json (not a sweep directory?)");
        }
        dir.replace(&[("sweep.json", &meta.json()?), ("points.csv", &empty)])?;
        return Ok(HashSet::new());
    }
    let old = Meta::read(dir.path())?;
    if old.fingerprint != meta.fingerprint {
        bail!(
            "{d}/sweep.json: fingerprint: {} belongs to another grid than {} ({}): refusing to mix them",
            old.fingerprint,
            plan.grid.path.display(),
            meta.fingerprint
        );
    }
    if old.shard != shard {
        bail!(
            "{d}/sweep.json: shard: the directory holds {} but the run asks for {}",
            Shard::describe(old.shard),
            Shard::describe(shard)
        );
    }
    if !csv_path.exists() {
        dir.replace(&[("points.csv", &empty)])?;
        return Ok(HashSet::new());
    }
    let ids = lookup(meta.points.iter().map(|p| p.id.as_str()));
    let ix = index(&csv_path, &meta.columns(), &ids)?;
    let totals = ix.totals();
    let whole = |t: &Total| meta.points[t.point as usize].rows == t.rows as usize;
    let complete = totals
        .iter()
        .filter(|t| whole(t))
        .map(|t| meta.points[t.point as usize].id.clone())
        .collect();
    if ix.torn || ix.headless || !totals.iter().all(whole) {
        rewrite(dir, &meta.columns(), &ix, &ix.grouped(whole, false))?;
    }
    Ok(complete)
}

/// Replaces points.csv by the header `cols` and the rows of `runs` of the file `ix` indexes.
pub fn rewrite(dir: &OutputDir, cols: &[String], ix: &Index, runs: &[Run]) -> Result<()> {
    let mut from = RunReader::open(&ix.path)?;
    let staged = dir.stage("points.csv")?;
    let mut w = RowWriter::new(staged, cols)?;
    w.copy(&mut from, runs)?;
    dir.replace_staged(vec![w.finish()?])
}

/// Appends whole points to points.csv.
pub struct Appender {
    file: Mutex<std::fs::File>,
    path: PathBuf,
}

impl Appender {
    pub fn open(dir: &Path) -> Result<Appender> {
        let path = dir.join("points.csv");
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| anyhow!("{}: cannot open for appending: {e}", path.display()))?;
        Ok(Appender {
            file: Mutex::new(file),
            path,
        })
    }

    /// Writes the rows of one point in one write, then flushes and syncs them to disk.
    pub fn append(&self, rows: &[Vec<String>]) -> Result<()> {
        let mut w = csv::Writer::from_writer(Vec::new());
        for r in rows {
            w.write_record(r)?;
        }
        let bytes = w.into_inner().context("csv buffer")?;
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        (|| {
            f.write_all(&bytes)?;
            f.flush()?;
            f.sync_data()
        })()
        .map_err(|e| anyhow!("{}: cannot append: {e}", self.path.display()))
    }
}

/// When every point of `owned` (ids in grid order) is complete, rewrites points.csv in
/// that order. Returns how many of them are complete.
pub fn finish(dir: &OutputDir, meta: &Meta, owned: &[String]) -> Result<usize> {
    let path = dir.path().join("points.csv");
    let ids = lookup(meta.points.iter().map(|p| p.id.as_str()));
    let ix = index(&path, &meta.columns(), &ids)?;
    let mut mine = vec![false; meta.points.len()];
    for id in owned {
        if let Some(&i) = ids.get(id.as_str()) {
            mine[i as usize] = true;
        }
    }
    let n = ix
        .totals()
        .iter()
        .filter(|t| mine[t.point as usize] && meta.points[t.point as usize].rows == t.rows as usize)
        .count();
    if n == owned.len() && !ix.torn {
        rewrite(
            dir,
            &meta.columns(),
            &ix,
            &ix.grouped(|t| mine[t.point as usize], true),
        )?;
    }
    Ok(n)
}
