//! The whole path of one line: decide → ask a person or the reviewer → run in the sandbox → record.
//!
//! `run`, the interactive hooks and the shell entry point all hand their line to [`handle`], so a
//! line is judged, asked about, executed and logged the same way whichever door it came through.
//! Every failure on the way denies, and says which failure it was; nothing runs before its
//! `approval/asked` and `exec/started` events are in the session log.

use crate::approval::{self, Answer, Question, QuestionKind};
use crate::audit::event::{
    ApprovalDecision, Decider, Decision as LoggedDecision, ExecFinished, ExecStarted, LineAsked,
    RejectionCause, ReviewRejection, SandboxDenied, SandboxViolation,
};
use crate::audit::{EventBody, RequestId};
use crate::error::{Code, Error, Result};
use crate::mode::{ApprovalPolicy, SandboxPolicy};
use crate::parse::{Command as ParsedCommand, ShellKind};
use crate::policy::grant::{Grant, Needs, Network, SSH_AGENT};
use crate::policy::{self, Decision, Verdict};
use crate::review::{self, ReviewOutcome, ReviewRequest};
use crate::session::{Context, SessionUse};
use crate::shell::{ACTIVE_ENV, real_shell};
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

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
            execution,
            streams: Streams::Inherit,
            origin,
            env: None,
            cancel: None,
            workspace: None,
            process_group: None,
            progress: true,
            process_exits_after: true,
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
            ..self
        }
    }
}

/// What became of the line.
#[derive(Debug)]
pub enum Outcome {
    /// Allowed, and it only changes the shell's own state: the hook lets the shell run it.
    RunInShell,
    /// It ran; this is its exit status.
    Ran(ExitStatus),
    /// It did not run, and this is why.
    Refused(Error),
}

/// What an interactive shell's hook function adds to its line (see [`crate::shell::function`]):
/// descriptors for the line's program (the shell state comes back on one), and the names that
/// shell has as aliases, functions or disabled builtins, which never run in the shell as if they
/// were builtins.
#[derive(Debug, Default)]
pub struct ShellSide<'a> {
    /// `(descriptor, number in the program)`, 3–9; passed only to a sandboxed line.
    pub passed: &'a [(BorrowedFd<'a>, RawFd)],
    pub shadowed: &'a [String],
}

/// Decide, authorise, run and record one line. Inside a wrapped agent (`SHELLGATE_BROKER`), where
/// shellgate's state is read-only, the `wrap` broker does all of it.
pub fn handle(req: &LineRequest) -> Outcome {
    handle_with(req, &ShellSide::default())
}

