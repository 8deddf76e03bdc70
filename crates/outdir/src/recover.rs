//! The roll-forward of a replacement a killed process left half done, and what it may
//! touch. A journal is data, never an instruction: it is read as a description of one
//! replacement its writer could have made, checked whole against that, and refused with
//! one line, nothing touched, when any part of it is not (docs/errors.md, "Output
//! directories").
//!
//! The journal `.sresim-commit`, one item a line:
//!
//! ```text
//! sresim-commit 2
//! writer memory                 one of names::WRITERS
//! pid 4242                      the writer's process id
//! dir /abs/path/of/exports      0 to 2 lines: directories besides the journal's
//! file 0 17 18 memory_summary.json
//! file 1 19 - trace.txt         directory (0: the journal's, i: the i-th `dir`),
//!                               N of the temporary, N of the old link or -, the name
//! ```
//!
//! A journal never names a file to delete: recovery removes nothing but its own temporaries'
//! old links and marks.
//!
//! Recovery touches only, in the journal's directory or in a recorded directory, a file
//! NAME its writer replaces (names.rs; or the one file a user named, for `memory`), its
//! temporary `.NAME.tmp.PID.N` (renamed over NAME) and its old link `.NAME.old.PID.N`
//! (removed), PID the journal's. A recorded
//! directory must be absolute and already
//! resolved (no `.`, `..`, doubled or trailing `/` or symbolic link in it, written as a
//! writer prints it) and not the journal's own. Before anything is renamed, every
//! destination passes the check of a first write (absent or a regular file: never a
//! link, directory, FIFO or device) and, in each directory, the one-set rules its first
//! write applied there (`sets::whole` with the journal's writer: the user-named file of
//! `memory`, read from where it lies, as a file written alone; the lists and the reports
//! apart); a journal names two files or more (no writer journals one); its files must be
//! in a state its writer or a killed recovery leaves (states.rs: the temporaries gone
//! are its first lines', every recorded old link is there, no other temporary of its
//! names stands where its own is gone); every temporary and link that is there must be a regular file. On Unix every step works on the directories opened once, so a name
//! swapped for a link in between cannot redirect it. A recorded directory is touched
//! only when it holds the mark `.sresim-commit-export` naming the journal's directory
//! (a writer leaves it before any rename), and its user-named file only when the mark
//! records that name. A recorded directory without it while a temporary of the journal
//! waits there is what a writer killed between its journal and its last mark leaves: with
//! every temporary of the journal still there (nothing renamed yet) the replacement is
//! rolled back ([`roll_back`]: its temporaries and links removed by exact name, in its own
//! and its marked directories only); otherwise the journal is refused. A recorded
//! directory without it and nothing left to rename there is left alone. After the
//! renames, that mark is removed; a directory holding a mark is refused by [`recover`]
//! itself (only the journal's directory can complete it), and by every writer
//! ([`unfinished`], called where each file is staged), its mark left as it is.
#![allow(clippy::disallowed_methods)] // this crate is the one allowed writer

use crate::marks::{
    destination_kind, Kind, EXPORT_MARK, EXPORT_MARK_FORMAT, JOURNAL, JOURNAL_FORMAT,
};
use crate::names::{self, number, scratch_name, Writer};
use anyhow::{anyhow, bail, Result};
use std::path::{Component, Path, PathBuf};

/// Largest journal [`recover`] reads (it names a handful of files).
const MAX_JOURNAL_BYTES: u64 = 1 << 20;

/// A journal, parsed and checked against what its writer could have written.
#[derive(Debug, PartialEq)]
struct Journal {
    writer: &'static Writer,
    pid: u32,
    dirs: Vec<PathBuf>,
    files: Vec<File>,
}

#[derive(Debug, PartialEq)]
struct File {
    dir: usize,
    tmp: u64,
    old: Option<u64>,
    name: String,
    /// The one file the user named (`memory --dump-trace`), written alone.
    alone: bool,
}

