//! Command-line arguments of `sresim sweep`, `merge`, `plot` and `compare`.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    /// Grid file (TOML): base config, workloads, modes and axes (see docs/sweeps.md).
    #[arg(long, short = 'g')]
    pub grid: PathBuf,
    /// Output directory: receives sweep.json and points.csv.
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Continue a sweep in --out: only the points it lacks are run.
    #[arg(long)]
    pub resume: bool,
    /// Run only shard I of N (0 <= I < N), e.g. --shard 0/4; `sresim merge` joins shards.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Format of the points table: csv (points.csv, the default) or parquet
    /// (points.parquet, typed columns, written when every point is done; points.csv
    /// holds the points until then). A sweep resumes in the format it was started with.
    #[arg(long, default_value_t = sim::format::Format::Csv)]
    pub format: sim::format::Format,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Points run at a time (default: the thread count); each holds one layer of its
    /// workload in memory. Results do not depend on it.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// No progress bar and no closing line.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Most points a grid may have (workloads x axis values x explicit points); a
    /// larger grid is refused before it is planned unless this is raised.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_POINTS)]
    pub max_points: u64,
}

/// Default of `--max-points`.
pub use crate::grid::DEFAULT_MAX_POINTS;

#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// Sweep directories (shards) of one grid.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Directory that receives the merged points table and sweep.json.
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Merge even when some points of the grid are in no input.
    #[arg(long)]
    pub partial: bool,
    /// Format of the merged points table: csv (points.csv, the default) or parquet
    /// (points.parquet). Inputs may be in either.
    #[arg(long, default_value_t = sim::format::Format::Csv)]
    pub format: sim::format::Format,
    /// Print nothing on stdout (errors and notes still go to stderr; the exit status
    /// is unchanged).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Clone, Args)]
pub struct PlotArgs {
    /// A sweep directory (its points.csv) or a CSV file (points.csv, layers.csv).
    #[arg(value_name = "DIR|CSV")]
    pub input: PathBuf,
    /// Column on the x axis, e.g. ou.rows.
    #[arg(long)]
    pub x: String,
    /// Numeric column on the y axis, e.g. speedup_vs_dense.
    #[arg(long)]
    pub y: String,
    /// Column(s) whose values make the lines, comma-separated ("" for one line).
    #[arg(long, default_value = "mode")]
    pub series: String,
    /// Keep only rows with COLUMN=VALUE (repeatable: filters on one column are
    /// alternatives, on different columns all must hold). Unless one names `layer`, only
    /// the TOTAL rows are kept.
    #[arg(long = "where", value_name = "COLUMN=VALUE")]
    pub filters: Vec<String>,
    /// SVG file to write (default: <y>-vs-<x>.svg next to the CSV).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Title (default: y vs x and the filters).
    #[arg(long)]
    pub title: Option<String>,
    /// Logarithmic x axis (base 2 ticks for powers of two).
    #[arg(long)]
    pub log_x: bool,
    /// Logarithmic y axis.
    #[arg(long)]
    pub log_y: bool,
    /// A Pareto view: one marker per row (no lines; several rows may share an x) and the
    /// Pareto front of all of them as a step line. By default lower x and higher y are
    /// better (e.g. --x cycles --y top1).
    #[arg(long)]
    pub pareto: bool,
    /// Stack the columns --y matches (a glob, e.g. 'e_*_pj': the energy by component) as
    /// bars at each x, one colour per column.
    #[arg(long, conflicts_with = "pareto")]
    pub stack: bool,
    /// The lower end of the x axis (default: fitted to the data), in the column's own
    /// unit.
    #[arg(long, allow_hyphen_values = true)]
    pub x_min: Option<f64>,
    /// The upper end of the x axis (default: fitted to the data).
    #[arg(long, allow_hyphen_values = true)]
    pub x_max: Option<f64>,
    /// The lower end of the y axis (default: fitted to the data and its intervals; e.g.
    /// 0 to start at zero).
    #[arg(long, allow_hyphen_values = true)]
    pub y_min: Option<f64>,
    /// The upper end of the y axis (default: fitted to the data and its intervals).
    #[arg(long, allow_hyphen_values = true)]
    pub y_max: Option<f64>,
    /// A horizontal reference line at VALUE (in the y column's unit), dashed, with LABEL
    /// in the legend, e.g. --y-line '0.01=budget 0.01' (repeatable).
    #[arg(
        long = "y-line",
        value_name = "VALUE[=LABEL]",
        allow_hyphen_values = true
    )]
    pub y_lines: Vec<String>,
    /// With --pareto: which end of x is better (default lower).
    #[arg(long, value_enum)]
    pub x_better: Option<Better>,
    /// With --pareto: which end of y is better (default higher).
    #[arg(long, value_enum)]
    pub y_better: Option<Better>,
    /// Which 95% interval of y is drawn, named in the legend: `draws` (over device draws
    /// at fixed samples: `<f>_ci_low`/`<f>_ci_high`) or `samples` (over samples and draws:
    /// `<f>_samples_ci_low`/`<f>_samples_ci_high`). Without it: the draws' interval when
    /// the table has one, and no legend entry for it.
    #[arg(long, value_enum)]
    pub interval: Option<Interval>,
    /// Print nothing on stdout (errors and notes still go to stderr; the exit status
    /// is unchanged).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// The interval `sresim plot --interval` draws around y (docs/accuracy.md says what each
/// covers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Interval {
    /// Over device draws on the fixed samples (`<f>_ci_low`, `<f>_ci_high`).
    Draws,
    /// Over the samples and the device draws (`<f>_samples_ci_low`, `<f>_samples_ci_high`).
    Samples,
}

impl Interval {
    /// The suffixes of its low and high columns.
    pub fn suffixes(self) -> (&'static str, &'static str) {
        match self {
            Interval::Draws => ("_ci_low", "_ci_high"),
            Interval::Samples => ("_samples_ci_low", "_samples_ci_high"),
        }
    }

    /// Its legend entry.
    pub fn label(self) -> &'static str {
        match self {
            Interval::Draws => "95% interval over device draws",
            Interval::Samples => "95% interval over samples and draws",
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The reference CSV (points.csv or layers.csv, or a directory holding one).
    pub old: PathBuf,
    /// The CSV to check against it.
    pub new: PathBuf,
    /// Relative tolerance on numeric cells: |new - old| <= tol * max(|old|, |new|).
    #[arg(long, default_value_t = 0.0)]
    pub tolerance: f64,
    /// Columns to leave out of the comparison (repeatable).
    #[arg(long = "ignore", value_name = "COLUMN")]
    pub ignore: Vec<String>,
    /// Print nothing on stdout: the exit status alone says whether the tables differ.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Which end of an axis is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Better {
    Lower,
    Higher,
}

impl Better {
    /// `v` turned so that lower is better.
    pub(crate) fn cost(self, v: f64) -> f64 {
        match self {
            Better::Lower => v,
            Better::Higher => -v,
        }
    }
}
