//! points.csv read without holding it: one pass records where each point's rows are
//! (a [`Run`] of 24 bytes per stretch of consecutive rows of one point), and the rows are
//! then copied run by run, in whatever order the output needs, a few rows at a time.
//! Memory grows with the points of a file, never with its rows or bytes.

use super::meta::Ids;
use anyhow::{anyhow, bail, Result};
use csv::ByteRecord;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Consecutive rows of one point: bytes `start..end` of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// The point's index in grid order.
    pub point: u32,
    pub rows: u32,
    pub start: u64,
    pub end: u64,
}

/// Where the rows of a points.csv are.
#[derive(Debug)]
pub struct Index {
    pub path: PathBuf,
    /// In file order.
    pub runs: Vec<Run>,
    /// A trailing line without its newline was found (and ignored).
    pub torn: bool,
    /// The file has no whole header line (it is empty, or cut inside the header).
    pub headless: bool,
}

/// A point's rows in one file: how many, and the first of its runs.
#[derive(Debug, Clone, Copy)]
pub struct Total {
    pub point: u32,
    pub rows: u32,
    pub first_run: u32,
}

/// Point ids (text, all of one width) to their index in grid order.
pub fn lookup<'a>(ids: impl Iterator<Item = &'a str>) -> Ids {
    Ids::of(ids)
}

/// Indexes `path`, which must have the header `cols`, ignoring a torn last line; rows of
/// points that `ids` does not know are an error.
pub fn index(path: &Path, cols: &[String], ids: &Ids) -> Result<Index> {
    let p = path.display().to_string();
    let mut file = workload::files::open(path, &p).map_err(|e| anyhow!(e))?;
    let end = whole_lines(&mut file).map_err(|e| anyhow!("{p}: cannot read: {e}"))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(end);
    let mut ix = Index {
        path: path.to_path_buf(),
        runs: Vec::new(),
        torn: end < len,
        headless: end == 0,
    };
    if end == 0 {
        return Ok(ix);
    }
    file.seek(SeekFrom::Start(0))
        .map_err(|e| anyhow!("{p}: cannot read: {e}"))?;
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(true)
        .buffer_capacity(1 << 16)
        .from_reader(BufReader::with_capacity(1 << 16, file.take(end)));
    let header = rd.byte_headers().map_err(|e| anyhow!("{p}: {e}"))?;
    if header.len() != cols.len() || header.iter().zip(cols).any(|(a, b)| a != b.as_bytes()) {
        bail!("{p}: header: the columns are not those of this grid (the axes differ)");
    }
    let mut rec = ByteRecord::new();
    let mut last_id: Vec<u8> = Vec::new();
    while rd
        .read_byte_record(&mut rec)
        .map_err(|e| anyhow!("{p}: {e}"))?
    {
        let pos = rec.position().map_or(0, |q| q.byte());
        let after = rd.position().byte();
        if let Err(e) = std::str::from_utf8(rec.as_slice()) {
            let line = rec.position().map_or(0, |q| q.line());
            bail!("{p}: line {line}: not UTF-8: {e}");
        }
        let id = &rec[0];
        match ix.runs.last_mut() {
            Some(r) if id == last_id.as_slice() && r.end == pos => {
                r.rows += 1;
                r.end = after;
            }
            _ => {
                let text = std::str::from_utf8(id).unwrap_or_default();
                let Some(&point) = ids.get(text) else {
                    let line = rec.position().map_or(0, |q| q.line());
                    bail!("{p}: line {line}: point '{text}' is not a point of this grid");
                };
                last_id.clear();
                last_id.extend_from_slice(id);
                ix.runs.push(Run {
                    point,
                    rows: 1,
                    start: pos,
                    end: after,
                });
            }
        }
    }
    Ok(ix)
}

/// The length of the file up to and including its last newline.
fn whole_lines(file: &mut File) -> std::io::Result<u64> {
    let mut pos = file.seek(SeekFrom::End(0))?;
    let mut buf = vec![0u8; 1 << 16];
    while pos > 0 {
        let n = (buf.len() as u64).min(pos) as usize;
        pos -= n as u64;
        file.seek(SeekFrom::Start(pos))?;
        file.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            return Ok(pos + i as u64 + 1);
        }
    }
    Ok(0)
}

impl Index {
    /// Every point of the file with its row count, by point index.
    pub fn totals(&self) -> Vec<Total> {
        let mut t: Vec<Total> = Vec::with_capacity(self.runs.len());
        let mut order: Vec<u32> = (0..self.runs.len() as u32).collect();
        order.sort_by_key(|&i| self.runs[i as usize].point);
        for i in order {
            let r = self.runs[i as usize];
            match t.last_mut() {
                Some(last) if last.point == r.point => last.rows += r.rows,
                _ => t.push(Total {
                    point: r.point,
                    rows: r.rows,
                    first_run: i,
                }),
            }
        }
        t
    }