/// Completes the replacement whose journal `dir` holds (a process killed between its
/// renames): every temporary the journal names that is still there is renamed over its
/// destination, then the journal is removed, then the old links. Nothing to do without a
/// journal; a journal that names anything its writer could not have made, or whose files
/// are in a state no writer leaves (states.rs), is refused, nothing touched. Call it holding the directory's lock.
pub fn recover(dir: &Path) -> Result<()> {
    marked(dir)?;
    let path = dir.join(JOURNAL);
    let m = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => bail!("{}: cannot read: {e}", path.display()),
    };
    let refuse = |why: String| {
        anyhow!(
            "{}: refused, nothing changed: {why}; it is not a journal sresim wrote: check the directory's files and remove it",
            path.display()
        )
    };
    if !m.is_file() || m.len() > MAX_JOURNAL_BYTES {
        return Err(refuse("not a regular file of at most 1 MiB".into()));
    }
    // Only the user whose command was killed completes its replacement: the journal and
    // every temporary it renames are that user's files (a writer makes them itself), so
    // files someone else planted, in this directory or in one a journal records, are
    // never moved over another user's (docs/errors.md, "What recovery may touch").
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if m.uid() != me() {
            return Err(not_mine(&path, format!("owned by user {}", m.uid()), me()));
        }
    }
    let text = std::fs::read_to_string(&path).map_err(|e| refuse(e.to_string()))?;
    let journal = parse(&text).map_err(refuse)?;
    let home = Dir::open(dir, false).map_err(|e| refuse(format!("{}: {e}", dir.display())))?;
    let resolved_home =
        std::fs::canonicalize(dir).map_err(|e| refuse(format!("{}: {e}", dir.display())))?;
    // A writer records as directory 0, never by its path, the directory its journal is in.
    if let Some(d) = journal.dirs.iter().find(|d| **d == resolved_home) {
        return Err(refuse(format!(
            "dir {}: the journal's own directory (its files are directory 0)",
            d.display()
        )));
    }
    // No two files at one path, and the file the user named under no name of the set in a
    // directory the set is written to: `apart`, as the first write checked it.
    let shown: Vec<PathBuf> = journal
        .files
        .iter()
        .map(|f| match f.dir {
            0 => dir.join(&f.name),
            i => journal.dirs[i - 1].join(&f.name),
        })
        .collect();
    let at: Vec<(&Path, &str, bool, usize)> = journal
        .files
        .iter()
        .zip(&shown)
        .map(|(f, p)| (p.as_path(), f.name.as_str(), f.alone, f.dir))
        .collect();
    crate::sets::apart(journal.writer, &at).map_err(|e| refuse(e.to_string()))?;
    let mut dirs = vec![home];
    for d in &journal.dirs {
        dirs.push(Dir::open(d, true).map_err(|e| refuse(format!("{}: {e}", d.display())))?);
    }
    // The mark of each recorded directory, when it is this journal's: a writer marks every
    // directory of its exports before the first rename, so a temporary is renamed into a
    // recorded directory only when it holds the mark naming this journal's directory, and
    // a file the user named there only when the mark records that name. A directory
    // without it has nothing of this journal to complete (its mark is removed only after
    // the last rename), so nothing in it is touched; a journal that would rename into it
    // is not one sresim wrote.
    let marks: Vec<Option<Mark>> = dirs
        .iter()
        .map(|d| d.read_mark().filter(|m| m.home == resolved_home))
        .collect();
    // Every check before the first rename.
    let mut steps = Vec::with_capacity(journal.files.len());
    for f in &journal.files {
        let d = &dirs[f.dir];
        let tmp = scratch_name(&f.name, "tmp", journal.pid, f.tmp);
        let old = f.old.map(|n| scratch_name(&f.name, "old", journal.pid, n));
        let dst_kind = d.kind(&f.name).map_err(&refuse)?;
        destination_kind(&d.path.join(&f.name), dst_kind).map_err(&refuse)?;
        let mark = marks[f.dir].as_ref();
        if f.dir > 0 && !journal.writer.lists(&f.name) {
            if let Some(m) = mark.filter(|m| m.file.as_deref() != Some(f.name.as_str())) {
                return Err(refuse(format!(
                    "{}: its mark records {} as the file named by the user, not {}",
                    d.path.join(EXPORT_MARK).display(),
                    m.file.as_deref().unwrap_or("no file"),
                    f.name
                )));
            }
        }
        let tmp_there = match d.kind(&tmp).map_err(&refuse)? {
            None => false,
            Some(Kind::File) => {
                d.check_owner(&tmp).map_err(|o| not_mine(&path, o, me()))?;
                true
            }
            Some(_) => {
                return Err(refuse(format!(
                    "{}: not a regular file",
                    d.path.join(&tmp).display()
                )))
            }
        };
        let old_there = match &old {
            None => false,
            Some(o) => match d.kind(o).map_err(&refuse)? {
                None => false,
                Some(Kind::File) => {
                    d.check_owner(o).map_err(|w| not_mine(&path, w, me()))?;
                    true
                }
                Some(_) => {
                    return Err(refuse(format!(
                        "{}: not a regular file",
                        d.path.join(o).display()
                    )))
                }
            },
        };
        steps.push(Step {
            d,
            index: f.dir,
            alone: f.alone,
            marked: f.dir == 0 || mark.is_some(),
            tmp: tmp_there.then_some(tmp),
            old: old.filter(|_| old_there),
            name: &f.name,
        });
    }
    // A recorded directory without this journal's mark where a temporary of it waits: the
    // writer was killed before it had marked every directory (it writes the journal, then
    // the marks, then renames), or the journal is not one it wrote. With every temporary
    // still there, nothing was renamed yet: the replacement is rolled back.
    if let Some(s) = steps.iter().find(|s| !s.marked && s.tmp.is_some()) {
        if steps.iter().all(|s| s.tmp.is_some()) {
            return roll_back(&path, &dirs, &marks, &steps);
        }
        return Err(refuse(format!(
            "{}: holds no mark {EXPORT_MARK} naming {} (a writer marks each directory of its exports before renaming into it)",
            s.d.path.display(),
            resolved_home.display()
        )));
    }
    // A state no writer and no killed recovery leaves (one file renamed alone, a `pid` or
    // names edited): refused (states.rs).
    let lines: Vec<states::Line> = journal
        .files
        .iter()
        .zip(&steps)
        .map(|(f, s)| states::Line {
            dir: &s.d.path,
            name: &f.name,
            tmp: f.tmp,
            old: f.old,
            tmp_there: s.tmp.is_some(),
            old_there: s.old.is_some(),
        })
        .collect();
    states::consistent(journal.pid, &lines).map_err(&refuse)?;
    // Nothing of this journal's to complete in an unmarked directory: its old links stay
    // (dot files).
    steps.retain(|s| s.marked);
    // The one-set rule of a first write (`sets::one_set`), for every file about to be
    // renamed: a journal's set may not replace one file of another command's result (the
    // user-named file of `memory` is written alone; a file of the writer's set may not go
    // where a writer sharing a name with it holds a result). The writer's own other files
    // beside it are its own result, replaced.
    let files: Vec<crate::sets::SetFile> = steps
        .iter()
        .map(|s| crate::sets::SetFile {
            dir: &s.d.path,
            name: s.name,
            dst: s.d.path.join(s.name),
            alone: s.alone,
            index: s.index,
            pending: s.tmp.is_some(),
        })
        .collect();
    crate::sets::whole(Some(journal.writer), &files).map_err(|e| refuse(e.to_string()))?;
    for Step { d, tmp, name, .. } in &steps {
        if let Some(tmp) = tmp {
            d.rename(tmp, name)
                .map_err(|e| anyhow!("{}: cannot replace: {e}", d.path.join(name).display()))?;
        }
    }
    for d in &dirs {
        d.sync();
    }
    // The journal goes before the links, as a writer's does: while it is there every link
    // it records is (states.rs), and a recovery killed in between leaves dot files only.
    finish(&path, &dirs, &marks)?;
    for Step { d, old, .. } in &steps {
        if let Some(o) = old {
            let _ = d.unlink(o);
        }
    }
    for d in &dirs {
        d.sync();
    }
    Ok(())
}

