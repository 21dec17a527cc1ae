//! `shellgate panel`: a local web page that shows what auto review is doing in a session, and gives
//! the person who started it the same buttons as `shellgate auto-review`.
//!
//! - [`security`]: the per-run secrets and the checks every request passes (token, Host, Origin,
//!   fetch metadata, CSRF).
//! - [`routes`]: what a request path means (pure).
//! - [`snapshot`]: a session as the project's own loader and fold see it; nothing is computed here.
//! - [`view`]: that snapshot as HTML (pure; every string from the log is escaped here).
//! - [`actions`]: the buttons, which call [`crate::audit::actions::switch_review`] and
//!   [`crate::audit::actions::approve_denial`], the functions behind the CLI.
//! - [`live`]: the server-sent-event stream that tells the page the log changed.
//! - [`server`]: HTTP/1.1 on 127.0.0.1 (hyper), and the dispatch from routes to the above.
//!
//! The panel never runs a command and keeps no session state of its own: every page is the fold of
//! the log as it is when the page is asked for.

pub mod actions;
pub mod live;
pub mod routes;
pub mod security;
pub mod server;
pub mod snapshot;
pub mod view;

use crate::audit::{SessionId, StatePaths};
use crate::sandbox::support::Summary as SandboxSummary;
use security::{Loopback, Secrets};
use std::path::PathBuf;

/// Which sessions the panel shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Only this session (`--session ID`, or the session the environment names, or the latest).
    One(SessionId),
    /// Every session, with a list to choose from (`--all`).
    All,
}

/// Everything one panel run needs; shared read-only by every request.
#[derive(Debug)]
pub struct Panel {
    pub scope: Scope,
    pub paths: StatePaths,
    /// The directory the panel was started in: config is loaded for it, as the CLI does.
    pub cwd: PathBuf,
    pub secrets: Secrets,
    pub loopback: Loopback,
    /// Whether a person at a terminal started the panel (see
    /// [`crate::approval::person_present`]). The page's buttons act with that standing, exactly as
    /// `shellgate auto-review` would for the same caller.
    pub person: bool,
    /// Sandbox support, probed once at start (the kernel does not change while the panel runs).
    pub sandbox: SandboxSummary,
    /// The `--open` redirect page, which holds the token: removed as soon as the browser has come
    /// in with the token (or after [`LAUNCHER_LIFETIME`]), so it is not left readable.
    pub launcher: std::sync::Mutex<Option<PathBuf>>,
}

/// How long the `--open` redirect page may stay when no browser comes.
pub const LAUNCHER_LIFETIME: std::time::Duration = std::time::Duration::from_secs(60);

impl Panel {
    /// The path prefix of every URL: `/TOKEN`.
    pub fn base(&self) -> String {
        format!("/{}", self.secrets.url_token.as_str())
    }

    /// Removes the `--open` redirect page, if it is still there.
    pub fn forget_launcher(&self) {
        let taken = match self.launcher.lock() {
            Ok(mut slot) => slot.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(file) = taken {
            let _ = std::fs::remove_file(file);
        }
    }

    /// The URL printed for the person.
    pub fn url(&self) -> String {
        format!("{}{}/", self.loopback.origin(), self.base())
    }
}
