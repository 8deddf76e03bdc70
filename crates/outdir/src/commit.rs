//! Replacing files all together: temporaries, a journal as the commit point, renames, and
//! the roll-forward of a replacement a killed process left half done (docs/errors.md,
//! "Output directories"). The journal's format and what recovery may touch are in
//! [`crate::recover`].
#![allow(clippy::disallowed_methods)] // this module is the one allowed writer

use crate::marks::{
    destination_kind, sync_dir, Kind, EXPORT_MARK, EXPORT_MARK_FORMAT, JOURNAL, JOURNAL_FORMAT,
};
use crate::names::{self, scratch_name};
use crate::sets::{apart, one_set};
use anyhow::{anyhow, bail, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Most directories besides the journal's that one replacement's files may lie in.
const MAX_EXPORT_DIRS: usize = 2;

/// Distinguishes the scratch files of one process's calls.
static SERIAL: AtomicU64 = AtomicU64::new(0);

/// A scratch file `.NAME.KIND.PID.N` in `dir`, and its N.
pub(crate) fn scratch(dir: &Path, name: &str, kind: &str) -> (PathBuf, u64) {
    let n = SERIAL.fetch_add(1, Ordering::Relaxed);
    (dir.join(scratch_name(name, kind, std::process::id(), n)), n)
}

/// Makes a new scratch file of `name` and `kind` in `dir` with `make` (which must fail
/// with `AlreadyExists` on a name that is taken): another N is taken while one is (a
/// rolled-back replacement may leave its temporaries in a directory recovery may not
/// touch, and a later process can have the same id: in a container it often has).
pub(crate) fn new_scratch<T>(
    dir: &Path,
    name: &str,
    kind: &str,
    make: impl Fn(&Path) -> std::io::Result<T>,
) -> std::io::Result<(PathBuf, u64, T)> {
    let mut tries = 0;
    loop {
        let (p, n) = scratch(dir, name, kind);
        match make(&p) {
            Ok(t) => return Ok((p, n, t)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 64 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Paths removed when dropped (the ones still there).
#[derive(Default)]
pub(crate) struct Scratch(pub(crate) Vec<PathBuf>);

impl Drop for Scratch {
    fn drop(&mut self) {
        #[cfg(test)]
        if tests::KILLED.with(|c| c.get()) {
            return;
        }
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// What was at a destination before the renames.
enum Old {
    Absent,
    /// A hard link to it, and the link's N.
    Linked(PathBuf, u64),
    /// Present, but the file system made no hard link: it cannot be put back.
    Unsaved,
}

/// Replaces `files` (name, content) of `dir` all together or not at all (see the crate
/// documentation). Names are plain file names.
pub fn replace(dir: &Path, files: &[(&str, &[u8])]) -> Result<()> {
    replace_in(dir, files, false)
}

/// [`replace`], in a command's own output directory (`own`: [`crate::OutputDir`]) or not
/// (see [`one_set`]).
pub(crate) fn replace_in(dir: &Path, files: &[(&str, &[u8])], own: bool) -> Result<()> {
    let mut staged = Vec::with_capacity(files.len());
    for (name, _) in files {
        staged.push(stage(dir, name)?);
    }
    for (s, (_, bytes)) in staged.iter_mut().zip(files) {
        // A write error names the file (see `Staged`).
        s.write_all(bytes)?;
    }
    commit(dir, staged, own)
}

/// The new content of one file, written (streamed) into a temporary beside it;
/// [`replace_staged`] puts it in place. Dropped without that, the temporary is removed.
/// Every write error it returns names the file: `DIR/NAME: cannot write: ...`, so a
/// writer stacked on it (csv, serde_json, a BufWriter) tells the user which file of which
/// directory failed.
pub struct Staged {
    dst: PathBuf,
    /// The directory it goes into, as given.
    dir: PathBuf,
    name: String,
    /// The N of its temporary.
    serial: u64,
    /// A file the user named on its own ([`stage_file`]).
    named: bool,
    pub(crate) file: std::io::BufWriter<File>,
    pub(crate) tmp: Scratch,
}

impl Staged {
    /// The file this will replace.
    pub fn target(&self) -> &Path {
        &self.dst
    }

    /// `e`, saying which file could not be written.
    fn cannot(&self, e: std::io::Error) -> std::io::Error {
        std::io::Error::new(
            e.kind(),
            format!("{}: cannot write: {e}", self.dst.display()),
        )
    }
}

impl Write for Staged {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf).map_err(|e| self.cannot(e))
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.file.write_all(buf).map_err(|e| self.cannot(e))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush().map_err(|e| self.cannot(e))
    }
}

/// Starts the new content of `dir/name` (step 2 of the crate documentation, without its
/// sync): the destination is checked and a temporary created for it.
pub fn stage(dir: &Path, name: &str) -> Result<Staged> {
    // A dot name is a name too (`plot --out .draft.svg`); a replacement of several files
    // is checked against the writers' names of names.rs (plain ones) when committed.
    if name.is_empty() || name.contains(['/', '\\', '\n', '\0']) {
        bail!("{}: not a file name", dir.join(name).display());
    }
    stage_at(dir, name, dir.join(name), false)
}

/// [`stage`] of `dir/name`, named `dst` in messages.
///
/// The one check of every writer (docs/errors.md, "Output directories"): a directory that
/// holds the journal or the export mark of an unfinished replacement is never written
/// into, whatever the command and whether or not it names the directory with `--out`,
/// until that replacement is completed where its journal is. Its mark is left as it is.
/// (A command's own `--out` directory was completed by [`crate::OutputDir::open`] before
/// anything is staged in it.)
fn stage_at(dir: &Path, name: &str, dst: PathBuf, named: bool) -> Result<Staged> {
    crate::recover::unfinished(dir)?;
    check_destination(&dst)?;
    if named {
        // Refused before anything is computed; checked again when committed.
        one_set(dir, name, &dst, true, None)?;
    }
    let (tmp, serial, file) = new_scratch(dir, name, "tmp", |p| {
        File::options().write(true).create_new(true).open(p)
    })
    .map_err(|e| anyhow!("{}: cannot write: {e}", dst.display()))?;
    Ok(Staged {
        dst,
        dir: dir.to_path_buf(),
        name: name.to_string(),
        serial,
        named,
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

/// Appends `bytes` to `file` (opened by [`open_append`] at `path`) whole or not at all,
/// and syncs them. A write that fails part way (a full disk, `ulimit -f`) is undone: the
/// file is cut back to its length before the append, so a reader that follows it without
/// the lock never finds a torn row once the error is reported (docs/errors.md, "Output
/// directories").
pub fn append_whole(file: &mut File, path: &Path, bytes: &[u8]) -> Result<()> {
    let before = file
        .metadata()
        .map_err(|e| anyhow!("{}: cannot append: {e}", path.display()))?
        .len();
    let wrote = file
        .write_all(bytes)
        .and_then(|()| file.flush())
        .and_then(|()| file.sync_data());
    let Err(e) = wrote else { return Ok(()) };
    match file.set_len(before).and_then(|()| file.sync_data()) {
        Ok(()) => Err(anyhow!("{}: cannot append: {e}", path.display())),
        Err(u) => Err(anyhow!(
            "{}: cannot append: {e}; the partial row is left (cannot cut it off: {u}); `sweep --resume` removes it",
            path.display()
        )),
    }
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
    if name.contains(['/', '\\', '\n', '\0']) {
        bail!("{}: not a file name", path.display());
    }
    stage_at(dir, &name, path.to_path_buf(), true)
}

/// One file of a replacement, once its temporary is complete.
pub(crate) struct Entry {
    pub(crate) dst: PathBuf,
    pub(crate) dir: PathBuf,
    pub(crate) name: String,
    pub(crate) serial: u64,
    pub(crate) named: bool,
}

/// Replaces the files of `staged` all together or not at all: each is flushed and synced,
/// then, for more than one file, the journal is written in `dir` (the commit point), the
/// temporaries renamed over their destinations, and the journal removed. The staged files
/// may lie in other directories than `dir` (the exports of `sresim memory`, at most two
/// more); the journal records those directories.
pub fn replace_staged(dir: &Path, staged: Vec<Staged>) -> Result<()> {
    commit(dir, staged, false)
}

/// [`replace_staged`], in a command's own output directory (`own`: [`crate::OutputDir`])
/// or not (see [`one_set`]).
pub(crate) fn commit(dir: &Path, staged: Vec<Staged>, own: bool) -> Result<()> {
    // The working directory, however it was written (a file named without a directory).
    let dir = match dir.as_os_str().is_empty() {
        true => Path::new("."),
        false => dir,
    };
    let mut entries = Vec::with_capacity(staged.len());
    let mut temps = Scratch::default();
    for mut s in staged {
        let p = s.dst.clone();
        s.file
            .flush()
            .and_then(|()| s.file.get_ref().sync_all())
            .map_err(|e| anyhow!("{}: cannot write: {e}", p.display()))?;
        temps.0.append(&mut s.tmp.0);
        entries.push(Entry {
            dst: p,
            dir: s.dir.clone(),
            name: s.name.clone(),
            serial: s.serial,
            named: s.named,
        });
    }
    // Which writer and directories the journal records: decided before anything is made.
    let plan = if entries.len() > 1 {
        Some(plan_journal(dir, &entries)?)
    } else {
        None
    };
    // The one-set rules, where recovery checks them again (`sets::whole`).
    let files: Vec<crate::sets::SetFile> = entries
        .iter()
        .enumerate()
        .map(|(k, e)| crate::sets::SetFile {
            dir: &e.dir,
            name: &e.name,
            dst: e.dst.clone(),
            alone: e.named || (!own && entries.len() == 1),
            index: plan.as_ref().map_or(0, |p| p.index[k]),
            pending: true,
        })
        .collect();
    crate::sets::whole(plan.as_ref().map(|p| p.writer), &files)?;
    // The files of the writer's earlier result the new one does not hold go with it
    // (found now, removed once the new set is in; never through the journal).
    let gone = match (&plan, own) {
        (Some(p), true) => stale(dir, p, &entries)?,
        _ => Vec::new(),
    };
    let mut links = Scratch::default();
    let mut olds = Vec::with_capacity(entries.len());
    for e in &entries {
        olds.push(if std::fs::symlink_metadata(&e.dst).is_err() {
            Old::Absent
        } else {
            match new_scratch(&e.dir, &e.name, "old", |l| std::fs::hard_link(&e.dst, l)) {
                Ok((link, n, ())) => {
                    links.0.push(link.clone());
                    Old::Linked(link, n)
                }
                Err(_) => Old::Unsaved,
            }
        });
    }
    let journal = match plan {
        Some(plan) => {
            let saved: Vec<Option<u64>> = olds
                .iter()
                .map(|o| match o {
                    Old::Linked(_, n) => Some(*n),
                    _ => None,
                })
                .collect();
            let journal = write_journal(dir, &plan, &entries, &saved)?;
            // Each other directory is marked before any of its files is renamed.
            let mut marks = Scratch::default();
            for (i, d) in plan.dirs.iter().enumerate() {
                let named = entries
                    .iter()
                    .zip(&plan.index)
                    .find(|(e, &k)| k == i + 1 && !plan.writer.lists(&e.name))
                    .map(|(e, _)| e.name.as_str());
                match write_mark(Path::new(d), &plan.home, named) {
                    Ok(m) => marks.0.push(m),
                    Err(e) => {
                        drop(marks);
                        let _ = std::fs::remove_file(&journal);
                        return Err(e);
                    }
                }
            }
            Some((journal, marks))
        }
        None => None,
    };
    let abort_after = test_abort_after();
    for (i, e) in entries.iter().enumerate() {
        if abort_after == Some(i) {
            // A process killed between two renames (tests only; see `test_abort_after`).
            std::process::abort();
        }
        #[cfg(test)]
        if tests::LEAVE_AFTER.with(|c| c.get()) == Some(i) {
            // The unit tests' kill: everything left as it is.
            std::mem::forget(temps);
            std::mem::forget(links);
            std::mem::forget(journal);
            return Ok(());
        }
        kill_point();
        if let Err(err) = std::fs::rename(&temps.0[i], &e.dst) {
            for j in (0..i).rev() {
                match &olds[j] {
                    Old::Linked(link, _) => {
                        let _ = std::fs::rename(link, &entries[j].dst);
                    }
                    Old::Absent => {
                        let _ = std::fs::remove_file(&entries[j].dst);
                    }
                    Old::Unsaved => {}
                }
            }
            if let Some((j, marks)) = journal {
                drop(marks);
                let _ = std::fs::remove_file(j);
            }
            bail!("{}: cannot replace: {err}", e.dst.display());
        }
    }
    temps.0.clear();
    for d in parents(&entries, dir) {
        sync_dir(&d);
    }
    kill_point();
    if let Some((j, marks)) = journal {
        // The marks go first: a kill between leaves the journal, whose recovery removes
        // what is left of them.
        for m in &marks.0 {
            let _ = std::fs::remove_file(m);
            if let Some(d) = m.parent() {
                sync_dir(d);
            }
            kill_point();
        }
        drop(marks);
        let _ = std::fs::remove_file(j);
        sync_dir(dir);
    }
    // The earlier result's files the new set does not hold, once the new set is in place
    // and its journal gone: a journal names only files to rename, so nothing a journal
    // says can make recovery delete a file. A kill in this moment leaves such a file
    // beside the new set; the next result of the same command removes it
    // (docs/errors.md, "One result set, whole").
    let mut not_removed = None;
    for name in &gone {
        kill_point();
        let p = dir.join(name);
        match std::fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                not_removed.get_or_insert(anyhow!(
                    "{}: cannot remove (a file of the result this one replaces): {e}",
                    p.display()
                ));
            }
            _ => {}
        }
    }
    if !gone.is_empty() {
        sync_dir(dir);
    }
    match not_removed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The files of `dir` (the command's own output directory, the journal's) that the writer
/// of `plan` lists (names.rs, patterns included) and that its new set `entries` does not
/// hold there: what is left of the result it replaces (an outputs.npz of a `run` with
/// `--dump-outputs` replaced by one without, a layers.csv replaced by a layers.parquet, a
/// Pareto plot of a group the new search does not have). Regular files only; sorted.
/// Nothing is removed in the other directories of a replacement (`memory`'s exports):
/// the files written there are always the whole pair.
///
/// Only when the directory holds an earlier result of the writer, its anchor (names.rs:
/// the file every result of it holds, run's summary.json, memory's memory_summary.json).
/// Files of those names beside no result of the writer are the user's, left alone.
fn stale(dir: &Path, plan: &Plan, entries: &[Entry]) -> Result<Vec<String>> {
    let anchor = plan.writer.anchor;
    let earlier = std::fs::symlink_metadata(dir.join(anchor)).is_ok_and(|m| m.is_file())
        && entries
            .iter()
            .zip(&plan.index)
            .any(|(x, &i)| i == 0 && x.name == anchor);
    if !earlier {
        return Ok(Vec::new());
    }
    let list =
        std::fs::read_dir(dir).map_err(|e| anyhow!("{}: cannot read: {e}", dir.display()))?;
    let mut gone = Vec::new();
    for e in list {
        let e = e.map_err(|e| anyhow!("{}: cannot read: {e}", dir.display()))?;
        let Some(name) = e.file_name().to_str().map(String::from) else {
            continue;
        };
        let kept = entries
            .iter()
            .zip(&plan.index)
            .any(|(x, &i)| i == 0 && x.name == name);
        if kept || !plan.writer.lists(&name) {
            continue;
        }
        if std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_file()) {
            gone.push(name);
        }
    }
    gone.sort();
    Ok(gone)
}

/// `SRESIM_TEST_ABORT_AFTER_RENAMES=N`: a replacement of several files aborts the process
/// after its first N renames, as a kill would. For the tests of the roll-forward.
fn test_abort_after() -> Option<usize> {
    std::env::var("SRESIM_TEST_ABORT_AFTER_RENAMES")
        .ok()?
        .parse()
        .ok()
}

/// The distinct directories of `entries`, and `dir`.
fn parents(entries: &[Entry], dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = vec![dir.to_path_buf()];
    for e in entries {
        if !v.contains(&e.dir) {
            v.push(e.dir.clone());
        }
    }
    v
}

/// What a journal records besides its files: the writer whose names cover them, the
/// directories other than the journal's that hold some (absolute, symbolic links
/// resolved), and each file's directory (0: the journal's, i: `dirs[i - 1]`).
pub(crate) struct Plan {
    pub(crate) writer: &'static names::Writer,
    /// The journal's directory, resolved (what the export marks name).
    pub(crate) home: String,
    pub(crate) dirs: Vec<String>,
    pub(crate) index: Vec<usize>,
}

/// The [`Plan`] of a replacement of `entries` whose journal goes to `dir`. Files that no
/// writer of the list in `names.rs` replaces together are refused: recovery would refuse
/// their journal.
pub(crate) fn plan_journal(dir: &Path, entries: &[Entry]) -> Result<Plan> {
    let files: Vec<(&str, bool)> = entries.iter().map(|e| (e.name.as_str(), e.named)).collect();
    let writer = names::writer_of(&files).ok_or_else(|| {
        let list: Vec<&str> = files.iter().map(|f| f.0).collect();
        anyhow!(
            "{}: {} are not the files of one result sresim writes (outdir's names.rs lists them)",
            dir.display(),
            list.join(", ")
        )
    })?;
    let canonical = |d: &Path| {
        std::fs::canonicalize(d).map_err(|e| anyhow!("{}: cannot resolve: {e}", d.display()))
    };
    let home = canonical(dir)?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut index = Vec::with_capacity(entries.len());
    for e in entries {
        if e.dir == dir {
            index.push(0);
            continue;
        }
        let c = canonical(&e.dir)?;
        if c == home {
            index.push(0);
        } else if let Some(i) = dirs.iter().position(|d| *d == c) {
            index.push(i + 1);
        } else {
            dirs.push(c);
            index.push(dirs.len());
        }
    }
    let resolved: Vec<(&Path, &str, bool, usize)> = entries
        .iter()
        .zip(&index)
        .map(|(e, &i)| (e.dst.as_path(), e.name.as_str(), e.named, i))
        .collect();
    apart(writer, &resolved)?;
    if dirs.len() > writer.export_dirs.min(MAX_EXPORT_DIRS) {
        bail!(
            "{}: the files of one {} result lie in {} directories besides this one",
            dir.display(),
            writer.name,
            dirs.len()
        );
    }
    let dirs = dirs
        .into_iter()
        .map(|d| {
            d.to_str()
                .filter(|s| !s.contains('\n'))
                .map(String::from)
                .ok_or_else(|| anyhow!("{}: not a path sresim can write", d.display()))
        })
        .collect::<Result<Vec<_>>>()?;
    let home = home
        .to_str()
        .filter(|s| !s.contains('\n'))
        .map(String::from)
        .ok_or_else(|| anyhow!("{}: not a path sresim can write", home.display()))?;
    Ok(Plan {
        writer,
        home,
        dirs,
        index,
    })
}

/// [`crate::sets::apart`] for the outputs a command is about to write, before it computes them
/// (`memory`: its reports, lists and trace): `files` (directory, name, named by the
/// user); the directories must exist. The same check runs again when they are committed.
pub fn check_apart(writer: &str, files: &[(&Path, &str, bool)]) -> Result<()> {
    let w = names::writer(writer).ok_or_else(|| anyhow!("{writer}: not a writer of names.rs"))?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut paths = Vec::with_capacity(files.len());
    let mut index = Vec::with_capacity(files.len());
    for (d, name, _) in files {
        let shown = if d.as_os_str().is_empty() {
            Path::new(".")
        } else {
            d
        };
        let c = std::fs::canonicalize(shown)
            .map_err(|e| anyhow!("{}: cannot resolve: {e}", shown.display()))?;
        index.push(match dirs.iter().position(|x| *x == c) {
            Some(i) => i,
            None => {
                dirs.push(c);
                dirs.len() - 1
            }
        });
        paths.push(d.join(name));
    }
    let resolved: Vec<(&Path, &str, bool, usize)> = files
        .iter()
        .zip(&paths)
        .zip(&index)
        .map(|(((_, n, named), p), &i)| (p.as_path(), *n, *named, i))
        .collect();
    apart(w, &resolved)
}

/// The text of the journal of `plan` (see [`crate::recover`] for its format): the old
/// links of `olds` are those of the files, by N.
pub(crate) fn journal_text(plan: &Plan, entries: &[Entry], olds: &[Option<u64>]) -> String {
    let mut text = format!(
        "{JOURNAL_FORMAT}\nwriter {}\npid {}\n",
        plan.writer.name,
        std::process::id()
    );
    for d in &plan.dirs {
        text += &format!("dir {d}\n");
    }
    for ((e, i), o) in entries.iter().zip(&plan.index).zip(olds) {
        let old = o.map_or("-".to_string(), |n| n.to_string());
        text += &format!("file {i} {} {old} {}\n", e.serial, e.name);
    }
    text
}

/// Writes the journal of `plan` to a temporary, syncs it and renames it to [`JOURNAL`]
/// in `dir`; returns its path.
pub(crate) fn write_journal(
    dir: &Path,
    plan: &Plan,
    entries: &[Entry],
    olds: &[Option<u64>],
) -> Result<PathBuf> {
    let text = journal_text(plan, entries, olds);
    write_small(dir, JOURNAL, &text)
}

/// The text of the export mark naming the journal's directory `home`, and the file a
/// user named in the marked directory.
pub(crate) fn mark_text(home: &str, named: Option<&str>) -> String {
    let mut text = format!("{EXPORT_MARK_FORMAT}\njournal {home}\n");
    if let Some(n) = named {
        text += &format!("file {n}\n");
    }
    text
}

/// Writes the export mark naming `home` (and `named`) into `dir` (a temporary, synced,
/// renamed into place); returns its path.
fn write_mark(dir: &Path, home: &str, named: Option<&str>) -> Result<PathBuf> {
    write_small(dir, EXPORT_MARK, &mark_text(home, named))
}

/// Writes `text` as the file `name` (a dot-file of sresim's) in `dir`: to a temporary,
/// synced, renamed into place, the directory synced; returns its path.
fn write_small(dir: &Path, name: &str, text: &str) -> Result<PathBuf> {
    let path = dir.join(name);
    let cannot = |e: std::io::Error| anyhow!("{}: cannot write: {e}", path.display());
    let (p, _, mut f) = new_scratch(dir, name.trim_start_matches('.'), "tmp", |p| {
        File::options().write(true).create_new(true).open(p)
    })
    .map_err(cannot)?;
    let mut tmp = Scratch(vec![p]);
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(cannot)?;
    kill_point();
    std::fs::rename(&tmp.0[0], &path).map_err(cannot)?;
    tmp.0.clear();
    sync_dir(dir);
    kill_point();
    Ok(path)
}

/// A point of the commit sequence where a kill leaves a state of its own: the journal's
/// or a mark's temporary written, either renamed into place, each rename, each mark
/// removed. In the unit tests the thread stops at the chosen one as a kill would, every
/// file left as it is ([`tests::KILL_AT`]); elsewhere nothing.
fn kill_point() {
    #[cfg(test)]
    {
        let n = tests::PASSED.with(|c| {
            let n = c.get();
            c.set(n + 1);
            n
        });
        if tests::KILL_AT.with(|c| c.get()) == Some(n) {
            tests::KILLED.with(|c| c.set(true));
            std::panic::resume_unwind(Box::new(tests::Killed));
        }
    }
}

/// A destination must be absent or a regular file. A directory, a FIFO, a device or a
/// socket is refused, and so is a symbolic link: the rename would replace the link, not
/// the file it names.
fn check_destination(p: &Path) -> Result<()> {
    let kind = match std::fs::symlink_metadata(p) {
        Ok(m) => Some(m.file_type()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => bail!("{}: cannot read: {e}", p.display()),
    };
    destination_kind(p, kind.map(Kind::of)).map_err(anyhow::Error::msg)
}

#[cfg(test)]
pub(crate) mod tests {
    thread_local! {
        /// A replacement of several files stops after this many renames, leaving its
        /// journal, temporaries and links, as a kill would.
        pub(crate) static LEAVE_AFTER: std::cell::Cell<Option<usize>> =
            const { std::cell::Cell::new(None) };
        /// The kill point ([`super::kill_point`]) at which a replacement on this thread
        /// stops (unwinding with [`Killed`], its scratch files kept), counted from 0 in
        /// [`PASSED`].
        pub(crate) static KILL_AT: std::cell::Cell<Option<usize>> =
            const { std::cell::Cell::new(None) };
        pub(crate) static PASSED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        /// Set at the kill: scratch files are no longer removed when dropped.
        pub(crate) static KILLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// The unwinding of a killed replacement.
    pub(crate) struct Killed;
}

#[cfg(test)]
mod append_tests;
