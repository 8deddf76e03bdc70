//! The drivers of the commands over `crates/sim` (docs/ARCHITECTURE.md, "Where a new
//! command goes"): for each of `run`, `workloads`, `check`, `memory`, `accuracy` and
//! `accuracy-merge`, its flags (a `clap::Args` struct) and the one function the binary
//! calls with them, which checks the flags, calls the library, writes the outputs and
//! prints what the command prints. `sweep`, `merge`, `plot` and `compare` have theirs in
//! `crates/sweep`, `search` in `crates/search`. The process-wide pieces of the binary
//! live here too, so that it needs nothing but the driver crates and clap.

pub mod accuracy;
pub mod accuracy_merge;
pub mod check;
pub mod memory;
pub mod run;
pub mod workloads;

use anyhow::Result;

/// Most characters of an error message (its inputs are quoted cut short already; this
/// bounds whatever a library quotes whole).
const MAX_MESSAGE_CHARS: usize = 2000;

/// The text of the one `error: ...` line of a failed command: the error's chain, every
/// word of it cut to 80 characters (an input quoted whole by a library: serde's float in
/// full digits, a long hash) and the whole cut short, so that a message that quotes a
/// long input is one line, never a page.
pub fn error_message(e: &anyhow::Error) -> String {
    // A float printed long (`{}` of -1e-300, by a check or a library) is written short
    // before the words are cut, so the cut never hides its value (`bounds::text`).
    let message = format!("{e:#}");
    let message = bounds::text::shorten_numbers(&message);
    let words = workload::text::clip_words(&message, workload::text::MAX_QUOTED_CHARS);
    // A message may quote a cell or a name from a data file: escaped (`bounds::text`).
    bounds::text::printable(&workload::text::clip_to(&words, MAX_MESSAGE_CHARS)).into_owned()
}

/// A write past the file-size limit (`ulimit -f`) raises SIGXFSZ, which kills the
/// process by default, leaving its temporaries behind. Ignored, the write fails with
/// EFBIG instead: an ordinary error, one line, after the temporaries are removed.
pub fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: setting the disposition of SIGXFSZ to SIG_IGN, before any thread starts;
    // no handler runs, so nothing async-signal-unsafe can happen.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// The worker pool of `--threads` (default: the cores this process may use, at most
/// 1024; `sim::run::worker_pool`).
fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    sim::run::worker_pool("--threads", threads)
}

/// Sizes rayon's global pool before any command runs (`sim::run::init_global_pool`):
/// never from `RAYON_NUM_THREADS`.
pub fn init_global_pool() {
    sim::run::init_global_pool();
}
