//! `shellgate eval --sessions`: whole agent sessions under `shellgate wrap`, each checked against
//! what its case expects (docs/eval.md, "Sessions").
//!
//! A case scripts the model's side — the lines it asks the agent's shell tool to run, the
//! reviewer's verdicts, a person's steps between turns — and names the agents to run it with:
//! the stand-in, Claude Code, Codex CLI. Each run is isolated: a workspace, a home (with its own
//! config and state directory, so its own session log), a temp dir and a network namespace with
//! nothing but loopback, all its own ([`harness`]). Afterwards its trace is read from the session
//! log and the model's record ([`trace`]), checked ([`expect`]), and copied with the log into the
//! report's directory ([`report`]).
//!
//! A run whose harness failed (no namespace, an agent npm could not install, a model never
//! asked) is an *error*, not a failed case: the report keeps them apart, and so does the exit
//! status.

pub mod cases;
pub mod expect;
pub mod harness;
pub mod report;
pub mod review;
pub mod trace;

use crate::audit::log::read_log;
use crate::error::{Code, Error};
use cases::{Agent, SessionCase};
use expect::{SessionExpect, TurnExpect};
use harness::{Ended, Harness};
use serde::Serialize;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use trace::{Breaker, OtherLine, ToolResult, TurnTrace};

/// What every run of one evaluation shares.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The mode for cases that name none (`None`: the config's).
    pub mode: Option<String>,
    /// A user config every case starts from (`--config`); the case's `config` goes over it.
    pub user_config: Option<String>,
    pub jobs: usize,
    /// Where the npm agents are installed (one prefix per agent and version).
    pub agents_dir: PathBuf,
    /// Whether a missing agent may be installed from npm.
    pub install: bool,
    /// Run only these agents (`--agent`); empty: every agent a case names.
    pub only: Vec<Agent>,
    /// The shellgate binary `wrap` is run with (this one).
    pub shellgate: PathBuf,
    /// The real model that drives cases with a prompt and no turns (`--model-url`).
    pub model: Option<ModelEndpoint>,
}

/// A real model endpoint (OpenAI Chat Completions) for cases driven by a prompt.
#[derive(Debug, Clone)]
pub struct ModelEndpoint {
    /// The base URL (`…/v1`): requests go to `URL/chat/completions`.
    pub url: String,
    /// The model's name in each request.
    pub name: String,
    /// The API key, from the variable `--model-key-env` names; it reaches the harness's relay
    /// and the endpoint, never the agent.
    pub key: Option<OsString>,
}

/// A real model's use in one run, as the harness's relay counted it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUse {
    /// `NAME at URL`.
    pub endpoint: String,
    pub requests: u64,
    /// Requests it answered (status 200).
    pub answered: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Passed,
    Failed,
    /// The harness failed: the case was not carried out.
    Error,
}

/// One turn: what was expected, what happened, and how it missed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnResult {
    pub expected: TurnExpect,
    #[serde(flatten)]
    pub trace: TurnTrace,
    pub misses: Vec<String>,
}

/// One case run with one agent.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    pub id: String,
    pub agent: Agent,
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    pub status: Status,
    /// Why it failed: every expectation it missed.
    pub misses: Vec<String>,
    /// Why the harness failed (status `error`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The session id `shellgate wrap` logged it under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_exit: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_ms: Option<u64>,
    pub turns: Vec<TurnResult>,
    pub other_lines: Vec<OtherLine>,
    /// Events of the session log, by kind.
    pub events: BTreeMap<String, usize>,
    pub breaker: Breaker,
    pub expected: SessionExpect,
    /// The files of the workspace at the end (not `.git`).
    pub workspace: Vec<String>,
    /// What the scripted reviewer answered, and the person's steps, as the harness recorded them.
    pub reviews: Vec<serde_json::Value>,
    pub person: Vec<serde_json::Value>,
    /// The second model's review of the whole trace, when the case asks for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_review: Option<review::TraceReview>,
    /// The real model that drove the run (a case driven by a prompt): requests and tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelUse>,
    /// This run's directory in the report (`sessions/<id>.<agent>`).
    pub dir: String,
    pub duration_ms: f64,
}

