//! The `ndx` command line: a thin layer over the library crates.
//!
//! Exit codes: 0 success; 1 the command ran but found bad input (e.g. `dissect` met a
//! malformed packet; every other packet was still printed); 2 usage or I/O error.

mod capture;
mod dissect;
mod hex;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// ndx: a Named Data Networking router for Linux.
#[derive(Debug, Parser)]
#[command(name = "ndx", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Decode NDN packets (hex lines, or a pcap/pcapng capture) and print their TLV trees.
    Dissect(dissect::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Dissect(args) => dissect::run(&args),
    };
    match result {
        Ok(outcome) => ExitCode::from(outcome),
        Err(e) => {
            eprintln!("ndx: {e}");
            ExitCode::from(2)
        }
    }
}
