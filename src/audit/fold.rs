//! The session's state is a fold over its events: replaying the log *is* the state.
//!
//! [`fold`] is a pure function of the events and the [`FoldParams`] (limits from the configuration):
//! no clock, no files. Reading the same log after a restart therefore gives exactly the same
//! [`SessionState`], and [`SessionState::apply`] lets a follower (`log --follow`, the panel) keep
//! the state current one event at a time with the same result as a fresh fold.
//!
//! Rules the fold encodes:
//! - **review on/off**: the last `autoReview/state` event wins; before any, the configured default.
//! - **budgets**: a review is a verdict that was not cached, or a review that failed; a failure is
//!   a failed review. Cached verdicts are free.
//! - **circuit breaker**: after each verdict (cached or not; failures do not count), it trips when
//!   the consecutive denials reach `consecutive_denies`, or the denials among the last
//!   `window_size` verdicts reach `window_denies` (0 disables a criterion). An `autoReview/circuit`
//!   `tripped` event opens it too; a `reset` event closes it and forgets the verdicts before it.
//! - **one-shot approvals** (`autoReview/override`): pending until the next review of the same
//!   program (a non-cached verdict or a failed review), which consumes it whatever the outcome, or
//!   until its TTL has passed. Cached verdicts do not consume one: nothing was asked, so the
//!   reviewer must skip its cache while an approval applies.

use super::event::{
    Actor, CircuitTransition, Decider, Decision, Event, EventBody, RejectionCause, ReviewVerdict,
    Timestamp,
};
use super::paths::RequestId;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

pub use crate::config::{BreakerAction, BreakerConfig, BudgetConfig};

/// The configuration the fold needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoldParams {
    /// Whether review is on before any `autoReview/state` event.
    pub review_default: bool,
    pub budgets: BudgetConfig,
    pub breaker: BreakerConfig,
    /// How many recent verdicts (and, separately, denials) the state keeps.
    pub recent_limit: usize,
}

impl Default for FoldParams {
    fn default() -> Self {
        FoldParams {
            review_default: true,
            budgets: BudgetConfig::default(),
            breaker: BreakerConfig::default(),
            recent_limit: 20,
        }
    }
}

/// Default lifetime of a one-shot approval.
pub const DEFAULT_OVERRIDE_TTL_SECS: u64 = 300;

/// Review on or off, and who set it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewStatus {
    pub enabled: bool,
    pub by: Actor,
    /// Sequence number of the event that set it, if any.
    pub since_seq: Option<u64>,
}

impl ReviewStatus {
    /// The switch in a word (`on`, `off`, or `no reviewer`) and what it means, as `status`,
    /// `auto-review status` and the panel say it: "on" beside "reviewer: not configured" read as
    /// if lines were reviewed, when the lines a reviewer would judge are refused.
    pub fn describe(&self, reviewer_configured: bool) -> (&'static str, &'static str) {
        match (self.enabled, reviewer_configured) {
            (false, _) => (
                "off",
                "lines for the reviewer go to a person at the terminal instead",
            ),
            (true, true) => ("on", "the reviewer judges what the rules flag in mode auto"),
            (true, false) => (
                "no reviewer",
                "the switch is on, but no `[reviewer]` is configured in the user config: in mode \
                 auto the lines a reviewer would judge are refused (REVIEWER_UNCONFIGURED)",
            ),
        }
    }
}

/// Budget use against the limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetStatus {
    pub reviews: u32,
    pub failures: u32,
    pub limits: BudgetConfig,
}

impl BudgetStatus {
    pub fn reviews_left(&self) -> Option<u32> {
        self.limits
            .max_reviews
            .map(|max| max.saturating_sub(self.reviews))
    }

    pub fn failures_left(&self) -> Option<u32> {
        self.limits
            .max_failures
            .map(|max| max.saturating_sub(self.failures))
    }

    /// Why no further review may run, if a budget is used up.
    pub fn exhausted(&self) -> Option<String> {
        if self.reviews_left() == Some(0) {
            return Some(format!(
                "the session's review budget is used up ({} of {} reviews)",
                self.reviews,
                self.limits.max_reviews.unwrap_or(0)
            ));
        }
        if self.failures_left() == Some(0) {
            return Some(format!(
                "the session's failure budget is used up ({} of {} reviews failed)",
                self.failures,
                self.limits.max_failures.unwrap_or(0)
            ));
        }
        None
    }
}

