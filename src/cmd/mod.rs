//! One module per subcommand.

pub mod auto_review;
pub mod log;
pub mod mode_select;

use crate::error::{Result, refusal_block};
use std::process::ExitCode;

/// Ends a command: its own status on success; on an error, the refusal block on stderr and the
/// error code's exit status.
pub fn exit_with(result: Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err) => {
            eprint!("{}", refusal_block(err.code, &err.reason));
            ExitCode::from(err.code.exit_status())
        }
    }
}
