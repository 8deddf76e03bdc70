//! Output directories of sresim: one writer at a time, and every file of a result
//! replaced together or not at all.
//!
//! A command that writes a result into a directory (`run`, `sweep`, `merge`, `memory`)
//! opens it as an [`OutputDir`]: the directory is created if needed and locked with an
//! advisory `flock` on the directory itself, which the kernel releases when the process
//! ends, however it ends. A second sresim process that opens the same directory stops
//! with one clear error instead of mixing its files with the first one's. A command that
//! writes several directories (`memory`'s exports) locks each of them so for its whole
//! life ([`OutputDir::open_all`]: in the order of their resolved paths, each once).
//!
//! [`replace`] (and [`OutputDir::replace`], [`replace_staged`]) replaces a set of files:
//!
//! 1. every destination must be a regular file or absent — a directory, a FIFO, a device
//!    or a symbolic link where a result goes is refused before anything is written;
//! 2. every new file is written completely to a temporary beside it (`.NAME.tmp.PID.N`,
//!    unique per process and per call) and synced to disk;
//! 3. each existing destination gets a hard link `.NAME.old.PID.N` to its old content;
//! 4. for more than one file, the journal [`JOURNAL`] (`.sresim-commit`: the writer, its
//!    process id, each file's name with the N of its temporary and old link; see
//!    [`recover`] for the format) is written, synced and renamed
//!    into the directory — the commit point; each other directory the files lie in
//!    (`memory`'s exports) then gets the mark [`EXPORT_MARK`], naming the journal's
//!    directory;
//! 5. the temporaries are renamed over the destinations (in the journal's line order),
//!    the directories synced, the marks and the journal removed, then the old links
//!    (while the journal is there, every link it records is: [`recover`] refuses a
//!    journal whose files are in a state no writer leaves);
//! 6. in a command's own output directory holding an earlier result of it (its anchor,
//!    names.rs), that result's files the new set does not hold are removed (an old
//!    outputs.npz, the layers table of the other format: a directory holds one result):
//!    after the journal, never through it, so no journal can make recovery delete a file.
//!
//! A failure in steps 1-4 leaves every destination as it was and removes the files the
//! call made. A rename that fails in step 5 puts back the files already renamed (from
//! the hard links; where the file system has no hard links, a destination that existed
//! before stays new). A process killed during step 5 leaves the journal: while it is
//! there, the one reader of user files (`workload::files`) refuses every file of the
//! directory (and, through its mark, of every other directory of the replacement), and
//! no writer stages a file in it or in a marked directory (they are refused, the mark
//! kept), and the next [`OutputDir::open`] of it completes the renames ([`recover`]),
//! touching nothing but the files, temporaries and links its writer could have made
//! (`names.rs` lists each writer's files).
//! A process killed before step 4 leaves at most a temporary behind; its name starts with
//! a dot and it is never read. One killed in step 4, after the journal and before its last
//! mark, has renamed nothing: its recovery rolls the replacement back (old content kept).
//!
//! Readers outside sresim see each file whole (one rename each), but may see a new file
//! beside an old sibling between two renames or after a kill; a reader that takes the
//! directory's lock shared, and finds no journal, never does (docs/errors.md, "Output
//! directories"). A writer waits a moment for such readers, and is refused at once by a
//! writer holding the lock.
//!
//! Nothing else in the workspace creates or replaces a file: clippy.toml disallows
//! `std::fs::write`, `File::create` and `OpenOptions::open` outside this crate and tests.

#![allow(clippy::disallowed_methods)] // this crate is the one allowed writer

use anyhow::{anyhow, bail, Result};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// A directory this process writes, locked against other sresim processes until dropped.
#[derive(Debug)]
pub struct OutputDir {
    path: PathBuf,
    /// The open directory that holds the lock (None where locks are not supported).
    _lock: Option<File>,
    /// The directories [`OutputDir::open`] created, deepest first.
    created: Vec<PathBuf>,
    /// Something was written into it.
    written: AtomicBool,
}

impl OutputDir {
    /// Creates `path` if it does not exist and locks it. Fails when another process
    /// holds the lock.
    pub fn open(path: &Path) -> Result<OutputDir> {
        let d = path.display();
        let created: Vec<PathBuf> = path
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .map(Path::to_path_buf)
            .collect();
        // A file in the way: say so (create_dir_all would say "File exists").
        if std::fs::metadata(path).is_ok_and(|m| !m.is_dir()) {
            bail!("{d}: not a directory (a file of that name is in the way)");
        }
        std::fs::create_dir_all(path).map_err(|e| anyhow!("{d}: cannot create: {e}"))?;
        if !path.is_dir() {
            bail!("{d}: not a directory");
        }
        // On failure nothing is removed: the directory is another process's now.
        let lock = lock(path)?;
        recover(path)?;
        Ok(OutputDir {
            path: path.to_path_buf(),
            _lock: lock,
            created,
            written: AtomicBool::new(false),
        })
    }

