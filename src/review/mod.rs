//! Auto review: a second model judges a line the rules routed to `ai`, and shellgate fails closed.
//!
//! [`review`] is the one entry point. It takes a [`ReviewRequest`] (the line, its decision, the
//! reviewer config, the folded session state and where to record) and returns a [`ReviewOutcome`]
//! the caller maps one to one onto what happens to the line. In order:
//!
//! 1. **Circuit breaker** (from the fold): open → `delegate` asks a person (when there is one),
//!    `reject` and `abort` refuse with `CIRCUIT_OPEN` (abort also refuses every other line: see
//!    [`abort_refusal`]).
//! 2. **One-shot approval** (from the fold): when one applies to the line's program, the cache is
//!    skipped, the reviewer is told, and the review consumes it whatever its outcome.
//! 3. **Verdict cache** ([`cache`]): the same normalised line, cwd, mode and policy in the same
//!    session within `cache_ttl_s` reuses the verdict, recorded with `cached: true`.
//! 4. **Budgets** (from the fold): past `max_reviews` or `max_failures` the fallback applies.
//! 5. **The model** ([`client`]): prompt ([`prompt`]), read-only tools ([`tools`]), strict answer
//!    parsing ([`verdict`]). Any failure is [`ReviewFailure`], never a denial; the fallback applies.
//! 6. **Risk policy**: an allow above `max_auto_allow`, and any `critical` allow, becomes a question
//!    (`on_high_risk = delegate`, with a person present) or a denial.
//!
//! Every verdict and every line refused without one is appended to the session log through the one
//! seam ([`Session::append`]); if that append fails the outcome is `AUDIT_UNAVAILABLE` and the line
//! does not run, whatever the verdict was.

pub mod anthropic;
pub mod cache;
pub mod client;
pub mod failure;
pub mod openai;
pub mod prompt;
pub mod tools;
pub mod transcript;
pub mod verdict;

use crate::audit::event::{
    EventBody, FallbackAction, RejectionCause, ReviewRejection, ReviewVerdict, Reviewer, Timestamp,
};
use crate::audit::fold::{FoldParams, PendingOverride, SessionState};
use crate::audit::{RequestId, Session, StatePaths};
use crate::config::{
    BreakerAction, DenialAction, FallbackPolicy, HighRiskAction, Provider, ReviewerConfig,
    RiskLevel,
};
use crate::error::{Code, Error};
use crate::intake::visible_line as visible;
use crate::policy::Decision;
use crate::redact::redact;
use cache::{CacheKey, CachedVerdict, KeyParts, VerdictCache};
pub use failure::{FailureKind, ReviewFailure};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tools::Workspace;
pub use transcript::Transcript;
pub use verdict::{ToolRequest, Verdict, VerdictDecision};

/// What the person's terminal shows while the reviewer thinks (`term::spinner`), before the
/// elapsed time.
pub const SPINNER_LABEL: &str = "reviewing…";

/// Characters of the line quoted in messages.
const MAX_QUOTED_LINE_CHARS: usize = 200;

/// Everything one review needs. Built by `check`, the gate and `eval` with [`ReviewRequest::new`].
pub struct ReviewRequest<'a> {
    /// The line as it passed intake.
    pub line: &'a str,
    /// The directory the line would run in.
    pub cwd: &'a Path,
    /// The root the reviewer's tools may read beneath (the cwd unless the caller knows better).
    pub workspace: &'a Path,
    /// The decision core's decision; must be `review` (`NEEDS_REVIEW`).
    pub decision: &'a Decision,
    pub config: &'a ReviewerConfig,
    /// The session log verdicts are appended to; `None` records nothing and disables the cache.
    pub session: Option<&'a Session>,
    /// The session state folded with [`fold_params`] from the same log.
    pub state: &'a SessionState,
    /// The line's request id (`request` of the events).
    pub request: &'a RequestId,
    /// A person is at the terminal (`approval::person_present()`); decides whether a denial or a
    /// fallback may become a question.
    pub person_present: bool,
    /// Where the verdict cache lives ([`cache_dir`]); `None` disables it.
    pub cache_dir: Option<&'a Path>,
    /// The current time (one-shot approval expiry, cache TTL).
    pub now: Timestamp,
}

