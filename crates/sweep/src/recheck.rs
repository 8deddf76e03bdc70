//! What a shard wrote, checked again before `merge` writes it (docs/sweeps.md, "Shards
//! and merge"): a points table is data another process (or a person) may have edited, so
//! every row of a point is re-read cell by cell: the workload and axis cells must be the
//! ones the point's id stands for (regenerated from sweep.json), and every other cell
//! must parse as its column's type, in the form a writer prints it ([`canonical`]) (points.parquet's typed columns: counts unsigned
//! 64-bit integers, figures numbers, flags true or false; an empty cell a null) and pass
//! the finite gate (`bounds::finite`: no NaN, no infinity, no count saturated at
//! 2^64 - 1). The cells the point's id determines beyond its axes are checked too: the
//! `mode` of each row is the grid's (sweep.json's `modes`, in order, once per layer), the
//! last rows are `TOTAL`, `network`, `layer` and `kind` are those of every other point of
//! the same workload (a workload's layers do not depend on the axes; a difference names
//! both files, as which was edited cannot be told), `signed` is 0 or 1, `adc_bits` 1 to
//! 64 and `samples` at least 1 and the same in every row of the point. The one check of
//! merged cells; the writer of a sweep's own rows goes through the gate of `sim::report`
//! instead.

use super::index::{Run, RunReader};
use super::meta::{Ids, Meta};
use anyhow::{bail, Result};
use columnar::Kind;
use csv::ByteRecord;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

/// The workload-determined cells of a point's rows (network, layer, kind per row), with
/// the id of the point and the file they were first read from.
type Shape = (String, String, Vec<[String; 3]>);

/// The columns of a grid's points table, typed, and its points.
pub struct Recheck<'a> {
    meta: &'a Meta,
    ids: &'a Ids,
    names: Vec<String>,
    kinds: Vec<Kind>,
    /// The axis columns, after `point` and `workload`.
    axes: usize,
    /// Columns every row a run writes fills (`sim::report::never_empty`).
    filled: Vec<bool>,
    /// The ends of each numeric result column's domain ([`super::names`]: an energy is
    /// never negative, a top-1 lies in [0, 1], a drop in [-1, 1]); None for any value.
    domain: Vec<Option<(f64, f64)>>,
    /// The (low, high) column pairs of the intervals (`<f>_ci_low`, `<f>_ci_high`).
    intervals: Vec<(usize, usize)>,
    /// Per workload, the network, layer and kind cells of the first point checked.
    shapes: Mutex<HashMap<String, Shape>>,
    /// Whether the first point checked ran the cycle engine (the grid's one `engine`)
    /// and, per workload, whether its first point had the digital unit's figures: with
    /// the id of that point and its file.
    groups: Mutex<HashMap<String, (bool, String, String)>>,
    /// The accuracy run's figures a grid fixes (`accuracy_draws` for the grid,
    /// `accuracy_samples` per workload) as the first point checked wrote them: with the
    /// id of that point and its file.
    figures: Mutex<HashMap<String, (String, String, String)>>,
    /// The grid's own figures, when the grid was read (`sweep --resume`; merge has only
    /// sweep.json, which does not hold them).
    grid: Option<GridFigures>,
}

/// What a grid file says of its accuracy columns: `draws` (the `accuracy_draws` of every
/// point, when above 1) and `accuracy_samples` (when set; else each bundle's samples).
#[derive(Debug, Clone, Copy)]
pub struct GridFigures {
    pub draws: u32,
    pub accuracy_samples: Option<usize>,
}

