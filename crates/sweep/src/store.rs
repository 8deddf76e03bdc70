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

use super::index::{index, index_parquet, Index, RowWriter, Run, RunReader, Total};
use super::meta::Shard;
use super::plan::Plan;
use anyhow::{anyhow, bail, Context, Result};
use outdir::OutputDir;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use super::meta::{Head, Ids, Meta, TableFormat, WorkloadMeta, FORMAT, FORMAT_1};
/// Most points of a sweep (2^26), the grid parser's limit: a sweep.json declaring more is
/// refused before its points are listed.
pub use crate::grid::MAX_GRID_POINTS;

/// points.csv with no rows: its header.
pub fn header_bytes(cols: &[String]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(cols)?;
    w.into_inner().context("csv buffer")
}

/// Makes `dir` ready for a run of `plan` and returns the ids of the points already
/// complete. Without `resume`, a directory that holds a sweep is an error; with it, a
/// directory of another grid, shard or table format is, and a damaged points.csv is
/// repaired: complete points kept, a torn tail and incomplete points dropped, the header
/// rewritten. A sweep.json of the earlier format is rewritten in this one.
/// What [`prepare`] found in the directory.
pub struct Prepared {
    /// The ids of the points already complete.
    pub done: HashSet<String>,
    /// The directory held no sweep: nothing was written to it yet, and [`begin`] writes
    /// sweep.json and the points table's header when the first point is in, so that a
    /// sweep whose points are refused before any completes leaves no sweep behind (a rerun
    /// of the corrected grid starts afresh rather than meeting "holds a sweep already").
    pub fresh: bool,
}

/// Writes a fresh sweep's sweep.json and the header of its points.csv (see
/// [`Prepared::fresh`]).
pub fn begin(dir: &OutputDir, meta: &Meta) -> Result<()> {
    let empty = header_bytes(&meta.columns())?;
    dir.replace(&[("sweep.json", &meta.json()?), ("points.csv", &empty)])
}

