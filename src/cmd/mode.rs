//! `shellgate mode [ID]` (alias `permissions`): list the modes, or select one.
//!
//! Selecting is for a person at a terminal only: an agent's call is refused (`TERMINAL_REQUIRED`).
//! Full access (any mode without a sandbox) also needs the word `full` typed on the terminal, after
//! a warning, and lasts for this shell session only: it is recorded as a confirmed `mode/changed`
//! event in the session's log, and a new session resolves a saved Full access to `ask`.

use super::mode_select::{ModeChoices, mode_choices, render_choices, select_mode};
use crate::approval::{self, Answer, Question, QuestionKind};
use crate::audit::event::{Actor, ModeChange, Timestamp};
use crate::audit::{EventBody, settings};
use crate::config::Config;
use crate::error::{Code, Error, Result};
use crate::mode::{SandboxPolicy, SessionFacts, resolve};
use crate::session::{Context, SessionUse, is_full_access};
use clap::Args;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ModeArgs {
    /// The mode to select: an id (`ask`, `auto`, `untrusted`, `read-only`, `full`, `custom`,
    /// `profile:<id>`), a profile id, or an unambiguous display name. Without it, list the modes.
    pub id: Option<String>,
    /// Full access for this long only (`10m`, `90s`, `1h`): it ends by itself, in every shell of
    /// the session, and is never restored.
    #[arg(long = "for", value_name = "DURATION")]
    pub for_: Option<String>,
    #[arg(long)]
    pub json: bool,
}

/// The warning shown before Full access is confirmed.
pub const FULL_ACCESS_WARNING: &str = "WARNING: Full access runs every command with NO sandbox and \
NO review, as you, until this shell session ends. Rules that deny (`never`) still apply.";

pub fn run(args: ModeArgs) -> ExitCode {
    super::exit_with(execute(&args))
}

fn execute(args: &ModeArgs) -> Result<ExitCode> {
    let cwd = crate::session::working_dir(None);
    let use_ = if args.id.is_some() {
        SessionUse::Open
    } else {
        SessionUse::ReadIfNamed
    };
    let ctx = Context::load(&cwd, None, use_)?;
    let choices = choices(&ctx.config);
    match &args.id {
        None => list(&ctx, &choices, args.json),
        Some(input) => select(&ctx, &choices, input, args.for_.as_deref()),
    }
}

fn choices(config: &Config) -> ModeChoices {
    let profiles: Vec<(String, Option<String>)> = config
        .profiles
        .iter()
        .map(|(id, p)| (id.clone(), p.name.clone()))
        .collect();
    mode_choices(&profiles)
}

fn list(ctx: &Context, choices: &ModeChoices, json: bool) -> Result<ExitCode> {
    if json {
        let ids: Vec<&str> = choices.choices.iter().map(|c| c.id.as_str()).collect();
        super::print_json(&serde_json::json!({
            "desired": ctx.desired,
            "effective": ctx.resolved,
            "choices": ids,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", render_choices(choices, &ctx.desired));
    println!(
        "in effect: {} (sandbox {}): {}; lines known only to read run in the read-only sandbox",
        ctx.resolved.mode,
        ctx.resolved.sandbox,
        ctx.resolved.approval.describe()
    );
    if ctx.resolved.mode != ctx.desired {
        println!(
            "effective mode: {} ({})",
            ctx.resolved.mode,
            ctx.resolved.note.as_deref().unwrap_or("")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn select(
    ctx: &Context,
    choices: &ModeChoices,
    input: &str,
    for_: Option<&str>,
) -> Result<ExitCode> {
    let choice = select_mode(&choices.choices, input)?;
    let lasting = for_.map(parse_lasting).transpose()?;
    let full = is_full_access(&ctx.config, &choice.id);
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
    if full {
        confirm_full_access(ctx, &choice.id, lasting)?;
    }
    let expires = lasting.map(|d| Timestamp::from_system_time(std::time::SystemTime::now() + d));
    let facts = SessionFacts {
        full_access_confirmed: full,
        review_disabled: false,
    };
    let resolved = resolve(Some(&choice.id), ctx.config.modes(), facts);
    ctx.log()?.append(
        None,
        EventBody::ModeChanged(ModeChange {
            from: Some(ctx.desired.clone()),
            to: choice.id.clone(),
            sandbox: resolved.sandbox,
            by: Actor::Person,
            confirmed: full,
            expires,
        }),
    )?;
    mark_prompt(ctx, full, expires);
    if let Some(paths) = &ctx.paths {
        let is_full = |id: &str| is_full_access(&ctx.config, id);
        settings::update(&paths.settings_file(), &is_full, |s| {
            s.mode = choice.id.clone()
        })?;
    }
    println!(
        "mode: {} ({}; sandbox {}{})",
        choice.id,
        choice.display_name,
        resolved.sandbox,
        match (resolved.sandbox == SandboxPolicy::FullAccess, lasting) {
            (true, Some(d)) => format!(
                ", for {} (until {}), this session only",
                humantime::format_duration(d),
                expires.map(|e| e.to_string()).unwrap_or_default()
            ),
            (true, None) => ", this session only".to_owned(),
            _ => String::new(),
        }
    );
    if std::env::var_os(crate::audit::paths::SESSION_ENV).is_none() {
        println!(
            "note: no shell session is hooked here (SHELLGATE_SESSION is not set); the choice is \
             saved for new sessions"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--for`: a duration between one second and a day.
fn parse_lasting(text: &str) -> Result<Duration> {
    let d = humantime::parse_duration(text).map_err(|_| {
        Error::usage(format!(
            "--for {:?}: expected a duration such as 90s, 10m or 1h",
            crate::intake::visible(text)
        ))
    })?;
    if d < Duration::from_secs(1) || d > Duration::from_secs(24 * 3600) {
        return Err(Error::usage("--for takes between 1s and 24h"));
    }
    Ok(d)
}

/// Every hooked shell of the session shows Full access at its prompt while it lasts.
fn mark_prompt(ctx: &Context, full: bool, expires: Option<Timestamp>) {
    let (Some(paths), Some(session)) = (&ctx.paths, &ctx.session_id) else {
        return;
    };
    let until = full.then(|| expires.map_or(0, |e| e.unix_ms() / 1000));
    crate::shell::function::mark_full_access(paths, &session.to_string(), until);
}

fn confirm_full_access(ctx: &Context, id: &str, lasting: Option<Duration>) -> Result<()> {
    let question = Question {
        line: format!("shellgate mode {id}"),
        cwd: ctx.cwd.to_string_lossy().into_owned(),
        grant: crate::policy::grant::Grant::base(SandboxPolicy::FullAccess, true),
        why: match lasting {
            Some(d) => format!(
                "{} Type `full` to confirm.",
                FULL_ACCESS_WARNING.replace(
                    "until this shell session ends",
                    &format!(
                        "for {} (or until this shell session ends, if sooner)",
                        humantime::format_duration(d)
                    )
                )
            ),
            None => format!("{FULL_ACCESS_WARNING} Type `full` to confirm."),
        },
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
