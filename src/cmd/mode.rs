//! `shellgate mode [ID]` (alias `permissions`): list the modes, or select one.
//!
//! Selecting is for a person at a terminal only: an agent's call is refused (`TERMINAL_REQUIRED`).
//! Full access (any mode without a sandbox) also needs the word `full` typed on the terminal, after
//! a warning, and lasts for this shell session only: it is recorded as a confirmed `mode/changed`
//! event in the session's log, and a new session resolves a saved Full access to `ask`.

use super::mode_select::{ModeChoices, mode_choices, render_choices, select_mode};
use crate::config::Config;
use crate::error::Result;
use crate::mode::SandboxPolicy;
use crate::mode_change;
use crate::session::{Context, SessionUse};
use clap::Args;
use std::process::ExitCode;

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
    let lasting = for_.map(mode_change::parse_lasting).transpose()?;
    let selected = mode_change::select(ctx, ctx.log()?, &choice.id, lasting)?;
    println!(
        "mode: {} ({}; sandbox {}{})",
        choice.id,
        choice.display_name,
        selected.resolved.sandbox,
        match (
            selected.resolved.sandbox == SandboxPolicy::FullAccess,
            lasting
        ) {
            (true, Some(d)) => format!(
                ", for {} (until {}), this session only",
                humantime::format_duration(d),
                selected.expires.map(|e| e.to_string()).unwrap_or_default()
            ),
            (true, None) => ", this session only".to_owned(),
            _ => String::new(),
        }
    );
    if crate::env::get().own.session.is_none() {
        println!(
            "note: no shell session is hooked here (SHELLGATE_SESSION is not set); the choice is \
             saved for new sessions"
        );
    }
    Ok(ExitCode::SUCCESS)
}
