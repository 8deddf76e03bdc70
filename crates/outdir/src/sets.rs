//! The one-set rule (docs/errors.md, "One result set, whole"): a directory holds one
//! command's result, whole. Checked by a first write ([`crate::commit`]) and by the
//! recovery of a journal ([`crate::recover`]) alike, before anything is renamed.

use crate::names;
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// The one check that a result set stays whole across commands (docs/errors.md, "One
/// result set, whole"): `dir/name` (shown as `dst`) is about to be replaced.
///
/// - A file written `alone` (one the user named on its own, `--dump-trace` or
///   `--float-logits`, or the one file of a replacement outside a command's own output
///   directory, `plot --out`) may not take a name of a writer's set (names.rs) in a
///   directory that holds another file of that set: it would replace one file of that
///   result and leave the others (an SVG as the points.csv beside a sweep's sweep.json).
///   The command's own set replacing one of its files in its own output directory
///   (`sweep` appending a point) is not alone.
/// - A file of a set of `writer` (a replacement of several files) may not go into a
///   directory holding a file that only another writer lists, when the two sets share a
///   name (`run` and `accuracy`: summary.json; `sweep` and `search`: points.csv): the
///   directory would hold one command's layers.csv beside another's summary.json. A set
///   that shares no name with the one there (`memory -o` a run's directory) mixes nothing.
pub(crate) fn one_set(
    dir: &Path,
    name: &str,
    dst: &Path,
    alone: bool,
    writer: Option<&names::Writer>,
) -> Result<()> {
    let owners: Vec<&names::Writer> = match (alone, writer) {
        (true, _) => names::WRITERS.iter().filter(|w| w.lists(name)).collect(),
        (false, Some(w)) if w.lists(name) => vec![w],
        _ => return Ok(()),
    };
    if owners.is_empty() {
        return Ok(());
    }
    let shown = match dir.as_os_str().is_empty() {
        true => Path::new("."),
        false => dir,
    };
    let here = match std::fs::read_dir(shown) {
        Ok(r) => r,
        // The staging reports a directory that cannot be written.
        Err(_) => return Ok(()),
    };
    let here: Vec<String> = here
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != name && names::plain(n))
        .collect();
    match (alone, writer) {
        (true, _) => {
            for w in owners {
                if let Some(other) = here.iter().find(|n| w.lists(n)) {
                    bail!(
                        "{}: is a file of the result `{}` writes together, and {} holds that result ({other}): written alone it would leave a mixed set; name another file",
                        dst.display(),
                        w.name,
                        shown.display()
                    );
                }
            }
        }
        (false, Some(w)) => {
            for v in names::WRITERS.iter().filter(|v| v.name != w.name) {
                let Some(shared) = w.files.iter().find(|f| !f.contains('*') && v.lists(f)) else {
                    continue;
                };
                if let Some(other) = here.iter().find(|n| v.lists(n) && !w.lists(n)) {
                    bail!(
                        "{}: holds the result of `{}` ({other}), which shares {shared} with the result of `{}`: writing it there would leave a mixed set; choose another directory, or remove that result first",
                        shown.display(),
                        v.name,
                        w.name
                    );
                }
            }
        }
        (false, None) => {}
    }
    Ok(())
}

/// One file of a replacement as the one-set rules see it: its directory (as given), its
/// name, its path as messages show it, whether it is written alone (the file the user
/// named), the number of its directory in the replacement (0: the journal's; equal
/// numbers are one directory, resolved), and whether it is still to be renamed.
pub(crate) struct SetFile<'a> {
    pub(crate) dir: &'a Path,
    pub(crate) name: &'a str,
    pub(crate) dst: PathBuf,
    pub(crate) alone: bool,
    pub(crate) index: usize,
    pub(crate) pending: bool,
}

/// The one-set rules of a replacement of `files` (of `writer`'s set, None for one file
/// written on its own), the one place a first write ([`crate::commit`]) and the recovery
/// of its journal ([`crate::recover`]) check them, each directory as the first write
/// did (docs/errors.md, "One result set, whole", "What recovery may touch"):
/// [`one_set`] for every file still to be renamed (the file written alone against every
/// writer's set, the writer's own names included: a recorded directory holding another
/// result of the same writer is no place for one of its files alone); and for a writer
/// that exports part of its set ([`names::Writer::exports`]), [`export_apart`] in the
/// directory of those files when it is not the result's, and [`reports_apart`] in the
/// result's directory (0, when the replacement holds a report there) when the exports lie
/// elsewhere.
pub(crate) fn whole(writer: Option<&names::Writer>, files: &[SetFile]) -> Result<()> {
    for f in files.iter().filter(|f| f.pending) {
        let w = writer.filter(|_| !f.alone);
        one_set(f.dir, f.name, &f.dst, f.alone, w)?;
    }
    let Some(w) = writer.filter(|w| !w.exports.is_empty()) else {
        return Ok(());
    };
    let exported = |f: &&SetFile| !f.alone && w.exports.contains(&f.name);
    let report = |f: &&SetFile| !f.alone && !w.exports.contains(&f.name);
    let result = files.iter().find(|f| f.index == 0 && report(f));
    let lists = files.iter().find(exported);
    if let Some(l) = lists {
        let pending = files.iter().filter(exported).any(|f| f.pending);
        if pending && result.is_none_or(|r| r.index != l.index) {
            export_apart(l.dir, None, w.name, w.exports)?;
        }
    }
    if let Some(r) = result {
        let pending = files.iter().filter(report).any(|f| f.pending);
        if pending && lists.is_none_or(|l| l.index != r.index) {
            reports_apart(r.dir, None, w.name, w.exports)?;
        }
    }
    Ok(())
}

