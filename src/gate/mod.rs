//! The whole path of one line: decide → ask a person or the reviewer → run in the sandbox → record.
//!
//! `run`, the interactive hooks and the shell entry point all hand their line to [`handle`], so a
//! line is judged, asked about, executed and logged the same way whichever door it came through.
//! Every failure on the way denies, and says which failure it was; nothing runs before its
//! `approval/asked` and `exec/started` events are in the session log.
//!
//! This module decides who must approve and asks them; [`exec`] runs a decided line (arguments,
//! environment, sandbox, spawn, streams, signals, waiting, the exit status); [`escalate`] offers
//! a line the sandbox refused something exactly the missing grant, once.

use crate::approval::{self, Answer, Question, QuestionKind};
use crate::audit::event::{
    ApprovalDecision, Decider, Decision as LoggedDecision, ExecFinished, ExecStarted, LineAsked,
    RejectionCause, ReviewRejection, SandboxDenied, SandboxViolation,
};
use crate::audit::{EventBody, RequestId, SessionId};
use crate::error::{Code, Error, Result};
use crate::mode::{ApprovalPolicy, SandboxPolicy};
use crate::own_env::ACTIVE_ENV;
use crate::parse::{Command as ParsedCommand, ShellKind};
use crate::policy::grant::{Grant, Needs, Network, SSH_AGENT};
use crate::policy::{self, Decision, Verdict};
use crate::review::{self, ReviewOutcome, ReviewRequest};
use crate::session::{Context, SessionUse};
use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

mod escalate;
mod exec;
mod outside;
mod own_remote;

use escalate::*;
pub(crate) use exec::stream_fds;
use exec::*;
pub use exec::{ForegroundSignals, end_like, exit_code, violation_refusal};

/// Which door the line came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `shellgate run`, or a non-interactive hook that exec'd it.
    Run,
    /// An interactive hook: a line that only changes the shell's own state may run in the shell.
    Hook,
}

/// How the line runs once allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Execution {
    /// `<real shell> -c LINE [ARG0 ARGS…]` (pwsh: `-NoProfile -Command LINE`).
    ShellC { positional: Vec<OsString> },
    /// The real shell with exactly these arguments (the shell entry point keeps its caller's).
    ShellArgs(Vec<OsString>),
    /// A typed line that is one command of plain words, or a pipeline of such commands
    /// ([`crate::shell::stateless::direct_pipeline`]): the programs each `argv[0]` names, found
    /// on the line's `PATH`, started with these words and connected by pipes, as the shell's `-c`
    /// would start them — without starting a shell first. When one is not found there (or is no
    /// executable the kernel starts by itself), or the line runs without the sandbox and is a
    /// pipeline, the real shell runs with `shell_args`, and says so as it always does.
    Program {
        pipeline: Vec<Vec<OsString>>,
        shell_args: Vec<OsString>,
    },
}

/// Where the line's standard streams go.
#[derive(Debug, Clone, Copy)]
pub enum Streams<'a> {
    Inherit,
    /// The controlling terminal (the bash hook runs inside PS0, whose stdout is captured).
    Terminal,
    /// These descriptors (stdin, stdout, stderr): a caller's, passed to the `wrap` broker.
    Fds(&'a [OwnedFd; 3]),
}

pub struct LineRequest<'a> {
    pub bytes: &'a [u8],
    pub shell: ShellKind,
    pub cwd: &'a Path,
    pub mode: Option<&'a str>,
    /// The session that decides and logs the line, when the door has one of its own (`wrap`'s
    /// broker); `None`: the one the environment names, or a new one.
    pub session: Option<&'a SessionId>,
    pub execution: Execution,
    pub streams: Streams<'a>,
    pub origin: Origin,
    /// The environment the line runs with, when it is not this process's own (the broker's caller).
    /// shellgate's own sandbox launcher still gets this process's environment, so nothing a caller
    /// sets (`TMPDIR`, `XDG_*`, `LD_PRELOAD`) can change the sandbox or the launcher itself.
    pub env: Option<&'a [(OsString, OsString)]>,
    /// When this descriptor hangs up, the caller is gone: the line is killed.
    pub cancel: Option<BorrowedFd<'a>>,
    /// The workspace the sandbox lets the line write, when it is fixed by the caller rather than
    /// derived from the working directory (`wrap` anchors it where the agent started, so an agent
    /// that moves to `/` does not take its sandbox with it).
    pub workspace: Option<&'a Path>,
    /// The process group the line runs in when it is not this process's: the `wrap` broker's
    /// caller's, so that a line of a wrapped interactive shell is that terminal's foreground job.
    pub process_group: Option<libc::pid_t>,
    /// A slow review may show its progress on the person's terminal (`term::spinner`, which also
    /// checks that there is one): false for JSON output, and for a caller's descriptors.
    pub progress: bool,
    /// This process ends once the line is handled: every door but the `wrap` broker, which
    /// handles line after line (see `sandbox::Running::leave_init_at_exit`).
    pub process_exits_after: bool,
    /// A wrapped agent's line, which the `wrap` broker handles: never one a person typed, even
    /// from a hooked shell the agent runs on a terminal of its own.
    pub wrapped_agent: bool,
}

