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

use super::grid::point_id;
use super::index::{index, index_parquet, Index, RowWriter, Run, RunReader, Total};
use super::plan::{columns, Plan};
use super::shard::Shard;
use super::value::AxisValue;
use anyhow::{anyhow, bail, Context, Result};
use outdir::OutputDir;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub const FORMAT: &str = "sresim-sweep-2";
/// Most points of a sweep (2^26), the grid parser's limit: a sweep.json declaring more is
/// refused before its points are listed.
pub use crate::grid::MAX_GRID_POINTS;
/// The format of sweep.json before points were regenerated from the grid: it listed
/// every point. `sweep --resume` rewrites such a file; `merge` asks for that.
pub const FORMAT_1: &str = "sresim-sweep-1";

/// sweep.json: what grid the directory belongs to, described so that every point (its
/// id, workload, axis values and row count) is regenerated from it. Its size is that of
/// the grid file, whatever the number of points.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Meta {
    pub format: String,
    pub sresim_version: String,
    /// The grid file the sweep was started with (for people; identity is the fingerprint).
    pub grid: String,
    pub fingerprint: String,
    /// The axis columns: the [axes] keys in file order, then the explicit list's keys.
    pub axes: Vec<String>,
    pub modes: Vec<String>,
    /// The share of the points this directory holds; None: all of them.
    pub shard: Option<Shard>,
    /// The format of the points table: csv (points.csv) or parquet (points.parquet,
    /// written when every point of the directory is complete).
    #[serde(default)]
    pub table: TableFormat,
    /// How many points the grid has (not only the shard's).
    pub point_count: usize,
    /// The grid's workloads, outermost in grid order, and the rows each point of one
    /// writes: (layers + 1) x modes.
    pub workloads: Vec<WorkloadMeta>,
    /// The values of each [axes] axis, in file order (the last varies fastest).
    pub values: Vec<Vec<AxisValue>>,
    /// The explicit point list (`[[points]]`), innermost: one row of values per entry,
    /// for the last keys of `axes`.
    pub explicit: Option<Vec<Vec<AxisValue>>>,
    /// Columns after those of layers.csv (functional, chip, accuracy figures: see
    /// docs/sweeps.md); absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_columns: Vec<String>,
}

/// A workload of the grid and the rows each of its points writes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkloadMeta {
    pub name: String,
    pub rows: usize,
}

/// The format of the points table, as sweep.json names it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum TableFormat {
    #[default]
    Csv,
    Parquet,
}

impl From<sim::format::Format> for TableFormat {
    fn from(f: sim::format::Format) -> TableFormat {
        match f {
            sim::format::Format::Csv => TableFormat::Csv,
            sim::format::Format::Parquet => TableFormat::Parquet,
        }
    }
}

impl TableFormat {
    pub fn format(self) -> sim::format::Format {
        match self {
            TableFormat::Csv => sim::format::Format::Csv,
            TableFormat::Parquet => sim::format::Format::Parquet,
        }
    }
}

/// The points of a grid as [`Meta`] regenerates them: ids in grid order (12 hex digits
/// each, held as the number they spell) and a lookup from id to grid index. About 24
/// bytes a point.
#[derive(Debug, Clone)]
pub struct Ids {
    /// In grid order.
    pub ids: Vec<u64>,
    /// (id, grid index), sorted by id.
    sorted: Vec<(u64, u32)>,
    /// Hex digits of every id.
    width: usize,
}

