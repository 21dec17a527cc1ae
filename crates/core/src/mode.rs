//! Modes and the one resolver that turns a mode (or profile) into what happens to a line.
//!
//! [`resolve`] is the only place where a mode name becomes an approval policy, a reviewer switch, a
//! sandbox policy and a network switch. `check`, `run` and `status` all call it. Anything it cannot
//! resolve — an unknown name, a missing profile, Full access nobody confirmed in this session —
//! resolves to the default (`ask` + workspace-write, no network), never to something looser, and
//! says why in [`Resolved::note`].
//!
//! The built-in modes follow Codex's approval modes: `ask` and `auto` run ordinary lines in the
//! workspace-write sandbox without asking anyone and ask (a person, or the reviewer) only for what
//! the sandbox does not contain or the rules flag; `untrusted` asks a person for every line that
//! is not known to only read; `read-only` does the same with a read-only sandbox; `full` runs
//! without a sandbox once a person confirmed it. `never` rules deny and `human` rules ask a person
//! in every mode.
//!
//! Profiles (`[profiles.<id>]`, `[custom]`) and the rules for their ids live here too: the config's
//! schema uses them, and hands the resolver what it read as a [`Modes`] view.
//!
//! An invalid config resolves to the strictest built-in policy ([`strictest`]): `untrusted` (a
//! person approves every line that is not known to only read; no reviewer, no network), or
//! `read-only` when that was selected. Only Full access a person confirmed at the terminal in
//! this session stays: it is the person's own way out, and an agent can never reach it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Which OS sandbox a line runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxPolicy {
    /// Read and execute everywhere, write nowhere but devices and a private temp dir.
    ReadOnly,
    /// Read and execute everywhere, write only beneath the workspace and temp dirs.
    WorkspaceWrite,
    /// No sandbox at all. Only reachable after a person confirms it in the current session.
    FullAccess,
}

impl SandboxPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxPolicy::ReadOnly => "read-only",
            SandboxPolicy::WorkspaceWrite => "workspace-write",
            SandboxPolicy::FullAccess => "full-access",
        }
    }
}

impl fmt::Display for SandboxPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who approves a line that the rules do not allow by themselves (the Codex approval modes).
///
/// Every policy but `Untrusted` runs *ordinary* lines — not known to only read, but flagged by no
/// rule — in the mode's sandbox without asking anyone: the sandbox contains them. They differ in
/// who approves what the rules flag (`ai`: the network, destruction inside the workspace,
/// credentials, opaque lines). `human` rules always go to a person and `never` rules always deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    /// A person approves every line that is not known to only read (Codex's `untrusted`).
    Untrusted,
    /// A person approves what the rules flag; ordinary lines run in the sandbox (`on-request`).
    Ask,
    /// The reviewer model judges what the rules flag `ai`; ordinary lines run in the sandbox.
    Auto,
    /// Nobody: what `never` and `human` rules do not stop runs (in the sandbox, unless Full access).
    None,
}

impl ApprovalPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::Untrusted => "untrusted",
            ApprovalPolicy::Ask => "ask",
            ApprovalPolicy::Auto => "auto",
            ApprovalPolicy::None => "none",
        }
    }

    /// Who approves what, in words (for `status`, `mode` and the panel).
    pub fn describe(self) -> &'static str {
        match self {
            ApprovalPolicy::Untrusted => {
                "a person approves every line that is not known to only read"
            }
            ApprovalPolicy::Ask => {
                "ordinary lines run unasked; a person approves what the rules flag"
            }
            ApprovalPolicy::Auto => {
                "ordinary lines run unasked; the reviewer judges what the rules flag (a person \
                 what they send to one)"
            }
            ApprovalPolicy::None => "nobody is asked but for what the rules send to a person",
        }
    }
}

/// The built-in mode ids. Profile ids from the config may not collide with these.
pub const BUILTIN_MODE_IDS: [&str; 6] = ["ask", "auto", "untrusted", "full", "read-only", "custom"];

/// Profiles beyond this number are a config error (ids are untrusted input).
pub const MAX_PROFILES: usize = 32;
/// Longest accepted profile id, in bytes.
pub const MAX_PROFILE_ID_LEN: usize = 32;

