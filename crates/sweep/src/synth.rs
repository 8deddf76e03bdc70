//! Synthetic sweep outputs, for measuring `merge` at scale without simulating: the shard
//! directories of an imaginary grid of `points` points of `rows` rows each, shaped like
//! real ones (the columns of points.csv, number-like cells about as wide as real ones).
//! Written as a stream: generating 10^5 points of 66 rows holds one row at a time.

use super::shard::{select, Shard};
use super::store::{Meta, PointMeta, FORMAT};
use anyhow::{anyhow, Result};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The id of point `i`: distinct for distinct `i`, in no particular order.
fn id(i: usize) -> String {
    format!("{:016x}", (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// The grid's description: three axes, one workload.
pub fn meta(points: usize, rows: usize) -> Meta {
    Meta {
        format: FORMAT.into(),
        sresim_version: env!("CARGO_PKG_VERSION").into(),
        grid: "synthetic.toml".into(),
        fingerprint: format!("synthetic-{points}x{rows}"),
        axes: ["ou.rows", "ou.cols", "synth.seed"]
            .map(String::from)
            .to_vec(),
        modes: ["dense", "sre"].map(String::from).to_vec(),
        shard: None,
        points: (0..points)
            .map(|i| PointMeta {
                id: id(i),
                workload: "resnet18".into(),
                values: vec![
                    (4 << (i % 4)).to_string(),
                    (4 << (i / 4 % 4)).to_string(),
                    (i / 16).to_string(),
                ],
                rows,
            })
            .collect(),
    }
}

/// Writes shard directories `dir/shard-I` (I < `shards`) of [`meta`] and returns them.
pub fn write_shards(dir: &Path, points: usize, rows: usize, shards: usize) -> Result<Vec<PathBuf>> {
    let full = meta(points, rows);
    let cols = full.columns();
    let ids: Vec<&str> = full.points.iter().map(|p| p.id.as_str()).collect();
    let mut out = Vec::new();
    for index in 0..shards {
        let shard = Shard {
            index,
            count: shards,
        };
        let d = dir.join(format!("shard-{index}"));
        std::fs::create_dir_all(&d).map_err(|e| anyhow!("{}: {e}", d.display()))?;
        let m = Meta {
            shard: Some(shard),
            ..full.clone()
        };
        std::fs::write(d.join("sweep.json"), m.json()?)?;
        let file = std::fs::File::create(d.join("points.csv"))?;
        let mut w = csv::Writer::from_writer(BufWriter::with_capacity(1 << 16, file));
        w.write_record(&cols)?;
        let mut row: Vec<String> = Vec::with_capacity(cols.len());
        for i in select(&ids, Some(shard)) {
            let p = &full.points[i];
            for r in 0..rows {
                row.clear();
                row.push(p.id.clone());
                row.push(p.workload.clone());
                row.extend(p.values.iter().cloned());
                for c in row.len()..cols.len() {
                    let x = (i * 131 + r * 17 + c * 7) as u64;
                    row.push(if c % 2 == 0 {
                        (x * 7919 % 10_000_000).to_string()
                    } else {
                        format!("{:.4}", x as f64 * 0.618)
                    });
                }
                w.write_record(&row)?;
            }
        }
        w.into_inner()
            .map_err(|e| anyhow!("{}", e.error()))?
            .flush()?;
        out.push(d);
    }
    Ok(out)
}