pub fn prepare(
    dir: &OutputDir,
    plan: &Plan,
    shard: Option<Shard>,
    resume: bool,
    format: sim::format::Format,
) -> Result<Prepared> {
    let done = |done: HashSet<String>| Prepared { done, fresh: false };
    let d = dir.path().display();
    let meta = Meta::of(plan, shard, format);
    // The accuracy columns a resume keeps are held to the grid's own figures.
    let figures = super::recheck::GridFigures {
        draws: plan.grid.draws,
        accuracy_samples: plan.grid.accuracy_samples,
    };
    let csv_path = dir.path().join("points.csv");
    let pq_path = dir.path().join("points.parquet");
    let has_meta = dir.path().join("sweep.json").exists();
    // A search's answer (search.json beside its points.csv) is no sweep: `--resume`
    // cannot continue it, so it is not the advice.
    if !has_meta && dir.path().join("search.json").exists() {
        bail!("{d}: holds the result of `sresim search` (search.json), not a sweep: choose another --out");
    }
    if !resume && (has_meta || csv_path.exists() || pq_path.exists()) {
        bail!("{d}: holds a sweep already (--resume continues it, or choose another --out)");
    }
    let empty = header_bytes(&meta.columns())?;
    if !has_meta {
        if csv_path.exists() || pq_path.exists() {
            bail!("{d}: has a points table but no sweep.json (not a sweep directory?)");
        }
        return Ok(Prepared {
            done: HashSet::new(),
            fresh: true,
        });
    }
    let old = Meta::read_head(dir.path())?;
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
    if old.table != meta.table {
        let was = old.table.format();
        bail!(
            "{d}/sweep.json: table: the sweep was started with --format {} (its points go to {}); resume it with --format {}",
            was.ext(),
            was.file("points"),
            was.ext()
        );
    }
    if old.format != FORMAT {
        dir.replace(&[("sweep.json", &meta.json()?)])?;
    } else {
        // The whole description, not only its fingerprint: a sweep.json is data, and one
        // that claims other points than the grid's is another grid's directory.
        let grid = plan.grid.path.display();
        let another = |why: String| {
            anyhow!("{d}/sweep.json: {why}: the directory belongs to another grid than {grid}")
        };
        let described = Meta::read(dir.path()).map_err(|e| {
            let e = e.to_string();
            let prefix = format!("{d}/sweep.json: ");
            another(e.strip_prefix(&prefix).unwrap_or(&e).to_string())
        })?;
        if let Some(field) = described.differs(&meta) {
            return Err(another(match field {
                "point_count" => format!(
                    "point_count: it describes {} points, the grid {}",
                    described.point_count, meta.point_count
                ),
                _ => format!("{field}: not the grid's {field}"),
            }));
        }
    }
    if pq_path.exists() {
        // Written only once every point of the directory was complete.
        if csv_path.exists() {
            remove(&csv_path)?;
        }
        let ids = meta.ids();
        let ix = index_parquet(&pq_path, &meta.columns(), &ids)?;
        meta.check_owned(&pq_path, &ids, ix.totals().iter().map(|t| t.point as usize))?;
        // Its points are kept as they are: checked as merge checks a shard's.
        super::recheck::kept(&pq_path, &meta, &ids, &ix.grouped(|_| true, false), figures)?;
        return Ok(done(
            ix.totals()
                .iter()
                .map(|t| ids.text(t.point as usize))
                .collect(),
        ));
    }
    if !csv_path.exists() {
        dir.replace(&[("points.csv", &empty)])?;
        return Ok(done(HashSet::new()));
    }
    let ids = meta.ids();
    let ix = index(&csv_path, &meta.columns(), &ids)?;
    let totals = ix.totals();
    meta.check_owned(&csv_path, &ids, totals.iter().map(|t| t.point as usize))?;
    let whole = |t: &Total| meta.rows(t.point as usize) == t.rows as usize;
    // The points kept are checked as merge checks a shard's, before anything is rewritten.
    let kept = ix.grouped(whole, false);
    super::recheck::kept(&csv_path, &meta, &ids, &kept, figures)?;
    let complete = totals
        .iter()
        .filter(|t| whole(t))
        .map(|t| ids.text(t.point as usize))
        .collect();
    if ix.torn || ix.headless || !totals.iter().all(whole) {
        rewrite(dir, &meta.columns(), &ix, &kept)?;
    }
    Ok(done(complete))
}

fn remove(path: &Path) -> Result<()> {
    std::fs::remove_file(path).map_err(|e| anyhow!("{}: cannot remove: {e}", path.display()))
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
        let file = outdir::open_append(&path)?;
        Ok(Appender {
            file: Mutex::new(file),
            path,
        })
    }

    /// Writes the rows of one point in one write, then syncs them to disk; a write that
    /// fails leaves points.csv as it was before it.
    pub fn append(&self, rows: &[Vec<String>]) -> Result<()> {
        let mut w = csv::Writer::from_writer(Vec::new());
        for r in rows {
            w.write_record(r)?;
        }
        let bytes = w.into_inner().context("csv buffer")?;
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        // Whole or not at all: a failed write is cut off again (outdir::append_whole).
        outdir::append_whole(&mut f, &self.path, &bytes)
    }
}

