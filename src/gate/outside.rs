//! What runs outside the sandbox after a person's yes is never a file a sandboxed line could have
//! written.
//!
//! A line a person lets run once outside the sandbox (ssh, a set-id program, an editor on a
//! startup file, a line run again after the sandbox refused it) runs in their shell as typed, so
//! its programs are found on the shell's `PATH`. A `PATH` may hold a directory lines write: a
//! virtual environment's `bin` (`source .venv/bin/activate` puts it first), `node_modules/.bin`,
//! a tool's `./bin`. A line in the sandbox can put an `ssh` or a `vi` there, and the person's
//! next "yes, run it outside" would run it with all of the person's rights. The question shows the
//! line, not the file, so no person could see it.
//!
//! The rule, one check for every way out: before such a line is asked about, each of its programs
//! (and each wrapper reaching it, `sudo`, `env` …) is resolved as the shell would (a name on
//! `PATH`, a path from the working directory); one that lies where a line may write — a temp dir
//! (`/tmp`, `/var/tmp`, `/dev/shm`), or the workspace a line in its own directory would be given
//! (`spec::writable_by_lines`, on the one resolver of workspaces) — refuses the line, naming the file. Called by
//! [`super::decide_and_run`] for a decision that runs outside once, and by
//! [`super::escalate::outside_once`] before it offers a run outside; and once more after the
//! person's yes ([`still_unplanted`]), since the question can be up for a minute. What could
//! still appear between that and the run is the hook's to stop: it runs the line with the
//! directories lines write last on `PATH` and a name found only there refusing
//! (`shell::function`, `outside_once_apply`). Confirmed Full access runs
//! every line as typed by the mode's definition and is not checked; a program's own later
//! `exec`s are not seen (a script outside can still run a planted file it names).

use super::*;

/// A program of the line that a sandboxed line could have written.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Planted {
    /// The name as the line has it.
    pub name: String,
    /// The file it runs from.
    pub file: PathBuf,
    /// The directory lines may write that holds it.
    pub within: PathBuf,
}

impl Planted {
    /// Why the line does not run outside the sandbox.
    pub fn reason(&self) -> String {
        format!(
            "`{}` here is {}, which lines in the sandbox may write (it lies in {}), so the line \
             never runs outside the sandbox: a sandboxed line may have put it there; run the \
             program you mean by its full path, or take that directory off PATH",
            self.name,
            self.file.display(),
            self.within.display()
        )
    }
}

/// `PATH` as the line's shell has it: its caller's, or this process's.
pub(super) fn line_path(req: &LineRequest) -> Option<OsString> {
    req.env
        .and_then(|env| {
            env.iter()
                .find(|(k, _)| k == "PATH")
                .map(|(_, v)| v.clone())
        })
        .or_else(|| crate::env::get().var("PATH").map(OsStr::to_os_string))
}

/// The first program of `commands`, or wrapper reaching one, that runs from a file lines may
/// write.
pub(super) fn planted_program(
    ctx: &Context,
    req: &LineRequest,
    commands: &[ParsedCommand],
) -> Option<Planted> {
    let path = line_path(req);
    commands
        .iter()
        .flat_map(|c| {
            c.via
                .iter()
                .filter_map(|v| v.split_whitespace().next())
                .chain(std::iter::once(c.path.as_deref().unwrap_or(&c.program)))
        })
        .filter(|name| !name.is_empty())
        .find_map(|name| {
            let file = if name.contains('/') {
                req.cwd.join(name)
            } else {
                crate::sandbox::resolve_program(OsStr::new(name), path.as_deref()).ok()?
            };
            let within = match crate::spec::writable_by_lines(&file, &ctx.config.sandbox) {
                Ok(within) => within?,
                // Found, yet not resolvable now (removed, a loop, no access): where it lies is
                // not known, and nothing that cannot be placed runs outside.
                Err(e) => PathBuf::from(format!("an unknown place ({e})")),
            };
            Some(Planted {
                name: name.to_owned(),
                file,
                within,
            })
        })
}

/// After the person's yes, right before the line runs once outside: the same check again (a
/// program may have been planted while the question was up), a refusal recorded as the line's
/// decision. What appears after this is left to the hook, which runs the line with safe
/// directories first and every other name nowhere (`shell::function`).
pub(super) fn still_unplanted(
    ctx: &Context,
    req: &LineRequest,
    decision: &Decision,
    request: &RequestId,
) -> Result<()> {
    let Some(planted) = planted_program(ctx, req, &decision.commands) else {
        return Ok(());
    };
    let reason = format!("after the yes, {}", planted.reason());
    let e = Error::new(Code::NeverPolicy, reason);
    record(
        ctx,
        request,
        decided(LoggedDecision::Deny, decider_of(&e), &e.code, &e.reason),
    )?;
    Err(e)
}

/// A person's line decided to run once outside the sandbox, refused when one of its programs is a
/// file lines may write ([`planted_program`]).
pub(super) fn refuse_planted(mut decision: Decision, ctx: &Context, req: &LineRequest) -> Decision {
    let once_outside = decision.decision != Verdict::Deny
        && decision.grant.sandbox == SandboxPolicy::FullAccess
        && ctx.resolved.sandbox != SandboxPolicy::FullAccess;
    if !once_outside {
        return decision;
    }
    if let Some(planted) = planted_program(ctx, req, &decision.commands) {
        decision.decision = Verdict::Deny;
        decision.code = Code::NeverPolicy;
        decision.reason = planted.reason();
    }
    decision
}
