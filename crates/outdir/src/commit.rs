//! Replacing files all together: temporaries, a journal as the commit point, renames, and
//! the roll-forward of a replacement a killed process left half done (docs/errors.md,
//! "Output directories").
#![allow(clippy::disallowed_methods)] // this module is the one allowed writer

use anyhow::{anyhow, bail, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The journal of a replacement of several files: while it exists in a directory, some of
/// the files it names may be new and others old. Readers refuse the files of such a
/// directory ([`interrupted`]); the next [`crate::OutputDir::open`] of it completes the
/// replacement ([`recover`]).
pub const JOURNAL: &str = ".sresim-commit";

/// Largest journal [`recover`] reads (it names a handful of files).
const MAX_JOURNAL_BYTES: u64 = 1 << 20;

/// Distinguishes the temporaries of one process's calls.
static SERIAL: AtomicUsize = AtomicUsize::new(0);

/// `.NAME.KIND.PID.N` in `dir`.
pub(crate) fn scratch(dir: &Path, name: &str, kind: &str) -> PathBuf {
    let n = SERIAL.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}.{kind}.{}.{n}", std::process::id()))
}

/// Paths removed when dropped (the ones still there).
#[derive(Default)]
pub(crate) struct Scratch(pub(crate) Vec<PathBuf>);

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

/// Replaces `files` (name, content) of `dir` all together or not at all (see the crate
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

/// The new content of one file, written (streamed) into a temporary beside it;
/// [`replace_staged`] puts it in place. Dropped without that, the temporary is removed.
pub struct Staged {
    dst: PathBuf,
    file: std::io::BufWriter<File>,
    pub(crate) tmp: Scratch,
}

impl Staged {
    /// The file this will replace.
    pub fn target(&self) -> &Path {
        &self.dst
    }
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

/// Starts the new content of `dir/name` (step 2 of the crate documentation, without its
/// sync): the destination is checked and a temporary created for it.
pub fn stage(dir: &Path, name: &str) -> Result<Staged> {
    if name.contains(['/', '\\', '\n']) || name.is_empty() {
        bail!("{}: not a file name", dir.join(name).display());
    }
    stage_at(dir, name, dir.join(name))
}

/// [`stage`] of `dir/name`, named `dst` in messages.
fn stage_at(dir: &Path, name: &str, dst: PathBuf) -> Result<Staged> {
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

/// Opens the existing regular file `path` for appending (the points.csv of a running
/// sweep grows by appends of whole points); a symbolic link, FIFO or device is refused.
pub fn open_append(path: &Path) -> Result<File> {
    check_destination(path)?;
    File::options()
        .append(true)
        .open(path)
        .map_err(|e| anyhow!("{}: cannot open for appending: {e}", path.display()))
}

/// [`stage`] for a file named on its own (`--dump-trace FILE`): its directory is the
/// path's parent, or the working directory.
pub fn stage_file(path: &Path) -> Result<Staged> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| anyhow!("{}: not a file name", path.display()))?;
    let name = name.to_string_lossy();
    if name.contains(['/', '\\', '\n']) {
        bail!("{}: not a file name", path.display());
    }
    stage_at(dir, &name, path.to_path_buf())
}

/// Replaces the files of `staged` all together or not at all: each is flushed and synced,
/// then, for more than one file, the journal is written in `dir` (the commit point), the
/// temporaries renamed over their destinations, and the journal removed. The staged files
/// may lie in other directories than `dir` (the exports of `sresim memory`); the journal
/// names them by absolute path.
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
    let mut links = Scratch::default();
    let mut olds = Vec::with_capacity(dst.len());
    for p in &dst {
        olds.push(if std::fs::symlink_metadata(p).is_err() {
            Old::Absent
        } else {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            let link = scratch(p.parent().unwrap_or(dir), &name, "old");
            match std::fs::hard_link(p, &link) {
                Ok(()) => {
                    links.0.push(link.clone());
                    Old::Linked(link)
                }
                Err(_) => Old::Unsaved,
            }
        });
    }
    let journal = if dst.len() > 1 {
        let saved: Vec<Option<PathBuf>> = olds
            .iter()
            .map(|o| match o {
                Old::Linked(l) => Some(l.clone()),
                _ => None,
            })
            .collect();
        Some(write_journal(dir, &temps.0, &dst, &saved)?)
    } else {
        None
    };
    let abort_after = test_abort_after();
    for (i, p) in dst.iter().enumerate() {
        if abort_after == Some(i) {
            // A process killed between two renames (tests only; see `test_abort_after`).
            std::process::abort();
        }
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
            if let Some(j) = &journal {
                let _ = std::fs::remove_file(j);
            }
            bail!("{}: cannot replace: {e}", p.display());
        }
    }
    temps.0.clear();
    for d in parents(&dst, dir) {
        sync_dir(&d);
    }
    if let Some(j) = journal {
        let _ = std::fs::remove_file(j);
        sync_dir(dir);
    }
    Ok(())
}