/// Why the breaker is open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "kebab-case")]
pub enum TripCause {
    ConsecutiveDenies {
        count: u32,
    },
    WindowDenies {
        denies: u32,
        window: u32,
    },
    /// An `autoReview/circuit` `tripped` event, with its reason.
    Recorded {
        reason: String,
    },
}

impl TripCause {
    pub fn describe(&self) -> String {
        match self {
            TripCause::ConsecutiveDenies { count } => format!("{count} denials in a row"),
            TripCause::WindowDenies { denies, window } => {
                format!("{denies} denials in the last {window} verdicts")
            }
            TripCause::Recorded { reason } => reason.clone(),
        }
    }
}

/// The circuit breaker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreakerStatus {
    pub open: bool,
    pub cause: Option<TripCause>,
    /// Sequence number of the event that tripped it.
    pub tripped_at: Option<u64>,
    pub consecutive_denies: u32,
    /// Decisions of the last `window_size` verdicts since the last reset, oldest first.
    pub window: VecDeque<Decision>,
    pub action: BreakerAction,
}

impl BreakerStatus {
    pub fn window_denies(&self) -> u32 {
        let denies = self.window.iter().filter(|d| **d == Decision::Deny).count();
        u32::try_from(denies).unwrap_or(u32::MAX)
    }
}

/// A one-shot approval that has not been used yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingOverride {
    pub seq: u64,
    pub time: Timestamp,
    pub expires: Timestamp,
    pub target_request: Option<RequestId>,
    pub program: String,
    pub line: String,
    pub by: Actor,
}

/// Cumulative statistics of the session.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Statistics {
    /// Lines that reached a decision (`approval/asked`).
    pub lines: u64,
    pub allows: u64,
    pub denies: u64,
    pub cached: u64,
    /// Lines refused by the fallback (failed review, breaker open, budget used up).
    pub fallbacks: u64,
    pub never_rejections: u64,
    pub failures: u64,
    /// Decisions made by a person at the terminal.
    pub person_decisions: u64,
    /// Lines started (`exec/started`).
    pub executed: u64,
    /// Guarded names a line planted or changed (`sandbox/violation`).
    #[serde(default)]
    pub violations: u64,
    /// Lines that failed where the sandbox refused them something (`sandbox/denied`).
    #[serde(default)]
    pub sandbox_denials: u64,
    /// Lines refused before they ran, by anyone (`approval/decided` deny: a rule, a person, the
    /// reviewer, a failure).
    #[serde(default)]
    pub refused: u64,
    /// Sum and count of non-cached review durations, for the mean.
    pub review_ms_total: u64,
    pub reviews_timed: u64,
}

impl Statistics {
    /// Mean wall time of a non-cached review.
    pub fn mean_review_ms(&self) -> Option<u64> {
        self.review_ms_total.checked_div(self.reviews_timed)
    }
}

/// One verdict as the status views show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictSummary {
    pub seq: u64,
    pub time: Timestamp,
    pub request: Option<RequestId>,
    #[serde(flatten)]
    pub verdict: ReviewVerdict,
}

/// The mode selected in this session (`mode/changed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModeStatus {
    pub id: String,
    pub sandbox: crate::mode::SandboxPolicy,
    pub by: Actor,
    pub confirmed: bool,
    pub seq: u64,
    /// The mode before this one (what a time-boxed Full access returns to).
    #[serde(default)]
    pub from: Option<String>,
    /// When a time-boxed Full access ends.
    #[serde(default)]
    pub expires: Option<Timestamp>,
}

impl ModeStatus {
    /// Has this mode's time run out at `now`?
    pub fn expired(&self, now: Timestamp) -> bool {
        self.expires.is_some_and(|e| now >= e)
    }
}

/// One line of the session as the reviewer's context and the panel show it: what was asked, how it
/// was decided, how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineSummary {
    pub seq: u64,
    pub time: Timestamp,
    pub request: Option<RequestId>,
    pub line: String,
    pub cwd: String,
    /// The final decision, once `approval/decided` was recorded.
    pub decision: Option<Decision>,
    pub decided_by: Option<Decider>,
    /// How the line ended, once `exec/finished` was recorded.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

