//! Events and energy.
//!
//! This crate owns docs/model.md §8: the vocabulary of countable events of a
//! layer in one mode ([`Events`]), energy tables loaded from TOML ([`EnergyTable`], the
//! default is configs/energy/isaac-32nm.toml, embedded), and the accounting that turns
//! events into a per-component energy breakdown ([`Breakdown`]), the ADC's energy by
//! resolution ([`AdcLaw`]), and the technology-node factors that carry the 32 nm tables
//! to 45, 22, 14 and 7 nm ([`tech`], docs/technology.md).

mod events;
mod table;
pub mod tech;

pub use events::Events;
pub use table::{
    adc_scale, from_toml_text, AdcLaw, Breakdown, EnergyTable, TableError, DEFAULT_TABLE_TOML,
};
