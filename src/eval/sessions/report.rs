//! The sessions report: one [`Report`] value, written as `report.json` (its schema is
//! `docs/eval-sessions.schema.json`, named by the `schema` field) and rendered as `report.md`.
//!
//! Everything but `performance` and the runs' `durationMs`/`agentMs` depends on what happened
//! alone; the traces and the copied session logs are in each run's directory.

use super::{RunResult, Status};
use crate::intake::visible_line;
use serde::Serialize;
use std::fmt::Write as _;

/// The `schema` field: the report's format, changed only with a new number.
pub const SCHEMA: &str = "shellgate-eval-sessions/1";

/// Characters of text shown in a table cell.
const MAX_CELL_CHARS: usize = 160;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    pub files: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// `--agent`, when given.
    pub agents: Vec<String>,
    pub shellgate: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub runs: usize,
    pub passed: usize,
    pub failed: usize,
    /// Runs the harness could not carry out.
    pub errors: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Performance {
    pub jobs: usize,
    pub wall_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub schema: &'static str,
    pub summary: Summary,
    pub run: RunInfo,
    pub runs: Vec<RunResult>,
    pub performance: Performance,
}

impl Report {
    pub fn build(runs: Vec<RunResult>, run: RunInfo, jobs: usize, wall_ms: f64) -> Report {
        let count = |status: Status| runs.iter().filter(|r| r.status == status).count();
        Report {
            schema: SCHEMA,
            summary: Summary {
                runs: runs.len(),
                passed: count(Status::Passed),
                failed: count(Status::Failed),
                errors: count(Status::Error),
            },
            run,
            performance: Performance { jobs, wall_ms },
            runs,
        }
    }

    /// `shellgate eval: 5 of 6 session runs passed, 1 failed, 0 harness errors`.
    pub fn one_line(&self) -> String {
        let s = &self.summary;
        format!(
            "{} of {} session runs passed, {} failed, {} harness error{}",
            s.passed,
            s.runs,
            s.failed,
            s.errors,
            if s.errors == 1 { "" } else { "s" }
        )
    }

    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let verdict = if self.summary.errors > 0 {
            "HARNESS ERROR"
        } else if self.summary.failed > 0 {
            "FAIL"
        } else {
            "PASS"
        };
        let _ = writeln!(out, "# shellgate eval --sessions: {verdict}\n");
        let _ = writeln!(out, "{}.\n", self.one_line());
        let _ = writeln!(out, "- case files: {}", self.run.files.join(", "));
        let _ = writeln!(
            out,
            "- mode: {}",
            self.run
                .mode
                .as_deref()
                .unwrap_or("each case's (else the config's)")
        );
        if let Some(config) = &self.run.config {
            let _ = writeln!(out, "- config: {config}");
        }
        if !self.run.agents.is_empty() {
            let _ = writeln!(out, "- agents: {}", self.run.agents.join(", "));
        }
        let _ = writeln!(
            out,
            "- {} jobs, {:.1} s wall time\n",
            self.performance.jobs,
            self.performance.wall_ms / 1e3
        );
        out.push_str(
            "| run | agent | status | turns | agent exit | time |\n|---|---|---|---:|---:|---:|\n",
        );
        for run in &self.runs {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:.1} s |",
                cell(&run.id),
                run.agent,
                status_name(run.status),
                run.turns.len(),
                run.agent_exit
                    .map_or_else(|| "–".to_owned(), |e| e.to_string()),
                run.duration_ms / 1e3
            );
        }
        for run in &self.runs {
            run_section(&mut out, run);
        }
        out
    }
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Passed => "passed",
        Status::Failed => "**FAILED**",
        Status::Error => "**HARNESS ERROR**",
    }
}