    /// [`OutputDir::open`] of each of `dirs` (a command's output directory and the
    /// directories it exports to, each with the flag that named it, said first in an
    /// error; "" for none), for the command's whole life: in the order of their resolved
    /// paths, so that two processes locking overlapping directories take them in one
    /// order, and each directory once. The result follows `dirs`: the first entry of each
    /// directory gets it, a repeat None. On a failure the ones opened are let go.
    pub fn open_all(dirs: &[(&Path, &str)]) -> Result<Vec<Option<OutputDir>>> {
        let mut keys: Vec<(PathBuf, usize)> = dirs
            .iter()
            .enumerate()
            .map(|(i, (p, _))| (resolved_key(p), i))
            .collect();
        keys.sort();
        // A later entry of one directory is removed: the first keeps it.
        keys.dedup_by(|later, first| later.0 == first.0);
        let mut out: Vec<Option<OutputDir>> = dirs.iter().map(|_| None).collect();
        for (_, i) in keys {
            let (path, flag) = dirs[i];
            out[i] = Some(OutputDir::open(path).map_err(|e| match flag {
                "" => e,
                f => anyhow!("{f}: {e}"),
            })?);
        }
        Ok(out)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces `files` (name, content) of the directory all together; see [`replace`].
    pub fn replace(&self, files: &[(&str, &[u8])]) -> Result<()> {
        commit::replace_in(&self.path, files, true)?;
        self.written.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Starts the new content of one of its files; see [`stage`].
    pub fn stage(&self, name: &str) -> Result<Staged> {
        stage(&self.path, name)
    }

    /// Replaces the staged files all together; see [`replace_staged`].
    pub fn replace_staged(&self, staged: Vec<Staged>) -> Result<()> {
        commit::commit(&self.path, staged, true)?;
        self.written.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Marks the directory as holding results written another way (e.g. appended).
    pub fn mark_written(&self) {
        self.written.store(true, Ordering::Relaxed);
    }
}

impl Drop for OutputDir {
    /// The directories [`OutputDir::open`] created are removed again (each only if still
    /// empty) when nothing was written, so a command that fails leaves no trace.
    fn drop(&mut self) {
        if !self.written.load(Ordering::Relaxed) {
            for dir in &self.created {
                if std::fs::remove_dir(dir).is_err() {
                    break;
                }
            }
        }
    }
}

/// How long a writer waits for readers that hold the directory's lock shared.
#[cfg(unix)]
const READERS_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Locks `path` exclusively. Held exclusively by another process (a writer): refused at
/// once. Held shared only (readers outside sresim, docs/errors.md): retried until they let
/// go, for up to [`READERS_WAIT`].
#[cfg(unix)]
fn lock(path: &Path) -> Result<Option<File>> {
    use rustix::fs::{flock, FlockOperation};
    use rustix::io::Errno;
    let d = path.display();
    let f = File::open(path).map_err(|e| anyhow!("{d}: cannot open: {e}"))?;
    let start = std::time::Instant::now();
    loop {
        match flock(&f, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(Some(f)),
            Err(Errno::WOULDBLOCK) => {}
            // File systems without flock (some network or FUSE mounts): go on unlocked.
            Err(Errno::NOLCK | Errno::OPNOTSUPP | Errno::NOSYS | Errno::INVAL) => return Ok(None),
            Err(e) => bail!("{d}: cannot lock: {e}"),
        }
        // A shared lock is granted only when no process holds it exclusively.
        match flock(&f, FlockOperation::NonBlockingLockShared) {
            Ok(()) => {
                let _ = flock(&f, FlockOperation::Unlock);
            }
            Err(Errno::WOULDBLOCK) => bail!(
                "{d}: another sresim process is writing this directory (it is locked); \
                 wait for it to finish or choose another output directory"
            ),
            Err(e) => bail!("{d}: cannot lock: {e}"),
        }
        if start.elapsed() > READERS_WAIT {
            bail!(
                "{d}: readers have held this directory's lock (shared) for more than {} s; \
                 try again when they are done",
                READERS_WAIT.as_secs()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[cfg(not(unix))]
fn lock(_path: &Path) -> Result<Option<File>> {
    Ok(None)
}

mod commit;
mod marks;
pub mod names;
mod recover;
mod sets;
pub use commit::{
    append_whole, check_apart, open_append, replace, replace_staged, stage, stage_file, Staged,
};
pub use marks::{interrupted, EXPORT_MARK, JOURNAL, JOURNAL_FORMAT};
pub use recover::recover;
use sets::resolved_key;
pub use sets::{export_apart, reports_apart, same_dir};

#[cfg(test)]
mod tests;

/// Standard output as every command prints its results to it. A write that fails
/// (`sresim run > /dev/full`) is an error naming stdout, one line on its own:
/// `stdout: cannot write: No space left on device` (docs/errors.md, "Command line"); a
/// closed pipe keeps its kind, `BrokenPipe`, which the binary ends on quietly. The one
/// place that names the stream: every command prints through [`stdout`].
pub struct Stdout(std::io::StdoutLock<'static>);

/// The process's standard output, locked, its write errors naming it.
pub fn stdout() -> Stdout {
    Stdout(std::io::stdout().lock())
}

/// `e` as the error of a write to stdout: `stdout: cannot write: REASON`, the reason
/// without the `(os error N)` suffix, the kind kept.
fn stdout_error(e: std::io::Error) -> std::io::Error {
    let reason = e.to_string();
    let reason = match reason.find(" (os error ") {
        Some(at) => &reason[..at],
        None => &reason,
    };
    std::io::Error::new(e.kind(), format!("stdout: cannot write: {reason}"))
}

impl std::io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(stdout_error)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.0.write_all(buf).map_err(stdout_error)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(stdout_error)
    }
}
