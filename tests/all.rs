//! shellgate's integration tests, as one test binary: the ~225 crates the tests link are linked
//! once, not once per file. Each topic is a module in `suite/` and its tests are named
//! `<topic>::<name>`, so `cargo test --test all hooks::` runs one topic. The shared fixtures are
//! declared here, once, and shared by every topic (`crate::support`, ...).
//!
//! Every topic now runs in the same process: a test that changes something process-wide (a signal
//! handler, the environment, the working directory) changes it for the other topics' tests too.

// The tests read and set the environment of the programs they start as they like; the rule that
// the binary reads it once (clippy.toml) is the binary's.
#![allow(clippy::disallowed_methods)]
// A test or benchmark may panic on what it set up itself; the lints are for the product code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod panel_support;
mod review_support;
mod sandbox_support;
mod support;

#[path = "suite/architecture.rs"]
mod architecture;
#[path = "suite/audit.rs"]
mod audit;
#[path = "suite/check.rs"]
mod check;
#[path = "suite/corpus.rs"]
mod corpus;
#[path = "suite/decision_corpus.rs"]
mod decision_corpus;
#[path = "suite/eval.rs"]
mod eval;
#[path = "suite/grants.rs"]
mod grants;
#[path = "suite/hooks.rs"]
mod hooks;
#[path = "suite/panel.rs"]
mod panel;
#[path = "suite/review.rs"]
mod review;
#[path = "suite/run.rs"]
mod run;
#[path = "suite/sandbox.rs"]
mod sandbox;
#[path = "suite/secrets.rs"]
mod secrets;
#[path = "suite/shell_args.rs"]
mod shell_args;
#[path = "suite/wrap.rs"]
mod wrap;
