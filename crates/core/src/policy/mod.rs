//! The decision: from a validated line, the compiled rules and the resolved mode to a [`Decision`].
//!
//! Pure: no I/O, no clock, no environment. The rules are [`rules::Rule`]s, compiled by the config
//! loader from the files (or [`rules::builtin_rules`] alone); a decision reads them, with whether a
//! reviewer is configured, through [`PolicyConfig`]. The steps, in order:
//! 1. parse the line into the commands that would run;
//! 2. match every rule; the strictest match wins (`never` > `human` > `ai` > `allow`), and `never`
//!    denies without asking anyone;
//! 3. a line is allowed by the rules alone only if every command is allowed by an `allow` rule or is
//!    known-safe, and the line is neither opaque nor touching hook state (known-safe lines also
//!    must not redirect into files);
//! 4. what is left is routed by the mode's approval policy: a person (`ask`), the reviewer
//!    (`review`), or — for modes without approval — allowed to run in the mode's sandbox.

pub mod always;
pub mod destructive;
pub mod endpoint;
pub mod environment;
pub mod grant;
pub mod known_safe;
pub mod needs;
pub mod network;
pub mod own_commands;
pub mod own_config;
pub mod registries;
pub mod remotes;
pub mod rules;
pub mod secrets;
pub mod ssh_args;
pub mod ssh_config;

use crate::error::Code;
use crate::intake::{self, Line};
use crate::mode::{ApprovalPolicy, Resolved, SandboxPolicy};
use crate::parse::{self, Command, Parsed, ShellKind};
use grant::{Grant, Needs};
use rules::{BuiltinCheck, Field, LineContext, Matcher, Rule, RulePolicy, RuleSource};
use serde::{Deserialize, Serialize};

/// What happens to the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Deny,
    /// The reviewer model must judge it.
    Review,
    /// A person must approve it.
    Ask,
}

/// What decided the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Route {
    /// Intake refused it.
    Intake,
    /// The context the line is decided in could not be loaded (its session log). A broken
    /// config file is not this: it decides with the strictest built-in policy.
    Config,
    /// A rule (named in [`Decision::rule`]).
    Rule,
    /// Every command is known to be read-only.
    KnownSafe,
    /// The mode's approval policy (for example Full access allows what no rule denies).
    Mode,
    /// No rule matched and not everything is known-safe: the mode's default route.
    Default,
}

impl Verdict {
    pub const ALL: [Verdict; 4] = [Verdict::Allow, Verdict::Deny, Verdict::Review, Verdict::Ask];

    /// The name as in JSON (`allow`, `deny`, `review`, `ask`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Deny => "deny",
            Verdict::Review => "review",
            Verdict::Ask => "ask",
        }
    }
}

impl Route {
    pub const ALL: [Route; 6] = [
        Route::Intake,
        Route::Config,
        Route::Rule,
        Route::KnownSafe,
        Route::Mode,
        Route::Default,
    ];

    /// The name as in JSON (`intake`, `known-safe`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Route::Intake => "intake",
            Route::Config => "config",
            Route::Rule => "rule",
            Route::KnownSafe => "known-safe",
            Route::Mode => "mode",
            Route::Default => "default",
        }
    }
}