impl<'a> ReviewRequest<'a> {
    /// A review that records nothing (no session log, no cache), with the reviewer's tools
    /// reading beneath `cwd`, no person present, at the current time. Callers change what differs.
    pub fn new(
        line: &'a str,
        cwd: &'a Path,
        decision: &'a Decision,
        config: &'a ReviewerConfig,
        state: &'a SessionState,
        request: &'a RequestId,
    ) -> ReviewRequest<'a> {
        ReviewRequest {
            line,
            cwd,
            workspace: cwd,
            decision,
            config,
            session: None,
            state,
            request,
            person_present: false,
            cache_dir: None,
            now: Timestamp::now(),
        }
    }

    /// The root the reviewer's tools may read beneath, when it is not the cwd (the line's
    /// workspace).
    pub fn with_workspace(self, workspace: &'a Path) -> ReviewRequest<'a> {
        ReviewRequest { workspace, ..self }
    }

    /// The session log verdicts are appended to (`None`: nothing is recorded, no cache).
    pub fn with_session(self, session: Option<&'a Session>) -> ReviewRequest<'a> {
        ReviewRequest { session, ..self }
    }

    /// Where the verdict cache lives (`None`: no cache).
    pub fn with_cache_dir(self, cache_dir: Option<&'a Path>) -> ReviewRequest<'a> {
        ReviewRequest { cache_dir, ..self }
    }

    /// Whether a person is at the terminal (see [`crate::approval::person_present`]).
    pub fn with_person_present(self, person_present: bool) -> ReviewRequest<'a> {
        ReviewRequest {
            person_present,
            ..self
        }
    }
}

/// The verdict cache directory beneath the state root.
pub fn cache_dir(paths: &StatePaths) -> PathBuf {
    paths.root().join("review-cache")
}

/// The fold parameters for a reviewer config: its budgets and breaker.
pub fn fold_params(config: &ReviewerConfig, review_default: bool) -> FoldParams {
    FoldParams {
        review_default,
        budgets: config.budgets,
        breaker: config.breaker,
        ..FoldParams::default()
    }
}

/// With the breaker open and `action = abort`, every line is refused until a person resets it,
/// not only lines routed to review. Callers apply this before running any line of the session.
pub fn abort_refusal(state: &SessionState) -> Option<Error> {
    let breaker = &state.breaker;
    (breaker.open && breaker.action == BreakerAction::Abort).then(|| {
        Error::new(
            Code::CircuitOpen,
            format!(
                "the auto-review circuit breaker is open ({}) with action `abort`: every line is \
                 refused until a person resets it with `shellgate auto-review on`",
                breaker_cause(state)
            ),
        )
    })
}

/// A verdict as it was obtained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewedVerdict {
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Reused from the cache: nothing was sent to the model.
    pub cached: bool,
    pub duration_ms: u64,
    pub reviewer: Reviewer,
}

/// Why no verdict was obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoVerdict {
    /// The review failed.
    Failed {
        failure: ReviewFailure,
        duration_ms: u64,
    },
    /// A session budget is used up; the review was not attempted.
    BudgetExhausted { why: String },
}

impl NoVerdict {
    /// The failure is the reviewer reacting to the line (it refused to judge it, or reached
    /// outside the workspace, perhaps steered by it), not an outage.
    pub fn implicates_the_line(&self) -> bool {
        matches!(
            self,
            NoVerdict::Failed { failure, .. }
                if matches!(failure.kind, FailureKind::Refusal | FailureKind::ToolEscape)
        )
    }
}

/// Why a person decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandoffReason {
    /// No verdict and `fallback_policy = delegate`.
    Fallback(NoVerdict),
    /// The reviewer allowed above the ceiling and `on_high_risk = delegate`.
    RiskAboveCeiling(ReviewedVerdict),
    /// The breaker is open with `action = delegate`.
    Breaker { cause: String },
}

