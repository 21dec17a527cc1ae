//! Command-line interface: argument parsing and dispatch to `cmd::*`.

use crate::cmd;
use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

/// The program's name, as clap, the completions and the manual page know it.
pub const NAME: &str = "shellgate";

#[derive(Parser)]
#[command(
    name = NAME,
    version,
    about = "A gate between shell command lines and the kernel",
    long_about = "A gate between shell command lines and the kernel.\n\n\
        shellgate decides every shell command line before any of it runs. Intake refuses a line \
        it cannot show faithfully; rules route the rest to allow, a reviewer model, a person or \
        never, as the mode says; an allowed line runs in a Landlock and seccomp sandbox; every \
        step is recorded in the session's hash-chained audit log. Every failure denies, and says \
        which failure it was."
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
    /// Print the completion script for a shell: shellgate completions bash > FILE.
    Completions(cmd::completions::CompletionsArgs),
    /// Print the manual page shellgate.1 (roff), for `install.sh` and packagers.
    #[command(hide = true)]
    Man,
}

/// The command line as a person sees it: the root's own arguments and its visible subcommands,
/// with every hidden one left out. `clap_complete` walks every subcommand, hidden or not, and
/// `clap::Command` cannot remove one, so the root is put together again from [`Cli`]'s own
/// definitions (nothing of the interface is restated here, so it cannot drift).
pub fn visible_command() -> clap::Command {
    let full = Cli::command();
    let mut root = clap::Command::new(NAME)
        .args(full.get_arguments().cloned())
        .subcommands(
            full.get_subcommands()
                .filter(|sub| !sub.is_hide_set())
                .cloned(),
        );
    // `version` on `Cli` is the package's (clap's `Str` is built from `&'static str` only).
    if full.get_version().is_some() {
        root = root.version(env!("CARGO_PKG_VERSION"));
    }
    if let Some(about) = full.get_about() {
        root = root.about(about.clone());
    }
    root
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
        Command::Completions(args) => cmd::completions::run(args),
        Command::Man => cmd::man::run(),
    }
}
