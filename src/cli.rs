//! Command-line interface: argument parsing and dispatch to `cmd::*`.

use crate::cmd;
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
    /// Decide a line without running it: allow, deny, review or ask.
    Check(cmd::check::CheckArgs),
    /// Run labelled cases through the rules and the reviewer; write a report (exit 0: all passed).
    Eval(cmd::eval::EvalArgs),
    /// Decide a line, ask whoever must be asked, run it in the sandbox, and record it.
    Run(cmd::run::RunArgs),
    /// Print the hook for a shell: eval "$(shellgate init bash)".
    Init(cmd::init::InitArgs),
    /// The interactive hooks' call for each line (see `shellgate init`).
    #[command(hide = true)]
    Hook(cmd::hook::HookArgs),
    /// Run an agent so that every shell it starts is gated (and, by default, the agent contained).
    Wrap(cmd::wrap::WrapArgs),
    /// The agent's side of `wrap` (internal).
    #[command(hide = true)]
    WrapEnter(cmd::wrap::EnterArgs),
    /// The wrapped agent's own process (internal).
    #[command(hide = true)]
    WrapAgent(cmd::wrap::AgentArgs),
    /// Print a fresh session id (used by the hooks).
    #[command(hide = true)]
    NewSession,
    /// Show the effective configuration, or validate the config files.
    Config(cmd::config::ConfigArgs),
    /// List every rule in effect.
    Rules(cmd::rules::RulesArgs),
    /// Print the exit-code table (Markdown).
    ExitCodes,
    /// The session at a glance: modes, sandbox, auto review, budgets, breaker, recent verdicts.
    Status(cmd::status::StatusArgs),
    /// List the modes, or select one (a person at a terminal only; Full access asks to confirm).
    #[command(alias = "permissions")]
    Mode(cmd::mode::ModeArgs),
    /// Show a session's audit log, or verify its hash chain (`log verify`).
    Log(crate::cmd::log::LogArgs),
    /// Turn auto review on or off, show its state, or approve a denied line once.
    AutoReview(crate::cmd::auto_review::AutoReviewArgs),
    /// Serve the review panel: a local web page of a session's auto review, with its buttons.
    Panel(cmd::panel::PanelArgs),
    /// Run a program inside the OS sandbox (Landlock + seccomp + protected paths).
    Sandbox(crate::cmd::sandbox::Args),
    /// Report what this system can enforce (kernel, Landlock, seccomp, namespaces, shells).
    Doctor(crate::cmd::doctor::Args),
}

pub fn main() -> ExitCode {
    // Mounted over a shell by `wrap`, shellgate answers to that shell's name.
    let mut args = std::env::args_os();
    if let Some(kind) = args
        .next()
        .as_deref()
        .and_then(crate::shell::entry::invoked_as)
    {
        return crate::shell::entry::run(kind, args.collect());
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // clap uses 0 for --help/--version and 2 for usage errors.
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::Eval(args) => cmd::eval::run(args),
        Command::Status(args) => cmd::status::run(args),
        Command::Mode(args) => cmd::mode::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Init(args) => cmd::init::run(args),
        Command::Hook(args) => cmd::hook::run(args),
        Command::NewSession => cmd::init::new_session(),
        Command::Wrap(args) => cmd::wrap::run(args),
        Command::WrapEnter(args) => cmd::wrap::enter(args),
        Command::WrapAgent(args) => cmd::wrap::agent(args),
        Command::Config(args) => cmd::config::run(args),
        Command::Rules(args) => cmd::rules::run(args),
        Command::ExitCodes => {
            print!("{}", crate::error::exit_code_table());
            ExitCode::SUCCESS
        }
        Command::Log(args) => crate::cmd::log::run(args),
        Command::AutoReview(args) => crate::cmd::auto_review::run(args),
        Command::Panel(args) => cmd::panel::run(args),
        Command::Sandbox(args) => crate::cmd::sandbox::run(args),
        Command::Doctor(args) => cmd::doctor::run(&args, Some(cmd::config_files_in_effect())),
    }
}
