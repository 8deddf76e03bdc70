//! Tables of text cells — the rows sresim writes as CSV — written to and read back from
//! Apache Parquet with typed columns.
//!
//! A table is a header of [`Column`]s, each a name and a [`Kind`], and rows of text
//! cells, one per column. [`Writer`] parses each cell as its column's kind (an empty cell
//! is a null) and writes row groups of [`ROW_GROUP_ROWS`] rows; [`Reader`] gives the
//! columns back and the rows as text again, a null as an empty cell, numbers in their
//! shortest round-trip form. So a CSV table and its Parquet copy hold the same numbers.
//!
//! | kind | Parquet column |
//! |---|---|
//! | [`Kind::Text`] | BYTE_ARRAY, logical type String (UTF-8) |
//! | [`Kind::Count`] | INT64, logical type Integer(64, unsigned) |
//! | [`Kind::Int`] | INT64, logical type Integer(64, signed) |
//! | [`Kind::Float`] | DOUBLE |
//! | [`Kind::Bool`] | BOOLEAN |
//!
//! Every column is OPTIONAL (nullable). Pages are Snappy-compressed, and dictionary
//! encoding is on (repeated names and small counts cost a few bits a cell).
//!
//! Memory: a writer holds the rows of one row group (typed, not as text) and one column
//! chunk while encoding it; a reader holds one row group's columns.

use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::column::reader::ColumnReader;
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{ChunkReader, FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{Type, TypePtr};
use std::io::Write;
use std::sync::Arc;

/// Rows per row group: about 10 MB of typed cells for a table of 60 columns.
pub const ROW_GROUP_ROWS: usize = 16_384;

/// The type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// UTF-8 text (names).
    Text,
    /// An unsigned 64-bit integer (counts).
    Count,
    /// A signed 64-bit integer.
    Int,
    /// A 64-bit float (energy, time, ratios).
    Float,
    /// `true` or `false`.
    Bool,
}

impl Kind {
    fn what(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Count => "an unsigned 64-bit integer",
            Kind::Int => "a 64-bit integer",
            Kind::Float => "a number",
            Kind::Bool => "true or false",
        }
    }
}

/// A column: its name and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
}

impl Column {
    pub fn new(name: impl Into<String>, kind: Kind) -> Column {
        Column {
            name: name.into(),
            kind,
        }
    }
}

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A cell that does not parse as its column's kind (rows count from 1, the header
    /// not counted).
    #[error("row {row}: column {column}: '{cell}' is not {what}")]
    Cell {
        row: u64,
        column: String,
        cell: String,
        what: &'static str,
    },
    #[error("row {row}: {got} cells, the header has {want}")]
    Width { row: u64, got: usize, want: usize },
    #[error("column {column}: a Parquet column of type {found} is not one this reader knows")]
    Schema { column: String, found: String },
    /// A row group whose declared size is refused before it is read.
    #[error("row group {group}: {problem}")]
    RowGroup { group: usize, problem: String },
    #[error("{}", parquet_text(.0))]
    Parquet(#[from] parquet::errors::ParquetError),
    /// The parquet crate gave up on a file by panicking (a footer or page header that
    /// contradicts itself: a negative column start, a dictionary-encoded page without its
    /// dictionary). Caught in [`guard`] and told as a corrupt file.
    #[error("a corrupt file ({0})")]
    Corrupt(String),
}

/// The text of a parquet error. A failure of the sink written to (parquet's
/// `External`) is the sink's own error, told as it is: it names its file
/// (`DIR/points.parquet: cannot write: File too large`), without parquet's `External: `.
fn parquet_text(e: &parquet::errors::ParquetError) -> String {
    match e {
        parquet::errors::ParquetError::External(inner) => inner.to_string(),
        e => e.to_string(),
    }
}

impl Error {
    /// Whether this is the sink's own error (its text names the file it writes).
    pub fn is_sink(&self) -> bool {
        matches!(
            self,
            Error::Parquet(parquet::errors::ParquetError::External(_))
        )
    }
}

