//! `shellgate check`: decide a line without running anything.
//!
//! The line is decided in the same [`Context`] as `run` (config, session state, saved settings,
//! mode). In a mode with a reviewer, a line the rules route to review is judged by the reviewer model
//! here too, so `check` reports the real verdict. That review is recorded in the session log like one
//! made by `run` — a review `check` paid for counts against the session's budget and feeds its
//! breaker and cache — so a review opens (or, when `SHELLGATE_SESSION` names none, creates) the
//! session log. Lines that need no review never create one.

use crate::audit::{RequestId, Session, SessionId, StatePaths};
use crate::config::ReviewerConfig;
use crate::error::{Code, Error};
use crate::intake::visible;
use crate::mode::Resolved;
use crate::parse::ShellKind;
use crate::policy::{self, Decision, Route, Verdict};
use crate::review::{self, ReviewReport, ReviewRequest};
use crate::session::{Context, SessionUse};
use clap::Args;
use serde::Serialize;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Mode to decide in: ask, auto, untrusted, full, read-only, custom or profile:<id> (default: the config's).
    #[arg(long)]
    pub mode: Option<String>,
    /// Working directory the line would run in (default: the current one).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Syntax of the line.
    #[arg(long, value_enum, default_value = "bash")]
    pub shell: ShellKind,
    /// Print one JSON object instead of a readable line.
    #[arg(long)]
    pub json: bool,
    /// Decide the line as one a person types at the terminal in their own hooked shell (what is
    /// asked there, and what runs once outside the sandbox), not as an agent's.
    #[arg(long)]
    pub typed: bool,
    /// The line, as one argument; `-` reads it from standard input exactly as received.
    #[arg(value_name = "LINE", required = true, num_args = 1.., allow_hyphen_values = true)]
    pub line: Vec<OsString>,
}

/// Standard input beyond this many bytes is refused as too long without reading further.
const MAX_STDIN_BYTES: usize = 1 << 20;

/// What `check` prints: the decision (after the review, when there was one) and the review.
#[derive(Debug, Serialize)]
pub struct CheckReport {
    #[serde(flatten)]
    pub decision: Decision,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewReport>,
    /// The rule a person's "always" answer to the question would write, when it offers one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub always: Option<policy::always::Always>,
}

pub fn run(args: CheckArgs) -> ExitCode {
    let cwd = crate::session::working_dir(args.cwd.as_deref());
    let report = match line_bytes(&args.line) {
        Ok(bytes) => {
            let mut report = check_line(&bytes, &args, &cwd);
            report.always =
                policy::always::offered(&report.decision, &String::from_utf8_lossy(&bytes));
            report
        }
        Err(e) => plain(Decision::refused(
            e.code,
            Route::Intake,
            e.reason,
            &Resolved::safe_default(None),
        )),
    };
    if args.json {
        super::print_json(&report);
    } else {
        println!("{}", one_line(&report.decision));
    }
    ExitCode::from(report.decision.code.exit_status())
}

fn plain(decision: Decision) -> CheckReport {
    CheckReport {
        decision,
        review: None,
        always: None,
    }
}

/// Decide, then review when the decision says so.
fn check_line(bytes: &[u8], args: &CheckArgs, cwd: &Path) -> CheckReport {
    let ctx = match Context::load(cwd, args.mode.as_deref(), SessionUse::ReadIfNamed) {
        Ok(ctx) => ctx,
        Err(e) => return plain(context_refusal(e)),
    };
    let mut decision = if args.typed {
        crate::gate::decide_typed(&ctx, bytes, args.shell, cwd)
    } else {
        crate::gate::decide_line(bytes, args.shell, cwd, ctx.config.policy(), &ctx.resolved)
    };
    // Under an invalid config the decision is the strictest policy's; its note names the file.
    if let Some(invalid) = &ctx.config.invalid {
        decision.note = Some(crate::config::invalid_notice(invalid));
    }
    let Some(reviewer) = &ctx.config.reviewer else {
        return plain(decision);
    };
    // A breaker tripped with `abort` refuses every line of the session, not only reviewed ones.
    if decision.decision != Verdict::Deny
        && let Some(err) = review::abort_refusal(&ctx.state)
    {
        return plain(refuse(decision, err));
    }
    if decision.decision != Verdict::Review {
        return plain(decision);
    }
    reviewed(bytes, decision, reviewer, &ctx, cwd, !args.json)
}