/// A named permission profile (`[profiles.<id>]`) or the `[custom]` mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    pub approval: ApprovalPolicy,
    pub sandbox: SandboxPolicy,
    #[serde(default)]
    pub network: bool,
}

/// Profile ids are untrusted: bounded, plain (`a-z`, `0-9`, `-`, `_`, starting with a letter or
/// digit), and distinct from the built-in mode ids.
pub fn check_profile_id(id: &str) -> Result<(), String> {
    let plain = id
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if id.is_empty() || id.len() > MAX_PROFILE_ID_LEN {
        return Err(format!(
            "a profile id must be 1-{MAX_PROFILE_ID_LEN} bytes long"
        ));
    }
    if !plain {
        return Err(format!(
            "profile id `{}` may only contain a-z, 0-9, `-` and `_`, starting with a letter or digit",
            crate::intake::visible(id)
        ));
    }
    if BUILTIN_MODE_IDS.contains(&id) {
        return Err(format!(
            "profile id `{id}` collides with the built-in mode `{id}`"
        ));
    }
    Ok(())
}

/// The mode a person or a config names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ModeId {
    Ask,
    Auto,
    Untrusted,
    Full,
    ReadOnly,
    Custom,
    Profile(String),
}

impl ModeId {
    /// Parse a mode id: a built-in id or `profile:<id>`. Anything else is `None`.
    pub fn parse(text: &str) -> Option<ModeId> {
        Some(match text {
            "ask" => ModeId::Ask,
            "auto" => ModeId::Auto,
            "untrusted" => ModeId::Untrusted,
            "full" => ModeId::Full,
            "read-only" => ModeId::ReadOnly,
            "custom" => ModeId::Custom,
            _ => ModeId::Profile(text.strip_prefix("profile:")?.to_owned()),
        })
    }

    pub fn id(&self) -> String {
        match self {
            ModeId::Ask => "ask".to_owned(),
            ModeId::Auto => "auto".to_owned(),
            ModeId::Untrusted => "untrusted".to_owned(),
            ModeId::Full => "full".to_owned(),
            ModeId::ReadOnly => "read-only".to_owned(),
            ModeId::Custom => "custom".to_owned(),
            ModeId::Profile(id) => format!("profile:{id}"),
        }
    }
}

impl fmt::Display for ModeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id())
    }
}

/// Is `id` a mode id that can be saved or selected: a built-in id, or `profile:<id>` with a valid
/// profile id? (Whether the profile exists is the resolver's business.)
pub fn is_valid_mode_id(id: &str) -> bool {
    match ModeId::parse(id) {
        Some(ModeId::Profile(p)) => check_profile_id(&p).is_ok(),
        Some(_) => true,
        None => false,
    }
}

/// What a mode means for a line: the one typed tuple every caller uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolved {
    /// The mode that is in effect (after any fallback).
    pub mode: String,
    pub approval: ApprovalPolicy,
    /// Lines routed to `ai` go to the reviewer model.
    pub reviewer: bool,
    pub sandbox: SandboxPolicy,
    pub network: bool,
    /// Why the effective mode differs from the one requested, if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Resolved {
    /// The safe default: a person approves, workspace-write sandbox, no network.
    pub fn safe_default(note: Option<String>) -> Resolved {
        Resolved {
            mode: "ask".to_owned(),
            approval: ApprovalPolicy::Ask,
            reviewer: false,
            sandbox: SandboxPolicy::WorkspaceWrite,
            network: false,
            note,
        }
    }
}

/// What the resolver reads from the configuration: the default mode, the profiles, `[custom]` and
/// what project files tightened. The config builds it (`Config::modes`); a caller without a config
/// starts from [`Modes::default`], the built-in modes alone.
#[derive(Debug, Clone, Copy)]
pub struct Modes<'a> {
    /// `mode = …` from the user file.
    pub default_mode: Option<&'a str>,
    /// `[profiles.<id>]`, by id.
    pub profiles: &'a BTreeMap<String, Profile>,
    /// `[custom]`.
    pub custom: Option<&'a Profile>,
    /// A project file narrowed the sandbox to this policy.
    pub project_policy: Option<SandboxPolicy>,
    /// A project file turned the network off.
    pub project_network_off: bool,
    /// A config file could not be loaded: what it said is unknown, so nothing of it applies and
    /// the strictest built-in policy does.
    pub config_invalid: bool,
}

