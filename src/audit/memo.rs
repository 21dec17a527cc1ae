//! A memo of a session's fold, so that each shell line does not replay the whole log.
//!
//! Replaying costs about 1.3 µs per event (JSON decoding), and every line of a session replays it:
//! a session of 2,000 lines would spend ~10 ms per line doing so. The memo beside the log
//! (`<session>.fold`) holds the state after the log's first `offset` bytes, the parameters it was
//! folded with, and the SHA-256 of the last line it folded. Loading it checks that this line is
//! still where the memo says and unchanged, and that the first event after it links to it (its
//! `prev`), then applies only the events after it. Anything that does not match — another schema,
//! other parameters, a shorter or rewritten log, a corrupt memo — falls back to the full replay,
//! which is the truth; the memo is only ever a shortcut to the same state.

use super::fold::{FoldParams, SessionState, fold};
use super::log::{parse_log, read_bytes, sha256_hex};
use crate::error::{Code, Error, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Bump when `SessionState` or the memo's meaning changes.
const MEMO_VERSION: u32 = 1;

/// A memo is (re)written once this many events were replayed beyond it: small sessions do not
/// need one, and writing it on every line would cost more than it saves.
const REWRITE_AFTER_EVENTS: usize = 64;

#[derive(Serialize, Deserialize)]
struct Memo {
    version: u32,
    params: FoldParams,
    /// Bytes of the log folded: the end of the last complete line.
    offset: u64,
    /// Where that last line starts.
    last_line_start: u64,
    /// SHA-256 of that last line (without its newline), as the next event's `prev` names it.
    last_hash: String,
    state: SessionState,
}

/// The memo file of a log.
fn memo_path(log: &Path) -> PathBuf {
    log.with_extension("fold")
}

/// The session state of the log at `path`: from the memo and the events after it when the memo
/// fits, else by replaying the whole log (and leaving a memo for next time).
pub fn fold_log(path: &Path, params: &FoldParams) -> Result<SessionState> {
    if let Some(state) = from_memo(path, params) {
        return Ok(state);
    }
    let bytes = read_bytes(path)?;
    let contents = parse_log(&bytes);
    let state = fold(&contents.events, params);
    if contents.events.len() >= REWRITE_AFTER_EVENTS {
        write_memo(path, params, &bytes, 0, &state);
    }
    Ok(state)
}

/// The state from the memo plus the log's tail, if the memo still describes this log.
fn from_memo(path: &Path, params: &FoldParams) -> Option<SessionState> {
    let memo: Memo = serde_json::from_slice(&std::fs::read(memo_path(path)).ok()?).ok()?;
    if memo.version != MEMO_VERSION || &memo.params != params {
        return None;
    }
    let file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    if len < memo.offset || memo.last_line_start >= memo.offset {
        return None;
    }
    let mut bytes = vec![0u8; usize::try_from(len - memo.last_line_start).ok()?];
    file.read_exact_at(&mut bytes, memo.last_line_start).ok()?;
    let last_len = usize::try_from(memo.offset - memo.last_line_start).ok()?;
    let (last_line, tail) = bytes.split_at(last_len);
    // The folded prefix still ends with the same line, and the next event links to it.
    if last_line.last() != Some(&b'\n') || sha256_hex(&last_line[..last_len - 1]) != memo.last_hash
    {
        return None;
    }
    let contents = parse_log(tail);
    if contents
        .events
        .first()
        .is_some_and(|e| e.prev != memo.last_hash)
    {
        return None;
    }
    let mut state = memo.state;
    for event in &contents.events {
        state.apply(event);
    }
    if contents.events.len() >= REWRITE_AFTER_EVENTS {
        // From the bytes just folded, not a fresh read: events appended since would otherwise be
        // counted as folded without ever having been applied.
        write_memo(path, params, &bytes, memo.last_line_start, &state);
    }
    Some(state)
}

/// Write the memo for `bytes` (the log from byte `base` on, exactly as folded into `state`). Only
/// when they end with a complete line: an unterminated last event was folded but would be read
/// again after the memo's offset. Best effort: a memo that cannot be written only costs the next
/// line a full replay.
fn write_memo(path: &Path, params: &FoldParams, bytes: &[u8], base: u64, state: &SessionState) {
    if bytes.last() != Some(&b'\n') {
        return;
    }
    let Some((last_line_start, offset)) = last_complete_line(bytes) else {
        return;
    };
    let memo = Memo {
        version: MEMO_VERSION,
        params: params.clone(),
        offset: base + offset as u64,
        last_line_start: base + last_line_start as u64,
        last_hash: sha256_hex(&bytes[last_line_start..offset - 1]),
        state: state.clone(),
    };
    let _ = save(&memo_path(path), &memo);
}

/// Start and end (after the newline) of the last newline-terminated line.
fn last_complete_line(bytes: &[u8]) -> Option<(usize, usize)> {
    let end = bytes.iter().rposition(|b| *b == b'\n')? + 1;
    let start = bytes[..end - 1]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    (end - 1 > start).then_some((start, end))
}

fn save(path: &Path, memo: &Memo) -> Result<()> {
    let failed = |e: std::io::Error| {
        Error::new(
            Code::AuditUnavailable,
            format!("cannot write {}: {e}", path.display()),
        )
    };
    let tmp = path.with_extension(format!("fold.{}", std::process::id()));
    let text = serde_json::to_vec(memo).map_err(|e| Error::internal(e.to_string()))?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(failed)?;
    file.write_all(&text).map_err(failed)?;
    std::fs::rename(&tmp, path).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::event::{Actor, LineAsked};
    use crate::audit::event::{EventBody, ReviewSwitch};
    use crate::audit::log::read_log;
    use crate::audit::{RequestId, Session, SessionId, StatePaths};
    use crate::error::Code;
    use crate::mode::SandboxPolicy;

    fn asked(i: usize) -> EventBody {
        EventBody::ApprovalAsked(LineAsked {
            line: format!("echo {i}"),
            program: "echo".into(),
            cwd: "/w".into(),
            mode: "ask".into(),
            sandbox: SandboxPolicy::WorkspaceWrite,
            grant: None,
            code: Code::Allowed,
            reason: "r".into(),
        })
    }

    fn append_many(session: &Session, n: usize) {
        for i in 0..n {
            session
                .append(Some(&RequestId::new_random()), asked(i))
                .unwrap();
        }
    }

    #[test]
    fn memo_gives_the_same_state_as_a_full_replay() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = StatePaths::at(tmp.path());
        let session = Session::open(&paths, SessionId::parse("m").unwrap()).unwrap();
        let params = FoldParams::default();
        append_many(&session, 100);
        let first = fold_log(session.path(), &params).unwrap();
        assert!(
            memo_path(session.path()).exists(),
            "a memo is left after a long replay"
        );
        append_many(&session, 10);
        session
            .append(
                None,
                EventBody::AutoReviewState(ReviewSwitch {
                    enabled: false,
                    by: Actor::Person,
                }),
            )
            .unwrap();
        let from_memo = fold_log(session.path(), &params).unwrap();
        let full = fold(&read_log(session.path()).unwrap().events, &params);
        assert_eq!(from_memo, full);
        assert_ne!(first, full);
        assert!(!from_memo.review.enabled);
    }

    #[test]
    fn a_memo_covers_only_the_bytes_that_were_folded() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = StatePaths::at(tmp.path());
        let session = Session::open(&paths, SessionId::parse("m").unwrap()).unwrap();
        let params = FoldParams::default();
        append_many(&session, 100);
        let folded = std::fs::read(session.path()).unwrap();
        let state = fold(&crate::audit::log::parse_log(&folded).events, &params);
        // Another writer appends between the fold and the memo.
        append_many(&session, 10);
        write_memo(session.path(), &params, &folded, 0, &state);
        let from_memo = fold_log(session.path(), &params).unwrap();
        let full = fold(&read_log(session.path()).unwrap().events, &params);
        assert_eq!(from_memo, full);
        // An unterminated last line is never covered.
        let cut = &folded[..folded.len() - 1];
        std::fs::remove_file(memo_path(session.path())).unwrap();
        write_memo(session.path(), &params, cut, 0, &state);
        assert!(!memo_path(session.path()).exists());
    }

    #[test]
    fn a_rewritten_log_is_replayed_in_full() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = StatePaths::at(tmp.path());
        let session = Session::open(&paths, SessionId::parse("r").unwrap()).unwrap();
        let params = FoldParams::default();
        append_many(&session, 80);
        fold_log(session.path(), &params).unwrap();
        // Rewrite the log: fewer events than the memo folded.
        let text = std::fs::read_to_string(session.path()).unwrap();
        let kept: String = text.lines().take(5).map(|l| format!("{l}\n")).collect();
        std::fs::write(session.path(), kept).unwrap();
        let state = fold_log(session.path(), &params).unwrap();
        assert_eq!(state.events, 5);
        // Edit the memo's last line in place (same length): the hash no longer matches.
        append_many(&session, 80);
        fold_log(session.path(), &params).unwrap();
        let text = std::fs::read_to_string(session.path())
            .unwrap()
            .replace("echo 79", "echo 7X");
        std::fs::write(session.path(), &text).unwrap();
        let state = fold_log(session.path(), &params).unwrap();
        let full = fold(&read_log(session.path()).unwrap().events, &params);
        assert_eq!(state, full);
        // Other parameters: full replay.
        let other = FoldParams {
            review_default: false,
            ..FoldParams::default()
        };
        assert_eq!(
            fold_log(session.path(), &other).unwrap(),
            fold(&read_log(session.path()).unwrap().events, &other)
        );
    }

    #[test]
    fn a_corrupt_memo_is_ignored() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = StatePaths::at(tmp.path());
        let session = Session::open(&paths, SessionId::parse("c").unwrap()).unwrap();
        append_many(&session, 70);
        std::fs::write(memo_path(session.path()), b"{not json").unwrap();
        let params = FoldParams::default();
        assert_eq!(
            fold_log(session.path(), &params).unwrap(),
            fold(&read_log(session.path()).unwrap().events, &params)
        );
    }
}
