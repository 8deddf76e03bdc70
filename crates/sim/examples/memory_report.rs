//! Runs the memory model as `sresim memory` would, for the worked examples of docs/memory.md:
//! `cargo run --release -p sim --example memory_report -- --workload resnet50 --batch 32
//!  --capacity 1MiB,4MiB,16MiB,64MiB,256MiB,1GiB,inf --bandwidth 900GB/s --out out/memory`.

use clap::Parser;
use memory::{ComputeSource, MemoryArgs, MemoryConfig};

/// The model's flags, as `sresim memory` takes them.
#[derive(Parser)]
struct Cli {
    #[arg(long, default_value = "resnet50")]
    workload: String,
    #[arg(long, default_value_t = 32)]
    batch: usize,
    #[arg(long, value_delimiter = ',', default_value = "16MiB")]
    capacity: Vec<String>,
    #[arg(long, value_delimiter = ',', default_value = "900GB/s")]
    bandwidth: Vec<String>,
    #[arg(long)]
    mode: Option<String>,
    #[arg(long)]
    seq_len: Option<usize>,
    #[arg(long, short = 'o')]
    out: Option<std::path::PathBuf>,
    #[arg(long)]
    plot: bool,
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
    if let Err(e) = sim::memory_out::run(
        &MemoryArgs {
            workload: cli.workload,
            batch: cli.batch,
            capacity: cli.capacity,
            bandwidth: cli.bandwidth,
            mode: cli.mode,
            seq_len: cli.seq_len,
            out: cli.out,
            plot: cli.plot,
        },
        &cfg,
        ComputeSource::Peak,
    ) {
        eprintln!("error: {e:#}");
        std::process::exit(2);
    }
    eprintln!("({:.2} s)", t.elapsed().as_secs_f64());
}
