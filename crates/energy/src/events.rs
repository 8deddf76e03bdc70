//! What a layer does in one mode, counted.

use serde::Serialize;

/// Event counts of one layer in one mode (or a sum over layers). All exact integers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Events {
    /// Input vectors replayed.
    pub vectors: u64,
    /// OU operations issued.
    pub ou_ops: u64,
    /// Sum over OUs of their rows.
    pub rows_driven: u64,
    /// Sum over OUs of rows x columns.
    pub cells_read: u64,
    /// Sum over OUs of their columns.
    pub adc_conversions: u64,
    /// rows_driven in weight and sre (each driven row's index is decoded).
    pub index_reads: u64,
    /// index_reads x index width.
    pub index_bits_read: u64,
    /// ou_ops in activation and sre.
    pub ous_formed: u64,
    pub ir_bits: u64,
    pub or_bits: u64,
    pub edram_bits: u64,
    pub weight_storage_bits: u64,
    pub index_storage_bits: u64,
    pub crossbars: u64,
    /// Busy time W (sum over barrier intervals of the slowest crossbar's issue).
    pub busy_cycles: u64,
    /// W + L - 1, or 0.
    pub cycles: u64,
}

impl Events {
    /// Field-wise sum (a TOTAL row).
    pub fn add(&mut self, o: &Events) {
        self.vectors += o.vectors;
        self.ou_ops += o.ou_ops;
        self.rows_driven += o.rows_driven;
        self.cells_read += o.cells_read;
        self.adc_conversions += o.adc_conversions;
        self.index_reads += o.index_reads;
        self.index_bits_read += o.index_bits_read;
        self.ous_formed += o.ous_formed;
        self.ir_bits += o.ir_bits;
        self.or_bits += o.or_bits;
        self.edram_bits += o.edram_bits;
        self.weight_storage_bits += o.weight_storage_bits;
        self.index_storage_bits += o.index_storage_bits;
        self.crossbars += o.crossbars;
        self.busy_cycles += o.busy_cycles;
        self.cycles += o.cycles;
    }
}
