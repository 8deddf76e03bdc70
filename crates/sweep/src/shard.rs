//! Shards (`--shard I/N`) and `sresim merge`.
//!
//! Shard I of N (0 <= I < N) owns the points whose rank among the grid's point ids,
//! sorted, is I modulo N: shard sizes differ by at most one, and the split depends only
//! on the set of points, not on the order the grid file lists axes and values in.
//! `merge` joins the directories of any shards of one grid (same fingerprint) into one
//! directory whose points.csv is byte for byte that of an unsharded run. The points the
//! output directory already holds of the same grid are merged too, so a merge never
//! leaves a directory with fewer points than it had.

use super::index::{index, index_parquet, RowWriter, Run, RunReader};
use super::meta::{Ids, Meta, TableFormat};
use anyhow::{anyhow, bail, Result};
use outdir::OutputDir;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use super::meta::{select, shard_of, Shard};

/// How many absent shards a merge's refusal names (the rest counted).
const SHOWN_SHARDS: usize = 20;

/// `sresim merge DIR... --out OUT`. Every input must be a finished sweep directory of the
/// same grid; together with the points OUT already holds of it they must cover every
/// point unless `partial`. Inputs may hold points.csv or points.parquet (as their
/// sweep.json says); the output is written in `format`.
///
/// Streamed: each input's points table is indexed in one pass (checking its header, ids
/// and that every point is complete), then the points are merged k-way in grid order into
/// a temporary renamed over OUT's points table, a point held by several inputs compared
/// as it goes. Memory: some 24 bytes per point of the grid for its ids (regenerated from
/// sweep.json's description), and some 30 bytes per point of the inputs.
pub fn merge(
    inputs: &[PathBuf],
    out: &Path,
    partial: bool,
    format: sim::format::Format,
) -> Result<String> {
    let Some(first) = inputs.first() else {
        bail!("merge: no input directory given");
    };
    let out_dir = OutputDir::open(out)?;
    let mut meta = Meta::read(first)?;
    let mut sources: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let already = out.join("sweep.json").exists();
    if already {
        if Meta::read_fingerprint(out)? != meta.fingerprint {
            bail!(
                "{}/sweep.json: fingerprint: the directory holds another grid's sweep",
                out.display()
            );
        }
        if out.join("points.csv").exists() || out.join("points.parquet").exists() {
            sources.push(out);
        }
    }
    let cols = meta.columns();
    let ids = meta.ids();
    let mut runs: Vec<Vec<Run>> = Vec::with_capacity(sources.len());
    let mut tables: Vec<PathBuf> = Vec::with_capacity(sources.len());
    let mut covered = vec![false; ids.len()];
    meta.check_valid(first)?;
    for &dir in &sources {
        let head = Meta::read_head(dir)?;
        if head.format != super::meta::FORMAT {
            // Its description is needed to know the points: Meta::read says how to get it.
            Meta::read(dir)?;
        }
        if head.fingerprint != meta.fingerprint {
            bail!(
                "{}/sweep.json: fingerprint: {} differs from {} of {}: the outputs belong to different grids",
                dir.display(),
                head.fingerprint,
                meta.fingerprint,
                first.display()
            );
        }
        // The fingerprint cannot be recomputed from sweep.json, so every input's whole
        // description must be the first's: otherwise a field edited in one of them (its
        // modes, say) would be copied into the merge or not, as the input order decides.
        let m = Meta::read(dir)?;
        m.check_valid(dir)?;
        if let Some(field) = meta.differs(&m) {
            bail!(
                "{}/sweep.json: {field}: differs from {}/sweep.json, though their fingerprints agree: one of them was edited",
                dir.display(),
                first.display()
            );
        }
        let path = dir.join(head.table.format().file("points"));
        let ix = match head.table {
            TableFormat::Csv => index(&path, &cols, &ids)?,
            TableFormat::Parquet => index_parquet(&path, &cols, &ids)?,
        };
        let totals = ix.totals();
        m.check_owned(&path, &ids, totals.iter().map(|t| t.point as usize))?;
        let unfinished = ix
            .grouped(|t| meta.rows(t.point as usize) != t.rows as usize, false)
            .first()
            .map(|r| format!("point {}", ids.text(r.point as usize)));
        if ix.torn || unfinished.is_some() {
            bail!(
                "{}: {} has an unfinished point (run `sresim sweep --resume` on that directory first)",
                path.display(),
                unfinished.unwrap_or("a torn last line".into())
            );
        }
        for t in &totals {
            covered[t.point as usize] = true;
        }
        runs.push(ix.grouped(|_| true, true));
        tables.push(path);
    }
    let missing: Vec<usize> = (0..ids.len()).filter(|&i| !covered[i]).collect();
    if !missing.is_empty() && !partial {
        let shards = meta
            .shard
            .map(|s| {
                // The shards that own points and hold none of them, from the points (at
                // most one a point), never a walk over the shard count a file declares.
                let of = shard_of(&ids.ids, s.count);
                let mut any = std::collections::BTreeMap::new();
                for (i, &shard) in of.iter().enumerate() {
                    *any.entry(shard).or_insert(false) |= covered[i];
                }
                let absent: Vec<usize> = any.into_iter().filter(|e| !e.1).map(|e| e.0).collect();
                let shown: Vec<String> = absent
                    .iter()
                    .take(SHOWN_SHARDS)
                    .map(|i| format!("{i}/{}", s.count))
                    .collect();
                let more = match absent.len().saturating_sub(SHOWN_SHARDS) {
                    0 => String::new(),
                    n => format!(" and {n} more"),
                };
                format!(" (shards with no rows: {}{more})", shown.join(", "))
            })
            .unwrap_or_default();
        bail!(
            "merge: {} of {} points are missing, e.g. {}{shards}; --partial merges what is there",
            missing.len(),
            ids.len(),
            ids.text(missing[0])
        );
    }
    let present = covered.iter().filter(|&&c| c).count();
    let name = format.file("points");
    let staged = out_dir.stage(&name)?;
    let writer = match format {
        sim::format::Format::Csv => RowWriter::new(staged, &cols)?,
        sim::format::Format::Parquet => RowWriter::parquet(staged, meta.typed_columns())?,
    };
    let check = super::recheck::Recheck::new(&meta, &ids);
    let table = kway(writer, &tables, &runs, &ids, &check)?;
    let total = ids.len();
    drop((ids, runs, covered));
    let mut json = out_dir.stage("sweep.json")?;
    meta.shard = None;
    meta.table = format.into();
    // A write error names the file (outdir::Staged); another is told with it.
    serde_json::to_writer_pretty(&mut json, &meta).map_err(|e| match e.is_io() {
        true => anyhow!("{e}"),
        false => anyhow!("{}/sweep.json: cannot write: {e}", out.display()),
    })?;
    // The replacement removes a points table of the other format an earlier merge left.
    out_dir.replace_staged(vec![table, json])?;
    let kept = if already {
        " (with the points it held)"
    } else {
        ""
    };
    Ok(format!(
        "merged {} of {} points from {} directories into {}/{name}{kept}",
        present,
        total,
        inputs.len(),
        out.display()
    ))
}

