//! A session's trace: what happened to each scripted line, read from the two records a run
//! leaves — the session's audit log (what shellgate decided and ran) and the scripted model's
//! record of the tool results (what the agent was told). Pure: the runner reads the files.
//!
//! A turn's line is found in the log by its text: the first line not yet taken that is exactly
//! the turn's, or that carries it as Claude Code does (`… && eval 'LINE' < /dev/null && …`). A
//! line the log does not hold (the agent ran it some other way, or not at all) is `not-gated`;
//! gated lines no turn asked for (a `make` recipe's shell, say) are listed as `other`.

use crate::audit::event::{Decider, Decision, RejectionCause};
use crate::audit::{Event, EventBody, RequestId};
use crate::error::Code;
use crate::mode::SandboxPolicy;
use crate::policy::grant::{Grant, Needs};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What happened to a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Allowed, and it ran; the sandbox refused it nothing it then failed on.
    Ran,
    /// Refused before it ran (a rule, the reviewer, a person or their absence, the breaker, a
    /// failure).
    Denied,
    /// It ran and failed where the sandbox refused it something (`SANDBOX_DENIED`), or planted a
    /// guarded file (`SANDBOX_VIOLATION`); not run again.
    SandboxRefused,
    /// The sandbox refused it something, and it ran again, once, with the missing grant.
    Escalated,
    /// The session log holds no such line: it did not reach the gate.
    NotGated,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ran => "ran",
            Outcome::Denied => "denied",
            Outcome::SandboxRefused => "sandbox-refused",
            Outcome::Escalated => "escalated",
            Outcome::NotGated => "not-gated",
        }
    }
}

/// One run of a line in the sandbox (a line escalated has two).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunTrace {
    pub sandbox: SandboxPolicy,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grant: Option<Grant>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// The reviewer's say on a line: a verdict, or why there was none.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewTrace {
    /// `allow` or `deny` (a verdict), absent for a rejection without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<String>,
    /// Why no verdict (`circuit-open`, `review-failed`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejection: Option<RejectionCause>,
    pub reason: String,
    pub cached: bool,
}

/// A scripted line and everything that happened to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnTrace {
    /// 1-based, in the model's order.
    pub index: usize,
    /// The line as the model asked for it (`{model_port}` filled in).
    pub line: String,
    pub outcome: Outcome,
    /// The line's final code: `ALLOWED` when it ran, the refusal's code otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Code>,
    /// Who decided last: rule, reviewer, person, fallback, breaker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<Decider>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The decision core's code before anyone was asked (`NEEDS_REVIEW`, `ALLOWED`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested: Option<Code>,
    /// What the line was given: its last run's grant, else what it asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grant: Option<Grant>,
    pub runs: Vec<RunTrace>,
    /// What the sandbox refused it, in words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sandbox_refused: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<Needs>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reviews: Vec<ReviewTrace>,
    /// What the agent's shell tool gave back to the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub told: Option<String>,
    /// The refusal code in what it was told (`[marker] CODE: …`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub told_code: Option<Code>,
    /// The line's request id in the session log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
}

impl TurnTrace {
    /// The exit status of its last run.
    pub fn exit(&self) -> Option<i32> {
        self.runs.last().and_then(|r| r.exit_code)
    }
}

/// A gated line no turn asked for (a shell a program started, a shell the agent started itself).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OtherLine {
    pub line: String,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Code>,
}

/// The circuit breaker at the end of the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Breaker {
    Closed,
    Tripped,
}

/// A tool result as the scripted model recorded it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ToolResult {
    #[serde(default)]
    pub content: String,
}