/// Everything known about a session, computed from its events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionState {
    pub params: FoldParams,
    pub events: u64,
    pub last_seq: Option<u64>,
    pub last_time: Option<Timestamp>,
    pub review: ReviewStatus,
    pub budgets: BudgetStatus,
    pub breaker: BreakerStatus,
    /// Unused one-shot approvals, oldest first. Use [`SessionState::active_override`] with the
    /// current time: some may have expired since the last event.
    pub overrides: Vec<PendingOverride>,
    pub stats: Statistics,
    /// The most recent verdicts, oldest first.
    pub recent: VecDeque<VerdictSummary>,
    /// The most recent denials, oldest first (`auto-review approve N` counts from the end).
    pub denials: VecDeque<VerdictSummary>,
    /// The most recent lines (`approval/asked`) with their decision and exit status, oldest first.
    pub recent_lines: VecDeque<LineSummary>,
    pub mode: Option<ModeStatus>,
}

/// Folds `events` into the session state.
pub fn fold(events: &[Event], params: &FoldParams) -> SessionState {
    let mut state = SessionState::new(params.clone());
    for event in events {
        state.apply(event);
    }
    state
}

impl SessionState {
    /// The state of a session without events.
    pub fn new(params: FoldParams) -> SessionState {
        SessionState {
            review: ReviewStatus {
                enabled: params.review_default,
                by: Actor::Default,
                since_seq: None,
            },
            budgets: BudgetStatus {
                reviews: 0,
                failures: 0,
                limits: params.budgets,
            },
            breaker: BreakerStatus {
                open: false,
                cause: None,
                tripped_at: None,
                consecutive_denies: 0,
                window: VecDeque::new(),
                action: params.breaker.action,
            },
            params,
            events: 0,
            last_seq: None,
            last_time: None,
            overrides: Vec::new(),
            stats: Statistics::default(),
            recent: VecDeque::new(),
            denials: VecDeque::new(),
            recent_lines: VecDeque::new(),
            mode: None,
        }
    }

    /// Applies one event.
    pub fn apply(&mut self, event: &Event) {
        self.events += 1;
        self.last_seq = Some(event.seq);
        self.last_time = Some(event.time);
        match &event.body {
            EventBody::ApprovalAsked(asked) => {
                self.stats.lines += 1;
                let summary = LineSummary {
                    seq: event.seq,
                    time: event.time,
                    request: event.request.clone(),
                    line: asked.line.clone(),
                    cwd: asked.cwd.clone(),
                    decision: None,
                    decided_by: None,
                    exit_code: None,
                    signal: None,
                };
                push_bounded(&mut self.recent_lines, summary, self.params.recent_limit);
            }
            EventBody::AutoReviewVerdict(verdict) => {
                self.apply_verdict(VerdictSummary {
                    seq: event.seq,
                    time: event.time,
                    request: event.request.clone(),
                    verdict: verdict.clone(),
                });
            }
            EventBody::AutoReviewRejection(rejection) => {
                self.apply_rejection(rejection.cause, &rejection.program, event.time);
                if let (RejectionCause::ReviewFailed, Some(ms)) =
                    (rejection.cause, rejection.duration_ms)
                {
                    self.stats.review_ms_total += ms;
                    self.stats.reviews_timed += 1;
                }
            }
            EventBody::ApprovalDecided(decided) => {
                if decided.by == Decider::Person {
                    self.stats.person_decisions += 1;
                }
                if decided.decision == Decision::Deny {
                    self.stats.refused += 1;
                }
                if let Some(line) = self.recent_line_mut(event.request.as_ref()) {
                    line.decision = Some(decided.decision);
                    line.decided_by = Some(decided.by);
                }
            }
            EventBody::ExecStarted(_) => self.stats.executed += 1,
            EventBody::SandboxViolation(_) => self.stats.violations += 1,
            EventBody::SandboxDenied(_) => self.stats.sandbox_denials += 1,
            EventBody::ExecFinished(finished) => {
                if let Some(line) = self.recent_line_mut(event.request.as_ref()) {
                    line.exit_code = finished.exit_code;
                    line.signal = finished.signal;
                }
            }
            EventBody::AutoReviewState(switch) => {
                self.review = ReviewStatus {
                    enabled: switch.enabled,
                    by: switch.by,
                    since_seq: Some(event.seq),
                };
            }
            EventBody::AutoReviewOverride(approval) => self.overrides.push(PendingOverride {
                seq: event.seq,
                time: event.time,
                expires: event.time.plus_secs(approval.ttl_secs),
                target_request: approval.target_request.clone(),
                program: approval.program.clone(),
                line: approval.line.clone(),
                by: approval.by,
            }),
            EventBody::AutoReviewCircuit(change) => match change.transition {
                CircuitTransition::Tripped => {
                    if !self.breaker.open {
                        self.trip(
                            TripCause::Recorded {
                                reason: change.reason.clone(),
                            },
                            event.seq,
                        );
                    }
                }
                CircuitTransition::Reset => {
                    self.breaker.open = false;
                    self.breaker.cause = None;
                    self.breaker.tripped_at = None;
                    self.breaker.consecutive_denies = 0;
                    self.breaker.window.clear();
                }
            },
            EventBody::ModeChanged(change) => {
                self.mode = Some(ModeStatus {
                    id: change.to.clone(),
                    sandbox: change.sandbox,
                    by: change.by,
                    confirmed: change.confirmed,
                    seq: event.seq,
                    from: change.from.clone(),
                    expires: change.expires,
                });
            }
            EventBody::HarnessStep(_) => {}
        }
    }

