//! `shellgate eval`: run labelled cases through the real decision path and report.
//!
//! Exit status: 0 when every case passed, 1 when any failed, 2 when the evaluation could not run
//! (a malformed case file, a bad flag, an unreadable config, an output directory it may not use).

use crate::config::{self, ReviewerConfig};
use crate::error::{Code, Error};
use crate::eval::report::{Report, RunInfo};
use crate::eval::{self, CaseResult, ReviewerChoice, Settings, cases};
use clap::Args;
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
    #[arg(long, value_name = "CONFIG", conflicts_with = "no_review")]
    pub reviewer_from: Option<PathBuf>,
    /// Rules only: lines the rules route to the reviewer are reported as `review`, not reviewed.
    #[arg(long)]
    pub no_review: bool,
    /// Cases evaluated at once (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    pub jobs: Option<NonZeroUsize>,
    /// Where report.md, report.json and traces/ are written.
    #[arg(long, value_name = "DIR", default_value = "shellgate-eval")]
    pub out: PathBuf,
}

/// The exit status when a case failed.
const SOME_CASE_FAILED: u8 = 1;

pub fn run(args: EvalArgs) -> ExitCode {
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
    let cases = cases::load(&files)?;
    prepare_out(&args.out)?;
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

fn settings(args: &EvalArgs) -> Result<Settings, Error> {
    if let Some(mode) = &args.mode
        && !crate::mode::is_valid_mode_id(mode)
    {
        return Err(usage(format!(
            "--mode {}: not a mode (ask, auto, untrusted, full, read-only, custom or profile:<id>)",
            crate::intake::visible_line(mode)
        )));
    }
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
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
        NonZeroUsize::get,
    );
    Ok(Settings {
        user_config: args.config.clone(),
        reviewer,
        mode: args.mode.clone(),
        jobs,
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

/// The output directory: created if missing; an earlier report in it is replaced; anything else
/// in it is left alone and refused.
fn prepare_out(out: &Path) -> Result<(), Error> {
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
    let traces = out.join("traces");
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
