//! The grid file (docs/sweeps.md): what a sweep runs, parsed and checked, and its points.
//!
//! ```toml
//! base = "configs/default.toml"     # optional
//! workloads = ["lenet5-mnist"]       # required
//! modes = ["dense", "sre"]           # optional, default all five
//! samples = 1                        # optional, default all a workload holds
//! layers = ["conv2", "fc*"]          # optional, default every layer (names or globs)
//! engine = "fast"                    # optional
//! functional = true                  # optional: the functional datapath's columns
//! accuracy = true                    # optional: top-1 and agreement per mode
//! accuracy_samples = 100             # optional, default all of the graph input
//! [set]                              # optional: fixed for every point, not a column
//! "synth.structure" = "ssl"
//! [axes]                             # cartesian product, first axis outermost
//! "ou.rows" = [4, 8, 9, 16]
//! [[points]]                         # optional explicit list: one more axis whose
//! "ou.rows" = 9                      # values are whole assignments
//! "ou.cols" = 8
//! ```

use super::ordered::Ordered;
use super::value::{key_kind, AxisValue, KeyKind};
use anyhow::{anyhow, bail, Result};
use crossbar::Mode;
use engine::EngineKind;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use workload::LayerSelector;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGrid {
    base: Option<String>,
    workloads: Vec<String>,
    modes: Option<Vec<String>>,
    samples: Option<i64>,
    layers: Option<Vec<String>>,
    engine: Option<String>,
    functional: Option<bool>,
    accuracy: Option<bool>,
    accuracy_samples: Option<i64>,
    draws: Option<i64>,
    set: Option<Ordered>,
    axes: Option<Ordered>,
    points: Option<Vec<Ordered>>,
    search: Option<Ordered>,
}

/// One axis: a key and its values, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub key: String,
    pub values: Vec<AxisValue>,
}

/// A parsed, checked grid file.
#[derive(Debug, Clone)]
pub struct Grid {
    /// The file, as given (for messages).
    pub path: PathBuf,
    /// The base config file, resolved (None: the default config).
    pub base: Option<PathBuf>,
    pub workloads: Vec<String>,
    pub modes: Vec<Mode>,
    pub samples: Option<usize>,
    /// Only these layers of every workload (`layers = [...]`), as `run --layers`.
    pub layers: Option<LayerSelector>,
    pub engine: EngineKind,
    /// `functional = true`: every point runs the functional datapath (`run --functional`).
    pub functional: bool,
    /// `accuracy = true`: every point also runs the bundle's network through each mode
    /// (`sresim accuracy`), on the first `accuracy_samples` graph-input samples (None:
    /// all of them).
    pub accuracy: bool,
    pub accuracy_samples: Option<usize>,
    /// `draws = K` (with accuracy): K device draws per point (`sresim accuracy --draws`);
    /// 1 without the key.
    pub draws: u32,
    /// Fixed assignments for every point.
    pub set: Vec<(String, AxisValue)>,
    pub axes: Vec<Axis>,
    /// The explicit point list: its keys, then one row of values per entry.
    pub explicit: Option<(Vec<String>, Vec<Vec<AxisValue>>)>,
    /// The `[search]` table of a grid for `sresim search` (docs/search.md), as written;
    /// `sresim sweep` refuses a grid that has one.
    pub search: Option<toml::Value>,
    /// How many points [`Grid::points`] gives (checked when parsed).
    points: u64,
}

/// One point of a grid: a workload and a value for every axis key.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub id: String,
    pub workload: String,
    /// Aligned with [`Grid::axis_keys`].
    pub values: Vec<AxisValue>,
}

/// FNV-1a, 64 bits: a hash that is the same on every machine and every Rust release.
pub use bounds::text::fnv64;

/// The stable id of a point: 12 hex digits of the hash of its workload and its sorted
/// `key=value` pairs. It does not depend on the order of axes or values in the file.
pub fn point_id(workload: &str, pairs: &[(&str, &AxisValue)]) -> String {
    let mut lines: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", v.canonical()))
        .collect();
    lines.sort();
    let text = format!("workload={workload:?}\n{}", lines.join("\n"));
    format!("{:012x}", fnv64(&text) >> 16)
}

/// Default of `--max-points` (`sweep`, `search`): the most points a grid may have unless
/// the flag raises it.
pub const DEFAULT_MAX_POINTS: u64 = 100_000;