/// The one-set rule for the files `writer` exports to a directory besides its own output
/// directory (`memory --dump-access-list DIR`: `files`, its two lists) (docs/errors.md,
/// "One result set, whole"): they may go to `dir` only when `dir` holds no result of
/// `writer` (its anchor), or when `dir` is the command's own `out` (resolved), where its
/// whole set is replaced together. Otherwise they would replace those files of another
/// result and leave its reports beside them. Checked with `dir` locked, before anything is
/// staged.
pub fn export_apart(dir: &Path, out: Option<&Path>, writer: &str, files: &[&str]) -> Result<()> {
    if out.is_some_and(|o| same_dir(o, dir)) {
        return Ok(());
    }
    let (w, shown) = writer_in(writer, dir)?;
    if std::fs::symlink_metadata(shown.join(w.anchor)).is_ok() {
        bail!(
            "{}: holds a result of `{}` ({}): {} written there apart from it would leave a mixed set; write them with that result (--out {0}), or choose another directory",
            shown.display(),
            w.name,
            w.anchor,
            files.join(" and ")
        );
    }
    Ok(())
}

/// The other half of [`export_apart`]: the reports of `writer` go to `out` without the
/// files it exports (`files`, written to `lists`, another directory or none). When `out`
/// holds those files written apart from any result of `writer` (no anchor: an earlier
/// `--dump-access-list out` alone), the reports beside them would read as one set made by
/// two commands; refused. Beside an anchor they belong to the result being replaced, and
/// go with it.
pub fn reports_apart(out: &Path, lists: Option<&Path>, writer: &str, files: &[&str]) -> Result<()> {
    if lists.is_some_and(|l| same_dir(l, out)) {
        return Ok(());
    }
    let (w, shown) = writer_in(writer, out)?;
    if std::fs::symlink_metadata(shown.join(w.anchor)).is_ok() {
        return Ok(());
    }
    if let Some(f) = files
        .iter()
        .find(|f| std::fs::symlink_metadata(shown.join(f)).is_ok())
    {
        bail!(
            "{}: holds {f}, written apart from a result of `{}`: the reports written beside it would read as one set with it; write the lists with them (--dump-access-list {0}), or choose another directory",
            shown.display(),
            w.name,
        );
    }
    Ok(())
}

/// Writer `writer` of names.rs, and `dir` as a message shows it (`.` for the empty path).
fn writer_in<'a>(writer: &str, dir: &'a Path) -> Result<(&'static names::Writer, &'a Path)> {
    let Some(w) = names::writer(writer) else {
        bail!("internal error: no writer {writer} in names.rs");
    };
    let shown = match dir.as_os_str().is_empty() {
        true => Path::new("."),
        false => dir,
    };
    Ok((w, shown))
}

/// Whether `a` and `b` name one directory (compared resolved, as [`crate::OutputDir::open_all`]
/// merges them).
pub fn same_dir(a: &Path, b: &Path) -> bool {
    resolved_key(a) == resolved_key(b)
}

/// `path` resolved as far as it exists (its deepest existing ancestor made canonical, the
/// rest appended): the key [`crate::OutputDir::open_all`] orders and merges directories by.
pub(crate) fn resolved_key(path: &Path) -> PathBuf {
    let path = match path.as_os_str().is_empty() {
        true => Path::new("."),
        false => path,
    };
    for base in path.ancestors() {
        let shown = match base.as_os_str().is_empty() {
            true => Path::new("."),
            false => base,
        };
        if let Ok(c) = std::fs::canonicalize(shown) {
            // The part that does not exist holds no link: `..` there is lexical.
            let mut key = c;
            for part in path
                .strip_prefix(base)
                .unwrap_or(Path::new(""))
                .components()
            {
                match part {
                    std::path::Component::ParentDir => {
                        key.pop();
                    }
                    std::path::Component::Normal(n) => key.push(n),
                    _ => {}
                }
            }
            return key;
        }
    }
    path.to_path_buf()
}

/// The one check that the outputs of one command are apart: `files` (the path as the
/// user gave it, the name, named by the user, the directory's number: equal numbers are
/// one directory, resolved). Two files at one path would leave one of them lost (the
/// rename of the second replaces the first); and a file the user named (`--dump-trace`)
/// must not take a name of the set `writer` replaces together in a directory where that
/// set is written (memory_summary.json, access_list.csv, memory_layers.parquet, ...): the
/// set owns those names there (a later run of it replaces or removes them).
pub(crate) fn apart(writer: &names::Writer, files: &[(&Path, &str, bool, usize)]) -> Result<()> {
    for (k, (p, name, named, dir)) in files.iter().enumerate() {
        if files[..k].iter().any(|f| f.1 == *name && f.3 == *dir) {
            bail!(
                "{}: two outputs of one command resolve to this path (one would be lost): name another file",
                p.display()
            );
        }
        let set_here = files.iter().any(|f| !f.2 && f.3 == *dir);
        if *named && set_here && writer.lists(name) {
            bail!(
                "{}: is one of the files `{}` writes together in that directory (two outputs of one command at one path): name another file",
                p.display(),
                writer.name
            );
        }
    }
    Ok(())
}