impl<'a> LineRequest<'a> {
    /// A line of this process's own caller: its environment and process group, the standard
    /// streams inherited, the mode of the session, the workspace derived from `cwd`, nothing that
    /// cancels it. Each door changes only what differs for it.
    pub fn new(
        bytes: &'a [u8],
        shell: ShellKind,
        cwd: &'a Path,
        origin: Origin,
        execution: Execution,
    ) -> LineRequest<'a> {
        LineRequest {
            bytes,
            shell,
            cwd,
            mode: None,
            session: None,
            execution,
            streams: Streams::Inherit,
            origin,
            env: None,
            cancel: None,
            workspace: None,
            process_group: None,
            progress: true,
            process_exits_after: true,
            wrapped_agent: false,
        }
    }

    /// Whether a slow review may show its progress on the terminal (not with `--json`).
    pub fn with_progress(self, progress: bool) -> LineRequest<'a> {
        LineRequest { progress, ..self }
    }

    /// The mode asked for (`--mode`); `None` is the session's.
    pub fn with_mode(self, mode: Option<&'a str>) -> LineRequest<'a> {
        LineRequest { mode, ..self }
    }

    /// The door's own session (`wrap`'s), not the environment's.
    pub fn in_session(self, session: &'a SessionId) -> LineRequest<'a> {
        LineRequest {
            session: Some(session),
            ..self
        }
    }

    pub fn with_streams(self, streams: Streams<'a>) -> LineRequest<'a> {
        LineRequest { streams, ..self }
    }

    /// The broker's caller: its environment, its process group, the descriptor whose hang-up
    /// cancels the line, and the workspace `wrap` anchored where the agent started.
    pub fn for_broker_caller(
        self,
        env: &'a [(OsString, OsString)],
        cancel: BorrowedFd<'a>,
        workspace: &'a Path,
        process_group: Option<libc::pid_t>,
    ) -> LineRequest<'a> {
        LineRequest {
            env: Some(env),
            cancel: Some(cancel),
            workspace: Some(workspace),
            process_group,
            // The caller's terminal is not this process's to draw on.
            progress: false,
            process_exits_after: false,
            wrapped_agent: true,
            ..self
        }
    }
}

/// What became of the line.
#[derive(Debug)]
pub enum Outcome {
    /// Allowed, and it runs in the person's shell: a line that only changes the shell's own
    /// state, or (`once_outside`) a line a person let run once outside the sandbox, which the
    /// hook runs with the directories lines may write last on `PATH` (`shell::prompt_path`) and
    /// with every name that is not a safe file there found nowhere (see `gate::outside`).
    RunInShell { once_outside: bool },
    /// It ran: its exit status, and each program's when it was started as a pipeline without a
    /// shell ([`Execution::Program`]; empty otherwise).
    Ran {
        status: ExitStatus,
        pipeline: Vec<ExitStatus>,
    },
    /// It did not run, and this is why.
    Refused(Error),
}

/// Which of its allowed lines a hooked shell runs itself, not as a program (the shell module's
/// judgement, `shell::in_shell::may_run_in_shell`, handed in by the door): the decision, the
/// mode, the shell, and the names it has as aliases or functions.
pub type InShell = fn(&Decision, &crate::mode::Resolved, ShellKind, &[String]) -> bool;

/// What the door chose of the line's shell (`shell::side`): the program that runs the line and,
/// for a hooked shell, which lines that shell runs itself. An interactive shell's hook function
/// (`shell::function`) adds descriptors for the line's program (the shell state comes back on
/// one), and the names that shell has as aliases, functions or disabled builtins, which never run
/// in the shell as if they were builtins.
#[derive(Debug, Default)]
pub struct ShellSide<'a> {
    /// The real shell of the line's kind; `None`: none is installed, and a line that would run
    /// as a program is refused (`SANDBOX_EXEC_FAILED`).
    pub program: Option<PathBuf>,
    /// For a line of a hooked shell (`Origin::Hook`): which allowed lines run in it. `None`:
    /// every line runs as a program.
    pub in_shell: Option<InShell>,
    /// Descriptors for the line's program besides its standard streams (a shell's report
    /// channel), made afresh for each run; passed only to a sandboxed line.
    pub passed: Option<&'a dyn PassedPerRun>,
    pub shadowed: &'a [String],
}

/// Descriptors a sandboxed line's program gets besides its standard streams, made afresh for
/// each run of the line: a line run again after a yes gets new ones, so nothing of an earlier run
/// reaches the next (`shell::channel`).
pub trait PassedPerRun: std::fmt::Debug + Sync {
    /// The numbers they take in the program (3–9).
    fn numbers(&self) -> Vec<RawFd>;
    /// This run's descriptors, as `(descriptor, number in the program)`.
    fn for_run(&self) -> Result<Vec<(OwnedFd, RawFd)>>;
}

/// One allowed line on its way to running: what every step after the decision reads (the grant
/// is passed beside it, since a line run again after a yes runs with a wider one).
#[derive(Clone, Copy)]
struct Decided<'a> {
    ctx: &'a Context,
    req: &'a LineRequest<'a>,
    side: &'a ShellSide<'a>,
    decision: &'a Decision,
    request: &'a RequestId,
    line: &'a str,
}

/// Decide, authorise, run and record one line, in this process, with what its door chose of the
/// shell (`side`). The gate knows no door: whether a line is decided here or by the `wrap` broker
/// is the door's choice (`broker::route`), and so is the shell that runs it.
pub fn handle(req: &LineRequest, side: &ShellSide) -> Outcome {
    let loaded = match req.session {
        Some(id) => Context::open_session(req.cwd, req.mode, id.clone()),
        None => Context::load(req.cwd, req.mode, SessionUse::Open),
    };
    let ctx = match loaded {
        Ok(ctx) => ctx,
        Err(e) => return Outcome::Refused(e),
    };
    let (outcome, told) = decide_and_run(&ctx, req, side);
    match (outcome, &ctx.config.invalid) {
        // Whoever reads a refusal made under an invalid config learns why the policy is strict.
        (Outcome::Refused(e), Some(invalid)) if !told => Outcome::Refused(Error::new(
            e.code,
            format!("{} ({})", e.reason, crate::config::invalid_notice(invalid)),
        )),
        (outcome, _) => outcome,
    }
}

