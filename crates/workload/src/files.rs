//! The one way sresim reads a file a user names (a config, a preset, a device or area or
//! energy table, a grid, a bundle's manifest and tensors, sweep.json, a result table):
//!
//! 1. the path is `stat`ed (symbolic links followed) and refused unless it is a regular
//!    file — a FIFO would block a read forever, a device (a link to /dev/zero) would stream
//!    without end, a directory would fail with an obscure message;
//! 2. it is opened non-blocking (so a FIFO put there since step 1 cannot block the open)
//!    and checked again on the open descriptor (`fstat`), which is what is read;
//! 3. text is read up to a bound ([`MAX_TEXT_BYTES`] or the caller's): a larger file is
//!    refused with one line, never read into memory;
//! 4. a file of a directory that holds an interrupted replacement of its files (a writer
//!    killed while it renamed them, see the `outdir` crate) is refused: it could be new
//!    beside an old sibling.
//!
//! Nothing else in the workspace opens a file for reading: clippy.toml disallows
//! `std::fs::read`, `read_to_string` and `File::open` outside this module and tests.
#![allow(clippy::disallowed_methods)] // this module is the one allowed reader

use std::fs;
use std::io::{self, Read};
use std::path::Path;

/// The largest text file [`read_text`] reads (configs, presets, tables, manifests, grids).
pub const MAX_TEXT_BYTES: u64 = 64 << 20;

/// Why `path` is not a regular file (symbolic links are followed): `does not exist`,
/// `is a directory, not a file`, `is a FIFO, not a regular file ...`, or the error of `stat`.
pub fn check_regular_file(path: &Path) -> Result<(), String> {
    match fs::metadata(path) {
        Ok(m) => kind_error(&m),
        Err(e) => Err(why(path, &e)),
    }
}

/// Why `path` cannot be reached, from the error of `stat` or `open`, without the
/// caller's own verb (`cannot read: ` is the caller's): `does not exist`; when a directory
/// of the path is a file (a FIFO given as a shard's directory) that one is named,
/// `ff is not a directory`, not the system's "Not a directory" about the whole path.
fn why(path: &Path, e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "does not exist".into(),
        io::ErrorKind::NotADirectory => path
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .find(|a| fs::metadata(a).is_ok_and(|m| !m.is_dir()))
            .map_or_else(
                || e.to_string(),
                |a| format!("{} is not a directory", a.display()),
            ),
        _ => e.to_string(),
    }
}

/// `Ok` for a regular file, else what it is.
fn kind_error(m: &fs::Metadata) -> Result<(), String> {
    if m.is_file() {
        return Ok(());
    }
    if m.is_dir() {
        return Err("is a directory, not a file".into());
    }
    let what = {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            let t = m.file_type();
            if t.is_fifo() {
                "a FIFO"
            } else if t.is_socket() {
                "a socket"
            } else if t.is_char_device() || t.is_block_device() {
                "a device"
            } else {
                "not a file"
            }
        }
        #[cfg(not(unix))]
        {
            "not a file"
        }
    };
    Err(format!(
        "is {what}, not a regular file (a FIFO, socket or device cannot be read)"
    ))
}

/// Why `path` is not a directory (symbolic links are followed).
pub fn check_dir(path: &Path) -> Result<(), String> {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err("is not a directory".into()),
        Err(e) => Err(why(path, &e)),
    }
}

/// Opens the regular file at `path` for reading (steps 1, 2 and 4 of the module
/// documentation); errors are `LABEL: cannot open: why`. The file's size is fixed (it is
/// regular), so a reader of it ends.
pub fn open(path: &Path, label: &str) -> Result<fs::File, String> {
    open_checked(path).map_err(|e| format!("{label}: cannot open: {e}"))
}

