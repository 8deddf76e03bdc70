//! Events and energy.
//!
//! This crate owns docs/model.md §8: the vocabulary of countable events of a
//! layer in one mode ([`Events`]), energy tables loaded from TOML ([`EnergyTable`], the
//! default is configs/energy/isaac-32nm.toml, embedded), and the accounting that turns
//! events into a per-component energy breakdown ([`Breakdown`]).

mod events;
mod table;

pub use events::Events;
pub use table::{adc_scale, Breakdown, EnergyTable, TableError, DEFAULT_TABLE_TOML};