impl Ids {
    /// Ids given as text (all of one width, hex digits).
    pub fn of<'a>(ids: impl Iterator<Item = &'a str>) -> Ids {
        let mut width = 0;
        let ids: Vec<u64> = ids
            .map(|id| {
                width = id.len();
                u64::from_str_radix(id, 16).unwrap_or(u64::MAX)
            })
            .collect();
        Ids::new(ids, width)
    }

    fn new(ids: Vec<u64>, width: usize) -> Ids {
        let mut sorted: Vec<(u64, u32)> = ids
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, i as u32))
            .collect();
        sorted.sort_unstable();
        Ids { ids, sorted, width }
    }

    /// The grid index of the point `id`.
    pub fn get(&self, id: &str) -> Option<&u32> {
        let ok =
            id.len() == self.width && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        let n = u64::from_str_radix(id, 16).ok().filter(|_| ok)?;
        let i = self.sorted.binary_search_by_key(&n, |p| p.0).ok()?;
        Some(&self.sorted[i].1)
    }

    /// The id of the point at grid index `i`, as text.
    pub fn text(&self, i: usize) -> String {
        format!("{:0w$x}", self.ids[i], w = self.width)
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

impl Meta {
    pub fn of(plan: &Plan, shard: Option<Shard>, table: sim::format::Format) -> Meta {
        let per = plan.points.len() / plan.grid.workloads.len().max(1);
        Meta {
            format: FORMAT.into(),
            sresim_version: env!("CARGO_PKG_VERSION").into(),
            grid: plan.grid.path.display().to_string(),
            fingerprint: plan.fingerprint.clone(),
            axes: plan.grid.axis_keys(),
            modes: plan.grid.modes.iter().map(|m| m.to_string()).collect(),
            shard,
            table: table.into(),
            point_count: plan.points.len(),
            workloads: plan
                .grid
                .workloads
                .iter()
                .enumerate()
                .map(|(w, name)| WorkloadMeta {
                    name: name.clone(),
                    rows: plan.rows.get(w * per).copied().unwrap_or(0),
                })
                .collect(),
            values: plan.grid.axes.iter().map(|a| a.values.clone()).collect(),
            explicit: plan.grid.explicit.as_ref().map(|(_, rows)| rows.clone()),
            extra_columns: plan.extras.columns(),
        }
    }

    /// Reads `dir/sweep.json` (streamed: the text is never held whole).
    pub fn read(dir: &Path) -> Result<Meta> {
        let head: Head = read_json(dir)?;
        if head.format == FORMAT_1 {
            bail!(
                "{}: format: {FORMAT_1} (written by an earlier sresim, listing every point): run `sresim sweep --resume` on the directory with its grid to rewrite it",
                dir.join("sweep.json").display()
            );
        }
        check_format(dir, &head.format)?;
        let meta: Meta = read_json(dir)?;
        // Checked: a product that wraps (to 0, say) would pass for a small sweep and
        // then be walked point by point.
        let described = meta
            .values
            .iter()
            .map(Vec::len)
            .chain([
                meta.explicit.as_ref().map_or(1, Vec::len),
                meta.workloads.len(),
            ])
            .try_fold(1u64, |a, n| a.checked_mul(n as u64));
        bounds::size::at_most(meta.point_count as u64, MAX_GRID_POINTS, "points").map_err(|e| {
            anyhow::anyhow!(
                "{}: point_count: {e} a sweep",
                dir.join("sweep.json").display()
            )
        })?;
        if described != Some(meta.point_count as u64)
            || meta.values.len()
                + meta
                    .explicit
                    .as_ref()
                    .and_then(|e| e.first())
                    .map_or(0, Vec::len)
                != meta.axes.len()
        {
            bail!(
                "{}: point_count: {} is not the number of points its workloads and axes describe",
                dir.join("sweep.json").display(),
                meta.point_count
            );
        }
        Ok(meta)
    }

    /// The first field of the grid's description (axes, modes, points, workloads, values,
    /// explicit points, extra columns) in which `self` and `other` differ.
    pub fn differs(&self, other: &Meta) -> Option<&'static str> {
        let fields = [
            ("axes", self.axes == other.axes),
            ("modes", self.modes == other.modes),
            ("point_count", self.point_count == other.point_count),
            ("workloads", self.workloads == other.workloads),
            ("values", self.values == other.values),
            ("explicit", self.explicit == other.explicit),
            ("extra_columns", self.extra_columns == other.extra_columns),
        ];
        fields.iter().find(|(_, same)| !same).map(|(f, _)| *f)
    }

    /// The fingerprint, shard and points table format of `dir/sweep.json` (of either
    /// format), the rest skipped over.
    pub fn read_head(dir: &Path) -> Result<Head> {
        let head: Head = read_json(dir)?;
        if head.format != FORMAT_1 {
            check_format(dir, &head.format)?;
        }
        Ok(head)
    }

    /// The fingerprint of `dir/sweep.json`.
    pub fn read_fingerprint(dir: &Path) -> Result<String> {
        Ok(Meta::read_head(dir)?.fingerprint)
    }

    pub fn json(&self) -> Result<Vec<u8>> {
        Ok(serde_json::to_vec_pretty(self)?)
    }

    pub fn columns(&self) -> Vec<String> {
        columns(&self.axes, &self.extra_columns)
    }

    /// The columns of the points table, typed: `point` and `workload` text, each axis
    /// as its values' type (integers, floats — integers among floats too —, strings or
    /// booleans; a mix of others is text), the layers columns as in layers.parquet.
    pub fn typed_columns(&self) -> Vec<columnar::Column> {
        use columnar::Kind;
        let mut axis_values: Vec<Vec<&AxisValue>> =
            self.values.iter().map(|v| v.iter().collect()).collect();
        if let Some(rows) = &self.explicit {
            for k in 0..rows.first().map_or(0, Vec::len) {
                axis_values.push(rows.iter().filter_map(|r| r.get(k)).collect());
            }
        }
        let kind = |vs: &[&AxisValue]| {
            let all = |f: fn(&AxisValue) -> bool| vs.iter().all(|v| f(v));
            if all(|v| matches!(v, AxisValue::Int(_))) {
                Kind::Int
            } else if all(|v| matches!(v, AxisValue::Int(_) | AxisValue::Float(_))) {
                Kind::Float
            } else if all(|v| matches!(v, AxisValue::Bool(_))) {
                Kind::Bool
            } else {
                Kind::Text
            }
        };
        self.columns()
            .into_iter()
            .enumerate()
            .map(|(i, name)| {
                let k = match i.checked_sub(2).and_then(|a| axis_values.get(a)) {
                    Some(vs) => kind(vs),
                    None => sim::format::layers_kind(&name),
                };
                columnar::Column::new(name, k)
            })
            .collect()
    }

    /// Points per workload.
    fn per_workload(&self) -> usize {
        self.point_count / self.workloads.len().max(1)
    }

    /// The rows point `i` (grid order) writes.
    pub fn rows(&self, i: usize) -> usize {
        self.workloads[i / self.per_workload().max(1)].rows
    }

    /// Calls `f` with every point in grid order: its workload and axis values (aligned
    /// with `axes`). Nothing but the current point is held.
    pub fn each_point(&self, mut f: impl FnMut(&str, &[&AxisValue])) {
        let mut dims: Vec<Vec<Vec<&AxisValue>>> = self
            .values
            .iter()
            .map(|vs| vs.iter().map(|v| vec![v]).collect())
            .collect();
        if let Some(rows) = &self.explicit {
            dims.push(rows.iter().map(|r| r.iter().collect()).collect());
        }
        let mut at = vec![0usize; dims.len()];
        let mut values: Vec<&AxisValue> = Vec::with_capacity(self.axes.len());
        if dims.iter().any(Vec::is_empty) {
            return;
        }
        for w in &self.workloads {
            at.iter_mut().for_each(|a| *a = 0);
            loop {
                values.clear();
                for (d, &a) in dims.iter().zip(&at) {
                    values.extend(d[a].iter().copied());
                }
                f(&w.name, &values);
                // The odometer: the last dimension varies fastest.
                let mut done = true;
                for k in (0..dims.len()).rev() {
                    at[k] += 1;
                    if at[k] < dims[k].len() {
                        done = false;
                        break;
                    }
                    at[k] = 0;
                }
                if done {
                    break;
                }
            }
        }
    }

    /// The workload and the axis cells (as points.csv writes them) of point `i`, in grid
    /// order: the odometer of [`Meta::each_point`] read at `i`.
    pub fn point_cells(&self, i: usize) -> (&str, Vec<String>) {
        let per = self.per_workload().max(1);
        let workload = self.workloads.get(i / per).map_or("", |w| w.name.as_str());
        let mut rest = i % per;
        let explicit = self.explicit.as_deref().unwrap_or(&[]);
        let mut at = vec![0usize; self.values.len()];
        let row = match self.explicit.as_ref() {
            Some(rows) if !rows.is_empty() => {
                let r = rest % rows.len();
                rest /= rows.len();
                r
            }
            _ => 0,
        };
        for (k, vs) in self.values.iter().enumerate().rev() {
            let n = vs.len().max(1);
            at[k] = rest % n;
            rest /= n;
        }
        let mut cells: Vec<String> = self
            .values
            .iter()
            .zip(&at)
            .filter_map(|(vs, &a)| vs.get(a).map(AxisValue::csv))
            .collect();
        if let Some(r) = explicit.get(row) {
            cells.extend(r.iter().map(AxisValue::csv));
        }
        (workload, cells)
    }

    /// Every point's id, regenerated from the grid's description.
    pub fn ids(&self) -> Ids {
        let mut ids = Vec::with_capacity(self.point_count);
        self.each_point(|w, values| {
            let pairs: Vec<(&str, &AxisValue)> = self
                .axes
                .iter()
                .map(String::as_str)
                .zip(values.iter().copied())
                .collect();
            let id = point_id(w, &pairs);
            ids.push(u64::from_str_radix(&id, 16).unwrap_or(u64::MAX));
        });
        Ids::new(ids, 12)
    }
}

