//! The process environment, read once at start-up into one value ([`get`]).
//!
//! `main` captures it before any command runs ([`init`]); nothing else in the binary reads the
//! environment (the root `clippy.toml` disallows `std::env::var*`, `vars*` and `temp_dir`, and the
//! sandbox crate's own does the same there). A value read once cannot change under a line: every
//! step of one decision sees the same `HOME`, the same session and the same markers, and a test of
//! one variable is a test of the one place it is read.
//!
//! What the value holds, by who sets it (`own_env`'s [`Trust`](crate::own_env::Trust)):
//! - shellgate's own variables, typed ([`Own`]): the person's choices (`SHELLGATE_SESSION`,
//!   `SHELLGATE_JSON`), the markers shellgate sets for the processes it starts (the broker, wrap's
//!   directory, the agent's own process, the real shells), and the test seams, which are handed
//!   to the sandbox crate by [`init`] and can only take a protection away;
//! - the caller's own variables (`HOME`, `XDG_*`, `ZDOTDIR`, `PATH`, `TMPDIR`, `TERM`…), read by
//!   name with [`Env::var`]. They find things the caller could name anyway (its config, its state,
//!   the program a line names) and never narrow what is protected: the homes the sandbox hides
//!   are the union of `$HOME` and the password database's (`spec::home_env`);
//! - all of it, in order, for a line's own environment ([`Env::vars`]), from which the policy
//!   withholds credentials before a line sees it.

use crate::own_env::{
    ABI_MAX_ENV, AGENT_ENV, BROKER_ENV, JSON_ENV, NO_NAMESPACES_ENV, SANDBOXED_ENV, SESSION_ENV,
    WRAP_DIR_ENV, real_shell_env,
};
use crate::parse::ShellKind;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The environment as start-up saw it.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// Every variable, in the order the process received them.
    all: Vec<(OsString, OsString)>,
    /// shellgate's own variables, typed.
    pub own: Own,
}

/// shellgate's own variables (`own_env::VARS`), each typed by what it may decide.
#[derive(Debug, Clone, Default)]
pub struct Own {
    /// `SHELLGATE_SESSION` (a person's): which session logs and decides a line. Parsed where a
    /// session is opened (`audit::SessionId::from_env`): a set value that is not an id is an
    /// error there.
    pub session: Option<OsString>,
    /// `SHELLGATE_JSON=1` (a person's): refusals as JSON.
    pub json: bool,
    /// `SHELLGATE_BROKER` (a marker): the `wrap` broker that decides this process's lines.
    pub broker: Option<PathBuf>,
    /// `SHELLGATE_WRAP_DIR` (a marker): `wrap`'s private directory.
    pub wrap_dir: Option<PathBuf>,
    /// `SHELLGATE_WRAP_AGENT` (a marker): `PID:START` of the wrapped agent's own process.
    pub agent: Option<OsString>,
    /// `SHELLGATE_REAL_*` (markers): the real shells `wrap` hid behind the entry point.
    pub real_shells: Vec<(ShellKind, PathBuf)>,
    /// The sandbox crate's part, handed to it by [`init`]: `SHELLGATE_SANDBOXED` (a marker) and
    /// the two narrowing test seams.
    pub sandbox: crate::sandbox::ProcessEnv,
}

impl Env {
    /// An environment of these variables (the process's own at start-up, or a test's).
    pub fn from_vars(all: Vec<(OsString, OsString)>) -> Env {
        let find = |name: &str| all.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let own = Own {
            session: find(SESSION_ENV),
            json: find(JSON_ENV).is_some_and(|v| v == "1"),
            broker: find(BROKER_ENV).map(PathBuf::from),
            wrap_dir: find(WRAP_DIR_ENV).map(PathBuf::from),
            agent: find(AGENT_ENV),
            real_shells: ShellKind::ALL
                .into_iter()
                .filter_map(|kind| find(real_shell_env(kind)).map(|p| (kind, PathBuf::from(p))))
                .collect(),
            sandbox: crate::sandbox::ProcessEnv {
                sandboxed: find(SANDBOXED_ENV).is_some(),
                no_namespaces: find(NO_NAMESPACES_ENV).is_some(),
                abi_max: find(ABI_MAX_ENV).map(|v| v.to_string_lossy().into_owned()),
            },
        };
        Env { all, own }
    }

