//! Command-line interface: argument parsing and dispatch to `cmd::*`.

use crate::cmd;
use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

/// The program's name, as clap, the completions and the manual page know it.
pub const NAME: &str = "shellgate";

#[derive(Parser, Debug)]
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

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Decide a line without running it: allow, deny, review or ask.
    Check(cmd::check::CheckArgs),
    /// Run labelled cases through the rules and the reviewer, or (`--sessions`) whole agent
    /// sessions under `wrap`; write a report (exit 0: all passed).
    Eval(cmd::eval::EvalArgs),
    /// Decide a line, ask whoever must be asked, run it in the sandbox, and record it.
    Run(cmd::run::RunArgs),
    /// Print the hook for a shell, or (`--startup-line`) the line that loads it.
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
    /// Remove the init lines from the startup files, then the binary, its completions and manual
    /// page (the config and the audit log stay).
    Uninstall,
    /// Print the manual page shellgate.1 (roff), for `install.sh` and packagers.
    #[command(hide = true)]
    Man,
}

/// The command line, parsed. The per-line commands (`hook`, `run`, `sandbox`) start once for
/// every line a shell or an agent runs, and building clap's whole tree of subcommands costs more
/// than parsing them (≈ 0.13 ms of each line, `benches/sandbox.sh`); they are parsed by a tree
/// that holds only their own subcommand, from the same definitions. Whatever does not parse there
/// (`--help`, a usage error) is parsed again by the whole tree, which answers as it always does.
fn parse(args: Vec<std::ffi::OsString>) -> Result<Cli, clap::Error> {
    match per_line_command(&args) {
        Some(command) => Ok(Cli { command }),
        None => Cli::try_parse_from(args),
    }
}

fn per_line_command(args: &[std::ffi::OsString]) -> Option<Command> {
    match args.get(1)?.to_str()? {
        "hook" => parse_one("hook", args).map(Command::Hook),
        "run" => parse_one("run", args).map(Command::Run),
        "sandbox" => parse_one("sandbox", args).map(Command::Sandbox),
        _ => None,
    }
}

/// `args` as `shellgate NAME …` with only that subcommand known: `None` unless it parses.
fn parse_one<A: clap::Args + clap::FromArgMatches>(
    name: &'static str,
    args: &[std::ffi::OsString],
) -> Option<A> {
    let root = clap::Command::new(NAME).subcommand(A::augment_args(clap::Command::new(name)));
    let matches = root.try_get_matches_from(args).ok()?;
    let (_, sub) = matches.subcommand()?;
    A::from_arg_matches(sub).ok()
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

/// Runs the command line `args` (`argv`, from the program's name on).
pub fn main(args: Vec<std::ffi::OsString>) -> ExitCode {
    // Mounted over a shell by `wrap`, shellgate answers to that shell's name.
    if let Some(kind) = args
        .first()
        .map(std::ffi::OsString::as_os_str)
        .and_then(crate::wrap::entry::invoked_as)
    {
        return crate::wrap::entry::run(kind, args[1..].to_vec());
    }
    let cli = match parse(args) {
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
        Command::Completions(args) => cmd::completions::run(args, visible_command(), NAME),
        Command::Uninstall => cmd::uninstall::run(),
        Command::Man => cmd::man::run(Cli::command()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::own_commands::OWN;
    use std::collections::BTreeSet;
    use std::ffi::OsString;

    fn argv(words: &[&str]) -> Vec<OsString> {
        std::iter::once("shellgate")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    /// The short way must give exactly what the whole tree gives, or nothing.
    #[test]
    fn per_line_commands_parse_as_the_whole_tree_parses_them() {
        let lines: &[&[&str]] = &[
            &["run", "--", "echo hi"],
            &[
                "run",
                "--mode",
                "read-only",
                "--shell",
                "zsh",
                "--",
                "ls -la",
            ],
            &["run", "--json", "--", "git status"],
            &["hook", "bash", "--", "ls"],
            &["hook", "bash", "--prepare", "--pid", "42"],
            &["hook", "bash", "--shape", "--histexpand", "--", "ls -la"],
            &[
                "hook",
                "zsh",
                "--shell-dir",
                "/tmp/d",
                "--token",
                "t1",
                "--tty-stdio",
            ],
            &[
                "run",
                "--shell",
                "bash",
                "--from-hook",
                "--",
                "echo hi",
                "bash",
                "a",
                "-b",
            ],
            &["sandbox", "--", "/bin/true"],
            &[
                "sandbox",
                "--policy",
                "read-only",
                "--network",
                "--",
                "ls",
                "-la",
            ],
            &[
                "sandbox",
                "--writable",
                "/tmp",
                "--tcp-port",
                "443",
                "--",
                "curl",
                "-v",
            ],
        ];
        for words in lines {
            let args = argv(words);
            let whole = Cli::try_parse_from(&args).map(|cli| format!("{:?}", cli.command));
            let short = per_line_command(&args).map(|command| format!("{command:?}"));
            assert_eq!(short.as_deref(), whole.as_deref().ok(), "{words:?}");
            assert!(short.is_some(), "{words:?} should take the short way");
        }
    }

    /// Help and usage errors come from the whole tree: the short way declines them.
    #[test]
    fn help_and_errors_are_left_to_the_whole_tree() {
        for words in [
            &["run", "--help"][..],
            &["sandbox", "-h"],
            &["hook", "fish", "--", "ls"],
            &["run"],
            &["run", "--shell", "fish", "--", "ls"],
            &["sandbox", "--policy"],
            &["sandbox", "--network", "--tcp-port", "443", "--", "ls"],
            &["hook", "bash", "--shape", "--prepare"],
        ] {
            let args = argv(words);
            assert!(per_line_command(&args).is_none(), "{words:?}");
            assert!(parse(args).is_err(), "{words:?}");
        }
        let help = parse(argv(&["run", "--help"])).err().map(|e| e.to_string());
        assert!(
            help.is_some_and(|text| text.contains("Decide a line, ask whoever must be asked")),
            "`run --help` shows the subcommand's own description"
        );
    }

    /// The own-commands table of the policy (`policy::own_commands::OWN`) names exactly what clap
    /// takes: every subcommand and alias, once.
    #[test]
    fn the_table_is_the_command_lines_subcommands() {
        let cli = Cli::command();
        let mut clap: BTreeSet<String> = BTreeSet::new();
        for sub in cli.get_subcommands() {
            clap.insert(sub.get_name().to_owned());
            clap.extend(sub.get_all_aliases().map(str::to_owned));
        }
        // clap adds `help` when the tree is built.
        clap.insert("help".to_owned());
        let table: Vec<&str> = OWN.iter().map(|own| own.name).collect();
        let unique: BTreeSet<String> = table.iter().map(|n| (*n).to_owned()).collect();
        assert_eq!(unique.len(), table.len(), "a name is in the table twice");
        assert_eq!(unique, clap, "the table and clap's subcommands differ");
    }

    /// Every shell is in `ShellKind::ALL`: clap's list of the enum's values is the check.
    #[test]
    fn every_shell_is_in_the_list_of_shells() {
        use crate::parse::ShellKind;
        use clap::ValueEnum;
        assert_eq!(ShellKind::value_variants(), ShellKind::ALL);
    }
}
