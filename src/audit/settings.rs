//! The settings a person saves across sessions: the desired mode and whether auto review starts on.
//!
//! Stored as TOML in `$XDG_STATE_HOME/shellgate/settings.toml`. Saving writes a temporary file in
//! the same directory, fsyncs it, renames it over the old file and fsyncs the directory, so a crash
//! or a `kill -9` at any moment leaves either the old or the new file, never a mix. Concurrent saves
//! are serialized by a lock file, and [`update`] reads and writes under that lock so two saves do
//! not lose each other's change.
//!
//! Loading never fails and never loosens: a missing, unreadable or malformed file, or a value of the
//! wrong type, gives the safe default for that value with a note saying so. A saved Full access is
//! not restored: it comes back as [`SAFE_MODE`] until a person confirms Full access again.

use super::lock::{LOCK_DEADLINE, LockFile, LockKind};
use super::paths::ensure_private_dir;
use crate::error::{Code, Error, Result};
use crate::mode::is_valid_mode_id;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The mode a session starts in when nothing (valid) was saved.
pub const SAFE_MODE: &str = "ask";

/// The built-in Full access mode id.
pub const FULL_ACCESS_MODE: &str = "full";

/// Saved settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The desired mode id (a built-in mode or a `[profiles.<id>]`).
    pub mode: String,
    /// Whether auto review starts on; `None` leaves it to the mode's default.
    pub auto_review: Option<bool>,
    /// Keys this version does not know, kept so that saving does not drop a newer version's data.
    pub other: toml::Table,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            mode: SAFE_MODE.to_string(),
            auto_review: None,
            other: toml::Table::new(),
        }
    }
}

/// Settings as loaded, with what was replaced by a safe default and why.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSettings {
    pub settings: Settings,
    /// One sentence per value that was not taken as saved (for `status` and the panel).
    pub notes: Vec<String>,
}

/// Loads the settings at `path`. `is_full_access` tells whether a mode id resolves to no sandbox
/// (built-in `full`, or a profile that does); such a mode is never restored.
pub fn load(path: &Path, is_full_access: &dyn Fn(&str) -> bool) -> LoadedSettings {
    let mut notes = Vec::new();
    let table = match read_table(path) {
        Ok(table) => table,
        Err(note) => {
            notes.push(note);
            toml::Table::new()
        }
    };
    let settings = from_table(table, is_full_access, &mut notes);
    LoadedSettings { settings, notes }
}

fn read_table(path: &Path) -> std::result::Result<toml::Table, String> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(toml::Table::new()),
        Err(err) => {
            return Err(format!(
                "cannot read {} ({err}); using the safe defaults",
                path.display()
            ));
        }
    };
    text.parse::<toml::Table>().map_err(|err| {
        format!(
            "{} is not valid TOML ({}); using the safe defaults",
            path.display(),
            err.message()
        )
    })
}

fn from_table(
    mut table: toml::Table,
    is_full_access: &dyn Fn(&str) -> bool,
    notes: &mut Vec<String>,
) -> Settings {
    let mode = match table.remove("mode") {
        None => SAFE_MODE.to_string(),
        Some(toml::Value::String(id)) if !is_valid_mode_id(&id) => {
            notes.push(format!(
                "the saved mode {:?} is not a valid mode id; starting in {SAFE_MODE:?}",
                crate::intake::visible_line(&id)
            ));
            SAFE_MODE.to_string()
        }
        Some(toml::Value::String(id)) if id == FULL_ACCESS_MODE || is_full_access(&id) => {
            notes.push(format!(
                "the saved mode {id:?} is Full access, which is never restored: starting in \
                 {SAFE_MODE:?}; select it again with `shellgate mode {id}` and confirm it"
            ));
            SAFE_MODE.to_string()
        }
        Some(toml::Value::String(id)) => id,
        Some(other) => {
            notes.push(format!(
                "the saved mode is a {} instead of a string; starting in {SAFE_MODE:?}",
                other.type_str()
            ));
            SAFE_MODE.to_string()
        }
    };
    let auto_review = match table.remove("auto_review") {
        None => None,
        Some(toml::Value::Boolean(enabled)) => Some(enabled),
        Some(other) => {
            notes.push(format!(
                "the saved auto_review is a {} instead of true/false; using the mode's default",
                other.type_str()
            ));
            None
        }
    };
    Settings {
        mode,
        auto_review,
        other: table,
    }
}

/// The file's text; an invalid mode id is refused here, so nothing can save one.
fn to_toml(settings: &Settings) -> Result<String> {
    if !is_valid_mode_id(&settings.mode) {
        return Err(Error::usage(format!(
            "refusing to save the invalid mode id {:?}",
            crate::intake::visible_line(&settings.mode)
        )));
    }
    let mut table = settings.other.clone();
    table.insert("mode".into(), toml::Value::String(settings.mode.clone()));
    if let Some(enabled) = settings.auto_review {
        table.insert("auto_review".into(), toml::Value::Boolean(enabled));
    }
    let body = toml::to_string(&table)
        .map_err(|err| Error::internal(format!("cannot encode the settings: {err}")))?;
    Ok(format!(
        "# Saved by shellgate; edit with `shellgate mode` and `shellgate auto-review`.\n{body}"
    ))
}

