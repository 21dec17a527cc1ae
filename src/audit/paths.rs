//! Where shellgate keeps its state, and the ids that name sessions and requests.
//!
//! Everything lives beneath `$XDG_STATE_HOME/shellgate/` (default `~/.local/state/shellgate/`): the
//! session logs in `sessions/<id>.jsonl` and the saved settings in `settings.toml`. Directories are
//! created with mode 0700 and files with 0600: the log holds command lines, which are private even
//! after redaction. Ids come from the environment, so they are validated before they become part of a
//! path: a short safe charset with no `.` or `/` cannot traverse anywhere.

use crate::error::{Code, Error, Result};
use std::collections::hash_map::RandomState;
use std::fmt;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// See [`crate::own_env`], where every one of shellgate's variables is listed with its trust.
pub use crate::own_env::SESSION_ENV;

/// The longest session or request id accepted.
pub const MAX_ID_LEN: usize = 64;

/// The directory layout beneath the state root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatePaths {
    root: PathBuf,
}

impl StatePaths {
    /// The state root from the environment: `$XDG_STATE_HOME/shellgate`, or
    /// `$HOME/.local/state/shellgate`. A relative `XDG_STATE_HOME` is ignored, as the XDG spec says.
    pub fn from_env() -> Result<StatePaths> {
        crate::paths::own()
            .state_dir
            .map(StatePaths::at)
            .ok_or_else(|| {
                Error::new(
                    Code::AuditUnavailable,
                    "no home directory (password database or HOME) and no absolute \
                     XDG_STATE_HOME: there is nowhere to keep the audit log",
                )
            })
    }

    /// A state root at an explicit directory (tests, tools).
    pub fn at(root: impl Into<PathBuf>) -> StatePaths {
        StatePaths { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("sessions")
    }

    /// The log file of one session.
    pub fn session_log(&self, id: &SessionId) -> PathBuf {
        self.sessions_dir().join(format!("{}.jsonl", id.as_str()))
    }

    /// The settings a person saves across sessions.
    pub fn settings_file(&self) -> PathBuf {
        self.root.join("settings.toml")
    }

    /// Creates the sessions directory (and the root) with mode 0700.
    pub fn ensure_sessions_dir(&self) -> Result<PathBuf> {
        ensure_private_dir(&self.root)?;
        let sessions = self.sessions_dir();
        ensure_private_dir(&sessions)?;
        Ok(sessions)
    }
}

/// The name of the directory, in shellgate's state directory, that holds every interactive
/// shell's private directory (`shells/SESSION-PID`).
pub const SHELLS_DIR: &str = "shells";

/// Writes `bytes` to `path` (0600) through a temporary name, so a reader sees all or nothing.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let staged = path.with_extension("staged");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&staged)?;
    file.write_all(bytes)?;
    drop(file);
    std::fs::rename(&staged, path)
}

/// The file every hooked shell of a session reads at its prompt to show that Full access is on:
/// `shells/SESSION.full-access` beside the shells' own directories (`shells/SESSION-PID`), holding
/// the end as Unix seconds, `0` for the rest of the session. Only a marker for people: the session
/// log decides the mode.
pub fn full_access_marker(paths: &crate::audit::StatePaths, session: &str) -> PathBuf {
    paths
        .root()
        .join(SHELLS_DIR)
        .join(format!("{session}.{FULL_ACCESS_MARKER}"))
}

/// The suffix of [`full_access_marker`]; the hooks build the same name from their directory.
pub const FULL_ACCESS_MARKER: &str = "full-access";

/// Creates `dir` (and missing parents) and makes sure it is a directory only its owner can enter.
/// An existing directory with looser permissions is tightened rather than trusted.
pub fn ensure_private_dir(dir: &Path) -> Result<()> {
    let unavailable = |err: io::Error| {
        Error::new(
            Code::AuditUnavailable,
            format!("cannot create the state directory {}: {err}", dir.display()),
        )
    };
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(unavailable)?;
    let meta = fs::symlink_metadata(dir).map_err(unavailable)?;
    if !meta.is_dir() {
        return Err(Error::new(
            Code::AuditUnavailable,
            format!("{} is not a directory", dir.display()),
        ));
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(unavailable)?;
    }
    Ok(())
}