/// While the config is invalid, whoever a line may run for is told so before it is asked about or
/// runs: the person on the terminal, an agent on the line's standard error. A line refused
/// outright carries it in its refusal instead (see [`handle`]).
fn tell_invalid_config(ctx: &Context, req: &LineRequest) {
    let Some(invalid) = &ctx.config.invalid else {
        return;
    };
    let notice = crate::config::invalid_notice(invalid);
    match req.origin {
        Origin::Hook => approval::tell(&format!("shellgate: {notice}\n")),
        Origin::Run => tell_line_stderr(req.streams, &format!("[shellgate] notice: {notice}\n")),
    }
}

/// Decides a line with what its tools' own configuration says: the repository's remotes (read
/// only for a line that may connect to one); and, read only when that decision finds a command
/// that fetches with them, the registries configured for its package tools and the person's ssh
/// config — then the line is decided again with them. Most lines read nothing, and only a line
/// that fetches is decided twice.
pub fn decide_line(
    bytes: &[u8],
    shell: crate::parse::ShellKind,
    cwd: &Path,
    policy: policy::PolicyConfig<'_>,
    mode: &crate::mode::Resolved,
) -> Decision {
    let text = cwd.to_string_lossy();
    let remotes = crate::git_config::remotes_for_line(bytes, cwd);
    let first = policy::PolicyConfig {
        remotes: remotes.as_ref(),
        ..policy
    };
    let decision = policy::decide_bytes(bytes, shell, &text, first, mode);
    let registries = crate::registries::for_commands(&decision.commands, cwd, crate::env::get());
    let ssh = crate::ssh_config::for_commands(&decision.commands);
    if registries.is_none() && ssh.is_none() {
        return decision;
    }
    let configured = policy::PolicyConfig {
        registries: registries.as_ref(),
        ssh: ssh.as_ref(),
        ..first
    };
    policy::decide_bytes(bytes, shell, &text, configured, mode)
}

/// The line's decision and what became of it, in a loaded context; and whether the person or
/// agent was told that the config is invalid ([`tell_invalid_config`]).
fn decide_and_run(ctx: &Context, req: &LineRequest, side: &ShellSide) -> (Outcome, bool) {
    // A tripped breaker with `action = abort` refuses every line until a person resets it.
    if let Some(e) = review::abort_refusal(&ctx.state) {
        return (Outcome::Refused(e), false);
    }
    let cwd = req.cwd.to_string_lossy();
    let decision = decide_request(ctx, req, typed_by_a_person(ctx, req), side.shadowed);
    let request = RequestId::new_random();
    let line = String::from_utf8_lossy(req.bytes);
    if let Err(e) = record(ctx, &request, asked(&line, &cwd, &decision)) {
        return (Outcome::Refused(e), false);
    }
    if decision.code == Code::NeverPolicy
        && let Err(e) = record(ctx, &request, never_rejection(&line, &decision))
    {
        return (Outcome::Refused(e), false);
    }
    let tell = decision.decision != Verdict::Deny;
    if tell {
        tell_invalid_config(ctx, req);
    }
    (
        run_decided(ctx, req, side, &decision, &request, &line),
        tell,
    )
}

/// The line's decision: the policy's (`typed`: as a line a person typed in their own hooked
/// shell), then what the gate knows of the machine — what only runs outside the sandbox, a push
/// to a repository on this machine, a planted program, a question that could only be refused.
fn decide_request(ctx: &Context, req: &LineRequest, typed: bool, shadowed: &[String]) -> Decision {
    let decision = decide_line(
        req.bytes,
        req.shell,
        req.cwd,
        policy::PolicyConfig {
            typed_by_a_person: typed,
            ..ctx.config.policy()
        },
        &ctx.resolved,
    );
    let decision = only_outside_works(decision, ctx, req);
    let decision = pushes_outside(decision, ctx, req, shadowed);
    let decision = outside::refuse_planted(decision, ctx, req);
    refused_before_asking(decision, ctx)
}

/// The decision of `bytes` as a line a person types at the terminal in their own hooked shell
/// in `cwd` would get (`shellgate check --typed`), whether or not one is typing now: nothing runs.
pub fn decide_typed(ctx: &Context, bytes: &[u8], shell: ShellKind, cwd: &Path) -> Decision {
    let execution = Execution::ShellC {
        positional: Vec::new(),
    };
    let req = LineRequest::new(bytes, shell, cwd, Origin::Hook, execution);
    let typed = ctx.resolved.sandbox != SandboxPolicy::FullAccess;
    decide_request(ctx, &req, typed, &[])
}

/// A line a person types in their own hooked shell, outside Full access (where lines run in the
/// shell): what only the sandbox and the seal contain is not asked about
/// ([`policy::Input::typed_by_a_person`]). Not an agent's shell (no terminal), nor a wrapped
/// agent's (whose broker has the person's terminal).
fn typed_by_a_person(ctx: &Context, req: &LineRequest) -> bool {
    req.origin == Origin::Hook
        && !req.wrapped_agent
        && ctx.resolved.sandbox != SandboxPolicy::FullAccess
        && approval::person_present()
}

/// Programs that look at or signal processes by their pid or name: in a person's own shell they
/// act on the person's processes, which a line in its own PID namespace would not see.
const PROCESS_TOOLS: [&str; 9] = [
    "ps", "pgrep", "pidof", "pstree", "top", "htop", "kill", "pkill", "killall",
];

/// ssh's programs, which use the person's keys and agent.
const SSH_TOOLS: [&str; 5] = ["ssh", "scp", "sftp", "ssh-add", "ssh-copy-id"];

/// Terminal multiplexers, whose server holds the person's sessions.
const MULTIPLEXERS: [&str; 4] = ["tmux", "screen", "zellij", "byobu"];

/// What such a line may pipe into: programs that only filter text.
const TEXT_FILTERS: [&str; 9] = [
    "grep", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "less",
];

