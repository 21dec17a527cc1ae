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
//! ssh, scp, sftp and rsync to hosts by name are offered it too, with the ssh agent's socket
//! they sign with: the rule is the person's own for exactly that line and declares the socket,
//! which makes it a yes to the line for good ([`super::needs::a_persons_standing_yes`]); ssh's
//! remote command is part of the line's text.
//!
//! Not offered where the need is a port on any host or the whole network (ssh past a jump host,
//! `curl "$URL"`: a rule would reach every host); where the line is handed a credential variable,
//! or a socket other than ssh's agent for ssh itself (git over ssh: its remote comes from the
//! repository), which only a person's yes to that line passes; nor where it writes a directory outside the workspace
//! other than the lines' own package caches ([`super::needs::LINE_CACHES`], which only lines
//! read) — cargo's `~/.cargo/registry`, which the person's own builds compile outside the sandbox
//! as they find it: each time that is a question about the line itself.

use super::grant::{Needs, Network, SSH_AGENT};
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
    // ssh's remote command is the line's text, run where the parser does not look: the same
    // for good as the yes once.
    let opaque_but_remote = decision
        .opaque
        .iter()
        .all(|o| program == "ssh" && o == crate::parse::SSH_REMOTE_COMMAND);
    let one_program = !program.is_empty()
        && opaque_but_remote
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

/// The programs that sign with the person's ssh agent and reach hosts by name.
const SSH_FAMILY: [&str; 4] = ["ssh", "scp", "sftp", "rsync"];

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
    // The ssh agent's socket, for ssh to hosts by name: the rule is a yes to exactly this line,
    // which is what passes it (`needs::a_persons_standing_yes`) — only while the text says what
    // runs (`ssh host "$CMD"` runs whatever the variable holds then). No credential variable.
    let ssh_family = decision
        .commands
        .iter()
        .all(|c| SSH_FAMILY.contains(&c.program.as_str()) && !c.args_dynamic && !c.extra_args);
    let personal_held = needs.env.is_empty()
        && decision.grant.env.is_empty()
        && decision
            .grant
            .sockets
            .iter()
            .chain(&needs.sockets)
            .all(|s| ssh_family && s == SSH_AGENT);
    (named_only && nothing_outside && personal_held).then_some(needs)
}
