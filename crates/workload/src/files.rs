//! Files read from user paths are checked to be what is expected before they are opened:
//! a FIFO or a device would block a read forever (or stream without end), and a directory
//! where a file is expected would fail with an obscure message.

use std::fs;
use std::io;
use std::path::Path;

/// Why `path` is not a regular file (symbolic links are followed): `does not exist`,
/// `is a directory, not a file`, `is not a regular file (...)`, or the error of `stat`.
pub fn check_regular_file(path: &Path) -> Result<(), String> {
    match fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) if m.is_dir() => Err("is a directory, not a file".into()),
        Ok(_) => Err("is not a regular file (a FIFO, socket or device cannot be read)".into()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err("does not exist".into()),
        Err(e) => Err(format!("cannot read: {e}")),
    }
}

/// Why `path` is not a directory (symbolic links are followed).
pub fn check_dir(path: &Path) -> Result<(), String> {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err("is not a directory".into()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err("does not exist".into()),
        Err(e) => Err(format!("cannot read: {e}")),
    }
}

/// Reads the regular file at `path` as text; errors are `LABEL: cannot read: why`.
pub fn read_text(path: &Path, label: &str) -> Result<String, String> {
    check_regular_file(path).map_err(|e| format!("{label}: cannot read: {e}"))?;
    fs::read_to_string(path).map_err(|e| format!("{label}: cannot read: {e}"))
}

/// Opens the regular file at `path` for reading; errors are `LABEL: cannot open: why`.
pub fn open(path: &Path, label: &str) -> Result<fs::File, String> {
    check_regular_file(path).map_err(|e| format!("{label}: cannot open: {e}"))?;
    fs::File::open(path).map_err(|e| format!("{label}: cannot open: {e}"))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

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
            e.starts_with("null: cannot open: is not a regular file"),
            "{e}"
        );
        assert_eq!(check_dir(d.path()), Ok(()));
        assert_eq!(check_dir(&f), Err("is not a directory".into()));
    }
}