/// What happens to the line. The caller maps it 1:1; see [`ReviewOutcome::code`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewOutcome {
    /// The reviewer allowed the line (possibly from the cache): run it in the mode's sandbox.
    Allowed(ReviewedVerdict),
    /// No verdict and `fallback_policy = allow-once`: run it, once, and say so.
    AllowedOnce(NoVerdict),
    /// `AUTO_REVIEW_DENIED`. When `person_may_override`, ask the person [`Self::question`] first
    /// (allow once or reject); otherwise the denial is final and its reason goes to the agent.
    Denied {
        verdict: ReviewedVerdict,
        /// Set when a risk ceiling turned the reviewer's allow into this denial.
        ceiling: Option<RiskLevel>,
        person_may_override: bool,
    },
    /// A person decides ([`Self::question`]); only returned when a person is present.
    AskPerson(HandoffReason),
    /// `AUTO_REVIEW_FAILED`: no verdict, and the fallback refuses the line.
    Failed(NoVerdict),
    /// `CIRCUIT_OPEN`: the breaker is open (`reject`, `abort`, or `delegate` without a person).
    CircuitOpen {
        action: BreakerAction,
        cause: String,
    },
    /// shellgate could not do its own part (the audit log): the line does not run.
    Unavailable(Error),
}

impl ReviewOutcome {
    /// The code the caller reports.
    pub fn code(&self) -> Code {
        match self {
            ReviewOutcome::Allowed(_) | ReviewOutcome::AllowedOnce(_) => Code::Allowed,
            ReviewOutcome::Denied { .. } => Code::AutoReviewDenied,
            ReviewOutcome::AskPerson(_) => Code::NeedsApproval,
            ReviewOutcome::Failed(_) => Code::AutoReviewFailed,
            ReviewOutcome::CircuitOpen { .. } => Code::CircuitOpen,
            ReviewOutcome::Unavailable(err) => err.code,
        }
    }

    /// Folds the outcome into the decision core's `review` decision: what `check` and `eval`
    /// report.
    pub fn settle(&self, decision: &mut Decision, line: &str) {
        decision.decision = match self {
            ReviewOutcome::Allowed(_) | ReviewOutcome::AllowedOnce(_) => {
                crate::policy::Verdict::Allow
            }
            ReviewOutcome::AskPerson(_) => crate::policy::Verdict::Ask,
            _ => crate::policy::Verdict::Deny,
        };
        decision.code = self.code();
        decision.reason = self.message(line);
    }

    /// Whether the line may run without asking anyone.
    pub fn runs(&self) -> bool {
        matches!(
            self,
            ReviewOutcome::Allowed(_) | ReviewOutcome::AllowedOnce(_)
        )
    }

    /// The refusal to report when the line does not run and no person is asked: the code and the
    /// sentence for `refusal_block` (marker `[auto-review]` for a denial, `[auto-review-fallback]`
    /// for failures and the breaker). `None` when the line runs or a person is to be asked.
    pub fn refusal(&self, line: &str) -> Option<Error> {
        match self {
            ReviewOutcome::Allowed(_)
            | ReviewOutcome::AllowedOnce(_)
            | ReviewOutcome::AskPerson(_) => None,
            ReviewOutcome::Denied {
                person_may_override: true,
                ..
            } => None,
            ReviewOutcome::Unavailable(err) => Some(err.clone()),
            _ => Some(Error::new(self.code(), self.message(line))),
        }
    }

    /// What the person is asked, when a person decides (`Auto review denied command "…": …`).
    pub fn question(&self, line: &str) -> Option<String> {
        match self {
            ReviewOutcome::Denied {
                person_may_override: true,
                ..
            }
            | ReviewOutcome::AskPerson(_) => Some(self.message(line)),
            _ => None,
        }
    }