    /// The recent line of `request`, searched from the newest (lines are decided in order, so
    /// this is almost always the last one).
    fn recent_line_mut(&mut self, request: Option<&RequestId>) -> Option<&mut LineSummary> {
        let request = request?;
        self.recent_lines
            .iter_mut()
            .rev()
            .find(|line| line.request.as_ref() == Some(request))
    }

    fn apply_verdict(&mut self, summary: VerdictSummary) {
        let verdict = &summary.verdict;
        match verdict.decision {
            Decision::Allow => self.stats.allows += 1,
            Decision::Deny => self.stats.denies += 1,
        }
        if verdict.cached {
            self.stats.cached += 1;
        } else {
            self.budgets.reviews += 1;
            self.stats.review_ms_total += verdict.duration_ms;
            self.stats.reviews_timed += 1;
            self.consume_override(&verdict.program, summary.time);
        }
        self.count_for_breaker(verdict.decision, summary.seq);
        if verdict.decision == Decision::Deny {
            push_bounded(&mut self.denials, summary.clone(), self.params.recent_limit);
        }
        push_bounded(&mut self.recent, summary, self.params.recent_limit);
    }

    fn apply_rejection(&mut self, cause: RejectionCause, program: &str, time: Timestamp) {
        match cause {
            RejectionCause::ReviewFailed => {
                self.stats.failures += 1;
                self.stats.fallbacks += 1;
                self.budgets.reviews += 1;
                self.budgets.failures += 1;
                self.consume_override(program, time);
            }
            RejectionCause::CircuitOpen | RejectionCause::BudgetExhausted => {
                self.stats.fallbacks += 1
            }
            RejectionCause::NeverRule => self.stats.never_rejections += 1,
        }
    }

    fn count_for_breaker(&mut self, decision: Decision, seq: u64) {
        let params = self.params.breaker;
        let breaker = &mut self.breaker;
        breaker.consecutive_denies = match decision {
            Decision::Deny => breaker.consecutive_denies + 1,
            Decision::Allow => 0,
        };
        if params.window_size > 0 {
            breaker.window.push_back(decision);
            while breaker.window.len() > params.window_size as usize {
                breaker.window.pop_front();
            }
        }
        if breaker.open {
            return;
        }
        let cause = if params.consecutive_denies > 0
            && breaker.consecutive_denies >= params.consecutive_denies
        {
            Some(TripCause::ConsecutiveDenies {
                count: breaker.consecutive_denies,
            })
        } else if params.window_denies > 0 && breaker.window_denies() >= params.window_denies {
            Some(TripCause::WindowDenies {
                denies: breaker.window_denies(),
                window: params.window_size,
            })
        } else {
            None
        };
        if let Some(cause) = cause {
            self.trip(cause, seq);
        }
    }