/// The fields of sweep.json that every format has.
#[derive(Debug, Deserialize)]
pub struct Head {
    pub format: String,
    pub fingerprint: String,
    #[serde(default)]
    pub shard: Option<Shard>,
    #[serde(default)]
    pub table: TableFormat,
}

fn read_json<T: serde::de::DeserializeOwned>(dir: &Path) -> Result<T> {
    let path = dir.join("sweep.json");
    let file = workload::files::open(&path, &path.display().to_string()).map_err(|e| anyhow!(e))?;
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
/// directory of another grid, shard or table format is, and a damaged points.csv is
/// repaired: complete points kept, a torn tail and incomplete points dropped, the header
/// rewritten. A sweep.json of the earlier format is rewritten in this one.
pub fn prepare(
    dir: &OutputDir,
    plan: &Plan,
    shard: Option<Shard>,
    resume: bool,
    format: sim::format::Format,
) -> Result<HashSet<String>> {
    let d = dir.path().display();
    let meta = Meta::of(plan, shard, format);
    let csv_path = dir.path().join("points.csv");
    let pq_path = dir.path().join("points.parquet");
    let has_meta = dir.path().join("sweep.json").exists();
    if !resume && (has_meta || csv_path.exists() || pq_path.exists()) {
        bail!("{d}: holds a sweep already (--resume continues it, or choose another --out)");
    }
    let empty = header_bytes(&meta.columns())?;
    if !has_meta {
        if csv_path.exists() || pq_path.exists() {
            bail!("{d}: has a points table but no sweep.json (not a sweep directory?)");
        }
        dir.replace(&[("sweep.json", &meta.json()?), ("points.csv", &empty)])?;
        return Ok(HashSet::new());
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
        return Ok(ix
            .totals()
            .iter()
            .map(|t| ids.text(t.point as usize))
            .collect());
    }
    if !csv_path.exists() {
        dir.replace(&[("points.csv", &empty)])?;
        return Ok(HashSet::new());
    }
    let ids = meta.ids();
    let ix = index(&csv_path, &meta.columns(), &ids)?;
    let totals = ix.totals();
    let whole = |t: &Total| meta.rows(t.point as usize) == t.rows as usize;
    let complete = totals
        .iter()
        .filter(|t| whole(t))
        .map(|t| ids.text(t.point as usize))
        .collect();
    if ix.torn || ix.headless || !totals.iter().all(whole) {
        rewrite(dir, &meta.columns(), &ix, &ix.grouped(whole, false))?;
    }
    Ok(complete)
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