/// One file of a journal as recovery found it: its directory, whether that directory is
/// the journal's or holds its mark, its temporary and old link where they are.
struct Step<'a> {
    d: &'a Dir,
    index: usize,
    alone: bool,
    marked: bool,
    tmp: Option<String>,
    old: Option<String>,
    name: &'a str,
}

/// Rolls back the replacement of the journal at `path`, killed before its first rename
/// (every temporary still there): its temporaries and old links are removed, each by the
/// exact name the journal gives it, in the journal's directory and in the recorded
/// directories that hold its mark; in a recorded directory without the mark nothing is
/// touched (its temporaries stay, dot files sresim never reads). The destinations keep
/// their old content. The marks and the journal go first: a recovery killed before the
/// journal went finds every temporary still there and rolls back again; one killed after
/// leaves only dot files.
fn roll_back(path: &Path, dirs: &[Dir], marks: &[Option<Mark>], steps: &[Step]) -> Result<()> {
    finish(path, dirs, marks)?;
    for s in steps.iter().filter(|s| s.marked) {
        for n in s.tmp.iter().chain(&s.old) {
            let _ = s.d.unlink(n);
        }
    }
    for d in dirs {
        d.sync();
    }
    Ok(())
}

/// The end of a recovery: the marks of the recorded directories, each only if it names
/// this journal's directory (a mark naming another is another replacement's), then the
/// journal at `path`.
fn finish(path: &Path, dirs: &[Dir], marks: &[Option<Mark>]) -> Result<()> {
    for (d, m) in dirs.iter().zip(marks).skip(1) {
        if m.is_some() {
            let _ = d.unlink(EXPORT_MARK);
            d.sync();
        }
    }
    dirs[0].sync();
    dirs[0]
        .unlink(JOURNAL)
        .map_err(|e| anyhow!("{}: cannot remove: {e}", path.display()))?;
    dirs[0].sync();
    Ok(())
}

