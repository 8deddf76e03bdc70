//! `sresim sweep`: the points of a grid (or of one shard) in parallel, each appended to
//! points.csv as it finishes, with a progress bar of points done and the time left.

use super::args::SweepArgs;
use super::grid::Grid;
use super::plan::Plan;
use super::shard::{self, Shard};
use super::store::{self, Appender, Meta};
use anyhow::{anyhow, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::io::IsTerminal;

/// What a sweep did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Points of the grid, of this shard, found complete at start, run now.
    pub grid: usize,
    pub owned: usize,
    pub skipped: usize,
    pub ran: usize,
}

/// `sresim sweep`.
pub fn sweep(args: &SweepArgs) -> Result<Outcome> {
    let shard: Option<Shard> = args
        .shard
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e| anyhow!("--shard: {e}"))?;
    if args.threads == Some(0) {
        return Err(anyhow!("--threads: must be at least 1"));
    }
    let plan = Plan::new(Grid::load(&args.grid)?)?;
    let ids: Vec<&str> = plan.points.iter().map(|p| p.id.as_str()).collect();
    let owned = shard::select(&ids, shard);
    let done = store::prepare(&args.out, &plan, shard, args.resume)?;
    let pending: Vec<usize> = owned
        .iter()
        .copied()
        .filter(|&i| !done.contains(&plan.points[i].id))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
        .map_err(|e| anyhow!("--threads: {e}"))?;
    let bar = progress(
        pending.len() as u64,
        !args.quiet && std::io::stderr().is_terminal(),
    );
    let out = Appender::open(&args.out)?;
    pool.install(|| {
        pending.par_iter().try_for_each(|&i| {
            let rows = plan.run_point(i)?;
            out.append(&rows)?;
            bar.inc(1);
            Ok::<(), anyhow::Error>(())
        })
    })?;
    bar.finish_and_clear();
    let owned_ids: Vec<String> = owned.iter().map(|&i| plan.points[i].id.clone()).collect();
    let meta = Meta::of(&plan, shard);
    let complete = store::finish(&args.out, &meta, &owned_ids)?;
    if complete != owned_ids.len() {
        return Err(anyhow!(
            "{}/points.csv: {} of {} points complete after the run (was the directory written to concurrently?)",
            args.out.display(),
            complete,
            owned_ids.len()
        ));
    }
    Ok(Outcome {
        grid: plan.points.len(),
        owned: owned.len(),
        skipped: owned.len() - pending.len(),
        ran: pending.len(),
    })
}

/// The closing line of `sresim sweep`.
pub fn describe(args: &SweepArgs, o: &Outcome) -> String {
    let share = match &args.shard {
        Some(s) => format!("shard {s}: {} of {} points", o.owned, o.grid),
        None => format!("{} points", o.grid),
    };
    format!(
        "{share}, {} run, {} already done; wrote {}/points.csv",
        o.ran,
        o.skipped,
        args.out.display()
    )
}

fn progress(total: u64, enabled: bool) -> ProgressBar {
    if !enabled {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} points (eta {eta})",
        )
        .expect("valid template"),
    );
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}
