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
pub mod uninstall;
pub mod wrap;

use crate::error::{Reader, Result, print_refusal};
use std::path::PathBuf;
use std::process::ExitCode;

/// Ends a command: its own status on success; on an error, the refusal on stderr (for whoever
/// reads it) and the error code's exit status.
pub fn exit_with(result: Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err) => ExitCode::from(print_refusal(&err, Reader::Whoever)),
    }
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
    crate::config::load_for(&crate::session::working_dir(None))
        .map(|c| c.files())
        .unwrap_or_default()
}