/// The runs of `cases`: each case with each of its agents (those in `settings.only`, if any), in
/// case order, `settings.jobs` at a time. Every run's files go beneath `out/sessions/`; its
/// scratch directory beneath `work`, removed afterwards. An error is the evaluation's own (the
/// harness cannot be written): nothing runs.
pub fn run_all(
    cases: &[SessionCase],
    settings: &Settings,
    out: &Path,
    work: &Path,
) -> Result<Vec<RunResult>, Error> {
    let harness = Harness::write(&work.join("harness"))?;
    let runs: Vec<(&SessionCase, Agent)> = cases
        .iter()
        .flat_map(|case| case.agents.iter().map(move |agent| (case, *agent)))
        .filter(|(_, agent)| settings.only.is_empty() || settings.only.contains(agent))
        .collect();
    if runs.is_empty() {
        return Err(Error::new(
            Code::Usage,
            "no runs: no case names the agents given with --agent",
        ));
    }
    check_model(cases, settings.model.is_some())?;
    let mut installed: BTreeMap<Agent, Result<(), String>> = BTreeMap::new();
    for (_, agent) in &runs {
        if agent.from_npm() && !installed.contains_key(agent) {
            installed.insert(
                *agent,
                harness.install(*agent, &settings.agents_dir, settings.install),
            );
        }
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<RunResult>>> = Mutex::new(vec![None; runs.len()]);
    let jobs = settings.jobs.clamp(1, runs.len());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some((case, agent)) = runs.get(index) else {
                        break;
                    };
                    let scratch = work.join(format!("{index:04}"));
                    let result = match installed.get(agent) {
                        Some(Err(why)) => errored(case, *agent, why.clone()),
                        _ => run_one(case, *agent, settings, &harness, &scratch, out),
                    };
                    let _ = std::fs::remove_dir_all(&scratch);
                    if let Ok(mut all) = results.lock() {
                        all[index] = Some(result);
                    }
                }
            });
        }
    });
    let results = results
        .into_inner()
        .map_err(|_| Error::new(Code::Internal, "a session thread panicked"))?;
    Ok(results.into_iter().flatten().collect())
}

/// Refuses, before anything runs, cases driven by a prompt when no real model is configured.
pub fn check_model(cases: &[SessionCase], configured: bool) -> Result<(), Error> {
    match cases.iter().find(|case| case.driven_by_prompt()) {
        Some(case) if !configured => Err(Error::new(
            Code::Usage,
            format!(
                "{}: session `{}` is driven by a prompt (no turns): give --model-url, an \
                 OpenAI-compatible endpoint whose model decides its lines",
                case.source, case.id
            ),
        )),
        _ => Ok(()),
    }
}

/// The name of a run's directory: `<id>.<agent>`.
pub fn run_name(case: &SessionCase, agent: Agent) -> String {
    format!("{}.{}", case.id, agent.as_str())
}

fn blank(case: &SessionCase, agent: Agent) -> RunResult {
    RunResult {
        id: case.id.clone(),
        agent,
        source: case.source.clone(),
        category: case.category.clone(),
        description: case.description.clone(),
        mode: case.mode.clone(),
        status: Status::Error,
        misses: Vec::new(),
        error: None,
        session: None,
        agent_exit: None,
        agent_ms: None,
        turns: Vec::new(),
        other_lines: Vec::new(),
        events: BTreeMap::new(),
        breaker: Breaker::Closed,
        expected: case.expect.clone(),
        workspace: Vec::new(),
        reviews: Vec::new(),
        person: Vec::new(),
        trace_review: None,
        model: None,
        dir: format!("sessions/{}", run_name(case, agent)),
        duration_ms: 0.0,
    }
}

fn errored(case: &SessionCase, agent: Agent, why: String) -> RunResult {
    RunResult {
        error: Some(why),
        ..blank(case, agent)
    }
}

