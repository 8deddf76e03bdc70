//! `sresim sweep`: the points of a grid (or of one shard) in parallel, each appended to
//! points.csv as it finishes, with a progress bar drawn at once of the work done
//! (weighted as a run's bar is, [`sim::run::work`], plus the accuracy path's work of a
//! grid with accuracy columns, [`sim::accuracy::work`]), the points done and the time
//! left.
//! Without a terminal the bar gives way to a plain line every 15 s (`sim::progress`).
//! `--jobs` points run at a time (default: the thread count), each parallel inside on the
//! one rayon pool of `--threads` workers.

use super::args::SweepArgs;
use super::grid::Grid;
use super::plan::Plan;
use super::shard::{self, Shard};
use super::store::{self, Appender, Meta};
use anyhow::{anyhow, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

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
    sim::run::check_workers("--threads", args.threads)?;
    sim::run::check_workers("--jobs", args.jobs)?;
    // The point count is checked by the grid parser, before a single point is listed
    // or planned (planning checks every point's config).
    let grid = Grid::load(&args.grid, args.max_points)?;
    if grid.search.is_some() {
        return Err(anyhow!(
            "{}: search: a grid for `sresim search` (docs/search.md); a sweep takes no [search] table",
            args.grid.display()
        ));
    }
    let plan = {
        let bar = PlanBar::new(Plan::checks(&grid), args.quiet);
        let plan = Plan::new_with(grid, &|n| bar.inc(n));
        bar.0.finish_and_clear();
        plan?
    };
    let ids: Vec<&str> = plan.points.iter().map(|p| p.id.as_str()).collect();
    let owned = shard::select(&ids, shard);
    let pool = sim::run::worker_pool("--threads", args.threads)?;
    // Locked until the sweep ends: a second sweep, run or merge into it is refused.
    let dir = outdir::OutputDir::open(&args.out)?;
    let meta = Meta::of(&plan, shard, args.format);
    let prepared = store::prepare(&dir, &plan, shard, args.resume, args.format)?;
    let done = &prepared.done;
    let pending: Vec<usize> = owned
        .iter()
        .copied()
        .filter(|&i| !done.contains(&plan.points[i].id))
        .collect();
    let total: u64 = pending.iter().map(|&i| plan.work[i]).sum();
    let show = sim::progress::show(args.quiet);
    let bar = progress(total, show == sim::progress::Show::Bar);
    // Without a terminal (a batch job's log), a line every so often instead of the bar.
    let lines = (show == sim::progress::Show::Lines).then(|| {
        sim::progress::Lines::start("sresim sweep", sim::progress::Count::Own("points"), total)
    });
    let points_done = AtomicUsize::new(0);
    bar.set_message(format!("0/{} points", pending.len()));
    if let Some(l) = &lines {
        l.set_done(0, pending.len() as u64);
    }
    // Opened when the first point is in: a fresh directory gets its sweep.json and header
    // then (`store::Prepared::fresh`); a finished sweep in Parquet has no points.csv to
    // append to, and nothing to run.
    let out: Mutex<Option<Appender>> = Mutex::new(None);
    let begun = |out: &mut Option<Appender>| -> Result<()> {
        if out.is_none() {
            if prepared.fresh {
                store::begin(&dir, &meta)?;
            }
            *out = Some(Appender::open(&args.out)?);
        }
        Ok(())
    };
    let jobs = args.jobs.unwrap_or(pool.current_num_threads()).max(1);
    run_points(&pending, jobs, |i| {
        // The bar advances with the work inside each point (layers, vectors), so that its
        // time left holds from the first seconds, not only when whole points finish.
        let rows = pool.install(|| plan.run_point_with(i, &BarProgress(&bar, lines.as_ref())))?;
        {
            let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
            begun(&mut out)?;
            if let Some(out) = out.as_ref() {
                out.append(&rows)?;
            }
        }
        let done = points_done.fetch_add(1, Ordering::Relaxed) + 1;
        bar.set_message(format!("{done}/{} points", pending.len()));
        if let Some(l) = &lines {
            l.set_done(done as u64, pending.len() as u64);
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    drop(lines);
    let owned_ids: Vec<String> = owned.iter().map(|&i| plan.points[i].id.clone()).collect();
    if prepared.fresh && pending.is_empty() {
        // A shard that owns no point: its directory still says whose it is.
        store::begin(&dir, &meta)?;
    }
    let complete = store::finish(&dir, &meta, &owned_ids)?;
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

/// Runs `f` on every item, `jobs` at a time, each started when a running one finishes.
/// The workers are plain threads that hand each point to the rayon pool, so exactly
/// `jobs` points (and the layers they hold) are in flight: a rayon worker waiting inside
/// a point would otherwise steal and start further points. After the first error no new
/// point starts; that error is returned.
fn run_points(items: &[usize], jobs: usize, f: impl Fn(usize) -> Result<()> + Sync) -> Result<()> {
    let next = AtomicUsize::new(0);
    let failed: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..jobs.min(items.len()) {
            s.spawn(|| loop {
                if failed.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
                    return;
                }
                let Some(&i) = items.get(next.fetch_add(1, Ordering::Relaxed)) else {
                    return;
                };
                if let Err(e) = f(i) {
                    failed
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(e);
                    return;
                }
            });
        }
    });
    match failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The closing line of `sresim sweep`.
pub fn describe(args: &SweepArgs, o: &Outcome) -> String {
    let share = match &args.shard {
        Some(s) => format!("shard {s}: {} of {} points", o.owned, o.grid),
        None => format!("{} points", o.grid),
    };
    format!(
        "{share}, {} run, {} already done; wrote {}/{}",
        o.ran,
        o.skipped,
        args.out.display(),
        args.format.file("points")
    )
}

/// The bar of planning (every point's config checked before anything runs): drawn only
/// on a terminal, and only once planning has taken a second, so that a small grid shows
/// nothing.
struct PlanBar(ProgressBar, Option<std::time::Instant>);

impl PlanBar {
    fn new(total: u64, quiet: bool) -> PlanBar {
        let shown = sim::progress::show(quiet) == sim::progress::Show::Bar;
        let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        // A constant template, valid or not for every run alike (the tests run it).
        #[allow(clippy::expect_used)]
        pb.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40} {percent:>3}% planning: {pos}/{len} point configs checked (eta {eta})",
            )
            .expect("valid template"),
        );
        PlanBar(pb, shown.then(std::time::Instant::now))
    }

    fn inc(&self, n: u64) {
        self.0.inc(n);
        if let Some(start) = self.1 {
            if self.0.is_hidden() && start.elapsed() >= std::time::Duration::from_secs(1) {
                self.0.set_draw_target(ProgressDrawTarget::stderr());
                self.0
                    .enable_steady_tick(std::time::Duration::from_millis(200));
            }
        }
    }
}

/// The sweep's bar (and its lines, without a terminal) as the progress of a point's run.
struct BarProgress<'a>(&'a ProgressBar, Option<&'a sim::progress::Lines>);

impl sim::run::Progress for BarProgress<'_> {
    fn inc(&self, units: u64) {
        self.0.inc(units);
        if let Some(l) = self.1 {
            l.inc(units);
        }
    }
}

fn progress(total: u64, enabled: bool) -> ProgressBar {
    if !enabled {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    // The template is a constant, valid or not for every run alike (the tests run it).
    #[allow(clippy::expect_used)]
    pb.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {percent:>3}% {msg} (eta {eta})",
        )
        .expect("valid template"),
    );
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}
