//! What a person's "always" answer allows for good: the one place that says when a question
//! offers it and what the rule it writes gives.
//!
//! Two kinds of question offer it, both about a line that is one program throughout:
//! - asked by default (no rule flagged it, only an `allow` rule is missing): the rule allows the
//!   program, and gives it nothing beyond the mode's sandbox;
//! - asked only because it needs the network (`builtin.network`): the rule allows exactly this
//!   line (`field = "line"`, the whole text) and declares the built-in needs the question showed
//!   — named hosts (the line's proxy holds them) and listening ports on loopback. The same line
//!   typed again runs unasked only while it needs no more than that
//!   ([`super::needs::network_declared_by_user`]): in another repository whose remote is another
//!   host, or once a project names another registry, it is asked as before. The rule is on the
//!   line, not the program, so no other line of the program is widened: `git status` stays
//!   read-only, `git commit` gets no network.
//!
//! Not offered where the need is a port on any host or the whole network (ssh, `curl "$URL"`: a
//! rule would reach every host); where the line is handed a credential variable or socket, which
//! only a person's yes to that line passes; nor where it writes a directory outside the workspace
//! other than the lines' own package caches ([`super::needs::LINE_CACHES`], which only lines
//! read) — cargo's `~/.cargo/registry`, which the person's own builds compile outside the sandbox
//! as they find it: each time that is a question about the line itself.

use super::grant::{Needs, Network};
use super::rules::NETWORK_RULE;
use super::{Decision, Route, Verdict};
use serde::Serialize;

/// The rule an "always" answer writes to the user's config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Always {
    /// What it allows.
    #[serde(flatten)]
    pub scope: Scope,
    /// What it declares (`needs`): empty for a question asked by default.
    #[serde(skip_serializing_if = "Needs::is_empty")]
    pub needs: Needs,
}

/// What an "always" rule matches, exactly (its pattern is the escaped text, anchored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Every command of this name (`field = "program"`).
    Program(String),
    /// This whole line, as typed (`field = "line"`).
    Line(String),
}

/// The rule an "always" answer to the question about `line`, decided as `decision`, would write;
/// `None` when the question offers only "once".
pub fn offered(decision: &Decision, line: &str) -> Option<Always> {
    let program = decision.commands.first()?.program.clone();
    let one_program = !program.is_empty()
        && decision.opaque.is_empty()
        && decision.hook_state.is_empty()
        && decision
            .commands
            .iter()
            .all(|c| c.program == program && c.path.is_none() && !c.calls_line_function);
    if decision.decision != Verdict::Ask || !one_program {
        return None;
    }
    match (decision.route, decision.rule.as_deref()) {
        (Route::Default, _) => Some(Always {
            scope: Scope::Program(program),
            needs: Needs::default(),
        }),
        (Route::Rule, Some(NETWORK_RULE)) => Some(Always {
            scope: Scope::Line(line.to_owned()),
            needs: network_needs(decision)?,
        }),
        _ => None,
    }
}

/// The built-in needs of the line's commands, when a rule may declare them for good.
fn network_needs(decision: &Decision) -> Option<Needs> {
    let mut needs = Needs::default();
    for command in &decision.commands {
        needs.add(&super::needs::builtin(command));
    }
    let named_only = match &needs.network {
        Network::Off => !needs.listen.is_empty(),
        Network::Tcp(_) => needs.network.any_host_ports().is_empty(),
        Network::On => false,
    };
    let nothing_outside = needs
        .writable
        .iter()
        .all(|dir| super::needs::is_line_cache(dir));
    let nothing_personal = needs.env.is_empty()
        && needs.sockets.is_empty()
        && decision.grant.env.is_empty()
        && decision.grant.sockets.is_empty();
    (named_only && nothing_outside && nothing_personal).then_some(needs)
}
