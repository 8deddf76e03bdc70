//! Reading a shard's records.csv back for `accuracy-merge`: each record checked against
//! what the writer writes (its cells' ranges, classes, and each layer's crossbar flag
//! against its path and the shard's layers).

use super::*;

impl RecordReader {
    pub(super) fn open(dir: &Path, m: &Manifest) -> Result<RecordReader> {
        let path = dir.join(RECORDS);
        let label = path.display().to_string();
        let f = workload::files::open(&path, &label).map_err(|e| anyhow!(e))?;
        let mut r = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(Hashing::new(f));
        let got: Vec<String> = r
            .headers()
            .map_err(|e| anyhow!("{label}: {e}"))?
            .iter()
            .map(String::from)
            .collect();
        if got != header(m) {
            bail!("{label}: line 1: the header is not that of the shard's network and modes");
        }
        Ok(RecordReader {
            names: got,
            label,
            rows: r.into_records(),
            range: m.range(),
            paths: m.paths(),
            layers: m.layer_names.len(),
            datapath: m.layer_names.iter().map(|l| m.layers.contains(l)).collect(),
            labels: m.labels,
            classes: m.classes,
            records: m.records.clone(),
            line: 1,
            draw0_labels: Vec::new(),
        })
    }

    fn row(&mut self, d: usize, s: usize, path: &str) -> Result<csv::StringRecord> {
        self.line += 1;
        let at = format!("{}: line {}", self.label, self.line);
        let row = match self.rows.next() {
            Some(r) => r.map_err(|e| anyhow!("{at}: {e}"))?,
            None => bail!("{at}: ends before draw {d}, sample {s}, path {path}"),
        };
        if row.len() != 6 + LAYER_CELLS.len() * self.layers
            || row.get(0) != Some(&d.to_string())
            || row.get(1) != Some(&s.to_string())
            || row.get(2) != Some(path)
        {
            bail!("{at}: expected the row of draw {d}, sample {s}, path {path}");
        }
        Ok(row)
    }

    /// The record of sample `s` in draw `d`, and its label.
    pub(super) fn next(&mut self, d: usize, s: usize) -> Result<(SampleRecord, Option<i64>)> {
        let paths = self.paths.clone();
        let row = self.row(d, s, &paths[0])?;
        let at = format!("{}: line {}", self.label, self.line);
        let mut c = Cells {
            row: &row,
            at: &at,
            names: &self.names,
            i: 3,
        };
        let label = match (self.labels, c.text()) {
            (true, l) => Some(
                l.parse::<i64>()
                    .map_err(|_| anyhow!("{at}: label: '{l}' is not an integer"))?,
            ),
            (false, "") => None,
            (false, l) => bail!("{at}: label: '{l}' in a run without labels"),
        };
        if let Some(l) = label {
            in_classes(&at, "label", l.into(), self.classes)?;
        }
        // One label a sample: draw 0's float row gives it, every later draw repeats it.
        match self.draw0_labels.get(s - self.range.start) {
            _ if d == 0 => self.draw0_labels.push((label, self.line)),
            Some(&(Some(l0), line0)) if label != Some(l0) => bail!(
                "{at}: label: {}, but draw 0 labels sample {s} {l0} (line {line0}): a sample has one label in every draw",
                label.map_or(String::new(), |l| l.to_string())
            ),
            _ => {}
        }
        let float_prediction = c.int()? as usize;
        in_classes(&at, "prediction", float_prediction as i128, self.classes)?;
        let float_sq = c.float()?;
        // The float network has no layer figures: `accuracy` leaves its cells empty.
        if let Some(i) = (6..row.len()).find(|&i| !row[i].is_empty()) {
            bail!(
                "{at}: {}: '{}' on the float path, which has no layer figures (the cell is empty)",
                self.names[i],
                bounds::text::printable(&row[i])
            );
        }
        let mut out = Vec::with_capacity(paths.len() - 1);
        for p in &paths[1..] {
            let row = self.row(d, s, p)?;
            let at = format!("{}: line {}", self.label, self.line);
            // The label is a cell of the float row alone: `accuracy` leaves a mode's empty.
            if !row[3].is_empty() {
                bail!(
                    "{at}: label: '{}' on a mode's row (the label is the float row's; this cell is empty)",
                    bounds::text::printable(&row[3])
                );
            }
            let mut c = Cells {
                row: &row,
                at: &at,
                names: &self.names,
                i: 4,
            };
            let prediction = c.int()? as usize;
            in_classes(&at, "prediction", prediction as i128, self.classes)?;
            let output_sq_err = c.float()?;
            let mut layers = Vec::with_capacity(self.layers);
            for l in 0..self.layers {
                let crossbar = match c.text() {
                    "0" => false,
                    "1" => true,
                    t => bail!("{at}: crossbar: '{t}' (expected 0 or 1)"),
                };
                // The flag is the writer's: 1 exactly on a mode's path for a layer of the
                // run's `layers`, the only cells that hold datapath figures.
                let want = p != "quantized" && self.datapath[l];
                if crossbar != want {
                    bail!(
                        "{at}: {}: '{}', but `accuracy` writes {} here ({})",
                        c.name(),
                        u8::from(crossbar),
                        u8::from(want),
                        match (p == "quantized", self.datapath[l]) {
                            (true, _) => "the quantized path has no datapath",
                            (false, false) => "the layer is not one of shard.json's layers",
                            (false, true) => "a mode's path runs the layers of shard.json's layers through the datapath",
                        }
                    );
                }
                let first = c.i;
                let st = LayerStats {
                    crossbar,
                    func: Metrics {
                        outputs: c.int()?,
                        exact: c.int()?,
                        sq_err: c.float()?,
                        sq_exact: c.float()?,
                        max_abs_err: c.int()?,
                        float_outputs: c.int()?,
                        float_sq_err: c.float()?,
                        float_sq_ref: c.float()?,
                        adc_conversions: c.int()?,
                        adc_clips: c.int()?,
                    },
                    float_sq_err: c.float()?,
                    float_sq: c.float()?,
                };
                // A layer off the datapath has no datapath figures: the writer's are 0.
                if !crossbar {
                    let z = &st.func;
                    let floats = [z.sq_err, z.sq_exact, z.float_sq_err, z.float_sq_ref];
                    let counts = [
                        (1, z.outputs),
                        (2, z.exact),
                        (5, z.max_abs_err),
                        (6, z.float_outputs),
                        (9, z.adc_conversions),
                        (10, z.adc_clips),
                    ];
                    let bad = counts
                        .iter()
                        .find(|(_, v)| *v != 0)
                        .map(|(k, _)| *k)
                        .or_else(|| {
                            [3, 4, 7, 8]
                                .into_iter()
                                .zip(floats)
                                .find(|(_, v)| v.to_bits() != 0)
                                .map(|(k, _)| k)
                        });
                    if let Some(k) = bad {
                        bail!(
                            "{at}: {}: '{}' on a layer off the datapath (crossbar 0), whose datapath figures are 0",
                            self.names[first - 1 + k],
                            bounds::text::printable(&row[first - 1 + k])
                        );
                    }
                }
                // Counts of one output each: a part never exceeds its whole.
                let f = &st.func;
                for (part, whole, p, w) in [
                    (f.exact, f.outputs, 1, 0),
                    (f.adc_clips, f.adc_conversions, 9, 8),
                ] {
                    if part > whole {
                        bail!(
                            "{at}: {}: {part} exceeds {} = {whole}",
                            self.names[first + p],
                            self.names[first + w]
                        );
                    }
                }
                layers.push(st);
            }
            out.push(SamplePath {
                prediction,
                output_sq_err,
                layers,
            });
        }
        Ok((
            SampleRecord {
                float_prediction,
                float_sq,
                paths: out,
            },
            label,
        ))
    }