impl<'a> Recheck<'a> {
    pub fn new(meta: &'a Meta, ids: &'a Ids) -> Recheck<'a> {
        let cols = meta.typed_columns();
        Recheck {
            meta,
            ids,
            names: cols.iter().map(|c| c.name.clone()).collect(),
            kinds: cols.iter().map(|c| c.kind).collect(),
            axes: meta.axes.len(),
            filled: cols
                .iter()
                .enumerate()
                .map(|(i, c)| i >= 2 + meta.axes.len() && sim::report::never_empty(&c.name))
                .collect(),
            domain: cols
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let numeric = matches!(c.kind, Kind::Float | Kind::Int | Kind::Count);
                    let d = super::names::known(&c.name).map(|n| n.domain);
                    match d {
                        Some(d) if numeric && i >= 2 + meta.axes.len() => {
                            Some(d.range()).filter(|(lo, hi)| lo.is_finite() || hi.is_finite())
                        }
                        _ => None,
                    }
                })
                .collect(),
            intervals: cols
                .iter()
                .enumerate()
                .filter(|(i, _)| *i >= 2 + meta.axes.len())
                .filter_map(|(i, c)| {
                    let stem = c.name.strip_suffix("_ci_low")?;
                    let high = format!("{stem}_ci_high");
                    let j = cols.iter().position(|h| h.name == high)?;
                    Some((i, j))
                })
                .collect(),
            shapes: Mutex::new(HashMap::new()),
            groups: Mutex::new(HashMap::new()),
            figures: Mutex::new(HashMap::new()),
            grid: None,
        }
    }

    /// The same check, which also holds the accuracy columns to the grid's figures.
    pub fn with_grid(self, grid: GridFigures) -> Recheck<'a> {
        Recheck {
            grid: Some(grid),
            ..self
        }
    }

    /// `accuracy_samples` and `accuracy_draws` (the cells of the TOTAL rows of an accuracy
    /// point): a count of at least 1 (draws: 2 to [`sim::draws::MAX_DRAWS`]), the grid's
    /// when it is known, the same in every row of the point, and the same in every point
    /// of the grid (draws) or of the workload (samples): one accuracy run per point, one
    /// grid per merge.
    fn accuracy_figures(
        &self,
        path: &Path,
        id: &str,
        workload: &str,
        rows: &[ByteRecord],
    ) -> Result<()> {
        let p = path.display();
        for (name, scope) in [
            (super::extra::ACCURACY_DRAWS, String::new()),
            (super::extra::ACCURACY_SAMPLES, format!(" {workload}")),
        ] {
            let Some(i) = self.names.iter().position(|n| n == name) else {
                continue;
            };
            let grid = self
                .grid
                .map(|g| match name == super::extra::ACCURACY_DRAWS {
                    true => Some(g.draws as u64),
                    false => g.accuracy_samples.map(|n| n as u64),
                });
            let mut first: Option<(usize, String)> = None;
            for (r, row) in rows.iter().enumerate() {
                let cell = String::from_utf8_lossy(row.get(i).unwrap_or_default()).into_owned();
                if cell.is_empty() {
                    continue;
                }
                let at = || format!("{p}: point {id}, its row {}: {name}", r + 1);
                let quoted = bounds::text::printable(&cell).into_owned();
                let n = cell.parse::<u64>().unwrap_or(0);
                if name == super::extra::ACCURACY_DRAWS
                    && !(2..=u64::from(sim::draws::MAX_DRAWS)).contains(&n)
                {
                    bail!(
                        "{}: '{quoted}' is not a number of device draws (2 to {}; a grid of one draw has no such column)",
                        at(),
                        sim::draws::MAX_DRAWS
                    );
                }
                if n == 0 {
                    bail!("{}: '{quoted}' is not a positive count of samples", at());
                }
                if let Some(Some(want)) = grid {
                    if n != want {
                        let key = match name == super::extra::ACCURACY_DRAWS {
                            true => "draws",
                            false => "accuracy_samples",
                        };
                        bail!("{}: '{quoted}' is not the grid's {key} ({want})", at());
                    }
                }
                match &first {
                    None => first = Some((r, cell)),
                    Some((fr, f)) if *f != cell => bail!(
                        "{}: '{quoted}' differs from '{}' in the point's row {}: a point's rows are of one accuracy run, so one of the two was edited",
                        at(),
                        bounds::text::printable(f),
                        fr + 1
                    ),
                    Some(_) => {}
                }
            }
            let Some((r, cell)) = first else { continue };
            let key = format!("{name}{scope}");
            let mut figures = self
                .figures
                .lock()
                .map_err(|_| anyhow::anyhow!("{p}: the check of earlier points failed"))?;
            match figures.get(&key) {
                None => {
                    figures.insert(key, (cell, id.to_string(), p.to_string()));
                }
                Some((want, fid, file)) if *want != cell => {
                    let every = match scope.is_empty() {
                        true => "every point of a grid has the grid's draws".to_string(),
                        false => format!(
                            "every point of workload {workload} has the grid's accuracy_samples"
                        ),
                    };
                    bail!(
                        "{p}: point {id}, its row {}: {name}: '{}' differs from '{}' in point {fid} of {file}: {every}, so one of the two files was edited",
                        r + 1,
                        bounds::text::printable(&cell),
                        bounds::text::printable(want)
                    );
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// The cells of `rows` (point `id` of `workload`, in `path`) that the point's id
    /// determines beyond its axes: the modes in the grid's order, `TOTAL` last, `signed`
    /// 0 or 1, one `samples` of at least 1, and network, layer and kind as in every
    /// other point of the workload.
    fn determined(&self, path: &Path, id: &str, workload: &str, rows: &[ByteRecord]) -> Result<()> {
        let p = path.display();
        let col = |name: &str| self.names.iter().position(|n| n == name);
        let text = |row: &ByteRecord, i: Option<usize>| -> String {
            i.and_then(|i| row.get(i))
                .map(|c| String::from_utf8_lossy(c).into_owned())
                .unwrap_or_default()
        };
        let (mode, layer) = (col("mode"), col("layer"));
        let (network, kind) = (col("network"), col("kind"));
        let (signed, samples) = (col("signed"), col("samples"));
        let adc_bits = col("adc_bits");
        let m = self.meta.modes.len().max(1);
        let mut shape = Vec::with_capacity(rows.len());
        let mut first_samples: Option<String> = None;
        for (r, row) in rows.iter().enumerate() {
            let at = || format!("{p}: point {id}, its row {}", r + 1);
            let quoted = |s: &str| bounds::text::printable(s).into_owned();
            if let (Some(i), Some(want)) = (mode, self.meta.modes.get(r % m)) {
                let got = text(row, Some(i));
                if &got != want {
                    bail!(
                        "{}: mode: '{}' contradicts the point's id (the grid's modes put {want} in this row)",
                        at(),
                        quoted(&got)
                    );
                }
            }
            let total = r + m >= rows.len();
            let l = text(row, layer);
            if layer.is_some() && (l == "TOTAL") != total {
                bail!(
                    "{}: layer: '{}' contradicts the point's id (the last {m} rows of a point are TOTAL, and only they)",
                    at(),
                    quoted(&l)
                );
            }
            let bits = text(row, adc_bits);
            if adc_bits.is_some()
                && !bits.is_empty()
                && !bits.parse::<u32>().is_ok_and(|b| (1..=64).contains(&b))
            {
                bail!(
                    "{}: adc_bits: '{}' is not an ADC resolution (1 to 64 bits)",
                    at(),
                    quoted(&bits)
                );
            }
            let sg = text(row, signed);
            if signed.is_some() && !matches!(sg.as_str(), "0" | "1" | "") {
                bail!("{}: signed: '{}' is not a flag (0 or 1)", at(), quoted(&sg));
            }
            if samples.is_some() {
                let n = text(row, samples);
                if n.parse::<u64>().map_or(true, |v| v == 0) {
                    bail!(
                        "{}: samples: '{}' is not a positive count of samples",
                        at(),
                        quoted(&n)
                    );
                }
                match &first_samples {
                    Some(f) if *f != n => bail!(
                        "{}: samples: '{}' differs from the point's first row ({f}): a point runs one number of samples",
                        at(),
                        quoted(&n)
                    ),
                    Some(_) => {}
                    None => first_samples = Some(n),
                }
            }
            shape.push([text(row, network), l, text(row, kind)]);
        }
        self.presence(path, id, workload, rows)?;
        self.accuracy_figures(path, id, workload, rows)?;
        let mut shapes = self
            .shapes
            .lock()
            .map_err(|_| anyhow::anyhow!("{p}: the check of earlier points failed"))?;
        match shapes.get(workload) {
            None => {
                shapes.insert(workload.to_string(), (id.to_string(), p.to_string(), shape));
            }
            Some((first, file, want)) => {
                for (r, (got, want)) in shape.iter().zip(want).enumerate() {
                    for (k, name) in ["network", "layer", "kind"].iter().enumerate() {
                        if got[k] != want[k] {
                            bail!(
                                "{p}: point {id}, its row {}: {name}: '{}' differs from '{}' in that row of point {first} of {file}: every point of workload {workload} has the same layers, so one of the two files was edited",
                                r + 1,
                                bounds::text::printable(&got[k]),
                                bounds::text::printable(&want[k])
                            );
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Which cells of each row are filled, decided per column as the writer decides it
    /// (`sim::report::record`, `sim::digital::values`), so that a cell emptied where the
    /// writer fills it, or filled where it leaves it empty, is refused:
    ///
    /// - `kind`, `passes`, `input_cycles`, `adc_bits`, `signed`: filled on layer rows,
    ///   empty on TOTAL rows;
    /// - `speedup_vs_dense`: filled when the grid's modes have dense and the row's
    ///   `cycles` is above 0; `energy_saving_vs_dense`: when they have dense and the
    ///   dense row of the same layer (or the dense TOTAL) has `energy_pj` above 0;
    /// - the cycle engine's columns: `queue_depth`, `stall_cycles`, `wait_cycles`,
    ///   `psum_peak` on every row of a cycle-engine point and on none of another engine's,
    ///   the per-stage columns on the rows of the modes that have the stage; one engine
    ///   for every point of the grid;
    /// - the digital unit's columns: every cell of every row of a workload with the
    ///   unit's work (a transformer), none of another's; the same for every point of a
    ///   workload.
    ///
    /// What a point is (cycle engine or not, digital or not, which stages a mode has) is
    /// read from the most of its cells, so that the row that differs is the one named.
    fn presence(&self, path: &Path, id: &str, workload: &str, rows: &[ByteRecord]) -> Result<()> {
        let p = path.display();
        let col = |name: &str| self.names.iter().position(|n| n == name);
        let filled = |row: &ByteRecord, i: usize| row.get(i).is_some_and(|c| !c.is_empty());
        let m = self.meta.modes.len().max(1);
        let n = rows.len();
        let total = |r: usize| r + m >= n;
        let refuse = |r: usize, i: usize, want: bool, why: &str| -> anyhow::Error {
            let cell = rows[r].get(i).unwrap_or_default();
            let name = &self.names[i];
            match want {
                true => anyhow::anyhow!(
                    "{p}: point {id}, its row {}: {name}: empty, but a sweep fills it here ({why})",
                    r + 1
                ),
                false => anyhow::anyhow!(
                    "{p}: point {id}, its row {}: {name}: '{}', but a sweep leaves it empty here ({why})",
                    r + 1,
                    bounds::text::printable(&String::from_utf8_lossy(cell))
                ),
            }
        };
        for name in ["kind", "passes", "input_cycles", "adc_bits", "signed"] {
            let Some(i) = col(name) else { continue };
            for (r, row) in rows.iter().enumerate() {
                if filled(row, i) == total(r) {
                    let why = match total(r) {
                        true => "a TOTAL row has none",
                        false => "every layer row has one",
                    };
                    return Err(refuse(r, i, !total(r), why));
                }
            }
        }
        let number = |row: &ByteRecord, i: Option<usize>| -> Option<f64> {
            std::str::from_utf8(row.get(i?)?).ok()?.parse().ok()
        };
        let dense = self.meta.modes.iter().position(|x| x == "dense");
        let (cycles, energy) = (col("cycles"), col("energy_pj"));
        for (r, row) in rows.iter().enumerate() {
            let dense_row = dense.and_then(|d| rows.get(r - r % m + d));
            if let Some(i) = col("speedup_vs_dense") {
                let want = dense.is_some() && number(row, cycles).is_some_and(|c| c > 0.0);
                if filled(row, i) != want {
                    let why = match (dense.is_some(), want) {
                        (false, _) => "the grid's modes have no dense",
                        (true, false) => "the row's cycles are 0",
                        (true, true) => "the grid runs dense and the row's cycles are above 0",
                    };
                    return Err(refuse(r, i, want, why));
                }
            }
            if let Some(i) = col("energy_saving_vs_dense") {
                let want = dense_row.is_some_and(|d| number(d, energy).is_some_and(|e| e > 0.0));
                if filled(row, i) != want {
                    let why = match (dense.is_some(), want) {
                        (false, _) => "the grid's modes have no dense",
                        (true, false) => "the dense row's energy_pj is 0",
                        (true, true) => {
                            "the grid runs dense and the dense row's energy_pj is above 0"
                        }
                    };
                    return Err(refuse(r, i, want, why));
                }
            }
        }
        // A point's kind, read from the most of its cells: whether they are filled.
        let most = |cols: &[usize], rs: &mut dyn Iterator<Item = usize>| -> bool {
            let (mut yes, mut all) = (0usize, 0usize);
            for r in rs {
                for &i in cols {
                    all += 1;
                    yes += usize::from(filled(&rows[r], i));
                }
            }
            2 * yes > all
        };
        let general: Vec<usize> = sim::report::CYCLE_COLUMNS[..4]
            .iter()
            .filter_map(|c| col(c))
            .collect();
        let stages: Vec<usize> = sim::report::CYCLE_COLUMNS[4..]
            .iter()
            .filter_map(|c| col(c))
            .collect();
        let digital: Vec<usize> = sim::digital::COLUMNS
            .iter()
            .filter_map(|c| col(c))
            .collect();
        let cycle = most(&general, &mut (0..n));
        self.same("engine", "the grid's one engine", cycle, path, id)?;
        let why = match cycle {
            true => "the point ran the cycle engine",
            false => "the point did not run the cycle engine",
        };
        for (r, row) in rows.iter().enumerate() {
            for &i in &general {
                if filled(row, i) != cycle {
                    return Err(refuse(r, i, cycle, why));
                }
            }
        }
        for k in 0..m {
            for &i in &stages {
                let want = cycle && most(&[i], &mut (k..n).step_by(m));
                for r in (k..n).step_by(m) {
                    if filled(&rows[r], i) != want {
                        let why = match (cycle, want) {
                            (false, _) => why,
                            (true, false) => "the row's mode has no such stage",
                            (true, true) => "the row's mode has this stage",
                        };
                        return Err(refuse(r, i, want, why));
                    }
                }
            }
        }
        if !digital.is_empty() {
            let has = most(&digital, &mut (0..n));
            let key = format!("digital {workload}");
            let what = format!("every point of workload {workload}");
            self.same(&key, &what, has, path, id)?;
            let why = match has {
                true => "the workload has the digital unit's work",
                false => "the workload has no digital unit's work (not a transformer)",
            };
            for (r, row) in rows.iter().enumerate() {
                for &i in &digital {
                    if filled(row, i) != has {
                        return Err(refuse(r, i, has, why));
                    }
                }
            }
        }
        Ok(())
    }

    /// Refuses a point whose `value` of `key` (cycle engine, digital figures) differs
    /// from the first point's checked: `what` says which points share it.
    fn same(&self, key: &str, what: &str, value: bool, path: &Path, id: &str) -> Result<()> {
        let p = path.display();
        let mut groups = self
            .groups
            .lock()
            .map_err(|_| anyhow::anyhow!("{p}: the check of earlier points failed"))?;
        match groups.get(key) {
            None => {
                groups.insert(key.to_string(), (value, id.to_string(), p.to_string()));
            }
            Some((first, fid, file)) if *first != value => bail!(
                "{p}: point {id}: the {key} columns are {} but {} in point {fid} of {file}: {what} fills the same ones, so one of the two files was edited",
                if value { "filled" } else { "empty" },
                if *first { "filled" } else { "empty" },
            ),
            Some(_) => {}
        }
        Ok(())
    }

    /// Refuses, naming `path`, the point and the column, a row of point `point` (its
    /// grid index) that is not what a sweep of this grid writes.
    pub fn rows(&self, path: &Path, point: u32, rows: &[ByteRecord]) -> Result<()> {
        let id = self.ids.text(point as usize);
        let (workload, axes) = self.meta.point_cells(point as usize);
        let p = path.display();
        for (r, row) in rows.iter().enumerate() {
            let at = || format!("{p}: point {id}, its row {}", r + 1);
            if row.len() != self.names.len() {
                bail!(
                    "{}: {} cells, the header has {}",
                    at(),
                    row.len(),
                    self.names.len()
                );
            }
            let text = |i: usize| std::str::from_utf8(&row[i]).unwrap_or("\u{fffd}");
            if text(1) != workload {
                bail!(
                    "{}: workload: '{}' contradicts the point's id (its workload is {workload})",
                    at(),
                    text(1)
                );
            }
            for (k, want) in axes.iter().enumerate() {
                if text(2 + k) != want {
                    bail!(
                        "{}: {}: '{}' contradicts the point's id (its value is {want})",
                        at(),
                        self.names[2 + k],
                        text(2 + k)
                    );
                }
            }
            let layer = || format!("{} ({})", self.cell(row, "layer"), self.cell(row, "mode"));
            for i in 2 + self.axes..row.len() {
                let bytes = &row[i];
                // The cells a sweep writes pass at a glance (a merge of 4 GB reads some
                // 3e8 of them); anything else is parsed and told.
                if bytes.is_empty() && self.filled[i] {
                    bail!(
                        "{}: {}: empty, but every row a sweep writes fills it",
                        at(),
                        self.names[i]
                    );
                }
                if bytes.is_empty() || (plain(self.kinds[i], bytes) && self.glance(i, bytes)) {
                    continue;
                }
                let cell = text(i);
                let col = &self.names[i];
                let typed = match self.kinds[i] {
                    Kind::Text => Err(format!(
                        "{col}: {:?} holds a control character or is not UTF-8",
                        String::from_utf8_lossy(bytes)
                    )),
                    Kind::Count => match number::<u64>(cell) {
                        Some(u64::MAX) => Err(bounds::finite::NotFinite {
                            index: i,
                            figure: format!("{col} of {}", layer()),
                            value: cell.to_string(),
                            problem: bounds::finite::Problem::Saturated,
                        }
                        .to_string()),
                        Some(v) => self.in_domain(i, cell, v as f64),
                        None => Err(format!(
                            "{col}: '{cell}' is not a count (an unsigned 64-bit integer)"
                        )),
                    },
                    Kind::Int => match number::<i64>(cell) {
                        Some(v) => self.in_domain(i, cell, v as f64),
                        None => Err(format!("{col}: '{cell}' is not a 64-bit integer")),
                    },
                    Kind::Float => match cell.parse::<f64>() {
                        Ok(v) => bounds::finite::check(|| format!("{col} of {}", layer()), v)
                            .map_err(|e| e.to_string())
                            .and_then(|v| self.in_domain(i, cell, v).map(|()| v))
                            .and_then(|v| canonical(col, cell, v).map(|_| ())),
                        Err(_) => Err(format!("{col}: '{cell}' is not a number")),
                    },
                    Kind::Bool => match cell {
                        "true" | "false" => Ok(()),
                        _ => Err(format!("{col}: '{cell}' is not true or false")),
                    },
                };
                if let Err(e) = typed {
                    bail!("{}: {e}", at());
                }
            }
            // An interval's low end is at most its high end (both in the domain, above).
            for &(lo, hi) in &self.intervals {
                let (a, b) = (text(lo), text(hi));
                if let (Ok(x), Ok(y)) = (a.parse::<f64>(), b.parse::<f64>()) {
                    if x > y {
                        bail!(
                            "{}: {}: '{a}' is above {} '{b}': an interval's low end is at most its high end",
                            at(),
                            self.names[lo],
                            self.names[hi]
                        );
                    }
                }
            }
        }
        self.determined(path, &id, workload, rows)?;
        // The cells the writer derives from other cells of the point: the one place.
        super::derived::check(&self.names, &self.meta.modes, path, &id, rows)
    }

    /// Whether a cell the glance finds plain is inside column `i`'s domain without being
    /// parsed: any value, or a nonnegative quantity's cell without a `-`. A column with
    /// an upper end (a fraction, a drop, a saving) is always parsed: a glance cannot tell
    /// 1.7 from 0.7.
    fn glance(&self, i: usize, bytes: &[u8]) -> bool {
        match self.domain[i] {
            None => true,
            Some((lo, hi)) => lo == 0.0 && hi == f64::INFINITY && bytes[0] != b'-',
        }
    }

    /// A number of column `i` inside its quantity's domain (docs/errors.md, "Merged
    /// rows"): an energy, a time or a count of cycles is never negative (not even `-0`),
    /// a fraction lies in [0, 1], a drop in [-1, 1], a saving at most 1.
    fn in_domain(&self, i: usize, cell: &str, v: f64) -> Result<(), String> {
        let Some((lo, hi)) = self.domain[i] else {
            return Ok(());
        };
        let col = &self.names[i];
        if lo == 0.0 && hi == f64::INFINITY {
            if v.is_sign_negative() {
                return Err(format!(
                    "{col}: '{cell}' is negative, outside the quantity's domain [0, inf)"
                ));
            }
            return Ok(());
        }
        if v < lo || v > hi {
            let low = match lo.is_finite() {
                true => format!("[{lo}"),
                false => "(-inf".to_string(),
            };
            let high = match hi.is_finite() {
                true => format!("{hi}]"),
                false => "inf)".to_string(),
            };
            return Err(format!(
                "{col}: '{cell}' is outside the quantity's domain {low}, {high}"
            ));
        }
        Ok(())
    }

    /// The text of column `name` of `row` (empty when the table has no such column).
    fn cell<'r>(&self, row: &'r ByteRecord, name: &str) -> &'r str {
        self.names
            .iter()
            .position(|n| n == name)
            .and_then(|i| row.get(i))
            .and_then(|c| std::str::from_utf8(c).ok())
            .unwrap_or("")
    }
}

/// Checks again, as merge does, the rows of `runs` (the complete points a resumed sweep
/// keeps, grouped by point) of the points table at `path`, which a resume has already
/// indexed: a points table is data, and a tampered `cycles` of -5 survived a resume and
/// was refused only by merge.
pub fn kept(path: &Path, meta: &Meta, ids: &Ids, runs: &[Run], grid: GridFigures) -> Result<()> {
    let check = Recheck::new(meta, ids).with_grid(grid);
    let mut reader = RunReader::open(path)?;
    let (mut rows, mut current) = (Vec::new(), None);
    for r in runs {
        if current != Some(r.point) {
            if let Some(p) = current {
                check.rows(path, p, &rows)?;
            }
            rows.clear();
            current = Some(r.point);
        }
        reader.read(r, &mut rows)?;
    }
    if let Some(p) = current {
        check.rows(path, p, &rows)?;
    }
    Ok(())
}

/// A cell that is of its kind at a glance: text of printable UTF-8 (no control
/// character: a NUL or an escape is not a name a sweep writes); a count of at most 19
/// digits (below 10^19, so below 2^64 - 1) without a leading zero; an integer of at most
/// 18 digits after an optional `-`, without a leading zero; a
/// decimal (an optional `-`, digits, at most one `.`, no exponent: how Rust prints a
/// float) of at most 300 characters (below 10^300, so finite), without a leading zero
/// or a trailing one after the `.`, of at most 17 significant digits (the most the
/// shortest text of a double has); true or false. Every cell
/// it accepts parses as its kind and passes the finite gate; a cell it does not accept
/// is parsed in full.
fn plain(kind: Kind, cell: &[u8]) -> bool {
    fn digits(b: &[u8]) -> bool {
        !b.is_empty() && b.iter().all(u8::is_ascii_digit) && (b.len() == 1 || b[0] != b'0')
    }
    fn unsigned(b: &[u8]) -> &[u8] {
        b.strip_prefix(b"-").unwrap_or(b)
    }
    match kind {
        Kind::Text => std::str::from_utf8(cell).is_ok_and(|t| !t.chars().any(char::is_control)),
        Kind::Count => cell.len() <= 19 && digits(cell),
        Kind::Int => unsigned(cell).len() <= 18 && digits(unsigned(cell)),
        Kind::Float => {
            // One pass: digits, then at most one `.` followed by digits; the significant
            // digits (first to last nonzero) counted.
            let body = unsigned(cell);
            let (mut int, mut frac, mut dot) = (0usize, 0usize, false);
            let (mut first, mut last) = (None, 0usize);
            for (k, &b) in body.iter().enumerate() {
                match b {
                    b'0'..=b'9' if dot => frac += 1,
                    b'0'..=b'9' => int += 1,
                    b'.' if !dot => dot = true,
                    _ => return false,
                }
                if matches!(b, b'1'..=b'9') {
                    first.get_or_insert(k);
                    last = k;
                }
            }
            // Rust's form (a writer's `{}`): no leading zero but a lone `0` before the
            // `.`, no trailing zero after it. At most 17 significant digits, the most
            // Rust's shortest text of a double has: a longer cell is parsed and printed
            // again. A cell of 16 or 17 digits that is a longer text of a number with a
            // shorter one (0.10000000000000001) is its very number, and passes: the
            // round trip of every such cell would double the cost of a merge.
            let digits = first.map_or(0, |f| last + 1 - f - usize::from(f < int && last > int));
            cell.len() <= 300
                && int > 0
                && (int == 1 || body[0] != b'0')
                && (!dot || (frac > 0 && body.last() != Some(&b'0')))
                && digits <= 17
        }
        Kind::Bool => cell == b"true" || cell == b"false",
    }
}

/// `v`, the number of float cell `cell` of column `col`, when the cell is the text a
/// writer prints for it (Rust's `{}`: the shortest text that reads back as the number,
/// without exponent or sign): a cell in another form (`1e-400`, `+0.5`, `.5`, `0.50`) is
/// not sresim's, and is refused rather than copied as written.
fn canonical(col: &str, cell: &str, v: f64) -> Result<f64, String> {
    let written = v.to_string();
    let shown = match written.len() <= 40 {
        true => written.clone(),
        false => format!("a decimal of {} digits", written.len()),
    };
    match written == cell {
        true => Ok(v),
        false => Err(format!(
            "{col}: '{cell}' is not a number as sresim writes one (it writes this one as {shown})"
        )),
    }
}

/// An integer as a writer prints one: an optional `-` (for signed types), then digits,
/// without a leading zero (`0` itself, never `-0` or `007`).
fn number<T: std::str::FromStr>(cell: &str) -> Option<T> {
    let digits = cell.strip_prefix('-').unwrap_or(cell);
    let plain = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'))
        && cell != "-0";
    plain.then(|| cell.parse().ok()).flatten()
}

#[cfg(test)]
mod tests;
