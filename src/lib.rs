//! shellgate: stands between a shell command line and the kernel.
//!
//! The pure decision core (no I/O) is the `shellgate-core` crate (crates/core): [`intake`] →
//! [`parse`] → [`policy`] and [`mode`], re-exported here under the same names, configured by
//! [`config`]. Around it sit the adapters: the sandbox (kernel), the audit log (files), the
//! reviewer (HTTP), the person's prompt (tty) and the shell hooks. [`error`] is the one error type
//! (the core's) and the one place a refusal is printed.

// Tests may read the environment as they like; the library reads it once (src/env.rs, clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod approval;
pub mod audit;
pub mod broker;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod env;
pub mod error;
pub mod eval;
pub mod gate;
pub mod git_config;
pub mod mode_change;
pub mod panel;
pub mod paths;
pub mod registries;
pub mod review;
pub mod session;
pub mod shell;
pub mod spec;
pub mod ssh_config;
pub mod term;
pub mod wrap;

pub use shellgate_core::{intake, mode, own_env, parse, policy, redact};
pub use shellgate_sandbox as sandbox;
