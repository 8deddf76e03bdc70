//! A result table read whole, for `plot` and `compare`: a header and rows of text cells,
//! from CSV or from Parquet (typed cells read back as text, crate columnar).

use anyhow::{anyhow, bail, Result};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Table {
    pub path: PathBuf,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// The result table of directory `dir`: its points table (CSV or Parquet), else its
/// layers table.
pub fn find(dir: &Path) -> Result<PathBuf> {
    for stem in ["points", "layers"] {
        let [csv, parquet] = ["csv", "parquet"].map(|e| dir.join(format!("{stem}.{e}")));
        match (csv.is_file(), parquet.is_file()) {
            (true, true) => bail!(
                "{}: holds both {stem}.csv and {stem}.parquet: name the file to read",
                dir.display()
            ),
            (true, false) => return Ok(csv),
            (false, true) => return Ok(parquet),
            (false, false) => {}
        }
    }
    bail!(
        "{}: holds no points.csv, points.parquet, layers.csv or layers.parquet",
        dir.display()
    )
}

/// The one check of a result table's header, CSV or Parquet, for every reader of one
/// (`compare`, `plot`, the Pareto view): not empty, and every column named once. A
/// repeated name would be matched by its first column only, the other one never read
/// (two tables `a,a,b` with different second columns compared equal).
pub fn check_header(p: &str, header: &[String]) -> Result<()> {
    if header.is_empty() || header.iter().all(String::is_empty) {
        bail!("{p}: empty file (no header)");
    }
    let mut seen = std::collections::HashSet::with_capacity(header.len());
    for (i, h) in header.iter().enumerate() {
        if !seen.insert(h.as_str()) {
            let shown: String = h.chars().take(60).collect();
            bail!(
                "{p}: header: column {} is named {shown:?} again (a table names each column once)",
                i + 1
            );
        }
    }
    Ok(())
}

impl Table {
    /// Reads `path`, CSV or Parquet (told by its first bytes); a directory stands for its
    /// points table (points.csv or points.parquet), else its layers table.
    pub fn read(path: &Path) -> Result<Table> {
        let path = if path.is_dir() {
            find(path)?
        } else {
            path.to_path_buf()
        };
        if sim::format::is_parquet_file(&path) {
            let (header, rows) = sim::format::read_parquet(&path)?;
            check_header(&path.display().to_string(), &header)?;
            return Ok(Table { path, header, rows });
        }
        let p = path.display().to_string();
        let file = workload::files::open(&path, &p).map_err(anyhow::Error::msg)?;
        let mut rd = csv::Reader::from_reader(std::io::BufReader::new(file));
        let header: Vec<String> = rd
            .headers()
            .map_err(|e| anyhow!("{p}: {e}"))?
            .iter()
            .map(String::from)
            .collect();
        check_header(&p, &header)?;
        let mut rows = Vec::new();
        for rec in rd.records() {
            let rec = rec.map_err(|e| anyhow!("{p}: {e}"))?;
            rows.push(rec.iter().map(String::from).collect());
        }
        Ok(Table { path, header, rows })
    }

    /// The index of `col`, or an error listing the columns.
    pub fn col(&self, col: &str, flag: &str) -> Result<usize> {
        self.header.iter().position(|h| h == col).ok_or_else(|| {
            anyhow!(
                "{}: {flag}: no column '{col}' (columns: {})",
                self.path.display(),
                self.header.join(", ")
            )
        })
    }
}