    /// One sentence saying what happened and why.
    pub fn message(&self, line: &str) -> String {
        let quoted = quote_line(line);
        match self {
            ReviewOutcome::Allowed(v) => format!(
                "Auto review allowed command \"{quoted}\" (risk {}{}): {}",
                v.verdict.risk_level.as_str(),
                if v.cached { ", cached" } else { "" },
                visible(&v.verdict.reason)
            ),
            ReviewOutcome::AllowedOnce(cause) => format!(
                "{}; fallback_policy = allow-once runs it anyway, once",
                no_verdict_message(&quoted, cause, false)
            ),
            ReviewOutcome::Denied {
                verdict, ceiling, ..
            } => denied_message(&quoted, verdict, *ceiling),
            ReviewOutcome::AskPerson(HandoffReason::Fallback(cause)) => format!(
                "{}; fallback_policy = delegate asks you",
                no_verdict_message(&quoted, cause, true)
            ),
            ReviewOutcome::AskPerson(HandoffReason::RiskAboveCeiling(v)) => format!(
                "Auto review allowed command \"{quoted}\" at risk {}, which needs a person: {}",
                v.verdict.risk_level.as_str(),
                visible(&v.verdict.reason)
            ),
            ReviewOutcome::AskPerson(HandoffReason::Breaker { cause }) => format!(
                "Auto review of command \"{quoted}\" is paused: its circuit breaker is open \
                 ({cause}); breaker action `delegate` asks you"
            ),
            ReviewOutcome::Failed(cause) if cause.implicates_the_line() => format!(
                "{} (a refusal or a tool escape is never run by a fallback)",
                no_verdict_message(&quoted, cause, true)
            ),
            ReviewOutcome::Failed(cause) => format!(
                "{} (fallback_policy = rejected)",
                no_verdict_message(&quoted, cause, true)
            ),
            ReviewOutcome::CircuitOpen { action, cause } => format!(
                "Auto review refuses command \"{quoted}\": the circuit breaker is open ({cause}) \
                 with action `{}`; a person resets it with `shellgate auto-review on`",
                action.as_str()
            ),
            ReviewOutcome::Unavailable(err) => err.reason.clone(),
        }
    }

    /// The machine-readable account of the review, for `check --json` and the caller's records.
    pub fn report(&self, line: &str) -> ReviewReport {
        let mut report = ReviewReport {
            outcome: self.kind(),
            code: self.code(),
            message: self.message(line),
            verdict: None,
            cached: false,
            duration_ms: None,
            reviewer: None,
            failure: None,
            budget: None,
            ceiling: None,
            person_may_override: false,
        };
        match self {
            ReviewOutcome::Allowed(v)
            | ReviewOutcome::AskPerson(HandoffReason::RiskAboveCeiling(v)) => report.add_verdict(v),
            ReviewOutcome::Denied {
                verdict,
                ceiling,
                person_may_override,
            } => {
                report.add_verdict(verdict);
                report.ceiling = *ceiling;
                report.person_may_override = *person_may_override;
            }
            ReviewOutcome::AllowedOnce(cause)
            | ReviewOutcome::Failed(cause)
            | ReviewOutcome::AskPerson(HandoffReason::Fallback(cause)) => report.add_cause(cause),
            _ => {}
        }
        report
    }

    fn kind(&self) -> OutcomeKind {
        match self {
            ReviewOutcome::Allowed(_) => OutcomeKind::Allowed,
            ReviewOutcome::AllowedOnce(_) => OutcomeKind::AllowedOnce,
            ReviewOutcome::Denied { .. } => OutcomeKind::Denied,
            ReviewOutcome::AskPerson(_) => OutcomeKind::AskPerson,
            ReviewOutcome::Failed(_) => OutcomeKind::Failed,
            ReviewOutcome::CircuitOpen { .. } => OutcomeKind::CircuitOpen,
            ReviewOutcome::Unavailable(_) => OutcomeKind::Unavailable,
        }
    }
}

/// The outcome's kind, as `check --json` prints it (`review.outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutcomeKind {
    Allowed,
    AllowedOnce,
    Denied,
    AskPerson,
    Failed,
    CircuitOpen,
    Unavailable,
}

