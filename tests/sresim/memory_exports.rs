//! `sresim memory`'s exports end to end: the DRAM trace parsed back covers exactly the
//! reported traffic, the access list and prefetch list hold what the summary counts,
//! `--policy` switches the reported figures, and bad flags are one-line errors that leave
//! nothing behind.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::sresim;

use memory::trace::{TracePoint, REQUEST_BYTES};
use memory::{Capacity, ComputeSource, MemoryConfig, Model};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn lenet() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("workloads/lenet5-mnist")
        .display()
        .to_string()
}

fn rows(path: &Path) -> (Vec<String>, Vec<HashMap<String, String>>) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect();
    (header, rows)
}

fn u(m: &HashMap<String, String>, k: &str) -> u64 {
    m[k].parse().unwrap_or_else(|_| panic!("{k} = {:?}", m[k]))
}

/// (write, address, cycle) of every line of a trace.
fn parse_trace(text: &str, format: &str) -> Vec<(bool, u64, Option<u64>)> {
    let hex = |s: &str| u64::from_str_radix(s.strip_prefix("0x").expect("0x address"), 16);
    text.lines()
        .map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            match (format, f.as_slice()) {
                ("dramsim3", [a, op, c]) => {
                    assert!(*op == "READ" || *op == "WRITE", "{line}");
                    (*op == "WRITE", hex(a).unwrap(), Some(c.parse().unwrap()))
                }
                ("ramulator2", [op, a]) => {
                    assert!(*op == "LD" || *op == "ST", "{line}");
                    (*op == "ST", hex(a).unwrap(), None)
                }
                _ => panic!("bad {format} line: {line}"),
            }
        })
        .collect()
}