    /// Refuses rows after the last one the manifest accounts for.
    pub(super) fn end(&mut self) -> Result<()> {
        if self.rows.next().is_some() {
            bail!(
                "{}: line {}: rows beyond the last sample of the shard",
                self.label,
                self.line + 1
            );
        }
        let read = self.rows.reader().get_ref().hash.hex();
        if read != self.records {
            bail!(
                "{}: its bytes hash to {read}, not to {} as shard.json's records says: the records were edited after the shard was written",
                self.label,
                self.records
            );
        }
        Ok(())
    }
}

/// Refuses a `what` (a label or a prediction) of record line `at` that is not a class of a
/// network of `classes` outputs (0: not recorded, not checked).
fn in_classes(at: &str, what: &str, v: i128, classes: usize) -> Result<()> {
    if classes > 0 && !(0..classes as i128).contains(&v) {
        bail!("{at}: {what}: {v} is not a class of the network (0..{classes})");
    }
    Ok(())
}

/// The cells of a row, read left to right, each in its range (the one check of a
/// record's fields: counts below 2^64 - 1, floats finite and >= 0, every one of them a
/// sum of squares).
struct Cells<'a> {
    row: &'a csv::StringRecord,
    at: &'a str,
    /// The columns, to name a cell.
    names: &'a [String],
    i: usize,
}

impl<'a> Cells<'a> {
    fn text(&mut self) -> &'a str {
        let t = self.row.get(self.i).unwrap_or("");
        self.i += 1;
        t
    }

    /// The column of the cell just read.
    fn name(&self) -> &str {
        self.names.get(self.i - 1).map_or("", String::as_str)
    }

    fn int(&mut self) -> Result<u64> {
        let at = self.at;
        let t = self.text();
        let n: u64 = t
            .parse()
            .map_err(|_| anyhow!("{at}: cell {}: '{t}' is not a count", self.i))?;
        if n == u64::MAX {
            bail!(
                "{at}: cell {} ({}): {n}, a count saturated at 2^64 - 1",
                self.i,
                self.name()
            );
        }
        Ok(n)
    }

    fn float(&mut self) -> Result<f64> {
        let at = self.at;
        let t = self.text();
        let v = match (t.len(), u64::from_str_radix(t, 16)) {
            (16, Ok(bits)) => f64::from_bits(bits),
            _ => bail!(
                "{at}: cell {}: '{t}' is not a float's 16 hex digits",
                self.i
            ),
        };
        if !(v.is_finite() && v >= 0.0) {
            bail!(
                "{at}: cell {} ({}): '{t}' is {v:?}, not a finite sum of squares (>= 0)",
                self.i,
                self.name()
            );
        }
        Ok(v)
    }
}
