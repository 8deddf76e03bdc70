//! sweep.json: what grid a sweep directory belongs to ([`Meta`], its format and the
//! fields every format has, [`Head`]), the point ids it regenerates ([`Ids`]), the format
//! of the points table ([`TableFormat`]), and the share of the points a directory holds
//! ([`Shard`], `--shard I/N`, and [`select`]). Below the store, the index, the recheck and
//! the merge, which all read it.

use super::grid::point_id;
use super::plan::{columns, Plan};
use super::value::AxisValue;
use crate::grid::MAX_GRID_POINTS;
use anyhow::{anyhow, bail, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::str::FromStr;

pub const FORMAT: &str = "sresim-sweep-2";
/// The format of sweep.json before points were regenerated from the grid: it listed
/// every point. `sweep --resume` rewrites such a file; `merge` asks for that.
pub const FORMAT_1: &str = "sresim-sweep-1";

/// sweep.json: what grid the directory belongs to, described so that every point (its
/// id, workload, axis values and row count) is regenerated from it. Its size is that of
/// the grid file, whatever the number of points.
///
/// A field sresim does not write is refused (as in shard.json, grids and configs): it
/// marks an edited file or another format.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
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
#[serde(deny_unknown_fields)]
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
    /// Refuses a point of `points` (grid indices) that the shard this sweep.json names
    /// does not own: a shard's directory holds its own points only, so a point of
    /// another shard there was written by no sweep (a resume would drop it without a
    /// word, a merge would take it as this shard's). One pass over the grid's ids.
    pub fn check_owned(
        &self,
        table: &Path,
        ids: &Ids,
        points: impl IntoIterator<Item = usize>,
    ) -> Result<()> {
        let Some(s) = self.shard else {
            return Ok(());
        };
        let of = shard_of(&ids.ids, s.count);
        for p in points {
            if of[p] != s.index {
                bail!(
                    "{}: point {}: belongs to shard {}/{}, not to this directory's shard {}/{} (its sweep.json): the table was not written by this shard's sweep",
                    table.display(),
                    ids.text(p),
                    of[p],
                    s.count,
                    s.index,
                    s.count
                );
            }
        }
        Ok(())
    }

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

    /// Refuses a description sresim could not have written: modes that are not mode names
    /// or named twice, axes named twice or empty workload names (`dir` names the file).
    pub fn check_valid(&self, dir: &Path) -> Result<()> {
        let file = dir.join("sweep.json");
        let f = file.display();
        if self.modes.is_empty() {
            bail!("{f}: modes: none (a sweep runs at least one mode)");
        }
        for (i, m) in self.modes.iter().enumerate() {
            if m.parse::<crossbar::Mode>().is_err() {
                let shown: String = m.chars().take(40).collect();
                bail!(
                    "{f}: modes: {shown:?} is not a mode (expected some of {})",
                    crossbar::Mode::ALL.map(|m| m.to_string()).join(", ")
                );
            }
            if self.modes[..i].contains(m) {
                bail!("{f}: modes: {m} is named twice");
            }
        }
        for (i, a) in self.axes.iter().enumerate() {
            if self.axes[..i].contains(a) {
                let shown: String = a.chars().take(40).collect();
                bail!("{f}: axes: {shown:?} is named twice");
            }
        }
        Ok(())
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

pub(crate) fn read_json<T: serde::de::DeserializeOwned>(dir: &Path) -> Result<T> {
    let path = dir.join("sweep.json");
    let file = workload::files::open(&path, &path.display().to_string()).map_err(|e| anyhow!(e))?;
    serde_json::from_reader(std::io::BufReader::with_capacity(1 << 16, file))
        .map_err(|e| anyhow!("{}: not a sweep description: {e}", path.display()))
}

pub(crate) fn check_format(dir: &Path, format: &str) -> Result<()> {
    if format != FORMAT {
        bail!(
            "{}: format: '{format}' is not {FORMAT}",
            dir.join("sweep.json").display()
        );
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawShard")]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

/// A shard as a file states it, before the check every shard passes (a sweep.json that
/// says 5/2 or 0/0 describes no shard: refused where it is read, not at its use).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShard {
    index: usize,
    count: usize,
}

impl TryFrom<RawShard> for Shard {
    type Error = String;
    fn try_from(r: RawShard) -> Result<Shard, String> {
        match r.count > 0 && r.index < r.count {
            true => Ok(Shard {
                index: r.index,
                count: r.count,
            }),
            false => Err(format!(
                "shard {}/{} is not I/N with 0 <= I < N",
                r.index, r.count
            )),
        }
    }
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

/// The indices (in grid order) of the points `shard` owns. `ids` are the point ids, as
/// text or as the numbers of their hex digits (one order either way).
pub fn select<T: Ord + Copy + std::hash::Hash>(ids: &[T], shard: Option<Shard>) -> Vec<usize> {
    let Some(s) = shard else {
        return (0..ids.len()).collect();
    };
    let of = shard_of(ids, s.count);
    (0..ids.len()).filter(|&i| of[i] == s.index).collect()
}

/// The shard of `count` that holds each point of `ids` (distinct ids): its id's rank
/// among them, modulo `count`. Linear in the points whatever `count` says (a sweep.json is
/// data: its shard count may be 2^64 - 1).
pub fn shard_of<T: Ord + Copy>(ids: &[T], count: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_unstable_by_key(|&i| ids[i]);
    let mut of = vec![0; ids.len()];
    for (rank, &i) in order.iter().enumerate() {
        of[i] = rank % count.max(1);
    }
    of
}
