//! The documentation stands alone: every relative link in every Markdown file of the
//! repository resolves to a file or directory of the repository, and every repository
//! path a Markdown file or a source comment names (`docs/model.md`,
//! `configs/sweeps/ou-size.toml`) exists.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file of the repository that git tracks whose name ends with one of `exts`
/// (`common::tracked_files`: what a user writes into the tree is not read).
fn files(root: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    out.extend(
        common::tracked_files(root, ".")
            .into_iter()
            .filter(|p| exts.iter().any(|x| p.to_string_lossy().ends_with(x))),
    );
}

/// The text of a Markdown file without fenced code blocks and inline code spans (links
/// there are examples, not links), one entry per line with its 1-based number.
fn prose(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut kept = String::new();
        for (k, part) in line.split('`').enumerate() {
            if k % 2 == 0 {
                kept.push_str(part);
            }
        }
        out.push((i + 1, kept));
    }
    out
}

/// The targets of the inline links `[text](target)` and `![alt](target)` of a line.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let end = after.find(')').unwrap_or(after.len());
        let target = after[..end].split_whitespace().next().unwrap_or("");
        out.push(target.trim_matches(|c| c == '<' || c == '>').to_string());
        rest = &after[end.min(after.len())..];
    }
    out
}

fn is_external(t: &str) -> bool {
    t.is_empty() || t.starts_with('#') || t.contains("://") || t.starts_with("mailto:")
}

#[test]
fn every_relative_markdown_link_resolves() {
    let root = root();
    let mut mds = Vec::new();
    files(&root, &[".md"], &mut mds);
    assert!(mds.len() >= 10, "found only {} Markdown files", mds.len());
    let mut broken = Vec::new();
    let mut checked = 0;
    for md in &mds {
        let text = std::fs::read_to_string(md).unwrap();
        for (n, line) in prose(&text) {
            for t in link_targets(&line) {
                if is_external(&t) {
                    continue;
                }
                checked += 1;
                let path = t.split('#').next().unwrap();
                let resolved = md.parent().unwrap().join(path);
                let inside = resolved
                    .canonicalize()
                    .is_ok_and(|p| p.starts_with(root.canonicalize().unwrap()));
                if !inside {
                    let rel = md.strip_prefix(&root).unwrap().display();
                    broken.push(format!("{rel}:{n}: ({t})"));
                }
            }
        }
    }
    assert!(checked >= 20, "checked only {checked} links");
    assert!(
        broken.is_empty(),
        "links that resolve to nothing in the repository:\n{}",
        broken.join("\n")
    );
}

/// Paths written out in prose or comments, relative to the repository root: a top-level
/// directory of the repository, then a path ending in a file extension.
fn named_paths(text: &str, tops: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "._-/".contains(c);
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (start, c) = chars[k];
        let boundary = k == 0 || !is_path_char(chars[k - 1].1);
        if boundary && is_path_char(c) {
            let mut j = k;
            while j < chars.len() && is_path_char(chars[j].1) {
                j += 1;
            }
            let end = chars.get(j).map_or(text.len(), |x| x.0);
            let word = text[start..end].trim_end_matches(['.', '/']);
            let top = word.split('/').next().unwrap_or("");
            let ext = ["md", "toml", "sh", "rs", "py", "json", "npz"];
            let has_ext = word.rsplit_once('.').is_some_and(|(_, e)| ext.contains(&e));
            if word.contains('/') && tops.iter().any(|t| t == top) && has_ext && !word.contains('*')
            {
                out.push(word.to_string());
            }
            k = j;
        } else {
            k += 1;
        }
    }
    out
}

