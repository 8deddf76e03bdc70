//! The crossbar-layer list of every built-in network, rendered one layer a line and
//! compared with tests/zoo_layers.txt: names, order and geometry are what `run` replays
//! and what layers.csv shows, so any change to them is visible here. Refresh the file
//! with `UPDATE_EXPECT=1 cargo test -p workload --test zoo_layers` after a deliberate change.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs
// Test helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write;

fn render() -> String {
    let mut out = String::new();
    for name in workload::zoo::names() {
        let layers = workload::zoo::layers(name).unwrap();
        writeln!(out, "{name}: {} layers", layers.len()).unwrap();
        for l in layers {
            let g = &l.geom;
            writeln!(
                out,
                "  {} {} in={} out={} k={:?} s={:?} p={:?} d={:?} g={} hw={:?}",
                l.name,
                l.kind.as_str(),
                g.in_channels,
                g.out_channels,
                g.kernel,
                g.stride,
                g.padding,
                g.dilation,
                g.groups,
                g.input_hw
            )
            .unwrap();
        }
    }
    out
}

#[test]
fn crossbar_layers_of_every_zoo_network_are_as_recorded() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/zoo_layers.txt");
    let got = render();
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap();
    assert!(
        got == want,
        "crossbar layers differ from {}",
        path.display()
    );
}