fn open_checked(path: &Path) -> Result<fs::File, String> {
    check_regular_file(path)?;
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if outdir::interrupted(dir) {
            return Err(format!(
                "{} holds an unfinished replacement of its files (a writer is replacing \
                 them, or was stopped while it did; sresim completes it the next time it \
                 writes that directory, or the one whose journal its mark names)",
                dir.display()
            ));
        }
    }
    let file = open_nonblocking(path).map_err(|e| why(path, &e))?;
    let m = file.metadata().map_err(|e| e.to_string())?;
    kind_error(&m)?;
    Ok(file)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<fs::File> {
    use rustix::fs::{fcntl_setfl, Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )?;
    // Reads of a regular file block as usual.
    fcntl_setfl(&fd, OFlags::empty())?;
    Ok(fs::File::from(fd))
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<fs::File> {
    fs::File::open(path)
}

/// Reads the regular file at `path` as UTF-8 text of at most `max_bytes` bytes; errors
/// are `LABEL: cannot read: why` (one line).
pub fn read_to_string(path: &Path, label: &str, max_bytes: u64) -> Result<String, String> {
    read_string(path, max_bytes).map_err(|e| format!("{label}: cannot read: {e}"))
}

/// [`read_to_string`] whose error is only the why (`does not exist`, `is a FIFO, ...`,
/// `larger than N bytes ...`), for callers that word the line themselves.
pub fn read_string(path: &Path, max_bytes: u64) -> Result<String, String> {
    String::from_utf8(read_bytes(path, max_bytes)?).map_err(|_| "not UTF-8 text".to_string())
}

/// Reads the regular file at `path`, at most `max_bytes` bytes; the error is the why.
pub fn read_bytes(path: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
    read_open(open_checked(path)?, max_bytes)
}

/// Which file a path names: its device and inode (None where the platform has none, or
/// the path names nothing). A file replaced by a rename is another file; the one opened
/// before stays readable through its handle.
pub type FileId = Option<(u64, u64)>;

/// The [`FileId`] of an open file.
pub fn id_of(file: &fs::File) -> FileId {
    file.metadata().ok().as_ref().and_then(id_from)
}

/// The [`FileId`] of the file `path` names now (symbolic links followed).
pub fn id_at(path: &Path) -> FileId {
    fs::metadata(path).ok().as_ref().and_then(id_from)
}

#[cfg(unix)]
fn id_from(m: &fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn id_from(_: &fs::Metadata) -> FileId {
    None
}

/// [`read_text`], with the [`FileId`] of the file read.
pub fn read_text_with_id(path: &Path, label: &str) -> Result<(String, FileId), String> {
    let err = |e: String| format!("{label}: cannot read: {e}");
    let file = open_checked(path).map_err(err)?;
    let id = id_of(&file);
    let bytes = read_open(file, MAX_TEXT_BYTES).map_err(err)?;
    let text = String::from_utf8(bytes).map_err(|_| err("not UTF-8 text".into()))?;
    Ok((text, id))
}

/// Reads an opened regular file, at most `max_bytes` bytes; the error is the why.
fn read_open(file: fs::File, max_bytes: u64) -> Result<Vec<u8>, String> {
    let too_big = || format!("larger than {max_bytes} bytes, the most sresim reads of such a file");
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    if len > max_bytes {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_big());
    }
    Ok(bytes)
}

/// [`read_to_string`] bounded by [`MAX_TEXT_BYTES`].
pub fn read_text(path: &Path, label: &str) -> Result<String, String> {
    read_to_string(path, label, MAX_TEXT_BYTES)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn only_regular_files_are_read() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f.txt");
        fs::write(&f, "x").unwrap();
        assert_eq!(read_text(&f, "f"), Ok("x".into()));
        assert_eq!(
            read_text(d.path(), "d"),
            Err("d: cannot read: is a directory, not a file".into())
        );
        assert_eq!(
            read_text(&d.path().join("none"), "n"),
            Err("n: cannot read: does not exist".into())
        );
        // /dev/null is a character device: refused without reading.
        let e = open(Path::new("/dev/null"), "null").unwrap_err();
        assert!(
            e.starts_with("null: cannot open: is a device, not a regular file"),
            "{e}"
        );
        assert_eq!(check_dir(d.path()), Ok(()));
        assert_eq!(check_dir(&f), Err("is not a directory".into()));
        // A file where a directory of the path should be is named, once, as such.
        let under = f.join("shard.json");
        let e = read_to_string(&under, &under.display().to_string(), 100).unwrap_err();
        assert_eq!(
            e,
            format!(
                "{}: cannot read: {} is not a directory",
                under.display(),
                f.display()
            )
        );
        assert_eq!(
            check_dir(&under),
            Err(format!("{} is not a directory", f.display()))
        );
    }

    /// A symbolic link is followed, and what it points at is checked: a link to
    /// /dev/zero is a device, a link to a regular file is read.
    #[test]
    fn symlinks_are_checked_at_their_target() {
        let d = tempfile::tempdir().unwrap();
        let zero = d.path().join("zero.toml");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = read_text(&zero, "z").unwrap_err();
        assert!(e.starts_with("z: cannot read: is a device"), "{e}");
        let f = d.path().join("f.toml");
        fs::write(&f, "a = 1").unwrap();
        let link = d.path().join("l.toml");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert_eq!(read_text(&link, "l"), Ok("a = 1".into()));
    }

    /// A FIFO with no writer is refused at once: neither the check nor the open blocks.
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &p,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let q = p.clone();
        std::thread::spawn(move || tx.send(read_text(&q, "p")).unwrap());
        let e = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap()
            .unwrap_err();
        assert!(
            e.starts_with("p: cannot read: is a FIFO, not a regular file"),
            "{e}"
        );
        // The non-blocking open itself also refuses a FIFO (the race after the stat).
        let t = Instant::now();
        let f = open_nonblocking(&p).unwrap();
        assert!(kind_error(&f.metadata().unwrap()).is_err());
        assert!(t.elapsed() < Duration::from_secs(10));
    }

    /// A file larger than the bound is refused, one byte less is read.
    #[test]
    fn the_bound_is_exact() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("big");
        fs::write(&f, vec![b'a'; 100]).unwrap();
        assert_eq!(read_to_string(&f, "b", 100).map(|s| s.len()), Ok(100));
        assert_eq!(
            read_to_string(&f, "b", 99),
            Err(
                "b: cannot read: larger than 99 bytes, the most sresim reads of such a file".into()
            )
        );
        fs::write(&f, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_to_string(&f, "b", 99),
            Err("b: cannot read: not UTF-8 text".into())
        );
    }
}