/// Most points of any grid (2^26), whatever `--max-points` says: a sweep's point ids
/// alone take 512 MiB, and a sweep.json declaring more is refused before its points are
/// listed.
pub const MAX_GRID_POINTS: u64 = 1 << 26;

impl Grid {
    /// Reads and checks `path`, a grid of at most `max_points` points (`--max-points`).
    /// Relative paths in it (base, bundle directories) are looked up next to the grid file
    /// first, then in the current directory.
    pub fn load(path: &Path, max_points: u64) -> Result<Grid> {
        let p = path.display().to_string();
        let text = workload::files::read_text(path, &p).map_err(anyhow::Error::msg)?;
        Grid::parse(&text, path, max_points)
    }

    /// Parses the text of a grid file that lives at `path`. The one grid parser of every
    /// command: its point count, a checked product of the workloads, every axis's values
    /// and the explicit points, is refused above `max_points` and above
    /// [`MAX_GRID_POINTS`] here, before any point is listed.
    pub fn parse(text: &str, path: &Path, max_points: u64) -> Result<Grid> {
        let p = path.display().to_string();
        // A TOML date is no value of any key: told as a date, by its key, wherever it
        // stands (the typed reading called it a map, or showed the reader's private key).
        if let Some((key, date)) = bounds::dates::first(text) {
            let top = key.split('.').next().unwrap_or("");
            let expected = match top {
                "workloads" | "modes" | "layers" | "base" | "engine" => "a string",
                "samples" | "draws" | "accuracy_samples" => "an integer",
                "accuracy" | "functional" => "true or false",
                _ => "a number, string or boolean",
            };
            bail!("{p}: {}", bounds::dates::refusal(&key, &date, expected));
        }
        let raw: RawGrid = toml::from_str(text).map_err(|e| toml_error(&p, text, &e))?;
        let dir = path.parent().unwrap_or(Path::new(""));
        let base = match raw.base {
            None => None,
            Some(b) => Some(near(dir, &b).ok_or_else(|| {
                anyhow!("{p}: base: {b} does not exist (looked next to the grid file and in the current directory)")
            })?),
        };
        if raw.workloads.is_empty() {
            bail!("{p}: workloads: the list is empty");
        }
        // Linear in the list (a set, not a scan per name): 10^5 names were 30 s before the
        // point count refused them.
        let mut seen = std::collections::HashSet::with_capacity(raw.workloads.len());
        for w in &raw.workloads {
            if !seen.insert(w.as_str()) {
                bail!("{p}: workloads: '{w}' is listed twice");
            }
        }
        let workloads = raw.workloads;
        let modes = match raw.modes {
            None => Mode::ALL.to_vec(),
            Some(list) => sim::run::parse_modes(&list).map_err(|e| anyhow!("{p}: {e:#}"))?,
        };
        let samples = match raw.samples {
            None => None,
            Some(n) if n >= 1 => Some(n as usize),
            Some(n) => bail!("{p}: samples: {n} is not a positive number of samples"),
        };
        let layers = match raw.layers {
            None => None,
            Some(list) => {
                Some(LayerSelector::from_patterns(&list).map_err(|e| anyhow!("{p}: layers: {e}"))?)
            }
        };
        let engine = match raw.engine {
            None => EngineKind::Fast,
            Some(e) => e.parse().map_err(|err| anyhow!("{p}: engine: {err}"))?,
        };
        let accuracy = raw.accuracy.unwrap_or(false);
        let accuracy_samples = match raw.accuracy_samples {
            None => None,
            Some(_) if !accuracy => {
                bail!("{p}: accuracy_samples: set without accuracy = true")
            }
            Some(n) if n >= 1 => Some(n as usize),
            Some(n) => bail!("{p}: accuracy_samples: {n} is not a positive number of samples"),
        };
        let draws = match raw.draws {
            None => 1,
            Some(_) if !accuracy => bail!("{p}: draws: set without accuracy = true"),
            Some(n) if (1..=sim::draws::MAX_DRAWS as i64).contains(&n) => n as u32,
            Some(n) => bail!(
                "{p}: draws: {n} is not a number of device draws in 1..={}",
                sim::draws::MAX_DRAWS
            ),
        };
        let set = match raw.set {
            None => Vec::new(),
            Some(t) => {
                let mut set = Vec::new();
                for (k, v) in table(&t, &p, "set")? {
                    check_key(&p, "set", &k)?;
                    set.push((k.clone(), scalar(&v, &p, &format!("set.{k}"))?));
                }
                set
            }
        };
        // The keys and value lists of [axes], then the point count from their lengths
        // alone: a grid over the limits is refused before any value is looked at, and
        // every check on values below is linear in the file (a sweep over 10^5 seeds
        // is one axis of 10^5 values).
        let mut lists: Vec<(String, Vec<Ordered>)> = Vec::new();
        if let Some(t) = raw.axes {
            for (k, v) in table(&t, &p, "axes")? {
                check_key(&p, "axes", &k)?;
                let Ordered::Array(items) = v else {
                    bail!("{p}: axes.{k}: expected a list of values, e.g. [4, 8]");
                };
                if items.is_empty() {
                    bail!("{p}: axes.{k}: the list is empty");
                }
                lists.push((k, items));
            }
        }
        let count = std::iter::once(workloads.len())
            .chain(lists.iter().map(|(_, items)| items.len()))
            .chain(raw.points.as_ref().map(Vec::len))
            .collect::<Vec<_>>();
        let n = match bounds::size::product(&count) {
            None => bail!(
                "{p}: the grid has more than 2^64 points, more than the limit of {MAX_GRID_POINTS} a grid holds"
            ),
            Some(n) if n > MAX_GRID_POINTS => bail!(
                "{p}: the grid has {n} points, more than the limit of {MAX_GRID_POINTS} a grid holds"
            ),
            Some(n) if n > max_points => bail!(
                "{p}: the grid has {n} points, more than --max-points {max_points} (raise it, e.g. --max-points {n}, if that is meant)"
            ),
            Some(n) => n,
        };
        let mut axes: Vec<Axis> = Vec::with_capacity(lists.len());
        for (k, items) in lists {
            let field = format!("axes.{k}");
            let mut values: Vec<AxisValue> = Vec::with_capacity(items.len());
            let mut seen = std::collections::HashSet::with_capacity(items.len());
            for item in &items {
                let v = scalar(item, &p, &field)?;
                if !seen.insert(v.canonical()) {
                    bail!("{p}: {field}: value {v} is listed twice");
                }
                values.push(v);
            }
            axes.push(Axis { key: k, values });
        }
        let explicit = match raw.points {
            None => None,
            Some(list) => Some(explicit_points(&list, &p, &axes)?),
        };
        for (k, _) in &set {
            let on_axis = axes.iter().any(|a| &a.key == k)
                || explicit.as_ref().is_some_and(|(keys, _)| keys.contains(k));
            if on_axis {
                bail!("{p}: set.{k}: also varied by the grid (a key is either fixed or an axis)");
            }
        }
        Ok(Grid {
            points: n,
            path: path.to_path_buf(),
            base,
            workloads,
            modes,
            samples,
            layers,
            engine,
            functional: raw.functional.unwrap_or(false),
            accuracy,
            accuracy_samples,
            draws,
            set,
            axes,
            explicit,
            search: raw.search.as_ref().map(Ordered::to_value),
        })
    }

