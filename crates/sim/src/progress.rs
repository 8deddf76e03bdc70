//! Progress of a long command where nobody watches a terminal: a batch job's log.
//!
//! With a terminal on stderr, `run`, `accuracy` and `sweep` draw an indicatif bar. Without
//! one (a Slurm job, `2> log`), a bar draws nothing, so they print instead a plain line
//! every [`INTERVAL`] ([`Lines`]): what is done of the total in the command's own units,
//! the rate, the time so far and the time left, e.g.
//!
//! ```text
//! sresim sweep: 3/8 points, 41% of the work, 0.021 points/s, 2m24s so far, about 3m27s left
//! ```
//!
//! and, when it printed any, one closing line (`sresim sweep: 8/8 points after 5m51s`). A command shorter than the interval prints
//! none. `-q` silences them with everything else. The lines come from a thread of their
//! own, so they keep coming while one long layer or point holds the workers; what they
//! say is read from counters the work updates, and changes no result.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Time between two progress lines.
pub const INTERVAL: Duration = Duration::from_secs(15);

/// The environment variable that shortens [`INTERVAL`] to a number of milliseconds: the
/// tests' way to see lines from a run of a second.
pub const INTERVAL_VAR: &str = "SRESIM_PROGRESS_INTERVAL_MS";

/// The interval between lines: [`INTERVAL`], or what [`INTERVAL_VAR`] says.
pub fn interval() -> Duration {
    std::env::var(INTERVAL_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map_or(INTERVAL, Duration::from_millis)
}

/// How a command shows its progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    /// Nothing (`-q`).
    Nothing,
    /// An indicatif bar: stderr is a terminal.
    Bar,
    /// Plain lines ([`Lines`]): stderr is a file or a pipe.
    Lines,
}

/// How a command not asked to be quiet shows progress: a bar on a terminal, else lines.
pub fn show(quiet: bool) -> Show {
    match (quiet, std::io::stderr().is_terminal()) {
        (true, _) => Show::Nothing,
        (false, true) => Show::Bar,
        (false, false) => Show::Lines,
    }
}

/// What a line counts as done of the total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// The work units themselves, named `unit` (a run's MACs).
    Work(&'static str),
    /// `total` things named `unit`, of which the work's share is done (an accuracy run's
    /// samples x draws: each costs about the same).
    Share(&'static str, u64),
    /// Things named `unit` counted apart from the work ([`Lines::set_done`]): a sweep's
    /// points, whose sizes differ; the work still sets the share and the time left.
    Own(&'static str),
}

struct State {
    command: String,
    count: Count,
    start: Instant,
    work_total: AtomicU64,
    work_done: AtomicU64,
    own_done: AtomicU64,
    own_total: AtomicU64,
    note: Mutex<String>,
    stop: Mutex<bool>,
    wake: Condvar,
    printed: AtomicBool,
}

/// Progress lines on stderr, printed by a thread every [`interval`] until dropped.
pub struct Lines {
    state: Arc<State>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl Lines {
    /// Starts printing the progress of `command` (as lines name it: "sresim sweep"),
    /// counted by `count`, out of `work_total` units of work (0 when not yet known).
    pub fn start(command: &str, count: Count, work_total: u64) -> Lines {
        Lines::every(command, count, work_total, interval())
    }

    /// [`Lines::start`] with the interval given.
    pub fn every(command: &str, count: Count, work_total: u64, every: Duration) -> Lines {
        let state = Arc::new(State {
            command: command.to_string(),
            count,
            start: Instant::now(),
            work_total: AtomicU64::new(work_total),
            work_done: AtomicU64::new(0),
            own_done: AtomicU64::new(0),
            own_total: AtomicU64::new(0),
            note: Mutex::new(String::new()),
            stop: Mutex::new(false),
            wake: Condvar::new(),
            printed: AtomicBool::new(false),
        });
        let s = state.clone();
        let ticker = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || loop {
                let stop = s.stop.lock().unwrap_or_else(|e| e.into_inner());
                let (stop, _) = s
                    .wake
                    .wait_timeout_while(stop, every, |stop| !*stop)
                    .unwrap_or_else(|e| e.into_inner());
                if *stop {
                    return;
                }
                drop(stop);
                s.print(&s.line());
            })
            .ok();
        Lines { state, ticker }
    }

    /// The work is known: `total` units.
    pub fn set_total(&self, total: u64) {
        self.state.work_total.store(total, Ordering::Relaxed);
    }

    /// `units` more units of work are done.
    pub fn inc(&self, units: u64) {
        self.state.work_done.fetch_add(units, Ordering::Relaxed);
    }

    /// With [`Count::Own`]: `done` of `total` things are done.
    pub fn set_done(&self, done: u64, total: u64) {
        self.state.own_done.store(done, Ordering::Relaxed);
        self.state.own_total.store(total, Ordering::Relaxed);
    }

    /// What the work is on now, said at the end of a line ("layer conv3").
    pub fn note(&self, note: String) {
        *self.state.note.lock().unwrap_or_else(|e| e.into_inner()) = note;
    }

    /// The line that would be printed now.
    pub fn line(&self) -> String {
        self.state.line()
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        *self.state.stop.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.state.wake.notify_all();
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        // A job whose log shows progress also shows where it ended.
        if self.state.printed.load(Ordering::Relaxed) {
            let s = &self.state;
            let done = s.done_text();
            s.print(&format!(
                "{}: {done} after {}",
                s.command,
                duration(s.start.elapsed().as_secs_f64())
            ));
        }
    }
}

impl State {
    fn print(&self, line: &str) {
        self.printed.store(true, Ordering::Relaxed);
        let mut e = std::io::stderr().lock();
        let _ = writeln!(e, "{line}");
        let _ = e.flush();
    }

    /// (done, total) in the command's own units.
    fn counted(&self) -> (f64, f64) {
        let work = (
            self.work_done.load(Ordering::Relaxed) as f64,
            self.work_total.load(Ordering::Relaxed) as f64,
        );
        match self.count {
            Count::Work(_) => work,
            Count::Share(_, total) => {
                let share = if work.1 > 0.0 {
                    (work.0 / work.1).min(1.0)
                } else {
                    0.0
                };
                ((share * total as f64).floor(), total as f64)
            }
            Count::Own(_) => (
                self.own_done.load(Ordering::Relaxed) as f64,
                self.own_total.load(Ordering::Relaxed) as f64,
            ),
        }
    }

    fn unit(&self) -> &'static str {
        match self.count {
            Count::Work(u) | Count::Share(u, _) | Count::Own(u) => u,
        }
    }

    fn done_text(&self) -> String {
        let (done, total) = self.counted();
        format!("{}/{} {}", amount(done), amount(total), self.unit())
    }

    fn line(&self) -> String {
        let elapsed = self.start.elapsed().as_secs_f64();
        let (done, _) = self.counted();
        let work_done = self.work_done.load(Ordering::Relaxed) as f64;
        let work_total = self.work_total.load(Ordering::Relaxed) as f64;
        let share = if work_total > 0.0 {
            (work_done / work_total).min(1.0)
        } else {
            0.0
        };
        let mut line = format!("{}: {}", self.command, self.done_text());
        if !matches!(self.count, Count::Work(_)) {
            line += &format!(", {:.0}% of the work", 100.0 * share);
        } else {
            line += &format!(" ({:.0}%)", 100.0 * share);
        }
        if elapsed > 0.0 {
            line += &format!(", {} {}/s", amount_rate(done / elapsed), self.unit());
        }
        line += &format!(", {} so far", duration(elapsed));
        line += &match share > 0.0 {
            true => format!(", about {} left", duration(elapsed * (1.0 - share) / share)),
            false => ", time left not known yet".to_string(),
        };
        let note = self.note.lock().unwrap_or_else(|e| e.into_inner());
        if !note.is_empty() {
            line += &format!("; {note}");
        }
        line
    }
}

/// A count as a line says it: as is below 10^5, else with an SI prefix (1.23 G).
fn amount(v: f64) -> String {
    if v < 1e5 {
        return format!("{v:.0}");
    }
    let (d, p) = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(d, _)| v >= *d)
        .unwrap_or((1.0, ""));
    format!("{:.3} {p}", v / d)
}

