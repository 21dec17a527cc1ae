//! `shellgate init bash|zsh|powershell`: print the hook to evaluate in the shell's startup file,
//! or (`--startup-line`) the line for that file, which names this binary by its path.

use crate::shell::templates::{self, HookShell};
use clap::Args;
use std::path::Path;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct InitArgs {
    #[arg(value_enum)]
    pub shell: HookShell,
    /// Print the line to add to the shell's startup file instead (`install.sh` prints and writes
    /// it): it names this binary by its path, and refuses to run lines unasked when the binary is
    /// missing.
    #[arg(long)]
    pub startup_line: bool,
}

pub fn run(args: InitArgs) -> ExitCode {
    let binary = match std::env::current_exe() {
        Ok(path) => path,
        Err(e) => {
            eprintln!("shellgate init: cannot locate the shellgate binary: {e}");
            return ExitCode::from(crate::error::Code::Internal.exit_status());
        }
    };
    if args.startup_line {
        return startup_line(args.shell, &binary);
    }
    print!(
        "{}",
        templates::render(args.shell, &binary.to_string_lossy())
    );
    ExitCode::SUCCESS
}

/// The startup line for `binary`, written `$HOME/…` when it lies beneath the home (as the README
/// shows it).
fn startup_line(shell: HookShell, binary: &Path) -> ExitCode {
    let home = crate::env::get().home();
    let named = match home.as_deref().and_then(|h| binary.strip_prefix(h).ok()) {
        Some(rest) if home.as_deref() != Some(Path::new("/")) => {
            format!("$HOME/{}", rest.to_string_lossy())
        }
        _ => binary.to_string_lossy().into_owned(),
    };
    match templates::startup_line(shell, &named) {
        Some(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        None => {
            eprintln!(
                "shellgate init: no startup line for {shell:?} with the binary at {named} (a path of \
                 letters, digits and `/._+-` only; PowerShell: see the README)"
            );
            ExitCode::from(crate::error::Code::Usage.exit_status())
        }
    }
}

/// `shellgate new-session`: print a fresh session id (the hooks call it when an interactive shell
/// starts).
pub fn new_session() -> ExitCode {
    println!("{}", crate::audit::SessionId::new_random().as_str());
    ExitCode::SUCCESS
}
