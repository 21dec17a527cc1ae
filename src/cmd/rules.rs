//! `shellgate rules`: list every rule in effect (built-in, user, project).

use crate::policy::rules::Rule;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct RulesArgs {
    /// Directory whose project files apply (default: the current one).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct RuleRow<'a> {
    id: &'a str,
    policy: &'a str,
    source: String,
    matches: String,
    reason: &'a str,
}

fn row(rule: &Rule) -> RuleRow<'_> {
    RuleRow {
        id: &rule.id,
        policy: rule.policy.as_str(),
        source: rule.source.to_string(),
        matches: rule.describe(),
        reason: &rule.reason,
    }
}

pub fn run(args: RulesArgs) -> ExitCode {
    let cwd = crate::session::working_dir(args.cwd.as_deref());
    // The rules in effect: under an invalid config, the built-in ones alone (and it says why).
    let config = crate::config::load_or_strictest(&cwd);
    if let Some(invalid) = &config.invalid {
        eprintln!("shellgate: {}", crate::config::invalid_notice(invalid));
    }
    let rows: Vec<RuleRow> = config.rules.iter().map(row).collect();
    if args.json {
        super::print_json(&rows);
    } else {
        for r in rows {
            println!(
                "{:<28} {:<6} {}\n    matches: {}\n    reason:  {}",
                r.id, r.policy, r.source, r.matches, r.reason
            );
        }
    }
    ExitCode::SUCCESS
}
