//! The sandbox's settings, as the configuration merges them (`[sandbox]` in the user file, the
//! project files' narrowing): what a line's spec is built from besides its grant.

use serde::Serialize;
use shellgate_core::mode::SandboxPolicy;
use std::path::PathBuf;

/// Sandbox settings after merging.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SandboxSettings {
    /// Extra writable directories (user file only).
    pub writable: Vec<PathBuf>,
    /// Project roots a person configured: a working directory beneath one has it as its
    /// workspace when it is in no git repository (user file only).
    pub projects: Vec<PathBuf>,
    /// More paths to hide inside the sandbox, besides the built-in credential stores.
    pub hide: Vec<PathBuf>,
    /// Built-in credential stores to leave visible (user file only).
    pub unhide: Vec<PathBuf>,
    /// Credential variables every line gets although they look like credentials (user file
    /// only; see `policy::environment`).
    pub pass_env: Vec<String>,
    /// A project file narrowed the sandbox to this policy.
    pub project_policy: Option<SandboxPolicy>,
    /// A project file turned the network off.
    pub project_network_off: bool,
    /// What one line may take of the machine (`[sandbox.limits]`, user file only; the machine's
    /// defaults otherwise).
    pub limits: crate::policy::Limits,
}