/// The outcome of deciding one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub decision: Verdict,
    pub code: Code,
    pub reason: String,
    pub route: Route,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    pub mode: String,
    /// What the sandbox gives the line if it runs: the mode's base, widened by what its commands
    /// need (see [`grant`]). An approver may narrow it.
    #[serde(flatten)]
    pub grant: Grant,
    /// What the line's builds would need if they turn out to fetch (`cargo build`: TCP 443 and
    /// its registry cache): not in the grant; offered once if the sandbox refuses such a fetch
    /// (see [`needs::on_demand`]). Empty when the grant already has the network.
    #[serde(default, skip_serializing_if = "Needs::is_empty")]
    pub on_demand: Needs,
    pub commands: Vec<Command>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub opaque: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hook_state: Vec<String>,
    /// Variables the line assigns (see `parse::Parsed::assigned`): a line that runs in the
    /// person's shell must not assign one whose assignment is arithmetic there.
    #[serde(skip)]
    pub assigned: Vec<String>,
    /// The parameters the line expands plainly (see `parse::Parsed::parameters`): a line that
    /// runs in the person's shell, inside the hook's function, must not read one the function
    /// changes (`$status`, `$FUNCNAME`).
    #[serde(skip)]
    pub parameters: Vec<String>,
    /// The line only assigns literal values and plain parameters
    /// (`parse::Parsed::only_plain_assignments`).
    #[serde(skip)]
    pub only_plain_assignments: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub harness: Option<&'static str>,
    /// The file that harness writes itself (Claude Code's working-directory file): the line is
    /// handed exactly that file when it runs, whatever its sandbox (see `gate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub harness_write: Option<parse::harness::HarnessWrite>,
    /// Why the effective mode differs from the requested one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Allowed by the person's own rule for exactly this line, which declares every credential
    /// variable and socket the grant passes (what an "always" answer writes, see [`always`]): a
    /// person's yes to the line for good, so they are passed as on a yes at the terminal
    /// ([`Grant::allowed_by`]). False for every other decision.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub a_persons_standing_yes: bool,
}

impl Decision {
    /// A decision that stops the line before parsing (intake, config).
    pub fn refused(code: Code, route: Route, reason: String, mode: &Resolved) -> Decision {
        Decision {
            decision: Verdict::Deny,
            code,
            reason,
            route,
            rule: None,
            mode: mode.mode.clone(),
            grant: Grant::base(mode.sandbox, mode.network),
            on_demand: Needs::default(),
            commands: Vec::new(),
            opaque: Vec::new(),
            hook_state: Vec::new(),
            assigned: Vec::new(),
            parameters: Vec::new(),
            only_plain_assignments: false,
            harness: None,
            harness_write: None,
            note: mode.note.clone(),
            a_persons_standing_yes: false,
        }
    }
}

/// What a decision reads from the configuration: the rules in effect (built-in first, then the
/// user's, then the projects') and whether a reviewer is configured. The config builds it
/// (`Config::policy`); [`rules::builtin_rules`] alone, without a reviewer, is what applies with no
/// config files.
#[derive(Debug, Clone, Copy)]
pub struct PolicyConfig<'a> {
    pub rules: &'a [Rule],
    /// A `[reviewer]` table is configured (see [`Input::reviewer_configured`]).
    pub reviewer_configured: bool,
    /// See [`Input::typed_by_a_person`]; the gate sets it, the config never does.
    pub typed_by_a_person: bool,
    /// See [`Input::remotes`]; the gate reads them, the config never names them.
    pub remotes: Option<&'a remotes::Remotes>,
    /// See [`Input::registries`]; the gate reads them, the config never names them.
    pub registries: Option<&'a registries::Registries>,
    /// See [`Input::ssh`]; the gate reads it, the config never names it.
    pub ssh: Option<&'a ssh_config::SshConfig>,
}

/// Everything a decision depends on.
pub struct Input<'a> {
    pub line: &'a Line,
    pub shell: ShellKind,
    pub cwd: &'a str,
    /// The rules in effect, in the order the config holds them.
    pub rules: &'a [Rule],
    pub mode: &'a Resolved,
    /// A reviewer can judge what the rules route to `ai` in an auto-review mode. Normally whether
    /// the config has a `[reviewer]`; `eval --no-review` decides as if it had one, without asking.
    pub reviewer_configured: bool,
    /// The line was typed by a person in their own hooked shell, outside Full access: the rules
    /// [`CONTAINED_FOR_A_PERSON`] do not apply to it.
    pub typed_by_a_person: bool,
    /// The remotes of the repository the line runs in (read by the binary's `git_config`): a git line that
    /// names one is judged by where it points ([`remotes::resolve`]).
    pub remotes: Option<&'a remotes::Remotes>,
    /// The registries and indexes configured for the line's package tools (read by the binary's
    /// `registries`): a package line is judged as fetching from them ([`registries::resolve`]).
    pub registries: Option<&'a registries::Registries>,
    /// The person's ssh config (read by the binary's `ssh_config`): `ssh ALIAS` is judged where
    /// the alias goes ([`ssh_config::resolve`]).
    pub ssh: Option<&'a ssh_config::SshConfig>,
}

