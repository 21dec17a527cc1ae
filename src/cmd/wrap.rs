//! `shellgate wrap -- AGENT [ARGS…]` and its internal steps: the arguments; the work is in
//! [`crate::wrap`].

use crate::wrap::WrapOptions;
use crate::wrap::enter::EnterOptions;
use clap::Args;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct WrapArgs {
    /// Mode every line of the agent is decided in (default: as for any session).
    #[arg(long)]
    pub mode: Option<String>,
    /// Do not run the agent itself in the sandbox (only its shells are gated).
    #[arg(long)]
    pub no_contain: bool,
    /// Extra directories the contained agent may write (its own state, caches).
    #[arg(long = "writable", value_name = "DIR")]
    pub writable: Vec<PathBuf>,
    /// The agent and its arguments.
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub agent: Vec<OsString>,
}

/// Arguments of the hidden `wrap-enter` step (re-executed, single-threaded, to set up the mounts).
#[derive(Args, Debug)]
pub struct EnterArgs {
    #[arg(long)]
    pub dir: PathBuf,
    #[arg(long)]
    pub contain: bool,
    #[arg(long = "writable", value_name = "DIR")]
    pub writable: Vec<PathBuf>,
    /// Read-only inside a writable directory (an agent's shell snapshots, which only the broker
    /// writes).
    #[arg(long = "read-only", value_name = "DIR")]
    pub read_only: Vec<PathBuf>,
    /// A credential store the contained agent may read (its own login; its lines still cannot).
    #[arg(long = "unhide", value_name = "PATH")]
    pub unhide: Vec<PathBuf>,
    /// `SOURCE=TARGET`: SOURCE (a file) mounted writable over TARGET in the agent's namespace.
    #[arg(long = "bind", value_name = "SOURCE=TARGET")]
    pub bind: Vec<OsString>,
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub agent: Vec<OsString>,
}

/// Arguments of the hidden `wrap-agent` step: the agent's own process, which marks itself and
/// becomes the agent.
#[derive(Args, Debug)]
pub struct AgentArgs {
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub agent: Vec<OsString>,
}

pub fn run(args: WrapArgs) -> ExitCode {
    let options = WrapOptions {
        mode: args.mode,
        contain: !args.no_contain,
        writable: args.writable,
        agent: args.agent,
    };
    super::exit_with(crate::wrap::run(&options))
}

pub fn enter(args: EnterArgs) -> ExitCode {
    let options = EnterOptions {
        dir: args.dir,
        contain: args.contain,
        writable: args.writable,
        read_only: args.read_only,
        unhide: args.unhide,
        bind: args.bind,
        agent: args.agent,
    };
    crate::wrap::enter::run(&options)
}

pub fn agent(args: AgentArgs) -> ExitCode {
    crate::wrap::enter::become_agent(&args.agent)
}
