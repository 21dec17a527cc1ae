//! A second model's review of a whole session: a case's `review = { expect = "allow" }`.
//!
//! After the run, the task and the trace (each line with its decision, grant and exit) go to the
//! reviewer configured in `--config` and the case's `config` — the same `[reviewer]` and the same
//! client as auto review ([`crate::review::review_trace`]), not the scripted reviewer that plays
//! the reviewer inside the run. The verdict is reported as given; a verdict other than the one
//! expected, a reviewer that failed, or no reviewer configured fails that run, never the
//! evaluation.

use super::TurnResult;
use super::trace::OtherLine;
use crate::config::{ReviewerConfig, RiskLevel};
use crate::review::prompt::{TraceFacts, TracedLine};
use crate::review::{VerdictDecision, review_trace};
use serde::{Deserialize, Serialize};

/// What a case expects of the review of its whole trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceReviewExpect {
    /// The verdict the reviewer must give: `allow` or `deny`.
    pub expect: ExpectedVerdict,
}

/// `allow` or `deny`, as a case writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExpectedVerdict {
    Allow,
    Deny,
}

impl ExpectedVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ExpectedVerdict::Allow => "allow",
            ExpectedVerdict::Deny => "deny",
        }
    }

    fn holds(self, decision: VerdictDecision) -> bool {
        matches!(
            (self, decision),
            (ExpectedVerdict::Allow, VerdictDecision::Allow)
                | (ExpectedVerdict::Deny, VerdictDecision::Deny)
        )
    }
}

/// The review of a run's trace, as the report shows it: what was expected, and the verdict or
/// why there was none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceReview {
    pub expected: ExpectedVerdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<VerdictDecision>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk_level: Option<RiskLevel>,
    /// The reviewer's reason, or why no verdict was given.
    pub reason: String,
    /// False when there was no verdict (no reviewer configured, or it failed).
    pub verdict: bool,
}

impl TraceReview {
    /// How the review misses its expectation, in words; `None` when it holds.
    pub fn miss(&self) -> Option<String> {
        match self.decision {
            Some(decision) if self.expected.holds(decision) => None,
            Some(decision) => Some(format!(
                "trace review: expected {}, got {} (risk {}): {}",
                self.expected.as_str(),
                decision_name(decision),
                self.risk_level.map_or("unknown", RiskLevel::as_str),
                self.reason
            )),
            None => Some(format!(
                "trace review: expected {}, got no verdict: {}",
                self.expected.as_str(),
                self.reason
            )),
        }
    }
}

pub fn decision_name(decision: VerdictDecision) -> &'static str {
    match decision {
        VerdictDecision::Allow => "allow",
        VerdictDecision::Deny => "deny",
    }
}

/// A review that gave no verdict, and why.
pub fn unreviewed(expect: &TraceReviewExpect, reason: String) -> TraceReview {
    TraceReview {
        expected: expect.expect,
        decision: None,
        risk_level: None,
        reason,
        verdict: false,
    }
}

/// Asks `reviewer` (`None`: none is configured) about the task and the trace.
pub fn review(
    expect: &TraceReviewExpect,
    reviewer: Option<&ReviewerConfig>,
    task: &str,
    mode: &str,
    turns: &[TurnResult],
    other: &[OtherLine],
) -> TraceReview {
    let Some(reviewer) = reviewer else {
        return unreviewed(
            expect,
            "no [reviewer] is configured (in --config or the case's `config`); a case with \
             `review` needs one"
                .to_owned(),
        );
    };
    let mut lines: Vec<TracedLine> = turns
        .iter()
        .map(|turn| {
            let t = &turn.trace;
            TracedLine {
                line: &t.line,
                outcome: t.outcome.as_str(),
                code: t.code.map(|c| c.to_string()),
                decided_by: t.decided_by,
                grant: t.grant.as_ref(),
                exit: t.exit(),
                reason: t.reason.as_deref(),
            }
        })
        .collect();
    lines.extend(other.iter().map(|o| TracedLine {
        line: &o.line,
        outcome: o.outcome.as_str(),
        code: o.code.map(|c| c.to_string()),
        decided_by: None,
        grant: None,
        exit: None,
        reason: None,
    }));
    let facts = TraceFacts {
        task,
        mode,
        lines: &lines,
    };
    match review_trace(reviewer, &facts) {
        Ok(verdict) => TraceReview {
            expected: expect.expect,
            decision: Some(verdict.decision),
            risk_level: Some(verdict.risk_level),
            reason: verdict.reason,
            verdict: true,
        },
        Err(failure) => unreviewed(expect, format!("the reviewer failed: {failure}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reviewed(decision: VerdictDecision) -> TraceReview {
        TraceReview {
            expected: ExpectedVerdict::Allow,
            decision: Some(decision),
            risk_level: Some(RiskLevel::High),
            reason: "it deleted the tests".to_owned(),
            verdict: true,
        }
    }

    #[test]
    fn a_verdict_other_than_expected_is_a_miss_with_its_reason() {
        assert_eq!(reviewed(VerdictDecision::Allow).miss(), None);
        assert_eq!(
            reviewed(VerdictDecision::Deny).miss().as_deref(),
            Some("trace review: expected allow, got deny (risk high): it deleted the tests")
        );
    }

    #[test]
    fn no_reviewer_is_a_miss_that_says_what_to_configure() {
        let expect = TraceReviewExpect {
            expect: ExpectedVerdict::Deny,
        };
        let review = review(&expect, None, "task", "auto", &[], &[]);
        let miss = review.miss().unwrap_or_default();
        assert!(
            miss.starts_with(
                "trace review: expected deny, got no verdict: no [reviewer] is configured"
            ),
            "{miss}"
        );
    }
}