/// `SRESIM_TEST_ABORT_AFTER_RENAMES=N`: a replacement of several files aborts the process
/// after its first N renames, as a kill would. For the tests of the roll-forward.
fn test_abort_after() -> Option<usize> {
    std::env::var("SRESIM_TEST_ABORT_AFTER_RENAMES")
        .ok()?
        .parse()
        .ok()
}

/// The distinct directories of `files`, and `dir`.
fn parents(files: &[PathBuf], dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = vec![dir.to_path_buf()];
    for f in files {
        if let Some(p) = f.parent() {
            if !v.iter().any(|d| d == p) {
                v.push(p.to_path_buf());
            }
        }
    }
    v
}

/// Writes the journal (three lines a file: its temporary, its destination, the link to
/// its old content or an empty line) to a temporary, syncs it and renames it to
/// [`JOURNAL`] in `dir`; returns its path.
pub(crate) fn write_journal(
    dir: &Path,
    temps: &[PathBuf],
    dst: &[PathBuf],
    olds: &[Option<PathBuf>],
) -> Result<PathBuf> {
    let path = dir.join(JOURNAL);
    let mut text = String::new();
    for ((t, d), o) in temps.iter().zip(dst).zip(olds) {
        for p in [Some(t), Some(d), o.as_ref()] {
            let Some(p) = p else {
                text.push('\n');
                continue;
            };
            let p = std::path::absolute(p).map_err(|e| anyhow!("{}: {e}", p.display()))?;
            let s = p
                .to_str()
                .filter(|s| !s.contains('\n'))
                .ok_or_else(|| anyhow!("{}: not a path sresim can write", p.display()))?;
            text.push_str(s);
            text.push('\n');
        }
    }
    let mut tmp = Scratch(vec![scratch(dir, JOURNAL.trim_start_matches('.'), "tmp")]);
    let cannot = |e: std::io::Error| anyhow!("{}: cannot write: {e}", path.display());
    let mut f = File::options()
        .write(true)
        .create_new(true)
        .open(&tmp.0[0])
        .map_err(cannot)?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(cannot)?;
    std::fs::rename(&tmp.0[0], &path).map_err(cannot)?;
    tmp.0.clear();
    sync_dir(dir);
    Ok(path)
}

/// `dir` holds the journal of an unfinished replacement.
pub fn interrupted(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(JOURNAL)).is_ok()
}

/// Completes the replacement whose journal `dir` holds (a process killed between its
/// renames): every temporary the journal names that is still there is renamed over its
/// destination, then the journal is removed. Nothing to do without a journal. Call it
/// holding the directory's lock.
pub fn recover(dir: &Path) -> Result<()> {
    let path = dir.join(JOURNAL);
    let m = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => bail!("{}: cannot read: {e}", path.display()),
    };
    let bad = |why: &str| {
        anyhow!(
            "{}: {why}; it is not a journal sresim wrote: remove it",
            path.display()
        )
    };
    if !m.is_file() || m.len() > MAX_JOURNAL_BYTES {
        return Err(bad("not a regular file of at most 1 MiB"));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| bad(&e.to_string()))?;
    let lines: Vec<&str> = text.lines().collect();
    if !lines.len().is_multiple_of(3) {
        return Err(bad("not three lines a file"));
    }
    let mut links = Scratch::default();
    for entry in lines.chunks(3) {
        let (tmp, dst) = (Path::new(entry[0]), Path::new(entry[1]));
        let dotted = |p: &Path| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                && p.parent() == dst.parent()
        };
        let old = (!entry[2].is_empty()).then(|| PathBuf::from(entry[2]));
        if !dotted(tmp) || old.as_deref().is_some_and(|o| !dotted(o)) {
            return Err(bad("a line names no temporary beside its destination"));
        }
        links.0.extend(old);
        if std::fs::symlink_metadata(tmp).is_ok() {
            std::fs::rename(tmp, dst)
                .map_err(|e| anyhow!("{}: cannot replace: {e}", dst.display()))?;
            if let Some(d) = dst.parent() {
                sync_dir(d);
            }
        }
    }
    std::fs::remove_file(&path).map_err(|e| anyhow!("{}: cannot remove: {e}", path.display()))?;
    sync_dir(dir);
    drop(links);
    Ok(())
}

/// A destination must be absent or a regular file. A directory, a FIFO, a device or a
/// socket is refused, and so is a symbolic link: the rename would replace the link, not
/// the file it names.
fn check_destination(p: &Path) -> Result<()> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => bail!(
            "{}: is a directory, not a file: cannot replace it",
            p.display()
        ),
        Ok(m) if m.file_type().is_symlink() => bail!(
            "{}: is a symbolic link: sresim does not replace one (name the file it points to)",
            p.display()
        ),
        Ok(m) if !m.is_file() => {
            bail!("{}: not a regular file: cannot replace it", p.display())
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => bail!("{}: cannot read: {e}", p.display()),
    }
}

/// Makes the renames durable (a directory sync; not available everywhere, so best effort).
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
