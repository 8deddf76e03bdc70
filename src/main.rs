//! The `sresim` binary: parses the command line, calls the one driver function of the
//! command (crates `commands`, `sweep`, `search`), and turns every failure into one
//! `error: ...` line and a non-zero exit status.

mod cli;

use clap::Parser;
use cli::{Cli, Command};
use std::io::Write;
use std::process::ExitCode;

/// clap's message cut to one line. A first line that ends with `:` introduces a list
/// (`the following required arguments were not provided:` and the missing flags, one
/// per indented line): the list is kept, joined by commas, so that the line names the
/// arguments (docs/errors.md).
fn one_line(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("invalid arguments");
    let first = first.trim_start_matches("error: ");
    if !first.ends_with(':') {
        return first.to_string();
    }
    let list: Vec<&str> = lines
        .take_while(|l| l.starts_with(' ') && !l.trim().is_empty())
        .map(str::trim)
        .collect();
    match list.is_empty() {
        true => first.trim_end_matches(':').to_string(),
        false => format!("{first} {}", list.join(", ")),
    }
}

fn main() -> ExitCode {
    commands::ignore_file_size_signal();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                // Help and version are output like any other: a stdout that cannot take
                // them (`sresim --version > /dev/full`) is one line and status 1.
                let mut out = std::io::stdout().lock();
                return match out
                    .write_all(e.render().to_string().as_bytes())
                    .and_then(|()| out.flush())
                {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(w) if w.kind() == std::io::ErrorKind::BrokenPipe => {
                        ExitCode::from(128 + 13)
                    }
                    Err(w) => {
                        let w = w.to_string();
                        let w = w.split(" (os error ").next().unwrap_or_default();
                        let _ = writeln!(std::io::stderr(), "error: stdout: cannot write: {w}");
                        ExitCode::FAILURE
                    }
                };
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                // `sresim` alone (or a command group without its subcommand) is a usage
                // error: the help goes to stderr and the status is 2, like any other.
                eprint!("{}", e.render());
                return ExitCode::from(2);
            }
            let _ = writeln!(
                std::io::stderr(),
                "error: {} (see sresim --help)",
                one_line(&e.to_string())
            );
            return ExitCode::from(2);
        }
    };
    // Before any work: rayon's global pool sized by sresim, not by RAYON_NUM_THREADS.
    commands::init_global_pool();
    let result = match cli.command {
        Command::Run(args) => commands::run::run(&args),
        Command::Workloads(args) => commands::workloads::run(&args),
        Command::Sweep(args) => sweep::sweep_command(&args),
        Command::Merge(args) => sweep::merge_command(&args),
        Command::Plot(args) => sweep::plot_command(&args),
        Command::Compare(args) => sweep::compare_command(&args),
        Command::Memory(cmd) => commands::memory::run(&cmd),
        Command::Accuracy(args) => commands::accuracy::run(&args),
        Command::AccuracyMerge(args) => commands::accuracy_merge::run(&args),
        Command::Check(args) => commands::check::run(&args),
        Command::Search(args) => search::search_command(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`sresim workloads | head -1`): stop quietly, with the
        // status of a process ended by SIGPIPE, as a shell reports it.
        Err(e) if broken_pipe(&e) => ExitCode::from(128 + 13),
        Err(e) => {
            // One line, and never a page: a message that quotes a long input is cut.
            let _ = writeln!(std::io::stderr(), "error: {}", commands::error_message(&e));
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