/// [`handle`], for a line from an interactive shell's hook function. Inside a wrapped agent the
/// broker gets the line without `side` (its protocol carries no descriptors): the line still
/// runs, and nothing of its state comes back.
pub fn handle_with(req: &LineRequest, side: &ShellSide) -> Outcome {
    if let Some(path) = crate::broker::broker_path() {
        return crate::broker::forward(&path, req);
    }
    let ctx = match Context::load(req.cwd, req.mode, SessionUse::Open) {
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
/// outright carries it in its refusal instead (see [`handle_with`]).
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

/// The line's decision and what became of it, in a loaded context; and whether the person or
/// agent was told that the config is invalid ([`tell_invalid_config`]).
fn decide_and_run(ctx: &Context, req: &LineRequest, side: &ShellSide) -> (Outcome, bool) {
    // A tripped breaker with `action = abort` refuses every line until a person resets it.
    if let Some(e) = review::abort_refusal(&ctx.state) {
        return (Outcome::Refused(e), false);
    }
    let cwd = req.cwd.to_string_lossy();
    let remotes = crate::git_config::remotes_for_line(req.bytes, req.cwd);
    let decision = policy::decide_bytes(
        req.bytes,
        req.shell,
        &cwd,
        policy::PolicyConfig {
            typed_by_a_person: typed_by_a_person(ctx, req),
            remotes: remotes.as_ref(),
            ..ctx.config.policy()
        },
        &ctx.resolved,
    );
    let decision = only_outside_works(decision, ctx, req);
    let decision = pushes_outside(decision, ctx, req);
    let decision = refused_before_asking(decision, ctx);
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

/// A line a person types in their own hooked shell, outside Full access (where lines run in the
/// shell): what only the sandbox and the seal contain is not asked about
/// ([`policy::Input::typed_by_a_person`]). Not an agent's shell (no terminal).
fn typed_by_a_person(ctx: &Context, req: &LineRequest) -> bool {
    req.origin == Origin::Hook
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
    let path = req
        .env
        .and_then(|env| {
            env.iter()
                .find(|(k, _)| k == "PATH")
                .map(|(_, v)| v.clone())
        })
        .or_else(|| std::env::var_os("PATH"));
    let person_approves = matches!(
        ctx.resolved.approval,
        ApprovalPolicy::Ask | ApprovalPolicy::Untrusted
    );
    // A credential store the person asks to read or write in their own shell: the sandbox hides
    // it from every line, so a yes would only show an empty file there.
    if decision.rule.as_deref() == Some("builtin.credential-read")
        && decision.decision == Verdict::Ask
        && req.origin == Origin::Hook
        && person_approves
    {
        decision.grant = Grant::base(SandboxPolicy::FullAccess, true);
        decision.reason.push_str(
            "; the sandbox hides credential stores from every line, so approved, this line runs \
             once outside the sandbox, in this shell as typed",
        );
        return decision;
    }
    // ssh and git's remotes use the person's keys, agent (`SSH_AUTH_SOCK`), known hosts and
    // credential helpers: a sandboxed line can be granted the agent and port 22 (an agent's line
    // is), but not the keys, credential helpers or a `known_hosts` to add to; in the person's own
    // shell all of it is theirs.
    if req.origin == Origin::Hook
        && person_approves
        && decision.commands.iter().any(|c| {
            SSH_TOOLS.contains(&c.program.as_str())
                || (c.program == "git" && !decision.grant.network.is_off())
        })
    {
        decision.decision = Verdict::Ask;
        decision.code = Code::NeedsApproval;
        decision.grant = Grant::base(SandboxPolicy::FullAccess, true);
        decision.reason = format!(
            "ssh and git's remotes use your keys, ssh agent, known hosts and credential helpers, \
             which a sandboxed line gets only in part; approved, this line runs once outside the \
             sandbox, in this shell as typed ({})",
            decision.reason
        );
        return decision;
    }
    // A terminal multiplexer serves the person's sessions from a server of theirs (its socket,
    // their terminal): inside a line it could only start one that ends with the line.
    if req.origin == Origin::Hook
        && person_approves
        && decision
            .commands
            .iter()
            .any(|c| MULTIPLEXERS.contains(&c.program.as_str()))
    {
        decision.decision = Verdict::Ask;
        decision.code = Code::NeedsApproval;
        decision.grant = Grant::base(SandboxPolicy::FullAccess, true);
        decision.reason = format!(
            "a terminal multiplexer serves your sessions from a server of yours, which a line in \
             the sandbox cannot reach; approved, this line runs once outside the sandbox, in this \
             shell as typed ({})",
            decision.reason
        );
        return decision;
    }
    let Some(program) = set_id_program(&decision.commands, path.as_deref(), req.cwd) else {
        return decision;
    };
    if req.origin == Origin::Hook && person_approves {
        decision.decision = Verdict::Ask;
        decision.code = Code::NeedsApproval;
        decision.grant = Grant::base(SandboxPolicy::FullAccess, true);
        decision.reason = format!(
            "`{program}` is set-id: it runs with privileges, which no sandbox gives; approved, \
             this line runs once outside the sandbox, in this shell as typed ({})",
            decision.reason
        );
    } else {
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
/// read-only). Where nobody can approve, or no grant could name it, the sandbox refuses it.
fn pushes_outside(mut decision: Decision, ctx: &Context, req: &LineRequest) -> Decision {
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
        decision.decision = Verdict::Ask;
        decision.code = Code::NeedsApproval;
        decision.grant = Grant::base(SandboxPolicy::FullAccess, true);
        decision.reason = format!(
            "`git push -u` records the branch's upstream in the repository's config, which no \
             sandboxed line may write; approved, this line runs once outside the sandbox, in this \
             shell as typed ({})",
            decision.reason
        );
        return decision;
    }
    let destinations: Vec<PathBuf> = decision
        .commands
        .iter()
        .filter_map(|c| local_push_destination(c, &ctx.cwd))
        .collect();
    if destinations.is_empty() {
        return decision;
    }
    let Ok(spec) = crate::sandbox::grant_spec(
        &decision.grant,
        &ctx.cwd,
        entered_dir(&decision.commands, &ctx.cwd).as_deref(),
        req.workspace,
        &ctx.config.sandbox,
    ) else {
        return decision;
    };
    let roots = spec.writable_roots();
    let mut needs = Needs::default();
    for destination in destinations {
        let canonical = std::fs::canonicalize(&destination).unwrap_or(destination);
        if roots.iter().any(|r| canonical.starts_with(r)) {
            continue;
        }
        for dir in crate::sandbox::grantable_dirs(&canonical.join("HEAD")) {
            if !needs.writable.contains(&dir) {
                needs.writable.push(dir);
            }
        }
    }
    if needs.writable.is_empty() {
        return decision;
    }
    decision.grant = decision.grant.with_needs(&needs);
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
        Ok((decider, grant)) => (decider, grant.allowed_by(decider == Decider::Person)),
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
    let in_shell = req.origin == Origin::Hook
        && (unsandboxed
            || crate::shell::in_shell::may_run_in_shell(
                decision,
                &ctx.resolved,
                req.shell,
                side.shadowed,
            ))
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
        return Outcome::RunInShell;
    }
    execute(ctx, req, side, decision, &grant, request, line)
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

/// The environment of the line's caller, as it came: the broker's caller's, or this process's.
fn caller_env(req: &LineRequest) -> Vec<(OsString, OsString)> {
    match req.env {
        Some(env) => env.to_vec(),
        None => std::env::vars_os().collect(),
    }
}

/// The environment the line runs with, for every door and every sandbox (Full access too) — the
/// one place it is built: the caller's, with the credentials withheld
/// ([`policy::environment::withhold`]) except those the configuration passes (`[sandbox]
/// pass_env`) and those the line's grant passes (a person's yes: [`Grant::allowed_by`]), and
/// shellgate's mark of a judged line set to this request.
fn line_environment(
    ctx: &Context,
    req: &LineRequest,
    grant: &Grant,
    request: &RequestId,
) -> policy::environment::LineEnv {
    let mut env = caller_env(req);
    env.retain(|(key, _)| key != ACTIVE_ENV);
    let mut passed = ctx.config.sandbox.pass_env.clone();
    passed.extend(grant.env.iter().cloned());
    // The ssh agent's socket is found by this variable: granting the one is passing the other.
    if grant.sockets.iter().any(|s| s == SSH_AGENT) {
        passed.push(SSH_AUTH_SOCK.to_owned());
    }
    let mut line = policy::environment::withhold(env, &passed);
    line.vars.push((ACTIVE_ENV.into(), request.as_str().into()));
    line
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
    crate::sandbox::line_workspace(cwd, entered.as_deref(), fixed, settings)
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
    if std::env::var_os("CDPATH").is_some_and(|v| !v.is_empty()) {
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
    // No "allow always" while the config is invalid: the rule could not be added to it.
    let always = always_candidate(decision).filter(|_| ctx.config.invalid.is_none());
    let question = Question {
        line: line.to_owned(),
        cwd: ctx.cwd.to_string_lossy().into_owned(),
        grant: grant.clone(),
        why: why.to_owned(),
        kind: match &always {
            Some(program) => QuestionKind::AllowOnceOrAlways {
                program: program.clone(),
            },
            None => QuestionKind::AllowOnce,
        },
        timeout: Duration::from_secs(ctx.config.approval.timeout_s),
    };
    match approval::ask(&question)? {
        Answer::Approved => Ok(()),
        Answer::ApprovedAlways => {
            if let Some(program) = always {
                allow_always(&program);
            }
            Ok(())
        }
        Answer::Rejected => Err(Error::new(
            Code::ApprovalRejected,
            "a person rejected this line at the terminal",
        )),
    }
}

/// The program an "allow always" answer would allow for good: only where an `allow` rule for it
/// is what the line lacks — it was asked about by default (no rule flagged it), every command on
/// it is that one program by name, and nothing on it is opaque or touches hook state (which no
/// allow rule can allow).
fn always_candidate(decision: &Decision) -> Option<String> {
    let program = first_program(&decision.commands);
    let plain = decision.opaque.is_empty() && decision.hook_state.is_empty();
    (decision.decision == Verdict::Ask
        && decision.route == policy::Route::Default
        && plain
        && !program.is_empty()
        && decision
            .commands
            .iter()
            .all(|c| c.program == program && c.path.is_none() && !c.calls_line_function))
    .then_some(program)
}

/// Writes the person's "allow always" as a rule in their config file and says where.
fn allow_always(program: &str) {
    let Some(file) = crate::config::Locations::from_env(std::path::PathBuf::new()).user_file else {
        approval::tell(
            "shellgate: no config directory (HOME is not set); allowed this once only\n",
        );
        return;
    };
    let reason = "allowed for good by a person at the terminal";
    match crate::config::append_allow_rule(&file, program, reason) {
        Ok(id) => approval::tell(&format!(
            "shellgate: `{}` is allowed from now on (rule {id} in {}; delete it there to undo)\n",
            crate::intake::visible(program),
            file.display()
        )),
        Err(e) => approval::tell(&format!(
            "shellgate: allowed this once only; the rule could not be saved: {}\n",
            e.reason
        )),
    }
}

/// Run the line with its real shell, in the sandbox of its grant (none for confirmed Full
/// access). A line that fails where the sandbox refused it something is escalated (see
/// [`escalate`]).
fn execute(
    ctx: &Context,
    req: &LineRequest,
    side: &ShellSide,
    decision: &Decision,
    grant: &Grant,
    request: &RequestId,
    line: &str,
) -> Outcome {
    match spawn_and_wait(ctx, req, side, decision, grant, request, line) {
        Ok(mut ran) => {
            forget_cache_creation(&mut ran.denials, &decision.on_demand);
            if ran.status.success() || ran.denials.is_empty() {
                Outcome::Ran(ran.status)
            } else {
                escalate(ctx, req, side, decision, grant, request, line, &ran)
            }
        }
        Err(e) => Outcome::Refused(e),
    }
}

/// Drops the refused creation of a cache directory that a fetch on demand fills: npm makes
/// `~/.npm` on every run and goes on without it, so it explains no failure (`npx tsc` finding
/// type errors keeps its own status) and is no sign of a fetch; a write *inside* the cache is
/// both, and stays.
fn forget_cache_creation(denials: &mut Vec<crate::sandbox::Denial>, on_demand: &Needs) {
    let caches: Vec<PathBuf> = on_demand
        .writable
        .iter()
        .filter_map(|d| crate::paths::home_relative(d))
        .collect();
    denials.retain(|d| {
        !matches!(d, crate::sandbox::Denial::Write { path, operation }
            if *operation == crate::sandbox::CREATING_A_DIRECTORY && caches.contains(path))
    });
}

/// How a line that ran ended, and what the sandbox refused it meanwhile.
struct Ran {
    status: ExitStatus,
    denials: Vec<crate::sandbox::Denial>,
}

/// A line failed where the sandbox refused it something: say so, with the grant that would have
/// allowed it, and offer whoever approves lines in this mode (a person, or the reviewer in `auto`)
/// to run it again, once, with exactly that grant. Without one, the refusal (`SANDBOX_DENIED`,
/// with the missing grant) is the agent's to act on. Never a silent retry.
#[allow(clippy::too_many_arguments)]
fn escalate(
    ctx: &Context,
    req: &LineRequest,
    side: &ShellSide,
    decision: &Decision,
    grant: &Grant,
    request: &RequestId,
    line: &str,
    ran: &Ran,
) -> Outcome {
    let what: Vec<String> = ran.denials.iter().map(|d| d.describe()).collect();
    let missing = missing_grant(&ran.denials, &decision.on_demand);
    let widened = missing.as_ref().map(|m| grant.with_needs(m));
    let denied = SandboxDenied {
        refused: what.clone(),
        missing: missing.clone(),
        exit_code: ran.status.code(),
    };
    if let Err(e) = record(ctx, request, EventBody::SandboxDenied(denied)) {
        return Outcome::Refused(e);
    }
    let status_text = match ran.status.code() {
        Some(code) => format!("exited {code}"),
        None => "was killed".to_owned(),
    };
    let Some(widened) = widened.filter(|w| w != grant) else {
        let refusal = Error::new(
            Code::SandboxDenied,
            format!(
                "the line {status_text} after the sandbox refused {}, which no sandboxed line can \
                 be granted (the network and directories beneath your home can be); a person can \
                 run it in their own shell outside the sandbox",
                what.join(", ")
            ),
        );
        return outside_once(
            ctx,
            req,
            decision,
            request,
            line,
            &status_text,
            &what,
            refusal,
        );
    };
    let extra = widened
        .extra_over(grant)
        .unwrap_or_else(|| widened.to_string());
    let missing_json = serde_json::to_string(&missing).unwrap_or_default();
    let refusal = Error::new(
        Code::SandboxDenied,
        format!(
            "the line {status_text} after the sandbox refused {}; it would need {extra} \
             (missing grant: {missing_json})",
            what.join(", ")
        ),
    );
    let why = format!(
        "the line {status_text} after the sandbox refused {}; run it again, once, with {extra}?",
        what.join(", ")
    );
    let approved = match ctx.resolved.approval {
        ApprovalPolicy::None => return Outcome::Refused(refusal),
        ApprovalPolicy::Auto => {
            let mut again = decision.clone();
            again.grant = widened.clone();
            again.reason = format!("{} (escalation: {why})", decision.reason);
            review_line(ctx, req, &again, line, request)
        }
        ApprovalPolicy::Ask | ApprovalPolicy::Untrusted => {
            ask_person(ctx, decision, &widened, line, &why)
                .map(|()| (Decider::Person, widened.clone()))
        }
    };
    let (decider, granted) = match approved {
        Ok((decider, granted)) => (decider, granted.allowed_by(decider == Decider::Person)),
        Err(e) => {
            // The refusal goes on record like every other decision; a log that cannot take it
            // is the failure the agent is told about (the line had failed already).
            if let Err(logged) = record(
                ctx,
                request,
                decided(LoggedDecision::Deny, decider_of(&e), &e.code, &e.reason),
            ) {
                return Outcome::Refused(Error::new(
                    logged.code,
                    format!("{}; the line had failed: {}", logged.reason, refusal.reason),
                ));
            }
            // Nobody to ask, or nobody said yes: the sandbox's refusal is what the agent gets.
            return match e.code {
                Code::ApprovalUnavailable | Code::ReviewerUnconfigured => Outcome::Refused(refusal),
                _ => Outcome::Refused(Error::new(
                    e.code,
                    format!("{}; the line had failed: {}", e.reason, refusal.reason),
                )),
            };
        }
    };
    if let Err(e) = record(
        ctx,
        request,
        decided(
            LoggedDecision::Allow,
            decider,
            &Code::Allowed,
            &format!("run again, once, with {granted}"),
        ),
    ) {
        return Outcome::Refused(e);
    }
    match spawn_and_wait(ctx, req, side, decision, &granted, request, line) {
        Ok(again) => Outcome::Ran(again.status),
        Err(e) => Outcome::Refused(e),
    }
}

/// What no sandboxed line can be granted (a file in the home itself, a shell startup file,
/// `.git/config`, a hidden store): in a person's own hooked shell, where a person approves lines,
/// the question is whether this one line, typed there, runs again once **outside** the sandbox —
/// in that shell, as typed, the answer no by default; a yes then works. Any other door (an
/// agent's, `run`) gets the sandbox's refusal: a line there runs with its caller's environment,
/// which the question would not show.
#[allow(clippy::too_many_arguments)]
fn outside_once(
    ctx: &Context,
    req: &LineRequest,
    decision: &Decision,
    request: &RequestId,
    line: &str,
    status_text: &str,
    what: &[String],
    refusal: Error,
) -> Outcome {
    let person_approves = matches!(
        ctx.resolved.approval,
        ApprovalPolicy::Ask | ApprovalPolicy::Untrusted
    );
    if req.origin != Origin::Hook || !person_approves {
        return Outcome::Refused(refusal);
    }
    let why = format!(
        "the line {status_text} after the sandbox refused {}, which no sandboxed line can be \
         granted; run it again, once, outside the sandbox, in this shell as typed?",
        what.join(", ")
    );
    let outside = Grant::base(SandboxPolicy::FullAccess, true);
    if let Err(e) = ask_person(ctx, decision, &outside, line, &why) {
        if let Err(logged) = record(
            ctx,
            request,
            decided(LoggedDecision::Deny, decider_of(&e), &e.code, &e.reason),
        ) {
            return Outcome::Refused(logged);
        }
        // Declined (or nobody answered): what the person is left with is the sandbox's refusal
        // of the line that ran, not a refusal to run it.
        return Outcome::Refused(refusal);
    }
    match record(
        ctx,
        request,
        decided(
            LoggedDecision::Allow,
            Decider::Person,
            &Code::Allowed,
            "run again, once, outside the sandbox; it runs in the shell as typed",
        ),
    ) {
        Ok(()) => Outcome::RunInShell,
        Err(e) => Outcome::Refused(e),
    }
}

/// The grant that would have given the line what the sandbox refused: the ports it connected to
/// (the whole network for what has no port: a UDP socket, an unreadable address), the ports it
/// listened on (loopback), the directories it wrote to where a grant can reach. A line whose
/// builds fetch on demand (`on_demand`, see [`policy::needs::on_demand`]) and that was refused
/// a connection, a name lookup or a write into a cache such a fetch fills gets that fetch's grant
/// instead of the whole network for its lookup. `None` when none of it can be granted.
fn missing_grant(denials: &[crate::sandbox::Denial], on_demand: &Needs) -> Option<Needs> {
    use crate::sandbox::Denial;
    let mut needs = Needs::default();
    let caches: Vec<_> = on_demand
        .writable
        .iter()
        .filter_map(|d| crate::paths::home_relative(d))
        .collect();
    let fetched = !on_demand.is_empty()
        && denials.iter().any(|d| match d {
            Denial::Connect { .. }
            | Denial::Direct { .. }
            | Denial::Host { .. }
            | Denial::ConnectElsewhere
            | Denial::Udp => true,
            Denial::Write { path, .. } => caches.iter().any(|c| path.starts_with(c)),
            Denial::Listen { .. }
            | Denial::UnixSocket { .. }
            | Denial::SecondName { .. }
            | Denial::OpenerFailed { .. } => false,
        });
    if fetched {
        needs.add(on_demand);
    }
    // A server looking up its own address (`getaddrinfo` for a listening socket) makes UDP
    // sockets only to sort the answers (glibc's RFC 3484 ordering connects one per address and
    // sends nothing): beside a refused listener, a UDP socket is not a need for the network.
    let serves = denials.iter().any(|d| matches!(d, Denial::Listen { .. }));
    for denial in denials {
        match denial {
            // A port on any host: what a line whose client ignored the proxy would need.
            Denial::Connect { address } | Denial::Direct { address } => {
                needs.network = needs.network.union(&Network::tcp([address.port()]));
            }
            // A host the proxy refused: exactly that host and port.
            Denial::Host { host, port } => {
                // (A TLS hello without a readable name is no host a grant could name.)
                if let Some(endpoint) = crate::policy::endpoint::Endpoint::named(host, *port) {
                    needs.network = needs.network.union(&Network::to([endpoint]));
                }
            }
            Denial::Udp if serves => {}
            // The fetch's grant has its ports, and name lookups over TCP with them.
            Denial::ConnectElsewhere | Denial::Udp if fetched => {}
            Denial::ConnectElsewhere | Denial::Udp => needs.network = Network::On,
            Denial::Listen { address } if crate::sandbox::notify::grantable_listener(address) => {
                needs.listen.insert(address.port());
            }
            // Another address than loopback, or the kernel's pick of a port: no grant gives it.
            Denial::Listen { .. } => {}
            // Lines get no unix socket: none is grantable to one (only `wrap`'s contained agent
            // reaches one, the broker's).
            Denial::UnixSocket { .. } => {}
            // A second name of a file: no grant lets a line write through it (see
            // `sandbox::opener`); a failed opener is a failure, not a missing grant.
            Denial::SecondName { .. } | Denial::OpenerFailed { .. } => {}
            Denial::Write { path, .. } => {
                for dir in crate::sandbox::grantable_dirs(path) {
                    if !needs.writable.contains(&dir) {
                        needs.writable.push(dir);
                    }
                }
            }
        }
    }
    (!needs.is_empty()).then_some(needs)
}

const SSH_AUTH_SOCK: &str = "SSH_AUTH_SOCK";

/// The unix sockets a grant names, as paths: [`SSH_AGENT`] is the one `SSH_AUTH_SOCK` names in
/// the line's environment (left out when it names none, or not by an absolute path), any other
/// is its path.
fn granted_sockets(grant: &Grant, env: &[(OsString, OsString)]) -> Vec<PathBuf> {
    grant
        .sockets
        .iter()
        .filter_map(|name| {
            if name != SSH_AGENT {
                return Some(PathBuf::from(name));
            }
            env.iter()
                .find(|(key, _)| key == SSH_AUTH_SOCK)
                .map(|(_, value)| PathBuf::from(value))
        })
        .filter(|path| path.is_absolute())
        .collect()
}

/// A command that fetches on demand runs first without the network, told to fail a fetch at once
/// ([`policy::network::FAIL_FETCHES_AT_ONCE`]).
fn fail_fetches_at_once(env: &mut Vec<(std::ffi::OsString, std::ffi::OsString)>) {
    use policy::network::FAIL_FETCHES_AT_ONCE as SETTINGS;
    env.retain(|(key, _)| !SETTINGS.iter().any(|(name, _)| key == name));
    env.extend(SETTINGS.iter().map(|(k, v)| ((*k).into(), (*v).into())));
}

fn spawn_and_wait(
    ctx: &Context,
    req: &LineRequest,
    side: &ShellSide,
    decision: &Decision,
    grant: &Grant,
    request: &RequestId,
    line: &str,
) -> Result<Ran> {
    let shell = real_shell(req.shell).ok_or_else(|| {
        Error::new(
            Code::SandboxExecFailed,
            format!("no {} is installed to run the line", req.shell.as_str()),
        )
    })?;
    let policy::environment::LineEnv {
        vars: mut env,
        withheld,
    } = line_environment(ctx, req, grant, request);
    if !decision.on_demand.is_empty() && grant.network.is_off() {
        fail_fetches_at_once(&mut env);
    }
    let args = shell_args(req, line);
    let started = EventBody::ExecStarted(ExecStarted {
        sandbox: grant.sandbox,
        grant: Some(grant.clone()),
        shell: req.shell.as_str().to_owned(),
        pid: None,
        withheld,
    });
    let taken: Vec<RawFd> = side.passed.iter().map(|(_, number)| *number).collect();
    let (args, harness_fd) = match &decision.harness_write {
        Some(write) => {
            let (args, fd) = hand_harness_file(write, &env, line, args, &taken)?;
            (args, Some(fd))
        }
        None => (args, None),
    };
    if grant.sandbox == SandboxPolicy::FullAccess {
        let mut command = Command::new(&shell);
        command
            .args(&args)
            .env_clear()
            .envs(env)
            .current_dir(req.cwd);
        if let Some((fd, number)) = &harness_fd {
            pass_descriptor(&mut command, fd.as_raw_fd(), *number);
        }
        // A line for a caller that may go away runs in the caller's process group, or in one
        // of its own, so that all of it can be ended with the caller.
        let group = req
            .process_group
            .or_else(|| req.cancel.is_some().then_some(0));
        if let Some(group) = group {
            std::os::unix::process::CommandExt::process_group(&mut command, group);
        }
        attach_streams(&mut command, req.streams)?;
        record(ctx, request, started)?;
        let timer = Instant::now();
        let status = run_unsandboxed(command, &shell, req.cancel, group == Some(0))?;
        record_finished(ctx, request, grant, &status, timer);
        return Ok(Ran {
            status,
            denials: Vec::new(),
        });
    }
    let mut spec = crate::sandbox::grant_spec(
        grant,
        &ctx.cwd,
        entered_dir(&decision.commands, &ctx.cwd).as_deref(),
        req.workspace,
        &ctx.config.sandbox,
    )?;
    spec.host_processes = req.origin == Origin::Hook && acts_on_processes(&decision.commands);
    spec.unix_sockets = granted_sockets(grant, &env);
    let mut passed = side
        .passed
        .iter()
        .map(|(fd, number)| {
            fd.try_clone_to_owned()
                .map(|owned| (owned, *number))
                .map_err(|e| Error::internal(format!("cannot pass a descriptor on: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    passed.extend(harness_fd);
    let command = crate::sandbox::Command {
        arg0: shell.clone().into_os_string(),
        program: shell,
        args,
        env,
        cwd: req.cwd.to_path_buf(),
        stdio: stream_fds(req.streams)?,
        passed,
        process_group: req.process_group,
    };
    record(ctx, request, started)?;
    let timer = Instant::now();
    let mut running = crate::sandbox::spawn(&spec, command)?;
    if req.process_exits_after {
        running.leave_init_at_exit();
    }
    // Ignore Ctrl-C only once the child exists; it starts with the dispositions shellgate had.
    let _foreground = ForegroundSignals::ignore();
    let finished = running.wait(req.cancel)?;
    let status = finished.status;
    if finished.left_running {
        tell_line_stderr(
            req.streams,
            "[shellgate] processes this line left running were stopped with it (a line's \
             processes end when it does); run a server as a line of its own that stays in the \
             foreground\n",
        );
    }
    record_finished(ctx, request, grant, &status, timer);
    if let Some(refusal) = violation_refusal(&finished.violations) {
        for violation in &finished.violations {
            // A violation the log cannot take fails the line as an audit failure, naming what
            // was moved aside, since the log will not.
            record(
                ctx,
                request,
                EventBody::SandboxViolation(SandboxViolation {
                    path: violation.path.to_string_lossy().into_owned(),
                    quarantined: violation
                        .quarantined
                        .as_ref()
                        .map(|p| p.to_string_lossy().into_owned()),
                    what: violation.what.clone(),
                }),
            )
            .map_err(|logged| {
                Error::new(
                    logged.code,
                    format!("{}; not recorded: {}", logged.reason, refusal.reason),
                )
            })?;
        }
        return Err(refusal);
    }
    if let Some(refusal) = crate::sandbox::limit_refusal(&status, &spec.limits) {
        return Err(refusal);
    }
    Ok(Ran {
        status,
        denials: finished.denials,
    })
}

/// A recognised agent harness's own write (Claude Code's working-directory file), given to the
/// line as exactly that one file: opened here ([`crate::sandbox::harness_file`]: in the agent's
/// temp dir, never through a symlink, never another file), passed as a descriptor numbered 3–9
/// (not one of `taken`), and the line's `>| FILE` run as `>&N`. The sandbox grants nothing for it,
/// so a read-only line stays read-only; without a sandbox (Full access) the harness still cannot
/// name a file elsewhere, which its inner line's rules never saw. What does not fit refuses the
/// line. Returns the shell's arguments and the descriptor with its number.
fn hand_harness_file(
    write: &crate::parse::harness::HarnessWrite,
    env: &[(OsString, OsString)],
    line: &str,
    mut args: Vec<OsString>,
    taken: &[RawFd],
) -> Result<(Vec<OsString>, (OwnedFd, RawFd))> {
    let refuse = |why: &str| {
        Error::new(
            Code::SandboxExecFailed,
            format!("cannot hand the line Claude Code's working-directory file: {why}"),
        )
    };
    let number = (3u8..=9)
        .find(|n| !taken.contains(&RawFd::from(*n)))
        .ok_or_else(|| refuse("no descriptor number is free"))?;
    let rewritten = crate::parse::harness::with_write_to_descriptor(line, write, number)
        .ok_or_else(|| refuse("the line does not hold the redirection it was judged with"))?;
    // The shell's arguments hold the line once (`-c LINE`); anything else is not what was judged.
    let mut at = args
        .iter()
        .enumerate()
        .filter(|(_, a)| a.as_os_str() == line)
        .map(|(index, _)| index);
    let (Some(index), None) = (at.next(), at.next()) else {
        return Err(refuse(
            "the shell's arguments do not hold the line exactly once",
        ));
    };
    let slot = args
        .get_mut(index)
        .ok_or_else(|| refuse("the shell's arguments changed"))?;
    *slot = rewritten.into();
    let fd = crate::sandbox::harness_file::open(write, env)?;
    Ok((args, (fd, RawFd::from(number))))
}

/// Gives an unsandboxed line `fd` as descriptor `number`, as the sandbox gives a sandboxed one
/// its passed descriptors (`fd` is close-on-exec; the copy at `number` is not).
fn pass_descriptor(command: &mut Command, fd: RawFd, number: RawFd) {
    // SAFETY: the closure runs in the child between fork and exec and calls only dup2 and fcntl,
    // which are async-signal-safe; `fd` stays open in the parent until the spawn returns (the
    // caller owns it past `run_unsandboxed`).
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(command, move || {
            // dup2 onto itself would keep close-on-exec: clear the flag instead.
            let done = if fd == number {
                libc::fcntl(number, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, number)
            };
            if done < 0 {
                Err(std::io::Error::last_os_error())
            } else {
                Ok(())
            }
        });
    }
}

/// Confirmed Full access: the shell runs as it is, with no sandbox.
fn run_unsandboxed(
    mut command: Command,
    shell: &Path,
    cancel: Option<BorrowedFd>,
    own_group: bool,
) -> Result<ExitStatus> {
    let mut child = command.spawn().map_err(|e| {
        Error::new(
            Code::SandboxExecFailed,
            format!("cannot start {}: {e}", shell.display()),
        )
    })?;
    let _foreground = ForegroundSignals::ignore();
    wait_or_cancel(&mut child, cancel, own_group)?;
    child
        .wait()
        .map_err(|e| Error::internal(format!("cannot wait for the line: {e}")))
}

fn record_finished(
    ctx: &Context,
    request: &RequestId,
    grant: &Grant,
    status: &ExitStatus,
    started: Instant,
) {
    let finished = EventBody::ExecFinished(ExecFinished {
        exit_code: status.code(),
        signal: std::os::unix::process::ExitStatusExt::signal(status),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        sandbox: grant.sandbox,
    });
    if let Err(e) = record(ctx, request, finished) {
        // The line already ran; its status is still the truth for the caller.
        eprintln!("[shellgate] warning: the end of this line could not be logged: {e}");
    }
}

/// The refusal for a line whose guard moved something aside: the line fails closed.
pub fn violation_refusal(violations: &[crate::sandbox::Violation]) -> Option<Error> {
    if violations.is_empty() {
        return None;
    }
    let what: Vec<String> = violations.iter().map(|v| v.describe()).collect();
    Some(Error::new(
        Code::SandboxViolation,
        format!(
            "the line created or changed a file that git or a shell outside the sandbox would \
             run or read configuration from: {}",
            what.join("; ")
        ),
    ))
}

/// The process's exit for a program's status: its code, or the same signal death (the default
/// disposition restored first), as a shell reports and a caller expects.
pub fn end_like(status: &ExitStatus) -> std::process::ExitCode {
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        // SAFETY: restores the default disposition of a valid signal number and sends it to this
        // process; no Rust code runs as a handler.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::kill(libc::getpid(), signal);
        }
    }
    std::process::ExitCode::from(exit_code(status))
}

/// Writes a note to the stream the line's stderr was.
fn tell_line_stderr(streams: Streams, note: &str) {
    use std::io::Write;
    match streams {
        Streams::Fds([_, _, stderr]) => {
            if let Ok(fd) = stderr.try_clone() {
                let _ = std::fs::File::from(fd).write_all(note.as_bytes());
            }
        }
        Streams::Terminal => match OpenOptions::new().write(true).open("/dev/tty") {
            Ok(mut tty) => {
                let _ = tty.write_all(note.as_bytes());
            }
            Err(_) => eprint!("{note}"),
        },
        Streams::Inherit => eprint!("{note}"),
    }
}

/// The descriptors the line's standard streams are, when they are not this process's own.
pub(crate) fn stream_fds(streams: Streams) -> Result<Option<[OwnedFd; 3]>> {
    let dup = |fd: BorrowedFd| {
        fd.try_clone_to_owned()
            .map_err(|e| Error::internal(format!("cannot pass the streams on: {e}")))
    };
    match streams {
        Streams::Inherit => Ok(None),
        Streams::Fds([stdin, stdout, stderr]) => Ok(Some([
            dup(stdin.as_fd())?,
            dup(stdout.as_fd())?,
            dup(stderr.as_fd())?,
        ])),
        Streams::Terminal => match OpenOptions::new().read(true).write(true).open("/dev/tty") {
            Ok(tty) => {
                let tty = OwnedFd::from(tty);
                Ok(Some([dup(tty.as_fd())?, dup(tty.as_fd())?, tty]))
            }
            // No terminal (an interactive shell driven over pipes): keep stdin, send output to
            // stderr, since the hook's stdout is captured by PS0.
            Err(_) => {
                let stdin = dup(std::io::stdin().as_fd())?;
                let stderr = dup(std::io::stderr().as_fd())?;
                Ok(Some([stdin, dup(stderr.as_fd())?, stderr]))
            }
        },
    }
}

/// Wait for the child, killing it if the caller hangs up first. Without a cancel descriptor this
/// returns at once and the caller waits normally. The child's end is seen through a pidfd, so
/// neither event waits for a timer.
fn wait_or_cancel(
    child: &mut std::process::Child,
    cancel: Option<BorrowedFd>,
    own_group: bool,
) -> Result<()> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let Some(cancel) = cancel else {
        return Ok(());
    };
    let pid = i32::try_from(child.id())
        .map_err(|_| Error::internal("the line's process id is out of range"))?;
    let pidfd = crate::sandbox::pidfd_open(pid)
        .map_err(|e| Error::internal(format!("cannot watch the line: {e}")))?;
    loop {
        let mut fds = [
            PollFd::new(pidfd.as_fd(), PollFlags::POLLIN),
            PollFd::new(cancel, PollFlags::POLLIN),
        ];
        if poll(&mut fds, PollTimeout::NONE).is_err() {
            continue;
        }
        let ended = fds[0].revents().is_some_and(|r| !r.is_empty());
        let gone = fds[1].revents().is_some_and(|r| {
            r.intersects(PollFlags::POLLHUP | PollFlags::POLLIN | PollFlags::POLLERR)
        });
        if ended {
            return Ok(());
        }
        if gone {
            if own_group {
                // SAFETY: kill(2) on the process group this function's caller created for the
                // line (process_group(0) makes its pid the group id); no memory is involved.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
            let _ = child.kill();
            return Ok(());
        }
    }
}

fn shell_args(req: &LineRequest, line: &str) -> Vec<OsString> {
    match &req.execution {
        Execution::ShellArgs(args) => args.clone(),
        Execution::ShellC { positional } => {
            let mut args: Vec<OsString> = match req.shell {
                ShellKind::Pwsh => vec!["-NoProfile".into(), "-Command".into(), line.into()],
                _ => vec!["-c".into(), line.into()],
            };
            args.extend(positional.iter().cloned());
            args
        }
    }
}

fn attach_streams(command: &mut Command, streams: Streams) -> Result<()> {
    let dup = |fd: &OwnedFd| {
        fd.try_clone()
            .map_err(|e| Error::internal(format!("cannot pass the caller's streams on: {e}")))
    };
    match streams {
        Streams::Inherit => return Ok(()),
        Streams::Fds([stdin, stdout, stderr]) => {
            command
                .stdin(dup(stdin)?)
                .stdout(dup(stdout)?)
                .stderr(dup(stderr)?);
            return Ok(());
        }
        Streams::Terminal => {}
    }
    match OpenOptions::new().read(true).write(true).open("/dev/tty") {
        Ok(tty) => {
            let out = clone(&tty)?;
            let err = clone(&tty)?;
            command.stdin(tty).stdout(out).stderr(err);
        }
        // No terminal (an interactive shell driven over pipes): keep stdin, send output to stderr,
        // since the hook's stdout is captured by PS0.
        Err(_) => {
            let stderr = std::io::stderr()
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| Error::internal(format!("cannot duplicate stderr: {e}")))?;
            command.stdout(Stdio::from(stderr));
        }
    }
    Ok(())
}

fn clone(file: &File) -> Result<File> {
    file.try_clone()
        .map_err(|e| Error::internal(format!("cannot share the terminal with the line: {e}")))
}

/// While a line runs in the foreground, Ctrl-C and Ctrl-\ are for the line, not for shellgate:
/// like a shell waiting for its foreground job, shellgate ignores SIGINT and SIGQUIT until the
/// line ends (the line itself gets the default dispositions back at exec).
pub struct ForegroundSignals {
    int: libc::sighandler_t,
    quit: libc::sighandler_t,
}

impl ForegroundSignals {
    pub fn ignore() -> ForegroundSignals {
        // SAFETY: `signal` with SIG_IGN installs no Rust code as a handler, and the previous
        // dispositions are restored on drop. Called only after the child was spawned, so the
        // child keeps its own dispositions.
        unsafe {
            ForegroundSignals {
                int: libc::signal(libc::SIGINT, libc::SIG_IGN),
                quit: libc::signal(libc::SIGQUIT, libc::SIG_IGN),
            }
        }
    }
}

impl Drop for ForegroundSignals {
    fn drop(&mut self) {
        // SAFETY: restores the dispositions saved in `ignore`.
        unsafe {
            libc::signal(libc::SIGINT, self.int);
            libc::signal(libc::SIGQUIT, self.quit);
        }
    }
}

/// The exit status a caller of `run` sees: the line's own, or 128 + signal, as shells report it.
pub fn exit_code(status: &ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(1),
        (None, Some(signal)) => u8::try_from(128 + signal).unwrap_or(255),
        (None, None) => 1,
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
