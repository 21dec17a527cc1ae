//! A session as the panel shows it, read through the project's own modules: the session
//! [`Context`] (config, settings, the fold of the log, desired and effective mode) and the log's
//! event chains. Nothing here interprets events; that is the fold's job.

use super::{Panel, Scope};
use crate::audit::event::Event;
use crate::audit::log::{list_sessions, read_log};
use crate::audit::{RequestId, SessionId};
use crate::error::Result;
use crate::session::Context;

/// One session, loaded.
pub struct Snapshot {
    pub session: SessionId,
    /// The sessions the panel can show, newest first (just this one unless `--all`).
    pub sessions: Vec<SessionId>,
    /// The session's context, loaded exactly as `shellgate status` loads it.
    pub ctx: Context,
}

/// The sessions in scope, newest first. With `--all` that is every session with a log.
pub fn sessions(panel: &Panel) -> Result<Vec<SessionId>> {
    match &panel.scope {
        Scope::One(id) => Ok(vec![id.clone()]),
        Scope::All => Ok(list_sessions(&panel.paths)?
            .into_iter()
            .rev()
            .map(|file| file.id)
            .collect()),
    }
}

/// Whether the panel may show (and act on) `id`. Outside its scope a session does not exist for
/// the panel (404), and a session without a log is never created by it.
pub fn in_scope(panel: &Panel, id: &SessionId) -> Result<bool> {
    Ok(sessions(panel)?.contains(id) && panel.paths.session_log(id).is_file())
}

/// The session the panel opens on: the one it was started for, or the newest.
pub fn default_session(panel: &Panel) -> Result<Option<SessionId>> {
    Ok(sessions(panel)?.into_iter().next())
}

/// Loads session `id` (which must be in scope).
pub fn load(panel: &Panel, id: &SessionId) -> Result<Snapshot> {
    let ctx = Context::load_session(&panel.cwd, id.clone())?;
    Ok(Snapshot {
        session: id.clone(),
        sessions: sessions(panel)?,
        ctx,
    })
}

/// Every event of one line, in order (`approval/asked → … → exec/finished`).
pub fn chain(panel: &Panel, id: &SessionId, request: &RequestId) -> Result<Vec<Event>> {
    let contents = read_log(&panel.paths.session_log(id))?;
    Ok(contents.chain(request).cloned().collect())
}
