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

use super::plan::{columns, Plan};
use super::shard::Shard;
use anyhow::{anyhow, bail, Context, Result};
use outdir::OutputDir;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
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

    pub fn read(dir: &Path) -> Result<Meta> {
        let path = dir.join("sweep.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))?;
        let meta: Meta = serde_json::from_str(&text)
            .map_err(|e| anyhow!("{}: not a sweep description: {e}", path.display()))?;
        if meta.format != FORMAT {
            bail!(
                "{}: format: '{}' is not {FORMAT}",
                path.display(),
                meta.format
            );
        }
        Ok(meta)
    }

    pub fn json(&self) -> Result<Vec<u8>> {
        Ok(serde_json::to_vec_pretty(self)?)
    }

    pub fn columns(&self) -> Vec<String> {
        columns(&self.axes)
    }

    /// Rows expected of each point, by id.
    pub fn expected(&self) -> HashMap<&str, usize> {
        self.points
            .iter()
            .map(|p| (p.id.as_str(), p.rows))
            .collect()
    }
}

/// The rows of a points.csv, grouped by point in file order.
#[derive(Debug, Default)]
pub struct Scan {
    pub by_point: HashMap<String, Vec<Vec<String>>>,
    /// Point ids in the order they first appear.
    pub order: Vec<String>,
    /// A trailing line without its newline was found (and ignored).
    pub torn: bool,
    /// The file has no whole header line (it is empty, or cut inside the header).
    pub headless: bool,
}

impl Scan {
    /// The ids whose row count is the expected one; the others are incomplete.
    pub fn split(&self, expected: &HashMap<&str, usize>) -> (Vec<String>, Vec<String>) {
        self.order
            .iter()
            .cloned()
            .partition(|id| expected.get(id.as_str()) == Some(&self.by_point[id].len()))
    }
}

/// Reads `path` (which must have the header `cols`), ignoring a torn last line; rows of
/// points that `expected` does not know are an error.
pub fn scan(path: &Path, cols: &[String], expected: &HashMap<&str, usize>) -> Result<Scan> {
    let p = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| anyhow!("{p}: cannot read: {e}"))?;
    let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut scan = Scan {
        torn: end < bytes.len(),
        headless: end == 0,
        ..Scan::default()
    };
    if end == 0 {
        return Ok(scan);
    }
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(&bytes[..end]);
    let header: Vec<String> = rd
        .headers()
        .map_err(|e| anyhow!("{p}: {e}"))?
        .iter()
        .map(String::from)
        .collect();
    if header != cols {
        bail!("{p}: header: the columns are not those of this grid (the axes differ)");
    }
    for rec in rd.records() {
        let rec = rec.map_err(|e| anyhow!("{p}: {e}"))?;
        let row: Vec<String> = rec.iter().map(String::from).collect();
        let id = row[0].clone();
        if !expected.contains_key(id.as_str()) {
            let line = rec.position().map_or(0, |q| q.line());
            bail!("{p}: line {line}: point '{id}' is not a point of this grid");
        }
        if !scan.by_point.contains_key(&id) {
            scan.order.push(id.clone());
        }
        scan.by_point.entry(id).or_default().push(row);
    }
    Ok(scan)
}

/// points.csv as bytes: the header, then the rows of `ids` in that order.
pub fn csv_bytes(
    cols: &[String],
    ids: &[String],
    by_point: &HashMap<String, Vec<Vec<String>>>,
) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(cols)?;
    for id in ids {
        for row in by_point.get(id).into_iter().flatten() {
            w.write_record(row)?;
        }
    }
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
    let empty = csv_bytes(&meta.columns(), &[], &HashMap::new())?;
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
    let expected = meta.expected();
    let scan = scan(&csv_path, &meta.columns(), &expected)?;
    let (complete, incomplete) = scan.split(&expected);
    if scan.torn || scan.headless || !incomplete.is_empty() {
        let kept = csv_bytes(&meta.columns(), &complete, &scan.by_point)?;
        dir.replace(&[("points.csv", &kept)])?;
    }
    Ok(complete.into_iter().collect())
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
    let expected = meta.expected();
    let scan = scan(&path, &meta.columns(), &expected)?;
    let (complete, _) = scan.split(&expected);
    let done: HashSet<&String> = complete.iter().collect();
    let n = owned.iter().filter(|id| done.contains(id)).count();
    if n == owned.len() && !scan.torn {
        dir.replace(&[(
            "points.csv",
            &csv_bytes(&meta.columns(), owned, &scan.by_point)?,
        )])?;
    }
    Ok(n)
}
