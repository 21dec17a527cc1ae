//! The evaluation report: one [`Report`] value, written as `report.json` and rendered as
//! `report.md`.
//!
//! Everything but [`Performance`] depends on the cases' outcomes alone, so two runs of the same
//! cases (with any `--jobs`) give the same report apart from that section.

use super::CaseResult;
use super::cases::{Expect, ExpectedDecision};
use crate::error::Code;
use crate::intake::visible_line;
use crate::policy::{Route, Verdict};
use crate::review::transcript::Usage;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Characters of text shown in a table cell or list item (the JSON report has it all).
const MAX_CELL_CHARS: usize = 300;
/// Characters of a failing case's line shown in its code block.
const MAX_BLOCK_CHARS: usize = 1000;

/// Column order of the decision tables.
const VERDICTS: [Verdict; 4] = [Verdict::Allow, Verdict::Deny, Verdict::Ask, Verdict::Review];

/// How the run was set up (shown in the report's head).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    /// The case files, as given.
    pub files: Vec<String>,
    /// `--mode`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// `--config`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// `off (--no-review)`, `none configured`, or `provider model`.
    pub reviewer: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub summary: Summary,
    pub run: RunInfo,
    /// Expected decision (rows) against actual decision (columns).
    pub confusion: Vec<ConfusionRow>,
    pub routes: Vec<RouteRow>,
    pub categories: Vec<CategoryRow>,
    pub failures: Vec<FailureRow>,
    pub cases: Vec<CaseRow>,
    /// Latency and tokens: the only part that differs between runs of the same cases.
    pub performance: Performance,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub cases: usize,
    pub passed: usize,
    pub failed: usize,
    /// Cases the reviewer was asked about.
    pub reviewed: usize,
    /// Reviews that produced no verdict, by failure kind.
    pub reviewer_failures: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfusionRow {
    /// An expected decision, or `(none)` for cases that expect no decision.
    pub expected: String,
    /// Cases per actual decision (`allow`, `deny`, `ask`, `review`).
    pub actual: BTreeMap<String, usize>,
    pub passed: usize,
    pub failed: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteRow {
    pub route: String,
    pub cases: usize,
    /// Cases per actual decision.
    pub actual: BTreeMap<String, usize>,
    /// Of them, cases the reviewer was asked about.
    pub reviewed: usize,
    pub failed: usize,
    /// The grants its lines would get, with how many lines each (`workspace-write, network off`).
    pub grants: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CategoryRow {
    pub category: String,
    pub cases: usize,
    pub passed: usize,
    pub failed: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureRow {
    pub id: String,
    pub source: String,
    pub line: String,
    pub expected: Expect,
    pub actual: super::Actual,
    pub misses: Vec<String>,
    /// The reviewer's failure kind, when the review failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewer_failure: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseRow {
    pub id: String,
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    pub passed: bool,
    pub decision: Verdict,
    pub code: Code,
    pub route: Route,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The review's outcome (`allowed`, `denied`, `failed` …), when there was a review.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<crate::review::OutcomeKind>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Performance {
    pub jobs: usize,
    pub wall_ms: f64,
    /// The decision core per case (intake, parse, rules, mode), in microseconds.
    pub decide_us: Percentiles,
    /// Per review (the whole conversation), in milliseconds; absent without reviews.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_ms: Option<Percentiles>,
    pub tokens: Tokens,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p95: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    /// Reviews whose answers reported no token counts.
    pub reviews_without_usage: usize,
}

impl Percentiles {
    /// Nearest-rank percentiles; `None` for no samples.
    pub fn of(samples: &[f64]) -> Option<Percentiles> {
        let mut sorted: Vec<f64> = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let rank = |q: f64| {
            let index = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
            sorted[index - 1]
        };
        let max = *sorted.last()?;
        Some(Percentiles {
            p50: rank(0.50),
            p95: rank(0.95),
            max,
        })
    }
}

impl Report {
    pub fn build(results: &[CaseResult], run: RunInfo, jobs: usize, wall_ms: f64) -> Report {
        let failed = results.iter().filter(|r| !r.passed).count();
        let mut reviewer_failures = BTreeMap::new();
        for result in results {
            if let Some(failure) = result.review.as_ref().and_then(|r| r.failure.as_ref()) {
                *reviewer_failures
                    .entry(failure.kind.as_str().to_owned())
                    .or_insert(0) += 1;
            }
        }
        Report {
            summary: Summary {
                cases: results.len(),
                passed: results.len() - failed,
                failed,
                reviewed: results.iter().filter(|r| r.review.is_some()).count(),
                reviewer_failures,
            },
            run,
            confusion: confusion(results),
            routes: routes(results),
            categories: categories(results),
            failures: results
                .iter()
                .filter(|r| !r.passed)
                .map(failure_row)
                .collect(),
            cases: results.iter().map(case_row).collect(),
            performance: performance(results, jobs, wall_ms),
        }
    }

    pub fn passed(&self) -> bool {
        self.summary.failed == 0
    }

    /// `report.md`.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        self.head(&mut out);
        self.summary_table(&mut out);
        self.confusion_table(&mut out);
        self.route_table(&mut out);
        self.failure_list(&mut out);
        self.performance_section(&mut out);
        out
    }

    /// One line for the terminal.
    pub fn one_line(&self) -> String {
        let s = &self.summary;
        let failures: usize = s.reviewer_failures.values().sum();
        format!(
            "{} of {} cases passed, {} failed ({} reviewed, {} reviewer failures)",
            s.passed, s.cases, s.failed, s.reviewed, failures
        )
    }

    fn head(&self, out: &mut String) {
        let s = &self.summary;
        let _ = writeln!(out, "# shellgate eval\n");
        let verdict = if self.passed() { "PASS" } else { "FAIL" };
        let _ = writeln!(out, "**{verdict}**: {}.\n", self.one_line());
        let _ = writeln!(
            out,
            "- Reviewer: {}\n- Mode: {}\n- Config: {}",
            cell(&self.run.reviewer),
            cell(
                self.run
                    .mode
                    .as_deref()
                    .unwrap_or("each case's, else the config's")
            ),
            cell(self.run.config.as_deref().unwrap_or("built-in rules only")),
        );
        let _ = writeln!(out, "- Case files: {}", cell(&self.run.files.join(", ")));
        if !s.reviewer_failures.is_empty() {
            let kinds: Vec<String> = s
                .reviewer_failures
                .iter()
                .map(|(kind, n)| format!("{kind} {n}"))
                .collect();
            let _ = writeln!(out, "- Reviewer failures: {}", kinds.join(", "));
        }
        out.push('\n');
    }

    fn summary_table(&self, out: &mut String) {
        let s = &self.summary;
        let _ = writeln!(out, "## Summary\n");
        let _ = writeln!(out, "| category | cases | passed | failed |");
        let _ = writeln!(out, "|---|---:|---:|---:|");
        for row in &self.categories {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                cell(&row.category),
                row.cases,
                row.passed,
                row.failed
            );
        }
        let _ = writeln!(
            out,
            "| **all** | **{}** | **{}** | **{}** |\n",
            s.cases, s.passed, s.failed
        );
    }

    fn confusion_table(&self, out: &mut String) {
        let _ = writeln!(out, "## Expected vs actual decision\n");
        let _ = writeln!(
            out,
            "| expected \\ actual | allow | deny | ask | review | passed | failed |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
        for row in &self.confusion {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                row.expected,
                verdict_cells(&row.actual),
                row.passed,
                row.failed
            );
        }
        out.push('\n');
    }

    fn route_table(&self, out: &mut String) {
        let _ = writeln!(out, "## Routes\n");
        let _ = writeln!(
            out,
            "What decided each line (`rule`: a rule matched; `known-safe`: every command is \
             read-only; `default`: the mode's route for what no rule covers; `mode`: the mode \
             allows what no rule denies; `intake` and `config`: refused before the rules).\n"
        );
        let _ = writeln!(
            out,
            "| route | cases | allow | deny | ask | review | reviewed | failed | grants |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---|");
        for row in &self.routes {
            let grants: Vec<String> = row
                .grants
                .iter()
                .map(|(grant, n)| format!("{} ×{n}", cell(grant)))
                .collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                row.route,
                row.cases,
                verdict_cells(&row.actual),
                row.reviewed,
                row.failed,
                grants.join("; ")
            );
        }
        out.push('\n');
    }

    fn failure_list(&self, out: &mut String) {
        let _ = writeln!(out, "## Failing cases\n");
        if self.failures.is_empty() {
            let _ = writeln!(out, "None.\n");
            return;
        }
        for f in &self.failures {
            let _ = writeln!(out, "### {} ({})\n", cell(&f.id), cell(&f.source));
            let _ = writeln!(out, "{}", fenced(&visible_line(&f.line)));
            let _ = writeln!(out, "- expected: {}", cell(&f.expected.describe()));
            let actual = &f.actual;
            let rule = actual
                .rule
                .as_ref()
                .map(|r| format!(" (rule {r})"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- actual: {} {}, route {}{}, mode {}",
                actual.decision.as_str(),
                actual.code,
                actual.route.as_str(),
                cell(&rule),
                cell(&actual.mode)
            );
            let _ = writeln!(out, "- reason: {}", cell(&visible_line(&actual.reason)));
            for miss in &f.misses {
                let _ = writeln!(out, "- why it failed: {}", cell(&visible_line(miss)));
            }
            out.push('\n');
        }
    }

    fn performance_section(&self, out: &mut String) {
        let p = &self.performance;
        let _ = writeln!(out, "## Performance\n");
        let _ = writeln!(
            out,
            "{} jobs, {:.0} ms wall time. Decision core per case: p50 {:.1} µs, p95 {:.1} µs, \
             max {:.1} µs.",
            p.jobs, p.wall_ms, p.decide_us.p50, p.decide_us.p95, p.decide_us.max
        );
        match &p.review_ms {
            Some(r) => {
                let _ = writeln!(
                    out,
                    "Review per case: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms. Tokens: {} in, \
                     {} out ({} reviews reported none).",
                    r.p50,
                    r.p95,
                    r.max,
                    p.tokens.input,
                    p.tokens.output,
                    p.tokens.reviews_without_usage
                );
            }
            None => {
                let _ = writeln!(out, "No reviews.");
            }
        }
    }
}

fn confusion(results: &[CaseResult]) -> Vec<ConfusionRow> {
    let mut rows = Vec::new();
    let labels = ExpectedDecision::ALL
        .iter()
        .map(|d| (Some(*d), d.as_str()))
        .chain([(None, "(none)")]);
    for (expected, label) in labels {
        let matching: Vec<&CaseResult> = results
            .iter()
            .filter(|r| r.expected.decision == expected)
            .collect();
        if matching.is_empty() {
            continue;
        }
        let failed = matching.iter().filter(|r| !r.passed).count();
        rows.push(ConfusionRow {
            expected: label.to_owned(),
            actual: by_verdict(&matching),
            passed: matching.len() - failed,
            failed,
        });
    }
    rows
}

/// `allow | deny | ask | review` counts as table cells.
fn verdict_cells(counts: &BTreeMap<String, usize>) -> String {
    let cells: Vec<String> = VERDICTS
        .iter()
        .map(|v| counts.get(v.as_str()).copied().unwrap_or(0).to_string())
        .collect();
    cells.join(" | ")
}

fn by_verdict(results: &[&CaseResult]) -> BTreeMap<String, usize> {
    VERDICTS
        .iter()
        .map(|v| {
            let n = results.iter().filter(|r| r.actual.decision == *v).count();
            (v.as_str().to_owned(), n)
        })
        .collect()
}

fn routes(results: &[CaseResult]) -> Vec<RouteRow> {
    let mut by_route: BTreeMap<Route, Vec<&CaseResult>> = BTreeMap::new();
    for result in results {
        by_route
            .entry(result.actual.route)
            .or_default()
            .push(result);
    }
    by_route
        .into_iter()
        .map(|(route, cases)| RouteRow {
            route: route.as_str().to_owned(),
            cases: cases.len(),
            actual: by_verdict(&cases),
            reviewed: cases.iter().filter(|r| r.review.is_some()).count(),
            failed: cases.iter().filter(|r| !r.passed).count(),
            grants: cases.iter().fold(BTreeMap::new(), |mut all, r| {
                *all.entry(r.actual.grant.to_string()).or_default() += 1;
                all
            }),
        })
        .collect()
}

fn categories(results: &[CaseResult]) -> Vec<CategoryRow> {
    let mut by_category: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for result in results {
        let name = result
            .category
            .clone()
            .unwrap_or_else(|| "(none)".to_owned());
        let entry = by_category.entry(name).or_default();
        entry.0 += 1;
        if !result.passed {
            entry.1 += 1;
        }
    }
    by_category
        .into_iter()
        .map(|(category, (cases, failed))| CategoryRow {
            category,
            cases,
            passed: cases - failed,
            failed,
        })
        .collect()
}

fn failure_row(result: &CaseResult) -> FailureRow {
    FailureRow {
        id: result.id.clone(),
        source: result.source.clone(),
        line: result.line.clone(),
        expected: result.expected.clone(),
        actual: result.actual.clone(),
        misses: result.misses.clone(),
        reviewer_failure: result
            .review
            .as_ref()
            .and_then(|r| r.failure.as_ref())
            .map(|f| f.kind.as_str().to_owned()),
    }
}

fn case_row(result: &CaseResult) -> CaseRow {
    CaseRow {
        id: result.id.clone(),
        source: result.source.clone(),
        category: result.category.clone(),
        passed: result.passed,
        decision: result.actual.decision,
        code: result.actual.code,
        route: result.actual.route,
        rule: result.actual.rule.clone(),
        review: result.review.as_ref().map(|r| r.outcome),
    }
}

fn performance(results: &[CaseResult], jobs: usize, wall_ms: f64) -> Performance {
    let decide: Vec<f64> = results.iter().map(|r| r.decide_us).collect();
    let review: Vec<f64> = results.iter().filter_map(|r| r.review_ms).collect();
    let usage = results
        .iter()
        .filter_map(|r| r.tokens)
        .fold(Usage::default(), std::ops::Add::add);
    let reviews_without_usage = results
        .iter()
        .filter(|r| r.review_ms.is_some() && r.tokens.is_none())
        .count();
    Performance {
        jobs,
        wall_ms,
        decide_us: Percentiles::of(&decide).unwrap_or(Percentiles {
            p50: 0.0,
            p95: 0.0,
            max: 0.0,
        }),
        review_ms: Percentiles::of(&review),
        tokens: Tokens {
            input: usage.input,
            output: usage.output,
            reviews_without_usage,
        },
    }
}

/// Text for a Markdown table cell or list item: control characters shown, pipes escaped, long
/// text cut.
fn cell(text: &str) -> String {
    let shown = visible_line(text).replace('|', "\\|");
    match shown.char_indices().nth(MAX_CELL_CHARS) {
        Some((cut, _)) => format!("{}…", &shown[..cut]),
        None => shown,
    }
}

/// A fenced code block whose fence is longer than any run of backticks in `text`.
fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let shown = match text.char_indices().nth(MAX_BLOCK_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    };
    format!("{fence}text\n{shown}\n{fence}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<f64> = (1..=20).map(f64::from).collect();
        let p = Percentiles::of(&samples).unwrap();
        assert_eq!((p.p50, p.p95, p.max), (10.0, 19.0, 20.0));
        assert!(Percentiles::of(&[]).is_none());
        let one = Percentiles::of(&[3.0]).unwrap();
        assert_eq!((one.p50, one.p95), (3.0, 3.0));
    }

    #[test]
    fn fences_outgrow_backticks_and_cells_escape_pipes() {
        let block = fenced("echo ```x``` `y`");
        assert!(block.starts_with("````text\n"), "{block}");
        assert!(block.ends_with("\n````\n"), "{block}");
        assert_eq!(cell("a | b\u{1b}[31m"), "a \\| b^[[31m");
    }
}
