//! Where the SRE finds work to skip.
//!
//! This crate owns docs/model.md §4 and the row-selection half of §5
//! and 6: row masks ([`RowMask`]), weight compression of each column group into packed
//! rows with an index table ([`Compression`]), the index decoder that maps a compacted
//! row back to its input ([`CompressedGroup::decode`]), and dynamic OU formation, which
//! builds each OU from the next `ou.rows` rows that need driving ([`form_ous`]).

mod compress;
mod mask;
mod ou;

pub use compress::{CompressedGroup, Compression};
pub use mask::RowMask;
pub use ou::{form_ous, ou_sizes};