/// The rules a line a person types in their own hooked shell is not asked about:
/// `builtin.hook-state` (`alias`, `shopt`, `source`, `set -a`, `PS1=…`) and `builtin.opaque`
/// (`python3 -c '…'`, `X=1; echo $((X+1))`, `export EDITOR=vim`). Both are about what the rules
/// cannot see, and there the kernel and the seal hold by construction: such a line never runs in
/// the shell itself (`shell::in_shell`: only plain lines do), it runs in the sandbox, and nothing
/// of it reaches the person's shell but what the seal applies — the inert, what the person says
/// yes to there, never what the prompt or a hook calls, never a trap (`shell::state::seal`). What
/// it may do inside the workspace, any ordinary line may do too; a line that visibly destroys
/// work there, needs the network, reads credentials or writes what the sandbox refuses is still
/// asked by its own rule.
///
/// `builtin.network` is not asked about either when all the line needs the network for is named
/// hosts the sandbox's proxy holds (its literal URLs, the public registries, a loopback port it
/// listens on: [`needs::network_held_by_the_sandbox`]): the person typed the line, and the
/// kernel gives it exactly those hosts — another is refused, named, and escalation asks.
const CONTAINED_FOR_A_PERSON: [BuiltinCheck; 2] = [BuiltinCheck::HookState, BuiltinCheck::Opaque];

/// What a line needs before it may run, from least to most. The strictest need on the line wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Need {
    /// Every command is known to only read: it runs in the read-only sandbox, unasked.
    ReadOnly,
    /// An `allow` rule covers it: it runs in the mode's sandbox, unasked.
    Allowed,
    /// Not known to only read, flagged by no rule: the mode's sandbox contains it, so it runs
    /// there unasked — except in `untrusted` (and `read-only`), where a person approves it.
    Ordinary,
    /// A rule routes it to `ai`: a person, the reviewer or nobody, by mode.
    Ai,
    /// A rule routes it to a person, in every mode.
    Human,
    /// A rule denies it, in every mode.
    Never,
}

impl Need {
    fn of(policy: RulePolicy) -> Need {
        match policy {
            RulePolicy::Allow => Need::Allowed,
            RulePolicy::Ai => Need::Ai,
            RulePolicy::Human => Need::Human,
            RulePolicy::Never => Need::Never,
        }
    }
}

/// What the rules require before the line may run, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    need: Need,
    route: Route,
    rule: Option<String>,
    reason: String,
}

/// [`decide_bytes`] with the rules and the reviewer's presence given (see
/// [`Input::reviewer_configured`]), not typed by a person.
pub fn decide_bytes_routing(
    bytes: &[u8],
    shell: ShellKind,
    cwd: &str,
    rules: &[Rule],
    mode: &Resolved,
    reviewer_configured: bool,
) -> Decision {
    let policy = PolicyConfig {
        rules,
        reviewer_configured,
        typed_by_a_person: false,
        remotes: None,
        registries: None,
        ssh: None,
    };
    decide_bytes(bytes, shell, cwd, policy, mode)
}