/// Refuses to write into `dir` while it holds the journal or the mark of an unfinished
/// replacement: the check of every writer before it stages a file ([`crate::stage`],
/// [`crate::stage_file`]). A journal there is completed only by a writer that opens the
/// directory itself ([`crate::OutputDir::open`], e.g. its `--out`); a mark, only by the
/// recovery of the directory it names.
pub(crate) fn unfinished(dir: &Path) -> Result<()> {
    let dir = match dir.as_os_str().is_empty() {
        true => Path::new("."),
        false => dir,
    };
    marked(dir)?;
    let journal = dir.join(JOURNAL);
    if std::fs::symlink_metadata(&journal).is_ok() {
        bail!(
            "{}: {} holds an unfinished replacement of its files: a command that writes {} as its output directory (--out) completes it first; nothing changed",
            journal.display(),
            dir.display(),
            dir.display()
        );
    }
    Ok(())
}

/// Refuses to open `dir` while it holds the mark of an unfinished replacement whose journal
/// is in another directory ([`EXPORT_MARK`]): only a recovery of that directory completes
/// it, and writing here first would mix this directory's files further.
fn marked(dir: &Path) -> Result<()> {
    let path = dir.join(EXPORT_MARK);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(());
    }
    let home = Dir::open(dir, false)
        .ok()
        .and_then(|d| d.read_mark())
        .map(|m| m.home)
        .filter(|h| resolved(h).is_ok())
        // A mark names the directory of another writer's journal: one naming its own
        // directory is no writer's (its advice, to rerun the writer of that directory,
        // would lead back here for ever).
        .filter(|h| std::fs::canonicalize(dir).is_ok_and(|d| d != *h));
    match home {
        Some(h) if h.join(JOURNAL).is_file() => bail!(
            "{}: its files are part of an unfinished replacement whose journal is in {}: run the command that writes {} again (sresim completes it there), then this one",
            path.display(),
            h.display(),
            h.display()
        ),
        Some(h) => bail!(
            "{}: its files are part of a replacement that was not completed, and {} holds no journal of it: check the files of {} and remove the mark",
            path.display(),
            h.display(),
            dir.display()
        ),
        None => bail!(
            "{}: not a mark sresim wrote (expected \"{EXPORT_MARK_FORMAT}\", \"journal DIR\" and at most \"file NAME\"): check the directory's files and remove it",
            path.display()
        ),
    }
}