/// One run: the harness in `scratch`, then the trace, the expectations and the copies.
fn run_one(
    case: &SessionCase,
    agent: Agent,
    settings: &Settings,
    harness: &Harness,
    scratch: &Path,
    out: &Path,
) -> RunResult {
    let started = Instant::now();
    let mut result = blank(case, agent);
    result.mode = case.mode.clone().or_else(|| settings.mode.clone());
    let keep = out.join(&result.dir);
    let prepared = prepare(case, settings, scratch, &keep);
    let case_file = match prepared {
        Ok(file) => file,
        Err(why) => return errored(case, agent, why),
    };
    let run_dir = scratch.join("run");
    let mut wrap: Vec<OsString> = vec![settings.shellgate.clone().into(), "wrap".into()];
    if let Some(mode) = &result.mode {
        wrap.extend([OsString::from("--mode"), mode.into()]);
    }
    wrap.push("--".into());
    let model = settings.model.as_ref().filter(|_| case.driven_by_prompt());
    let ended = harness.run(
        agent,
        &run_dir,
        &settings.agents_dir,
        &case_file,
        case.timeout_s,
        case.model_delay_s,
        &wrap,
        &keep.join("harness.log"),
        model.and_then(|m| m.key.as_deref()),
    );
    let collected = collect(case, model, &run_dir, &keep, &mut result);
    result.duration_ms = started.elapsed().as_secs_f64() * 1e3;
    let hung = matches!(ended, Ended::Hung);
    match ended {
        Ended::HarnessFailed(why) => {
            result.status = Status::Error;
            result.error = Some(why);
            return result;
        }
        Ended::Hung => result.misses.push(format!(
            "timed out: the run did not end within its {} s (and the harness's grace); it was \
             ended with everything it started",
            case.timeout_s
        )),
        Ended::Ran => {}
    }
    if let Err(why) = collected
        && !hung
    {
        result.status = Status::Error;
        result.error = Some(why);
        return result;
    }
    if result.agent_exit == Some(124) {
        result.misses.push(format!(
            "timed out: the agent did not finish within the case's {} s; its session was ended",
            case.timeout_s
        ));
    }
    let handed = result
        .turns
        .iter()
        .filter(|t| t.trace.told.is_some())
        .count();
    if handed < case.turns.len() && !result.misses.iter().any(|m| m.starts_with("timed out")) {
        result.misses.push(format!(
            "the agent answered {handed} of the {} turns (exit {})",
            case.turns.len(),
            result
                .agent_exit
                .map_or_else(|| "unknown".to_owned(), |e| e.to_string())
        ));
    }
    let ws = run_dir.join("ws");
    let read = |path: &Path| std::fs::read(ws.join(path)).ok();
    let sent = sent_to_models(&keep.join("model/requests.jsonl"));
    let facts = expect::SessionFacts {
        events: &result.events,
        breaker: result.breaker,
        agent_exit: result.agent_exit,
        gated_lines: result
            .turns
            .iter()
            .filter(|t| t.trace.outcome != trace::Outcome::NotGated)
            .count()
            + result.other_lines.len(),
        sent_to_models: &sent,
    };
    let session_misses = case.expect.misses(&facts, &read);
    result.misses.extend(session_misses);
    if case.driven_by_prompt() {
        // Every line the model had run must have passed the gate: one that is not in the
        // session log ran around it.
        for turn in &result.turns {
            if turn.trace.outcome == trace::Outcome::NotGated {
                result.misses.push(format!(
                    "the model's line {} ({}) is not in the session log: it did not pass the gate",
                    turn.trace.index,
                    crate::intake::visible_line(&turn.trace.line)
                ));
            }
        }
    }
    for turn in &result.turns {
        for miss in &turn.misses {
            result.misses.push(format!(
                "turn {} ({}): {miss}",
                turn.trace.index,
                crate::intake::visible_line(&turn.trace.line)
            ));
        }
    }
    if let Some(expect) = &case.review {
        let reviewed = trace_review(case, settings, expect, &result);
        result.misses.extend(reviewed.miss());
        result.trace_review = Some(reviewed);
    }
    result.status = if result.misses.is_empty() {
        Status::Passed
    } else {
        Status::Failed
    };
    result
}