/// Decide raw bytes: intake first, then [`decide`].
pub fn decide_bytes(
    bytes: &[u8],
    shell: ShellKind,
    cwd: &str,
    policy: PolicyConfig<'_>,
    mode: &Resolved,
) -> Decision {
    match intake::intake(bytes) {
        Ok(line) => decide(&Input {
            line: &line,
            shell,
            cwd,
            rules: policy.rules,
            mode,
            reviewer_configured: policy.reviewer_configured,
            typed_by_a_person: policy.typed_by_a_person,
            remotes: policy.remotes,
            registries: policy.registries,
            ssh: policy.ssh,
        }),
        Err(rejection) => {
            Decision::refused(rejection.code(), Route::Intake, rejection.reason(), mode)
        }
    }
}

/// Decide a line that passed intake.
pub fn decide(input: &Input) -> Decision {
    let mut parsed = parse::parse(input.line.as_str(), input.shell);
    if let Some(remotes) = input.remotes {
        remotes::resolve(&mut parsed, remotes);
    }
    if let Some(registries) = input.registries {
        registries::resolve(&mut parsed, registries);
    }
    if let Some(ssh) = input.ssh {
        ssh_config::resolve(&mut parsed, ssh);
    }
    let requirement = requirement(input, &parsed);
    let (decision, code, mut reason, route) = route_by_mode(&requirement, input);
    // A line allowed because it only reads runs where it cannot write; a line that only edits
    // shellgate's own config, which no sandbox lets a line write, runs outside the sandbox once a
    // person approves it (see `own_config`); anything else in the mode's sandbox (none only in
    // a confirmed Full access mode), with what its commands need.
    let context = rules::LineContext {
        line: input.line.as_str(),
        cwd: input.cwd,
        parsed: &parsed,
        shell: input.shell,
        network: input.mode.network,
    };
    let grant = if requirement.need == Need::ReadOnly {
        Grant::base(SandboxPolicy::ReadOnly, false)
    } else if decision == Verdict::Ask && own_config::only_edits_own_config(&parsed) {
        reason.push_str(
            "; it only edits shellgate's own config, which no sandbox lets a line write: \
             approved, it runs outside the sandbox",
        );
        Grant::base(SandboxPolicy::FullAccess, true)
    } else if decision == Verdict::Ask && own_config::only_edits_startup_files(&parsed) {
        reason.push_str(
            "; it only edits shell startup files, which no sandbox lets a line write: approved, \
             it runs outside the sandbox, in this shell as typed, once",
        );
        Grant::base(SandboxPolicy::FullAccess, true)
    } else {
        Grant::base(input.mode.sandbox, input.mode.network).with_needs(&needs::of_line(
            input.rules,
            &context,
            &parsed,
        ))
    };
    let on_demand = if grant.sandbox == SandboxPolicy::WorkspaceWrite && grant.network.is_off() {
        needs::on_demand(&parsed)
    } else {
        Needs::default()
    };
    let a_persons_standing_yes = decision == Verdict::Allow
        && requirement.need == Need::Allowed
        && needs::a_persons_standing_yes(
            input.rules,
            requirement.rule.as_deref(),
            &context,
            &grant,
        );
    let only_plain_assignments = parsed.only_plain_assignments();
    Decision {
        decision,
        code,
        reason,
        route,
        rule: requirement.rule,
        mode: input.mode.mode.clone(),
        grant,
        on_demand,
        commands: parsed.commands,
        opaque: parsed.opaque,
        hook_state: parsed.hook_state,
        assigned: parsed.assigned,
        parameters: parsed.parameters,
        only_plain_assignments,
        harness: parsed.harness,
        harness_write: parsed.harness_write,
        note: input.mode.note.clone(),
        a_persons_standing_yes,
    }
}

/// Steps 2 and 3: what the rules say.
fn requirement(input: &Input, parsed: &Parsed) -> Requirement {
    let line = input.line.as_str();
    let context = LineContext {
        line,
        cwd: input.cwd,
        parsed,
        shell: input.shell,
        network: input.mode.network,
    };
    let flagged = strictest_flag(input, &context);
    if let Some(requirement) = flagged {
        return requirement;
    }
    let line_rule = allow_rules(input.rules).find(|r| {
        matches!(
            &r.matcher,
            Matcher::Regex {
                field: Field::Line | Field::Cwd,
                ..
            }
        ) && r.finding(&context).is_some()
    });
    if let Some(rule) = line_rule {
        return allowed_by(rule);
    }
    commands_requirement(input, parsed)
}

