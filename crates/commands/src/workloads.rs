//! `sresim workloads`: its flags, and the listing of [`sim::workloads::listing`].

use anyhow::Result;
use clap::Args;
use sim::config;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct WorkloadsArgs {
    /// TOML config (its precision is used for the zero fractions of bundles).
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// Print nothing on stdout (the listing's workloads are still opened and checked).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `sresim workloads`.
pub fn run(args: &WorkloadsArgs) -> Result<()> {
    let cfg = config::load(args.config.as_deref(), &[])?;
    let listing = sim::workloads::listing(&cfg)?;
    if !args.quiet {
        let mut o = outdir::stdout();
        // Names in the listing were escaped field by field (`listing`); this keeps its line
        // breaks and escapes anything else.
        write!(o, "{}", bounds::text::printable_lines(&listing))?;
        o.flush()?;
    }
    Ok(())
}