/// The turns and the other lines of a session, from its log and the tool results.
pub fn turns(
    lines: &[String],
    told: &[ToolResult],
    events: &[Event],
) -> (Vec<TurnTrace>, Vec<OtherLine>) {
    let chains = chains(events);
    let mut taken = vec![false; chains.len()];
    let mut traces = Vec::with_capacity(lines.len());
    for (index, line) in lines.iter().enumerate() {
        let found = chains
            .iter()
            .enumerate()
            .find(|(i, chain)| !taken[*i] && carries(chain.line(), line))
            .map(|(i, chain)| {
                taken[i] = true;
                chain
            });
        let told = told.get(index).map(|t| t.content.clone());
        let told_code = told.as_deref().and_then(refusal_code);
        let mut trace = match found {
            Some(chain) => chain.trace(line, told_code),
            None => TurnTrace {
                index: 0,
                line: line.clone(),
                outcome: Outcome::NotGated,
                code: None,
                decided_by: None,
                reason: None,
                requested: None,
                grant: None,
                runs: Vec::new(),
                sandbox_refused: Vec::new(),
                missing: None,
                violations: Vec::new(),
                reviews: Vec::new(),
                told: None,
                told_code: None,
                request: None,
            },
        };
        trace.index = index + 1;
        trace.told = told;
        trace.told_code = told_code;
        traces.push(trace);
    }
    let other = chains
        .iter()
        .zip(taken)
        .filter(|(_, taken)| !taken)
        .map(|(chain, _)| {
            let trace = chain.trace(chain.line(), None);
            OtherLine {
                line: trace.line,
                outcome: trace.outcome,
                code: trace.code,
            }
        })
        .collect();
    (traces, other)
}

/// How many events of each kind the session holds.
pub fn event_counts(events: &[Event]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for event in events {
        *counts.entry(event.body.kind().to_owned()).or_insert(0) += 1;
    }
    counts
}

/// The breaker at the end of the session, as shellgate itself computes it: the session state
/// folded from the log with the reviewer's breaker and budget settings (a trip is a state of the
/// fold; an `autoReview/circuit` event records only a person's reset or an explicit trip).
pub fn breaker(events: &[Event], params: &crate::audit::FoldParams) -> Breaker {
    if crate::audit::fold(events, params).breaker.open {
        Breaker::Tripped
    } else {
        Breaker::Closed
    }
}

/// Whether the logged `logged` line is the turn's `line`: itself, or wrapped as Claude Code's
/// Bash tool wraps it (`eval 'LINE'`, each `'` in it written `'"'"'` or `'\''`; a plain word
/// unquoted, `eval ls < /dev/null`).
fn carries(logged: &str, line: &str) -> bool {
    logged == line
        || logged.contains(&format!("eval {line} < /dev/null"))
        || [r#"'"'"'"#, r"'\''"]
            .iter()
            .any(|quote| logged.contains(&format!("eval '{}'", line.replace('\'', quote))))
}

/// The first refusal code in a tool result: `[marker] CODE: reason`.
fn refusal_code(text: &str) -> Option<Code> {
    Code::ALL
        .into_iter()
        .filter_map(|code| {
            text.find(&format!("] {}: ", code.as_str()))
                .map(|at| (at, code))
        })
        .min_by_key(|(at, _)| *at)
        .map(|(_, code)| code)
}

/// The events of one request id, in log order.
struct Chain<'a> {
    request: &'a RequestId,
    events: Vec<&'a Event>,
}

fn chains(events: &[Event]) -> Vec<Chain<'_>> {
    let mut chains: Vec<Chain> = Vec::new();
    for event in events {
        let Some(request) = &event.request else {
            continue;
        };
        match chains.iter_mut().find(|c| c.request == request) {
            Some(chain) => chain.events.push(event),
            None => chains.push(Chain {
                request,
                events: vec![event],
            }),
        }
    }
    // Only the chains of a line that arrived (a stray event without its `approval/asked` is not
    // a line).
    chains.retain(|c| c.asked().is_some());
    chains
}

