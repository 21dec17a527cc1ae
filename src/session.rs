//! The context a line is decided in: the config, the session (its audit log and the state folded
//! from it), the saved settings, and the mode they resolve to.
//!
//! One loader for `check`, `run`, the hooks, `status`, `mode` and the panel, so they cannot disagree
//! about which mode is in effect. Desired mode, in order: `--mode`, the mode selected in this session
//! (`mode/changed`), the saved settings, the config's `mode`, `ask`. The effective mode is what
//! [`crate::mode::resolve`] makes of it, given what happened in this session (Full access confirmed,
//! review turned off).

use crate::audit::EventBody;
use crate::audit::event::{Actor, ModeChange};
use crate::audit::{self, FoldParams, SessionId, SessionState, StatePaths, settings};
use crate::config::Config;
use crate::error::{Code, Error, Result};
use crate::mode::{Resolved, SandboxPolicy, SessionFacts, resolve};
use std::path::{Path, PathBuf};

/// The working directory a line is judged in: `arg` (a `--cwd`, made absolute) or the process's
/// own (`/` when it has none that can be named).
pub fn working_dir(arg: Option<&Path>) -> PathBuf {
    let current = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    match arg {
        Some(p) if p.is_absolute() => p.to_owned(),
        Some(p) => current.join(p),
        None => current,
    }
}

/// Whether the caller needs a session log (and so creates one when the environment names none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionUse {
    /// Read the session named by `SHELLGATE_SESSION`, if any; never create one (`check`).
    ReadIfNamed,
    /// Open (and create) the session named by `SHELLGATE_SESSION`, or a new one (`run`, hooks).
    Open,
}

/// Everything a decision depends on, loaded once.
pub struct Context {
    pub cwd: PathBuf,
    pub config: Config,
    pub paths: Option<StatePaths>,
    /// The session log, when one is open.
    pub log: Option<audit::Session>,
    pub session_id: Option<SessionId>,
    pub settings: settings::LoadedSettings,
    pub state: SessionState,
    /// The mode asked for, before resolution.
    pub desired: String,
    pub resolved: Resolved,
}

impl Context {
    /// Load the context for a line in `cwd`. An invalid config is no error here: the context holds
    /// the built-in config marked invalid, which resolves to the strictest built-in policy (see
    /// [`crate::config::load_or_strictest`]). The error is the failure that denies every line:
    /// `AUDIT_UNAVAILABLE`, when a session log is needed but cannot be opened.
    pub fn load(cwd: &Path, mode_flag: Option<&str>, use_: SessionUse) -> Result<Context> {
        Context::load_with(cwd, mode_flag, use_, None)
    }

    /// The context of the session `id`, read without opening its log for writing (the panel, which
    /// shows sessions other than the one its environment names). Same loader, so the panel and
    /// `status` cannot disagree about a session's mode or state.
    pub fn load_session(cwd: &Path, id: SessionId) -> Result<Context> {
        Context::load_with(cwd, None, SessionUse::ReadIfNamed, Some(id))
    }

    /// The context of `wrap`'s own session `id`, opened for writing: its lines belong to it
    /// whatever the environment of the process names.
    pub fn open_session(cwd: &Path, mode_flag: Option<&str>, id: SessionId) -> Result<Context> {
        Context::load_with(cwd, mode_flag, SessionUse::Open, Some(id))
    }

    fn load_with(
        cwd: &Path,
        mode_flag: Option<&str>,
        use_: SessionUse,
        named: Option<SessionId>,
    ) -> Result<Context> {
        let config = crate::config::load_or_strictest(cwd);
        let paths = match StatePaths::from_env() {
            Ok(p) => Some(p),
            Err(e) if use_ == SessionUse::Open => return Err(e),
            Err(_) => None,
        };
        let is_full = |id: &str| is_full_access(&config, id);
        let loaded = match &paths {
            Some(p) => settings::load(&p.settings_file(), &is_full),
            None => settings::LoadedSettings {
                settings: settings::Settings::default(),
                notes: Vec::new(),
            },
        };
        let params = fold_params(&config, &loaded.settings);
        let (session_id, log, mut state) = open_session(paths.as_ref(), use_, named, &params)?;
        end_expired_mode(&config, log.as_ref(), &mut state)?;
        let saved = paths
            .as_ref()
            .filter(|p| p.settings_file().exists())
            .map(|_| loaded.settings.mode.clone());
        let desired = mode_flag
            .map(str::to_owned)
            .or_else(|| state.mode.as_ref().map(|m| m.id.clone()))
            .or(saved)
            .or_else(|| config.default_mode.clone())
            .unwrap_or_else(|| settings::SAFE_MODE.to_owned());
        let resolved = resolve(Some(&desired), config.modes(), session_facts(&state));
        Ok(Context {
            cwd: cwd.to_owned(),
            config,
            paths,
            log,
            session_id,
            settings: loaded,
            state,
            desired,
            resolved,
        })
    }

