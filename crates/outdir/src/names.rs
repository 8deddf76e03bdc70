//! The one list of what each writer of a result replaces together: the names a journal
//! may name (docs/errors.md, "Output directories"). A replacement of several files is
//! recorded under the writer whose names cover all of its files; recovery refuses a
//! journal that names anything else. A new result file is added here, or its command's
//! replacement fails (an internal error its tests meet first).

/// A command (or the Python exporter) that replaces several files together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writer {
    /// As the journal's `writer` line names it.
    pub name: &'static str,
    /// The names of its files: exact, or with one `*` standing for any text.
    pub files: &'static [&'static str],
    /// It also replaces one file of a name the user chose (`memory --dump-trace FILE`).
    pub named: bool,
    /// How many directories besides the journal's its files may lie in (the exports of
    /// `memory`: the `--dump-access-list` directory and the trace's).
    pub export_dirs: usize,
    /// The files of its set it may write, together, to a directory besides its result's
    /// (`memory --dump-access-list DIR`: the two lists); any other of its names in such a
    /// directory is the one file the user named (`--dump-trace DIR/NAME`).
    pub exports: &'static [&'static str],
    /// The file every result of it holds: where it is, a result of this writer is (its
    /// other listed files there belong to that result, and go when it is replaced).
    pub anchor: &'static str,
}

/// Every writer of several files, in the order a set of names is matched against them.
pub const WRITERS: &[Writer] = &[
    Writer {
        name: "run",
        files: &[
            "layers.csv",
            "layers.parquet",
            "summary.json",
            "outputs.npz",
        ],
        named: false,
        anchor: "summary.json",
        export_dirs: 0,
        exports: &[],
    },
    Writer {
        name: "accuracy",
        files: &["accuracy.csv", "summary.json"],
        named: false,
        anchor: "summary.json",
        export_dirs: 0,
        exports: &[],
    },
    Writer {
        name: "accuracy-shard",
        files: &["records.csv", "shard.json"],
        named: false,
        anchor: "shard.json",
        export_dirs: 0,
        exports: &[],
    },
    Writer {
        name: "sweep",
        files: &["sweep.json", "points.csv", "points.parquet"],
        named: false,
        anchor: "sweep.json",
        export_dirs: 0,
        exports: &[],
    },
    Writer {
        name: "search",
        files: &[
            "points.csv",
            "search.json",
            "pareto-cycles-*.svg",
            "pareto-energy-*.svg",
        ],
        named: false,
        anchor: "search.json",
        export_dirs: 0,
        exports: &[],
    },
    Writer {
        name: "memory",
        files: &[
            "memory_layers.csv",
            "memory_layers.parquet",
            "memory_summary.json",
            "memory_vs_capacity.svg",
            "access_list.csv",
            "prefetch_list.csv",
        ],
        named: true,
        anchor: "memory_summary.json",
        export_dirs: 2,
        exports: &["access_list.csv", "prefetch_list.csv"],
    },
    Writer {
        name: "export",
        files: &["manifest.json", "tensors.npz"],
        named: false,
        anchor: "manifest.json",
        export_dirs: 0,
        exports: &[],
    },
];

/// The writer called `name`.
pub fn writer(name: &str) -> Option<&'static Writer> {
    WRITERS.iter().find(|w| w.name == name)
}

/// A plain file name a result may have: not empty, no `/`, `\`, newline or NUL, not
/// starting with a dot (dot names are the temporaries, links and the journal).
pub fn plain(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\\', '\n', '\0'])
}

impl Writer {
    /// Whether `name` is one of its files by its list (not as its user-named file).
    pub fn lists(&self, name: &str) -> bool {
        plain(name) && self.files.iter().any(|p| matches(p, name))
    }
}

/// The first writer whose names cover `files` (name, named by the user): every listed
/// name is one of its files, and a user-named file that is not is its one named file.
pub fn writer_of(files: &[(&str, bool)]) -> Option<&'static Writer> {
    WRITERS.iter().find(|w| {
        let free = files
            .iter()
            .filter(|(n, _)| !w.lists(n))
            .collect::<Vec<_>>();
        match free.as_slice() {
            [] => true,
            [(n, true)] => w.named && plain(n),
            _ => false,
        }
    })
}

/// `name` against `pattern` (at most one `*`, which matches any text).
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((a, b)) => name.len() >= a.len() + b.len() && name.starts_with(a) && name.ends_with(b),
    }
}

/// A decimal number as a writer prints one (digits only, no sign, no leading zero): a
/// journal's pid and numbers, and those of a scratch file's name.
pub(crate) fn number(s: &str) -> Option<u64> {
    let ok =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    ok.then(|| s.parse().ok()).flatten()
}

/// The name of a scratch file of `name`: `.NAME.KIND.PID.N` (KIND `tmp` for a
/// temporary, `old` for a link to the old content). Writers and recovery build it here.
pub fn scratch_name(name: &str, kind: &str, pid: u32, n: u64) -> String {
    format!(".{name}.{kind}.{pid}.{n}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_matched_to_their_writer() {
        let w = |f: &[(&str, bool)]| writer_of(f).map(|w| w.name);
        assert_eq!(
            w(&[("layers.csv", false), ("summary.json", false)]),
            Some("run")
        );
        assert_eq!(
            w(&[("accuracy.csv", false), ("summary.json", false)]),
            Some("accuracy")
        );
        assert_eq!(
            w(&[("points.csv", false), ("pareto-cycles-a_4.svg", false)]),
            Some("search")
        );
        assert_eq!(
            w(&[("memory_summary.json", false), ("t.trace", true)]),
            Some("memory")
        );
        // One user-named file, not a dot name; nothing a writer does not list.
        assert_eq!(w(&[("a.trace", true), ("b.trace", true)]), None);
        assert_eq!(
            w(&[("memory_summary.json", false), (".bashrc", true)]),
            None
        );
        assert_eq!(w(&[("layers.csv", false), ("notes.txt", false)]), None);
        assert_eq!(w(&[("layers.csv", false), ("tensors.npz", false)]), None);
        assert!(!matches("pareto-cycles-*.svg", "pareto-cycles-.sv"));
        assert!(matches("pareto-cycles-*.svg", "pareto-cycles-.svg"));
        assert_eq!(scratch_name("a.csv", "tmp", 7, 3), ".a.csv.tmp.7.3");
    }
}
