//! `shellgate eval`: labelled cases in, a report and a CI verdict out.
//!
//! Each case runs the real decision path — intake, the rules, the mode, and the reviewer when one is
//! configured — without executing the line, in a scratch workspace of its own seeded with the case's
//! files (so the reviewer's read-only tools read something real). No session is opened: every case
//! starts from a fresh session state (no cache, budgets, breaker or history), and no person is
//! present, so a result depends on the case alone and parallel runs give the same report as one
//! job. A failure of shellgate's or the reviewer's (any code of kind `failure`) fails the case
//! unless the case expects that very code.

pub mod cases;
pub mod report;
pub mod sessions;

use crate::audit::RequestId;
use crate::audit::fold::SessionState;
use crate::config::{self, Config, Locations, ReviewerConfig};
use crate::error::{Code, CodeKind, Error};
use crate::mode::{Resolved, SessionFacts};
use crate::policy::{self, Decision, Route, Verdict};
use crate::review::transcript::{Transcript, Usage};
use crate::review::{self, ReviewReport, ReviewRequest};
use cases::{Case, Expect};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The reviewer the cases are judged by.
#[derive(Debug, Clone)]
pub enum ReviewerChoice {
    /// This one (`--reviewer-from`, else `--config`'s `[reviewer]`).
    Reviewer(Box<ReviewerConfig>),
    /// None is configured: modes that review deny with `REVIEWER_UNCONFIGURED`, as in a session.
    Unconfigured,
    /// Rules only (`--no-review`): lines routed to the reviewer are reported as `review`.
    Off,
}

impl ReviewerChoice {
    /// For the report's head: `openai smollm2 (http://…)`, `none configured`, `off …`.
    pub fn describe(&self) -> String {
        match self {
            ReviewerChoice::Reviewer(r) => {
                // The URL may carry credentials; the report is a CI artifact.
                let url = crate::redact::redact(&r.base_url);
                format!("{} {} ({url})", r.provider.as_str(), r.model)
            }
            ReviewerChoice::Unconfigured => "none configured".to_owned(),
            ReviewerChoice::Off => "off (--no-review): rules only".to_owned(),
        }
    }
}

/// What every case of one run shares.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The user config file to decide under (`None`: none, built-in rules only).
    pub user_config: Option<PathBuf>,
    pub reviewer: ReviewerChoice,
    /// The mode for cases that name none (`None`: the config's, else `ask`).
    pub mode: Option<String>,
    pub jobs: usize,
}

/// What happened to a case's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Actual {
    pub decision: Verdict,
    pub code: Code,
    pub route: Route,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    pub reason: String,
    pub mode: String,
    /// What the sandbox gives the line if it runs (read-only for lines known only to read; the
    /// network and directories its commands need otherwise).
    #[serde(flatten)]
    pub grant: crate::policy::grant::Grant,
}

impl Actual {
    fn of(decision: &Decision) -> Actual {
        Actual {
            decision: decision.decision,
            code: decision.code,
            route: decision.route,
            rule: decision.rule.clone(),
            reason: decision.reason.clone(),
            mode: decision.mode.clone(),
            grant: decision.grant.clone(),
        }
    }
}

/// One evaluated case: everything known about it, written as its trace (`traces/<id>.json`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseResult {
    pub id: String,
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    pub line: String,
    /// The directory the line was decided in (the scratch workspace is deleted afterwards).
    pub cwd: String,
    pub expected: Expect,
    pub passed: bool,
    /// Why the case failed; empty when it passed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub misses: Vec<String>,
    /// The decision core's decision, before any review.
    pub rules: Decision,
    /// The final decision.
    pub actual: Actual,
    /// The review, when the rules routed the line to the reviewer and one was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewReport>,
    /// Every request to the reviewer and its answer (the prompt as sent, after redaction).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Transcript>,
    /// Microseconds the decision core took (intake, parse, rules, mode).
    pub decide_us: f64,
    /// Milliseconds the review took, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Usage>,
}

/// Evaluates every case, `settings.jobs` at a time, each in a scratch workspace beneath `scratch`.
/// Results come back in the order of `cases`, whatever order they finished in. An error is
/// shellgate's own (a workspace that cannot be created), not a case's outcome: the run stops.
pub fn run_all(
    cases: &[Case],
    settings: &Settings,
    scratch: &Path,
) -> Result<Vec<CaseResult>, Error> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<CaseResult, Error>>>> =
        Mutex::new(vec![None; cases.len()]);
    let jobs = settings.jobs.clamp(1, cases.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(case) = cases.get(index) else { break };
                    let result = run_case(case, settings, &scratch.join(format!("{index:05}")));
                    let stop = result.is_err();
                    if let Ok(mut all) = results.lock() {
                        all[index] = Some(result);
                    }
                    if stop {
                        next.store(cases.len(), Ordering::SeqCst);
                    }
                }
            });
        }
    });
    let results = results
        .into_inner()
        .map_err(|_| Error::new(Code::Internal, "an evaluation thread panicked"))?;
    results.into_iter().flatten().collect()
}

/// Evaluates one case in the scratch workspace `root` (created here, removed afterwards).
pub fn run_case(case: &Case, settings: &Settings, root: &Path) -> Result<CaseResult, Error> {
    let cwd = if case.cwd.as_os_str().is_empty() {
        root.to_owned()
    } else {
        root.join(&case.cwd)
    };
    let seeded = seed(root, &cwd, case);
    let evaluated = seeded.map(|()| evaluate(case, settings, root, &cwd));
    let _ = std::fs::remove_dir_all(root);
    let evaluated = evaluated?;
    let misses = misses(&case.expect, &evaluated.actual, evaluated.review.as_ref());
    Ok(CaseResult {
        id: case.id.clone(),
        source: case.source.clone(),
        category: case.category.clone(),
        line: case.line.clone(),
        cwd: cwd.to_string_lossy().into_owned(),
        expected: case.expect.clone(),
        passed: misses.is_empty(),
        misses,
        rules: evaluated.rules,
        actual: evaluated.actual,
        tokens: evaluated.transcript.as_ref().and_then(Transcript::usage),
        review: evaluated.review,
        transcript: evaluated.transcript,
        decide_us: evaluated.decide_us,
        review_ms: evaluated.review_ms,
    })
}