/// A line of process tools (`ps aux | grep x`, `kill 1234`, `pkill -f server`): every command a
/// process tool or a text filter, at least one a process tool, none reached through a wrapper.
/// Such a line, typed in a person's own shell, sees and may signal the person's processes
/// (`sandbox::Spec::host_processes`); everything else about its sandbox stays.
fn acts_on_processes(commands: &[crate::parse::Command]) -> bool {
    let tool = |c: &crate::parse::Command| PROCESS_TOOLS.contains(&c.program.as_str());
    let filter = |c: &crate::parse::Command| TEXT_FILTERS.contains(&c.program.as_str());
    commands.iter().any(tool)
        && commands
            .iter()
            .all(|c| c.via.is_empty() && c.path.is_none() && (tool(c) || filter(c)))
}

/// Told before a typed line that names the shell's jobs runs in the sandbox: there it finds none
/// (`jobs; kill %1; sleep 1` said only "kill: %1: no such job").
const JOBS_STAY_IN_THE_SHELL: &str = "[shellgate] this line runs in the sandbox, where this \
     shell's jobs are not: `jobs`, `fg`, `bg`, `kill %N`, `wait %N` and `disown` reach them on a \
     line of their own\n";

/// Does a line work on the shell's own jobs: `jobs`, or a job control builtin given a job
/// (`kill %1`, `fg %+`, `wait %2`, `disown %1`)? Only the person's shell has them; a line of only
/// such builtins runs there (the shell module's `in_shell`), any other runs in the sandbox, which
/// has none.
fn names_the_shells_jobs(commands: &[ParsedCommand]) -> bool {
    commands.iter().any(|c| {
        c.program == "jobs"
            || (matches!(c.program.as_str(), "kill" | "wait" | "fg" | "bg" | "disown")
                && c.argv.iter().any(|a| a.starts_with('%')))
    })
}

/// What only works outside the sandbox, for a person. A line that runs a set-id program (`sudo`,
/// `su`, `passwd`, `mount`…, found by the file's mode, not by a list of names) needs privileges
/// that no sandbox gives (`no_new_privs`: it would only fail there, unexplained); a line a person
/// is asked about because it names a credential store would only find it hidden. In a person's
/// own hooked shell, where a person approves lines, either is asked about as one run outside the
/// sandbox, in that shell as typed (no by default). Anywhere else a set-id line is refused,
/// saying that a person can run it (the credential line keeps its question and its sandbox). A
/// line already denied, or a confirmed Full access mode, is left as it is.
fn only_outside_works(mut decision: Decision, ctx: &Context, req: &LineRequest) -> Decision {
    if decision.decision == Verdict::Deny || ctx.resolved.sandbox == SandboxPolicy::FullAccess {
        return decision;
    }
    let person_approves = matches!(
        ctx.resolved.approval,
        ApprovalPolicy::Ask | ApprovalPolicy::Untrusted
    );
    let path = outside::line_path(req);
    if req.origin == Origin::Hook && person_approves {
        return match why_only_outside(&decision, path.as_deref(), req.cwd) {
            Some(why) => ask_once_outside(decision, why),
            None => decision,
        };
    }
    if let Some(program) = set_id_program(&decision.commands, path.as_deref(), req.cwd) {
        decision.decision = Verdict::Deny;
        decision.code = Code::TerminalRequired;
        decision.reason = format!(
            "`{program}` is set-id: it needs privileges that no sandbox gives, and only a line a \
             person types in their own hooked shell can run outside the sandbox; ask the user to \
             run it"
        );
    }
    decision
}

