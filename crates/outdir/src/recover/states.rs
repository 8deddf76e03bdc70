//! The states a journal's files can be in while it is there, and the ones no writer and no
//! killed recovery leaves (docs/errors.md, "What recovery may touch"). While its journal
//! exists a writer has made every temporary and old link it names (links before the
//! journal), renames the temporaries in the journal's line order, and removes its links
//! only after the journal; recovery renames in the same order and removes the journal
//! before the links. So the temporaries gone are the first lines' and every recorded old
//! link is there. A journal whose files say otherwise (one file of a set renamed alone, a
//! `pid` or two names edited in a real journal) is refused, nothing touched: completing it
//! would replace one file of a result alone, or unmark a set a kill left mixed.

use crate::names::{number, scratch_name};
use std::path::Path;

/// One line of a journal as recovery found it: the directory of its file, its name, the
/// N of its temporary and of its old link, and whether each is there.
pub(super) struct Line<'a> {
    pub(super) dir: &'a Path,
    pub(super) name: &'a str,
    pub(super) tmp: u64,
    pub(super) old: Option<u64>,
    pub(super) tmp_there: bool,
    pub(super) old_there: bool,
}

/// Refuses (the reason) a journal of process `pid` whose files, as recovery found them
/// (`lines`, in the journal's order), are in a state its writer and a killed recovery
/// never leave.
pub(super) fn consistent(pid: u32, lines: &[Line]) -> Result<(), String> {
    let tmp_of = |k: usize| {
        let l = &lines[k];
        l.dir.join(scratch_name(l.name, "tmp", pid, l.tmp))
    };
    // Renamed in the journal's order: the temporaries gone are those of its first lines.
    if let Some(k) = lines.iter().position(|l| l.tmp_there) {
        if let Some(j) = (k..lines.len()).find(|&j| !lines[j].tmp_there) {
            return Err(format!(
                "{} is there while {}, after it in the journal, is gone: a writer renames its temporaries in the journal's order",
                tmp_of(k).display(),
                tmp_of(j).display()
            ));
        }
    }
    // Every recorded old link stays as long as the journal.
    for l in lines {
        if let (Some(n), false) = (l.old, l.old_there) {
            return Err(format!(
                "{}: the old link it records for {} is gone (a writer removes its links only after its journal)",
                l.dir.join(scratch_name(l.name, "old", pid, n)).display(),
                l.name
            ));
        }
    }
    // A temporary gone is one renamed over its destination, which then is no longer the
    // file its old link keeps: a destination still that file (one inode) had its
    // temporary removed by hand (a kill's dot files deleted), not renamed; completing the
    // journal would remove the links, the only copy of the old files, and unmark a set the
    // kill left mixed.
    #[cfg(unix)]
    for l in lines.iter().filter(|l| !l.tmp_there && l.old_there) {
        use std::os::unix::fs::MetadataExt;
        let Some(n) = l.old else { continue };
        let link = l.dir.join(scratch_name(l.name, "old", pid, n));
        let dest = l.dir.join(l.name);
        let id = |p: &Path| {
            std::fs::symlink_metadata(p)
                .ok()
                .map(|m| (m.dev(), m.ino()))
        };
        if id(&dest).is_some() && id(&dest) == id(&link) {
            return Err(format!(
                "{} is still the file its old link {} keeps, though its temporary is gone: the temporary was removed, not renamed, and the journal can no longer be completed (check the directory's files)",
                dest.display(),
                link.display()
            ));
        }
    }
    // A temporary of one of its names that is not its own, where its own is gone: the
    // journal of a writer whose `pid` or names were edited. A temporary left by a writer
    // killed before its journal (never removed: a dot file) may lie there too, so with
    // some temporary or link of the journal's own still there only a temporary of its pid
    // under another line's N refuses it (two names swapped); with none (it would rename
    // nothing and holds no link) any other temporary of its names does.
    let evidence = lines.iter().any(|l| l.tmp_there || l.old_there);
    for (k, l) in lines.iter().enumerate().filter(|(_, l)| !l.tmp_there) {
        let Ok(list) = std::fs::read_dir(l.dir) else {
            continue;
        };
        let prefix = format!(".{}.tmp.", l.name);
        let mut names: Vec<String> = list
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.starts_with(&prefix))
            .collect();
        names.sort();
        for name in names {
            let Some((p, n)) = name
                .strip_prefix(&prefix)
                .and_then(|rest| rest.split_once('.'))
                .and_then(|(p, n)| Some((number(p)?, number(n)?)))
            else {
                continue;
            };
            let swapped = p == u64::from(pid) && lines.iter().any(|g| g.tmp == n);
            if !evidence || swapped {
                return Err(format!(
                    "{} is there while the journal's own temporary of {} ({}) is gone, and no writer leaves that: its pid or names are not its writer's",
                    l.dir.join(&name).display(),
                    l.name,
                    tmp_of(k).display()
                ));
            }
        }
    }
    Ok(())
}
