//! Runs the memory model as `sresim memory` would, for the worked examples of docs/memory.md:
//! `cargo run --release -p memory --example memory_report -- --workload resnet50 --batch 32
//!  --capacity 1MiB,4MiB,16MiB,64MiB,256MiB,1GiB,inf --bandwidth 900GB/s --out out/memory`.

use clap::Parser;
use memory::{ComputeSource, MemoryArgs, MemoryConfig};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: MemoryArgs,
    /// Override memory config keys as a JSON object, e.g. '{"optimizer": "adam"}'.
    #[arg(long)]
    config: Option<String>,
}

fn main() {
    let cli = Cli::parse();
    let cfg = match cli
        .config
        .as_deref()
        .map(serde_json::from_str::<MemoryConfig>)
    {
        None => MemoryConfig::default(),
        Some(Ok(c)) => c,
        Some(Err(e)) => {
            eprintln!("error: --config: {e}");
            std::process::exit(2);
        }
    };
    let t = std::time::Instant::now();
    if let Err(e) = memory::run(&cli.args, &cfg, ComputeSource::Peak) {
        eprintln!("error: {e:#}");
        std::process::exit(2);
    }
    eprintln!("({:.2} s)", t.elapsed().as_secs_f64());
}
