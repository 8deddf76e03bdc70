//! The guards that every surface of sresim goes through, so that no new reader or
//! writer can skip them (docs/errors.md, "Where each guard lives"):
//!
//! - [`size`]: every size a file declares (an array header, a graph's tensor shapes and
//!   windows, a Parquet row group, a sweep.json point count) is a checked product
//!   compared with a limit **before** anything is allocated from it;
//! - [`finite`]: every figure an output holds (a cell of a table, a number of a JSON
//!   document, a cycle converted from a time) is checked to be finite and unsaturated
//!   before it is written or printed;
//! - [`text`]: every text from a data file that is printed or drawn has its control
//!   characters escaped;
//! - [`dates`]: a TOML date or time, which no key of any file takes, is found by its key
//!   before a typed reading turns it into a string or a private table.
//!
//! Both return a short description of the problem; the caller prefixes the file and
//! field (or the config key) it knows, so the binary prints one line. The crate depends
//! on nothing but the TOML reader's value type, and knows no file, model or command line.

pub mod dates;
pub mod finite;
pub mod size;
pub mod text;