    /// The axis columns of points.csv: the [axes] keys in file order, then the keys of
    /// the explicit point list.
    pub fn axis_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.axes.iter().map(|a| a.key.clone()).collect();
        if let Some((k, _)) = &self.explicit {
            keys.extend(k.iter().cloned());
        }
        keys
    }

    /// How many points [`Grid::points`] gives, counted when the grid was parsed (at most
    /// the `--max-points` it was parsed with, and [`MAX_GRID_POINTS`]).
    pub fn point_count(&self) -> u64 {
        self.points
    }

    /// Every point, workload outermost, then the axes in file order (the last varies
    /// fastest), the explicit list innermost.
    pub fn points(&self) -> Vec<Point> {
        let mut dims: Vec<Vec<Vec<AxisValue>>> = self
            .axes
            .iter()
            .map(|a| a.values.iter().map(|v| vec![v.clone()]).collect())
            .collect();
        if let Some((_, rows)) = &self.explicit {
            dims.push(rows.clone());
        }
        let mut combos: Vec<Vec<AxisValue>> = vec![Vec::new()];
        for dim in &dims {
            combos = combos
                .iter()
                .flat_map(|c| {
                    dim.iter().map(move |v| {
                        let mut c = c.clone();
                        c.extend(v.iter().cloned());
                        c
                    })
                })
                .collect();
        }
        let keys = self.axis_keys();
        let mut out = Vec::with_capacity(combos.len() * self.workloads.len());
        for w in &self.workloads {
            for values in &combos {
                let pairs: Vec<(&str, &AxisValue)> =
                    keys.iter().map(String::as_str).zip(values).collect();
                out.push(Point {
                    id: point_id(w, &pairs),
                    workload: w.clone(),
                    values: values.clone(),
                });
            }
        }
        out
    }

    /// `key=value` of every fixed assignment and of the point's axes, by kind.
    pub fn assignments<'a>(&'a self, point: &'a Point) -> Vec<(String, &'a AxisValue)> {
        let keys = self.axis_keys();
        let mut out: Vec<(String, &AxisValue)> =
            self.set.iter().map(|(k, v)| (k.clone(), v)).collect();
        out.extend(keys.into_iter().zip(&point.values));
        out
    }

    /// The point as `workload=W key=value ...` for messages.
    pub fn describe(&self, point: &Point) -> String {
        let mut s = format!("workload={}", point.workload);
        for (k, v) in self.axis_keys().iter().zip(&point.values) {
            s.push_str(&format!(" {k}={}", v.csv()));
        }
        s
    }
}

