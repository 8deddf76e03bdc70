//! The states a journal's files can be in while it is there, and the ones no writer and no
//! killed recovery leaves (docs/errors.md, "What recovery may touch"). While its journal
//! exists a writer has made every temporary and old link it names (links before the
//! journal), renames the temporaries in the journal's line order, and removes its links
//! only after the journal; recovery renames in the same order and removes the journal
//! before the links. So the temporaries gone are the first lines' and every recorded old
//! link is there. A journal whose files say otherwise (one file of a set renamed alone, a
//! `pid` or two names edited in a real journal) is refused, nothing touched: completing it
//! would replace one file of a result alone, or unmark a set a kill left mixed.

use super::{number, Journal, Step};
use crate::names::scratch_name;

/// Refuses (the reason) a journal whose files, as recovery found them (`steps`, one for
/// each of its lines), are in a state its writer and a killed recovery never leave.
pub(super) fn consistent(journal: &Journal, steps: &[Step]) -> Result<(), String> {
    let files = &journal.files;
    let tmp_of = |k: usize| {
        let s = &steps[k];
        s.d.path
            .join(scratch_name(s.name, "tmp", journal.pid, files[k].tmp))
    };
    // Renamed in the journal's order: the temporaries gone are those of its first lines.
    if let Some(k) = steps.iter().position(|s| s.tmp.is_some()) {
        if let Some(j) = (k..steps.len()).find(|&j| steps[j].tmp.is_none()) {
            return Err(format!(
                "{} is there while {}, after it in the journal, is gone: a writer renames its temporaries in the journal's order",
                tmp_of(k).display(),
                tmp_of(j).display()
            ));
        }
    }
    // Every recorded old link stays as long as the journal.
    for (f, s) in files.iter().zip(steps) {
        if let (Some(n), None) = (f.old, &s.old) {
            return Err(format!(
                "{}: the old link it records for {} is gone (a writer removes its links only after its journal)",
                s.d.path
                    .join(scratch_name(&f.name, "old", journal.pid, n))
                    .display(),
                f.name
            ));
        }
    }
    // A temporary of one of its names that is not its own, where its own is gone: the
    // journal of a writer whose `pid` or names were edited. A temporary left by a writer
    // killed before its journal (never removed: a dot file) may lie there too, so with
    // some temporary or link of the journal's own still there only a temporary of its pid
    // under another line's N refuses it (two names swapped); with none (it would rename
    // nothing and holds no link) any other temporary of its names does.
    let evidence = steps.iter().any(|s| s.tmp.is_some() || s.old.is_some());
    for (k, s) in steps.iter().enumerate().filter(|(_, s)| s.tmp.is_none()) {
        let Ok(list) = std::fs::read_dir(&s.d.path) else {
            continue;
        };
        let prefix = format!(".{}.tmp.", s.name);
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
            let swapped = p == u64::from(journal.pid) && files.iter().any(|g| g.tmp == n);
            if !evidence || swapped {
                return Err(format!(
                    "{} is there while the journal's own temporary of {} ({}) is gone, and no writer leaves that: its pid or names are not its writer's",
                    s.d.path.join(&name).display(),
                    s.name,
                    tmp_of(k).display()
                ));
            }
        }
    }
    Ok(())
}