    fn trip(&mut self, cause: TripCause, seq: u64) {
        self.breaker.open = true;
        self.breaker.cause = Some(cause);
        self.breaker.tripped_at = Some(seq);
    }

    /// A review of `program` at `time` uses the oldest approval for it that is still valid;
    /// expired approvals are dropped on the way.
    fn consume_override(&mut self, program: &str, time: Timestamp) {
        self.overrides.retain(|pending| pending.expires >= time);
        if let Some(index) = self
            .overrides
            .iter()
            .position(|pending| pending.program == program)
        {
            self.overrides.remove(index);
        }
    }

    /// The one-shot approval the next review of `program` at `now` should be given, if any.
    pub fn active_override(&self, program: &str, now: Timestamp) -> Option<&PendingOverride> {
        self.overrides
            .iter()
            .find(|pending| pending.program == program && pending.expires >= now)
    }

    /// Approvals still valid at `now`.
    pub fn pending_overrides(&self, now: Timestamp) -> impl Iterator<Item = &PendingOverride> {
        self.overrides
            .iter()
            .filter(move |pending| pending.expires >= now)
    }

    /// The `n`-th most recent denial (1 = the latest).
    pub fn denial(&self, n: usize) -> Option<&VerdictSummary> {
        let index = self.denials.len().checked_sub(n)?;
        if n == 0 {
            return None;
        }
        self.denials.get(index)
    }
}