/// The refusal of the journal at `path` for a file of it that is not the running user's
/// (`owner`: which file, owned by whom).
fn not_mine(path: &Path, owner: String, me: u32) -> anyhow::Error {
    anyhow!(
        "{}: refused, nothing changed: {owner}, not by this user ({me}); only the user whose command left the journal completes it: ask them to run it again, or remove it",
        path.display()
    )
}

/// The running process's effective user id (0 where there are none).
fn me() -> u32 {
    #[cfg(unix)]
    return rustix::process::geteuid().as_raw();
    #[cfg(not(unix))]
    0
}

/// The journal `text`, checked line by line: its format, a writer of the list, its pid,
/// the recorded directories, and files that writer replaces.
fn parse(text: &str) -> Result<Journal, String> {
    let mut lines = text.split_terminator('\n');
    match lines.next() {
        Some(JOURNAL_FORMAT) => {}
        Some(l) if l.starts_with('/') => {
            return Err(format!(
            "written by an earlier sresim (a list of paths; this one writes \"{JOURNAL_FORMAT}\")"
        ))
        }
        _ => return Err(format!("its first line is not \"{JOURNAL_FORMAT}\"")),
    }
    let field = |line: Option<&str>, key: &str| -> Result<String, String> {
        line.and_then(|l| l.strip_prefix(key))
            .and_then(|l| l.strip_prefix(' '))
            .map(String::from)
            .ok_or_else(|| format!("its line \"{key} ...\" is absent"))
    };
    let w = field(lines.next(), "writer")?;
    let writer = names::writer(&w)
        .ok_or_else(|| format!("writer {w:?}: not a command that replaces several files"))?;
    let pid = field(lines.next(), "pid")?;
    let pid = number(&pid)
        .and_then(|p| u32::try_from(p).ok())
        .filter(|&p| p > 0)
        .ok_or_else(|| format!("pid {pid:?}: not a process id"))?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut files: Vec<File> = Vec::new();
    let mut named = 0;
    for line in lines {
        if let Some(d) = line.strip_prefix("dir ") {
            if !files.is_empty() {
                return Err("a \"dir\" line after a \"file\" line".into());
            }
            if dirs.len() >= writer.export_dirs {
                return Err(format!(
                    "dir {d}: a {} journal records at most {} directories besides its own",
                    writer.name, writer.export_dirs
                ));
            }
            let p = PathBuf::from(d);
            resolved(&p).map_err(|why| format!("dir {d}: {why}"))?;
            if dirs.contains(&p) {
                return Err(format!("dir {d}: recorded twice"));
            }
            dirs.push(p);
        } else if let Some(rest) = line.strip_prefix("file ") {
            let mut parts = rest.splitn(4, ' ');
            let (Some(i), Some(t), Some(o), Some(name)) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return Err(format!("file {rest}: not \"file DIR TMP OLD NAME\""));
            };
            let at = format!("file {rest}");
            let dir = number(i)
                .and_then(|i| usize::try_from(i).ok())
                .filter(|&i| i <= dirs.len())
                .ok_or_else(|| format!("{at}: {i} is not a directory of the journal"))?;
            let tmp = number(t).ok_or_else(|| format!("{at}: {t} is not a number"))?;
            let old = match o {
                "-" => None,
                o => Some(number(o).ok_or_else(|| format!("{at}: {o} is not a number or -"))?),
            };
            if !names::plain(name) {
                return Err(format!(
                    "{at}: {name:?} is not a plain file name (no dot first, no /)"
                ));
            }
            if !writer.lists(name) {
                named += 1;
                if !writer.named || named > 1 {
                    return Err(format!(
                        "{at}: {name} is not a file `{}` writes",
                        writer.name
                    ));
                }
            }
            let alone = !writer.lists(name);
            if files.iter().any(|f| f.dir == dir && f.name == name) {
                return Err(format!("{at}: {name} is named twice"));
            }
            // A writer numbers every temporary and link of its process from one counter.
            let taken = |n: u64| files.iter().any(|f| f.tmp == n || f.old == Some(n));
            if let Some(n) = [Some(tmp), old]
                .into_iter()
                .flatten()
                .find(|&n| taken(n))
                .or(old.filter(|&o| o == tmp))
            {
                return Err(format!(
                    "{at}: {n} numbers two of its files (a writer numbers each once)"
                ));
            }
            files.push(File {
                dir,
                tmp,
                old,
                name: name.to_string(),
                alone,
            });
        } else {
            return Err(format!("line {line:?}: not a \"dir\" or \"file\" line"));
        }
    }
    // A writer journals only a replacement of several files (one file is one rename,
    // with no journal): a journal of fewer would replace one file of a result alone.
    match files.len() {
        0 => return Err("it names no file".into()),
        1 => {
            return Err(format!(
            "it names one file ({}), and a writer journals only a replacement of two files or more",
            files[0].name
        ))
        }
        _ => {}
    }
    // Which file the user named, as its writer staged it: its result's files go to the
    // journal's directory; to a recorded directory, only the files it exports, all of
    // them together (memory's two lists), and the file the user named. So a name of the
    // writer's set in a recorded directory without the rest of its exports there is that
    // file, written alone (`--dump-trace V/memory_layers.csv`), and a writer names one.
    for k in 0..files.len() {
        let f = &files[k];
        let whole = writer.exports.contains(&f.name.as_str())
            && writer
                .exports
                .iter()
                .all(|x| files.iter().any(|g| g.dir == f.dir && g.name == *x));
        if f.alone || whole {
            continue;
        }
        let at = format!("file {} {} - {}", f.dir, f.tmp, f.name);
        if f.dir == 0 {
            if writer.exports.contains(&f.name.as_str()) {
                return Err(format!(
                    "{at}: `{}` writes {} together",
                    writer.name,
                    writer.exports.join(" and ")
                ));
            }
            continue;
        }
        if !writer.named || files.iter().any(|g| g.alone) {
            return Err(format!(
                "{at}: {} in a recorded directory is not a file `{}` exports there, and it names one file of its own at most",
                f.name, writer.name
            ));
        }
        files[k].alone = true;
    }
    if files.iter().all(|f| f.dir != 0 || f.alone) {
        return Err(
            "no file of its set lies in the journal's own directory (a writer's journal goes with its set)"
                .into(),
        );
    }
    if let Some(d) = (1..=dirs.len()).find(|&i| files.iter().all(|f| f.dir != i)) {
        return Err(format!(
            "dir {}: no file of the journal lies in it",
            dirs[d - 1].display()
        ));
    }
    Ok(Journal {
        writer,
        pid,
        dirs,
        files,
    })
}

