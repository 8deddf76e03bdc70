//! The names a replacement leaves while it is unfinished (its journal and, in each other
//! directory its files lie in, an export mark), what a reader makes of them, and the
//! destination check a first write and a recovery share (docs/errors.md, "Output
//! directories"). Below both the writer ([`crate::commit`]) and the recovery
//! ([`crate::recover`]).
#![allow(clippy::disallowed_methods)] // part of the one allowed writer

use std::fs::File;
use std::path::Path;

/// The journal of a replacement of several files: while it exists in a directory, some of
/// the files it names may be new and others old. Readers refuse the files of such a
/// directory ([`interrupted`]); the next [`crate::OutputDir::open`] of it completes the
/// replacement ([`crate::recover`]).
pub const JOURNAL: &str = ".sresim-commit";

/// The first line of a journal: its format (see [`crate::recover`]). A journal only ever
/// names files to rename: what a replacement removes (the earlier result's files its new
/// set does not hold) is removed after the journal is gone, so no journal can make
/// recovery delete a file.
pub const JOURNAL_FORMAT: &str = "sresim-commit 2";

/// The mark a replacement leaves in each other directory its files lie in (the exports of
/// `sresim memory`), from just after its journal is written until just before it is
/// removed: while it is there the files of that directory may be new beside old ones, so
/// readers refuse them there too ([`interrupted`]). It names the journal's directory and
/// the file a user named there, if any: `sresim-commit-export 2`, `journal DIR` (absolute,
/// resolved), then `file NAME` when the directory holds the replacement's user-named file
/// (`--dump-trace`). Recovery renames into a recorded directory only when it holds this
/// mark ([`crate::recover`]).
pub const EXPORT_MARK: &str = ".sresim-commit-export";

/// The first line of an export mark.
pub const EXPORT_MARK_FORMAT: &str = "sresim-commit-export 2";

/// `dir` holds the journal of an unfinished replacement, or the mark of one whose journal
/// is in another directory ([`EXPORT_MARK`]): some of its files may be new beside old ones.
pub fn interrupted(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(JOURNAL)).is_ok()
        || std::fs::symlink_metadata(dir.join(EXPORT_MARK)).is_ok()
}

/// The kinds of file a destination check tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Link,
    Other,
}

impl Kind {
    pub(crate) fn of(t: std::fs::FileType) -> Kind {
        if t.is_symlink() {
            Kind::Link
        } else if t.is_dir() {
            Kind::Dir
        } else if t.is_file() {
            Kind::File
        } else {
            Kind::Other
        }
    }
}

/// The one destination check of a first write and of a recovery: `p` is absent (None) or
/// a regular file.
pub(crate) fn destination_kind(p: &Path, kind: Option<Kind>) -> Result<(), String> {
    let p = p.display();
    match kind {
        None | Some(Kind::File) => Ok(()),
        Some(Kind::Dir) => Err(format!(
            "{p}: is a directory, not a file: cannot replace it"
        )),
        Some(Kind::Link) => Err(format!(
            "{p}: is a symbolic link: sresim does not replace one (name the file it points to)"
        )),
        Some(Kind::Other) => Err(format!("{p}: not a regular file: cannot replace it")),
    }
}

/// Makes the renames durable (a directory sync; not available everywhere, so best effort).
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