/// A rate: three significant digits, an SI prefix past 10^5.
fn amount_rate(v: f64) -> String {
    if v >= 1e5 {
        return amount(v);
    }
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        format!("{v:.3}")
    }
}

/// Seconds as 45s, 3m07s or 2h05m.
fn duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_done_total_rate_and_time_left() {
        let l = Lines::every(
            "sresim run",
            Count::Work("MACs"),
            4_000_000,
            Duration::from_secs(3600),
        );
        l.inc(1_000_000);
        l.note("layer conv1 (1/4)".into());
        let line = l.line();
        assert!(
            line.starts_with("sresim run: 1.000 M/4.000 M MACs (25%), "),
            "{line}"
        );
        assert!(
            line.contains(" MACs/s, ") && line.contains(" so far, about "),
            "{line}"
        );
        assert!(line.ends_with("; layer conv1 (1/4)"), "{line}");
        // Points counted apart from the work: the work sets the share.
        let s = Lines::every(
            "sresim sweep",
            Count::Own("points"),
            100,
            Duration::from_secs(3600),
        );
        s.set_done(3, 8);
        s.inc(41);
        let line = s.line();
        assert!(
            line.starts_with("sresim sweep: 3/8 points, 41% of the work, "),
            "{line}"
        );
        // Samples x draws from the share of the work done.
        let a = Lines::every(
            "sresim accuracy",
            Count::Share("samples x draws", 1000),
            0,
            Duration::from_secs(3600),
        );
        assert!(
            a.line().contains("0/1000 samples x draws, 0% of the work"),
            "{}",
            a.line()
        );
        assert!(a.line().contains("time left not known yet"), "{}", a.line());
        a.set_total(200);
        a.inc(50);
        assert!(
            a.line()
                .starts_with("sresim accuracy: 250/1000 samples x draws, 25%"),
            "{}",
            a.line()
        );
    }

    #[test]
    fn amounts_and_durations_read_short() {
        assert_eq!(amount(99_999.0), "99999");
        assert_eq!(amount(1.234e9), "1.234 G");
        assert_eq!(amount_rate(0.0212), "0.021");
        assert_eq!(amount_rate(12.5), "12.5");
        assert_eq!(duration(45.2), "45s");
        assert_eq!(duration(187.0), "3m07s");
        assert_eq!(duration(7500.0), "2h05m");
    }

    #[test]
    fn the_interval_comes_from_the_environment_only_when_it_is_a_number() {
        // Read here without setting it (the tests of the binary set it per process).
        let i = interval();
        assert!(i == INTERVAL || std::env::var(INTERVAL_VAR).is_ok());
        assert!(INTERVAL >= Duration::from_secs(10) && INTERVAL <= Duration::from_secs(30));
    }
}