    /// The runs of the points `keep` accepts, grouped by point: points in grid order when
    /// `grid_order`, else in the order they first appear; each point's runs in file order.
    pub fn grouped(&self, keep: impl Fn(&Total) -> bool, grid_order: bool) -> Vec<Run> {
        let totals = self.totals();
        let mut order: Vec<(u32, u32)> = Vec::with_capacity(self.runs.len());
        for (i, r) in self.runs.iter().enumerate() {
            let t = &totals[totals.partition_point(|t| t.point < r.point)];
            if keep(t) {
                order.push((if grid_order { t.point } else { t.first_run }, i as u32));
            }
        }
        order.sort_unstable();
        order.iter().map(|&(_, i)| self.runs[i as usize]).collect()
    }
}

/// Indexes a points.parquet (written by a sweep or merge of this grid: its header must
/// be `cols`). A run's `start` and `end` are row numbers, not bytes.
pub fn index_parquet(path: &Path, cols: &[String], ids: &Ids) -> Result<Index> {
    let p = path.display().to_string();
    let mut rd = open_parquet(path)?;
    let names: Vec<&str> = rd.columns().iter().map(|c| c.name.as_str()).collect();
    if names != cols {
        bail!("{p}: columns: they are not those of this grid (the axes differ)");
    }
    rd.project(vec![0]);
    let mut ix = Index {
        path: path.to_path_buf(),
        runs: Vec::new(),
        torn: false,
        headless: false,
    };
    let mut row = Vec::new();
    let mut n: u64 = 0;
    let mut last = String::new();
    while rd.next_row(&mut row).map_err(|e| anyhow!("{p}: {e}"))? {
        let id = &row[0];
        match ix.runs.last_mut() {
            Some(r) if *id == last => {
                r.rows += 1;
                r.end = n + 1;
            }
            _ => {
                let Some(&point) = ids.get(id) else {
                    bail!(
                        "{p}: row {}: point '{id}' is not a point of this grid",
                        n + 1
                    );
                };
                last.clone_from(id);
                ix.runs.push(Run {
                    point,
                    rows: 1,
                    start: n,
                    end: n + 1,
                });
            }
        }
        n += 1;
    }
    Ok(ix)
}

fn open_parquet(path: &Path) -> Result<columnar::Reader<File>> {
    let p = path.display();
    let file = workload::files::open(path, &p.to_string()).map_err(|e| anyhow!(e))?;
    columnar::Reader::new(file).map_err(|e| anyhow!("{p}: not a readable Parquet table: {e}"))
}

/// Reads runs of one file: of a points.csv in any order; of a points.parquet front to
/// back (its runs in increasing row order, as a sweep or merge writes them).
pub struct RunReader {
    path: PathBuf,
    from: Source,
}

enum Source {
    Csv {
        file: File,
        buf: Vec<u8>,
    },
    Parquet {
        rd: Box<columnar::Reader<File>>,
        /// The next row's number.
        at: u64,
        row: Vec<String>,
    },
}

impl RunReader {
    pub fn open(path: &Path) -> Result<RunReader> {
        let from = if path.extension().is_some_and(|e| e == "parquet") {
            Source::Parquet {
                rd: Box::new(open_parquet(path)?),
                at: 0,
                row: Vec::new(),
            }
        } else {
            let file =
                workload::files::open(path, &path.display().to_string()).map_err(|e| anyhow!(e))?;
            Source::Csv {
                file,
                buf: Vec::new(),
            }
        };
        Ok(RunReader {
            path: path.to_path_buf(),
            from,
        })
    }

    /// Appends the rows of `run` to `rows`.
    pub fn read(&mut self, run: &Run, rows: &mut Vec<ByteRecord>) -> Result<()> {
        let p = self.path.display();
        let (file, buf) = match &mut self.from {
            Source::Csv { file, buf } => (file, buf),
            Source::Parquet { rd, at, row } => {
                if run.start < *at {
                    bail!("{p}: the rows of a point are not together, in grid order (written by another tool?): Parquet inputs are read front to back");
                }
                while *at < run.end {
                    if !rd.next_row(row).map_err(|e| anyhow!("{p}: {e}"))? {
                        bail!("{p}: cannot read (changed while being read?): ends at row {at}");
                    }
                    if *at >= run.start {
                        rows.push(ByteRecord::from(
                            row.iter().map(String::as_str).collect::<Vec<_>>(),
                        ));
                    }
                    *at += 1;
                }
                return Ok(());
            }
        };
        buf.resize((run.end - run.start) as usize, 0);
        file.seek(SeekFrom::Start(run.start))
            .and_then(|_| file.read_exact(buf))
            .map_err(|e| anyhow!("{p}: cannot read (changed while being read?): {e}"))?;
        let mut rd = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(buf.as_slice());
        let mut rec = ByteRecord::new();
        while rd
            .read_byte_record(&mut rec)
            .map_err(|e| anyhow!("{p}: {e}"))?
        {
            rows.push(rec.clone());
        }
        Ok(())
    }
}

