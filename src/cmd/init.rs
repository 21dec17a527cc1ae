//! `shellgate init bash|zsh|powershell`: print the hook to evaluate in the shell's startup file.

use crate::shell::templates::{self, HookShell};
use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct InitArgs {
    #[arg(value_enum)]
    pub shell: HookShell,
}

pub fn run(args: InitArgs) -> ExitCode {
    let binary = match std::env::current_exe() {
        Ok(path) => path,
        Err(e) => {
            eprintln!("shellgate init: cannot locate the shellgate binary: {e}");
            return ExitCode::from(crate::error::Code::Internal.exit_status());
        }
    };
    print!(
        "{}",
        templates::render(args.shell, &binary.to_string_lossy())
    );
    ExitCode::SUCCESS
}

/// `shellgate new-session`: print a fresh session id (the hooks call it when an interactive shell
/// starts).
pub fn new_session() -> ExitCode {
    println!("{}", crate::audit::SessionId::new_random().as_str());
    ExitCode::SUCCESS
}