/// Saves `settings` atomically, replacing whatever is there.
pub fn save(path: &Path, settings: &Settings) -> Result<()> {
    let contents = to_toml(settings)?;
    let _lock = lock(path)?;
    write_atomically(path, contents.as_bytes())
}

/// Loads, changes and saves the settings under the lock, so concurrent updates are not lost. Full
/// access loaded from the file is already downgraded, as in [`load`].
pub fn update(
    path: &Path,
    is_full_access: &dyn Fn(&str) -> bool,
    change: impl FnOnce(&mut Settings),
) -> Result<Settings> {
    let _lock = lock(path)?;
    let mut settings = load(path, is_full_access).settings;
    change(&mut settings);
    write_atomically(path, to_toml(&settings)?.as_bytes())?;
    Ok(settings)
}

fn settings_error(action: &str, path: &Path, err: &io::Error) -> Error {
    Error::new(
        Code::AuditUnavailable,
        format!("cannot {action} {}: {err}", path.display()),
    )
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "settings".to_string())
}

/// Takes the lock file beside the settings; the lock lasts as long as the returned value.
fn lock(path: &Path) -> Result<LockFile> {
    let dir = parent_dir(path);
    ensure_private_dir(&dir)?;
    let lock_path = dir.join(format!(".{}.lock", file_name(path)));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&lock_path)
        .map_err(|err| settings_error("open the lock file", &lock_path, &err))?;
    LockFile::acquire(file, LockKind::Exclusive, LOCK_DEADLINE)
        .map_err(|err| settings_error("lock", &lock_path, &err))
}

/// Writes `contents` to `path` so that `path` is always either the old or the new file.
fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = parent_dir(path);
    let prefix = format!(".{}.tmp.", file_name(path));
    remove_stale_temporaries(&dir, &prefix);
    let temporary = dir.join(format!(
        "{prefix}{}.{}",
        std::process::id(),
        super::paths::RequestId::new_random()
    ));
    let result = write_and_rename(&temporary, path, contents);
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result?;
    // Make the rename itself durable.
    File::open(&dir)
        .and_then(|dir_file| dir_file.sync_all())
        .map_err(|err| settings_error("sync the directory", &dir, &err))
}

fn write_and_rename(temporary: &Path, path: &Path, contents: &[u8]) -> Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(temporary)
        .map_err(|err| settings_error("create", temporary, &err))?;
    file.write_all(contents)
        .and_then(|()| file.sync_all())
        .map_err(|err| settings_error("write", temporary, &err))?;
    fs::rename(temporary, path).map_err(|err| settings_error("replace", path, &err))
}

/// Temporaries left by a saver that was killed. Only called under the lock, when no other saver
/// can be writing one.
fn remove_stale_temporaries(dir: &Path, prefix: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(prefix) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_profiles(_: &str) -> bool {
        false
    }

    #[test]
    fn round_trip_keeps_unknown_keys() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("settings.toml");
        fs::write(&path, "mode = \"auto\"\nfuture = { x = 1 }\n").unwrap();
        let loaded = load(&path, &no_profiles);
        assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);
        assert_eq!(loaded.settings.mode, "auto");
        let mut settings = loaded.settings;
        settings.auto_review = Some(false);
        save(&path, &settings).unwrap();
        let again = load(&path, &no_profiles).settings;
        assert_eq!(again, settings);
        assert!(fs::read_to_string(&path).unwrap().contains("future"));
    }

    #[test]
    fn full_access_is_never_restored() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("settings.toml");
        for (saved, profile_is_full) in [("full", false), ("profile:yolo", true)] {
            fs::write(&path, format!("mode = {saved:?}\n")).unwrap();
            let is_full = move |id: &str| profile_is_full && id == "profile:yolo";
            let loaded = load(&path, &is_full);
            assert_eq!(loaded.settings.mode, SAFE_MODE, "{saved}");
            assert!(
                loaded.notes[0].contains("never restored"),
                "{:?}",
                loaded.notes
            );
        }
    }

    #[test]
    fn bad_values_fall_back_to_safe_defaults() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("settings.toml");
        for text in [
            "mode = 3\nauto_review = \"yes\"\n",
            "mode = \"../../etc\"\n",
            "mode = \"a\\u001b[31m\"\n",
            "not toml at all [[[",
            "\u{0}\u{1}",
        ] {
            fs::write(&path, text).unwrap();
            let loaded = load(&path, &no_profiles);
            assert_eq!(loaded.settings.mode, SAFE_MODE, "{text:?}");
            assert_eq!(loaded.settings.auto_review, None, "{text:?}");
            assert!(!loaded.notes.is_empty(), "{text:?}");
        }
        let missing = load(&tmp.path().join("absent.toml"), &no_profiles);
        assert_eq!(missing.settings, Settings::default());
        assert!(missing.notes.is_empty());
    }

    #[test]
    fn update_is_read_modify_write() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("settings.toml");
        update(&path, &no_profiles, |s| s.mode = "auto".into()).unwrap();
        update(&path, &no_profiles, |s| s.auto_review = Some(true)).unwrap();
        let loaded = load(&path, &no_profiles).settings;
        assert_eq!(
            (loaded.mode.as_str(), loaded.auto_review),
            ("auto", Some(true))
        );
        let leftovers: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
            .collect();
        assert!(leftovers.is_empty());
    }
}
