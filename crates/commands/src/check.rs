//! `sresim check BUNDLE`: its flags, and the one `ok: ...` line of [`sim::check::check`].

use anyhow::Result;
use clap::Args;
use sim::config;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// A bundle directory (or the name of a bundle under workloads/).
    #[arg(value_name = "BUNDLE")]
    pub bundle: String,
    /// TOML config (its precision and limits are the ones the bundle is checked against).
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// Override a config key, e.g. --set precision.weight_bits=8 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Print nothing on stdout: the exit status alone says whether the bundle opens.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `sresim check BUNDLE`.
pub fn run(args: &CheckArgs) -> Result<()> {
    let cfg = config::load_cli(args.config.as_deref(), &args.sets)?;
    let checked = sim::check::check(&args.bundle, &cfg)?;
    for note in &checked.notes {
        eprintln!("note: {note}");
    }
    if !args.quiet {
        let mut o = outdir::stdout();
        writeln!(o, "{}", checked.line(&args.bundle))?;
        o.flush()?;
    }
    Ok(())
}