/// The strictest non-`allow` rule that matches, with what it found.
fn strictest_flag<'r>(input: &Input<'r>, context: &LineContext) -> Option<Requirement> {
    let contained = |rule: &Rule| {
        input.typed_by_a_person
            && matches!(rule.matcher, Matcher::Builtin(check) if CONTAINED_FOR_A_PERSON.contains(&check))
    };
    // The network a user's own rules already grant is not asked about again, nor, on a line a
    // person types, what the sandbox holds by name. Judged only for a line the network rule found
    // (every line reaches this loop; few need the network).
    // Nor is ssh's remote command, on a line the person's own rule allows exactly.
    let declared = |rule: &Rule| match rule.matcher {
        Matcher::Builtin(BuiltinCheck::NetworkAccess) => {
            needs::network_declared_by_user(input.rules, context)
                || input.typed_by_a_person
                    && needs::network_held_by_the_sandbox(context, input.registries.is_some())
        }
        Matcher::Builtin(BuiltinCheck::Opaque) => {
            needs::remote_command_allowed_by_user(input.rules, context)
        }
        _ => false,
    };
    let mut best: Option<(&Rule, String)> = None;
    for rule in input
        .rules
        .iter()
        .filter(|r| r.policy != RulePolicy::Allow && !contained(r))
    {
        // Stricter wins; at the same strictness a user's or project's rule, which names the line
        // more precisely, is reported rather than a built-in one.
        let beaten = best.as_ref().is_some_and(|(b, _)| {
            b.policy > rule.policy
                || (b.policy == rule.policy
                    && (b.source != RuleSource::Builtin || rule.source == RuleSource::Builtin))
        });
        if beaten {
            continue;
        }
        if let Some(found) = rule.finding(context)
            && !declared(rule)
        {
            best = Some((rule, found));
        }
    }
    best.map(|(rule, found)| {
        let detail = if found.is_empty() {
            String::new()
        } else {
            format!(": {found}")
        };
        Requirement {
            need: Need::of(rule.policy),
            route: Route::Rule,
            rule: Some(rule.id.clone()),
            reason: format!(
                "rule {} ({}): {}{detail}",
                rule.id,
                rule.policy.as_str(),
                rule.reason
            ),
        }
    })
}

/// No rule flags the line: each command is known to only read, allowed by a rule, or ordinary.
fn commands_requirement(input: &Input, parsed: &Parsed) -> Requirement {
    let facts = known_safe::LineFacts::of(parsed, input.shell);
    let mut used_rule = None;
    let mut ordinary = None;
    let mut read_only = 0;
    for command in &parsed.commands {
        if let Some(rule) = allow_rules(input.rules).find(|r| allows_command(r, command)) {
            used_rule.get_or_insert(rule);
            continue;
        }
        if ordinary.is_some() {
            continue;
        }
        match known_safe::refusal(command, &facts) {
            Some(why) => {
                ordinary = Some(format!(
                    "`{}` is not known to only read ({why})",
                    intake::visible(&command.argv_text())
                ));
            }
            None => read_only += 1,
        }
    }
    // A redirection on a compound statement writes for the commands inside it (`(ls) > f`), and
    // needs no command at all to write: `> f`, `[[ -f x ]] > f`, `(( x )) > f`.
    let unruled = read_only > 0 || used_rule.is_none();
    if ordinary.is_none()
        && unruled
        && let Some(file) = parsed.writes.first()
    {
        ordinary = Some(writes_file(file));
    }
    match (ordinary, used_rule) {
        (Some(reason), _) => Requirement {
            need: Need::Ordinary,
            route: Route::Default,
            rule: None,
            reason,
        },
        (None, Some(rule)) => allowed_by(rule),
        (None, None) => Requirement {
            need: Need::ReadOnly,
            route: Route::KnownSafe,
            rule: None,
            reason: "every command on the line is known to only read".to_owned(),
        },
    }
}

