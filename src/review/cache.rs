//! The verdict cache: the same normalised line, in the same cwd, mode and policy, in the same
//! session, within `cache_ttl_s`, reuses the verdict instead of asking the model again.
//!
//! **Why a file per entry rather than replaying the log.** Every shell line is a new process, so
//! the cache must live on disk. The session log already records each verdict, but its
//! `autoReview/verdict` events carry neither the cwd, mode and policy a verdict was given under nor
//! a key, and finding one means replaying the session. Here a lookup is one `open` + `read` of a
//! file named by the key's hash — constant cost however long the session — which is what keeps the
//! cached path within a millisecond. The log stays the record: a cache hit is appended to it as a
//! verdict with `cached: true`, which the fold counts for the breaker but not against the budget.
//!
//! Entries live in `$XDG_STATE_HOME/shellgate/review-cache/<sha256>.json` (0700 directory, 0600
//! files), written to a temporary file and renamed, so a reader sees a whole entry or none. The
//! key is a SHA-256 over the session id, the *redacted* normalised line (what the reviewer saw; no
//! secret is hashed into a file name), the cwd, the mode, the sandbox, the network switch, the
//! parsed commands and the policy fingerprint (prompt version, provider, URL, model, the user's
//! policy text). Entries are re-validated on read like a fresh answer, and expired entries are
//! swept whenever a new one is written.

use super::prompt::PROMPT_VERSION;
use super::verdict::{Verdict, parse_verdict};
use crate::audit::event::{Reviewer, Timestamp};
use crate::audit::paths::ensure_private_dir;
use crate::config::ReviewerConfig;
use crate::redact::redact;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::fs::{self, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The largest cache file read.
const MAX_ENTRY_BYTES: u64 = 16 * 1024;
/// Entries dated further in the future than this are ignored (clock changes).
const MAX_CLOCK_SKEW_MS: u64 = 60_000;

/// What a cache key is made of.
pub struct KeyParts<'a> {
    pub session: &'a str,
    pub line: &'a str,
    pub cwd: &'a str,
    pub mode: &'a str,
    pub sandbox: &'a str,
    pub network: bool,
    /// The parsed commands as JSON (the shell's view of the line).
    pub commands: &'a str,
}

/// A cache key: hex SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey(String);

