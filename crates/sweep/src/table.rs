//! A CSV file read whole, for `plot` and `compare`: a header and rows of text cells.

use anyhow::{anyhow, bail, Result};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Table {
    pub path: PathBuf,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Reads `path`; a directory stands for its points.csv, else its layers.csv.
    pub fn read(path: &Path) -> Result<Table> {
        let path = if path.is_dir() {
            ["points.csv", "layers.csv"]
                .iter()
                .map(|f| path.join(f))
                .find(|p| p.is_file())
                .ok_or_else(|| anyhow!("{}: holds no points.csv or layers.csv", path.display()))?
        } else {
            path.to_path_buf()
        };
        let p = path.display().to_string();
        let file = workload::files::open(&path, &p).map_err(anyhow::Error::msg)?;
        let mut rd = csv::Reader::from_reader(std::io::BufReader::new(file));
        let header: Vec<String> = rd
            .headers()
            .map_err(|e| anyhow!("{p}: {e}"))?
            .iter()
            .map(String::from)
            .collect();
        if header.is_empty() || header.iter().all(String::is_empty) {
            bail!("{p}: empty file (no header)");
        }
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
