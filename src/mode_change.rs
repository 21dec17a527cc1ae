//! Selecting a mode: for a person at a terminal only, and Full access (any mode without a
//! sandbox) only after the word `full` is typed there, after a warning — whether the choice came
//! from `shellgate mode` or from the panel's button (the panel's own terminal asks). An agent
//! has no terminal, so it can never reach Full access. A time-boxed Full access (`--for`) records
//! its end in the `mode/changed` event; the session returns by itself at that end
//! (`session::end_expired_mode`).

use crate::approval::{self, Answer, Question, QuestionKind};
use crate::audit::event::{Actor, ModeChange, Timestamp};
use crate::audit::{EventBody, Session, settings};
use crate::error::{Code, Error, Result};
use crate::mode::{Resolved, SandboxPolicy, SessionFacts, resolve};
use crate::session::{Context, is_full_access};
use std::time::Duration;

/// The warning shown before Full access is confirmed: how long it lasts is said in its middle.
fn full_access_warning(lasting: Option<Duration>) -> String {
    let how_long = match lasting {
        Some(d) => format!(
            "for {} (or until this shell session ends, if sooner)",
            humantime::format_duration(d)
        ),
        None => "until this shell session ends".to_owned(),
    };
    format!(
        "WARNING: Full access runs every command with NO sandbox and NO review, as you, \
         {how_long}. Rules that deny (`never`) still apply."
    )
}

/// The longest time-boxed Full access.
pub const MAX_LASTING: Duration = Duration::from_secs(24 * 3600);

/// What a selection made.
#[derive(Debug)]
pub struct Selected {
    pub resolved: Resolved,
    /// When a time-boxed Full access ends.
    pub expires: Option<Timestamp>,
}

/// `--for`: a duration between one second and a day.
pub fn parse_lasting(text: &str) -> Result<Duration> {
    let d = humantime::parse_duration(text).map_err(|_| {
        Error::usage(format!(
            "--for {:?}: expected a duration such as 90s, 10m or 1h",
            crate::intake::visible(text)
        ))
    })?;
    if d < Duration::from_secs(1) || d > MAX_LASTING {
        return Err(Error::usage("--for takes between 1s and 24h"));
    }
    Ok(d)
}

/// Selects mode `id` in the session of `log`: checks that a person is at this process's
/// terminal, asks them to confirm Full access, records the change (with its end when `lasting`),
/// marks the session's prompts and saves the choice for new sessions (Full access is never
/// restored from there).
pub fn select(
    ctx: &Context,
    log: &Session,
    id: &str,
    lasting: Option<Duration>,
) -> Result<Selected> {
    let full = is_full_access(&ctx.config, id);
    if lasting.is_some() && !full {
        return Err(Error::usage(
            "--for is for Full access only: other modes last until changed",
        ));
    }
    if !approval::person_present() {
        return Err(Error::new(
            Code::TerminalRequired,
            "only a person at a terminal can change the mode; this call has no terminal",
        ));
    }
    needs_no_missing_reviewer(ctx, id)?;
    if full {
        confirm_full_access(ctx, id, lasting)?;
    }
    let expires = lasting.map(|d| Timestamp::from_system_time(std::time::SystemTime::now() + d));
    let facts = SessionFacts {
        full_access_confirmed: full,
        review_disabled: false,
    };
    let resolved = resolve(Some(id), ctx.config.modes(), facts);
    log.append(
        None,
        EventBody::ModeChanged(ModeChange {
            from: Some(ctx.desired.clone()),
            to: id.to_owned(),
            sandbox: resolved.sandbox,
            by: Actor::Person,
            confirmed: full,
            expires,
        }),
    )?;
    mark_prompt(ctx, full, expires);
    if let Some(paths) = &ctx.paths {
        let is_full = |id: &str| is_full_access(&ctx.config, id);
        settings::update(&paths.settings_file(), &is_full, |s| s.mode = id.to_owned())?;
    }
    Ok(Selected { resolved, expires })
}

/// A mode whose lines go to the reviewer (`auto`, a profile with `approval = "auto"`) is not
/// selected without a `[reviewer]`: every line the rules flag would then be refused
/// (`REVIEWER_UNCONFIGURED`), which the person would learn one line at a time. The gate asks it
/// too, before it asks a person about `shellgate mode ID`: a yes must not end in this refusal.
pub fn needs_no_missing_reviewer(ctx: &Context, id: &str) -> Result<()> {
    if ctx.config.reviewer.is_some() {
        return Ok(());
    }
    // As the config says it, not as an invalid config's strictest policy resolves it.
    let modes = crate::mode::Modes {
        config_invalid: false,
        ..ctx.config.modes()
    };
    if !resolve(Some(id), modes, SessionFacts::default()).reviewer {
        return Ok(());
    }
    let file = crate::config::Locations::from_env(std::path::PathBuf::new())
        .user_file
        .map_or_else(|| "the user config".to_owned(), |f| f.display().to_string());
    Err(Error::new(
        Code::ReviewerUnconfigured,
        format!(
            "mode `{}` sends the lines the rules flag to the reviewer, and no `[reviewer]` is \
             configured in {file}, so each of them would be refused; the mode was not changed \
             (docs/reviewer.md says how to configure one)",
            crate::intake::visible(id)
        ),
    ))
}

/// Every hooked shell of the session shows Full access at its prompt while it lasts.
fn mark_prompt(ctx: &Context, full: bool, expires: Option<Timestamp>) {
    let (Some(paths), Some(session)) = (&ctx.paths, &ctx.session_id) else {
        return;
    };
    let until = full.then(|| expires.map_or(0, |e| e.unix_ms() / 1000));
    mark_full_access(paths, &session.to_string(), until);
}

/// Shows (`Some(end)`, Unix seconds, 0 for the session) or removes (`None`) the prompt marker.
/// Best effort: the marker never decides anything.
fn mark_full_access(paths: &crate::audit::StatePaths, session: &str, until: Option<u64>) {
    let path = crate::audit::paths::full_access_marker(paths, session);
    match until {
        Some(end) => {
            if crate::audit::paths::ensure_private_dir(
                &paths.root().join(crate::audit::paths::SHELLS_DIR),
            )
            .is_ok()
            {
                let _ = crate::audit::paths::write_private(&path, format!("{end}\n").as_bytes());
            }
        }
        None => {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn confirm_full_access(ctx: &Context, id: &str, lasting: Option<Duration>) -> Result<()> {
    let why = full_access_warning(lasting);
    let question = Question {
        line: format!("shellgate mode {id}"),
        cwd: ctx.cwd.to_string_lossy().into_owned(),
        grant: crate::policy::grant::Grant::base(SandboxPolicy::FullAccess, true),
        why: format!("{why} Type `full` to confirm."),
        kind: QuestionKind::TypedConfirmation {
            word: "full".to_owned(),
        },
        timeout: Duration::from_secs(ctx.config.approval.timeout_s),
    };
    match approval::ask(&question)? {
        Answer::Approved | Answer::ApprovedAlways => Ok(()),
        Answer::Rejected => Err(Error::new(
            Code::ApprovalRejected,
            "Full access was not confirmed; the mode is unchanged",
        )),
    }
}