/// Runs the review and folds its outcome into the decision; with `progress`, a slow review shows
/// a spinner on the person's terminal (`term::spinner`).
fn reviewed(
    bytes: &[u8],
    mut decision: Decision,
    reviewer: &ReviewerConfig,
    ctx: &Context,
    cwd: &Path,
    progress: bool,
) -> CheckReport {
    // The decision core only routes lines that passed intake to review.
    let line = match crate::intake::intake(bytes) {
        Ok(line) => line,
        Err(rejection) => {
            return plain(refuse(
                decision,
                Error::new(rejection.code(), rejection.reason()),
            ));
        }
    };
    let (paths, log) = match open_log(ctx) {
        Ok(opened) => opened,
        Err(err) => return plain(refuse(decision, err)),
    };
    let request_id = RequestId::new_random();
    let cache_dir = review::cache_dir(&paths);
    let workspace = crate::gate::workspace_for(&decision.commands, cwd, None, &ctx.config.sandbox);
    let review_request = ReviewRequest::new(
        line.as_str(),
        cwd,
        &decision,
        reviewer,
        &ctx.state,
        &request_id,
    )
    .with_workspace(&workspace)
    .with_session(Some(&log))
    .with_cache_dir(Some(&cache_dir))
    .with_person_present(crate::approval::person_present());
    let outcome = crate::term::spinner::while_waiting(review::SPINNER_LABEL, progress, || {
        review::review(&review_request)
    });
    outcome.settle(&mut decision, line.as_str());
    CheckReport {
        review: Some(outcome.report(line.as_str())),
        decision,
        always: None,
    }
}

/// The session log a review is recorded in: the one `SHELLGATE_SESSION` names, else a new one.
fn open_log(ctx: &Context) -> Result<(StatePaths, Session), Error> {
    let paths = match &ctx.paths {
        Some(paths) => paths.clone(),
        None => StatePaths::from_env()?,
    };
    let id = ctx.session_id.clone().unwrap_or_else(SessionId::new_random);
    let log = Session::open(&paths, id)?;
    Ok((paths, log))
}

/// The decision turned into a refusal with `err`'s code and reason.
fn refuse(mut decision: Decision, err: Error) -> Decision {
    decision.decision = Verdict::Deny;
    decision.code = err.code;
    decision.reason = err.reason;
    decision
}

/// The session the line would be decided in could not be read (an invalid config is no error:
/// it decides with the strictest built-in policy).
fn context_refusal(e: Error) -> Decision {
    Decision::refused(
        e.code,
        Route::Config,
        e.reason,
        &Resolved::safe_default(None),
    )
}

/// The line from the arguments: one argument, or `-` for standard input.
fn line_bytes(args: &[OsString]) -> Result<Vec<u8>, Error> {
    match args {
        [one] if one == "-" => read_stdin(),
        [one] => Ok(one.as_bytes().to_vec()),
        _ => Err(Error::usage(format!(
            "check takes the line as one argument ({} were given): quote it, e.g. shellgate check -- 'rm -rf x'",
            args.len()
        ))),
    }
}

fn read_stdin() -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_STDIN_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            Error::new(
                Code::InputRejected,
                format!("standard input could not be read: {e}"),
            )
        })?;
    if bytes.len() > MAX_STDIN_BYTES {
        return Err(Error::new(
            Code::LineTooLong,
            format!(
                "the line on standard input is longer than {MAX_STDIN_BYTES} bytes; the limit is {} \
                 characters. Nothing was run. Write the script to a file in the workspace and run that file instead",
                crate::intake::MAX_LINE_CHARS
            ),
        ));
    }
    Ok(bytes)
}

/// `deny NEVER_POLICY [rule builtin.rm-system] mode=ask sandbox=workspace-write network=off: …`
pub fn one_line(d: &Decision) -> String {
    let route = match &d.rule {
        Some(rule) => format!("rule {rule}"),
        None => d.route.as_str().to_owned(),
    };
    let verdict = d.decision.as_str();
    let note = d
        .note
        .as_ref()
        .map(|n| format!(" (note: {})", visible(n)))
        .unwrap_or_default();
    format!(
        "{verdict} {} [{route}] mode={} sandbox={} network={}: {}{note}",
        d.code,
        d.mode,
        d.grant.sandbox,
        d.grant.network,
        visible(&d.reason)
    )
}
