//! `shellgate eval`: run labelled cases through the real decision path and report; with
//! `--sessions`, run whole agent sessions under `shellgate wrap` and report ([`crate::eval::sessions`]).
//!
//! Exit status: 0 when every case passed, 1 when any failed, 2 when the evaluation could not run
//! (a malformed case file, a bad flag, an unreadable config, an output directory it may not use),
//! 3 when the harness failed for a session run (an agent that could not start or be installed, no
//! network namespace): that run was not carried out, which is not a failed expectation.

use crate::config::{self, ReviewerConfig};
use crate::error::{Code, Error};
use crate::eval::report::{Report, RunInfo};
use crate::eval::sessions::cases::Agent;
use crate::eval::{self, CaseResult, ReviewerChoice, Settings, cases, sessions};
use clap::Args;
use std::ffi::OsStr;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Case files (`.toml`, `.jsonl`) or directories holding them.
    #[arg(value_name = "CASES", required = true)]
    pub cases: Vec<PathBuf>,
    /// Mode for cases that name none: ask, auto, untrusted, full, read-only, custom or profile:<id>.
    #[arg(long)]
    pub mode: Option<String>,
    /// The user config to decide under (default: none; the built-in rules only).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Take the reviewer from this config file's `[reviewer]` table.
    #[arg(long, value_name = "CONFIG", conflicts_with_all = ["no_review", "sessions"])]
    pub reviewer_from: Option<PathBuf>,
    /// Rules only: lines the rules route to the reviewer are reported as `review`, not reviewed.
    #[arg(long, conflicts_with = "sessions")]
    pub no_review: bool,
    /// Run session cases (`[[session]]`): whole agent sessions under `shellgate wrap`.
    #[arg(long)]
    pub sessions: bool,
    /// With --sessions: run only this agent's runs (standin, claude, codex); repeatable.
    #[arg(long = "agent", value_name = "AGENT", requires = "sessions")]
    pub agents: Vec<Agent>,
    /// With --sessions: where Claude Code and Codex are installed from npm (default:
    /// $XDG_CACHE_HOME/shellgate/agents).
    #[arg(long, value_name = "DIR", requires = "sessions")]
    pub agents_dir: Option<PathBuf>,
    /// With --sessions: never install a missing agent (its runs are harness errors).
    #[arg(long, requires = "sessions")]
    pub no_install: bool,
    /// With --sessions: the real model (an OpenAI-compatible base URL, such as
    /// http://127.0.0.1:8765/v1) whose answers decide the lines of cases driven by a prompt.
    #[arg(long, value_name = "URL", requires = "sessions")]
    pub model_url: Option<String>,
    /// With --model-url: the model's name in each request.
    #[arg(
        long = "model",
        value_name = "NAME",
        requires = "model_url",
        default_value = "default"
    )]
    pub model_name: String,
    /// With --model-url: the environment variable that holds the model's API key (sent to the
    /// endpoint only; the agent never sees it).
    #[arg(long, value_name = "VAR", requires = "model_url")]
    pub model_key_env: Option<String>,
    /// Cases evaluated at once (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    pub jobs: Option<NonZeroUsize>,
    /// Where report.md, report.json and traces/ are written.
    #[arg(long, value_name = "DIR", default_value = "shellgate-eval")]
    pub out: PathBuf,
}

/// The exit status when a case failed.
const SOME_CASE_FAILED: u8 = 1;
/// The exit status when the harness failed for a session run.
const HARNESS_FAILED: u8 = 3;

pub fn run(args: EvalArgs) -> ExitCode {
    if args.sessions {
        return run_sessions(&args);
    }
    match evaluate(&args) {
        Ok(report) => {
            println!("shellgate eval: {}", report.one_line());
            for failure in report.failures.iter().take(20) {
                println!(
                    "  FAIL {} ({}): {}",
                    failure.id,
                    failure.source,
                    crate::intake::visible_line(&failure.misses.join("; "))
                );
            }
            if report.failures.len() > 20 {
                println!("  … {} more", report.failures.len() - 20);
            }
            println!("report: {}", args.out.join("report.md").display());
            if report
                .cases
                .iter()
                .any(|c| c.code == Code::ReviewerUnconfigured)
            {
                eprintln!(
                    "shellgate eval: no reviewer is configured, so lines the rules route to review \
                     were denied with REVIEWER_UNCONFIGURED. Pass --reviewer-from CONFIG to review \
                     them, or --no-review to report them as `review`."
                );
            }
            ExitCode::from(if report.passed() { 0 } else { SOME_CASE_FAILED })
        }
        Err(err) => {
            eprintln!("shellgate eval: {}", crate::intake::visible(&err.reason));
            ExitCode::from(Code::Usage.exit_status())
        }
    }
}