/// Why a line a person typed works only outside the sandbox, when it does.
enum Outside {
    /// What the sandbox lacks for it; the decision's own reason follows in parentheses.
    Lacks(String),
    /// Said after the decision's own reason, which already asks (a credential store).
    After(&'static str),
    /// Said instead of the decision's own reason, which would be misleading (`exec`).
    Instead(&'static str),
}

/// The one list of what a sandbox cannot give a person's own line (see
/// [`only_outside_works`]); each is asked as a run once outside the sandbox
/// ([`ask_once_outside`]).
fn why_only_outside(decision: &Decision, path: Option<&OsStr>, cwd: &Path) -> Option<Outside> {
    let commands = &decision.commands;
    // A credential store: the sandbox hides it from every line, so a yes would only show an
    // empty file there.
    if decision.rule.as_deref() == Some("builtin.credential-read")
        && decision.decision == Verdict::Ask
    {
        return Some(Outside::After(
            "the sandbox hides credential stores from every line",
        ));
    }
    // ssh and git's remotes use the person's keys, agent (`SSH_AUTH_SOCK`), known hosts and
    // credential helpers: a sandboxed line can be granted the agent and port 22 (an agent's line
    // is), but not the keys, credential helpers or a `known_hosts` to add to.
    if commands.iter().any(|c| {
        SSH_TOOLS.contains(&c.program.as_str())
            || (c.program == "git" && !decision.grant.network.is_off())
    }) {
        return Some(Outside::Lacks(
            "ssh and git's remotes use your keys, ssh agent, known hosts and credential \
             helpers, which a sandboxed line gets only in part"
                .to_owned(),
        ));
    }
    // `exec PROGRAM` replaces the person's shell (`exec bash -l` for a fresh login shell): in the
    // sandbox it would replace only the line's own shell, and leave the person in a program whose
    // lines nobody judges until it ends. The decision's own reason said it would run in the
    // sandbox unasked.
    if let [only] = commands.as_slice()
        && only.via.len() == 1
        && only.via[0] == "exec"
    {
        return Some(Outside::Instead(
            "`exec` replaces this shell, which a line in the sandbox cannot do",
        ));
    }
    // A terminal multiplexer serves the person's sessions from a server of theirs (its socket,
    // their terminal): inside a line it could only start one that ends with the line.
    if commands
        .iter()
        .any(|c| MULTIPLEXERS.contains(&c.program.as_str()))
    {
        return Some(Outside::Lacks(
            "a terminal multiplexer serves your sessions from a server of yours, which a line in \
             the sandbox cannot reach"
                .to_owned(),
        ));
    }
    set_id_program(commands, path, cwd).map(|program| {
        Outside::Lacks(format!(
            "`{program}` is set-id: it runs with privileges, which no sandbox gives"
        ))
    })
}

/// The decision as a question about running the line once outside the sandbox, in the person's
/// shell as typed (no by default): the one way every reason above becomes a grant.
fn ask_once_outside(mut decision: Decision, why: Outside) -> Decision {
    const ONCE: &str = "approved, this line runs once outside the sandbox, in this shell as typed";
    decision.decision = Verdict::Ask;
    decision.code = Code::NeedsApproval;
    decision.grant = Grant::base(SandboxPolicy::FullAccess, true);
    decision.reason = match why {
        Outside::Lacks(lacks) => format!("{lacks}; {ONCE} ({})", decision.reason),
        Outside::After(after) => format!("{}; {after}, so {ONCE}", decision.reason),
        Outside::Instead(instead) => format!("{instead}; {ONCE}"),
    };
    decision
}

/// A line a person would be asked about, which would then be refused whatever they answer, is
/// refused before the question: `shellgate mode auto` with no `[reviewer]` configured (see
/// `mode_change::needs_no_missing_reviewer`).
fn refused_before_asking(mut decision: Decision, ctx: &Context) -> Decision {
    if decision.decision != Verdict::Ask {
        return decision;
    }
    let [command] = decision.commands.as_slice() else {
        return decision;
    };
    let id = match command.argv.as_slice() {
        [mode, id] if command.program == "shellgate" && mode == "mode" && !id.starts_with('-') => {
            id.clone()
        }
        _ => return decision,
    };
    if let Err(e) = crate::mode_change::needs_no_missing_reviewer(ctx, &id) {
        decision.decision = Verdict::Deny;
        decision.code = e.code;
        decision.reason = e.reason;
    }
    decision
}

/// A git push into a repository on this machine outside what the line may write (the remote
/// resolved to a path, `crate::policy::remotes`) would fail there, and a pipeline (`git push 2>&1
/// | tail -1`) can hide that failure from escalation: it is asked before it runs instead, with
/// exactly that repository writable (the sandbox keeps a granted repository's config and hooks
/// read-only). Where nobody can approve, or no grant could name it, the sandbox refuses it. A push
/// a person types into the remote their repository's own config names runs with that grant
/// unasked, when nothing but the push can use it (`own_remote`).
fn pushes_outside(
    mut decision: Decision,
    ctx: &Context,
    req: &LineRequest,
    shadowed: &[String],
) -> Decision {
    let approver = matches!(
        ctx.resolved.approval,
        ApprovalPolicy::Ask | ApprovalPolicy::Untrusted | ApprovalPolicy::Auto
    );
    if decision.decision == Verdict::Deny
        || !approver
        || decision.grant.sandbox != SandboxPolicy::WorkspaceWrite
    {
        return decision;
    }
    let person_approves = matches!(
        ctx.resolved.approval,
        ApprovalPolicy::Ask | ApprovalPolicy::Untrusted
    );
    // `git push -u` records the upstream in the repository's config, which no sandboxed line may
    // write (git then says the upstream is set and exits 0): in the person's own shell it is
    // asked to run once outside the sandbox, as a push over the network is.
    if req.origin == Origin::Hook && person_approves && decision.commands.iter().any(sets_upstream)
    {
        return ask_once_outside(
            decision,
            Outside::Lacks(
                "`git push -u` records the branch's upstream in the repository's config, which \
                 no sandboxed line may write"
                    .to_owned(),
            ),
        );
    }
    let destinations: Vec<PathBuf> = decision
        .commands
        .iter()
        .filter_map(|c| local_push_destination(c, &ctx.cwd))
        .collect();
    if destinations.is_empty() {
        return decision;
    }
    let Ok(spec) = crate::spec::grant_spec(
        &decision.grant,
        &ctx.cwd,
        entered_dir(&decision.commands, &ctx.cwd).as_deref(),
        req.workspace,
        &ctx.config.sandbox,
    ) else {
        return decision;
    };
    let roots = spec.writable_roots();
    let outside: Vec<PathBuf> = destinations
        .into_iter()
        .map(|d| std::fs::canonicalize(&d).unwrap_or(d))
        .filter(|d| !roots.iter().any(|r| d.starts_with(r)))
        .collect();
    let mut needs = Needs::default();
    for destination in &outside {
        for dir in crate::spec::grantable_dirs(&destination.join("HEAD")) {
            if !needs.writable.contains(&dir) {
                needs.writable.push(dir);
            }
        }
    }
    if needs.writable.is_empty() {
        return decision;
    }
    decision.grant = decision.grant.with_needs(&needs);
    if own_remote::own_remote_pushes(&decision, ctx, req, shadowed, &outside) {
        decision.reason = format!(
            "it pushes into {}, the remote this repository's own config names on this machine; \
             it runs in the sandbox with that repository writable, its config and hooks \
             read-only ({})",
            needs.writable.join(", "),
            decision.reason
        );
        return decision;
    }
    decision.decision = Verdict::Ask;
    decision.code = Code::NeedsApproval;
    decision.reason = format!(
        "it pushes into the repository {} on this machine, outside what the line may write; \
         approved, it runs in the sandbox with that repository writable ({})",
        needs.writable.join(", "),
        decision.reason
    );
    decision
}

/// `git push -u` / `--set-upstream` (also in a cluster of short options, `-fu`; not inside the
/// value glued to `-o`, `-ofoo-u`).
fn sets_upstream(command: &ParsedCommand) -> bool {
    command.program == "git"
        && command.argv.first().map(String::as_str) == Some("push")
        && command.argv[1..].iter().any(|w| {
            w == "--set-upstream"
                || w.strip_prefix('-').is_some_and(|cluster| {
                    !cluster.starts_with('-')
                        && cluster.split('o').next().is_some_and(|f| f.contains('u'))
                })
        })
}

/// Where `git push` goes when that is a path on this machine (absolute, `~/`, `file://`, or
/// relative to `cwd`).
fn local_push_destination(command: &ParsedCommand, cwd: &Path) -> Option<PathBuf> {
    if command.program != "git" || command.argv.first().map(String::as_str) != Some("push") {
        return None;
    }
    let target = command.argv[1..].iter().find(|w| !w.starts_with('-'))?;
    let path = target.strip_prefix("file://").unwrap_or(target);
    if path.starts_with("~/") || path.starts_with('/') {
        return crate::paths::home_relative(path);
    }
    (path.starts_with("./") || path.starts_with("../")).then(|| cwd.join(path))
}

/// The first program of `commands` (or a wrapper it runs through, `sudo …`) whose file, found as
/// `execvp` would, is set-user-ID or set-group-ID.
fn set_id_program(
    commands: &[crate::parse::Command],
    path: Option<&std::ffi::OsStr>,
    cwd: &Path,
) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let names = commands.iter().flat_map(|c| {
        c.via
            .iter()
            .map(String::as_str)
            .chain(std::iter::once(c.path.as_deref().unwrap_or(&c.program)))
    });
    names
        .filter(|name| !name.is_empty())
        .find(|name| {
            let found = if name.contains('/') {
                Some(cwd.join(name))
            } else {
                crate::sandbox::resolve_program(std::ffi::OsStr::new(name), path).ok()
            };
            found
                .and_then(|file| std::fs::metadata(file).ok())
                .is_some_and(|m| m.is_file() && m.permissions().mode() & 0o6000 != 0)
        })
        .map(str::to_owned)
}

/// Who allows the decided line, then where it runs (in the shell, or with its grant), recorded.
fn run_decided(
    ctx: &Context,
    req: &LineRequest,
    side: &ShellSide,
    decision: &Decision,
    request: &RequestId,
    line: &str,
) -> Outcome {
    let (decider, grant) = match authorize(ctx, req, decision, line, request) {
        Ok((decider, grant)) => {
            let a_person = decider == Decider::Person
                || (decider == Decider::Rule && decision.a_persons_standing_yes);
            (decider, grant.allowed_by(a_person))
        }
        Err(e) => {
            let logged = record(
                ctx,
                request,
                decided(LoggedDecision::Deny, decider_of(&e), &e.code, &e.reason),
            );
            return Outcome::Refused(logged.err().unwrap_or(e));
        }
    };
    // A line a person let run outside the sandbox runs in their shell as typed, as in confirmed
    // Full access (an editor gets the terminal and the shell's aliases).
    let unsandboxed = grant.sandbox == SandboxPolicy::FullAccess;
    let once_outside = unsandboxed && ctx.resolved.sandbox != SandboxPolicy::FullAccess;
    // Checked again after the question: a program may have been planted while it was up.
    if once_outside && let Err(e) = outside::still_unplanted(ctx, req, decision, request) {
        return Outcome::Refused(e);
    }
    let in_shell = req.origin == Origin::Hook
        && (unsandboxed
            || side
                .in_shell
                .is_some_and(|runs| runs(decision, &ctx.resolved, req.shell, side.shadowed)))
        // The person's own shell withholds nothing: a line that reads the environment's
        // credentials runs there only when a person said yes to running it outside the sandbox
        // (under confirmed Full access too, it runs outside the shell, without them).
        && ((unsandboxed && decider == Decider::Person) || !reads_credentials(ctx, req, decision));
    let why = match (in_shell, unsandboxed) {
        (true, true) => "allowed outside the sandbox; it runs in the shell as typed".to_owned(),
        (true, false) => {
            "allowed; it only changes the shell's own state, so it runs in the shell".to_owned()
        }
        (false, _) => decision.reason.clone(),
    };
    if let Err(e) = record(
        ctx,
        request,
        decided(LoggedDecision::Allow, decider, &Code::Allowed, &why),
    ) {
        return Outcome::Refused(e);
    }
    if in_shell {
        return Outcome::RunInShell { once_outside };
    }
    if req.origin == Origin::Hook && names_the_shells_jobs(&decision.commands) {
        tell_line_stderr(req.streams, JOBS_STAY_IN_THE_SHELL);
    }
    let run = Decided {
        ctx,
        req,
        side,
        decision,
        request,
        line,
    };
    execute(&run, &grant)
}

/// Whether the line prints the environment or reads a variable withheld from lines (expands it,
/// or names it to a command: `printenv GH_TOKEN`, `declare -p GH_TOKEN`): it must not run in the
/// person's own shell, where nothing is withheld (`export -p`, `declare -p`, and under Full access
/// every line, would otherwise run there). Setting or unsetting one (`export GH_TOKEN=…`, `unset
/// GH_TOKEN`) still runs there.
fn reads_credentials(ctx: &Context, req: &LineRequest, decision: &Decision) -> bool {
    use policy::environment::{credentials_named, expands_any, prints_environment};
    let withheld =
        policy::environment::withhold(caller_env(req), &ctx.config.sandbox.pass_env).withheld;
    decision.commands.iter().any(|c| {
        let sets =
            c.program == "unset" || (c.program == "export" && !c.argv.iter().any(|a| a == "-p"));
        prints_environment(c).is_some()
            || !credentials_named(c).is_empty()
            || c.argv
                .iter()
                .any(|a| expands_any(a, &withheld) || (!sets && withheld.contains(a)))
    })
}

fn record(ctx: &Context, request: &RequestId, body: EventBody) -> Result<()> {
    ctx.log()?.append(Some(request), body).map(|_| ())
}

fn asked(line: &str, cwd: &str, d: &Decision) -> EventBody {
    EventBody::ApprovalAsked(LineAsked {
        line: line.to_owned(),
        program: first_program(&d.commands),
        cwd: cwd.to_owned(),
        mode: d.mode.clone(),
        sandbox: d.grant.sandbox,
        grant: (d
            .grant
            .extra_over(&Grant::base(d.grant.sandbox, false))
            .is_some())
        .then(|| d.grant.clone()),
        code: d.code,
        reason: d.reason.clone(),
    })
}

/// A `never` rule's refusal, recorded as `autoReview/rejection` so the session's statistics count
/// never-rule rejections in every mode.
fn never_rejection(line: &str, d: &Decision) -> EventBody {
    EventBody::AutoReviewRejection(ReviewRejection {
        line: line.to_owned(),
        program: first_program(&d.commands),
        cause: RejectionCause::NeverRule,
        code: d.code,
        reason: d.reason.clone(),
        reviewer: None,
        duration_ms: None,
        fallback: None,
    })
}

fn decided(decision: LoggedDecision, by: Decider, code: &Code, reason: &str) -> EventBody {
    EventBody::ApprovalDecided(ApprovalDecision {
        decision,
        by,
        code: *code,
        reason: reason.to_owned(),
    })
}

/// The program a line is "about", for one-shot approvals and the log: the first command's.
pub fn first_program(commands: &[ParsedCommand]) -> String {
    commands
        .first()
        .map(|c| c.program.clone())
        .unwrap_or_default()
}

fn decider_of(e: &Error) -> Decider {
    match e.code {
        Code::ApprovalRejected | Code::ApprovalUnavailable => Decider::Person,
        Code::AutoReviewDenied => Decider::Reviewer,
        Code::NeedsReview | Code::AutoReviewFailed | Code::ReviewerUnconfigured => {
            Decider::Fallback
        }
        Code::CircuitOpen => Decider::Breaker,
        _ => Decider::Rule,
    }
}

/// Who allows the line and with which grant (the decision's, or narrower), or why it is refused.
fn authorize(
    ctx: &Context,
    req: &LineRequest,
    decision: &Decision,
    line: &str,
    request: &RequestId,
) -> Result<(Decider, Grant)> {
    match decision.decision {
        Verdict::Allow => Ok((Decider::Rule, decision.grant.clone())),
        Verdict::Deny => Err(Error::new(decision.code, decision.reason.clone())),
        Verdict::Ask => {
            let (grant, why) = person_grant(ctx, req, decision);
            ask_person(ctx, decision, &grant, line, &why).map(|()| (Decider::Person, grant))
        }
        Verdict::Review => review_line(ctx, req, decision, line, request),
    }
}

/// The grant a person is asked about, and why. A line the decision would let run outside the
/// sandbox once a person approves it (one that only edits shellgate's own config, see
/// `policy::own_config`) does so only from the person's own shell (a hook), where it runs as
/// typed, in that shell. Through `run`, the shell entry point or the `wrap` broker it would run
/// with its caller's environment, which the question does not show (an agent's `LD_PRELOAD`
/// would run unsandboxed after a yes to `vim …`): there it keeps the mode's sandbox.
fn person_grant(ctx: &Context, req: &LineRequest, decision: &Decision) -> (Grant, String) {
    let outside = decision.grant.sandbox == SandboxPolicy::FullAccess
        && ctx.resolved.sandbox != SandboxPolicy::FullAccess;
    if outside && req.origin != Origin::Hook {
        return (
            Grant::base(ctx.resolved.sandbox, ctx.resolved.network),
            format!(
                "{}; not from this door, though: only a line typed in your own hooked shell runs \
                 outside the sandbox, so here it keeps the sandbox (where shellgate's config is \
                 read-only)",
                decision.reason
            ),
        );
    }
    (decision.grant.clone(), decision.reason.clone())
}

/// The workspace of a line (the one resolver), or its working directory when it has none: what
/// the reviewer's read-only tools may look at.
pub(crate) fn workspace_for(
    commands: &[ParsedCommand],
    cwd: &Path,
    fixed: Option<&Path>,
    settings: &crate::config::SandboxSettings,
) -> PathBuf {
    let entered = entered_dir(commands, cwd);
    crate::spec::line_workspace(cwd, entered.as_deref(), fixed, settings)
        .0
        .root()
        .map_or_else(|| cwd.to_path_buf(), Path::to_path_buf)
}

/// Where the literal `cd`s a line starts with take it (`cd ~/proj && git commit`, typed from the
/// home; `cd ~ && cd proj`), canonical, if anywhere: the sandbox takes the workspace found there,
/// if one is, instead of the working directory's ([`crate::sandbox::line_workspace`]).
///
/// Why this widens nothing: the same `cd DIR` typed as a line of its own would have made `DIR`
/// the working directory of the next line, and so `DIR`'s workspace that line's, decided by the
/// same resolver (which refuses the home, its dot directories and system trees whatever the
/// directory). Only `cd`s that run first, each with one literal operand naming an existing
/// directory, count: anything else (`cd "$X"`, `cd -`, a `cd` after another command, an
/// exported `CDPATH`) keeps the working directory. A `CDPATH` the person's shell did not export
/// is not seen here: such a `cd` may land elsewhere than this says, which only makes its line
/// fail in the sandbox (and ask); and a `cd` that fails leaves the line in its working directory
/// with `DIR`'s workspace writable — either way a workspace a line of its own could have reached.
pub(crate) fn entered_dir(commands: &[ParsedCommand], cwd: &Path) -> Option<PathBuf> {
    if crate::env::get().non_empty("CDPATH").is_some() {
        return None;
    }
    let mut dir: Option<PathBuf> = None;
    for operand in commands.iter().map_while(cd_operand) {
        let base = dir.as_deref().unwrap_or(cwd);
        let path = match operand {
            "~" => crate::paths::home_relative("~/")?,
            _ if operand.starts_with("~/") => crate::paths::home_relative(operand)?,
            _ => base.join(operand),
        };
        dir = Some(std::fs::canonicalize(path).ok().filter(|p| p.is_dir())?);
    }
    dir
}

/// The one literal directory a `cd` command names (`cd DIR`, `cd -- DIR`).
fn cd_operand(command: &ParsedCommand) -> Option<&str> {
    let literal = command.program == "cd"
        && command.via.is_empty()
        && !command.args_dynamic
        && !command.args_glob
        && !command.calls_line_function;
    let operands: Vec<&str> = command
        .argv
        .iter()
        .map(String::as_str)
        .skip_while(|w| *w == "--")
        .collect();
    match operands.as_slice() {
        [dir] if literal && !dir.starts_with('-') && !dir.is_empty() => Some(dir),
        _ => None,
    }
}

/// The reviewer judges the line; its outcome maps 1:1 to what happens.
fn review_line(
    ctx: &Context,
    req: &LineRequest,
    decision: &Decision,
    line: &str,
    request: &RequestId,
) -> Result<(Decider, Grant)> {
    let Some(config) = &ctx.config.reviewer else {
        // The decision core denies review without a `[reviewer]`; this is that same refusal.
        return Err(Error::new(
            Code::ReviewerUnconfigured,
            decision.reason.clone(),
        ));
    };
    let workspace = workspace_for(
        &decision.commands,
        &ctx.cwd,
        req.workspace,
        &ctx.config.sandbox,
    );
    let cache_dir = ctx.paths.as_ref().map(review::cache_dir);
    let review_request = ReviewRequest::new(line, &ctx.cwd, decision, config, &ctx.state, request)
        .with_workspace(&workspace)
        .with_session(ctx.log.as_ref())
        .with_cache_dir(cache_dir.as_deref())
        .with_person_present(approval::person_present());
    // A caller's descriptors (the `wrap` broker) are not this process's terminal to draw on.
    let progress = req.progress && !matches!(req.streams, Streams::Fds(_));
    let outcome = crate::term::spinner::while_waiting(review::SPINNER_LABEL, progress, || {
        review::review(&review_request)
    });
    match &outcome {
        // The reviewer may narrow the grant asked for, never widen it.
        ReviewOutcome::Allowed(reviewed) => {
            Ok((Decider::Reviewer, reviewed.verdict.granted(&decision.grant)))
        }
        ReviewOutcome::AllowedOnce(_) => Ok((Decider::Fallback, decision.grant.clone())),
        ReviewOutcome::AskPerson(_)
        | ReviewOutcome::Denied {
            person_may_override: true,
            ..
        } => {
            let why = outcome
                .question(line)
                .unwrap_or_else(|| decision.reason.clone());
            ask_person(ctx, decision, &decision.grant, line, &why)
                .map(|()| (Decider::Person, decision.grant.clone()))
        }
        _ => Err(outcome.refusal(line).unwrap_or_else(|| {
            Error::internal("the reviewer's outcome neither allows nor refuses the line")
        })),
    }
}

/// Ask the person at the controlling terminal whether the line may run with `grant`; no terminal
/// or no answer denies.
pub fn ask_person(
    ctx: &Context,
    decision: &Decision,
    grant: &Grant,
    line: &str,
    why: &str,
) -> Result<()> {
    // "Always" only for the question about the decision's own grant (not an escalation's wider
    // one, nor a run outside the sandbox: the rule would allow the line in the sandbox, and a
    // person's line that works only outside it — ssh, git's remotes — is asked again each time),
    // and not while the config is invalid: the rule could not be added to it.
    let outside = grant.sandbox == SandboxPolicy::FullAccess;
    let always = policy::always::offered(decision, line)
        .filter(|_| *grant == decision.grant && !outside && ctx.config.invalid.is_none());
    let question = Question {
        line: line.to_owned(),
        cwd: ctx.cwd.to_string_lossy().into_owned(),
        grant: grant.clone(),
        why: why.to_owned(),
        kind: match &always {
            Some(always) => QuestionKind::AllowOnceOrAlways {
                always: always.clone(),
            },
            None => QuestionKind::AllowOnce,
        },
        timeout: Duration::from_secs(ctx.config.approval.timeout_s),
    };
    match approval::ask(&question)? {
        Answer::Approved => Ok(()),
        Answer::ApprovedAlways => {
            if let Some(always) = &always {
                allow_always(always);
            }
            Ok(())
        }
        Answer::Rejected => Err(Error::new(
            Code::ApprovalRejected,
            "a person rejected this line at the terminal",
        )),
    }
}

/// Writes the person's "always" as a rule in their config file and says where.
fn allow_always(always: &policy::always::Always) {
    let Some(file) = crate::config::Locations::from_env(std::path::PathBuf::new()).user_file else {
        approval::tell(
            "shellgate: no config directory (HOME is not set); allowed this once only\n",
        );
        return;
    };
    let reason = "allowed for good by a person at the terminal";
    match crate::config::append_allow_rule(&file, always, reason) {
        Ok(id) => approval::tell(&format!(
            "shellgate: {} is allowed from now on{} (rule {id} in {}; delete it there to undo)\n",
            approval::always_scope(always),
            approval::always_reach(always),
            file.display()
        )),
        Err(e) => approval::tell(&format!(
            "shellgate: allowed this once only; the rule could not be saved: {}\n",
            e.reason
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_command(line: &str) -> ParsedCommand {
        crate::parse::parse(line, ShellKind::Bash)
            .commands
            .remove(0)
    }

    #[test]
    fn set_upstream_is_told_from_a_value_glued_to_o() {
        for line in [
            "git push -u origin main",
            "git push -fu origin",
            "git push --set-upstream origin main",
            "git push -uoci.skip origin",
        ] {
            assert!(sets_upstream(&first_command(line)), "{line}");
        }
        for line in [
            "git push origin main",
            "git push -oqueue-u origin",
            "git push --force origin",
            "git pull -u",
        ] {
            assert!(!sets_upstream(&first_command(line)), "{line}");
        }
    }
}
