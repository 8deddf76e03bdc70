//! The OU-dependent counts an engine produces ([`OuCounts`]), summed over the input
//! vectors it replays.

use crossbar::Mode;

/// The OU-dependent counts an engine produces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct OuCounts {
    pub ou_ops: u64,
    pub rows_driven: u64,
    pub cells_read: u64,
    pub adc_conversions: u64,
    pub index_reads: u64,
    pub ous_formed: u64,
}

impl OuCounts {
    /// Records `ops` OUs covering `rows` rows of a column group of width `cols`.
    #[inline]
    pub fn record(&mut self, mode: Mode, ops: u64, rows: u64, cols: u64) {
        self.record_raw(mode, 1, ops, rows, rows * cols, ops * cols);
    }

    /// Records summed counts of OUs (ops, rows, cells, conversions), `repeat` times.
    #[inline]
    pub fn record_raw(
        &mut self,
        mode: Mode,
        repeat: u64,
        ops: u64,
        rows: u64,
        cells: u64,
        adc: u64,
    ) {
        self.ou_ops += repeat * ops;
        self.rows_driven += repeat * rows;
        self.cells_read += repeat * cells;
        self.adc_conversions += repeat * adc;
        if mode.compacted() {
            self.index_reads += repeat * rows;
        }
        if mode.skips_inputs() {
            self.ous_formed += repeat * ops;
        }
    }

    pub fn scaled(&self, k: u64) -> OuCounts {
        OuCounts {
            ou_ops: self.ou_ops * k,
            rows_driven: self.rows_driven * k,
            cells_read: self.cells_read * k,
            adc_conversions: self.adc_conversions * k,
            index_reads: self.index_reads * k,
            ous_formed: self.ous_formed * k,
        }
    }

    pub fn add(&mut self, o: &OuCounts) {
        self.ou_ops += o.ou_ops;
        self.rows_driven += o.rows_driven;
        self.cells_read += o.cells_read;
        self.adc_conversions += o.adc_conversions;
        self.index_reads += o.index_reads;
        self.ous_formed += o.ous_formed;
    }
}
