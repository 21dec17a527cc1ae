//! shellgate's own environment variables, in one table: each name once, who sets it, who reads
//! it, and what its value is trusted to decide.
//!
//! The rule every row follows: **an environment variable never widens what a line may do.** The
//! environment belongs to whoever starts the process, so a value can only choose among things
//! that process could have had anyway (which session log, JSON output, which program runs its
//! own line), narrow the sandbox (the test seams), or mark a process tree for shellgate's own
//! hooks. Where a mark could be forged it gains nothing: the hooks without `wrap` are cooperative
//! (a process that sets `SHELLGATE_ACTIVE` skips them, as it could by unsetting `BASH_ENV`), and
//! under `wrap` no variable lets a shell through unjudged (`wrap::entry`). A line typed in a
//! hooked shell cannot set one in that shell without a person: `SHELLGATE_*` assignments are hook
//! state (`parse::shell_vars`, asked in every mode), and a sandboxed line's change to one is never
//! applied to the shell (`shell::state`).
//!
//! The binary reads every one of them once, at start-up, into a typed field (its `src/env.rs`,
//! which hands the sandbox crate the marker and the test seams); the constants here name them.
//! `shellgate man`'s ENVIRONMENT section is generated from the rows a person sets.

use crate::parse::ShellKind;

/// Every one of shellgate's variables begins with this; a line's change to one is never applied
/// to the interactive shell, and `eval`'s agent harness starts agents without any.
pub const PREFIX: &str = "SHELLGATE_";

pub const SESSION_ENV: &str = "SHELLGATE_SESSION";
pub const JSON_ENV: &str = "SHELLGATE_JSON";
pub const ACTIVE_ENV: &str = "SHELLGATE_ACTIVE";
pub const SANDBOXED_ENV: &str = "SHELLGATE_SANDBOXED";
pub const BROKER_ENV: &str = "SHELLGATE_BROKER";
pub const WRAP_DIR_ENV: &str = "SHELLGATE_WRAP_DIR";
pub const AGENT_ENV: &str = "SHELLGATE_WRAP_AGENT";
pub const USER_BASHRC_ENV: &str = "SHELLGATE_USER_BASHRC";
pub const USER_ZDOTDIR_ENV: &str = "SHELLGATE_USER_ZDOTDIR";
pub const NO_NAMESPACES_ENV: &str = "SHELLGATE_SANDBOX_NO_NAMESPACES";
pub const ABI_MAX_ENV: &str = "SHELLGATE_LANDLOCK_ABI_MAX";
pub const TEST_PANIC_ENV: &str = "SHELLGATE_TEST_PANIC";

/// The variable through which `wrap` hands the shell entry point the real shell of `kind`, which
/// it has hidden behind the entry point at its usual path.
pub fn real_shell_env(kind: ShellKind) -> &'static str {
    match kind {
        ShellKind::Bash => "SHELLGATE_REAL_BASH",
        ShellKind::Zsh => "SHELLGATE_REAL_ZSH",
        ShellKind::Sh => "SHELLGATE_REAL_SH",
        ShellKind::Pwsh => "SHELLGATE_REAL_PWSH",
    }
}

/// Who sets a variable, and so what its value may decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// A person's choice for their own processes: it selects among outcomes that are equally
    /// safe (which of their sessions logs the line, the form of a refusal). Listed in the manual.
    Person,
    /// Set by shellgate for the processes it starts, to tell them where they are. Whoever starts a
    /// process can set it too, and gains nothing by it (see the module doc).
    Marker,
    /// A test seam: it can only take a protection away from what the kernel offers, and a
    /// sandbox missing a protection refuses the line unless the configuration allows dropping
    /// that one.
    Narrowing,
    /// Read only by a build with the test seam compiled in (`cfg(shellgate_panic_seam)`).
    TestBuild,
}

/// One of shellgate's variables.
#[derive(Debug, Clone, Copy)]
pub struct OwnVar {
    pub name: &'static str,
    pub trust: Trust,
    /// Who sets it.
    pub set_by: &'static str,
    /// What it does, as the manual says it.
    pub meaning: &'static str,
}

