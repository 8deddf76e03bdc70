//! sresim