/// The review part of `check --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewReport {
    pub outcome: OutcomeKind,
    pub code: Code,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    pub cached: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<Reviewer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<ReviewFailure>,
    /// Why the review was not attempted (a used-up budget).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// The ceiling that turned an allow into a denial.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<RiskLevel>,
    pub person_may_override: bool,
}

impl ReviewReport {
    fn add_verdict(&mut self, v: &ReviewedVerdict) {
        self.verdict = Some(v.verdict.clone());
        self.cached = v.cached;
        self.duration_ms = Some(v.duration_ms);
        self.reviewer = Some(v.reviewer.clone());
    }

    fn add_cause(&mut self, cause: &NoVerdict) {
        match cause {
            NoVerdict::Failed {
                failure,
                duration_ms,
            } => {
                self.failure = Some(failure.clone());
                self.duration_ms = Some(*duration_ms);
            }
            NoVerdict::BudgetExhausted { why } => self.budget = Some(why.clone()),
        }
    }
}

/// Reviews one line. See the module documentation for the order of the steps.
pub fn review(request: &ReviewRequest) -> ReviewOutcome {
    review_recorded(request, None)
}

/// [`review`], recording what passed between shellgate and the model in `transcript` (`eval`).
pub fn review_with_transcript(
    request: &ReviewRequest,
    transcript: &mut Transcript,
) -> ReviewOutcome {
    review_recorded(request, Some(transcript))
}

fn review_recorded(request: &ReviewRequest, transcript: Option<&mut Transcript>) -> ReviewOutcome {
    let program = program_of(request);
    if request.state.breaker.open {
        return breaker_open(request, &program);
    }
    let approval = request.state.active_override(&program, request.now);
    let cache = cache_for(request);
    let key = cache.as_ref().map(|_| cache_key(request));
    if let (Some(cache), Some(key), None) = (&cache, &key, approval)
        && let Some(hit) = cache.get(key, request.now)
    {
        let verdict = ReviewedVerdict {
            verdict: hit.verdict,
            cached: true,
            duration_ms: 0,
            reviewer: hit.reviewer,
        };
        return judged(request, &program, verdict);
    }
    if let Some(why) = request.state.budgets.exhausted() {
        return without_verdict(request, &program, NoVerdict::BudgetExhausted { why });
    }
    let started = Instant::now();
    let result = ask_model(request, approval, transcript);
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match result {
        Ok(verdict) => {
            let reviewed = ReviewedVerdict {
                verdict,
                cached: false,
                duration_ms,
                reviewer: reviewer_of(request.config),
            };
            // A verdict given under a one-shot approval is not reused once the approval is spent.
            if let (Some(cache), Some(key), None) = (&cache, &key, approval) {
                let _ = cache.put(
                    key,
                    &CachedVerdict {
                        verdict: reviewed.verdict.clone(),
                        reviewer: reviewed.reviewer.clone(),
                        time: request.now,
                    },
                );
            }
            judged(request, &program, reviewed)
        }
        Err(failure) => without_verdict(
            request,
            &program,
            NoVerdict::Failed {
                failure,
                duration_ms,
            },
        ),
    }
}

/// Builds the prompt and runs the conversation.
fn ask_model(
    request: &ReviewRequest,
    approval: Option<&PendingOverride>,
    transcript: Option<&mut Transcript>,
) -> Result<Verdict, ReviewFailure> {
    let config = request.config;
    let style = answer_style(config);
    let recent: Vec<_> = request
        .state
        .recent_lines
        .iter()
        .filter(|line| line.request.as_ref() != Some(request.request))
        .collect();
    let decision = request.decision;
    let facts = prompt::Facts {
        line: request.line,
        cwd: request.cwd,
        workspace: request.workspace,
        mode: &decision.mode,
        grant: &decision.grant,
        why_review: &decision.reason,
        commands: &decision.commands,
        opaque: &decision.opaque,
        recent: &recent,
        context_budget: config.context_budget,
        approval,
    };
    let system = prompt::system_prompt(config, style, config.max_tool_rounds);
    let user = prompt::user_message(&facts);
    let workspace = Workspace::new(request.workspace).ok();
    client::converse(config, workspace.as_ref(), system, user, transcript)
}