/// A recorded directory: absolute, with no `.` or `..`, and already resolved (no symbolic
/// link on its way: it is its own canonical path).
fn resolved(p: &Path) -> Result<(), String> {
    // Compared as text: `Path` components skip a `.` inside and a doubled or trailing
    // `/`, which a writer never prints (it records the canonical path as it is).
    let rebuilt: PathBuf = p.components().collect();
    if !p.is_absolute()
        || rebuilt.as_os_str() != p.as_os_str()
        || p.components()
            .any(|c| !matches!(c, Component::RootDir | Component::Normal(_)))
    {
        return Err("not an absolute path without . or .. (nor a doubled or trailing /)".into());
    }
    match std::fs::canonicalize(p) {
        Ok(c) if c == p => Ok(()),
        Ok(c) => Err(format!(
            "a symbolic link on its way (it resolves to {})",
            c.display()
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Largest export mark read (two short lines).
const MAX_MARK_BYTES: usize = 4096;

/// An export mark: the directory of its journal, and the file a user named in the marked
/// directory (none in a mark of the first format, which recorded no name).
#[derive(Debug, PartialEq)]
struct Mark {
    home: PathBuf,
    file: Option<String>,
}

impl Dir {
    /// The export mark in it, if it holds a regular file of the mark's format (a link or
    /// anything else is not a mark).
    fn read_mark(&self) -> Option<Mark> {
        if self.kind(EXPORT_MARK).ok()? != Some(Kind::File) {
            return None;
        }
        let text = std::fs::read(self.path.join(EXPORT_MARK)).ok()?;
        if text.len() > MAX_MARK_BYTES {
            return None;
        }
        let text = String::from_utf8(text).ok()?;
        let mut lines = text.split_terminator('\n');
        let named = match lines.next()? {
            EXPORT_MARK_FORMAT => true,
            "sresim-commit-export 1" => false,
            _ => return None,
        };
        let home = PathBuf::from(lines.next()?.strip_prefix("journal ")?);
        let file = match lines.next() {
            None => None,
            Some(l) if named => Some(l.strip_prefix("file ").filter(|n| names::plain(n))?),
            Some(_) => return None,
        };
        lines.next().is_none().then(|| Mark {
            home,
            file: file.map(String::from),
        })
    }
}

/// A directory recovery works in, opened once.
struct Dir {
    path: PathBuf,
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
}

#[cfg(unix)]
impl Dir {
    /// Opens `path` as a directory; with `nofollow`, not through a link at its end.
    fn open(path: &Path, nofollow: bool) -> std::io::Result<Dir> {
        use rustix::fs::{Mode, OFlags};
        let mut flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        if nofollow {
            flags |= OFlags::NOFOLLOW;
        }
        let fd = rustix::fs::open(path, flags, Mode::empty())?;
        Ok(Dir {
            path: path.to_path_buf(),
            fd,
        })
    }

    /// What `name` is in it (None: absent), links not followed.
    fn kind(&self, name: &str) -> Result<Option<Kind>, String> {
        use rustix::fs::{AtFlags, FileType};
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile => Kind::File,
                FileType::Directory => Kind::Dir,
                FileType::Symlink => Kind::Link,
                _ => Kind::Other,
            })),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(format!(
                "{}: cannot read: {}",
                self.path.join(name).display(),
                std::io::Error::from(e)
            )),
        }
    }

    /// Refuses `name` unless the running user owns it: which file, owned by whom.
    fn check_owner(&self, name: &str) -> Result<(), String> {
        let path = self.path.join(name);
        let st = rustix::fs::statat(&self.fd, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| {
                format!(
                    "{}: cannot read: {}",
                    path.display(),
                    std::io::Error::from(e)
                )
            })?;
        match st.st_uid == me() {
            true => Ok(()),
            false => Err(format!("{} is owned by user {}", path.display(), st.st_uid)),
        }
    }

    fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
        Ok(rustix::fs::renameat(&self.fd, from, &self.fd, to)?)
    }

    fn unlink(&self, name: &str) -> std::io::Result<()> {
        Ok(rustix::fs::unlinkat(
            &self.fd,
            name,
            rustix::fs::AtFlags::empty(),
        )?)
    }

    fn sync(&self) {
        let _ = rustix::fs::fsync(&self.fd);
    }
}

#[cfg(not(unix))]
impl Dir {
    fn open(path: &Path, _nofollow: bool) -> std::io::Result<Dir> {
        if !std::fs::symlink_metadata(path)?.is_dir() {
            return Err(std::io::Error::other("not a directory"));
        }
        Ok(Dir {
            path: path.to_path_buf(),
        })
    }

    fn kind(&self, name: &str) -> Result<Option<Kind>, String> {
        let p = self.path.join(name);
        match std::fs::symlink_metadata(&p) {
            Ok(m) => Ok(Some(Kind::of(m.file_type()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: cannot read: {e}", p.display())),
        }
    }

    fn check_owner(&self, _name: &str) -> Result<(), String> {
        Ok(())
    }

    fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
        std::fs::rename(self.path.join(from), self.path.join(to))
    }

    fn unlink(&self, name: &str) -> std::io::Result<()> {
        std::fs::remove_file(self.path.join(name))
    }

    fn sync(&self) {
        crate::marks::sync_dir(&self.path);
    }
}

mod states;
#[cfg(test)]
mod tests;
