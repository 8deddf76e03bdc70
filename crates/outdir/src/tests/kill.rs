//! A replacement killed at every point of its commit sequence, then recovered.

use super::*;

/// `memory`'s replacement of four files in three directories (its reports in `home`, its
/// lists in `x`, a trace in `t`), killed at every point of the commit sequence in turn
/// (the journal's temporary written, the journal in place, each mark's temporary, each
/// mark, each rename, the removal of the old result's plot the new one lacks, each mark
/// removed): the next open of `home` recovers every time,
/// rolling back or forward to the whole old or the whole new set, no mark or journal
/// left, and the next replacement goes through. A kill after the journal was in place and
/// before the mark of `x` used to leave a journal every later command refused.
#[cfg(unix)]
#[test]
fn a_kill_at_any_step_of_the_commit_recovers_to_one_whole_set() {
    use crate::commit::tests::{Killed, KILLED, KILL_AT, PASSED};
    let t = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(t.path()).unwrap();
    let (home, x, tr) = (root.join("home"), root.join("x"), root.join("t"));
    let files = [
        home.join("memory_summary.json"),
        home.join("memory_layers.csv"),
        x.join("access_list.csv"),
        x.join("prefetch_list.csv"),
        tr.join("t.trace"),
    ];
    // The old result also has a plot the new one does not: it goes with the replacement.
    let plot = home.join("memory_vs_capacity.svg");
    let write = |text: &str| {
        let mut staged = Vec::new();
        let with_plot = [&plot].into_iter().filter(|_| text == "old");
        for f in files.iter().chain(with_plot) {
            // The lists and reports as `memory` stages them (its set), the trace as a
            // file the user named.
            let mut s = match f.ends_with("t.trace") {
                true => stage_file(f).unwrap(),
                false => stage(
                    f.parent().unwrap(),
                    &f.file_name().unwrap().to_string_lossy(),
                )
                .unwrap(),
            };
            s.write_all(format!("{text} {}", f.display()).as_bytes())
                .unwrap();
            staged.push(s);
        }
        // As a command replaces its result in its own output directory.
        crate::commit::commit(&home, staged, true)
    };
    // Which whole set the visible files hold: "old" or "new" (a mix fails).
    let set = || {
        let texts: Vec<String> = files
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect();
        let plot = std::fs::read_to_string(&plot).ok();
        for which in ["old", "new"] {
            let plot_ok = match which {
                "old" => {
                    plot == Some(format!(
                        "old {}",
                        home.join("memory_vs_capacity.svg").display()
                    ))
                }
                // A kill between the journal's removal and the plot's leaves the plot
                // beside the whole new set (removed by the next result; no journal names it).
                _ => {
                    plot.is_none()
                        || plot
                            == Some(format!(
                                "old {}",
                                home.join("memory_vs_capacity.svg").display()
                            ))
                }
            };
            if plot_ok
                && files
                    .iter()
                    .zip(&texts)
                    .all(|(f, s)| *s == format!("{which} {}", f.display()))
            {
                return which;
            }
        }
        panic!("a mixed set: {texts:?}, plot {plot:?}");
    };
    let mut outcomes = Vec::new();
    for n in 0.. {
        for d in [&home, &x, &tr] {
            let _ = std::fs::remove_dir_all(d);
            std::fs::create_dir(d).unwrap();
        }
        write("old").unwrap();
        PASSED.with(|c| c.set(0));
        KILL_AT.with(|c| c.set(Some(n)));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| write("new")));
        KILL_AT.with(|c| c.set(None));
        KILLED.with(|c| c.set(false));
        match r {
            Ok(r) => {
                r.unwrap();
                assert_eq!(set(), "new");
                break;
            }
            Err(e) => assert!(e.is::<Killed>()),
        }
        drop(OutputDir::open(&home).unwrap_or_else(|e| panic!("killed at point {n}: {e}")));
        outcomes.push(set());
        for d in [&home, &x, &tr] {
            assert!(!interrupted(d), "killed at point {n}: {}", d.display());
        }
        write("new").unwrap_or_else(|e| panic!("killed at point {n}, then: {e}"));
        assert_eq!(set(), "new");
        assert!(
            !plot.exists(),
            "killed at point {n}: the next result removes the plot"
        );
    }
    // Journal: 2 points; 2 marks: 4; 5 renames, the end of the renames, 2 marks removed,
    // then the removal of the old plot. Rolled back up to the second mark's temporary,
    // forward from its rename on.
    assert_eq!(outcomes.len(), 15, "{outcomes:?}");
    assert_eq!(
        outcomes.iter().filter(|o| **o == "old").count(),
        5,
        "{outcomes:?}"
    );
}