/// A TOML error of grid file `p` as one line naming where it is: the line and, when the
/// error lies in a value, its key with the table around it (`line 3: search.first_samples:
/// number too large to fit in target type`; the parser's own message names no field).
fn toml_error(p: &str, text: &str, e: &toml::de::Error) -> anyhow::Error {
    let mut msg = e.message().replace('\n', " ");
    let Some(span) = e.span() else {
        return anyhow!("{p}: {msg}");
    };
    // An integer past what TOML holds is named with the limit; a seed's with the reach of
    // `run --seed` beside it, which takes any u64 on the command line.
    let rest = text.get(span.start..).unwrap_or("");
    let big = rest
        .lines()
        .next()
        .unwrap_or("")
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map(|d| d.replace('_', ""))
        .find(|d| {
            !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) && d.parse::<i64>().is_err()
        });
    if let Some(big) = big.filter(|_| msg.contains("too large")) {
        msg = format!(
            "{big} is above the largest integer a grid holds, {} (TOML integers stop at 2^63 - 1)",
            i64::MAX
        );
    }
    let before = text.get(..span.start).unwrap_or("");
    let line_no = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let head = text.get(start..span.start).unwrap_or("");
    let clean = |k: &str| -> String {
        let k: String = k
            .split('.')
            .map(|part| part.trim().trim_matches('"').trim_matches('\''))
            .collect::<Vec<_>>()
            .join(".");
        k.chars().filter(|c| !c.is_control()).take(60).collect()
    };
    // An error at a table's own header (`[modes]` where a list is expected, `[nonsense]`
    // unknown) names the table's key, which the header spells in full.
    let line = text.get(start..).unwrap_or("").lines().next().unwrap_or("");
    if line.trim_start().starts_with('[') {
        let header = line.trim_start().trim_start_matches('[');
        let name = clean(header.split(']').next().unwrap_or(""));
        if !name.is_empty() {
            return anyhow!("{p}: line {line_no}: {name}: {msg}");
        }
    }
    let key = head
        .split_once('=')
        .map(|(k, _)| clean(k))
        .filter(|k| !k.is_empty());
    let table = text
        .get(..start)
        .unwrap_or("")
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| clean(l.trim_start_matches('[').split(']').next().unwrap_or("")))
        .filter(|t| !t.is_empty());
    let key = match (table, key) {
        (Some(t), Some(k)) => Some(format!("{t}.{k}")),
        (None, k) => k,
        (Some(_), None) => None,
    };
    if msg.contains("2^63 - 1") && key.as_deref().is_some_and(|k| k.ends_with("seed")) {
        msg.push_str(
            ": the largest seed a grid can hold is 2^63 - 1; `run --seed` takes up to 2^64 - 1",
        );
    }
    match key {
        Some(k) => anyhow!("{p}: line {line_no}: {k}: {msg}"),
        None => anyhow!("{p}: line {line_no}: {msg}"),
    }
}

/// `rel` next to the grid file, else as given; None when neither exists.
pub fn near(dir: &Path, rel: &str) -> Option<PathBuf> {
    let r = Path::new(rel);
    let beside = dir.join(r);
    if r.is_relative() && beside.exists() {
        Some(beside)
    } else if r.exists() {
        Some(r.to_path_buf())
    } else {
        None
    }
}