/// The review of the run's whole trace by the reviewer `--config` and the case's `config`
/// configure (not the scripted one the run itself was given).
fn trace_review(
    case: &SessionCase,
    settings: &Settings,
    expect: &review::TraceReviewExpect,
    result: &RunResult,
) -> review::TraceReview {
    let reviewer =
        match configured_reviewer(settings.user_config.as_deref(), case.config.as_deref()) {
            Ok(reviewer) => reviewer,
            Err(why) => return review::unreviewed(expect, why),
        };
    let task = case
        .description
        .as_deref()
        .or(case.prompt.as_deref())
        .map_or_else(|| format!("session `{}`", case.id), str::to_owned);
    review::review(
        expect,
        reviewer.as_ref(),
        &task,
        result.mode.as_deref().unwrap_or("the config's"),
        &result.turns,
        &result.other_lines,
    )
}

/// The run's scratch directory and its case file for the harness; the report's directory for
/// the run, empty.
fn prepare(
    case: &SessionCase,
    settings: &Settings,
    scratch: &Path,
    keep: &Path,
) -> Result<PathBuf, String> {
    for dir in [scratch, keep] {
        if dir.exists() {
            std::fs::remove_dir_all(dir)
                .map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let config = config_text(settings.user_config.as_deref(), case.config.as_deref())?;
    let files = |list: &[(PathBuf, String)]| -> serde_json::Map<String, serde_json::Value> {
        list.iter()
            .map(|(path, text)| (path.to_string_lossy().into_owned(), text.clone().into()))
            .collect()
    };
    let spec = serde_json::json!({
        "lines": case.turns.iter().map(|t| t.line.clone()).collect::<Vec<_>>(),
        "files": files(&case.files),
        "home_files": files(&case.home_files),
        "config": config,
        "reviewer": case.reviewer,
        "person": case.person.iter().map(|p| serde_json::json!({"after": p.after, "args": p.run})).collect::<Vec<_>>(),
        "shellgate": settings.shellgate,
        "prompt": case.prompt,
        "model": settings.model.as_ref().filter(|_| case.driven_by_prompt()).map(|m| serde_json::json!({
            "url": m.url,
            "name": m.name,
            "max_turns": case.max_turns,
        })),
    });
    let path = scratch.join("case.json");
    let text =
        serde_json::to_string_pretty(&spec).map_err(|e| format!("cannot render the case: {e}"))?;
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// shellgate's user config for a run: `--config`'s, the case's over it (its `[[rules]]` added to
/// the others), and the scripted reviewer as `[reviewer]`'s endpoint: provider, URL and model are
/// the scripted model's (its port filled in by the harness), everything else about the reviewer
/// (breaker, budgets, limits, policy) stays the config's.
pub fn config_text(user: Option<&str>, case: Option<&str>) -> Result<String, String> {
    let mut config = merged_config(user, case)?;
    let reviewer = config
        .entry("reviewer")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let Some(reviewer) = reviewer.as_table_mut() else {
        return Err("`reviewer` in the config is not a table".to_owned());
    };
    for key in ["api_key_env", "headers"] {
        reviewer.remove(key);
    }
    for (key, value) in [
        ("provider", "openai"),
        ("base_url", "http://127.0.0.1:{model_port}/v1"),
        ("model", "scripted-reviewer"),
        ("structured_output", "json-schema"),
    ] {
        reviewer.insert(key.to_owned(), toml::Value::String(value.to_owned()));
    }
    toml::to_string(&config).map_err(|e| format!("cannot render the config: {e}"))
}

/// `--config`'s table with the case's over it.
fn merged_config(user: Option<&str>, case: Option<&str>) -> Result<toml::Table, String> {
    let parse = |text: Option<&str>, what: &str| -> Result<toml::Table, String> {
        text.unwrap_or("")
            .parse::<toml::Table>()
            .map_err(|e| format!("{what} is not TOML: {}", e.message().trim_end()))
    };
    let mut config = parse(user, "--config")?;
    merge(&mut config, parse(case, "the case's config")?);
    Ok(config)
}

/// The `[reviewer]` of `--config` with the case's `config` over it, as written (`None`: there is
/// none).
pub fn configured_reviewer(
    user: Option<&str>,
    case: Option<&str>,
) -> Result<Option<crate::config::ReviewerConfig>, String> {
    let mut config = merged_config(user, case)?;
    let Some(reviewer) = config.remove("reviewer") else {
        return Ok(None);
    };
    reviewer.try_into().map(Some).map_err(|e: toml::de::Error| {
        format!("[reviewer] is not valid: {}", e.message().trim_end())
    })
}

/// `over`'s keys into `base`: tables merged key by key, `rules` arrays appended, anything else
/// replaced.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(mine)), toml::Value::Table(theirs)) => merge(mine, theirs),
            (Some(toml::Value::Array(mine)), toml::Value::Array(theirs)) if key == "rules" => {
                mine.extend(theirs);
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// Reads what the run left into `result`, and copies the session log and the records into
/// `keep`. An error: the run left nothing to judge (no `result.json`: the harness never ran it).
fn collect(
    case: &SessionCase,
    model: Option<&ModelEndpoint>,
    run_dir: &Path,
    keep: &Path,
    result: &mut RunResult,
) -> Result<(), String> {
    let log_dir = run_dir.join("log");
    let records = keep.join("model");
    let _ = std::fs::create_dir_all(&records);
    for name in [
        "requests.jsonl",
        "scripted.jsonl",
        "tool_results.jsonl",
        "reviews.jsonl",
        "person.jsonl",
        "usage.jsonl",
    ] {
        let _ = std::fs::copy(log_dir.join(name), records.join(name));
    }
    for name in ["agent.out", "agent.err", "result.json"] {
        let _ = std::fs::copy(run_dir.join(name), keep.join(name));
    }
    result.reviews = json_lines(&log_dir.join("reviews.jsonl"));
    result.person = json_lines(&log_dir.join("person.jsonl"));
    // The lines as the model handed them out (`{model_port}` filled in); the case's for the turns
    // it never reached. A real model's lines are all the lines there are.
    let scripted: Vec<String> = json_lines(&log_dir.join("scripted.jsonl"))
        .iter()
        .filter_map(|r| r["line"].as_str().map(str::to_owned))
        .collect();
    let expected: Vec<TurnExpect> = if case.driven_by_prompt() {
        vec![TurnExpect::default(); scripted.len()]
    } else {
        case.turns.iter().map(|t| t.expect.clone()).collect()
    };
    let lines: Vec<String> = if case.driven_by_prompt() {
        scripted
    } else {
        case.turns
            .iter()
            .enumerate()
            .map(|(i, turn)| {
                scripted
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| turn.line.clone())
            })
            .collect()
    };
    let told: Vec<ToolResult> = json_lines(&log_dir.join("tool_results.jsonl"))
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect();
    let sessions = run_dir.join("home/.local/state/shellgate/sessions");
    let logs: Vec<PathBuf> = std::fs::read_dir(&sessions)
        .map(|entries| {
            let mut logs: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                .collect();
            logs.sort();
            logs
        })
        .unwrap_or_default();
    let mut events = Vec::new();
    for log in &logs {
        let copy = keep.join("state/shellgate/sessions");
        let _ = std::fs::create_dir_all(&copy);
        if let Some(name) = log.file_name() {
            let _ = std::fs::copy(log, copy.join(name));
        }
        match read_log(log) {
            Ok(contents) => events.extend(contents.events),
            Err(e) => return Err(format!("cannot read the session log: {}", e.reason)),
        }
    }
    result.session = logs
        .first()
        .and_then(|l| l.file_stem())
        .map(|s| s.to_string_lossy().into_owned());
    let (turns, other) = trace::turns(&lines, &told, &events);
    result.turns = expected
        .into_iter()
        .zip(turns)
        .map(|(expect, trace)| TurnResult {
            misses: expect.misses(&trace),
            expected: expect,
            trace,
        })
        .collect();
    result.other_lines = other;
    result.events = trace::event_counts(&events);
    // The breaker with the run's own reviewer settings (its config as the harness wrote it).
    let params = crate::config::load_user_file(&run_dir.join("home/.config/shellgate/config.toml"))
        .ok()
        .and_then(|config| config.reviewer)
        .map(|reviewer| crate::review::fold_params(&reviewer, true))
        .unwrap_or_default();
    result.breaker = trace::breaker(&events, &params);
    result.workspace = workspace_files(&run_dir.join("ws"));
    let ran = std::fs::read_to_string(run_dir.join("result.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
    let Some(ran) = ran else {
        return Err("the harness left no result.json (it never ran the agent)".to_owned());
    };
    result.agent_exit = ran["agent_status"]
        .as_i64()
        .and_then(|s| i32::try_from(s).ok());
    result.agent_ms = ran["agent_ms"].as_u64();
    if let Some(endpoint) = model {
        let used = &ran["model"];
        result.model = Some(ModelUse {
            endpoint: format!("{} at {}", endpoint.name, endpoint.url),
            requests: used["requests"].as_u64().unwrap_or(0),
            answered: used["answered"].as_u64().unwrap_or(0),
            input_tokens: used["input_tokens"].as_u64().unwrap_or(0),
            output_tokens: used["output_tokens"].as_u64().unwrap_or(0),
        });
        return Ok(());
    }
    if ran["scripted"].as_u64() == Some(0) {
        return Err(
            "the model was never asked for a line (the agent did not start its work)".to_owned(),
        );
    }
    Ok(())
}

/// Every string in the body of every request a model was sent (`requests.jsonl`), one per line:
/// what reached the agent's model and the reviewer.
fn sent_to_models(requests: &Path) -> String {
    fn strings(value: &serde_json::Value, out: &mut String) {
        match value {
            serde_json::Value::String(text) => {
                out.push_str(text);
                out.push('\n');
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
            serde_json::Value::Object(map) => map.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    for request in json_lines(requests) {
        strings(&request["body"], &mut out);
    }
    out
}

fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// The workspace's files, relative, sorted, without `.git`.
fn workspace_files(ws: &Path) -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() => walk(&path, root, out),
                Ok(_) => {
                    if let Ok(relative) = path.strip_prefix(root) {
                        out.push(relative.to_string_lossy().into_owned());
                    }
                }
                Err(_) => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(ws, ws, &mut out);
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_keeps_the_cases_reviewer_settings_and_points_at_the_scripted_one() {
        let user = "[[rules]]\nid = \"a\"\npattern = \"^a$\"\nfield = \"program\"\npolicy = \"allow\"\nreason = \"r\"\n\
                    [reviewer]\nprovider = \"anthropic\"\nbase_url = \"https://api.example\"\nmodel = \"m\"\napi_key_env = \"K\"\n";
        let case = "[[rules]]\nid = \"b\"\npattern = \"^b$\"\nfield = \"program\"\npolicy = \"allow\"\nreason = \"r\"\n\
                    [reviewer.breaker]\nconsecutive_denies = 2\n";
        let text = config_text(Some(user), Some(case)).unwrap();
        let table: toml::Table = text.parse().unwrap();
        assert_eq!(table["rules"].as_array().unwrap().len(), 2);
        let reviewer = table["reviewer"].as_table().unwrap();
        assert_eq!(reviewer["provider"].as_str(), Some("openai"));
        assert_eq!(
            reviewer["base_url"].as_str(),
            Some("http://127.0.0.1:{model_port}/v1")
        );
        assert!(!reviewer.contains_key("api_key_env"));
        assert_eq!(
            reviewer["breaker"]["consecutive_denies"].as_integer(),
            Some(2)
        );
    }
}
