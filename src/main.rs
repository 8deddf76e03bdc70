//! The `sresim` binary: parses the command line, runs, and turns every failure into one
//! `error: ...` line and a non-zero exit status.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use clap::Parser;
use sresim::cli::{Cli, Command};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || matches!(
                    e.kind(),
                    ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                )
            {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            let msg = first.trim_start_matches("error: ");
            let _ = writeln!(std::io::stderr(), "error: {msg} (see sresim --help)");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Run(args) => sresim::commands::run(&args),
        Command::Workloads(args) => sresim::commands::workloads(&args),
        Command::Sweep(args) => sresim::sweep::sweep_command(&args),
        Command::Merge(args) => sresim::sweep::merge_command(&args),
        Command::Plot(args) => sresim::sweep::plot_command(&args),
        Command::Compare(args) => sresim::sweep::compare_command(&args),
        Command::Memory(cmd) => sresim::commands::memory(&cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`sresim workloads | head -1`): stop quietly, with the
        // status of a process ended by SIGPIPE, as a shell reports it.
        Err(e) if broken_pipe(&e) => ExitCode::from(128 + 13),
        Err(e) => {
            let msg = format!("{e:#}").replace('\n', " ");
            let _ = writeln!(std::io::stderr(), "error: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// Whether a write to a closed pipe is anywhere in the error's chain.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