/// The leaves of table `field` as (dotted key, value). One key written two ways
/// (`"ou.rows" = ...` and `ou.rows = ...`, which TOML keeps apart) is an error.
fn table(t: &Ordered, p: &str, field: &str) -> Result<Vec<(String, Ordered)>> {
    let Ordered::Table(_) = t else {
        bail!("{p}: {field}: expected a table");
    };
    let leaves = t.flatten();
    let mut seen = std::collections::HashSet::with_capacity(leaves.len());
    for (k, _) in &leaves {
        if !seen.insert(k.as_str()) {
            bail!("{p}: {field}.{k}: set twice (\"{k}\" and {k} are the same key)");
        }
    }
    Ok(leaves)
}

fn check_key(p: &str, field: &str, key: &str) -> Result<()> {
    key_kind(key).map_err(|e| anyhow!("{p}: {field}.{key}: {e}"))?;
    Ok(())
}

fn scalar(v: &Ordered, p: &str, field: &str) -> Result<AxisValue> {
    if let Ordered::Scalar(toml::Value::Float(f)) = v {
        if !f.is_finite() {
            bail!("{p}: {field}: {f} is not a finite number");
        }
    }
    // A string value becomes a cell of points.csv, a label of a plot and a part of a
    // printed line: one with control characters is refused here, as a bundle's names are.
    if let Ordered::Scalar(toml::Value::String(t)) = v {
        if t.chars().any(char::is_control) {
            bail!(
                "{p}: {field}: {} holds a control character (not allowed in a value that becomes a cell)",
                bounds::text::printable(t)
            );
        }
    }
    // A TOML date is no value of any key: told as a date, by its key.
    if let Ordered::Scalar(toml::Value::Datetime(d)) = v {
        bail!(
            "{p}: {field}: {}, expected a number, string or boolean",
            bounds::text::toml_date(&d.to_string())
        );
    }
    match v {
        Ordered::Scalar(s) => AxisValue::from_toml(s),
        _ => None,
    }
    .ok_or_else(|| {
        anyhow!(
            "{p}: {field}: {} is not a number, string or boolean",
            v.to_value()
        )
    })
}

fn explicit_points(
    list: &[Ordered],
    p: &str,
    axes: &[Axis],
) -> Result<(Vec<String>, Vec<Vec<AxisValue>>)> {
    if list.is_empty() {
        bail!("{p}: points: the list is empty");
    }
    let mut keys: Vec<String> = Vec::new();
    let mut rows: Vec<Vec<AxisValue>> = Vec::with_capacity(list.len());
    let mut seen = std::collections::HashSet::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let field = format!("points[{i}]");
        let pairs = table(entry, p, &field)?;
        if i == 0 {
            if pairs.is_empty() {
                bail!("{p}: {field}: no keys");
            }
            for (k, _) in &pairs {
                check_key(p, &field, k)?;
                if axes.iter().any(|a| &a.key == k) {
                    bail!("{p}: {field}.{k}: also an axis of [axes]");
                }
            }
            keys = pairs.iter().map(|(k, _)| k.clone()).collect();
        }
        let mut row = Vec::new();
        for k in &keys {
            let v = pairs.iter().find(|(pk, _)| pk == k).ok_or_else(|| {
                anyhow!("{p}: {field}: has no {k} (every entry sets the keys of points[0])")
            })?;
            row.push(scalar(&v.1, p, &format!("{field}.{k}"))?);
        }
        if let Some((k, _)) = pairs.iter().find(|(k, _)| !keys.contains(k)) {
            bail!("{p}: {field}.{k}: not set by points[0] (every entry sets the same keys)");
        }
        if !seen.insert(row.iter().map(AxisValue::canonical).collect::<Vec<_>>()) {
            bail!("{p}: {field}: repeats an earlier entry");
        }
        rows.push(row);
    }
    Ok((keys, rows))
}

/// A `key = value` assignment of a point.
pub type Assignment<'a> = (String, &'a AxisValue);

/// Which config keys and generator keys a point sets.
pub fn split_kinds<'a>(
    pairs: &'a [Assignment<'a>],
) -> (Vec<&'a Assignment<'a>>, Vec<&'a Assignment<'a>>) {
    pairs
        .iter()
        .partition(|(k, _)| key_kind(k) == Ok(KeyKind::Config))
}

#[cfg(test)]
mod tests;