/// A second model's judgment of a whole session (`shellgate eval --sessions`, a case's
/// `review`): the same reviewer config, client and verdict as a line's review, told the task and
/// the trace instead of one line. Nothing is recorded and no risk policy applies: the verdict is
/// reported as given. No tools: a trace review reads no workspace.
pub fn review_trace(
    config: &ReviewerConfig,
    facts: &prompt::TraceFacts,
) -> Result<Verdict, ReviewFailure> {
    let config = ReviewerConfig {
        max_tool_rounds: 0,
        ..config.clone()
    };
    let system = prompt::trace_system_prompt(&config, answer_style(&config));
    let user = prompt::trace_message(facts);
    client::converse(&config, None, system, user, None)
}

/// How the model is asked to answer: embedded JSON where the server enforces a schema, native
/// tool calls otherwise.
fn answer_style(config: &ReviewerConfig) -> prompt::AnswerStyle {
    match (config.provider, config.structured_output) {
        (Provider::Openai, crate::config::StructuredOutput::JsonSchema) => {
            prompt::AnswerStyle::Embedded
        }
        _ => prompt::AnswerStyle::NativeTools,
    }
}

/// Applies the risk policy to a verdict and records it.
fn judged(request: &ReviewRequest, program: &str, reviewed: ReviewedVerdict) -> ReviewOutcome {
    if let Err(err) = record_verdict(request, program, &reviewed) {
        return ReviewOutcome::Unavailable(err);
    }
    let config = request.config;
    match reviewed.verdict.decision {
        VerdictDecision::Deny => ReviewOutcome::Denied {
            verdict: reviewed,
            ceiling: None,
            person_may_override: request.person_present && config.on_deny == DenialAction::Ask,
        },
        VerdictDecision::Allow if within_ceiling(reviewed.verdict.risk_level, config) => {
            ReviewOutcome::Allowed(reviewed)
        }
        VerdictDecision::Allow => {
            if config.on_high_risk == HighRiskAction::Delegate && request.person_present {
                ReviewOutcome::AskPerson(HandoffReason::RiskAboveCeiling(reviewed))
            } else {
                ReviewOutcome::Denied {
                    verdict: reviewed,
                    ceiling: Some(config.max_auto_allow.min(RiskLevel::High)),
                    person_may_override: false,
                }
            }
        }
    }
}

/// Whether an allow at `risk` may run without a person: at most `max_auto_allow`, never critical.
pub fn within_ceiling(risk: RiskLevel, config: &ReviewerConfig) -> bool {
    risk != RiskLevel::Critical && risk <= config.max_auto_allow
}

/// No verdict: the fallback policy decides, and the rejection is recorded.
fn without_verdict(request: &ReviewRequest, program: &str, cause: NoVerdict) -> ReviewOutcome {
    let fallback = match request.config.fallback_policy {
        FallbackPolicy::Rejected => FallbackAction::Rejected,
        FallbackPolicy::Delegate if request.person_present => FallbackAction::Delegate,
        // Delegate without a person to delegate to: rejected.
        FallbackPolicy::Delegate => FallbackAction::Rejected,
        // A refusal or a tool escape says something about the line itself (it can be steered by
        // the line): no fallback turns it into a run.
        FallbackPolicy::AllowOnce if cause.implicates_the_line() => FallbackAction::Rejected,
        FallbackPolicy::AllowOnce => FallbackAction::AllowOnce,
    };
    let outcome = match fallback {
        FallbackAction::Rejected => ReviewOutcome::Failed(cause.clone()),
        FallbackAction::Delegate => {
            ReviewOutcome::AskPerson(HandoffReason::Fallback(cause.clone()))
        }
        FallbackAction::AllowOnce => ReviewOutcome::AllowedOnce(cause.clone()),
    };
    let (rejection_cause, duration_ms) = match &cause {
        NoVerdict::Failed { duration_ms, .. } => (RejectionCause::ReviewFailed, Some(*duration_ms)),
        NoVerdict::BudgetExhausted { .. } => (RejectionCause::BudgetExhausted, None),
    };
    let rejection = ReviewRejection {
        line: request.line.to_owned(),
        program: program.to_owned(),
        cause: rejection_cause,
        code: Code::AutoReviewFailed,
        reason: outcome.message(request.line),
        reviewer: Some(reviewer_of(request.config)),
        duration_ms,
        fallback: Some(fallback),
    };
    match record(request, EventBody::AutoReviewRejection(rejection)) {
        Ok(()) => outcome,
        Err(err) => ReviewOutcome::Unavailable(err),
    }
}