impl Default for Modes<'_> {
    fn default() -> Self {
        static NO_PROFILES: BTreeMap<String, Profile> = BTreeMap::new();
        Modes {
            default_mode: None,
            profiles: &NO_PROFILES,
            custom: None,
            project_policy: None,
            project_network_off: false,
            config_invalid: false,
        }
    }
}

/// What the resolver needs to know about the session, besides the config.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionFacts {
    /// A person confirmed Full access on the terminal in this session.
    pub full_access_confirmed: bool,
    /// A person turned auto review off in this session: `ai` routes go to a person instead.
    pub review_disabled: bool,
}

/// Resolve a requested mode (`None`: the configured default, else `ask`).
pub fn resolve(requested: Option<&str>, modes: Modes<'_>, session: SessionFacts) -> Resolved {
    let resolved = resolve_config(requested, modes, session);
    if modes.config_invalid {
        strictest(resolved)
    } else {
        resolved
    }
}

/// What an invalid config leaves of `resolved`: the strictest built-in policy. A person approves
/// every line that is not known to only read (`untrusted`), in the workspace-write sandbox — or
/// the read-only one when that was selected —, with no network and no reviewer. Not `read-only`
/// for everyone: a line a person approved would then fail to write even in the workspace, and a
/// yes must work; an agent gets the same either way (every line that writes needs a person).
/// Full access a person confirmed in this session stays, their way out.
pub fn strictest(resolved: Resolved) -> Resolved {
    if resolved.sandbox == SandboxPolicy::FullAccess {
        return resolved;
    }
    let sandbox = resolved.sandbox.min(SandboxPolicy::WorkspaceWrite);
    let mode = match sandbox {
        SandboxPolicy::ReadOnly => ModeId::ReadOnly,
        _ => ModeId::Untrusted,
    };
    Resolved {
        mode: mode.id(),
        approval: ApprovalPolicy::Untrusted,
        reviewer: false,
        sandbox,
        network: false,
        note: Some(format!(
            "the config is invalid, so the strictest built-in policy applies (mode {mode}, \
             built-in rules only) until it is fixed"
        )),
    }
}

/// [`resolve`] for a config that loaded.
fn resolve_config(requested: Option<&str>, modes: Modes<'_>, session: SessionFacts) -> Resolved {
    let Some(text) = requested.or(modes.default_mode) else {
        return tighten(Resolved::safe_default(None), modes);
    };
    let resolved = match ModeId::parse(text) {
        None => Resolved::safe_default(Some(format!(
            "unknown mode `{}`; using the safe default `ask`",
            crate::intake::visible(text)
        ))),
        Some(id) => resolve_id(&id, modes, session),
    };
    tighten(resolved, modes)
}

fn resolve_id(id: &ModeId, modes: Modes<'_>, session: SessionFacts) -> Resolved {
    let (approval, sandbox, network) = match id {
        ModeId::Ask => (ApprovalPolicy::Ask, SandboxPolicy::WorkspaceWrite, false),
        ModeId::Auto => (ApprovalPolicy::Auto, SandboxPolicy::WorkspaceWrite, false),
        ModeId::Untrusted => (
            ApprovalPolicy::Untrusted,
            SandboxPolicy::WorkspaceWrite,
            false,
        ),
        // Read only: a person approves whatever is not known to only read; it then runs in the
        // read-only sandbox.
        ModeId::ReadOnly => (ApprovalPolicy::Untrusted, SandboxPolicy::ReadOnly, false),
        ModeId::Full => (ApprovalPolicy::None, SandboxPolicy::FullAccess, true),
        ModeId::Custom => match modes.custom {
            Some(p) => (p.approval, p.sandbox, p.network),
            None => {
                return Resolved::safe_default(Some(
                    "mode `custom` needs a `[custom]` table in the user config; using `ask`"
                        .to_owned(),
                ));
            }
        },
        ModeId::Profile(name) => match modes.profiles.get(name) {
            Some(p) => (p.approval, p.sandbox, p.network),
            None => {
                return Resolved::safe_default(Some(format!(
                    "no profile `{}` in the config; using `ask`",
                    crate::intake::visible(name)
                )));
            }
        },
    };
    if sandbox == SandboxPolicy::FullAccess && !session.full_access_confirmed {
        return Resolved::safe_default(Some(format!(
            "`{id}` means Full access (no sandbox), which a person has not confirmed in this \
             session; using the safe default `ask`"
        )));
    }
    let reviewer = approval == ApprovalPolicy::Auto && !session.review_disabled;
    let approval = if approval == ApprovalPolicy::Auto && session.review_disabled {
        ApprovalPolicy::Ask
    } else {
        approval
    };
    let note = (session.review_disabled && matches!(id, ModeId::Auto))
        .then(|| "auto review is turned off in this session; a person is asked instead".to_owned());
    Resolved {
        mode: id.id(),
        approval,
        reviewer,
        sandbox,
        network,
        note,
    }
}