/// Every variable shellgate reads or sets (the real shells' four as one row, `SHELLGATE_REAL_*`).
pub const VARS: [OwnVar; 13] = [
    OwnVar {
        name: SESSION_ENV,
        trust: Trust::Person,
        set_by: "the shell hooks (`shellgate init`) and `wrap`",
        meaning: "The session whose log records the line and whose state (review on or off, \
                  breaker, budgets, Full access) decides it; the shell hooks set it. A set value \
                  that is not a session id is an error, not a new session.",
    },
    OwnVar {
        name: JSON_ENV,
        trust: Trust::Person,
        set_by: "the caller of `shellgate run`",
        meaning: "Set to 1, run prints a refusal as one JSON object on standard error, as with \
                  --json.",
    },
    OwnVar {
        name: ACTIVE_ENV,
        trust: Trust::Marker,
        set_by: "the gate, in every line's environment (the line's request id)",
        meaning: "The process runs inside a line shellgate already decided: a shell started in \
                  it does not load the hooks again (the line was judged whole and runs in its \
                  sandbox).",
    },
    OwnVar {
        name: SANDBOXED_ENV,
        trust: Trust::Marker,
        set_by: "the sandbox, in the sandboxed program's environment (the policy's name)",
        meaning: "The process runs inside shellgate's sandbox. Informational: a nested sandbox \
                  is the kernel's, and the weaker nested mode is chosen only when the process \
                  is also confined and refused namespaces.",
    },
    OwnVar {
        name: BROKER_ENV,
        trust: Trust::Marker,
        set_by: "`wrap`, for the agent",
        meaning: "The socket of the broker that decides and runs the agent's lines. A process \
                  that names another can only hand its own lines to a decider of its choosing, \
                  which runs them with no more than that process could itself.",
    },
    OwnVar {
        name: WRAP_DIR_ENV,
        trust: Trust::Marker,
        set_by: "`wrap`, for the agent",
        meaning: "`wrap`'s private directory: the hook files and the real shells.",
    },
    OwnVar {
        name: AGENT_ENV,
        trust: Trust::Marker,
        set_by: "`wrap`, for the agent's own process",
        meaning: "`PID:START` of the agent's own process: a shell that is that very process (a \
                  shim script that execs the agent) runs as is; any other process with the same \
                  value is not it, and is gated.",
    },
    OwnVar {
        name: USER_BASHRC_ENV,
        trust: Trust::Marker,
        set_by: "the shell entry point, for a wrapped interactive bash",
        meaning: "The rc file that bash was asked to read (empty: --norc), which shellgate's \
                  own rc file sources before the hook.",
    },
    OwnVar {
        name: USER_ZDOTDIR_ENV,
        trust: Trust::Marker,
        set_by: "`wrap`, for the agent",
        meaning: "The person's ZDOTDIR (or home), whose startup files the hooked zsh reads \
                  before the hook.",
    },
    OwnVar {
        name: "SHELLGATE_REAL_BASH",
        trust: Trust::Marker,
        set_by: "`wrap`, for the agent (also `SHELLGATE_REAL_ZSH`, `_SH`, `_PWSH`)",
        meaning: "The real shell hidden behind the entry point; an absolute path to a file, \
                  else the usual locations. It runs only a line already decided, for the \
                  process that named it.",
    },
    OwnVar {
        name: NO_NAMESPACES_ENV,
        trust: Trust::Narrowing,
        set_by: "tests of the fail-closed path",
        meaning: "The launcher behaves as if no mount namespace could be created.",
    },
    OwnVar {
        name: ABI_MAX_ENV,
        trust: Trust::Narrowing,
        set_by: "tests, and whoever wants to see what an older kernel would refuse",
        meaning: "Caps the Landlock ABI shellgate uses (0: as if the kernel had no Landlock); \
                  an unparsable value counts as 0.",
    },
    OwnVar {
        name: TEST_PANIC_ENV,
        trust: Trust::TestBuild,
        set_by: "the panic tests",
        meaning: "main or thread: panic there, to check the documented exit status of a bug.",
    },
];

/// The rows a person may set, for the manual.
pub fn for_a_person() -> impl Iterator<Item = &'static OwnVar> {
    VARS.iter().filter(|v| v.trust == Trust::Person)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_is_listed_once_with_the_prefix() {
        let mut names: Vec<&str> = VARS.iter().map(|v| v.name).collect();
        assert!(names.iter().all(|n| n.starts_with(PREFIX)), "{names:?}");
        names.sort_unstable();
        let count = names.len();
        names.dedup();
        assert_eq!(names.len(), count, "a name is listed twice");
        for kind in ShellKind::ALL {
            assert!(real_shell_env(kind).starts_with("SHELLGATE_REAL_"));
        }
    }

    /// A hooked shell asks before a line sets any of them (they are hook state), and a sandboxed
    /// line's change to one never comes back: the prefix has both roles.
    #[test]
    fn a_line_cannot_set_one_in_a_persons_shell() {
        for var in VARS {
            let roles = crate::parse::shell_vars::roles(var.name);
            assert!(roles.hook && roles.seal, "{}", var.name);
        }
    }
}