/// Whether `id` is a safe id: 1 to [`MAX_ID_LEN`] ASCII letters, digits, `_` or `-`, not starting
/// with `-` (so it can never be read as an option either).
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && !id.starts_with('-')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn invalid_id(what: &str, raw: &str) -> Error {
    let shown: String = raw.chars().take(MAX_ID_LEN).collect();
    Error::usage(format!(
        "invalid {what} {:?}: use 1 to {MAX_ID_LEN} letters, digits, '_' or '-'",
        shown
    ))
}

/// 64 unpredictable bits. `RandomState` is seeded from the OS's randomness once per process; the
/// time, pid and a counter make consecutive ids within one process distinct.
fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    hasher.write_u128(nanos);
    hasher.write_u32(std::process::id());
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.finish()
}

/// The name of one shell session's log.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct SessionId(String);

impl SessionId {
    pub fn parse(raw: &str) -> Result<SessionId> {
        if is_valid_id(raw) {
            Ok(SessionId(raw.to_string()))
        } else {
            Err(invalid_id("session id", raw))
        }
    }

    /// A new id, sortable by creation time: `20250102T030405Z-1a2b3c4d`.
    pub fn new_random() -> SessionId {
        let stamp: String = humantime::format_rfc3339_seconds(SystemTime::now())
            .to_string()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect();
        SessionId(format!("{stamp}-{:08x}", random_u64() as u32))
    }

    /// The session named by `SHELLGATE_SESSION`, if set. A set but invalid value is an error, not a
    /// silent new session: the hook and the log must agree on which file is written.
    pub fn from_env() -> Result<Option<SessionId>> {
        match &crate::env::get().own.session {
            None => Ok(None),
            Some(raw) if raw.is_empty() => Ok(None),
            Some(raw) => match raw.to_str() {
                Some(raw) => SessionId::parse(raw).map(Some),
                None => Err(Error::usage(format!("{SESSION_ENV} is not valid UTF-8"))),
            },
        }
    }

    /// The session from the environment, or a new one.
    pub fn from_env_or_new() -> Result<SessionId> {
        Ok(SessionId::from_env()?.unwrap_or_else(SessionId::new_random))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for SessionId {
    type Error = Error;
    fn try_from(raw: String) -> Result<SessionId> {
        SessionId::parse(&raw)
    }
}

impl From<SessionId> for String {
    fn from(id: SessionId) -> String {
        id.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The id of one command line's way through shellgate; it links `approval/asked`, the verdict, the
/// decision and the `exec/*` events of that line.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RequestId(String);

impl RequestId {
    pub fn parse(raw: &str) -> Result<RequestId> {
        if is_valid_id(raw) {
            Ok(RequestId(raw.to_string()))
        } else {
            Err(invalid_id("request id", raw))
        }
    }

    pub fn new_random() -> RequestId {
        RequestId(format!("r{:016x}", random_u64()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for RequestId {
    type Error = Error;
    fn try_from(raw: String) -> Result<RequestId> {
        RequestId::parse(&raw)
    }
}

impl From<RequestId> for String {
    fn from(id: RequestId) -> String {
        id.0
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_cannot_traverse() {
        for bad in [
            "",
            "..",
            "../x",
            "a/b",
            "a.b",
            "-rf",
            "a b",
            "é",
            "a\0b",
            &"x".repeat(65),
        ] {
            assert!(SessionId::parse(bad).is_err(), "{bad:?} accepted");
            assert!(RequestId::parse(bad).is_err(), "{bad:?} accepted");
        }
        for good in ["a", "shell-1", "20250102T030405Z-1a2b3c4d", &"x".repeat(64)] {
            assert!(SessionId::parse(good).is_ok(), "{good:?} refused");
        }
    }

    #[test]
    fn new_ids_are_valid_and_distinct() {
        let a = SessionId::new_random();
        let b = SessionId::new_random();
        assert!(is_valid_id(a.as_str()), "{a}");
        assert_ne!(a, b);
        let r = RequestId::new_random();
        assert!(is_valid_id(r.as_str()));
        assert_ne!(r, RequestId::new_random());
    }

    #[test]
    fn session_log_stays_in_the_sessions_dir() {
        let paths = StatePaths::at("/state/shellgate");
        let id = SessionId::parse("abc").unwrap();
        assert_eq!(
            paths.session_log(&id),
            Path::new("/state/shellgate/sessions/abc.jsonl")
        );
    }

    #[test]
    fn private_dirs_are_0700() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        ensure_private_dir(&dir).unwrap();
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private_dir(&dir).unwrap();
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
    }
}