/// Apply what project files may do: narrow the sandbox and turn the network off.
fn tighten(mut resolved: Resolved, modes: Modes<'_>) -> Resolved {
    if let Some(narrow) = modes.project_policy
        && narrow < resolved.sandbox
    {
        resolved.sandbox = narrow;
    }
    if modes.project_network_off {
        resolved.network = false;
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(full: bool, review_off: bool) -> SessionFacts {
        SessionFacts {
            full_access_confirmed: full,
            review_disabled: review_off,
        }
    }

    fn profiles() -> BTreeMap<String, Profile> {
        let mut profiles = BTreeMap::new();
        profiles.insert(
            "ci".to_owned(),
            Profile {
                name: Some("CI".to_owned()),
                approval: ApprovalPolicy::None,
                sandbox: SandboxPolicy::WorkspaceWrite,
                network: true,
            },
        );
        profiles.insert(
            "yolo".to_owned(),
            Profile {
                name: None,
                approval: ApprovalPolicy::None,
                sandbox: SandboxPolicy::FullAccess,
                network: true,
            },
        );
        profiles
    }

    static CUSTOM: Profile = Profile {
        name: None,
        approval: ApprovalPolicy::Auto,
        sandbox: SandboxPolicy::ReadOnly,
        network: false,
    };

    fn with_profiles(profiles: &BTreeMap<String, Profile>) -> Modes<'_> {
        Modes {
            profiles,
            custom: Some(&CUSTOM),
            ..Modes::default()
        }
    }

    /// The full matrix: every mode × (full confirmed?) × (review off?).
    #[test]
    fn resolver_matrix() {
        use ApprovalPolicy as A;
        use SandboxPolicy as S;
        let profiles = profiles();
        let modes = with_profiles(&profiles);
        /// requested, full confirmed, review off → effective, approval, reviewer, sandbox, network
        type Case = (&'static str, bool, bool, &'static str, A, bool, S, bool);
        #[rustfmt::skip]
        let cases: &[Case] = &[
            // requested   full   off    effective        approval reviewer sandbox  network
            ("ask",        false, false, "ask",           A::Ask,  false, S::WorkspaceWrite, false),
            ("auto",       false, false, "auto",          A::Auto, true,  S::WorkspaceWrite, false),
            ("auto",       false, true,  "auto",          A::Ask,  false, S::WorkspaceWrite, false),
            ("untrusted",  false, false, "untrusted",     A::Untrusted, false, S::WorkspaceWrite, false),
            ("untrusted",  true,  true,  "untrusted",     A::Untrusted, false, S::WorkspaceWrite, false),
            ("read-only",  false, false, "read-only",     A::Untrusted, false, S::ReadOnly,  false),
            ("full",       false, false, "ask",           A::Ask,  false, S::WorkspaceWrite, false),
            ("full",       true,  false, "full",          A::None, false, S::FullAccess,     true),
            ("custom",     false, false, "custom",        A::Auto, true,  S::ReadOnly,       false),
            ("profile:ci", false, false, "profile:ci",    A::None, false, S::WorkspaceWrite, true),
            ("profile:yolo", false, false, "ask",         A::Ask,  false, S::WorkspaceWrite, false),
            ("profile:yolo", true, false, "profile:yolo", A::None, false, S::FullAccess,     true),
            ("profile:nope", true, false, "ask",          A::Ask,  false, S::WorkspaceWrite, false),
            ("FULL",       true,  false, "ask",           A::Ask,  false, S::WorkspaceWrite, false),
            ("",           true,  false, "ask",           A::Ask,  false, S::WorkspaceWrite, false),
            ("full\u{1b}", true,  false, "ask",           A::Ask,  false, S::WorkspaceWrite, false),
        ];
        for &(requested, full, off, mode, approval, reviewer, sandbox, network) in cases {
            let r = resolve(Some(requested), modes, facts(full, off));
            assert_eq!(
                (
                    r.mode.as_str(),
                    r.approval,
                    r.reviewer,
                    r.sandbox,
                    r.network
                ),
                (mode, approval, reviewer, sandbox, network),
                "requested {requested:?} full={full} review_off={off}"
            );
            if mode != requested {
                assert!(r.note.is_some(), "a fallback must say why: {requested:?}");
            }
        }
    }

    #[test]
    fn no_config_means_ask() {
        let r = resolve(None, Modes::default(), SessionFacts::default());
        assert_eq!(r, Resolved::safe_default(None));
    }

    #[test]
    fn custom_without_table_is_ask() {
        let r = resolve(Some("custom"), Modes::default(), facts(true, false));
        assert_eq!(r.mode, "ask");
        assert!(r.note.unwrap().contains("[custom]"));
    }

    #[test]
    fn project_tightening_narrows_but_never_widens() {
        let profiles = profiles();
        let mut modes = Modes {
            project_policy: Some(SandboxPolicy::ReadOnly),
            project_network_off: true,
            ..with_profiles(&profiles)
        };
        let r = resolve(Some("profile:ci"), modes, SessionFacts::default());
        assert_eq!((r.sandbox, r.network), (SandboxPolicy::ReadOnly, false));
        let r = resolve(Some("full"), modes, facts(true, false));
        assert_eq!((r.sandbox, r.network), (SandboxPolicy::ReadOnly, false));
        modes.project_policy = Some(SandboxPolicy::WorkspaceWrite);
        let r = resolve(Some("read-only"), modes, SessionFacts::default());
        assert_eq!(r.sandbox, SandboxPolicy::ReadOnly);
    }

    #[test]
    fn configured_default_mode_is_used() {
        let mut modes = Modes {
            default_mode: Some("auto"),
            ..Modes::default()
        };
        assert_eq!(resolve(None, modes, SessionFacts::default()).mode, "auto");
        modes.default_mode = Some("full");
        assert_eq!(resolve(None, modes, facts(false, false)).mode, "ask");
    }

    /// An invalid config: every mode resolves to the strictest built-in policy, `untrusted`
    /// (`read-only` when that was asked for); only Full access a person confirmed stays.
    #[test]
    fn an_invalid_config_resolves_to_the_strictest_built_in_policy() {
        use ApprovalPolicy as A;
        use SandboxPolicy as S;
        let profiles = profiles();
        let modes = Modes {
            config_invalid: true,
            default_mode: Some("auto"),
            ..with_profiles(&profiles)
        };
        /// requested, full confirmed → effective, approval, sandbox, network
        type Case = (Option<&'static str>, bool, &'static str, A, S, bool);
        #[rustfmt::skip]
        let cases: &[Case] = &[
            // requested      full   effective     approval      sandbox            network
            (None,             false, "untrusted", A::Untrusted, S::WorkspaceWrite, false),
            (Some("ask"),      false, "untrusted", A::Untrusted, S::WorkspaceWrite, false),
            (Some("auto"),     false, "untrusted", A::Untrusted, S::WorkspaceWrite, false),
            (Some("profile:ci"), false, "untrusted", A::Untrusted, S::WorkspaceWrite, false),
            (Some("read-only"), false, "read-only", A::Untrusted, S::ReadOnly,     false),
            (Some("full"),     false, "untrusted", A::Untrusted, S::WorkspaceWrite, false),
            (Some("full"),     true,  "full",      A::None,      S::FullAccess,     true),
        ];
        for &(requested, full, mode, approval, sandbox, network) in cases {
            let r = resolve(requested, modes, facts(full, false));
            assert_eq!(
                (
                    r.mode.as_str(),
                    r.approval,
                    r.reviewer,
                    r.sandbox,
                    r.network
                ),
                (mode, approval, false, sandbox, network),
                "requested {requested:?} full={full}"
            );
            if !full {
                assert!(
                    r.note.unwrap().contains("config is invalid"),
                    "{requested:?}"
                );
            }
        }
    }
}
