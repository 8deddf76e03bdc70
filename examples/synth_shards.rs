//! Writes synthetic sweep shards for the merge benchmark (scripts/bench-merge):
//! `synth_shards DIR POINTS ROWS SHARDS` makes DIR/shard-0 .. DIR/shard-(SHARDS-1).

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize| -> usize {
        a.get(i).and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            eprintln!("usage: synth_shards DIR POINTS ROWS SHARDS");
            std::process::exit(2)
        })
    };
    let (points, rows, shards) = (num(1), num(2), num(3));
    let dir = std::path::Path::new(&a[0]);
    if let Err(e) = sweep::synth::write_shards(dir, points, rows, shards) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
