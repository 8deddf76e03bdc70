//! `sresim search` (docs/search.md): for each workload and group of a search grid (e.g.
//! device preset x ADC resolution), which design points (e.g. OU height x mode) keep
//! top-1 within a budget of the quantized network at a stated confidence, and which of
//! those take the fewest cycles and least energy.
//!
//! Owns the search grid's `[search]` table ([`spec`]), the sequential paired test
//! ([`rule`]), the looks at one point ([`point`]) and the answer: points.csv, the
//! printed table, search.json and a Pareto plot per group ([`answer`]). The grid is
//! crates/sweep's (parsed, and every point checked, before anything runs); the accuracy
//! figures come from `sim::accuracy` (the path of `sresim accuracy`), the cycles and
//! energy from the sweep's cycle run of the point. Deterministic for every thread count:
//! every sample's record is a pure function of its index, and tests are fed in sample
//! order.

pub mod answer;
pub mod point;
pub mod rule;
pub mod spec;

use anyhow::{bail, Result};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct SearchArgs {
    /// Search grid (TOML): a sweep grid with a [search] table (docs/search.md).
    #[arg(long, short = 'g')]
    pub grid: PathBuf,
    /// Output directory: receives points.csv, search.json and the Pareto plots.
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// The largest top-1 drop against the quantized network that counts as within
    /// (a fraction: 0.01 is one point).
    #[arg(long, default_value_t = 0.01)]
    pub budget: f64,
    /// Confidence of each verdict (within or outside): 1 - its error rate.
    #[arg(long, default_value_t = 0.95)]
    pub confidence: f64,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print no table and no per-point progress lines.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Most points the grid may have (workloads x axis values x explicit points); a
    /// larger grid is refused before a point is listed unless this is raised (as for
    /// `sweep`; never above 2^26).
    #[arg(long, value_name = "N", default_value_t = sweep::grid::DEFAULT_MAX_POINTS)]
    pub max_points: u64,
}

/// `sresim search`.
pub fn search_command(args: &SearchArgs) -> Result<()> {
    if !(args.budget > 0.0 && args.budget < 1.0) {
        bail!(
            "--budget: {} is not a top-1 drop in (0, 1) (0.01 is one point)",
            args.budget
        );
    }
    if !(args.confidence >= 0.5 && args.confidence < 1.0) {
        bail!("--confidence: {} is not in [0.5, 1)", args.confidence);
    }
    sim::run::check_workers("--threads", args.threads)?;
    let spec = spec::Spec::load(&args.grid, args.max_points)?;
    let pool = sim::run::worker_pool("--threads", args.threads)?;
    let plan = sweep::plan::Plan::new(spec.grid.clone())?;
    answer::check_labels(&plan)?;
    // Locked from here to the end.
    let dir = outdir::OutputDir::open(&args.out)?;
    let settings = answer::Options {
        budget: args.budget,
        alpha: 1.0 - args.confidence,
        first_samples: spec.first_samples,
        progress: !args.quiet,
    };
    let found = pool.install(|| answer::run(&plan, &spec, settings))?;
    let files = answer::files(&plan, &spec, &found, settings)?;
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (n.as_str(), &b[..])).collect();
    dir.replace(&refs)?;
    if !args.quiet {
        let mut o = outdir::stdout();
        write!(o, "{}", answer::table(&plan, &spec, &found, settings))?;
        writeln!(
            o,
            "wrote {}/points.csv, search.json and the Pareto plots",
            bounds::text::path(&args.out)
        )?;
        o.flush()?;
    }
    Ok(())
}
