//! The one error and outcome type of shellgate.
//!
//! Every way a command line can end without running (or with an error of shellgate's own) has a stable
//! [`Code`]. This module is the single place where a code is mapped to its exit status, its marker for
//! the agent-facing refusal block, and its JSON form, so `check`, `run`, the hooks and the docs cannot
//! drift apart. A failure (reviewer down, sandbox unavailable, corrupt config) is never reported as a
//! policy denial: [`CodeKind`] keeps them apart.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Stable outcome codes. The `SCREAMING_SNAKE_CASE` names are part of the public interface
/// (JSON output, docs, tests); never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Code {
    /// The line may run.
    Allowed,
    /// A person must approve the line before it runs.
    NeedsApproval,
    /// The reviewer model must judge the line before it runs.
    NeedsReview,
    /// A `never` rule matched: denied without asking anyone.
    NeverPolicy,
    /// The reviewer model judged the line and denied it.
    AutoReviewDenied,
    /// A person was asked and rejected the line.
    ApprovalRejected,
    /// Intake: the line is longer than the limit.
    LineTooLong,
    /// Intake: invalid UTF-8, NUL, control, terminal, bidi or zero-width characters.
    InputRejected,
    /// A configuration file is broken: `config check`, `config show`, `sandbox` and `eval
    /// --config` refuse; lines are decided by the strictest built-in policy until it is fixed.
    ConfigInvalid,
    /// The mode needs a reviewer but no `[reviewer]` table is configured.
    ReviewerUnconfigured,
    /// The reviewer could not produce a valid verdict (timeout, HTTP error, bad output …).
    AutoReviewFailed,
    /// A person should have been asked but could not be (no terminal, no answer in time).
    ApprovalUnavailable,
    /// The sandbox the mode requires cannot be enforced on this system.
    SandboxUnavailable,
    /// shellgate could not start the program (not found, not executable, exec failed).
    SandboxExecFailed,
    /// The audit log could not be written; nothing runs without its record.
    AuditUnavailable,
    /// The line planted or changed a file that code outside the sandbox would run or read
    /// configuration from (a guarded name); it was moved aside and the line failed closed.
    SandboxViolation,
    /// The line ran and failed where the sandbox refused it something (a connection, a write
    /// outside the writable roots): the refusal names what, and the grant that would allow it.
    SandboxDenied,
    /// The line ran and was ended by one of its limits (`[sandbox.limits]`: the size of a file it
    /// wrote).
    SandboxLimit,
    /// The auto-review circuit breaker is open and refuses lines until a person resets it.
    CircuitOpen,
    /// The command needs a person at a terminal (for example turning review back on).
    TerminalRequired,
    /// Bad command-line usage of shellgate itself.
    Usage,
    /// A bug or an unexpected system error inside shellgate.
    Internal,
}

/// What kind of outcome a code is; decides wording and markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CodeKind {
    /// The line may run.
    Allow,
    /// Not decided yet: a reviewer or a person would be asked (`check` only).
    Pending,
    /// A policy decided against the line (rule, reviewer, person).
    PolicyDenial,
    /// Intake refused the line before anything else looked at it.
    Intake,
    /// Something failed; the line is denied because shellgate fails closed.
    Failure,
    /// The line ran, and the sandbox refused it something it needed.
    Sandbox,
}

impl Code {
    /// Every code, in documentation order.
    pub const ALL: [Code; 22] = [
        Code::Allowed,
        Code::NeedsApproval,
        Code::NeedsReview,
        Code::NeverPolicy,
        Code::AutoReviewDenied,
        Code::ApprovalRejected,
        Code::LineTooLong,
        Code::InputRejected,
        Code::ConfigInvalid,
        Code::ReviewerUnconfigured,
        Code::AutoReviewFailed,
        Code::ApprovalUnavailable,
        Code::SandboxUnavailable,
        Code::SandboxExecFailed,
        Code::AuditUnavailable,
        Code::CircuitOpen,
        Code::TerminalRequired,
        Code::SandboxViolation,
        Code::SandboxDenied,
        Code::SandboxLimit,
        Code::Usage,
        Code::Internal,
    ];