fn push_bounded<T>(queue: &mut VecDeque<T>, item: T, limit: usize) {
    if limit == 0 {
        return;
    }
    if queue.len() == limit {
        queue.pop_front();
    }
    queue.push_back(item);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::event::{
        ApprovalDecision, CircuitChange, ExecFinished, ExecStarted, LineAsked, ModeChange,
        OneShotApproval, ReviewRejection, ReviewSwitch, Reviewer, RiskLevel,
    };
    use crate::audit::paths::SessionId;
    use crate::error::Code;
    use crate::mode::SandboxPolicy;

    const T0: u64 = 1_700_000_000_000;

    /// Builds a session's events with increasing seq and times 1 s apart unless told otherwise.
    struct Script {
        events: Vec<Event>,
        now: u64,
    }

    impl Script {
        fn new() -> Script {
            Script {
                events: Vec::new(),
                now: T0,
            }
        }

        fn at(&mut self, ms: u64) -> &mut Script {
            self.now = ms;
            self
        }

        fn push(&mut self, body: EventBody) -> &mut Script {
            let seq = self.events.len() as u64;
            let request = body
                .is_per_line()
                .then(|| RequestId::parse(&format!("r{seq}")).unwrap());
            self.events.push(Event {
                v: 1,
                seq,
                time: Timestamp::from_unix_ms(self.now),
                session: SessionId::parse("s").unwrap(),
                request,
                prev: String::new(),
                body,
            });
            self.now += 1000;
            self
        }

        fn verdict(&mut self, decision: Decision, program: &str, cached: bool) -> &mut Script {
            self.push(verdict(decision, program, cached, 100))
        }

        fn fold(&self, params: &FoldParams) -> SessionState {
            fold(&self.events, params)
        }
    }

    fn verdict(decision: Decision, program: &str, cached: bool, ms: u64) -> EventBody {
        EventBody::AutoReviewVerdict(ReviewVerdict {
            line: format!("{program} --flag"),
            program: program.into(),
            decision,
            risk: if decision == Decision::Deny {
                RiskLevel::High
            } else {
                RiskLevel::Low
            },
            reason: "because".into(),
            reviewer: Reviewer {
                provider: "openai".into(),
                model: "m".into(),
            },
            duration_ms: ms,
            cached,
        })
    }

    fn rejection(cause: RejectionCause, program: &str) -> EventBody {
        EventBody::AutoReviewRejection(ReviewRejection {
            line: program.into(),
            program: program.into(),
            cause,
            code: Code::AutoReviewFailed,
            reason: "timeout".into(),
            reviewer: None,
            duration_ms: Some(500),
            fallback: None,
        })
    }

    fn switch(enabled: bool, by: Actor) -> EventBody {
        EventBody::AutoReviewState(ReviewSwitch { enabled, by })
    }

    fn approve(program: &str, ttl_secs: u64) -> EventBody {
        EventBody::AutoReviewOverride(OneShotApproval {
            target_request: None,
            program: program.into(),
            line: program.into(),
            ttl_secs,
            by: Actor::Person,
        })
    }

    fn circuit(transition: CircuitTransition) -> EventBody {
        EventBody::AutoReviewCircuit(CircuitChange {
            transition,
            reason: "by hand".into(),
            by: Actor::Person,
        })
    }

    /// One event of every kind.
    fn every_kind() -> Vec<EventBody> {
        vec![
            EventBody::ApprovalAsked(LineAsked {
                line: "rm x".into(),
                program: "rm".into(),
                cwd: "/w".into(),
                mode: "auto".into(),
                sandbox: SandboxPolicy::WorkspaceWrite,
                grant: None,
                code: Code::NeedsReview,
                reason: "rule".into(),
            }),
            verdict(Decision::Deny, "rm", false, 1200),
            rejection(RejectionCause::ReviewFailed, "rm"),
            EventBody::ApprovalDecided(ApprovalDecision {
                decision: Decision::Allow,
                by: Decider::Person,
                code: Code::Allowed,
                reason: "person said yes".into(),
            }),
            EventBody::ExecStarted(ExecStarted {
                sandbox: SandboxPolicy::WorkspaceWrite,
                grant: None,
                shell: "bash".into(),
                program: None,
                pid: Some(42),
                withheld: Vec::new(),
            }),
            EventBody::ExecFinished(ExecFinished {
                exit_code: Some(0),
                signal: None,
                duration_ms: 3,
                sandbox: SandboxPolicy::WorkspaceWrite,
            }),
            switch(false, Actor::Person),
            approve("rm", 300),
            circuit(CircuitTransition::Tripped),
            EventBody::ModeChanged(ModeChange {
                from: Some("auto".into()),
                to: "read-only".into(),
                sandbox: SandboxPolicy::ReadOnly,
                by: Actor::Person,
                confirmed: false,
                expires: None,
            }),
        ]
    }

    #[test]
    fn empty_session_has_the_defaults() {
        let params = FoldParams {
            review_default: false,
            ..FoldParams::default()
        };
        let state = fold(&[], &params);
        assert!(!state.review.enabled);
        assert_eq!(state.review.by, Actor::Default);
        assert!(!state.breaker.open);
        assert_eq!(state.events, 0);
        assert_eq!(state.mode, None);
    }

    #[test]
    fn every_kind_is_folded() {
        let mut script = Script::new();
        for body in every_kind() {
            script.push(body);
        }
        let state = script.fold(&FoldParams::default());
        assert_eq!(state.events, 10);
        assert_eq!(state.stats.lines, 1);
        assert_eq!((state.stats.denies, state.stats.failures), (1, 1));
        assert_eq!(state.stats.person_decisions, 1);
        assert_eq!(state.stats.executed, 1);
        assert_eq!(state.stats.mean_review_ms(), Some((1200 + 500) / 2));
        assert_eq!(
            (state.review.enabled, state.review.by),
            (false, Actor::Person)
        );
        assert_eq!(state.overrides.len(), 1);
        assert!(state.breaker.open);
        assert_eq!(
            state.breaker.cause,
            Some(TripCause::Recorded {
                reason: "by hand".into()
            })
        );
        assert_eq!(
            state.mode.as_ref().map(|m| m.id.as_str()),
            Some("read-only")
        );
        let line = state.recent_lines.back().unwrap();
        assert_eq!(line.line, "rm x");
        assert_eq!(
            line.decision, None,
            "the decision was recorded for another request"
        );
    }

    #[test]
    fn recent_lines_follow_their_request() {
        let mut script = Script::new();
        for body in every_kind().into_iter().take(6) {
            script.push(body);
        }
        // Give the decision and exit of the first line its request id.
        let first = script.events[0].request.clone();
        for event in &mut script.events[1..] {
            event.request = first.clone();
        }
        let state = script.fold(&FoldParams::default());
        let line = state.recent_lines.back().unwrap();
        assert_eq!(line.decision, Some(Decision::Allow));
        assert_eq!(line.decided_by, Some(Decider::Person));
        assert_eq!((line.exit_code, line.signal), (Some(0), None));
        assert_eq!(line.cwd, "/w");
    }

    #[test]
    fn replay_equals_incremental_and_survives_json() {
        let mut script = Script::new();
        for body in every_kind().into_iter().cycle().take(57) {
            script.push(body);
        }
        let params = FoldParams::default();
        let batch = script.fold(&params);
        let mut incremental = SessionState::new(params.clone());
        for event in &script.events {
            incremental.apply(event);
        }
        assert_eq!(batch, incremental);
        let json: Vec<String> = script
            .events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect();
        let reread: Vec<Event> = json
            .iter()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(fold(&reread, &params), batch);
    }

    #[test]
    fn last_switch_wins() {
        let mut script = Script::new();
        script
            .push(switch(false, Actor::Person))
            .push(switch(true, Actor::Agent));
        let state = script.fold(&FoldParams::default());
        assert_eq!(
            (state.review.enabled, state.review.by),
            (true, Actor::Agent)
        );
        assert_eq!(state.review.since_seq, Some(1));
    }

    #[test]
    fn budgets_count_reviews_and_failures_not_cache_hits() {
        let params = FoldParams {
            budgets: BudgetConfig {
                max_reviews: Some(3),
                max_failures: Some(5),
            },
            ..FoldParams::default()
        };
        let mut script = Script::new();
        script
            .verdict(Decision::Allow, "ls", false)
            .verdict(Decision::Allow, "ls", true)
            .push(rejection(RejectionCause::ReviewFailed, "curl"))
            .push(rejection(RejectionCause::NeverRule, "rm"));
        let state = script.fold(&params);
        assert_eq!((state.budgets.reviews, state.budgets.failures), (2, 1));
        assert_eq!(state.budgets.reviews_left(), Some(1));
        assert_eq!(state.budgets.exhausted(), None);
        script.verdict(Decision::Deny, "rm", false);
        let state = script.fold(&params);
        assert_eq!(state.budgets.reviews_left(), Some(0));
        assert!(state.budgets.exhausted().unwrap().contains("3 of 3"));
        assert_eq!(state.stats.never_rejections, 1);
        assert_eq!(state.stats.fallbacks, 1);
        assert_eq!(state.stats.cached, 1);
    }

    #[test]
    fn breaker_trips_on_consecutive_denials_only_without_an_allow_between() {
        let params = FoldParams::default();
        let mut script = Script::new();
        script
            .verdict(Decision::Deny, "a", false)
            .verdict(Decision::Deny, "a", false)
            .verdict(Decision::Allow, "a", false)
            .verdict(Decision::Deny, "a", false)
            .verdict(Decision::Deny, "a", true);
        assert!(!script.fold(&params).breaker.open);
        script.verdict(Decision::Deny, "a", false);
        let state = script.fold(&params);
        assert!(state.breaker.open);
        assert_eq!(
            state.breaker.cause,
            Some(TripCause::ConsecutiveDenies { count: 3 })
        );
        assert_eq!(state.breaker.tripped_at, Some(5));
        // Failures do not count.
        let mut failures = Script::new();
        for _ in 0..5 {
            failures.push(rejection(RejectionCause::ReviewFailed, "a"));
        }
        assert!(!failures.fold(&params).breaker.open);
    }

    #[test]
    fn breaker_trips_on_denials_in_the_window() {
        let params = FoldParams::default();
        let mut script = Script::new();
        for decision in [Decision::Deny, Decision::Deny, Decision::Allow].repeat(2) {
            script.verdict(decision, "x", false);
        }
        script.verdict(Decision::Deny, "x", false);
        assert!(!script.fold(&params).breaker.open, "5 denials in 7");
        script.verdict(Decision::Deny, "x", false);
        let state = script.fold(&params);
        assert_eq!(
            state.breaker.cause,
            Some(TripCause::WindowDenies {
                denies: 6,
                window: 10
            })
        );
        // The window slides: old denials fall out of it.
        let mut sliding = Script::new();
        for _ in 0..5 {
            sliding
                .verdict(Decision::Deny, "x", false)
                .verdict(Decision::Allow, "x", false);
        }
        for _ in 0..6 {
            sliding.verdict(Decision::Allow, "x", false);
        }
        sliding.verdict(Decision::Deny, "x", false);
        assert!(!sliding.fold(&params).breaker.open);
    }

    #[test]
    fn zero_disables_a_breaker_criterion() {
        let params = FoldParams {
            breaker: BreakerConfig {
                consecutive_denies: 0,
                window_denies: 0,
                ..BreakerConfig::default()
            },
            ..FoldParams::default()
        };
        let mut script = Script::new();
        for _ in 0..20 {
            script.verdict(Decision::Deny, "x", false);
        }
        assert!(!script.fold(&params).breaker.open);
    }

    #[test]
    fn reset_closes_the_breaker_and_forgets_earlier_verdicts() {
        let params = FoldParams::default();
        let mut script = Script::new();
        for _ in 0..3 {
            script.verdict(Decision::Deny, "x", false);
        }
        script.push(circuit(CircuitTransition::Reset));
        let state = script.fold(&params);
        assert!(!state.breaker.open);
        assert_eq!(state.breaker.consecutive_denies, 0);
        assert!(state.breaker.window.is_empty());
        script
            .verdict(Decision::Deny, "x", false)
            .verdict(Decision::Deny, "x", false);
        assert!(!script.fold(&params).breaker.open);
        script.verdict(Decision::Deny, "x", false);
        assert!(script.fold(&params).breaker.open);
    }

    #[test]
    fn one_shot_approval_is_consumed_by_the_next_review_of_its_program() {
        let params = FoldParams::default();
        let mut script = Script::new();
        script
            .verdict(Decision::Deny, "rm", false)
            .push(approve("rm", 300))
            .verdict(Decision::Deny, "ls", false)
            .verdict(Decision::Deny, "rm", true);
        let state = script.fold(&params);
        let now = Timestamp::from_unix_ms(script.now);
        assert!(
            state.active_override("rm", now).is_some(),
            "a cache hit is not a review"
        );
        assert!(state.active_override("ls", now).is_none());
        assert!(
            state
                .active_override("rm", Timestamp::from_unix_ms(T0 + 302_000))
                .is_none(),
            "expired after the TTL"
        );
        script.verdict(Decision::Deny, "rm", false);
        let state = script.fold(&params);
        assert!(
            state.active_override("rm", now).is_none(),
            "consumed even by a denial"
        );
        assert!(state.overrides.is_empty());
    }

    #[test]
    fn a_failed_review_consumes_but_an_expired_approval_is_not_used() {
        let params = FoldParams::default();
        let mut script = Script::new();
        script
            .push(approve("rm", 300))
            .push(rejection(RejectionCause::ReviewFailed, "rm"));
        assert!(script.fold(&params).overrides.is_empty());

        let mut late = Script::new();
        late.push(approve("rm", 60))
            .push(approve("rm", 600))
            .at(T0 + 120_000)
            .verdict(Decision::Allow, "rm", false);
        let state = late.fold(&params);
        // The first had expired and is dropped; the review consumed the second.
        assert!(state.overrides.is_empty(), "{:?}", state.overrides);
    }

    #[test]
    fn recent_verdicts_and_denials_are_bounded_newest_last() {
        let params = FoldParams {
            recent_limit: 3,
            ..FoldParams::default()
        };
        let mut script = Script::new();
        for program in ["a", "b", "c", "d"] {
            script.verdict(Decision::Deny, program, false);
            script.verdict(Decision::Allow, "ok", false);
        }
        let state = script.fold(&params);
        assert_eq!(state.recent.len(), 3);
        assert_eq!(state.recent.back().unwrap().verdict.program, "ok");
        let denied: Vec<&str> = state
            .denials
            .iter()
            .map(|d| d.verdict.program.as_str())
            .collect();
        assert_eq!(denied, ["b", "c", "d"]);
        assert_eq!(state.denial(1).unwrap().verdict.program, "d");
        assert_eq!(state.denial(3).unwrap().verdict.program, "b");
        assert!(state.denial(4).is_none());
        assert!(state.denial(0).is_none());
        assert_eq!(
            state.denial(1).unwrap().request.as_ref().unwrap().as_str(),
            "r6"
        );
    }
}