#[test]
fn the_trace_covers_exactly_the_reported_traffic() {
    let tmp = tempfile::tempdir().unwrap();
    let wl = lenet();
    for (format, policy) in [("dramsim3", "belady"), ("ramulator2", "fifo")] {
        let out = tmp.path().join(format!("out-{format}"));
        let lists = tmp.path().join(format!("lists-{format}"));
        let trace = tmp.path().join(format!("{format}.trace"));
        let o = sresim(&[
            "memory",
            "--workload",
            &wl,
            "--batch",
            "1",
            "--capacity",
            "64KiB",
            "--bandwidth",
            "900GB/s",
            "--policy",
            policy,
            "--out",
            out.to_str().unwrap(),
            "--dump-access-list",
            lists.to_str().unwrap(),
            "--dump-trace",
            trace.to_str().unwrap(),
            "--trace-format",
            format,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // The reported traffic: the TOTAL row.
        let (_, layers) = rows(&out.join("memory_layers.csv"));
        let total = layers.iter().find(|r| r["layer"] == "TOTAL").unwrap();
        let (read, write) = (u(total, "read_bytes"), u(total, "write_bytes"));
        assert!(read > 0 && write > 0);
        // Tile addresses, from the access list.
        let (_, acc) = rows(&lists.join("access_list.csv"));
        let addr: HashMap<u64, u64> = acc
            .iter()
            .map(|r| (u(r, "tile_id"), u(r, "address")))
            .collect();
        // The point's transfers, from the model in this process.
        let cfg = MemoryConfig {
            policy: memory::buffer::Policy::parse(policy).unwrap(),
            ..MemoryConfig::default()
        };
        let g = memory::report::load_network(&wl, 1, Default::default()).unwrap();
        let m = Model::new(&g, &cfg, &ComputeSource::Peak).expect("lenet5 fits the limits");
        let tp = TracePoint::of(&m, Capacity::bytes(64 * 1024), 900e9);
        let (mut tr_read, mut tr_write) = (0, 0);
        let mut want = Vec::new();
        for t in &tp.transfers {
            if t.write {
                tr_write += t.bytes;
            } else {
                tr_read += t.bytes;
            }
            let start = addr[&(t.tile as u64)] + t.offset;
            for k in 0..t.bytes.div_ceil(REQUEST_BYTES) {
                want.push((t.write, start + k * REQUEST_BYTES));
            }
        }
        assert_eq!((tr_read, tr_write), (read, write), "{policy}");
        // The file, parsed back: the same requests, one per started 64 bytes of a transfer.
        let text = std::fs::read_to_string(&trace).unwrap();
        let lines = parse_trace(&text, format);
        let rounded: u64 = tp
            .transfers
            .iter()
            .map(|t| t.bytes.div_ceil(REQUEST_BYTES))
            .sum();
        assert_eq!(lines.len() as u64, rounded);
        let mut got: Vec<(bool, u64)> = lines.iter().map(|&(w, a, _)| (w, a)).collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
        if format == "dramsim3" {
            // Issue cycles at 1 GHz never go back and end within the step's time.
            let cycles: Vec<u64> = lines.iter().map(|l| l.2.unwrap()).collect();
            assert!(cycles.windows(2).all(|w| w[0] <= w[1]));
            let time_s: f64 = total["time_s"].parse().unwrap();
            assert!(*cycles.last().unwrap() as f64 <= time_s * 1e9);
            assert!(*cycles.last().unwrap() as f64 >= 0.5 * time_s * 1e9);
        }
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains(&format!("{} {format} requests", lines.len())),
            "{stdout}"
        );
    }
}

#[test]
fn the_lists_hold_what_the_summary_counts_and_policy_switches_the_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let wl = lenet();
    let mut traffic = HashMap::new();
    for policy in ["belady", "lru", "fifo"] {
        let out = tmp.path().join(policy);
        let lists = tmp.path().join(format!("lists-{policy}"));
        let o = sresim(&[
            "memory",
            "--workload",
            &wl,
            "--batch",
            "2",
            "--capacity",
            "256KiB",
            "--policy",
            policy,
            "--out",
            out.to_str().unwrap(),
            "--dump-access-list",
            lists.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("memory_summary.json")).unwrap())
                .unwrap();
        assert_eq!(json["policy"], policy);
        let p = &json["points"][0];
        traffic.insert(
            policy,
            (
                p["traffic_bytes"].as_u64().unwrap(),
                p["lru_traffic_bytes"].as_u64().unwrap(),
            ),
        );

        let (header, acc) = rows(&lists.join("access_list.csv"));
        assert_eq!(
            header.join(","),
            "index,step,layer,phase,tensor,tile,offset_bytes,bytes,kind,next_read_index,\
             live_in,live_out,scope_if_hit,tile_id,address,prefetchable"
        );
        assert_eq!(acc.len() as u64, json["accesses"].as_u64().unwrap());
        let bytes: u64 = acc.iter().map(|r| u(r, "bytes")).sum();
        assert_eq!(bytes, json["all_access_bytes"].as_u64().unwrap());
        for (i, r) in acc.iter().enumerate() {
            assert_eq!(u(r, "index"), i as u64);
            // The next read is a later read of the same tile with no access between.
            if !r["next_read_index"].is_empty() {
                let j = u(r, "next_read_index") as usize;
                assert!(j > i && acc[j]["kind"] == "read" && acc[j]["tile_id"] == r["tile_id"]);
                assert!(acc[i + 1..j].iter().all(|x| x["tile_id"] != r["tile_id"]));
            }
            let first = acc[..i].iter().all(|x| x["tile_id"] != r["tile_id"]);
            assert_eq!(r["scope_if_hit"].is_empty(), first || r["kind"] == "write");
        }
        // Layout: the tiles of a tensor sit at their offsets from one 4 KiB-aligned base.
        let mut base: HashMap<&str, u64> = HashMap::new();
        for r in &acc {
            let b = u(r, "address") - u(r, "offset_bytes");
            assert_eq!(b % 4096, 0);
            assert_eq!(
                *base.entry(r["tensor"].as_str()).or_insert(b),
                b,
                "{}",
                r["tensor"]
            );
        }
        // Every prefetchable tile is read by the next step.
        let (header, pf) = rows(&lists.join("prefetch_list.csv"));
        assert_eq!(
            header.join(","),
            "step,tensor,tile,bytes,for_step,tile_id,address"
        );
        assert!(!pf.is_empty());
        for r in &pf {
            assert_eq!(u(r, "for_step"), u(r, "step") + 1);
            assert!(acc.iter().any(|a| a["step"] == r["for_step"]
                && a["tile_id"] == r["tile_id"]
                && a["kind"] == "read"
                && a["prefetchable"] == "true"));
        }
    }
    // --policy lru reports what every run lists as LRU traffic.
    assert_eq!(traffic["lru"].0, traffic["belady"].1);
    assert_eq!(traffic["lru"].0, traffic["lru"].1);
    assert_eq!(traffic["fifo"].1, traffic["belady"].1);
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walk(dir);
    v.sort();
    v
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flat_map(|e| {
            let p = e.unwrap().path();
            let mut v = vec![p.clone()];
            if p.is_dir() {
                v.extend(walk(&p));
            }
            v
        })
        .collect()
}