    /// The stable name, as printed in JSON and in the refusal block.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Allowed => "ALLOWED",
            Code::NeedsApproval => "NEEDS_APPROVAL",
            Code::NeedsReview => "NEEDS_REVIEW",
            Code::NeverPolicy => "NEVER_POLICY",
            Code::AutoReviewDenied => "AUTO_REVIEW_DENIED",
            Code::ApprovalRejected => "APPROVAL_REJECTED",
            Code::LineTooLong => "LINE_TOO_LONG",
            Code::InputRejected => "INPUT_REJECTED",
            Code::ConfigInvalid => "CONFIG_INVALID",
            Code::ReviewerUnconfigured => "REVIEWER_UNCONFIGURED",
            Code::AutoReviewFailed => "AUTO_REVIEW_FAILED",
            Code::ApprovalUnavailable => "APPROVAL_UNAVAILABLE",
            Code::SandboxUnavailable => "SANDBOX_UNAVAILABLE",
            Code::SandboxExecFailed => "SANDBOX_EXEC_FAILED",
            Code::AuditUnavailable => "AUDIT_UNAVAILABLE",
            Code::CircuitOpen => "CIRCUIT_OPEN",
            Code::TerminalRequired => "TERMINAL_REQUIRED",
            Code::SandboxViolation => "SANDBOX_VIOLATION",
            Code::SandboxDenied => "SANDBOX_DENIED",
            Code::SandboxLimit => "SANDBOX_LIMIT",
            Code::Usage => "USAGE",
            Code::Internal => "INTERNAL",
        }
    }

    /// The exit status of `shellgate check` / `run` / `sandbox` for this outcome.
    ///
    /// shellgate's own outcomes use the 200 block: programs rarely exit there (signal deaths are
    /// 129–192, `command not found` is 127), so a caller can tell a refusal from the line's own status.
    /// 2 is kept for usage errors, like every CLI.
    pub fn exit_status(self) -> u8 {
        match self {
            Code::Allowed => 0,
            Code::Usage => 2,
            Code::NeedsApproval => 200,
            Code::NeedsReview => 201,
            Code::NeverPolicy => 202,
            Code::AutoReviewDenied => 203,
            Code::ApprovalRejected => 204,
            Code::LineTooLong => 205,
            Code::InputRejected => 206,
            Code::ConfigInvalid => 207,
            Code::ReviewerUnconfigured => 208,
            Code::AutoReviewFailed => 209,
            Code::ApprovalUnavailable => 210,
            Code::SandboxUnavailable => 211,
            Code::SandboxExecFailed => 212,
            Code::AuditUnavailable => 213,
            Code::CircuitOpen => 214,
            Code::TerminalRequired => 215,
            Code::SandboxViolation => 216,
            Code::SandboxDenied => 217,
            Code::SandboxLimit => 218,
            Code::Internal => 219,
        }
    }

    /// The kind of outcome.
    pub fn kind(self) -> CodeKind {
        match self {
            Code::Allowed => CodeKind::Allow,
            Code::NeedsApproval | Code::NeedsReview => CodeKind::Pending,
            Code::NeverPolicy
            | Code::AutoReviewDenied
            | Code::ApprovalRejected
            | Code::SandboxViolation => CodeKind::PolicyDenial,
            Code::LineTooLong | Code::InputRejected => CodeKind::Intake,
            Code::SandboxDenied => CodeKind::Sandbox,
            Code::ConfigInvalid
            | Code::ReviewerUnconfigured
            | Code::AutoReviewFailed
            | Code::ApprovalUnavailable
            | Code::SandboxUnavailable
            | Code::SandboxExecFailed
            | Code::AuditUnavailable
            | Code::CircuitOpen
            | Code::TerminalRequired
            | Code::SandboxLimit
            | Code::Usage
            | Code::Internal => CodeKind::Failure,
        }
    }

    /// Whether the line ran before this outcome: the sandbox refused it something
    /// (`SANDBOX_DENIED`) or its guard moved aside what it planted (`SANDBOX_VIOLATION`). Every
    /// other refusal comes before the line starts.
    pub fn line_ran(self) -> bool {
        matches!(
            self,
            Code::SandboxDenied | Code::SandboxViolation | Code::SandboxLimit
        )
    }

    /// The marker that opens the agent-facing refusal block on stderr.
    pub fn marker(self) -> &'static str {
        match self {
            Code::AutoReviewDenied => "[auto-review]",
            Code::NeverPolicy => "[auto-review-never]",
            Code::NeedsReview
            | Code::ReviewerUnconfigured
            | Code::AutoReviewFailed
            | Code::CircuitOpen => "[auto-review-fallback]",
            _ => "[shellgate]",
        }
    }

    /// One line of documentation, used for the exit-code table in the README and `docs/`.
    pub fn meaning(self) -> &'static str {
        match self {
            Code::Allowed => {
                "the line may run (`check`); for `run`, the line's own exit status is returned"
            }
            Code::NeedsApproval => "a person must approve the line (`check` only)",
            Code::NeedsReview => {
                "the reviewer must judge the line (`check`); `run` denies it when no reviewer can"
            }
            Code::NeverPolicy => "a `never` rule matched; denied without asking anyone",
            Code::AutoReviewDenied => "the reviewer model denied the line",
            Code::ApprovalRejected => "a person rejected the line",
            Code::LineTooLong => "intake: the line is longer than 4,000 characters",
            Code::InputRejected => {
                "intake: invalid UTF-8, NUL, control, terminal, bidi or zero-width character"
            }
            Code::ConfigInvalid => {
                "a configuration file is broken (`config check`, `sandbox`); lines are decided by \
                 the strictest built-in policy until it is fixed"
            }
            Code::ReviewerUnconfigured => "the mode needs a reviewer but `[reviewer]` is missing",
            Code::AutoReviewFailed => "the reviewer failed (timeout, HTTP error, invalid verdict)",
            Code::ApprovalUnavailable => "a person could not be asked (no terminal or no answer)",
            Code::SandboxUnavailable => "the required sandbox cannot be enforced here",
            Code::SandboxExecFailed => "shellgate could not start the program inside the sandbox",
            Code::AuditUnavailable => "the audit log could not be written",
            Code::CircuitOpen => "the auto-review circuit breaker refuses lines until reset",
            Code::TerminalRequired => "this action needs a person at a terminal",
            Code::SandboxViolation => {
                "the line planted a file that code outside the sandbox would run; it was moved aside"
            }
            Code::SandboxDenied => {
                "the line ran and failed where the sandbox refused it something; the missing grant is named"
            }
            Code::SandboxLimit => {
                "the line ran and was ended by one of its limits (`sandbox.limits`); the limit is named"
            }
            Code::Usage => "bad command-line usage",
            Code::Internal => "internal error",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// shellgate's one error type: a stable code plus a sentence a person and an agent can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Error {
    pub code: Code,
    pub reason: String,
}