    /// The session log, or the error that says why there is none.
    pub fn log(&self) -> Result<&audit::Session> {
        self.log.as_ref().ok_or_else(|| {
            Error::new(
                Code::AuditUnavailable,
                "no session log is open (set SHELLGATE_SESSION or run through a hook)",
            )
        })
    }
}

fn open_session(
    paths: Option<&StatePaths>,
    use_: SessionUse,
    named: Option<SessionId>,
    params: &FoldParams,
) -> Result<(Option<SessionId>, Option<audit::Session>, SessionState)> {
    let empty = || SessionState::new(params.clone());
    let Some(paths) = paths else {
        return Ok((None, None, empty()));
    };
    let id = match (named, use_) {
        (Some(id), _) => Some(id),
        (None, SessionUse::Open) => Some(SessionId::from_env_or_new()?),
        (None, SessionUse::ReadIfNamed) => SessionId::from_env().ok().flatten(),
    };
    let Some(id) = id else {
        return Ok((None, None, empty()));
    };
    match use_ {
        SessionUse::Open => {
            let log = audit::Session::open(paths, id.clone())?;
            let state = audit::memo::fold_log(log.path(), params)?;
            Ok((Some(id), Some(log), state))
        }
        SessionUse::ReadIfNamed => {
            let file = paths.session_log(&id);
            // An unreadable log fails closed (AUDIT_UNAVAILABLE); it is never taken for an empty
            // session with the breaker closed and no budget used.
            let state = audit::memo::fold_log(&file, params)?;
            Ok((Some(id), None, state))
        }
    }
}

/// A time-boxed Full access whose time is up ends here, for every shell of the session and
/// whoever looks: the session's mode is the one before it again (never Full access: that would
/// need a new confirmation), and with the log open the end is recorded (`by: expiry`).
fn end_expired_mode(
    config: &Config,
    log: Option<&audit::Session>,
    state: &mut SessionState,
) -> Result<()> {
    let now = crate::audit::event::Timestamp::now();
    let Some(mode) = state.mode.as_ref().filter(|m| m.expired(now)).cloned() else {
        return Ok(());
    };
    let back = after_expiry(config, &mode);
    let sandbox = resolve(Some(&back), config.modes(), SessionFacts::default()).sandbox;
    if let Some(log) = log {
        let event = log.append(
            None,
            EventBody::ModeChanged(ModeChange {
                from: Some(mode.id.clone()),
                to: back.clone(),
                sandbox,
                by: Actor::Expiry,
                confirmed: false,
                expires: None,
            }),
        )?;
        state.apply(&event);
    } else {
        state.mode = Some(crate::audit::fold::ModeStatus {
            id: back,
            sandbox,
            by: Actor::Expiry,
            confirmed: false,
            seq: mode.seq,
            from: Some(mode.id),
            expires: None,
        });
    }
    Ok(())
}

/// The mode a time-boxed mode returns to: the one before it, never Full access (that would need a
/// new confirmation), else the safe default.
pub fn after_expiry(config: &Config, mode: &crate::audit::fold::ModeStatus) -> String {
    mode.from
        .clone()
        .filter(|from| !is_full_access(config, from))
        .unwrap_or_else(|| settings::SAFE_MODE.to_owned())
}

/// What the fold needs from the config and settings: review's default, budgets, breaker.
pub fn fold_params(config: &Config, settings: &settings::Settings) -> FoldParams {
    let review_default = settings.auto_review.unwrap_or(true);
    match &config.reviewer {
        Some(reviewer) => crate::review::fold_params(reviewer, review_default),
        None => FoldParams {
            review_default,
            ..FoldParams::default()
        },
    }
}

/// What happened in this session that the resolver must know.
pub fn session_facts(state: &SessionState) -> SessionFacts {
    SessionFacts {
        full_access_confirmed: state
            .mode
            .as_ref()
            .is_some_and(|m| m.confirmed && m.sandbox == SandboxPolicy::FullAccess),
        review_disabled: !state.review.enabled,
    }
}

/// Does this mode id mean Full access (no sandbox) under this config?
pub fn is_full_access(config: &Config, id: &str) -> bool {
    let facts = SessionFacts {
        full_access_confirmed: true,
        review_disabled: false,
    };
    resolve(Some(id), config.modes(), facts).sandbox == SandboxPolicy::FullAccess
}
