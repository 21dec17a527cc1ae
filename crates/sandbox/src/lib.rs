//! The OS sandbox: a private, read-only mount tree with only the writable roots writable,
//! credential stores hidden, a PID namespace that ends with the line, Landlock and seccomp —
//! entered in one `clone` and one `execve`.
//!
//! A caller (possibly multi-threaded: tokio, an HTTP client, the `wrap` broker) builds a [`Spec`]
//! — the binary's `spec::line_spec`, the one resolver of what a line may write, fills in the
//! workspace, the user's own files to protect ([`Spec::home`]) and the stores to hide — and hands
//! it with a [`Command`] to [`spawn`]. Everything is prepared in the caller, then one clone starts the
//! sandbox's init, which builds the mount tree with async-signal-safe calls, forks the program's
//! process and reaps it; the program's process enters Landlock and seccomp and execs (see
//! [`launch`] and `child`). [`Running::wait`] returns the program's status, whether processes it
//! left were killed, and what the guard found.
//!
//! Layout: [`policy`] (what to enforce), [`workspace`] (what a line may write), [`credentials`]
//! (what is hidden), `protected` (the plan of the mount tree), [`abi`] (what the kernel offers),
//! `requirements` (fail-closed decision), [`landlock`], [`seccomp`], [`launch`] (the parent's
//! half), `child` and `raw` (the sandbox's own processes), [`guard`] (names that could not be
//! pre-protected), `git` (just enough of git's layout), [`support`] (detection for `doctor`),
//! [`harness_file`] (the one file an agent harness writes, handed to a line as a descriptor).
//!
//! A crate of its own (`shellgate-sandbox`), on the decision core alone: it cannot reach the gate,
//! the config loader, the audit log or anything else of the binary's, and it resolves nothing of
//! the user's (homes, workspaces, credential stores: the binary's `spec` module does, and a spec
//! without a home is refused). Also here: [`settings`] (the configuration's `[sandbox]`, merged by
//! the loader) and [`socket_path`] (a socket's path that fits `sun_path`).

// Tests may read the environment as they like; the crate reads none (clippy.toml): the binary
// reads it once (its src/env.rs) and hands the sandbox its part (`process_env`).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

// The core's vocabulary under the names the sandbox has always used (`crate::error` …); the
// sandbox's own `policy` is what to enforce, the core's (`shellgate_core::policy`) what was
// decided.
pub(crate) use shellgate_core::{error, mode, own_env, parse};

pub mod abi;
mod child;
pub mod credentials;
pub mod direct;
mod git;
pub mod gitconfig;
pub mod guard;
pub mod harness_file;
pub mod landlock;
pub mod launch;
mod listening;
pub mod mounts;
pub mod notify;
mod opener;
pub mod policy;
mod process_env;
mod protected;
pub mod proxy;
mod raw;
mod requirements;
pub mod seccomp;
pub mod settings;
pub mod socket_path;
pub mod support;
pub mod surface;
pub(crate) mod sys;
mod unix_connect;
pub mod workspace;

pub use abi::{ABI_MAX_ENV, DetectedAbi, Feature};
pub use child::MAX_STAGES;
pub use git::{GitLayout, inspect as git_layout, is_git_dir};
pub use guard::Violation;
pub use launch::{
    Command, Finished, Running, SANDBOXED_ENV, Stage, record_startup_signals, resolve_program,
    spawn,
};
pub use mounts::NO_NAMESPACES_ENV;
pub use notify::{CREATING_A_DIRECTORY, Denial};
pub use policy::{Policy, Protection, Spec};
pub use process_env::{ProcessEnv, set_process_env};
pub use protected::{HomeEnv, Layer, Plan};
pub use support::{Support, detect};
pub use sys::{geteuid, passwd_home, per_namespace_pid_max, pidfd_open};
pub use workspace::{Anchors, Workspace};

use crate::error::Result;

/// What the sandbox would make for `spec` (layers, read-only paths, guarded names, hidden
/// stores), without creating anything: for `doctor`.
pub fn preview(spec: &Spec) -> Result<Plan> {
    protected::preview(spec, spec.home_or_refuse()?)
}

/// The refusal for a line one of its limits ended: a process killed for writing past the file-size
/// limit (`SIGXFSZ`, or a shell's status for a command it killed, 153). Processes and memory past their limits fail in the line itself (`fork`
/// answers `EAGAIN`, an allocation `ENOMEM`), which its own error shows.
pub fn limit_refusal(
    status: &std::process::ExitStatus,
    limits: &policy::Limits,
) -> Option<crate::error::Error> {
    use std::os::unix::process::ExitStatusExt;
    // Killed by SIGXFSZ itself, or a shell reporting a command of it killed so (128 + 25).
    let killed =
        status.signal() == Some(libc::SIGXFSZ) || status.code() == Some(128 + libc::SIGXFSZ);
    killed.then(|| {
        crate::error::Error::new(
            crate::error::Code::SandboxLimit,
            format!(
                "the line wrote a file past its size limit ({} bytes, sandbox.limits.file_size) \
                 and was ended",
                limits.file_size
            ),
        )
    })
}
