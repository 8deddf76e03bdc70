//! `sresim accuracy-merge` (docs/accuracy.md, "Shards"): joins the shard directories of
//! `sresim accuracy --sample-range` into the accuracy.csv and summary.json of the
//! unsharded run.

use anyhow::Result;
use clap::Args;
use sim::accuracy_report::Outputs;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct AccuracyMergeArgs {
    /// Shard directories (`sresim accuracy --sample-range A..B --out DIR`), in any order;
    /// together they must hold every sample of the run exactly once.
    #[arg(required = true, value_name = "SHARD")]
    pub shards: Vec<PathBuf>,
    /// Directory that receives accuracy.csv and summary.json (replaced atomically).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Print no table.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `sresim accuracy-merge`.
pub fn run(args: &AccuracyMergeArgs) -> Result<()> {
    // Everything is read and checked before the output directory is touched.
    let m = sim::accuracy_shard::merge(&args.shards)?;
    let out = outdir::OutputDir::open(&args.out)?;
    let outputs = Outputs {
        info: &m.info,
        draws: &m.draws,
        clip: m.manifest.clip,
        origin: &m.manifest.config_origin,
        config: &m.config_values,
        crossbar: &m.crossbar,
    };
    outputs.write(Some(&out), args.quiet)
}
