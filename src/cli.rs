//! Command-line interface: argument parsing and dispatch to `cmd::*`.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "shellgate",
    version,
    about = "A gate between shell command lines and the kernel"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Print the exit-code table (Markdown).
    ExitCodes,
    /// Show a session's audit log, or verify its hash chain (`log verify`).
    Log(crate::cmd::log::LogArgs),
    /// Turn auto review on or off, show its state, or approve a denied line once.
    AutoReview(crate::cmd::auto_review::AutoReviewArgs),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::ExitCodes => {
            print!("{}", crate::error::exit_code_table());
            ExitCode::SUCCESS
        }
        Command::Log(args) => crate::cmd::log::run(args),
        Command::AutoReview(args) => crate::cmd::auto_review::run(args),
    }
}
