//! `shellgate status`: the session at a glance — desired and effective mode, sandbox support,
//! auto review, budgets, breaker, statistics and the most recent verdicts.

use crate::audit::event::Timestamp;
use crate::error::Result;
use crate::sandbox;
use crate::session::{Context, SessionUse};
use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct StatusArgs {
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: StatusArgs) -> ExitCode {
    super::exit_with(execute(&args))
}

fn execute(args: &StatusArgs) -> Result<ExitCode> {
    let cwd = crate::session::working_dir(None);
    let ctx = Context::load(&cwd, None, SessionUse::ReadIfNamed)?;
    let sandbox_line = sandbox::detect().summary();
    let recent: Vec<_> = ctx.state.recent.iter().rev().take(5).collect();
    let expires = ctx.state.mode.as_ref().and_then(|m| m.expires);
    let left = expires.map(time_left);
    if args.json {
        super::print_json(&serde_json::json!({
            "session": ctx.session_id,
            "desired_mode": ctx.desired,
            "effective": ctx.resolved,
            "settings_notes": ctx.settings.notes,
            "sandbox": sandbox_line,
            "review": ctx.state.review,
            "reviewer_configured": ctx.config.reviewer.is_some(),
            "budgets": ctx.state.budgets,
            "breaker": ctx.state.breaker,
            "statistics": ctx.state.stats,
            "recent_verdicts": recent,
            "mode_expires": expires,
            "mode_seconds_left": left.map(|d| d.as_secs()),
            "config_invalid": ctx.config.invalid.as_ref().map(|e| &e.reason),
        }));
        return Ok(ExitCode::SUCCESS);
    }
    let r = &ctx.resolved;
    if r.mode == ctx.desired {
        println!(
            "mode: {} (sandbox {}, network {}): {}",
            r.mode,
            r.sandbox,
            on_off(r.network),
            r.approval.describe()
        );
    } else {
        println!(
            "mode: desired {}, effective {} (sandbox {}, network {}): {}; {}",
            ctx.desired,
            r.mode,
            r.sandbox,
            on_off(r.network),
            r.approval.describe(),
            r.note.as_deref().unwrap_or("")
        );
    }
    if let Some(invalid) = &ctx.config.invalid {
        println!(
            "config: INVALID: {}",
            crate::config::invalid_notice(invalid)
        );
    }
    if let (Some(left), Some(end)) = (left, expires) {
        println!(
            "full access: {} left (until {end}), then back to {}",
            humantime::format_duration(left),
            ctx.state
                .mode
                .as_ref()
                .map(|m| crate::session::after_expiry(&ctx.config, m))
                .unwrap_or_default()
        );
    }
    for note in &ctx.settings.notes {
        println!("note: {note}");
    }
    match (
        &sandbox_line.reason,
        sandbox_line.default_policy_enforceable,
    ) {
        (_, true) => println!(
            "sandbox: workspace-write enforceable (Landlock ABI {})",
            sandbox_line.landlock_abi
        ),
        (Some(reason), false) => println!("sandbox: NOT enforceable: {reason}"),
        (None, false) => println!("sandbox: NOT enforceable"),
    }
    let reviewer = ctx.config.reviewer.is_some();
    match &ctx.session_id {
        Some(id) => print!(
            "{}",
            super::auto_review::render_status(id, &ctx.state, reviewer, Timestamp::now())
        ),
        None => {
            let (word, meaning) = ctx.state.review.describe(reviewer);
            println!("auto review: {word}: {meaning}");
            println!("session: none (SHELLGATE_SESSION is not set; hooks set it)");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

/// What is left of a time-boxed mode, to the second.
fn time_left(end: crate::audit::event::Timestamp) -> std::time::Duration {
    let now = crate::audit::event::Timestamp::now().unix_ms();
    std::time::Duration::from_secs(end.unix_ms().saturating_sub(now) / 1000)
}
