//! shellgate's own subcommands as the rules and the hook see them: one row per name the command
//! line takes (aliases included), in one table. The unit test checks it against clap's tree both
//! ways, so a new subcommand cannot be added without saying what it is to the policy.
//!
//! Three questions, each answered here and nowhere else:
//! - **In the shell**: does a hooked shell run `shellgate SUB …` in the shell itself, with the
//!   hook's binary (`shell::in_shell`)? Only subcommands that read shellgate's state, or
//!   ask the person on the terminal themselves before changing it.
//! - **Changes shellgate**: is running it a change to shellgate itself (`builtin.self-protection`
//!   in [`super::rules`]): always, with arguments (a mode, auto review on or off), or never?
//! - **Reads only**: may some forms of it be known to only read
//!   ([`super::known_safe`] decides which forms, by their arguments)?

/// What running a subcommand changes of shellgate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changes {
    /// Nothing of shellgate's own (it may run a line, which is gated as any line).
    Nothing,
    /// Its state, when given arguments other than `status` (`mode full`, `auto-review off`).
    WithArguments,
    /// Always: the panel's buttons act with the standing of whoever started it; `uninstall`
    /// removes the hook and the binary.
    Always,
}

/// One subcommand (or alias).
#[derive(Debug, Clone, Copy)]
pub struct Own {
    pub name: &'static str,
    pub in_shell: bool,
    pub changes: Changes,
    pub reads_only: bool,
}

const fn own(name: &'static str, in_shell: bool, changes: Changes, reads_only: bool) -> Own {
    Own {
        name,
        in_shell,
        changes,
        reads_only,
    }
}

/// Every subcommand and alias clap takes, `help` included.
pub const OWN: [Own; 24] = [
    own("check", false, Changes::Nothing, false),
    own("eval", false, Changes::Nothing, false),
    own("run", false, Changes::Nothing, false),
    own("init", false, Changes::Nothing, false),
    own("hook", false, Changes::Nothing, false),
    // An agent with the network outside the line's sandbox: `builtin.self-protection` sees it by
    // its `via` (`shellgate wrap`), which the parser gives the agent's command.
    own("wrap", false, Changes::Nothing, false),
    own("wrap-enter", false, Changes::Nothing, false),
    own("wrap-agent", false, Changes::Nothing, false),
    own("new-session", false, Changes::Nothing, false),
    own("config", true, Changes::Nothing, true),
    own("rules", true, Changes::Nothing, true),
    own("exit-codes", true, Changes::Nothing, true),
    own("status", true, Changes::Nothing, true),
    own("mode", true, Changes::WithArguments, true),
    own("permissions", true, Changes::WithArguments, true),
    own("log", true, Changes::Nothing, true),
    own("auto-review", true, Changes::WithArguments, true),
    own("panel", true, Changes::Always, false),
    own("sandbox", false, Changes::Nothing, false),
    own("doctor", true, Changes::Nothing, true),
    own("completions", false, Changes::Nothing, false),
    own("uninstall", true, Changes::Always, false),
    own("man", false, Changes::Nothing, false),
    own("help", true, Changes::Nothing, true),
];

/// The row of subcommand `name`, if shellgate has one.
pub fn lookup(name: &str) -> Option<&'static Own> {
    OWN.iter().find(|own| own.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What changes shellgate never runs in the shell unasked: a subcommand that changes it runs in
    /// the shell only if it asks the person itself (`mode`, `auto-review`: their own questions;
    /// `uninstall`, `panel`: flagged for the person first).
    #[test]
    fn only_what_reads_or_asks_runs_in_the_shell() {
        for own in OWN.iter().filter(|own| own.in_shell) {
            assert!(
                own.reads_only || own.changes == Changes::Always,
                "{} runs in the shell, neither reads only nor is always flagged",
                own.name
            );
        }
    }
}