/// A case's decision, before and after the review.
struct Evaluated {
    /// The decision core's.
    rules: Decision,
    /// The final decision (after the review, if there was one).
    actual: Actual,
    review: Option<ReviewReport>,
    transcript: Option<Transcript>,
    decide_us: f64,
    review_ms: Option<f64>,
}

fn evaluate(case: &Case, settings: &Settings, root: &Path, cwd: &Path) -> Evaluated {
    let unreviewed = |rules: Decision, decide_us: f64| Evaluated {
        actual: Actual::of(&rules),
        rules,
        review: None,
        transcript: None,
        decide_us,
        review_ms: None,
    };
    let config = match case_config(settings, cwd) {
        Ok(config) => config,
        Err(err) => return unreviewed(config_refusal(case, settings, err), 0.0),
    };
    let mode = resolve_mode(case, settings, &config);
    let reviewer_configured = !matches!(settings.reviewer, ReviewerChoice::Unconfigured);
    let started = Instant::now();
    let rules = policy::decide_bytes_routing(
        case.line.as_bytes(),
        case.shell,
        &cwd.to_string_lossy(),
        &config.rules,
        &mode,
        reviewer_configured,
    );
    let decide_us = started.elapsed().as_secs_f64() * 1e6;
    let ReviewerChoice::Reviewer(reviewer) = &settings.reviewer else {
        return unreviewed(rules, decide_us);
    };
    if rules.decision != Verdict::Review {
        return unreviewed(rules, decide_us);
    }
    let mut transcript = Transcript::default();
    let started = Instant::now();
    let state = SessionState::new(review::fold_params(reviewer, true));
    let request = RequestId::new_random();
    let review_request = ReviewRequest::new(&case.line, cwd, &rules, reviewer, &state, &request)
        .with_workspace(root);
    let outcome = review::review_with_transcript(&review_request, &mut transcript);
    let review_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut settled = rules.clone();
    outcome.settle(&mut settled, &case.line);
    Evaluated {
        actual: Actual::of(&settled),
        rules,
        review: Some(outcome.report(&case.line)),
        transcript: Some(transcript),
        decide_us,
        review_ms: Some(review_ms),
    }
}

/// The config for a case: the user config (if any) plus the project files in its workspace, with
/// the run's reviewer.
fn case_config(settings: &Settings, cwd: &Path) -> Result<Config, Error> {
    let mut config = config::load(&Locations {
        user_file: settings.user_config.clone(),
        cwd: cwd.to_owned(),
    })?;
    config.reviewer = match &settings.reviewer {
        ReviewerChoice::Reviewer(reviewer) => Some((**reviewer).clone()),
        ReviewerChoice::Unconfigured | ReviewerChoice::Off => None,
    };
    Ok(config)
}

/// The mode a case is decided in. Full access is taken as confirmed: `eval` measures what a mode
/// decides, and runs nothing.
fn resolve_mode(case: &Case, settings: &Settings, config: &Config) -> Resolved {
    let requested = case.mode.as_deref().or(settings.mode.as_deref());
    crate::mode::resolve(
        requested,
        config.modes(),
        SessionFacts {
            full_access_confirmed: true,
            review_disabled: false,
        },
    )
}

/// A broken config (a seeded project file, say) denies the line, as it would for `check`.
fn config_refusal(case: &Case, settings: &Settings, err: Error) -> Decision {
    let mut resolved = Resolved::safe_default(None);
    if let Some(mode) = case.mode.as_ref().or(settings.mode.as_ref()) {
        resolved.mode = mode.clone();
    }
    Decision::refused(err.code, Route::Config, err.reason, &resolved)
}

/// Creates the workspace and the case's files.
fn seed(root: &Path, cwd: &Path, case: &Case) -> Result<(), Error> {
    let io = |what: &str, path: &Path, e: std::io::Error| {
        Error::new(
            Code::Internal,
            format!(
                "case {}: cannot create the {what} {}: {e}",
                case.id,
                path.display()
            ),
        )
    };
    std::fs::create_dir_all(cwd).map_err(|e| io("workspace", cwd, e))?;
    for (relative, contents) in &case.files {
        let path = root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io("directory", parent, e))?;
        }
        std::fs::write(&path, contents).map_err(|e| io("file", &path, e))?;
    }
    Ok(())
}

/// Why the case failed: the expectation's misses, and any failure the case did not expect.
fn misses(expect: &Expect, actual: &Actual, review: Option<&ReviewReport>) -> Vec<String> {
    let mut out = Vec::new();
    let unexpected = |code: Code| expect.code != Some(code);
    if let Some(failure) = review.and_then(|r| r.failure.as_ref())
        && unexpected(Code::AutoReviewFailed)
    {
        out.push(format!("the reviewer failed ({failure})"));
    } else if actual.code.kind() == CodeKind::Failure && unexpected(actual.code) {
        out.push(format!(
            "{} is a failure, not a policy outcome: {}",
            actual.code,
            crate::intake::visible_line(&actual.reason)
        ));
    }
    out.extend(expect.misses(actual));
    out
}