/// A run: its trace beside the expectations, what it missed, how to replay its log.
fn run_section(out: &mut String, run: &RunResult) {
    let _ = writeln!(
        out,
        "\n## {} with {}: {}\n",
        cell(&run.id),
        run.agent,
        status_name(run.status)
    );
    let _ = writeln!(out, "{}", run.source);
    if let Some(description) = &run.description {
        let _ = writeln!(out, "\n{}", cell(description));
    }
    if let Some(model) = &run.model {
        let _ = writeln!(
            out,
            "\nDriven by the real model {}: {} requests ({} answered), {} tokens in, {} out.",
            cell(&model.endpoint),
            model.requests,
            model.answered,
            model.input_tokens,
            model.output_tokens
        );
    }
    if let Some(error) = &run.error {
        let _ = writeln!(out, "\nThe harness failed: {}", cell(error));
    }
    if !run.turns.is_empty() {
        out.push_str(
            "\n| # | line | outcome | code | by | grant | exit | ms | expected | |\n\
             |---:|---|---|---|---|---|---:|---:|---|---|\n",
        );
        for turn in &run.turns {
            let t = &turn.trace;
            let grant = t.grant.as_ref().map_or_else(String::new, |g| {
                let mut text = format!("{}, network {}", g.sandbox, g.network);
                if !g.writable.is_empty() {
                    text.push_str(&format!(", writes {}", g.writable.join(" ")));
                }
                text
            });
            let expected = serde_json::to_string(&turn.expected).unwrap_or_default();
            let _ = writeln!(
                out,
                "| {} | `{}` | {} | {} | {} | {} | {} | {} | {} | {} |",
                t.index,
                cell(&t.line).replace('`', "'"),
                t.outcome.as_str(),
                t.code.map_or_else(String::new, |c| c.to_string()),
                t.decided_by
                    .and_then(|d| serde_json::to_value(d).ok())
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                grant,
                t.exit().map_or_else(String::new, |e| e.to_string()),
                t.runs
                    .iter()
                    .filter_map(|r| r.duration_ms)
                    .map(|ms| ms.to_string())
                    .collect::<Vec<_>>()
                    .join("+"),
                if turn.expected.is_empty() {
                    String::new()
                } else {
                    cell(&expected)
                },
                if turn.misses.is_empty() { "✓" } else { "✗" },
            );
        }
    }
    if !run.other_lines.is_empty() {
        let _ = writeln!(out, "\nOther gated lines:");
        for other in &run.other_lines {
            let _ = writeln!(
                out,
                "- `{}`: {}{}",
                cell(&other.line).replace('`', "'"),
                other.outcome.as_str(),
                other.code.map_or_else(String::new, |c| format!(" ({c})"))
            );
        }
    }
    if let Some(review) = &run.trace_review {
        let got = match review.decision {
            Some(decision) => format!(
                "{}, risk {}",
                super::review::decision_name(decision),
                review
                    .risk_level
                    .map_or("unknown", crate::config::RiskLevel::as_str)
            ),
            None => "no verdict".to_owned(),
        };
        let _ = writeln!(
            out,
            "\nTrace review (expected {}): {got}: {} {}",
            review.expected.as_str(),
            cell(&review.reason),
            if review.miss().is_none() {
                "✓"
            } else {
                "✗"
            }
        );
    }
    if !run.misses.is_empty() {
        let _ = writeln!(out, "\nMissed:");
        for miss in &run.misses {
            let _ = writeln!(out, "- {}", cell(miss));
        }
    }
    if let Some(session) = &run.session {
        let _ = writeln!(
            out,
            "\nSession log `{}/state/shellgate/sessions/{session}.jsonl`; from this directory, \
             replay it with:\n\n\
             ```sh\nXDG_STATE_HOME=\"$PWD/{}/state\" shellgate log --session {session}\n```",
            run.dir, run.dir
        );
    }
}

/// One line of text, capped, with `|` escaped for a table cell.
fn cell(text: &str) -> String {
    let line = visible_line(text).replace('|', "\\|");
    match line.char_indices().nth(MAX_CELL_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}