/// An error of points.parquet's writer, once: the sink's own error names the file
/// already (`DIR/points.parquet: cannot write: ...`); any other is prefixed with it.
fn parquet_error(e: columnar::Error) -> anyhow::Error {
    match e.is_sink() {
        true => anyhow!("{e}"),
        false => anyhow!("points.parquet: {e}"),
    }
}

/// Writes a points table: the header `cols`, then rows; as CSV or as Parquet.
pub struct RowWriter<W: Write + Send> {
    w: Sink<W>,
}

enum Sink<W: Write + Send> {
    Csv(Box<csv::Writer<W>>),
    Parquet(Box<columnar::Writer<W>>),
}

impl<W: Write + Send> RowWriter<W> {
    pub fn new(out: W, cols: &[String]) -> Result<RowWriter<W>> {
        let mut w = csv::WriterBuilder::new()
            .buffer_capacity(1 << 16)
            .from_writer(out);
        w.write_record(cols)?;
        Ok(RowWriter {
            w: Sink::Csv(Box::new(w)),
        })
    }

    /// A writer of points.parquet with the columns `cols`.
    pub fn parquet(out: W, cols: Vec<columnar::Column>) -> Result<RowWriter<W>> {
        let w = columnar::Writer::new(out, cols).map_err(parquet_error)?;
        Ok(RowWriter {
            w: Sink::Parquet(Box::new(w)),
        })
    }

    pub fn rows(&mut self, rows: &[ByteRecord]) -> Result<()> {
        for r in rows {
            match &mut self.w {
                Sink::Csv(w) => w.write_byte_record(r)?,
                Sink::Parquet(w) => {
                    let cells: Vec<&[u8]> = r.iter().collect();
                    w.row(&cells).map_err(parquet_error)?;
                }
            }
        }
        Ok(())
    }

    /// Copies `runs` of `from` in order.
    pub fn copy(&mut self, from: &mut RunReader, runs: &[Run]) -> Result<()> {
        let mut rows = Vec::new();
        for r in runs {
            rows.clear();
            from.read(r, &mut rows)?;
            self.rows(&rows)?;
        }
        Ok(())
    }

    pub fn finish(self) -> Result<W> {
        match self.w {
            Sink::Csv(w) => w.into_inner().map_err(|e| anyhow!("{}", e.error())),
            Sink::Parquet(w) => w.finish().map_err(parquet_error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_group_rows_by_point_and_a_torn_tail_is_left_out() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("points.csv");
        std::fs::write(&path, "point,v\na,1\na,2\nb,3\na,\"4,5\"\nb,6\nb,7").unwrap();
        let cols = ["point", "v"].map(String::from);
        let ids = lookup(["b", "a"].into_iter());
        let ix = index(&path, &cols, &ids).unwrap();
        assert!(ix.torn && !ix.headless);
        let pts: Vec<(u32, u32)> = ix.runs.iter().map(|r| (r.point, r.rows)).collect();
        assert_eq!(pts, [(1, 2), (0, 1), (1, 1), (0, 1)], "b,7 is torn");
        let rows = |runs: &[Run]| {
            let mut rd = RunReader::open(&path).unwrap();
            let mut v = Vec::new();
            for r in runs {
                rd.read(r, &mut v).unwrap();
            }
            v.iter()
                .map(|r| String::from_utf8(r[1].to_vec()).unwrap())
                .collect::<Vec<_>>()
        };
        // First appearance: a then b; grid order: b (0) then a (1).
        assert_eq!(
            rows(&ix.grouped(|_| true, false)),
            ["1", "2", "4,5", "3", "6"]
        );
        assert_eq!(
            rows(&ix.grouped(|_| true, true)),
            ["3", "6", "1", "2", "4,5"]
        );
        assert_eq!(rows(&ix.grouped(|t| t.rows == 2, true)), ["3", "6"]);
        std::fs::write(&path, "point,v\nc,1\n").unwrap();
        let e = index(&path, &cols, &ids).unwrap_err().to_string();
        assert!(
            e.contains("line 2: point 'c' is not a point of this grid"),
            "{e}"
        );
        std::fs::write(&path, "point,w\n").unwrap();
        assert!(index(&path, &cols, &ids).is_err());
        std::fs::write(&path, "poi").unwrap();
        let ix = index(&path, &cols, &ids).unwrap();
        assert!(ix.headless && ix.torn && ix.runs.is_empty());
    }
}