impl CacheKey {
    pub fn new(parts: &KeyParts, config: &ReviewerConfig) -> CacheKey {
        let mut hasher = Sha256::new();
        let normalized = normalize(parts.line);
        let redacted = redact(&normalized);
        for field in [
            "shellgate-review-cache-v1",
            PROMPT_VERSION,
            parts.session,
            &redacted,
            parts.cwd,
            parts.mode,
            parts.sandbox,
            if parts.network {
                "network"
            } else {
                "no-network"
            },
            parts.commands,
            &policy_fingerprint(config),
        ] {
            // Length-prefixed, so no two different tuples hash the same bytes.
            hasher.update((field.len() as u64).to_le_bytes());
            hasher.update(field.as_bytes());
        }
        CacheKey(hex(&hasher.finalize()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What decides the reviewer's policy besides the line: a change to any of it is a new policy.
fn policy_fingerprint(config: &ReviewerConfig) -> String {
    format!(
        "{:?}\0{}\0{}\0{}",
        config.provider,
        config.base_url,
        config.model,
        config.policy_text.as_deref().unwrap_or("")
    )
}

/// The line with leading and trailing whitespace removed; runs of blanks are collapsed only when
/// no quote, escape, newline or here-document can make a blank significant.
pub fn normalize(line: &str) -> String {
    let trimmed = line.trim();
    let significant = trimmed
        .chars()
        .any(|c| matches!(c, '\'' | '"' | '\\' | '`' | '\n' | '\r'))
        || trimmed.contains("<<");
    if significant {
        return trimmed.to_owned();
    }
    trimmed
        .split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A verdict found in the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedVerdict {
    pub verdict: Verdict,
    pub reviewer: Reviewer,
    /// When the model gave it.
    pub time: Timestamp,
}

/// The cache directory and the TTL in force.
#[derive(Debug, Clone)]
pub struct VerdictCache {
    dir: PathBuf,
    ttl_ms: u64,
}

impl VerdictCache {
    /// The cache beneath a state root (`…/shellgate/review-cache`).
    pub fn new(dir: PathBuf, ttl_s: u64) -> VerdictCache {
        VerdictCache {
            dir,
            ttl_ms: ttl_s.saturating_mul(1000),
        }
    }

    fn path(&self, key: &CacheKey) -> PathBuf {
        self.dir.join(format!("{}.json", key.as_str()))
    }

    /// The cached verdict for `key` at `now`, if one is valid. Any problem reading it is a miss.
    pub fn get(&self, key: &CacheKey, now: Timestamp) -> Option<CachedVerdict> {
        if self.ttl_ms == 0 {
            return None;
        }
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(self.path(key))
            .ok()?;
        let mut bytes = Vec::new();
        file.take(MAX_ENTRY_BYTES).read_to_end(&mut bytes).ok()?;
        let entry: Value = serde_json::from_slice(&bytes).ok()?;
        if entry["v"] != 1 || entry["key"] != key.as_str() {
            return None;
        }
        let time = entry["timeMs"].as_u64()?;
        let fresh = now.unix_ms() < time.saturating_add(self.ttl_ms)
            && time <= now.unix_ms().saturating_add(MAX_CLOCK_SKEW_MS);
        if !fresh {
            return None;
        }
        let verdict = parse_verdict(entry["verdict"].as_object()?).ok()?;
        Some(CachedVerdict {
            verdict,
            reviewer: Reviewer {
                provider: entry["provider"].as_str()?.to_owned(),
                model: entry["model"].as_str()?.to_owned(),
            },
            time: Timestamp::from_unix_ms(time),
        })
    }

    /// Stores a verdict. Best effort: a cache that cannot be written only costs a later review.
    pub fn put(&self, key: &CacheKey, cached: &CachedVerdict) -> std::io::Result<()> {
        if self.ttl_ms == 0 {
            return Ok(());
        }
        ensure_private_dir(&self.dir).map_err(|err| std::io::Error::other(err.reason))?;
        self.sweep(cached.time);
        let entry = json!({
            "v": 1,
            "key": key.as_str(),
            "timeMs": cached.time.unix_ms(),
            "provider": cached.reviewer.provider,
            "model": cached.reviewer.model,
            "verdict": cached.verdict,
        });
        let temporary = self
            .dir
            .join(format!(".{}.{}.tmp", key.as_str(), std::process::id()));
        let written = write_new(&temporary, entry.to_string().as_bytes())
            .and_then(|()| fs::rename(&temporary, self.path(key)));
        if written.is_err() {
            let _ = fs::remove_file(&temporary);
        }
        written
    }

    /// Removes entries older than the TTL (by modification time) and stale temporaries.
    fn sweep(&self, now: Timestamp) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        let horizon = now.to_system_time() - std::time::Duration::from_millis(self.ttl_ms);
        for entry in entries.flatten() {
            let old = entry
                .metadata()
                .and_then(|meta| meta.modified())
                .is_ok_and(|modified| modified < horizon);
            if old {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RiskLevel;
    use crate::review::verdict::VerdictDecision;

    fn config(policy: &str) -> ReviewerConfig {
        toml::from_str(&format!(
            "provider = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n\
             policy_text = {policy:?}\n"
        ))
        .unwrap()
    }

    fn parts<'a>(line: &'a str, cwd: &'a str, mode: &'a str) -> KeyParts<'a> {
        KeyParts {
            session: "s1",
            line,
            cwd,
            mode,
            sandbox: "workspace-write",
            network: false,
            commands: "[]",
        }
    }

    fn entry(time: u64) -> CachedVerdict {
        CachedVerdict {
            verdict: Verdict {
                decision: VerdictDecision::Deny,
                risk_level: RiskLevel::High,
                reason: "no".into(),
                grant: None,
            },
            reviewer: Reviewer {
                provider: "openai".into(),
                model: "m".into(),
            },
            time: Timestamp::from_unix_ms(time),
        }
    }

    #[test]
    fn normalization_is_safe() {
        assert_eq!(normalize("  rm   -rf\tbuild  "), "rm -rf build");
        assert_eq!(normalize("echo 'a   b'"), "echo 'a   b'");
        assert_eq!(normalize("cat <<EOF\n a  b\nEOF"), "cat <<EOF\n a  b\nEOF");
        assert_eq!(normalize("echo a\\  b"), "echo a\\  b");
    }

    #[test]
    fn keys_separate_what_must_differ() {
        let c = config("p");
        let base = CacheKey::new(&parts("rm -rf build", "/w", "auto"), &c);
        assert_eq!(
            base,
            CacheKey::new(&parts(" rm  -rf build ", "/w", "auto"), &c)
        );
        assert_ne!(
            base,
            CacheKey::new(&parts("rm -rf build", "/x", "auto"), &c)
        );
        assert_ne!(
            base,
            CacheKey::new(&parts("rm -rf build", "/w", "custom"), &c)
        );
        assert_ne!(
            base,
            CacheKey::new(&parts("rm -rf build", "/w", "auto"), &config("q"))
        );
        let mut other_session = parts("rm -rf build", "/w", "auto");
        other_session.session = "s2";
        assert_ne!(base, CacheKey::new(&other_session, &c));
        // Lines that differ only in a secret are the same line to the reviewer.
        assert_eq!(
            CacheKey::new(&parts("curl -u bob:one https://x", "/w", "auto"), &c),
            CacheKey::new(&parts("curl -u bob:two https://x", "/w", "auto"), &c)
        );
    }

    #[test]
    fn entries_expire_and_are_validated() {
        let dir = tempfile::tempdir().unwrap();
        let cache = VerdictCache::new(dir.path().join("review-cache"), 10);
        let key = CacheKey::new(&parts("x", "/w", "auto"), &config("p"));
        let t0 = 1_700_000_000_000;
        assert!(cache.get(&key, Timestamp::from_unix_ms(t0)).is_none());
        cache.put(&key, &entry(t0)).unwrap();
        let hit = cache
            .get(&key, Timestamp::from_unix_ms(t0 + 9_999))
            .unwrap();
        assert_eq!(hit, entry(t0));
        assert!(
            cache
                .get(&key, Timestamp::from_unix_ms(t0 + 10_000))
                .is_none()
        );
        assert!(
            cache
                .get(&key, Timestamp::from_unix_ms(t0 - 120_000))
                .is_none()
        );
        // A shorter TTL configured later applies to old entries too.
        let shorter = VerdictCache::new(dir.path().join("review-cache"), 5);
        assert!(
            shorter
                .get(&key, Timestamp::from_unix_ms(t0 + 6_000))
                .is_none()
        );
        // A tampered entry is a miss, not a verdict.
        let path = cache.path(&key);
        let text = fs::read_to_string(&path)
            .unwrap()
            .replace("\"deny\"", "\"yes\"");
        fs::write(&path, text).unwrap();
        assert!(cache.get(&key, Timestamp::from_unix_ms(t0 + 1)).is_none());
        let disabled = VerdictCache::new(dir.path().join("review-cache"), 0);
        assert!(
            disabled
                .get(&key, Timestamp::from_unix_ms(t0 + 1))
                .is_none()
        );
    }
}