/// When every point of `owned` (ids in grid order) is complete, rewrites points.csv in
/// that order — or, for a sweep in Parquet, writes points.parquet in that order and then
/// removes points.csv. Returns how many of them are complete.
pub fn finish(dir: &OutputDir, meta: &Meta, owned: &[String]) -> Result<usize> {
    let path = dir.path().join("points.csv");
    if !path.exists() && dir.path().join("points.parquet").exists() {
        // Finished before; prepare checked its points.
        return Ok(owned.len());
    }
    let ids = meta.ids();
    let ix = index(&path, &meta.columns(), &ids)?;
    let mut mine = vec![false; ids.len()];
    for id in owned {
        if let Some(&i) = ids.get(id.as_str()) {
            mine[i as usize] = true;
        }
    }
    let n = ix
        .totals()
        .iter()
        .filter(|t| mine[t.point as usize] && meta.rows(t.point as usize) == t.rows as usize)
        .count();
    if n == owned.len() && !ix.torn {
        let runs = ix.grouped(|t| mine[t.point as usize], true);
        match meta.table {
            TableFormat::Csv => rewrite(dir, &meta.columns(), &ix, &runs)?,
            TableFormat::Parquet => {
                let mut from = RunReader::open(&ix.path)?;
                let staged = dir.stage("points.parquet")?;
                let mut w = RowWriter::parquet(staged, meta.typed_columns())?;
                w.copy(&mut from, &runs)?;
                dir.replace_staged(vec![w.finish()?])?;
                remove(&path)?;
            }
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sweep.json of `axes` axes of `values` values each, declaring `count` points.
    fn meta_json(dir: &Path, axes: usize, values: usize, count: u64) {
        let vals: Vec<String> = (0..values).map(|i| i.to_string()).collect();
        let axis = format!("[{}]", vals.join(","));
        let names: Vec<String> = (0..axes).map(|i| format!("\"a{i}\"")).collect();
        let text = format!(
            r#"{{"format": "{FORMAT}", "sresim_version": "0", "grid": "g.toml", "fingerprint": "f",
            "axes": [{}], "modes": ["dense"], "shard": null, "point_count": {count},
            "workloads": [{{"name": "lenet5", "rows": 2}}], "values": [{}], "explicit": null}}"#,
            names.join(","),
            vec![axis; axes].join(",")
        );
        std::fs::write(dir.join("sweep.json"), text).unwrap();
    }

    /// A key named twice in sweep.json is refused, not read as its last value: its typed
    /// readers (Head, Meta and what they hold) refuse a repeated field.
    #[test]
    fn a_repeated_key_of_sweep_json_is_refused() {
        let d = tempfile::tempdir().unwrap();
        meta_json(d.path(), 2, 3, 9);
        let path = d.path().join("sweep.json");
        let text = std::fs::read_to_string(&path).unwrap();
        for (key, twice) in [
            (
                "\"fingerprint\": \"f\",",
                "\"fingerprint\": \"g\", \"fingerprint\": \"f\",",
            ),
            (
                "\"point_count\": 9,",
                "\"point_count\": 9, \"point_count\": 4,",
            ),
            (
                "{\"name\": \"lenet5\",",
                "{\"name\": \"lenet5\", \"name\": \"vgg16\",",
            ),
        ] {
            assert!(text.contains(key), "{key}");
            std::fs::write(&path, text.replacen(key, twice, 1)).unwrap();
            let e = Meta::read(d.path()).unwrap_err().to_string();
            assert!(e.contains("duplicate field"), "{key}: {e}");
        }
    }

    #[test]
    fn declared_point_counts_are_checked_products_within_the_limit() {
        let d = tempfile::tempdir().unwrap();
        meta_json(d.path(), 2, 3, 9);
        assert_eq!(Meta::read(d.path()).unwrap().ids().len(), 9);
        // 2^16 values on 4 axes: 2^64 points, which wrap to 0 in u64.
        meta_json(d.path(), 4, 1 << 16, 0);
        let e = Meta::read(d.path()).unwrap_err().to_string();
        assert!(e.ends_with("sweep.json: point_count: 0 is not the number of points its workloads and axes describe"), "{e}");
        // 3000^3 points, declared as such: refused before 2.7e10 ids are listed.
        meta_json(d.path(), 3, 3000, 27_000_000_000);
        let e = Meta::read(d.path()).unwrap_err().to_string();
        assert!(e.ends_with("sweep.json: point_count: 27000000000 points, more than the limit of 67108864 a sweep"), "{e}");
    }
}