fn writes_file(file: &str) -> String {
    format!("the line writes to the file `{}`", intake::visible(file))
}

fn allow_rules(rules: &[Rule]) -> impl Iterator<Item = &Rule> {
    rules.iter().filter(|r| r.policy == RulePolicy::Allow)
}

/// An `allow` rule on `program` or `argv` allows one command at a time, never its neighbours.
pub(crate) fn allows_command(rule: &Rule, command: &Command) -> bool {
    match &rule.matcher {
        Matcher::Regex {
            field: Field::Program,
            regex,
        } => regex.is_match(&command.program),
        Matcher::Regex {
            field: Field::Argv,
            regex,
        } => regex.is_match(&command.argv_text()),
        _ => false,
    }
}

fn allowed_by(rule: &Rule) -> Requirement {
    Requirement {
        need: Need::Allowed,
        route: Route::Rule,
        rule: Some(rule.id.clone()),
        reason: format!("allowed by rule {}: {}", rule.id, rule.reason),
    }
}

/// Step 4: what the mode does with the requirement.
fn route_by_mode(req: &Requirement, input: &Input) -> (Verdict, Code, String, Route) {
    let mode = input.mode;
    match req.need {
        Need::Never => (
            Verdict::Deny,
            Code::NeverPolicy,
            format!("denied by {}", req.reason),
            req.route,
        ),
        Need::ReadOnly => (
            Verdict::Allow,
            Code::Allowed,
            format!("{}; it runs in the read-only sandbox", req.reason),
            req.route,
        ),
        Need::Allowed => (Verdict::Allow, Code::Allowed, req.reason.clone(), req.route),
        Need::Human => ask(
            format!("{}; a person must approve it", req.reason),
            req.route,
        ),
        Need::Ordinary => match mode.approval {
            ApprovalPolicy::Untrusted => ask(
                format!(
                    "{}; in mode {} a person approves every line that is not known to only read",
                    req.reason, mode.mode
                ),
                req.route,
            ),
            ApprovalPolicy::Ask | ApprovalPolicy::Auto | ApprovalPolicy::None => (
                Verdict::Allow,
                Code::Allowed,
                format!(
                    "{}; no rule flags it, and mode {} runs such lines in the {} sandbox without \
                     asking",
                    req.reason, mode.mode, mode.sandbox
                ),
                Route::Mode,
            ),
        },
        Need::Ai => match mode.approval {
            ApprovalPolicy::None => (
                Verdict::Allow,
                Code::Allowed,
                format!(
                    "mode {} runs what no rule denies without review ({}) in the {} sandbox",
                    mode.mode, req.reason, mode.sandbox
                ),
                Route::Mode,
            ),
            ApprovalPolicy::Ask | ApprovalPolicy::Untrusted => ask(
                format!(
                    "{}; in mode {} a person must approve it",
                    req.reason, mode.mode
                ),
                req.route,
            ),
            ApprovalPolicy::Auto if !input.reviewer_configured => (
                Verdict::Deny,
                Code::ReviewerUnconfigured,
                format!(
                    "{}; mode {} needs the reviewer, but the user config has no `[reviewer]` \
                     table, so the line is denied",
                    req.reason, mode.mode
                ),
                req.route,
            ),
            ApprovalPolicy::Auto => (
                Verdict::Review,
                Code::NeedsReview,
                format!(
                    "{}; in mode {} the reviewer must judge it",
                    req.reason, mode.mode
                ),
                req.route,
            ),
        },
    }
}

fn ask(reason: String, route: Route) -> (Verdict, Code, String, Route) {
    (Verdict::Ask, Code::NeedsApproval, reason, route)
}

#[cfg(test)]
mod tests;
