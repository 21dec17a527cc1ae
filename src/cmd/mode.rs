//! `shellgate mode [ID]` (alias `permissions`): list the modes, or select one.
//!
//! Selecting is for a person at a terminal only: an agent's call is refused (`TERMINAL_REQUIRED`).
//! Full access (any mode without a sandbox) also needs the word `full` typed on the terminal, after
//! a warning, and lasts for this shell session only: it is recorded as a confirmed `mode/changed`
//! event in the session's log, and a new session resolves a saved Full access to `ask`.

use super::mode_select::{ModeChoices, mode_choices, render_choices, select_mode};
use crate::approval::{self, Answer, Question, QuestionKind};
use crate::audit::event::{Actor, ModeChange};
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
    let cwd = super::working_dir(None);
    let use_ = if args.id.is_some() {
        SessionUse::Open
    } else {
        SessionUse::ReadIfNamed
    };
    let ctx = Context::load(&cwd, None, use_)?;
    let choices = choices(&ctx.config);
    match &args.id {
        None => list(&ctx, &choices, args.json),
        Some(input) => select(&ctx, &choices, input),
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

fn select(ctx: &Context, choices: &ModeChoices, input: &str) -> Result<ExitCode> {
    let choice = select_mode(&choices.choices, input)?;
    if !approval::person_present() {
        return Err(Error::new(
            Code::TerminalRequired,
            "only a person at a terminal can change the mode; this call has no terminal",
        ));
    }
    let full = is_full_access(&ctx.config, &choice.id);
    if full {
        confirm_full_access(ctx, &choice.id)?;
    }
    let facts = SessionFacts {
        full_access_confirmed: full,
        review_disabled: false,
    };
    let resolved = resolve(Some(&choice.id), &ctx.config, facts);
    ctx.log()?.append(
        None,
        EventBody::ModeChanged(ModeChange {
            from: Some(ctx.desired.clone()),
            to: choice.id.clone(),
            sandbox: resolved.sandbox,
            by: Actor::Person,
            confirmed: full,
        }),
    )?;
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
        if resolved.sandbox == SandboxPolicy::FullAccess {
            ", this session only"
        } else {
            ""
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

fn confirm_full_access(ctx: &Context, id: &str) -> Result<()> {
    let question = Question {
        line: format!("shellgate mode {id}"),
        cwd: ctx.cwd.to_string_lossy().into_owned(),
        grant: crate::policy::grant::Grant::base(SandboxPolicy::FullAccess, true),
        why: format!("{FULL_ACCESS_WARNING} Type `full` to confirm."),
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
