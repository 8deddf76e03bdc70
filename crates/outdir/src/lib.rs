//! Output directories of sresim: one writer at a time, and every file of a result
//! replaced together or not at all.
//!
//! A command that writes a result into a directory (`run`, `sweep`, `merge`, `memory`)
//! opens it as an [`OutputDir`]: the directory is created if needed and locked with an
//! advisory `flock` on the directory itself, which the kernel releases when the process
//! ends, however it ends. A second sresim process that opens the same directory stops
//! with one clear error instead of mixing its files with the first one's.
//!
//! [`replace`] (and [`OutputDir::replace`]) replaces a set of files of one directory:
//!
//! 1. every destination must be a regular file (or a symbolic link) or absent — a
//!    directory or a FIFO where a result goes is refused before anything is written;
//! 2. every new file is written completely to a temporary beside it (`.NAME.tmp.PID.N`,
//!    unique per process and per call) and synced to disk;
//! 3. each existing destination gets a hard link `.NAME.old.PID.N` to its old content;
//! 4. the temporaries are renamed over the destinations, the directory is synced, and
//!    the old links removed.
//!
//! A failure in steps 1-3 leaves every destination as it was and removes the files the
//! call made. A rename that fails in step 4 puts back the files already renamed (from
//! the hard links; where the file system has no hard links, a destination that existed
//! before stays new). A process killed outright may leave a temporary behind; its name
//! starts with a dot and it is never read.