impl Error {
    pub fn new(code: Code, reason: impl Into<String>) -> Self {
        Error {
            code,
            reason: reason.into(),
        }
    }

    pub fn internal(reason: impl Into<String>) -> Self {
        Error::new(Code::Internal, reason)
    }

    pub fn usage(reason: impl Into<String>) -> Self {
        Error::new(Code::Usage, reason)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.reason)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// The instruction that follows every refusal, so an agent does not route around it.
pub const DO_NOT_WORK_AROUND: &str = "Do not try to achieve the same effect another way (another command, \
a script, an interpreter, an encoded form). Ask the user how to proceed.";

/// The instruction that follows a failure: it is not a verdict on the line.
pub const FAILURE_NOT_A_VERDICT: &str = "This is a failure, not a judgment of the command: fix the cause \
or ask the user. Do not try to run the same effect another way.";

/// The instruction that follows a sandbox denial: what to ask for, not how to get around it.
pub const ASK_FOR_THE_GRANT: &str = "It was the sandbox, not a judgment of the command: ask the user to approve running it again with the missing grant above, or, where it says none can be granted, to run it themselves. Do not try to reach the same address or path another way.";

/// The plain instruction that follows a refusal with this code.
pub fn instruction(code: Code) -> &'static str {
    match code.kind() {
        CodeKind::Failure => FAILURE_NOT_A_VERDICT,
        CodeKind::Sandbox => ASK_FOR_THE_GRANT,
        _ => DO_NOT_WORK_AROUND,
    }
}

/// The agent-facing refusal block printed on stderr: marker, code, reason, instruction.
pub fn refusal_block(code: Code, reason: &str) -> String {
    let instruction = instruction(code);
    format!(
        "{} {}: {}\n{} {}\n",
        code.marker(),
        code,
        reason,
        code.marker(),
        instruction
    )
}