thread_local! {
    /// Whether this thread is inside [`guard`]: its panics are told as errors, silently.
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, a call into the parquet crate's reader, turning a panic of that crate on a
/// corrupt file into [`Error::Corrupt`]: a file is data, and a user's damaged file gets
/// one line, never a backtrace (docs/errors.md). The panic hook installed the first time
/// stays silent for panics inside a guard and hands every other panic to the hook that
/// was there before.
fn guard<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(|g| g.get()) {
                previous(info);
            }
        }));
    });
    let was = GUARDED.with(|g| g.replace(true));
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(was));
    out.unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the Parquet reader failed".into());
        Err(Error::Corrupt(why))
    })
}

/// Most cells (rows x columns read) of one row group a reader holds: 2^26, about 1 GB of
/// typed cells (this crate writes [`ROW_GROUP_ROWS`] rows a group; pyarrow writes at most
/// 2^20). A footer that declares more is refused before anything is allocated.
pub const MAX_GROUP_CELLS: u64 = 1 << 26;

pub type Result<T> = std::result::Result<T, Error>;

/// The Parquet schema of `cols`.
pub fn schema(cols: &[Column]) -> Result<TypePtr> {
    let fields = cols
        .iter()
        .map(|c| {
            let (physical, logical) = match c.kind {
                Kind::Text => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
                Kind::Count => (Physical::INT64, Some(LogicalType::integer(64, false))),
                Kind::Int => (Physical::INT64, Some(LogicalType::integer(64, true))),
                Kind::Float => (Physical::DOUBLE, None),
                Kind::Bool => (Physical::BOOLEAN, None),
            };
            Type::primitive_type_builder(&c.name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<parquet::errors::Result<Vec<_>>>()?;
    Ok(Arc::new(
        Type::group_type_builder("schema")
            .with_fields(fields)
            .build()?,
    ))
}

/// The kind a column of `t` is read as.
fn kind_of(t: &Type) -> Result<Kind> {
    let info = t.get_basic_info();
    let logical = info.logical_type_ref();
    let bad = || Error::Schema {
        column: t.name().to_string(),
        found: format!("{:?} {:?}", t.get_physical_type(), logical),
    };
    if !t.is_primitive() {
        return Err(bad());
    }
    Ok(match t.get_physical_type() {
        Physical::BYTE_ARRAY => Kind::Text,
        Physical::INT64 => match logical {
            Some(LogicalType::Integer(i)) if !i.is_signed => Kind::Count,
            Some(LogicalType::Integer(_)) | None => Kind::Int,
            _ => return Err(bad()),
        },
        Physical::DOUBLE => Kind::Float,
        Physical::BOOLEAN => Kind::Bool,
        _ => return Err(bad()),
    })
}

/// One column's cells of the rows buffered: definition levels (1 present, 0 null) and
/// the present values.
enum Cells {
    Text(Vec<ByteArray>),
    Int(Vec<i64>),
    Float(Vec<f64>),
    Bool(Vec<bool>),
}

impl Cells {
    fn of(kind: Kind) -> Cells {
        match kind {
            Kind::Text => Cells::Text(Vec::new()),
            Kind::Count | Kind::Int => Cells::Int(Vec::new()),
            Kind::Float => Cells::Float(Vec::new()),
            Kind::Bool => Cells::Bool(Vec::new()),
        }
    }

    fn clear(&mut self) {
        match self {
            Cells::Text(v) => v.clear(),
            Cells::Int(v) => v.clear(),
            Cells::Float(v) => v.clear(),
            Cells::Bool(v) => v.clear(),
        }
    }
}

/// Writes a table to Parquet, a row at a time.
pub struct Writer<W: Write + Send> {
    file: SerializedFileWriter<W>,
    cols: Vec<Column>,
    defs: Vec<Vec<i16>>,
    cells: Vec<Cells>,
    buffered: usize,
    rows: u64,
}

impl<W: Write + Send> Writer<W> {
    /// A table of the columns `cols` written to `out`.
    pub fn new(out: W, cols: Vec<Column>) -> Result<Writer<W>> {
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("sresim {}", env!("CARGO_PKG_VERSION")))
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .build();
        let file = SerializedFileWriter::new(out, schema(&cols)?, Arc::new(props))?;
        Ok(Writer {
            file,
            defs: cols.iter().map(|_| Vec::new()).collect(),
            cells: cols.iter().map(|c| Cells::of(c.kind)).collect(),
            cols,
            buffered: 0,
            rows: 0,
        })
    }

    pub fn columns(&self) -> &[Column] {
        &self.cols
    }

    /// Appends one row: a text cell per column, an empty cell for a null.
    pub fn row<S: AsRef<[u8]>>(&mut self, cells: &[S]) -> Result<()> {
        self.rows += 1;
        if cells.len() != self.cols.len() {
            return Err(Error::Width {
                row: self.rows,
                got: cells.len(),
                want: self.cols.len(),
            });
        }
        for (i, cell) in cells.iter().enumerate() {
            let cell = cell.as_ref();
            if cell.is_empty() {
                self.defs[i].push(0);
                continue;
            }
            let kind = self.cols[i].kind;
            let bad = || Error::Cell {
                row: self.rows,
                column: self.cols[i].name.clone(),
                cell: String::from_utf8_lossy(cell).into_owned(),
                what: kind.what(),
            };
            let text = || std::str::from_utf8(cell).map_err(|_| bad());
            match (&mut self.cells[i], kind) {
                (Cells::Text(v), _) => {
                    text()?;
                    v.push(ByteArray::from(cell.to_vec()));
                }
                (Cells::Int(v), Kind::Count) => {
                    // Stored in INT64's bits, read back as unsigned by every reader.
                    v.push(text()?.parse::<u64>().map_err(|_| bad())? as i64);
                }
                (Cells::Int(v), _) => v.push(text()?.parse::<i64>().map_err(|_| bad())?),
                (Cells::Float(v), _) => v.push(text()?.parse::<f64>().map_err(|_| bad())?),
                (Cells::Bool(v), _) => v.push(match cell {
                    b"true" => true,
                    b"false" => false,
                    _ => return Err(bad()),
                }),
            }
            self.defs[i].push(1);
        }
        self.buffered += 1;
        if self.buffered == ROW_GROUP_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as one row group.
    fn flush(&mut self) -> Result<()> {
        if self.buffered == 0 {
            return Ok(());
        }
        let mut rg = self.file.next_row_group()?;
        let mut i = 0;
        while let Some(mut col) = rg.next_column()? {
            let defs = Some(self.defs[i].as_slice());
            match (col.untyped(), &self.cells[i]) {
                (ColumnWriter::ByteArrayColumnWriter(w), Cells::Text(v)) => {
                    w.write_batch(v, defs, None)?;
                }
                (ColumnWriter::Int64ColumnWriter(w), Cells::Int(v)) => {
                    w.write_batch(v, defs, None)?;
                }
                (ColumnWriter::DoubleColumnWriter(w), Cells::Float(v)) => {
                    w.write_batch(v, defs, None)?;
                }
                (ColumnWriter::BoolColumnWriter(w), Cells::Bool(v)) => {
                    w.write_batch(v, defs, None)?;
                }
                _ => unreachable!("the schema is built from the same kinds as the buffers"),
            }
            col.close()?;
            self.defs[i].clear();
            self.cells[i].clear();
            i += 1;
        }
        rg.close()?;
        self.buffered = 0;
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes the last row group and the footer; returns the output.
    pub fn finish(mut self) -> Result<W> {
        self.flush()?;
        Ok(self.file.into_inner()?)
    }
}

/// One column of a row group, read.
struct ColumnData {
    defs: Vec<i16>,
    cells: Cells,
    /// The next level, and the next present value.
    at: usize,
    value: usize,
}

/// Reads a Parquet table back as rows of text cells.
pub struct Reader<R: ChunkReader + 'static> {
    file: SerializedFileReader<R>,
    cols: Vec<Column>,
    group: usize,
    data: Vec<ColumnData>,
    left: usize,
    /// Only these columns are read (indexes into the file's columns).
    projection: Vec<usize>,
}

impl<R: ChunkReader + 'static> Reader<R> {
    /// Opens a Parquet file; its columns must be of the kinds [`Writer`] writes.
    pub fn new(input: R) -> Result<Reader<R>> {
        guard(|| Self::open(input))
    }

    fn open(input: R) -> Result<Reader<R>> {
        let file = SerializedFileReader::new(input)?;
        let schema = file.metadata().file_metadata().schema_descr_ptr();
        let cols = schema
            .columns()
            .iter()
            .map(|c| {
                if c.max_rep_level() > 0 {
                    return Err(Error::Schema {
                        column: c.name().to_string(),
                        found: "a repeated column".into(),
                    });
                }
                Ok(Column::new(c.name(), kind_of(&c.self_type_ptr())?))
            })
            .collect::<Result<Vec<_>>>()?;
        let projection = (0..cols.len()).collect();
        Ok(Reader {
            file,
            cols,
            group: 0,
            data: Vec::new(),
            left: 0,
            projection,
        })
    }

    /// The file's columns.
    pub fn columns(&self) -> &[Column] {
        &self.cols
    }

    /// The number of rows, from the footer (a negative count, which only a corrupt file
    /// declares, as 0: the row groups, read one by one, are refused).
    pub fn num_rows(&self) -> u64 {
        u64::try_from(self.file.metadata().file_metadata().num_rows()).unwrap_or(0)
    }

    /// From now on, reads only the columns at `indexes` (in that order): rows then have
    /// one cell per index.
    pub fn project(&mut self, indexes: Vec<usize>) {
        self.projection = indexes;
        self.data.clear();
        self.left = 0;
    }

    /// Reads the next row group's columns; false when there is none.
    fn load(&mut self) -> Result<bool> {
        guard(|| self.load_group())
    }

    fn load_group(&mut self) -> Result<bool> {
        while self.group < self.file.num_row_groups() {
            let rg = self.file.get_row_group(self.group)?;
            self.group += 1;
            // The footer's claim, bounded before the columns are allocated from it; a
            // negative count is no count (it was read as an empty group, and its rows
            // reported missing).
            let declared = rg.metadata().num_rows();
            let rows = u64::try_from(declared).map_err(|_| Error::RowGroup {
                group: self.group - 1,
                problem: format!("declares {declared} rows: a corrupt file"),
            })?;
            let cells = (self.projection.len().max(1) as u64).checked_mul(rows);
            let n = bounds::size::at_most(cells.unwrap_or(u64::MAX), MAX_GROUP_CELLS, "cells")
                .map(|_| rows as usize)
                .map_err(|e| Error::RowGroup {
                    group: self.group - 1,
                    problem: format!(
                        "declares {rows} rows x {} columns = {e} a row group",
                        self.projection.len()
                    ),
                })?;
            if n == 0 {
                continue;
            }
            self.data.clear();
            for &c in &self.projection {
                let kind = self.cols[c].kind;
                let mut defs = Vec::with_capacity(n);
                let mut cells = Cells::of(kind);
                let reader = rg.get_column_reader(c)?;
                let read = match (reader, &mut cells) {
                    (ColumnReader::ByteArrayColumnReader(mut r), Cells::Text(v)) => {
                        r.read_records(n, Some(&mut defs), None, v)?
                    }
                    (ColumnReader::Int64ColumnReader(mut r), Cells::Int(v)) => {
                        r.read_records(n, Some(&mut defs), None, v)?
                    }
                    (ColumnReader::DoubleColumnReader(mut r), Cells::Float(v)) => {
                        r.read_records(n, Some(&mut defs), None, v)?
                    }
                    (ColumnReader::BoolColumnReader(mut r), Cells::Bool(v)) => {
                        r.read_records(n, Some(&mut defs), None, v)?
                    }
                    _ => unreachable!("kinds come from the physical types"),
                };
                if read.0 != n {
                    return Err(Error::Parquet(parquet::errors::ParquetError::General(
                        format!(
                            "column {}: {} of {n} rows in a row group",
                            self.cols[c].name, read.0
                        ),
                    )));
                }
                // A REQUIRED column (written by another tool) has no levels: all present.
                if defs.is_empty() {
                    defs.resize(n, 1);
                }
                self.data.push(ColumnData {
                    defs,
                    cells,
                    at: 0,
                    value: 0,
                });
            }
            self.left = n;
            return Ok(true);
        }
        Ok(false)
    }

    /// Reads the next row into `row` (one cell per projected column, a null as ""); false
    /// at the end of the table.
    pub fn next_row(&mut self, row: &mut Vec<String>) -> Result<bool> {
        if self.left == 0 && !self.load()? {
            return Ok(false);
        }
        self.left -= 1;
        row.clear();
        for (d, &c) in self.data.iter_mut().zip(&self.projection) {
            let present = d.defs[d.at] > 0;
            d.at += 1;
            if !present {
                row.push(String::new());
                continue;
            }
            let v = d.value;
            d.value += 1;
            row.push(match &d.cells {
                Cells::Text(t) => String::from_utf8_lossy(t[v].data()).into_owned(),
                Cells::Int(x) if self.cols[c].kind == Kind::Count => (x[v] as u64).to_string(),
                Cells::Int(x) => x[v].to_string(),
                Cells::Float(x) => format!("{}", x[v]),
                Cells::Bool(x) => x[v].to_string(),
            });
        }
        Ok(true)
    }
}

/// True when `bytes` start like a Parquet file (its magic number).
pub fn is_parquet(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PAR1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols() -> Vec<Column> {
        vec![
            Column::new("name", Kind::Text),
            Column::new("count", Kind::Count),
            Column::new("ou.rows", Kind::Int),
            Column::new("energy_pj", Kind::Float),
            Column::new("flag", Kind::Bool),
        ]
    }

    fn write(rows: &[Vec<&str>]) -> Vec<u8> {
        let mut w = Writer::new(Vec::new(), cols()).unwrap();
        for r in rows {
            w.row(r).unwrap();
        }
        w.finish().unwrap()
    }

    fn read(bytes: Vec<u8>) -> (Vec<Column>, Vec<Vec<String>>) {
        let mut r = Reader::new(bytes::Bytes::from(bytes)).unwrap();
        let c = r.columns().to_vec();
        let mut out = Vec::new();
        let mut row = Vec::new();
        while r.next_row(&mut row).unwrap() {
            out.push(row.clone());
        }
        (c, out)
    }

    #[test]
    fn rows_come_back_as_written_with_nulls_and_extreme_values() {
        let max = u64::MAX.to_string();
        let rows = vec![
            vec!["conv1", "0", "-4", "12127457.28", "true"],
            vec!["", "", "", "", ""],
            vec!["TOTAL, \"quoted\"", max.as_str(), "9", "0.000001", "false"],
            vec!["ünïcode", "7", "0", "0.1", ""],
        ];
        let bytes = write(&rows);
        assert!(is_parquet(&bytes));
        let (c, back) = read(bytes);
        assert_eq!(c, cols());
        let want: Vec<Vec<String>> = rows
            .iter()
            .map(|r| r.iter().map(|s| s.to_string()).collect())
            .collect();
        assert_eq!(back, want);
    }

    #[test]
    fn many_row_groups_keep_the_order_and_a_projection_reads_one_column() {
        let n = 2 * ROW_GROUP_ROWS + 17;
        let mut w = Writer::new(Vec::new(), cols()).unwrap();
        for i in 0..n {
            let i_s = i.to_string();
            let f = format!("{}", i as f64 * 0.25);
            let name = format!("p{}", i / 3);
            let flag = if i % 2 == 0 { "true" } else { "" };
            w.row(&[name.as_str(), i_s.as_str(), "-1", f.as_str(), flag])
                .unwrap();
        }
        assert_eq!(w.rows(), n as u64);
        let bytes = w.finish().unwrap();
        let mut r = Reader::new(bytes::Bytes::from(bytes.clone())).unwrap();
        assert_eq!(r.num_rows(), n as u64);
        r.project(vec![1, 0]);
        let mut row = Vec::new();
        let mut i = 0;
        while r.next_row(&mut row).unwrap() {
            assert_eq!(row, [i.to_string(), format!("p{}", i / 3)]);
            i += 1;
        }
        assert_eq!(i, n);
        let (_, all) = read(bytes);
        assert_eq!(all[n - 1][3], format!("{}", (n - 1) as f64 * 0.25));
        assert_eq!(all[1][4], "");
        assert_eq!(all[2][4], "true");
    }

    #[test]
    fn a_cell_of_the_wrong_kind_names_its_row_and_column() {
        let mut w = Writer::new(Vec::new(), cols()).unwrap();
        w.row(&["a", "1", "2", "3", "true"]).unwrap();
        let e = w.row(&["a", "-1", "2", "3", "true"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "row 2: column count: '-1' is not an unsigned 64-bit integer"
        );
        let e = w.row(&["a", "1", "2.5", "3", "true"]).unwrap_err();
        assert!(e.to_string().contains("column ou.rows: '2.5'"), "{e}");
        let e = w.row(&["a", "1", "2", "x", "true"]).unwrap_err();
        assert!(e
            .to_string()
            .contains("column energy_pj: 'x' is not a number"));
        let e = w.row(&["a", "1", "2", "3", "1"]).unwrap_err();
        assert!(e.to_string().contains("'1' is not true or false"));
        let e = w.row(&["a"]).unwrap_err();
        assert_eq!(e.to_string(), "row 6: 1 cells, the header has 5");
    }

    /// A sink that refuses every write, as a file past `ulimit -f` does, its error naming
    /// the file as outdir's writers do.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other(
                "D/points.parquet: cannot write: File too large",
            ))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_sink_that_fails_is_told_by_its_own_error() {
        let e = Writer::new(Full, cols())
            .and_then(|mut w| {
                w.row(&["a", "1", "2", "3", "true"])?;
                w.finish().map(|_| ())
            })
            .unwrap_err();
        assert!(e.is_sink(), "{e:?}");
        assert_eq!(
            e.to_string(),
            "D/points.parquet: cannot write: File too large"
        );
    }

    /// `bytes` (a file of this writer) with every i64 field of its footer that holds 3
    /// (the row counts of a 3-row table) made to declare `rows`.
    pub fn claim_rows(bytes: &[u8], rows: u64) -> Vec<u8> {
        let n = bytes.len();
        let len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
        let start = n - 8 - len;
        let mut enc = Vec::new();
        let mut z = rows << 1; // zigzag, then a varint
        loop {
            let b = (z & 0x7f) as u8;
            z >>= 7;
            if z == 0 {
                enc.push(b);
                break;
            }
            enc.push(b | 0x80);
        }
        let footer = &bytes[start..n - 8];
        let mut out = bytes[..start].to_vec();
        let mut i = 0;
        while i < footer.len() {
            // Compact protocol: field delta 1, type i64 (0x16), value 3 (zigzag 6).
            if footer[i..].starts_with(&[0x16, 0x06]) {
                out.push(0x16);
                out.extend_from_slice(&enc);
                i += 2;
            } else {
                out.push(footer[i]);
                i += 1;
            }
        }
        let new_len = (out.len() - start) as u32;
        out.extend_from_slice(&new_len.to_le_bytes());
        out.extend_from_slice(b"PAR1");
        out
    }

    #[test]
    fn a_row_group_declaring_2_to_the_40_rows_is_refused_before_allocation() {
        let bytes = write(&vec![vec!["a", "1", "2", "0.5", "true"]; 3]);
        let (_, rows) = read(claim_rows(&bytes, 3));
        assert_eq!(rows.len(), 3, "the patch keeps a valid file valid");
        let hostile = claim_rows(&bytes, 1 << 40);
        assert_ne!(hostile, bytes);
        let mut r = Reader::new(bytes::Bytes::from(hostile)).unwrap();
        let e = r.next_row(&mut Vec::new()).unwrap_err().to_string();
        assert_eq!(
            e,
            "row group 0: declares 1099511627776 rows x 5 columns = 5497558138880 cells, more than the limit of 67108864 a row group"
        );
    }

    /// The parquet crate panics on some corrupt footers and pages (a negative column
    /// start; a dictionary-encoded page without its dictionary): every byte of a small
    /// file flipped to each of a few values reads as a table or fails as an error, and
    /// some flips are told as a corrupt file.
    #[test]
    fn every_single_byte_corruption_is_an_error_or_a_table_never_a_panic() {
        let rows: Vec<Vec<&str>> = (0..40)
            .map(|i| {
                if i % 3 == 0 {
                    vec!["x", "7", "-2", "", "true"]
                } else {
                    vec!["yy", "1", "3", "0.5", "false"]
                }
            })
            .collect();
        let clean = write(&rows);
        let mut corrupt = 0;
        for at in 0..clean.len() {
            for v in [0xff_u8, 0xd0, 0x00, 0x80] {
                let mut b = clean.clone();
                b[at] = v;
                let read = Reader::new(bytes::Bytes::from(b)).and_then(|mut r| {
                    let mut row = Vec::new();
                    while r.next_row(&mut row)? {}
                    Ok(())
                });
                if let Err(Error::Corrupt(_)) = read {
                    corrupt += 1;
                }
            }
        }
        assert!(corrupt > 0, "no flip reached the parquet crate's panics");
    }

    #[test]
    fn not_parquet_is_an_error_not_a_panic() {
        assert!(Reader::new(bytes::Bytes::from_static(b"point,a\n1,2\n")).is_err());
        assert!(!is_parquet(b"point,a\n"));
    }
}
