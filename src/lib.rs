//! shellgate: stands between a shell command line and the kernel.
//!
//! The pure decision core (no I/O) is [`intake`] → [`parse`] → [`policy`], configured by [`config`] and
//! [`mode`]. Around it sit the adapters: the sandbox (kernel), the audit log (files), the reviewer
//! (HTTP), the person's prompt (tty) and the shell hooks. [`error`] is the one error type.

pub mod approval;
pub mod audit;
pub mod broker;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod error;
pub mod eval;
pub mod gate;
pub mod git_config;
pub mod intake;
pub mod mode;
pub mod mode_change;
pub mod panel;
pub mod parse;
pub mod paths;
pub mod policy;
pub mod redact;
pub mod review;
pub mod sandbox;
pub mod session;
pub mod shell;
pub mod term;
pub mod wrap;