/// The breaker is open: delegate to a person, or refuse.
fn breaker_open(request: &ReviewRequest, program: &str) -> ReviewOutcome {
    let cause = breaker_cause(request.state);
    let action = request.state.breaker.action;
    let (outcome, fallback) = if action == BreakerAction::Delegate && request.person_present {
        (
            ReviewOutcome::AskPerson(HandoffReason::Breaker {
                cause: cause.clone(),
            }),
            FallbackAction::Delegate,
        )
    } else {
        (
            ReviewOutcome::CircuitOpen {
                action,
                cause: cause.clone(),
            },
            FallbackAction::Rejected,
        )
    };
    let rejection = ReviewRejection {
        line: request.line.to_owned(),
        program: program.to_owned(),
        cause: RejectionCause::CircuitOpen,
        code: Code::CircuitOpen,
        reason: outcome.message(request.line),
        reviewer: None,
        duration_ms: None,
        fallback: Some(fallback),
    };
    match record(request, EventBody::AutoReviewRejection(rejection)) {
        Ok(()) => outcome,
        Err(err) => ReviewOutcome::Unavailable(err),
    }
}

fn record_verdict(
    request: &ReviewRequest,
    program: &str,
    reviewed: &ReviewedVerdict,
) -> Result<(), Error> {
    let decision = match reviewed.verdict.decision {
        VerdictDecision::Allow => crate::audit::event::Decision::Allow,
        VerdictDecision::Deny => crate::audit::event::Decision::Deny,
    };
    record(
        request,
        EventBody::AutoReviewVerdict(ReviewVerdict {
            line: request.line.to_owned(),
            program: program.to_owned(),
            decision,
            risk: reviewed.verdict.risk_level,
            reason: reviewed.verdict.reason.clone(),
            reviewer: reviewed.reviewer.clone(),
            duration_ms: reviewed.duration_ms,
            cached: reviewed.cached,
        }),
    )
}

/// Appends through the log's one seam; without a session nothing is recorded.
fn record(request: &ReviewRequest, body: EventBody) -> Result<(), Error> {
    match request.session {
        Some(session) => session.append(Some(request.request), body).map(|_| ()),
        None => Ok(()),
    }
}

/// The program one-shot approvals are matched on: the first command's, as the verdicts record it.
fn program_of(request: &ReviewRequest) -> String {
    request
        .decision
        .commands
        .first()
        .map(|command| command.program.clone())
        .or_else(|| request.line.split_whitespace().next().map(str::to_owned))
        .unwrap_or_default()
}

fn cache_for(request: &ReviewRequest) -> Option<VerdictCache> {
    let dir = request.cache_dir?;
    request.session?;
    (request.config.cache_ttl_s > 0)
        .then(|| VerdictCache::new(dir.to_path_buf(), request.config.cache_ttl_s))
}

fn cache_key(request: &ReviewRequest) -> CacheKey {
    let decision = request.decision;
    let session = request.session.map(|s| s.id().as_str()).unwrap_or_default();
    let commands = serde_json::to_string(&decision.commands).unwrap_or_default();
    let grant = decision.grant.to_string();
    CacheKey::new(
        &KeyParts {
            session,
            line: request.line,
            cwd: &request.cwd.to_string_lossy(),
            mode: &decision.mode,
            sandbox: &grant,
            network: !decision.grant.network.is_off(),
            commands: &commands,
        },
        request.config,
    )
}