fn evaluate(args: &EvalArgs) -> Result<Report, Error> {
    let settings = settings(args)?;
    let files = cases::case_files(&args.cases)?;
    let (cases, skipped) = cases::load(&files)?;
    for file in skipped {
        eprintln!(
            "shellgate eval: {} holds session cases; left out (run them with --sessions)",
            file.display()
        );
    }
    prepare_out(&args.out, "traces")?;
    let scratch = tempfile::Builder::new()
        .prefix("shellgate-eval-")
        .tempdir()
        .map_err(|e| usage(format!("cannot create a scratch directory: {e}")))?;
    let started = Instant::now();
    let results = eval::run_all(&cases, &settings, scratch.path())?;
    let wall_ms = started.elapsed().as_secs_f64() * 1e3;
    let run = RunInfo {
        files: files.iter().map(|f| f.display().to_string()).collect(),
        mode: args.mode.clone(),
        config: args.config.as_ref().map(|c| c.display().to_string()),
        reviewer: settings.reviewer.describe(),
    };
    let report = Report::build(&results, run, settings.jobs, wall_ms);
    write_out(&args.out, &report, &results)?;
    Ok(report)
}

fn run_sessions(args: &EvalArgs) -> ExitCode {
    match evaluate_sessions(args) {
        Ok(report) => {
            println!("shellgate eval: {}", report.one_line());
            for run in &report.runs {
                let name = format!("{}.{}", run.id, run.agent);
                match run.status {
                    sessions::Status::Passed => {}
                    sessions::Status::Failed => {
                        for miss in run.misses.iter().take(5) {
                            println!("  FAIL {name}: {}", crate::intake::visible_line(miss));
                        }
                    }
                    sessions::Status::Error => println!(
                        "  HARNESS ERROR {name}: {}",
                        crate::intake::visible_line(run.error.as_deref().unwrap_or(""))
                    ),
                }
            }
            println!("report: {}", args.out.join("report.md").display());
            ExitCode::from(if report.summary.errors > 0 {
                HARNESS_FAILED
            } else if report.summary.failed > 0 {
                SOME_CASE_FAILED
            } else {
                0
            })
        }
        Err(err) => {
            eprintln!("shellgate eval: {}", crate::intake::visible(&err.reason));
            ExitCode::from(Code::Usage.exit_status())
        }
    }
}

fn evaluate_sessions(args: &EvalArgs) -> Result<sessions::report::Report, Error> {
    check_mode(args.mode.as_deref())?;
    let user_config = match &args.config {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| usage(format!("--config {}: cannot be read: {e}", path.display())))?,
        ),
        None => None,
    };
    let files = cases::case_files(&args.cases)?;
    let (cases, skipped) = sessions::cases::load(&files)?;
    for file in skipped {
        eprintln!(
            "shellgate eval: {} holds no session cases; left out (line cases run without \
             --sessions)",
            file.display()
        );
    }
    let model = model_endpoint(args)?;
    sessions::check_model(&cases, model.is_some())?;
    prepare_out(&args.out, "sessions")?;
    let out = std::fs::canonicalize(&args.out)
        .map_err(|e| usage(format!("--out {}: {e}", args.out.display())))?;
    // Each run's home lives beneath the output directory; a home beneath a temp dir would be
    // writable to the sandbox, as no real home is.
    for temp in ["/tmp", "/var/tmp"] {
        if std::fs::canonicalize(temp).is_ok_and(|t| out.starts_with(t)) {
            return Err(usage(format!(
                "--out {}: lies beneath {temp}; session runs keep each agent's home beneath the \
                 output directory, and a home beneath a temp dir is writable to the sandbox: \
                 choose a directory elsewhere",
                args.out.display()
            )));
        }
    }
    let work = out.join(".work");
    let _ = std::fs::remove_dir_all(&work);
    let shellgate = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| Error::new(Code::Internal, format!("cannot find shellgate itself: {e}")))?;
    let settings = sessions::Settings {
        mode: args.mode.clone(),
        user_config,
        jobs: jobs(args),
        agents_dir: args.agents_dir.clone().unwrap_or_else(default_agents_dir),
        install: !args.no_install,
        only: args.agents.clone(),
        shellgate: shellgate.clone(),
        model,
    };
    let started = Instant::now();
    let runs = sessions::run_all(&cases, &settings, &out, &work);
    let _ = std::fs::remove_dir_all(&work);
    let runs = runs?;
    let wall_ms = started.elapsed().as_secs_f64() * 1e3;
    let info = sessions::report::RunInfo {
        files: files.iter().map(|f| f.display().to_string()).collect(),
        mode: args.mode.clone(),
        config: args.config.as_ref().map(|c| c.display().to_string()),
        agents: args.agents.iter().map(|a| a.to_string()).collect(),
        shellgate: shellgate.display().to_string(),
    };
    let report = sessions::report::Report::build(runs, info, settings.jobs, wall_ms);
    for run in &report.runs {
        // A run the harness never started (its agent not installed) has no directory yet.
        let dir = out.join(&run.dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| usage(format!("cannot create {}: {e}", dir.display())))?;
        write_json(&dir.join("trace.json"), run)?;
    }
    write_json(&out.join("report.json"), &report)?;
    let path = out.join("report.md");
    std::fs::write(&path, report.markdown())
        .map_err(|e| usage(format!("cannot write {}: {e}", path.display())))?;
    Ok(report)
}

