//! shellgate's decision core: what a line is and what may happen to it.
//!
//! [`intake`] (the bytes a line may have) → [`parse`] (bash, zsh and PowerShell syntax trees, what
//! each command runs, reads and writes) → [`policy`] (the rules, known-safe programs, grants and
//! the decision) → [`mode`] (profiles and the resolver); [`error`] is the one outcome type and its
//! codes, [`redact`] the secret shapes kept out of logs, [`own_env`] the names of shellgate's own
//! environment variables and what each is trusted to decide.
//!
//! Pure by construction: no `unsafe` (`forbid` below), and no file system, environment,
//! processes, clock, terminal or network — `clippy.toml` beside this crate disallows them and CI
//! runs clippy with `-D warnings`. Everything a decision needs from the machine (the working
//! directory, the repository's remotes, the config) is handed in as data by the binary
//! (`shellgate`), which owns every adapter.

#![forbid(unsafe_code)]
// Tests may run real programs and write scratch files; the library may not (clippy.toml).
#![cfg_attr(
    test,
    allow(
        clippy::disallowed_methods,
        clippy::disallowed_types,
        clippy::disallowed_macros
    )
)]

pub mod error;
pub mod intake;
pub mod mode;
pub mod own_env;
pub mod parse;
pub mod policy;
pub mod redact;