/// Writes to `w` the rows of every point of the `runs` of the tables `sources` (each
/// grouped by point in grid order) in grid order, each checked again by `check`; a point
/// several sources hold must have the same rows in each.
fn kway<W: Write + Send>(
    mut w: RowWriter<W>,
    sources: &[PathBuf],
    runs: &[Vec<Run>],
    ids: &Ids,
    check: &super::recheck::Recheck,
) -> Result<W> {
    let mut readers = sources
        .iter()
        .map(|t| RunReader::open(t))
        .collect::<Result<Vec<_>>>()?;
    let mut next = vec![0usize; sources.len()];
    let mut heap: BinaryHeap<Reverse<(u32, usize)>> = runs
        .iter()
        .enumerate()
        .filter_map(|(s, r)| r.first().map(|r| Reverse((r.point, s))))
        .collect();
    let (mut rows, mut other) = (Vec::new(), Vec::new());
    let mut first = 0;
    let mut current = None;
    while let Some(Reverse((point, s))) = heap.pop() {
        let fresh = current != Some(point);
        if fresh {
            if current.is_some() {
                w.rows(&rows)?;
            }
            rows.clear();
            current = Some(point);
            first = s;
        } else {
            other.clear();
        }
        let dst = if fresh { &mut rows } else { &mut other };
        let mine = &runs[s];
        while let Some(r) = mine.get(next[s]).filter(|r| r.point == point) {
            readers[s].read(r, dst)?;
            next[s] += 1;
        }
        check.rows(&sources[s], point, dst)?;
        if !fresh && other != rows {
            bail!(
                "{}: point {}: rows differ from those in {}",
                sources[s].display(),
                ids.text(point as usize),
                sources[first].parent().unwrap_or(Path::new("")).display()
            );
        }
        if let Some(r) = mine.get(next[s]) {
            heap.push(Reverse((r.point, s)));
        }
    }
    w.rows(&rows)?;
    w.finish()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_shard_read_from_a_file_is_checked_as_a_flag_is() {
        let read = |t: &str| serde_json::from_str::<super::Shard>(t);
        assert_eq!(
            read(r#"{"index": 1, "count": 2}"#).unwrap(),
            super::Shard { index: 1, count: 2 }
        );
        for bad in [r#"{"index": 5, "count": 2}"#, r#"{"index": 0, "count": 0}"#] {
            let e = read(bad).unwrap_err().to_string();
            assert!(e.contains("is not I/N with 0 <= I < N"), "{e}");
        }
    }

    use super::*;
    use sim::format::Format::Csv;

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

    /// The lines of a points.csv: its header, then its points' blocks of lines.
    fn blocks(path: &Path) -> (String, Vec<Vec<String>>) {
        let text = std::fs::read_to_string(path).unwrap();
        let mut lines = text.lines().map(|l| format!("{l}\n"));
        let header = lines.next().unwrap();
        let mut out: Vec<Vec<String>> = Vec::new();
        for l in lines {
            let id = l.split(',').next().unwrap().to_string();
            match out.last_mut() {
                Some(b) if b[0].starts_with(&format!("{id},")) => b.push(l),
                _ => out.push(vec![l]),
            }
        }
        (header, out)
    }

    /// `merge` copied each cell of a shard's points.csv verbatim: a tampered NaN, inf,
    /// negative or saturated count, or an axis value that contradicts the point's id
    /// landed in the merged file. Each cell is now re-read by its column's type through
    /// the finite gate, and the axis cells against the id; the output stays as it was.
    #[test]
    fn tampered_cells_of_a_shard_are_refused_naming_file_point_and_column() {
        let t = tempfile::tempdir().unwrap();
        let shards = super::super::synth::write_shards(t.path(), 16, 4, 2).unwrap();
        let out = t.path().join("out");
        merge(&shards, &out, false, Csv).unwrap();
        let merged = std::fs::read(out.join("points.csv")).unwrap();
        let p0 = shards[0].join("points.csv");
        let clean = std::fs::read_to_string(&p0).unwrap();
        let header: Vec<&str> = clean.lines().next().unwrap().split(',').collect();
        let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
        let tamper = |column: usize, value: &str| {
            let mut lines: Vec<String> = clean.lines().map(String::from).collect();
            let mut cells: Vec<String> = lines[2].split(',').map(String::from).collect();
            cells[column] = value.to_string();
            lines[2] = cells.join(",");
            std::fs::write(&p0, lines.join("\n") + "\n").unwrap();
            let id = lines[2].split(',').next().unwrap().to_string();
            let e = merge(&shards, &out, false, Csv).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("{}: point {id}, its row 2: ", p0.display())),
                "{e}"
            );
            assert_eq!(std::fs::read(out.join("points.csv")).unwrap(), merged);
            e
        };
        let e = tamper(col("energy_pj"), "NaN");
        assert!(e.contains("energy_pj of l0 (sre)"), "{e}");
        assert!(e.ends_with("would be NaN, not a finite number"), "{e}");
        assert!(tamper(col("time_ns"), "inf").ends_with("would be inf, not a finite number"));
        assert!(tamper(col("cycles"), "-5")
            .ends_with("cycles: '-5' is not a count (an unsigned 64-bit integer)"));
        assert!(tamper(col("cycles"), "2.5")
            .ends_with("'2.5' is not a count (an unsigned 64-bit integer)"));
        assert!(tamper(col("cycles"), "18446744073709551615")
            .ends_with("would be 18446744073709551615, a count saturated at 2^64 - 1"));
        assert!(tamper(col("energy_pj"), "x").ends_with("energy_pj: 'x' is not a number"));
        // An empty cell of a column every row fills, a text cell with a control
        // character, a count written with a leading zero: none is what a sweep writes.
        assert!(tamper(col("cycles"), "")
            .ends_with("cycles: empty, but every row a sweep writes fills it"));
        assert!(tamper(col("mode"), "evil\u{0}")
            .ends_with("mode: \"evil\\0\" holds a control character or is not UTF-8"));
        assert!(tamper(col("energy_pj"), "-1e308")
            .ends_with("energy_pj: '-1e308' is negative, outside the quantity's domain [0, inf)"));
        assert!(tamper(col("time_ns"), "-0")
            .ends_with("time_ns: '-0' is negative, outside the quantity's domain [0, inf)"));
        assert!(tamper(col("cycles"), "007")
            .ends_with("cycles: '007' is not a count (an unsigned 64-bit integer)"));
        let e = tamper(col("ou.cols"), "7");
        assert!(
            e.contains("ou.cols: '7' contradicts the point's id (its value is"),
            "{e}"
        );
        let e = tamper(1, "vgg16");
        assert!(
            e.ends_with("workload: 'vgg16' contradicts the point's id (its workload is resnet18)"),
            "{e}"
        );
        // The cells the point's id determines beyond its axes (they passed unchecked).
        assert!(tamper(col("mode"), "dense").contains(
            "mode: 'dense' contradicts the point's id (the grid's modes put sre in this row)"
        ));
        assert!(tamper(col("signed"), "2").ends_with("signed: '2' is not a flag (0 or 1)"));
        assert!(tamper(col("samples"), "0")
            .ends_with("samples: '0' is not a positive count of samples"));
        assert!(tamper(col("samples"), "5")
            .contains("samples: '5' differs from the point's first row (4)"));
        assert!(tamper(col("adc_bits"), "999")
            .ends_with("adc_bits: '999' is not an ADC resolution (1 to 64 bits)"));
        assert!(tamper(col("layer"), "TOTAL").contains("layer: 'TOTAL' contradicts the point's id"));
        // A layer or kind unlike the other points' of the workload names both files.
        for (c, v) in [("layer", "conv9"), ("kind", "pool"), ("network", "x")] {
            let mut lines: Vec<String> = clean.lines().map(String::from).collect();
            let mut cells: Vec<String> = lines[2].split(',').map(String::from).collect();
            cells[col(c)] = v.to_string();
            lines[2] = cells.join(",");
            std::fs::write(&p0, lines.join("\n") + "\n").unwrap();
            let e = merge(&shards, &out, false, Csv).unwrap_err().to_string();
            assert!(e.contains(&format!("{c}: '")) && e.contains(v), "{e}");
            assert!(e.contains(&p0.display().to_string()), "{e}");
            assert!(e.contains("one of the two files was edited"), "{e}");
            assert_eq!(std::fs::read(out.join("points.csv")).unwrap(), merged);
        }
        std::fs::write(&p0, &clean).unwrap();
        merge(&shards, &out, false, Csv).unwrap();
        assert_eq!(std::fs::read(out.join("points.csv")).unwrap(), merged);
    }

    /// Every point's workload and axis cells, read at its index, are those the point
    /// list gives in order (with an explicit list, innermost, and two workloads).
    #[test]
    fn point_cells_follow_the_grid_order() {
        let g = crate::grid::Grid::parse(
            "workloads = [\"lenet5\", \"cifar10\"]\n[axes]\n\"ou.rows\" = [4, 8, 16]\n\"adc.bits\" = [4, 6]\n\
             [[points]]\n\"ou.cols\" = 8\n\"crossbar.rows\" = 64\n[[points]]\n\"crossbar.rows\" = 128\n\"ou.cols\" = 16\n",
            Path::new("g.toml"),
            crate::grid::DEFAULT_MAX_POINTS,
        )
        .unwrap();
        let points = g.points();
        let meta = Meta {
            values: g.axes.iter().map(|a| a.values.clone()).collect(),
            explicit: g.explicit.as_ref().map(|(_, r)| r.clone()),
            axes: g.axis_keys(),
            point_count: points.len(),
            workloads: g
                .workloads
                .iter()
                .map(|w| super::super::meta::WorkloadMeta {
                    name: w.clone(),
                    rows: 1,
                })
                .collect(),
            ..super::super::synth::meta(16, 1)
        };
        assert_eq!(points.len(), 24);
        for (i, p) in points.iter().enumerate() {
            let (w, cells) = meta.point_cells(i);
            assert_eq!(w, p.workload, "{i}");
            let want: Vec<String> = p.values.iter().map(|v| v.csv()).collect();
            assert_eq!(cells, want, "{i}");
        }
    }

    /// A shard's sweep.json edited outside its fingerprint (its modes) was copied into the
    /// merge when it came first, the input order deciding: every input's description is
    /// now checked valid and equal to the first's.
    #[test]
    fn an_edited_description_of_any_input_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let shards = super::super::synth::write_shards(t.path(), 12, 2, 2).unwrap();
        let json = shards[1].join("sweep.json");
        let clean = std::fs::read_to_string(&json).unwrap();
        let edit = |modes: serde_json::Value| {
            let mut v: serde_json::Value = serde_json::from_str(&clean).unwrap();
            v["modes"] = modes;
            std::fs::write(&json, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        };
        let out = t.path().join("m");
        let refused = |order: &[PathBuf], want: &str| {
            let e = merge(order, &out, false, Csv).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
            assert!(!out.join("points.csv").exists());
        };
        let reversed: Vec<PathBuf> = shards.iter().rev().cloned().collect();
        edit(serde_json::json!(["gpu"]));
        for order in [&shards[..], &reversed[..]] {
            refused(order, "sweep.json: modes: \"gpu\" is not a mode");
        }
        let v: serde_json::Value = serde_json::from_str(&clean).unwrap();
        let mut other: Vec<String> = crossbar::Mode::ALL.map(|m| m.to_string()).to_vec();
        other.retain(|m| {
            v["modes"]
                .as_array()
                .unwrap()
                .iter()
                .all(|x| x != m.as_str())
        });
        edit(serde_json::json!([other[0]]));
        for order in [&shards[..], &reversed[..]] {
            refused(order, "modes: differs from");
        }
        edit(serde_json::json!(["dense", "dense"]));
        refused(&shards, "modes: dense is named twice");
        std::fs::write(&json, &clean).unwrap();
        merge(&shards, &out, false, Csv).unwrap();
    }

    #[test]
    fn inputs_in_any_order_merge_to_the_same_bytes_and_conflicts_are_named() {
        let t = tempfile::tempdir().unwrap();
        let shards = super::super::synth::write_shards(t.path(), 40, 3, 3).unwrap();
        let sorted = t.path().join("sorted");
        merge(&shards, &sorted, false, Csv).unwrap();
        // Shard 1 as a run killed before it sorted its file: points in reverse, the first
        // one's rows split around the others.
        let p1 = shards[1].join("points.csv");
        let (header, mut b) = blocks(&p1);
        b.reverse();
        let first = b.remove(0);
        let mut text = header + &first[..1].concat();
        text += &b.concat().concat();
        text += &first[1..].concat();
        std::fs::write(&p1, &text).unwrap();
        let shuffled = t.path().join("shuffled");
        merge(&shards, &shuffled, false, Csv).unwrap();
        for f in ["points.csv", "sweep.json"] {
            assert_eq!(
                std::fs::read(sorted.join(f)).unwrap(),
                std::fs::read(shuffled.join(f)).unwrap(),
                "{f}"
            );
        }
        // The merged directory as an input beside a shard whose point changed.
        let p0 = shards[0].join("points.csv");
        let text = std::fs::read_to_string(&p0).unwrap();
        let (_, b0) = blocks(&p0);
        let id = b0[1][0].split(',').next().unwrap().to_string();
        let line = b0[1][2].trim_end();
        let (head, _) = line.rsplit_once(',').unwrap();
        let changed = text.replacen(line, &format!("{head},12345"), 1);
        std::fs::write(&p0, changed).unwrap();
        let e = merge(&shards[..1], &sorted, true, Csv)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("point {id}: rows differ from those in")),
            "{e}"
        );
        assert_eq!(
            std::fs::read(sorted.join("points.csv")).unwrap(),
            std::fs::read(shuffled.join("points.csv")).unwrap(),
            "a failed merge changes nothing"
        );
    }
}
