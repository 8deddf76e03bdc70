use super::*;

/// Set in the child process this test starts under a file-size limit.
const CHILD: &str = "OUTDIR_APPEND_CHILD";

/// An append that crosses a file-size limit (`ulimit -f`, failing with EFBIG as a full
/// disk fails with ENOSPC) after part of its bytes leaves the file as it was before it.
#[test]
fn an_append_that_fails_part_way_is_cut_off() {
    let row = b"0123456789,abcdefghij,0123456789,abcdefghij,0123456789\n";
    if let Some(dir) = std::env::var_os(CHILD) {
        let path = Path::new(&dir).join("points.csv");
        let mut f = open_append(&path).unwrap();
        let e = append_whole(&mut f, &path, &row.repeat(20)).unwrap_err();
        assert!(e.to_string().contains("points.csv: cannot append: "), "{e}");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("points.csv");
    // 400 bytes under the limit (one block: 512 bytes for sh, 1 KiB for bash): the
    // next append is cut short by it, part of it written.
    let before = b"h\n".repeat(200);
    std::fs::write(&path, &before).unwrap();
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 1; exec \"$0\" \"$@\"")
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "commit::append_tests::an_append_that_fails_part_way_is_cut_off",
        ])
        .args(["--test-threads", "1", "--nocapture"])
        .env(CHILD, d.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("1 passed"), "{out}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Without a limit the same append is written whole.
    let mut f = open_append(&path).unwrap();
    append_whole(&mut f, &path, &row.repeat(10)).unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap().len(),
        before.len() + 10 * row.len()
    );
}