    /// The caller's variable `name`, as start-up saw it.
    pub fn var(&self, name: &str) -> Option<&OsStr> {
        self.all
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_os_str())
    }

    /// The caller's variable `name` when it is set and not empty.
    pub fn non_empty(&self, name: &str) -> Option<&OsStr> {
        self.var(name).filter(|v| !v.is_empty())
    }

    /// The caller's variable `name` as a path, when it is an absolute one.
    pub fn absolute(&self, name: &str) -> Option<PathBuf> {
        self.var(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    }

    /// `$HOME` as set (not checked: callers that protect a home also ask the password database).
    pub fn home(&self) -> Option<PathBuf> {
        self.var("HOME").map(PathBuf::from)
    }

    /// Every variable, in order: what a line of this process's caller inherits.
    pub fn vars(&self) -> &[(OsString, OsString)] {
        &self.all
    }

    /// The real shell of `kind` that `wrap` named, if it did.
    pub fn real_shell(&self, kind: ShellKind) -> Option<&PathBuf> {
        self.own
            .real_shells
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, p)| p)
    }
}

static ENV: OnceLock<Env> = OnceLock::new();

/// Reads the process environment, once, and tells the sandbox crate its part. Called by `main`
/// before anything else runs; a second call changes nothing.
pub fn init() -> &'static Env {
    let env = ENV.get_or_init(capture);
    crate::sandbox::set_process_env(env.own.sandbox.clone());
    forget_resolver_variables();
    env
}

/// The variables through which a caller steers the C library's resolver: `HOSTALIASES` (a file
/// renaming single-label names), `LOCALDOMAIN` (the search list), `RES_OPTIONS` (`ndots`, which
/// sends a dotted name through the search list first), `RESOLV_HOST_CONF` (another host.conf).
const RESOLVER_VARIABLES: [&str; 4] = [
    "HOSTALIASES",
    "LOCALDOMAIN",
    "RES_OPTIONS",
    "RESOLV_HOST_CONF",
];

/// Takes the resolver's variables out of this process's own environment, after it was read
/// (lines still inherit them: [`Env::vars`] is the copy). shellgate resolves the names a grant
/// holds (the proxy's `CONNECT` hosts, ssh's direct hosts, the reviewer's endpoint) in this
/// process, and glibc's resolver reads these variables from the process environment: a caller
/// whose environment a line can shape (an agent's shell; a line's spelled-out `export` applied
/// back to a hooked shell) could otherwise make a granted name resolve to an address of its
/// choosing (`HOSTALIASES` naming `registry` as `evil.example`; `LOCALDOMAIN=evil.example
/// RES_OPTIONS=ndots:5` trying `registry.npmjs.org.evil.example` first). Without them a name
/// means what the machine's `/etc/hosts`, `/etc/resolv.conf` and `/etc/nsswitch.conf` say.
/// (musl's resolver reads none of them; the glibc build is the one this closes.)
#[expect(
    clippy::disallowed_methods,
    reason = "the one place the binary changes its own environment"
)]
fn forget_resolver_variables() {
    for name in RESOLVER_VARIABLES {
        // SAFETY: `init` runs first in `main`, before any other thread exists (nothing reads or
        // writes the environment concurrently); in unit tests it is not called.
        unsafe { std::env::remove_var(name) };
    }
}

/// The environment as start-up read it. (In unit tests, where `main` does not run, the first
/// call reads it.)
pub fn get() -> &'static Env {
    ENV.get_or_init(capture)
}

#[expect(
    clippy::disallowed_methods,
    reason = "the one place the binary reads the process environment"
)]
fn capture() -> Env {
    Env::from_vars(std::env::vars_os().collect())
}

/// An environment of these variables (tests).
#[cfg(test)]
pub fn of(vars: &[(&str, &str)]) -> Env {
    Env::from_vars(
        vars.iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::of as env;
    use super::*;

    #[test]
    fn shellgates_variables_are_typed_once() {
        let e = env(&[
            (JSON_ENV, "1"),
            (BROKER_ENV, "/run/b.sock"),
            ("SHELLGATE_REAL_ZSH", "/w/zsh"),
            (NO_NAMESPACES_ENV, ""),
            ("HOME", "/home/p"),
        ]);
        assert!(e.own.json);
        assert_eq!(e.own.broker, Some(PathBuf::from("/run/b.sock")));
        assert_eq!(e.real_shell(ShellKind::Zsh), Some(&PathBuf::from("/w/zsh")));
        assert_eq!(e.real_shell(ShellKind::Bash), None);
        assert!(e.own.sandbox.no_namespaces);
        assert_eq!(e.home(), Some(PathBuf::from("/home/p")));
        assert!(!env(&[(JSON_ENV, "yes")]).own.json);
    }

    #[test]
    fn a_relative_path_is_not_taken_for_a_directory() {
        let e = env(&[("XDG_CONFIG_HOME", "rel/dir"), ("ZDOTDIR", "/z")]);
        assert_eq!(e.absolute("XDG_CONFIG_HOME"), None);
        assert_eq!(e.absolute("ZDOTDIR"), Some(PathBuf::from("/z")));
        assert_eq!(e.non_empty("UNSET"), None);
    }
}
