//! `shellgate sandbox`: enter the sandbox and become the program.

use crate::error::Result;
use crate::mode::SandboxPolicy;
use crate::sandbox::{self, Policy, Protection, Spec};
use clap::Args as ClapArgs;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run PROGRAM inside the OS sandbox (Landlock + seccomp + read-only protected paths).
///
/// The program's exit status and signals pass through unchanged. shellgate's own failures exit
/// 211 (SANDBOX_UNAVAILABLE: this system cannot enforce the sandbox) or 212 (SANDBOX_EXEC_FAILED:
/// the program could not be started), with a one-line reason on stderr.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// workspace-write or read-only (full-access means no sandbox and is not accepted here).
    #[arg(long, default_value = "workspace-write", value_name = "POLICY")]
    pub policy: String,
    /// The writable workspace [default: git top-level of the current directory, else itself].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// An extra writable directory (repeatable; skipped when it does not exist).
    #[arg(long = "writable", value_name = "DIR")]
    pub writable: Vec<PathBuf>,
    /// Allow network access.
    #[arg(long)]
    pub network: bool,
    /// Explicitly run without one protection this system cannot enforce (repeatable).
    #[arg(long = "drop-protection", value_enum, value_name = "PROTECTION")]
    pub drop_protection: Vec<Protection>,
    /// The program and its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM"
    )]
    pub command: Vec<OsString>,
}

pub fn run(args: Args) -> ExitCode {
    let Some((program, rest)) = args.command.split_first() else {
        return ExitCode::from(crate::error::Code::Usage.exit_status());
    };
    let error = sandbox::launch(|| spec(&args), program, rest);
    eprintln!("{} {}", error.code.marker(), error);
    ExitCode::from(error.code.exit_status())
}

fn spec(args: &Args) -> Result<Spec> {
    let policy = SandboxPolicy::from(Policy::parse(&args.policy)?);
    let mut spec = match &args.workspace {
        Some(dir) => Spec::new(policy, dir)?,
        None => {
            let cwd = std::env::current_dir().map_err(|e| {
                crate::error::Error::usage(format!("cannot read the current directory: {e}"))
            })?;
            Spec::for_cwd(policy, &cwd)?
        }
    };
    for dir in &args.writable {
        spec = spec.with_writable(dir)?;
    }
    spec = spec.with_network(args.network);
    for protection in &args.drop_protection {
        spec = spec.dropping(*protection);
    }
    Ok(spec)
}
