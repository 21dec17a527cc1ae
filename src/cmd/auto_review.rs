//! `shellgate auto-review on|off|status|approve [N]`.
//!
//! `on`/`off` append a durable `autoReview/state` event; `approve N` appends an
//! `autoReview/override` for the N-th most recent denial. Turning review off is always allowed (it
//! sends lines to a person instead of the model), but only a person at a terminal may turn it back
//! on after a person turned it off, reset a tripped breaker, or approve a denied line: an agent's
//! call is refused with `TERMINAL_REQUIRED`.
//!
//! The actions themselves, [`switch_review`] and [`approve_denial`], are in
//! [`crate::audit::actions`], shared with the panel, so both append exactly the same events.

use super::log::resolve_session;
use crate::approval::person_present;
use crate::audit::actions::{approve_denial, switch_review};
use crate::audit::event::Timestamp;
use crate::audit::fold::{FoldParams, SessionState, fold};
use crate::audit::{Session, SessionId, StatePaths, settings};
use crate::error::{Error, Result};
use crate::intake::visible_line as visible;
use clap::{Args, Subcommand};
use std::io::Write;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct AutoReviewArgs {
    #[command(subcommand)]
    pub action: AutoReviewAction,
    /// The session (default: $SHELLGATE_SESSION; `status` falls back to the most recent session).
    #[arg(long, value_name = "ID", global = true)]
    pub session: Option<String>,
    /// Print the result as JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, Subcommand)]
pub enum AutoReviewAction {
    /// Turn auto review on (and reset a tripped circuit breaker, when a person does it).
    On,
    /// Turn auto review off: lines the reviewer would judge go to a person instead.
    Off,
    /// Show review on/off, budgets, the breaker, statistics and recent verdicts.
    Status,
    /// Approve the N-th most recent denial once (1 = the latest) for the next review of its
    /// program within 5 minutes; the reviewer is told, and still decides. A person only.
    Approve {
        #[arg(default_value_t = 1)]
        n: usize,
    },
}

pub fn run(args: AutoReviewArgs) -> ExitCode {
    super::exit_with(execute(&args).map(|()| ExitCode::SUCCESS))
}

/// The fold parameters for the commands: the configured `[reviewer]` limits (the same the reviewer
/// enforces), with review on unless the saved settings say otherwise.
fn fold_params(paths: &StatePaths) -> (FoldParams, bool) {
    let config = crate::config::load_or_strictest(&crate::session::working_dir(None));
    let is_full = |id: &str| crate::session::is_full_access(&config, id);
    let saved = settings::load(&paths.settings_file(), &is_full).settings;
    (
        crate::session::fold_params(&config, &saved),
        config.reviewer.is_some(),
    )
}

fn execute(args: &AutoReviewArgs) -> Result<()> {
    let paths = StatePaths::from_env()?;
    let (params, reviewer_configured) = fold_params(&paths);
    let reading = matches!(args.action, AutoReviewAction::Status);
    let id = resolve_session(&paths, args.session.as_deref(), reading)?;
    if reading {
        let state = fold(
            &crate::audit::log::read_log(&paths.session_log(&id))?.events,
            &params,
        );
        return print_status(&id, &state, reviewer_configured, args.json);
    }
    let session = Session::open(&paths, id)?;
    let state = fold(&session.read()?.events, &params);
    let person = person_present();
    let written = match args.action {
        AutoReviewAction::On => switch_review(&session, &state, true, person)?,
        AutoReviewAction::Off => switch_review(&session, &state, false, person)?,
        AutoReviewAction::Approve { n } => vec![approve_denial(&session, &state, n, person)?],
        AutoReviewAction::Status => Vec::new(),
    };
    let mut out = std::io::stdout().lock();
    for event in &written {
        let line = if args.json {
            serde_json::to_string(event).map_err(|err| Error::internal(err.to_string()))?
        } else {
            crate::audit::describe::describe_event(event)
        };
        writeln!(out, "{line}").map_err(|err| Error::internal(err.to_string()))?;
    }
    if written.is_empty() && !args.json {
        let note = if state.breaker.open {
            "auto review is already on; its circuit breaker is open, and only a person at a \
             terminal can reset it (`shellgate auto-review on`)"
        } else {
            "auto review is already on"
        };
        writeln!(out, "{note}").map_err(|err| Error::internal(err.to_string()))?;
    }
    Ok(())
}

fn print_status(
    id: &SessionId,
    state: &SessionState,
    reviewer_configured: bool,
    json: bool,
) -> Result<()> {
    let text = if json {
        serde_json::to_string(&serde_json::json!({ "session": id, "state": state }))
            .map_err(|err| Error::internal(err.to_string()))?
    } else {
        render_status(id, state, reviewer_configured, Timestamp::now())
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", text.trim_end()).map_err(|err| Error::internal(err.to_string()))
}

fn limit(used: u32, left: Option<u32>) -> String {
    match left {
        Some(left) => format!("{used} used, {left} left"),
        None => format!("{used} used, no limit"),
    }
}

/// The readable auto-review status (also the review part of `shellgate status`).
pub fn render_status(
    id: &SessionId,
    state: &SessionState,
    reviewer_configured: bool,
    now: Timestamp,
) -> String {
    let mut out = format!("session {id} ({} events)\n", state.events);
    let (word, meaning) = state.review.describe(reviewer_configured);
    out.push_str(&format!(
        "auto review: {word} (set by {}): {meaning}\n",
        state.review.by.as_str()
    ));
    out.push_str(&format!(
        "budgets: reviews {}; failures {}\n",
        limit(state.budgets.reviews, state.budgets.reviews_left()),
        limit(state.budgets.failures, state.budgets.failures_left())
    ));
    let breaker = &state.breaker;
    if breaker.open {
        out.push_str(&format!(
            "breaker: OPEN ({}; action {}); a person resets it with `shellgate auto-review on`\n",
            breaker
                .cause
                .as_ref()
                .map_or(String::new(), |c| visible(&c.describe())),
            breaker.action.as_str()
        ));
    } else {
        out.push_str(&format!(
            "breaker: closed ({} denial(s) in a row, {} in the last {} verdicts)\n",
            breaker.consecutive_denies,
            breaker.window_denies(),
            breaker.window.len()
        ));
    }
    let stats = &state.stats;
    out.push_str(&format!(
        "statistics: {} allowed, {} denied ({} cached), {} fallbacks, {} never-rule rejections, \
         mean review {}\n",
        stats.allows,
        stats.denies,
        stats.cached,
        stats.fallbacks,
        stats.never_rejections,
        stats
            .mean_review_ms()
            .map_or("-".to_string(), |ms| format!("{ms} ms"))
    ));
    for pending in state.pending_overrides(now) {
        out.push_str(&format!(
            "one-shot approval pending for {} until {}\n",
            visible(&pending.program),
            pending.expires
        ));
    }
    if !state.denials.is_empty() {
        out.push_str("recent denials (approve one with `shellgate auto-review approve N`):\n");
        for (n, denial) in state.denials.iter().rev().enumerate().take(5) {
            out.push_str(&format!(
                "  {:>2}  {}  {} ({}): {}\n",
                n + 1,
                denial.time,
                visible(&denial.verdict.line),
                denial.verdict.risk.as_str(),
                visible(&denial.verdict.reason)
            ));
        }
    }
    if !state.recent.is_empty() {
        out.push_str("recent verdicts:\n");
        for summary in state.recent.iter().rev().take(5) {
            let verdict = &summary.verdict;
            out.push_str(&format!(
                "  {}  {:<5} {:<8} {}{}  {}\n",
                summary.time,
                verdict.decision.as_str(),
                verdict.risk.as_str(),
                visible(&verdict.line),
                if verdict.cached { " (cached)" } else { "" },
                visible(&verdict.reason)
            ));
        }
    }
    out
}
