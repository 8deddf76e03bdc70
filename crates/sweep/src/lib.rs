//! Sweeps and sensitivity studies (docs/sweeps.md).
//!
//! `sresim sweep` runs every point of a grid file — a base config, workloads, modes and
//! axes whose cartesian product (plus an optional explicit point list) are the points —
//! in parallel, appending each finished point's rows to points.csv; `--resume` finishes
//! an interrupted sweep and `--shard I/N` runs a deterministic share of it, which
//! `sresim merge` joins. `sresim plot` draws a column against another as SVG and
//! `sresim compare` reports what changed between two result CSVs.
//!
//! grid ([`grid`], [`value`]) -> plan: every point checked, how a point runs ([`plan`])
//! -> parallel run ([`exec`]) -> points.csv and sweep.json ([`store`]) -> shards and merge
//! ([`shard`], every merged cell checked again by [`recheck`]); [`plot`] (drawn by the chart crate) and [`compare`] read the CSVs ([`table`]).
#![cfg_attr(test, allow(clippy::disallowed_methods))] // tests make their fixtures with std::fs

pub mod args;
pub mod compare;
pub mod derived;
pub mod exec;
pub mod extra;
pub mod grid;
pub mod index;
pub mod meta;
pub mod names;
pub mod ordered;
pub mod pareto;
pub mod plan;
pub mod plot;
pub mod plot_table;
pub mod recheck;
pub mod shard;
pub mod store;
pub mod synth;
pub mod table;
pub mod value;

pub use args::{CompareArgs, MergeArgs, PlotArgs, SweepArgs};

use anyhow::{bail, Result};
use std::io::Write;

/// Writes `lines` to stdout, returning any error (a closed pipe included). The lines
/// quote paths and cells of the files read: every one is escaped (`bounds::text`).
fn say(lines: &[String]) -> Result<()> {
    let mut o = outdir::stdout();
    for l in lines {
        writeln!(o, "{}", bounds::text::printable(l))?;
    }
    o.flush()?;
    Ok(())
}

/// `sresim sweep`.
pub fn sweep_command(args: &SweepArgs) -> Result<()> {
    let outcome = exec::sweep(args)?;
    if !args.quiet {
        say(&[exec::describe(args, &outcome)])?;
    }
    Ok(())
}

/// `sresim merge`.
pub fn merge_command(args: &MergeArgs) -> Result<()> {
    let line = shard::merge(&args.dirs, &args.out, args.partial, args.format)?;
    match args.quiet {
        true => Ok(()),
        false => say(&[line]),
    }
}

/// `sresim plot`.
pub fn plot_command(args: &PlotArgs) -> Result<()> {
    let path = plot::plot(args)?;
    match args.quiet {
        true => Ok(()),
        false => say(&[format!("wrote {}", path.display())]),
    }
}

/// `sresim compare`: prints every difference and fails when there is one.
pub fn compare_command(args: &CompareArgs) -> Result<()> {
    // A NaN tolerance compares nothing and would print as NaN in every line about it.
    if !(args.tolerance.is_finite() && args.tolerance >= 0.0) {
        let what = match args.tolerance.is_nan() {
            true => "not a number".to_string(),
            false => args.tolerance.to_string(),
        };
        bail!("--tolerance: {what}: expected a relative tolerance, a finite number 0 or above");
    }
    let old = table::Table::read(&args.old)?;
    let new = table::Table::read(&args.new)?;
    let rep = compare::compare(&old, &new, args.tolerance, &args.ignore)?;
    if !args.quiet {
        // The lines quote cells and column names of the files: `say` escapes them.
        say(&rep.lines)?;
        say(&[rep.summary(args.tolerance)])?;
    }
    if rep.differs() {
        bail!(
            "{} and {} differ beyond relative tolerance {}",
            old.path.display(),
            new.path.display(),
            bounds::finite::short(args.tolerance)
        );
    }
    Ok(())
}