fn reviewer_of(config: &ReviewerConfig) -> Reviewer {
    Reviewer {
        provider: config.provider.as_str().to_owned(),
        model: config.model.clone(),
    }
}

fn breaker_cause(state: &SessionState) -> String {
    state
        .breaker
        .cause
        .as_ref()
        .map_or_else(|| "tripped".to_owned(), |cause| visible(&cause.describe()))
}

fn denied_message(quoted: &str, v: &ReviewedVerdict, ceiling: Option<RiskLevel>) -> String {
    let reason = visible(&v.verdict.reason);
    let cached = if v.cached { ", cached" } else { "" };
    match ceiling {
        None => format!(
            "Auto review denied command \"{quoted}\" (risk {}{cached}): {reason}",
            v.verdict.risk_level.as_str()
        ),
        Some(_) if v.verdict.risk_level == RiskLevel::Critical => format!(
            "Auto review denied command \"{quoted}\": the reviewer allowed it at risk critical, \
             which is never allowed without a person{cached}: {reason}"
        ),
        Some(ceiling) => format!(
            "Auto review denied command \"{quoted}\": the reviewer allowed it at risk {}, above \
             max_auto_allow = {}, and no person can be asked{cached}: {reason}",
            v.verdict.risk_level.as_str(),
            ceiling.as_str()
        ),
    }
}

fn no_verdict_message(quoted: &str, cause: &NoVerdict, not_executed: bool) -> String {
    let tail = if not_executed {
        "; it was not executed"
    } else {
        ""
    };
    match cause {
        NoVerdict::Failed { failure, .. } => {
            format!("Auto review of command \"{quoted}\" failed{tail}: {failure}")
        }
        NoVerdict::BudgetExhausted { why } => {
            format!("Auto review of command \"{quoted}\" was not attempted{tail}: {why}")
        }
    }
}

/// The line as quoted in messages: redacted, control characters visible, cut.
fn quote_line(line: &str) -> String {
    let shown = visible(&redact(line));
    match shown.char_indices().nth(MAX_QUOTED_LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &shown[..cut]),
        None => shown,
    }
}

/// A reply of the model: the verdict, or read-only tool calls to run first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Verdict(Verdict),
    Tools(Vec<ToolCall>),
}

impl Reply {
    /// A reply whose text carries the answer (a verdict or one embedded tool request).
    fn from_answer_text(text: &str) -> Result<Reply, ReviewFailure> {
        Ok(match verdict::parse_answer_text(text)? {
            verdict::Answer::Verdict(verdict) => Reply::Verdict(verdict),
            verdict::Answer::Tool(request) => Reply::Tools(vec![ToolCall { id: None, request }]),
        })
    }

    /// A reply of native tool calls, each `(name, id, arguments)`: a `submit_verdict` call is the
    /// verdict; the others are tool requests.
    fn from_native_calls<'a>(
        calls: impl IntoIterator<
            Item = Result<
                (&'a str, String, serde_json::Map<String, serde_json::Value>),
                ReviewFailure,
            >,
        >,
    ) -> Result<Reply, ReviewFailure> {
        let mut requests = Vec::new();
        for call in calls {
            let (name, id, arguments) = call?;
            if name == verdict::SUBMIT_VERDICT {
                return Ok(Reply::Verdict(verdict::parse_verdict(&arguments)?));
            }
            let tool = verdict::ToolName::parse(name).ok_or_else(|| {
                ReviewFailure::new(
                    FailureKind::Schema,
                    format!(
                        "the model called an unknown tool {:?}",
                        failure::clean(name)
                    ),
                )
            })?;
            requests.push(ToolCall {
                id: Some(id),
                request: verdict::parse_tool_arguments(tool, &arguments)?,
            });
        }
        Ok(Reply::Tools(requests))
    }
}

/// One tool call; `id` is the provider's id for a native call, `None` for an embedded request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: Option<String>,
    pub request: ToolRequest,
}