use anyhow::{anyhow, bail, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
        std::fs::create_dir_all(path).map_err(|e| anyhow!("{d}: cannot create: {e}"))?;
        if !path.is_dir() {
            bail!("{d}: not a directory");
        }
        Ok(OutputDir {
            path: path.to_path_buf(),
            // On failure nothing is removed: the directory is another process's now.
            _lock: lock(path)?,
            created,
            written: AtomicBool::new(false),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces `files` (name, content) of the directory all together; see [`replace`].
    pub fn replace(&self, files: &[(&str, &[u8])]) -> Result<()> {
        self.written.store(true, Ordering::Relaxed);
        replace(&self.path, files)
    }

    /// Starts the new content of one of its files; see [`stage`].
    pub fn stage(&self, name: &str) -> Result<Staged> {
        stage(&self.path, name)
    }

    /// Replaces the staged files all together; see [`replace_staged`].
    pub fn replace_staged(&self, staged: Vec<Staged>) -> Result<()> {
        self.written.store(true, Ordering::Relaxed);
        replace_staged(&self.path, staged)
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

#[cfg(unix)]
fn lock(path: &Path) -> Result<Option<File>> {
    use rustix::fs::{flock, FlockOperation};
    use rustix::io::Errno;
    let d = path.display();
    let f = File::open(path).map_err(|e| anyhow!("{d}: cannot open: {e}"))?;
    match flock(&f, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(f)),
        Err(Errno::WOULDBLOCK) => bail!(
            "{d}: another sresim process is writing this directory (it is locked); \
             wait for it to finish or choose another output directory"
        ),
        // File systems without flock (some network or FUSE mounts): go on unlocked.
        Err(Errno::NOLCK | Errno::OPNOTSUPP | Errno::NOSYS | Errno::INVAL) => Ok(None),
        Err(e) => bail!("{d}: cannot lock: {e}"),
    }
}

#[cfg(not(unix))]
fn lock(_path: &Path) -> Result<Option<File>> {
    Ok(None)
}

/// Distinguishes the temporaries of one process's calls.
static SERIAL: AtomicUsize = AtomicUsize::new(0);

/// `.NAME.KIND.PID.N` in `dir`.
fn scratch(dir: &Path, name: &str, kind: &str) -> PathBuf {
    let n = SERIAL.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}.{kind}.{}.{n}", std::process::id()))
}

/// Paths removed when dropped (the ones still there).
#[derive(Default)]
struct Scratch(Vec<PathBuf>);

impl Drop for Scratch {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// What was at a destination before the renames.
enum Old {
    Absent,
    Linked(PathBuf),
    /// Present, but the file system made no hard link: it cannot be put back.
    Unsaved,
}

/// Replaces `files` (name, content) of `dir` all together or not at all (see the module
/// documentation). Names are plain file names.
pub fn replace(dir: &Path, files: &[(&str, &[u8])]) -> Result<()> {
    let mut staged = Vec::with_capacity(files.len());
    for (name, _) in files {
        staged.push(stage(dir, name)?);
    }
    for (s, (_, bytes)) in staged.iter_mut().zip(files) {
        s.write_all(bytes)
            .map_err(|e| anyhow!("{}: cannot write: {e}", s.dst.display()))?;
    }
    replace_staged(dir, staged)
}

/// The new content of one file of a directory, written (streamed) into a temporary beside
/// it; [`replace_staged`] puts it in place. Dropped without that, the temporary is removed.
pub struct Staged {
    dst: PathBuf,
    file: std::io::BufWriter<File>,
    tmp: Scratch,
}

impl Write for Staged {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.file.write_all(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// Starts the new content of `dir/name` (step 2 of the module documentation, without its
/// sync): the destination is checked and a temporary created for it.
pub fn stage(dir: &Path, name: &str) -> Result<Staged> {
    debug_assert!(!name.contains(['/', '\\']), "{name} is not a file name");
    let dst = dir.join(name);
    check_destination(&dst)?;
    let tmp = scratch(dir, name, "tmp");
    let file = File::options()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| anyhow!("{}: cannot write: {e}", dst.display()))?;
    Ok(Staged {
        dst,
        file: std::io::BufWriter::with_capacity(1 << 16, file),
        tmp: Scratch(vec![tmp]),
    })
}

/// Replaces the files of `staged` (all of `dir`) all together or not at all: each is
/// flushed and synced, then steps 3-4 of the module documentation.
pub fn replace_staged(dir: &Path, staged: Vec<Staged>) -> Result<()> {
    let mut dst = Vec::with_capacity(staged.len());
    let mut temps = Scratch::default();
    for mut s in staged {
        let p = s.dst.clone();
        s.file
            .flush()
            .and_then(|()| s.file.get_ref().sync_all())
            .map_err(|e| anyhow!("{}: cannot write: {e}", p.display()))?;
        temps.0.append(&mut s.tmp.0);
        dst.push(p);
    }
    let names: Vec<String> = dst
        .iter()
        .map(|p| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut links = Scratch::default();
    let mut olds = Vec::with_capacity(dst.len());
    for (p, name) in dst.iter().zip(&names) {
        olds.push(if std::fs::symlink_metadata(p).is_err() {
            Old::Absent
        } else {
            let link = scratch(dir, name, "old");
            match std::fs::hard_link(p, &link) {
                Ok(()) => {
                    links.0.push(link.clone());
                    Old::Linked(link)
                }
                Err(_) => Old::Unsaved,
            }
        });
    }
    for (i, p) in dst.iter().enumerate() {
        if let Err(e) = std::fs::rename(&temps.0[i], p) {
            for j in (0..i).rev() {
                match &olds[j] {
                    Old::Linked(link) => {
                        let _ = std::fs::rename(link, &dst[j]);
                    }
                    Old::Absent => {
                        let _ = std::fs::remove_file(&dst[j]);
                    }
                    Old::Unsaved => {}
                }
            }
            bail!("{}: cannot replace: {e}", p.display());
        }
    }
    temps.0.clear();
    sync_dir(dir);
    Ok(())
}

/// A destination must be absent, a regular file or a symbolic link (which the rename
/// replaces, leaving its target alone).
fn check_destination(p: &Path) -> Result<()> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => bail!(
            "{}: is a directory, not a file: cannot replace it",
            p.display()
        ),
        Ok(m) if !m.is_file() && !m.file_type().is_symlink() => {
            bail!("{}: not a regular file: cannot replace it", p.display())
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => bail!("{}: cannot read: {e}", p.display()),
    }
}

/// Makes the renames durable (a directory sync; not available everywhere, so best effort).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests;
