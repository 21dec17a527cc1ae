//! What the process environment tells the sandbox: the nested-sandbox marker and the two test
//! seams. The crate reads no environment variable itself (its `clippy.toml` disallows it): the
//! binary reads the environment once at start-up and hands this part in ([`set_process_env`]).
//! Every field can only take a protection away, and a sandbox missing a protection refuses the
//! line (`own_env`'s `Trust::Narrowing`); the marker alone never chooses the nested mode, which
//! also needs the kernel's word that no namespace can be made (`launch::namespaces`).

use std::sync::OnceLock;

/// The environment's say in the sandbox, as the binary read it at start-up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessEnv {
    /// `SHELLGATE_SANDBOXED`: this process runs inside shellgate's sandbox.
    pub sandboxed: bool,
    /// `SHELLGATE_SANDBOX_NO_NAMESPACES`: behave as if no mount namespace could be made.
    pub no_namespaces: bool,
    /// `SHELLGATE_LANDLOCK_ABI_MAX`, as written (an unparsable value counts as 0).
    pub abi_max: Option<String>,
}

static PROCESS_ENV: OnceLock<ProcessEnv> = OnceLock::new();

/// Hands in the environment's part, once, before any sandbox is built; a later call is ignored
/// (one process, one environment).
pub fn set_process_env(env: ProcessEnv) {
    let _ = PROCESS_ENV.set(env);
}

/// The environment's part: none of it when the binary handed in nothing (no seam, no marker).
pub(crate) fn process_env() -> &'static ProcessEnv {
    PROCESS_ENV.get_or_init(ProcessEnv::default)
}
