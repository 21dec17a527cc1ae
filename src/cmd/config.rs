//! `shellgate config show|check`: the effective configuration and where each value came from;
//! validation of every config file in effect.

use crate::config::{Config, Provenance};
use crate::error::Code;
use crate::mode::{ApprovalPolicy, ModeId};
use clap::{Args, Subcommand};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub action: ConfigAction,
    /// Directory whose project files apply (default: the current one).
    #[arg(long, global = true)]
    pub cwd: Option<PathBuf>,
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum ConfigAction {
    /// Print the effective configuration and where each value came from.
    Show,
    /// Validate every config file in effect; exit non-zero on any problem.
    Check,
}

#[derive(Serialize)]
struct Shown<'a> {
    files: Vec<PathBuf>,
    settings: &'a [Provenance],
    problems: Vec<String>,
}

pub fn run(args: ConfigArgs) -> ExitCode {
    let cwd = crate::session::working_dir(args.cwd.as_deref());
    let config = match crate::config::load_for(&cwd) {
        Ok(c) => c,
        Err(e) => {
            if args.json {
                super::print_json(&e);
            } else {
                // The error itself, and what applies meanwhile: this is the command that says so.
                eprintln!("shellgate config: {}", e.reason);
                eprintln!(
                    "meanwhile: shellgate applies its strictest built-in policy (mode untrusted, \
                     built-in rules only); fix the file, or remove it to use the defaults"
                );
            }
            return ExitCode::from(e.code.exit_status());
        }
    };
    let problems = problems(&config);
    match args.action {
        ConfigAction::Show => show(&config, &problems, args.json),
        ConfigAction::Check => check(&config, &problems, args.json),
    }
}

/// Settings that load but cannot work: a mode that needs the reviewer without `[reviewer]`.
pub fn problems(config: &Config) -> Vec<String> {
    if config.reviewer.is_some() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if config.default_mode.as_deref().and_then(ModeId::parse) == Some(ModeId::Auto) {
        out.push(
            "mode = \"auto\" needs a [reviewer] table; without it every line the rules route to \
             the reviewer is denied with REVIEWER_UNCONFIGURED"
                .to_owned(),
        );
    }
    let auto_profiles = config
        .profiles
        .iter()
        .filter(|(_, p)| p.approval == ApprovalPolicy::Auto)
        .map(|(id, _)| format!("profiles.{id}"))
        .chain(
            config
                .custom
                .iter()
                .filter(|p| p.approval == ApprovalPolicy::Auto)
                .map(|_| "custom".to_owned()),
        );
    for name in auto_profiles {
        out.push(format!(
            "[{name}] uses approval = \"auto\", which needs a [reviewer] table"
        ));
    }
    out
}

fn show(config: &Config, problems: &[String], json: bool) -> ExitCode {
    if json {
        super::print_json(&Shown {
            files: config.files(),
            settings: &config.provenance,
            problems: problems.to_vec(),
        });
        return ExitCode::SUCCESS;
    }
    let files = config.files();
    if files.is_empty() {
        println!("config files: none (built-in defaults; mode ask)");
    } else {
        println!("config files:");
        for f in files {
            println!("  {}", f.display());
        }
    }
    println!("settings:");
    for p in &config.provenance {
        println!("  {:<30} {:<50} ({})", p.key, p.value, p.source);
    }
    for p in problems {
        println!("problem: {p}");
    }
    ExitCode::SUCCESS
}

fn check(config: &Config, problems: &[String], json: bool) -> ExitCode {
    let ok = problems.is_empty();
    if json {
        super::print_json(&Shown {
            files: config.files(),
            settings: &config.provenance,
            problems: problems.to_vec(),
        });
    } else if ok {
        let files = config.files();
        println!(
            "config ok: {} file(s), {} rules",
            files.len(),
            config.rules.len()
        );
        for f in files {
            println!("  {}", f.display());
        }
    } else {
        for p in problems {
            eprintln!("shellgate config: {p}");
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(Code::ConfigInvalid.exit_status())
    }
}
