//! One module per subcommand, plus the few helpers they share.

pub mod auto_review;
pub mod check;
pub mod completions;
pub mod config;
pub mod doctor;
pub mod eval;
pub mod hook;
pub mod init;
pub mod log;
pub mod man;
pub mod mode;
pub mod mode_select;
pub mod panel;
pub mod rules;
pub mod run;
pub mod sandbox;
pub mod status;
pub mod wrap;

use crate::config::{self as cfg, Config, Locations};
use crate::error::{Error, Result};
use crate::mode::{Resolved, SessionFacts};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Ends a command: its own status on success; on an error, the refusal block on stderr and the
/// error code's exit status.
pub fn exit_with(result: Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err) => {
            eprint!(
                "{}",
                crate::error::refusal_for_reader(err.code, &err.reason)
            );
            ExitCode::from(err.code.exit_status())
        }
    }
}

/// The working directory a command is judged in: `--cwd` (made absolute) or the process's own.
pub fn working_dir(arg: Option<&Path>) -> PathBuf {
    let current = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    match arg {
        Some(p) if p.is_absolute() => p.to_owned(),
        Some(p) => current.join(p),
        None => current,
    }
}

/// Load the config in effect for `cwd` (user file plus project files upward).
pub fn load_config(cwd: &Path) -> std::result::Result<Config, Error> {
    cfg::load(&Locations::from_env(cwd.to_owned()))
}

/// Resolve the mode a line is decided in. The session facts (Full access confirmed, review turned
/// off) come from the session; without a session nothing is confirmed.
pub fn resolve_mode(requested: Option<&str>, config: &Config, session: SessionFacts) -> Resolved {
    crate::mode::resolve(requested, config, session)
}

/// Print JSON on one line.
pub fn print_json<T: serde::Serialize>(value: &T) {
    match serde_json::to_string(value) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("shellgate: cannot render JSON: {e}"),
    }
}

/// The config files in effect for the current directory (for `doctor`); none when the config
/// cannot be loaded (doctor reports the load error separately through `config check`).
pub fn config_files_in_effect() -> Vec<PathBuf> {
    load_config(&working_dir(None))
        .map(|c| c.files())
        .unwrap_or_default()
}
