//! Modes and the one resolver that turns a mode (or profile) into what happens to a line.

use serde::{Deserialize, Serialize};

/// Which OS sandbox a line runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