#[test]
fn bad_export_flags_are_one_line_errors_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("file"), "not a directory").unwrap();
    let s = |p: &str| d.join(p).display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "--dump-trace".into(),
                s("t"),
                "--capacity".into(),
                "1MiB,2MiB".into(),
            ],
            "--dump-trace: needs exactly one --capacity",
        ),
        (
            vec![
                "--dump-trace".into(),
                s("t"),
                "--bandwidth".into(),
                "1TB/s,2TB/s".into(),
            ],
            "--dump-trace: needs exactly one --bandwidth",
        ),
        (
            vec!["--dump-trace".into(), s("file/t")],
            "--dump-trace: cannot write",
        ),
        (
            vec!["--dump-trace".into(), s("no/such/t")],
            "--dump-trace: cannot write",
        ),
        (vec!["--dump-trace".into(), s("")], "--dump-trace:"),
        (vec!["--dump-trace".into(), "".into()], "--dump-trace"),
        (
            vec!["--dump-access-list".into(), "".into()],
            "--dump-access-list",
        ),
        (
            vec!["--dump-access-list".into(), s("file/lists")],
            "--dump-access-list: cannot create",
        ),
        (
            vec!["--dump-access-list".into(), s("file")],
            "--dump-access-list:",
        ),
        (
            vec!["--trace-format".into(), "dramsim3".into()],
            "--trace-format: needs --dump-trace",
        ),
        (
            vec![
                "--dump-trace".into(),
                s("t"),
                "--trace-format".into(),
                "gem5".into(),
            ],
            "--trace-format: 'gem5'",
        ),
        (
            vec![
                "--dump-trace".into(),
                s("t"),
                "--trace-clock-mhz".into(),
                "0".into(),
            ],
            "--trace-clock-mhz:",
        ),
        (
            vec!["--policy".into(), "random".into()],
            "--policy: 'random'",
        ),
        // A bad value found later, with the exports already open: still nothing left.
        (
            vec![
                "--dump-access-list".into(),
                s("new/lists"),
                "--dump-trace".into(),
                s("t"),
                "--bandwidth".into(),
                "0GB/s".into(),
            ],
            "--bandwidth:",
        ),
    ];
    let before = entries(d);
    for (extra, want) in cases {
        let mut args: Vec<String> = ["memory", "--workload", &lenet(), "--batch", "1", "--out"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(s("out"));
        args.extend(extra.iter().cloned());
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = sresim(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{extra:?} succeeded");
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(err.starts_with("error: "), "{extra:?}: {err}");
        assert!(err.contains(want), "{extra:?}: {err} lacks {want}");
        assert_eq!(entries(d), before, "{extra:?} left files behind");
    }
}

/// Every directory `memory` writes is locked like its --out for the command's whole life:
/// with another writer holding the --dump-access-list directory, it is refused at once in
/// one line naming the flag, the directory unchanged (two runs exporting to one directory
/// used to mix their access_list.csv and prefetch_list.csv). The same directory named
/// twice (as --out and, through `..`, as the lists' directory) is locked once.
#[test]
fn an_export_directory_is_locked_like_an_output_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (lists, out) = (tmp.path().join("lists"), tmp.path().join("out"));
    std::fs::create_dir(&lists).unwrap();
    std::fs::write(lists.join("access_list.csv"), "theirs").unwrap();
    std::fs::write(lists.join("prefetch_list.csv"), "theirs").unwrap();
    let wl = lenet();
    let memory = |out: &Path, lists: &Path| {
        sresim(&[
            "memory",
            "-q",
            "--workload",
            &wl,
            "--batch",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--dump-access-list",
            lists.to_str().unwrap(),
        ])
    };
    let held = outdir::OutputDir::open(&lists).unwrap();
    let before = entries(tmp.path());
    let o = memory(&out, &lists);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: --dump-access-list: ")
            && err.contains("another sresim process is writing this directory"),
        "{err}"
    );
    assert_eq!(entries(tmp.path()), before, "nothing written");
    assert_eq!(
        std::fs::read_to_string(lists.join("access_list.csv")).unwrap(),
        "theirs"
    );
    drop(held);
    let o = memory(&out, &lists);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_ne!(
        std::fs::read_to_string(lists.join("access_list.csv")).unwrap(),
        "theirs"
    );
    // One directory twice, the second time through `..` and not yet made.
    let both = tmp.path().join("both");
    let o = memory(&both, &both.join("../both"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(both.join("access_list.csv").is_file() && both.join("memory_summary.json").is_file());
}
