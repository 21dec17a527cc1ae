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
    /// Run a program inside the OS sandbox (Landlock + seccomp + protected paths).
    Sandbox(crate::cmd::sandbox::Args),
    /// Report what this system can enforce (kernel, Landlock, seccomp, namespaces, shells).
    Doctor(crate::cmd::doctor::Args),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::ExitCodes => {
            print!("{}", crate::error::exit_code_table());
            ExitCode::SUCCESS
        }
        Command::Sandbox(args) => crate::cmd::sandbox::run(args),
        // TODO(config): pass the config files in effect once the config module can list them.
        Command::Doctor(args) => crate::cmd::doctor::run(&args, None),
    }
}