#[test]
fn every_repository_path_named_in_docs_and_comments_exists() {
    let root = root();
    // The top-level folders of tracked files.
    let mut tops: Vec<String> = common::tracked_files(&root, ".")
        .iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(&root).ok()?;
            let mut parts = rel.components();
            let top = parts.next()?.as_os_str().to_string_lossy().into_owned();
            (parts.next().is_some() && !top.starts_with('.')).then_some(top)
        })
        .collect();
    tops.dedup();
    let mut sources = Vec::new();
    files(&root, &[".md", ".rs", ".toml", ".sh"], &mut sources);
    let mut missing = Vec::new();
    let mut checked = 0;
    for f in &sources {
        let skip = ["tests/corpus", "fuzz/corpus", "tests/sresim/docs.rs"];
        if skip.iter().any(|s| f.starts_with(root.join(s))) {
            continue;
        }
        // A path in a crate's file may be relative to that crate (`tests/model.rs`).
        let krate = f
            .ancestors()
            .find(|d| d.join("Cargo.toml").is_file())
            .unwrap_or(&root)
            .to_path_buf();
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let lines: Vec<(usize, String)> = if f.extension().is_some_and(|e| e == "md") {
            // Example output in code blocks names made-up paths (workloads/x/...).
            let mut fenced = false;
            text.lines()
                .enumerate()
                .filter(|(_, l)| {
                    if l.trim_start().starts_with("```") {
                        fenced = !fenced;
                    }
                    !fenced
                })
                .map(|(i, l)| (i, l.to_string()))
                .collect()
        } else {
            text.lines().map(str::to_string).enumerate().collect()
        };
        for (n, line) in lines {
            for p in named_paths(&line, &tops) {
                checked += 1;
                // In Markdown, a link's target is relative to the file's own folder.
                let beside = f.parent().is_some_and(|d| d.join(&p).exists());
                if !root.join(&p).exists() && !krate.join(&p).exists() && !beside {
                    let rel = f.strip_prefix(&root).unwrap().display();
                    missing.push(format!("{rel}:{}: {p}", n + 1));
                }
            }
        }
    }
    assert!(checked >= 50, "checked only {checked} paths");
    assert!(
        missing.is_empty(),
        "paths that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_scanners_find_what_they_should() {
    assert_eq!(
        link_targets("see [a](docs/a.md#x) and ![b](<img.svg>) and [c](https://x.org)"),
        ["docs/a.md#x", "img.svg", "https://x.org"]
    );
    let p = prose("a [x](y.md) `[z](w.md)`\n```\n[q](r.md)\n```\n");
    assert_eq!(p, [(1, "a [x](y.md) ".to_string())]);
    let tops = ["docs".to_string(), "configs".to_string()];
    assert_eq!(
        named_paths(
            "per docs/model.md §2, configs/sweeps/ou-size.toml; out/x.md, docs/, mydocs/a.md",
            &tops
        ),
        ["docs/model.md", "configs/sweeps/ou-size.toml"]
    );
}

/// A stray untracked folder (a user's `--out workloads/mynet`, a README example's `out/`)
/// is not read by the tests: `common::tracked_files` lists what git tracks, and outside a
/// checkout walks the tree.
#[test]
fn tests_read_only_tracked_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |p: &str| {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x").unwrap();
    };
    write("docs/a.md");
    write("workloads/net/manifest.json");
    let rel = |v: Vec<PathBuf>| -> Vec<String> {
        v.iter()
            .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect()
    };
    // not a checkout: every file but target/ and dot-folders
    write("target/x.md");
    write(".hidden/y.md");
    assert_eq!(
        rel(common::tracked_files(root, ".")),
        ["docs/a.md", "workloads/net/manifest.json"]
    );
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "docs/a.md", "workloads/net/manifest.json"]);
    write("workloads/mynet/manifest.json");
    write("out/summary.md");
    write("docs/draft.md");
    assert_eq!(
        rel(common::tracked_files(root, ".")),
        ["docs/a.md", "workloads/net/manifest.json"]
    );
    assert_eq!(
        rel(common::tracked_files(root, "workloads")),
        ["workloads/net/manifest.json"]
    );
    // a tracked file deleted from the work tree is not listed
    std::fs::remove_file(root.join("docs/a.md")).unwrap();
    assert_eq!(
        rel(common::tracked_files(root, "docs")),
        Vec::<String>::new()
    );
}