/// The real model `--model-url`, `--model` and `--model-key-env` name.
fn model_endpoint(args: &EvalArgs) -> Result<Option<sessions::ModelEndpoint>, Error> {
    let Some(url) = &args.model_url else {
        return Ok(None);
    };
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| usage(format!("--model-url {url}: not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(usage(format!(
            "--model-url {url}: an http:// or https:// URL with a host, such as \
             http://127.0.0.1:8765/v1"
        )));
    }
    let key = match &args.model_key_env {
        Some(name) => Some(crate::env::get().non_empty(name).map(OsStr::to_os_string).ok_or_else(|| {
            usage(format!(
                "--model-key-env {name}: the variable is not set (or empty) in this environment"
            ))
        })?),
        None => None,
    };
    Ok(Some(sessions::ModelEndpoint {
        url: url.clone(),
        name: args.model_name.clone(),
        key,
    }))
}

/// `$XDG_CACHE_HOME/shellgate/agents`, else `~/.cache/shellgate/agents`.
fn default_agents_dir() -> PathBuf {
    let absolute = |name: &str| crate::env::get().absolute(name);
    absolute("XDG_CACHE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"))
        .join("shellgate/agents")
}

fn jobs(args: &EvalArgs) -> usize {
    args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
        NonZeroUsize::get,
    )
}

fn check_mode(mode: Option<&str>) -> Result<(), Error> {
    if let Some(mode) = mode
        && !crate::mode::is_valid_mode_id(mode)
    {
        return Err(usage(format!(
            "--mode {}: not a mode (ask, auto, untrusted, full, read-only, custom or profile:<id>)",
            crate::intake::visible_line(mode)
        )));
    }
    Ok(())
}

fn settings(args: &EvalArgs) -> Result<Settings, Error> {
    check_mode(args.mode.as_deref())?;
    let configured = match &args.config {
        Some(path) => config::load_user_file(path).map_err(as_usage)?.reviewer,
        None => None,
    };
    let reviewer = if args.no_review {
        ReviewerChoice::Off
    } else if let Some(path) = &args.reviewer_from {
        ReviewerChoice::Reviewer(Box::new(reviewer_from(path)?))
    } else {
        configured.map_or(ReviewerChoice::Unconfigured, |r| {
            ReviewerChoice::Reviewer(Box::new(r))
        })
    };
    Ok(Settings {
        user_config: args.config.clone(),
        reviewer,
        mode: args.mode.clone(),
        jobs: jobs(args),
    })
}

fn reviewer_from(path: &Path) -> Result<ReviewerConfig, Error> {
    let config = config::load_user_file(path).map_err(as_usage)?;
    config.reviewer.ok_or_else(|| {
        usage(format!(
            "--reviewer-from {}: the file has no [reviewer] table",
            path.display()
        ))
    })
}

/// The output directory: created if missing; an earlier report in it is replaced (its `details`
/// directory, `traces` or `sessions`, emptied); anything else in it is left alone and refused.
fn prepare_out(out: &Path, details: &str) -> Result<(), Error> {
    if out.exists() {
        if !out.is_dir() {
            return Err(usage(format!(
                "--out {}: exists and is not a directory",
                out.display()
            )));
        }
        let empty = std::fs::read_dir(out)
            .map_err(|e| usage(format!("--out {}: cannot be read: {e}", out.display())))?
            .next()
            .is_none();
        if !empty && !out.join("report.json").is_file() {
            return Err(usage(format!(
                "--out {}: is not empty and holds no earlier report; choose another directory",
                out.display()
            )));
        }
    }
    let traces = out.join(details);
    if traces.exists() {
        std::fs::remove_dir_all(&traces)
            .map_err(|e| usage(format!("cannot clear {}: {e}", traces.display())))?;
    }
    std::fs::create_dir_all(&traces)
        .map_err(|e| usage(format!("cannot create {}: {e}", traces.display())))
}

fn write_out(out: &Path, report: &Report, results: &[CaseResult]) -> Result<(), Error> {
    for result in results {
        let path = out.join("traces").join(format!("{}.json", result.id));
        write_json(&path, result)?;
    }
    write_json(&out.join("report.json"), report)?;
    let path = out.join("report.md");
    std::fs::write(&path, report.markdown())
        .map_err(|e| usage(format!("cannot write {}: {e}", path.display())))
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::new(Code::Internal, format!("cannot render JSON: {e}")))?;
    text.push('\n');
    std::fs::write(path, text).map_err(|e| usage(format!("cannot write {}: {e}", path.display())))
}

fn usage(reason: String) -> Error {
    Error::new(Code::Usage, reason)
}

/// A config error stops the run: the cases would all be measured against the wrong config.
fn as_usage(err: Error) -> Error {
    usage(err.reason)
}