impl Chain<'_> {
    fn asked(&self) -> Option<&crate::audit::event::LineAsked> {
        self.events.iter().find_map(|e| match &e.body {
            EventBody::ApprovalAsked(asked) => Some(asked),
            _ => None,
        })
    }

    fn line(&self) -> &str {
        self.asked().map_or("", |a| a.line.as_str())
    }

    fn trace(&self, line: &str, told_code: Option<Code>) -> TurnTrace {
        let asked = self.asked();
        let mut decisions = Vec::new();
        let mut runs: Vec<RunTrace> = Vec::new();
        let mut refused = Vec::new();
        let mut missing = None;
        let mut violations = Vec::new();
        let mut reviews = Vec::new();
        for event in &self.events {
            match &event.body {
                EventBody::ApprovalDecided(d) => decisions.push(d),
                EventBody::ExecStarted(s) => runs.push(RunTrace {
                    sandbox: s.sandbox,
                    grant: s.grant.clone(),
                    exit_code: None,
                    signal: None,
                    duration_ms: None,
                }),
                EventBody::ExecFinished(f) => {
                    if let Some(run) = runs.last_mut() {
                        run.exit_code = f.exit_code;
                        run.signal = f.signal;
                        run.duration_ms = Some(f.duration_ms);
                    }
                }
                EventBody::SandboxDenied(d) => {
                    refused.extend(d.refused.iter().cloned());
                    missing = d.missing.clone();
                }
                EventBody::SandboxViolation(v) => violations.push(v.what.clone()),
                EventBody::AutoReviewVerdict(v) => reviews.push(ReviewTrace {
                    decision: Some(v.decision.as_str().to_owned()),
                    risk: Some(v.risk.as_str().to_owned()),
                    rejection: None,
                    reason: v.reason.clone(),
                    cached: v.cached,
                }),
                EventBody::AutoReviewRejection(r) => reviews.push(ReviewTrace {
                    decision: None,
                    risk: None,
                    rejection: Some(r.cause),
                    reason: r.reason.clone(),
                    cached: false,
                }),
                _ => {}
            }
        }
        let last = decisions.last();
        let (outcome, code) = if runs.is_empty() {
            let code = match last {
                Some(d) if d.decision == Decision::Deny => Some(d.code),
                _ => told_code,
            };
            (Outcome::Denied, code)
        } else if !violations.is_empty() {
            (Outcome::SandboxRefused, Some(Code::SandboxViolation))
        } else if runs.len() >= 2 {
            (Outcome::Escalated, Some(Code::Allowed))
        } else if !refused.is_empty() {
            // As the gate tells it: the sandbox's refusal, unless the escalation's refusal was a
            // verdict of its own (a person's no, the reviewer's denial).
            let code = match last {
                Some(d)
                    if d.decision == Decision::Deny
                        && !matches!(
                            d.code,
                            Code::ApprovalUnavailable | Code::ReviewerUnconfigured
                        ) =>
                {
                    d.code
                }
                _ => Code::SandboxDenied,
            };
            (Outcome::SandboxRefused, Some(code))
        } else {
            (Outcome::Ran, Some(Code::Allowed))
        };
        TurnTrace {
            index: 0,
            line: line.to_owned(),
            outcome,
            code,
            decided_by: last.map(|d| d.by),
            reason: last.map(|d| d.reason.clone()),
            requested: asked.map(|a| a.code),
            grant: runs
                .last()
                .and_then(|r| r.grant.clone())
                .or_else(|| asked.and_then(|a| a.grant.clone())),
            runs,
            sandbox_refused: refused,
            missing,
            violations,
            reviews,
            told: None,
            told_code,
            request: Some(self.request.as_str().to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_wrapped_line_is_the_turns_line() {
        let line = "printf 'x' > a && cat a";
        let wrapped = format!(
            "source /s 2>/dev/null || true && eval '{}' < /dev/null && pwd -P >| /c",
            line.replace('\'', r"'\''")
        );
        assert!(carries(&wrapped, line));
        let double = format!("eval '{}' < /dev/null", line.replace('\'', r#"'"'"'"#));
        assert!(carries(&double, line));
        assert!(carries(
            "source /s && eval ls < /dev/null && pwd -P >| /c",
            "ls"
        ));
        assert!(!carries(
            "source /s && eval ls -a < /dev/null && pwd -P >| /c",
            "ls"
        ));
        assert!(carries(line, line));
        assert!(!carries("printf 'x' > b", line));
    }

    #[test]
    fn the_first_refusal_code_in_a_tool_result() {
        let told = "Process exited with code 202\nOutput:\n[auto-review-never] NEVER_POLICY: denied … \
                    mentions SANDBOX_DENIED: later";
        assert_eq!(refusal_code(told), Some(Code::NeverPolicy));
        assert_eq!(refusal_code("Process exited with code 0\n42"), None);
    }
}
