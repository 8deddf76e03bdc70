//! `sresim memory`'s files as `memory_out::run` writes them: the model's CSV and JSON and
//! the plot drawn from its figures.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memory::{ComputeSource, MemoryArgs, MemoryConfig};
use sim::memory_out::run;

#[test]
fn run_writes_csv_json_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let args = MemoryArgs {
        workload: "mobilenetv2".into(),
        batch: 2,
        capacity: vec!["512KiB".into(), "4MiB".into(), "inf".into()],
        bandwidth: vec!["900GB/s".into(), "1.5TB/s".into()],
        out: Some(dir.path().to_path_buf()),
        ..MemoryArgs::default()
    };
    run(&args, &MemoryConfig::default(), ComputeSource::Peak).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("memory_layers.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(header
        .starts_with("network,mode,capacity_bytes,bandwidth_bytes_per_s,step,layer,kind,phase"));
    let totals: Vec<&str> = csv.lines().filter(|l| l.contains(",TOTAL,")).collect();
    assert_eq!(totals.len(), 3 * 2);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("memory_summary.json")).unwrap())
            .unwrap();
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    assert_eq!(points[4]["capacity_bytes"], serde_json::Value::Null);
    assert_eq!(points[4]["traffic_bytes"], json["compulsory_bytes"]);
    let t = |i: usize| points[i]["traffic_bytes"].as_u64().unwrap();
    assert!(t(0) >= t(2) && t(2) >= t(4));
    let svg = std::fs::read_to_string(dir.path().join("memory_vs_capacity.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("1.5 TB/s"));
    // The sampled finite capacities are the x tick labels, in each of the two panels,
    // and the only vertical grid lines (no minor lines crowding the log axis).
    for tick in ["512 KiB", "4 MiB"] {
        assert_eq!(
            svg.matches(&format!(">\n{tick}\n</text>")).count(),
            2,
            "{tick}"
        );
    }
    let vertical = svg
        .lines()
        .filter(|l| l.starts_with("<line"))
        .filter(|l| {
            let attr = |k: &str| {
                l.split(&format!(" {k}=\""))
                    .nth(1)
                    .map(|r| r.split('"').next())
            };
            attr("x1") == attr("x2")
        })
        .count();
    assert_eq!(vertical, 2 * 2);
}
