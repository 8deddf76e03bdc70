//! `--format csv|parquet`: the tables sresim writes (layers, points, the memory model's
//! layers) as CSV, the default and the contract of docs/interfaces.md, or as Parquet with
//! typed columns (crate columnar). Here: the format, the memory model's column types, the
//! conversion of a table's rows by a column-type function, and reading either format back
//! for `compare` and `plot`. It knows no report: the types of the run's columns are
//! [`crate::columns`]'s.

use anyhow::{anyhow, Result};
use columnar::{Column, Kind};
use std::path::Path;

/// The file format of a result table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Comma-separated text (the default and the contract).
    #[default]
    Csv,
    /// Apache Parquet, typed columns.
    Parquet,
}

impl Format {
    /// The file extension: `csv` or `parquet`.
    pub fn ext(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Parquet => "parquet",
        }
    }

    /// `STEM.csv` or `STEM.parquet`.
    pub fn file(self, stem: &str) -> String {
        format!("{stem}.{}", self.ext())
    }

    /// The name on the command line and in messages: `csv` or `parquet`.
    pub fn name(self) -> &'static str {
        self.ext()
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `--format csv|parquet` (the command line parses it with this).
impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "csv" => Ok(Format::Csv),
            "parquet" => Ok(Format::Parquet),
            _ => Err("possible values: csv, parquet".to_string()),
        }
    }
}

/// The column kinds of layers.csv and points.csv live with the columns they type
/// ([`crate::columns`]); re-exported here, where sweeps have always found them.
pub use crate::columns::layers_kind;

/// The type of a column of memory_layers.csv (docs/memory.md).
pub fn memory_kind(col: &str) -> Kind {
    match col {
        "network" | "mode" | "layer" | "kind" | "phase" | "bound" => Kind::Text,
        "bandwidth_bytes_per_s"
        | "macs"
        | "elementwise_ops"
        | "compute_s"
        | "memory_s"
        | "time_s"
        | "op_intensity" => Kind::Float,
        _ => Kind::Count,
    }
}

/// The columns `names`, typed by `kind`.
pub fn columns(names: &[String], kind: impl Fn(&str) -> Kind) -> Vec<Column> {
    names.iter().map(|n| Column::new(n, kind(n))).collect()
}

/// A whole table as Parquet bytes: the header `cols` and `rows` of text cells.
pub fn parquet_bytes<S: AsRef<[u8]>>(
    name: &str,
    cols: Vec<Column>,
    rows: &[Vec<S>],
) -> Result<Vec<u8>> {
    let mut w = columnar::Writer::new(Vec::new(), cols).map_err(|e| anyhow!("{name}: {e}"))?;
    for r in rows {
        w.row(r).map_err(|e| anyhow!("{name}: {e}"))?;
    }
    w.finish().map_err(|e| anyhow!("{name}: {e}"))
}

/// memory_layers.csv converted to Parquet. Its `capacity_bytes` is a count, and the
/// unbounded buffer, `inf` in the CSV, is a null there (as in memory_summary.json): a
/// Parquet table holds no infinite value.
pub fn memory_parquet_of_csv(name: &str, csv: &[u8]) -> Result<Vec<u8>> {
    convert_csv(name, csv, memory_kind, |col, cell| {
        col == "capacity_bytes" && cell == b"inf"
    })
}

/// A CSV table (with its header) converted to Parquet, columns typed by `kind`.
pub fn parquet_of_csv(name: &str, csv: &[u8], kind: impl Fn(&str) -> Kind) -> Result<Vec<u8>> {
    convert_csv(name, csv, kind, |_, _| false)
}

/// A CSV table converted to Parquet; a cell for which `null(column, cell)` holds is
/// written as a null.
fn convert_csv(
    name: &str,
    csv: &[u8],
    kind: impl Fn(&str) -> Kind,
    null: impl Fn(&str, &[u8]) -> bool,
) -> Result<Vec<u8>> {
    let mut rd = csv::Reader::from_reader(csv);
    let header: Vec<String> = rd
        .headers()
        .map_err(|e| anyhow!("{name}: {e}"))?
        .iter()
        .map(String::from)
        .collect();
    let mut w = columnar::Writer::new(Vec::new(), columns(&header, kind))
        .map_err(|e| anyhow!("{name}: {e}"))?;
    for rec in rd.byte_records() {
        let rec = rec.map_err(|e| anyhow!("{name}: {e}"))?;
        let cells: Vec<&[u8]> = rec
            .iter()
            .zip(&header)
            .map(|(c, h)| if null(h, c) { &b""[..] } else { c })
            .collect();
        w.row(&cells).map_err(|e| anyhow!("{name}: {e}"))?;
    }
    w.finish().map_err(|e| anyhow!("{name}: {e}"))
}

/// Whether the file at `path` is Parquet (by its first bytes).
pub fn is_parquet_file(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    workload::files::open(path, "").is_ok_and(|mut f| f.read_exact(&mut magic).is_ok())
        && columnar::is_parquet(&magic)
}

/// A Parquet table read whole as text cells: its header and rows.
pub fn read_parquet(path: &Path) -> Result<(Vec<String>, Vec<Vec<String>>)> {
    let p = path.display();
    let file = workload::files::open(path, &p.to_string()).map_err(anyhow::Error::msg)?;
    let mut rd = columnar::Reader::new(file)
        .map_err(|e| anyhow!("{p}: not a readable Parquet table: {e}"))?;
    let header = rd.columns().iter().map(|c| c.name.clone()).collect();
    let mut rows = Vec::new();
    let mut row = Vec::new();
    while rd.next_row(&mut row).map_err(|e| anyhow!("{p}: {e}"))? {
        rows.push(std::mem::take(&mut row));
    }
    Ok((header, rows))
}