/// The refusal as a person at an interactive prompt reads it: what did not run (or failed in the
/// sandbox) and why, in one line, and what they can do about it. An agent gets [`refusal_block`]
/// instead, with its instruction not to route around the refusal; a person is the one who decides.
pub fn person_message(code: Code, reason: &str) -> String {
    let what = if code.line_ran() {
        "shellgate: failed in the sandbox"
    } else if code.kind() == CodeKind::Failure {
        "shellgate: not run (a failure, not a verdict on the line)"
    } else {
        "shellgate: not run"
    };
    let hint = match code {
        Code::NeverPolicy => {
            "a `never` rule refuses this in every mode (`shellgate rules` lists them; a rule of \
             your own in ~/.config/shellgate/config.toml cannot loosen a built-in one)"
        }
        Code::ApprovalRejected => "you answered no",
        Code::ApprovalUnavailable => {
            "a person must answer: run the line in the foreground at your terminal and answer in \
             time, or answer `a` once to allow its program for good"
        }
        Code::AutoReviewDenied => {
            "the reviewer denied it; `shellgate auto-review approve` lets it run once"
        }
        Code::NeedsReview | Code::ReviewerUnconfigured | Code::AutoReviewFailed => {
            "no reviewer could judge it: configure `[reviewer]`, or `shellgate mode ask` to be asked"
        }
        Code::CircuitOpen => {
            "`shellgate auto-review status` shows why; `shellgate auto-review on` resets it"
        }
        Code::LineTooLong | Code::InputRejected => {
            "put it in a script file in the workspace and run that file"
        }
        Code::ConfigInvalid => "`shellgate config check` shows the error in the file",
        Code::SandboxUnavailable => "`shellgate doctor` shows what this system lacks",
        Code::AuditUnavailable => "check that shellgate's state directory is writable",
        Code::SandboxViolation => "the file was moved aside; `shellgate log` has the details",
        Code::SandboxLimit => "`[sandbox.limits]` in the configuration raises it",
        Code::TerminalRequired => "run it at a terminal",
        _ => "",
    };
    // The stable code goes along: it is the line's status's name in the docs, and what to search.
    if hint.is_empty() {
        format!("{what}: {reason} [{code}]\n")
    } else {
        format!("{what}: {reason} [{code}]\n  ({hint})\n")
    }
}

/// The refusal as one JSON object: marker, code, reason and instruction.
pub fn refusal_json(code: Code, reason: &str) -> serde_json::Value {
    serde_json::json!({
        "marker": code.marker(),
        "code": code,
        "reason": reason,
        "instruction": instruction(code),
    })
}

/// The exit-code table in Markdown, generated from [`Code`] so the docs cannot drift.
pub fn exit_code_table() -> String {
    let mut out = String::from("| exit | code | meaning |\n|---:|---|---|\n");
    for code in Code::ALL {
        out.push_str(&format!(
            "| {} | `{}` | {} |\n",
            code.exit_status(),
            code,
            code.meaning()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn exit_statuses_are_distinct() {
        let mut seen = HashSet::new();
        for code in Code::ALL {
            assert!(
                seen.insert(code.exit_status()),
                "{code} reuses an exit status"
            );
        }
    }

    #[test]
    fn names_are_distinct_and_match_serde() {
        for code in Code::ALL {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
    }

    #[test]
    fn failures_are_not_policy_denials() {
        for code in [
            Code::AutoReviewFailed,
            Code::SandboxUnavailable,
            Code::ConfigInvalid,
        ] {
            assert_eq!(code.kind(), CodeKind::Failure);
            assert!(refusal_block(code, "x").contains("failure, not a judgment"));
        }
        assert!(
            refusal_block(Code::NeverPolicy, "x")
                .starts_with("[auto-review-never] NEVER_POLICY: x")
        );
    }

    #[test]
    fn a_person_gets_no_instruction_meant_for_agents() {
        for code in Code::ALL {
            let text = person_message(code, "because");
            assert!(!text.contains("Do not try"), "{code}: {text}");
            assert!(!text.contains("\n\n"), "{code}: a blank line in {text:?}");
            let opening = if code.line_ran() {
                "shellgate: failed in the sandbox: "
            } else {
                "shellgate: not run"
            };
            assert!(text.starts_with(opening), "{code}: {text}");
        }
    }
}
