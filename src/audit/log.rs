//! The append-only session log: one JSON object per line, each linked to the previous by its hash.
//!
//! **Writing** goes through [`Session::append`], the one seam every module uses. Under an exclusive
//! `flock` on the log file it reads the last event back, computes the new event's sequence number
//! and `prev` hash from it, and writes the new line with a single `write(2)` on an `O_APPEND`
//! descriptor. Many shells and agents appending at once therefore neither interleave bytes nor
//! fork the chain. A failed write is [`Code::AuditUnavailable`]: the caller must not run the line.
//!
//! **Crashes**: a process killed mid-write leaves at most one torn final line (the only one without
//! a trailing newline). Readers skip it and report it; the next append first terminates it with a
//! newline and links its event to the last complete event, so the chain stays verifiable.
//!
//! **Verifying**: every event's `prev` is the SHA-256 of the previous event's exact bytes (the first
//! event's is the hash of a genesis text naming the session), and `seq` counts up from 0. Removing
//! or editing any event but the last breaks the link after it. What a hash chain without an outside
//! anchor cannot show: the removal of events at the very end, or a log rewritten whole.

use super::event::{Event, EventBody, SCHEMA_VERSION, Timestamp};
use super::lock::{FileLock, LOCK_DEADLINE, LockKind};
use super::paths::{RequestId, SessionId, StatePaths};
use crate::error::{Code, Error, Result};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// The furthest back an appender looks for the last event before declaring the log damaged.
const MAX_TAIL_SCAN: u64 = 1 << 20;

/// An open session log.
#[derive(Debug)]
pub struct Session {
    id: SessionId,
    path: PathBuf,
    file: File,
    /// The event this process appended last, with the log's length just after it: while the
    /// length is the same, the next append links to it without reading it back.
    appended: Mutex<Option<(u64, LastEvent)>>,
}

impl Session {
    /// Opens (creating if needed) the log of session `id` beneath `paths`, with mode 0600 in 0700
    /// directories.
    pub fn open(paths: &StatePaths, id: SessionId) -> Result<Session> {
        paths.ensure_sessions_dir()?;
        let path = paths.session_log(&id);
        Session::open_at(&path, id)
    }

    /// Opens (creating if needed) a log at an explicit path. The file must be a regular file; a
    /// symlink planted at `path` is refused rather than followed.
    pub fn open_at(path: &Path, id: SessionId) -> Result<Session> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            // O_NOFOLLOW: never write through a symlink someone put in our place. O_NONBLOCK: a
            // FIFO planted there must not hang the open; it is refused below.
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(|err| unavailable("open", path, &err))?;
        let meta = file
            .metadata()
            .map_err(|err| unavailable("inspect", path, &err))?;
        if !meta.is_file() {
            return Err(Error::new(
                Code::AuditUnavailable,
                format!("the audit log {} is not a regular file", path.display()),
            ));
        }
        if meta.mode() & 0o077 != 0 {
            file.set_permissions(fs::Permissions::from_mode(0o600))
                .map_err(|err| unavailable("restrict permissions of", path, &err))?;
        }
        Ok(Session {
            id,
            path: path.to_path_buf(),
            file,
            appended: Mutex::new(None),
        })
    }

    pub fn id(&self) -> &SessionId {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records one event: redacts it, links it to the chain and appends it as one line.
    ///
    /// Events of one line (`approval/asked`, verdicts, decisions, `exec/*`) must carry that line's
    /// `request` id; session-wide events must not. The returned event is exactly what was written.
    /// Any error means the event was not recorded (`AUDIT_UNAVAILABLE` with the OS's reason for I/O
    /// failures): the caller must not run the line.
    pub fn append(&self, request: Option<&RequestId>, body: EventBody) -> Result<Event> {
        if body.is_per_line() != request.is_some() {
            return Err(Error::internal(format!(
                "{} events {} a request id",
                body.kind(),
                if body.is_per_line() {
                    "need"
                } else {
                    "take no"
                }
            )));
        }
        let mut body = body;
        body.scrub();
        let _lock = FileLock::acquire(&self.file, LockKind::Exclusive, LOCK_DEADLINE)
            .map_err(|err| unavailable("lock", &self.path, &err))?;
        let len = self
            .file
            .metadata()
            .map_err(|err| unavailable("read", &self.path, &err))?
            .len();
        let tail = self
            .tail(len)
            .map_err(|err| unavailable("read", &self.path, &err))?;
        let (seq, prev) = match &tail.last {
            Some(last) => (last.seq + 1, last.hash.clone()),
            None => (0, genesis_hash(&self.id)),
        };
        let event = Event {
            v: SCHEMA_VERSION,
            seq,
            time: Timestamp::now(),
            session: self.id.clone(),
            request: request.cloned(),
            prev,
            body,
        };
        let mut buf = Vec::with_capacity(512);
        if tail.ends_torn {
            // Terminate the torn line of a crashed writer so ours starts on a line of its own.
            buf.push(b'\n');
        }
        serde_json::to_writer(&mut buf, &event)
            .map_err(|err| Error::internal(format!("cannot encode an audit event: {err}")))?;
        buf.push(b'\n');
        // One `write` on an O_APPEND descriptor, under the lock: the line lands whole at the end.
        // `write_all` only loops if the kernel wrote part of it (disk full), which is the torn
        // line that readers and the next append know how to handle.
        (&self.file)
            .write_all(&buf)
            .map_err(|err| unavailable("write", &self.path, &err))?;
        self.remember(len + buf.len() as u64, &buf, &event);
        Ok(event)
    }

    /// The log's last event, under the exclusive lock: the one this process appended last while
    /// the log's length is what it was just after (only an append grows a log, and only under
    /// this lock; nothing shortens one), else read from the file.
    fn tail(&self, len: u64) -> io::Result<Tail> {
        let appended = self.appended.lock().unwrap_or_else(|e| e.into_inner());
        match appended.as_ref() {
            Some((at, last)) if *at == len => Ok(Tail {
                last: Some(last.clone()),
                ends_torn: false,
            }),
            _ => read_tail(&self.file, len),
        }
    }

    /// Keeps `event`, just written whole as `written` (its line, after a newline that ended a
    /// torn one) under the lock, which left the log `len` bytes long, for the next append.
    fn remember(&self, len: u64, written: &[u8], event: &Event) {
        let line = written.strip_prefix(b"\n").unwrap_or(written);
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let last = LastEvent {
            seq: event.seq,
            hash: sha256_hex(line),
        };
        *self.appended.lock().unwrap_or_else(|e| e.into_inner()) = Some((len, last));
    }

    /// Reads every event of this session.
    pub fn read(&self) -> Result<LogContents> {
        read_log(&self.path)
    }
}

fn unavailable(action: &str, path: &Path, err: &io::Error) -> Error {
    Error::new(
        Code::AuditUnavailable,
        format!("cannot {action} the audit log {}: {err}", path.display()),
    )
}

/// SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        hex.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
        hex.push(char::from(b"0123456789abcdef"[usize::from(byte & 0xf)]));
    }
    hex
}

/// The `prev` of a session's first event. Naming the session means a log copied under another
/// session's name does not verify.
pub fn genesis_hash(session: &SessionId) -> String {
    sha256_hex(format!("shellgate audit log genesis: {session}").as_bytes())
}

/// The last event of a log, as an appender needs it.
#[derive(Debug, Clone)]
struct LastEvent {
    seq: u64,
    hash: String,
}

struct Tail {
    last: Option<LastEvent>,
    /// The file does not end with a newline: its final line is torn.
    ends_torn: bool,
}

/// Finds the last event of the file by reading backwards from its end.
fn read_tail(file: &File, len: u64) -> io::Result<Tail> {
    if len == 0 {
        return Ok(Tail {
            last: None,
            ends_torn: false,
        });
    }
    let mut window: u64 = 4096;
    loop {
        let start = len.saturating_sub(window);
        let mut buf = vec![0u8; usize::try_from(len - start).unwrap_or(usize::MAX)];
        file.read_exact_at(&mut buf, start)?;
        let ends_torn = buf.last() != Some(&b'\n');
        let mut segments: Vec<&[u8]> = buf.split(|b| *b == b'\n').collect();
        if start > 0 {
            // The window's first segment may begin before the window.
            segments.remove(0);
        }
        // The empty segment after the final newline is no event (and parsing it would only make
        // an error, whose position serde_json finds with `memchr`: its CPU detection alone costs
        // more than the rest of this read, in a VM).
        for segment in segments.iter().rev().filter(|segment| !segment.is_empty()) {
            if let Some(event) = parse_event(segment) {
                return Ok(Tail {
                    last: Some(LastEvent {
                        seq: event.seq,
                        hash: sha256_hex(segment),
                    }),
                    ends_torn,
                });
            }
        }
        if start == 0 {
            return Ok(Tail {
                last: None,
                ends_torn,
            });
        }
        if window >= MAX_TAIL_SCAN {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "no event in its last {MAX_TAIL_SCAN} bytes; the log is damaged, move it aside"
                ),
            ));
        }
        window *= 4;
    }
}

/// A line is an event when it parses completely as one of a schema this build understands.
fn parse_event(line: &[u8]) -> Option<Event> {
    match serde_json::from_slice::<Event>(line) {
        Ok(event) if event.v <= SCHEMA_VERSION => Some(event),
        _ => None,
    }
}

/// A line that was not an event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedLine {
    /// 1-based line number in the file.
    pub line_no: usize,
    /// The final line without a newline: a write that did not finish.
    pub torn: bool,
    pub reason: String,
}

/// Everything a log holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogContents {
    pub events: Vec<Event>,
    pub skipped: Vec<SkippedLine>,
}

impl LogContents {
    /// The events of one command line, in order (`approval/asked → … → exec/finished`).
    pub fn chain<'a>(&'a self, request: &'a RequestId) -> impl Iterator<Item = &'a Event> + 'a {
        self.events
            .iter()
            .filter(move |event| event.request.as_ref() == Some(request))
    }
}

/// Splits log bytes into numbered lines; the flag says whether the line ended with a newline.
fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8], bool)> {
    let ends_with_newline = bytes.last() == Some(&b'\n');
    let body = if ends_with_newline {
        &bytes[..bytes.len() - 1]
    } else {
        bytes
    };
    let count = if bytes.is_empty() {
        0
    } else {
        body.split(|b| *b == b'\n').count()
    };
    body.split(|b| *b == b'\n')
        .take(count)
        .enumerate()
        .map(move |(index, line)| (index + 1, line, index + 1 < count || ends_with_newline))
}

fn skipped(line_no: usize, line: &[u8], terminated: bool) -> SkippedLine {
    let reason = if !terminated {
        "torn final line (a write that did not finish), skipped".to_string()
    } else {
        match serde_json::from_slice::<serde_json::Value>(line) {
            Err(err) => format!("not JSON ({err}), skipped"),
            Ok(value) => match value.get("v").and_then(serde_json::Value::as_u64) {
                Some(v) if v > u64::from(SCHEMA_VERSION) => {
                    format!("written by a newer shellgate (schema {v}), skipped")
                }
                _ => "JSON but not a valid event, skipped".to_string(),
            },
        }
    };
    SkippedLine {
        line_no,
        torn: !terminated,
        reason,
    }
}

/// Parses log bytes (pure; used by readers, `log --follow` and tests).
pub fn parse_log(bytes: &[u8]) -> LogContents {
    let mut contents = LogContents::default();
    for (line_no, line, terminated) in lines(bytes) {
        match parse_event(line) {
            Some(event) => contents.events.push(event),
            None => contents.skipped.push(skipped(line_no, line, terminated)),
        }
    }
    contents
}

/// Reads a log file without blocking writers. A missing file is an empty log.
pub fn read_log(path: &Path) -> Result<LogContents> {
    let bytes = read_bytes(path)?;
    Ok(parse_log(&bytes))
}

/// Reads the whole file. When it ends in an unterminated line, that may be a write in progress
/// rather than a torn one: the read is repeated once under a shared lock (briefly), which waits for
/// a writer in progress to finish. Readers never hold the lock while reading the whole file, so a
/// stopped reader cannot block the shell.
pub(super) fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let read_failed = |err: io::Error| {
        Error::new(
            Code::AuditUnavailable,
            format!("cannot read the audit log {}: {err}", path.display()),
        )
    };
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(read_failed(err)),
    };
    if !file.metadata().map_err(read_failed)?.is_file() {
        return Err(read_failed(io::Error::other("not a regular file")));
    }
    let mut bytes = Vec::new();
    (&file).read_to_end(&mut bytes).map_err(read_failed)?;
    if bytes.is_empty() || bytes.last() == Some(&b'\n') {
        return Ok(bytes);
    }
    let settle = Duration::from_millis(250);
    if let Ok(_lock) = FileLock::acquire(&file, LockKind::Shared, settle) {
        let line_start = bytes
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |index| index + 1);
        bytes.truncate(line_start);
        (&file)
            .seek(SeekFrom::Start(line_start as u64))
            .map_err(read_failed)?;
        (&file).read_to_end(&mut bytes).map_err(read_failed)?;
    }
    Ok(bytes)
}

/// Where a chain is broken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChainBreak {
    /// 1-based line number of the first event that does not link.
    pub line_no: usize,
    pub reason: String,
}

/// The result of `shellgate log verify`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// Events checked before the first break (all of them when intact).
    pub events: usize,
    /// Lines that are not events (a torn final line, damage); reported, not failures by themselves.
    pub skipped: Vec<SkippedLine>,
    pub broken: Option<ChainBreak>,
    /// The hash of the last event checked: compare it with an earlier run to notice removal at the
    /// end, which no chain can show by itself.
    pub head: String,
}

impl Verification {
    pub fn is_intact(&self) -> bool {
        self.broken.is_none()
    }
}

/// Verifies log bytes (pure).
pub fn verify_bytes(bytes: &[u8], session: &SessionId) -> Verification {
    let mut expected_prev = genesis_hash(session);
    let mut expected_seq: u64 = 0;
    let mut previous_line_no: Option<usize> = None;
    let mut events = 0;
    let mut skipped_lines = Vec::new();
    for (line_no, line, terminated) in lines(bytes) {
        let Some(event) = parse_event(line) else {
            skipped_lines.push(skipped(line_no, line, terminated));
            continue;
        };
        let problem = if &event.session != session {
            Some(format!(
                "the event belongs to session {:?}, not {:?}",
                event.session.as_str(),
                session.as_str()
            ))
        } else if event.prev != expected_prev {
            Some(match previous_line_no {
                None => "the first event does not start the chain: events before it were removed \
                         or it was edited"
                    .to_string(),
                Some(previous) => format!(
                    "its prev hash does not match the event on line {previous}: that event was \
                     edited, or events between them were removed"
                ),
            })
        } else if event.seq != expected_seq {
            Some(format!(
                "sequence number {} where {expected_seq} was expected",
                event.seq
            ))
        } else {
            None
        };
        if let Some(reason) = problem {
            return Verification {
                events,
                skipped: skipped_lines,
                broken: Some(ChainBreak { line_no, reason }),
                head: expected_prev,
            };
        }
        expected_prev = sha256_hex(line);
        expected_seq += 1;
        previous_line_no = Some(line_no);
        events += 1;
    }
    Verification {
        events,
        skipped: skipped_lines,
        broken: None,
        head: expected_prev,
    }
}

/// Verifies the log at `path` as the log of `session`.
pub fn verify_log(path: &Path, session: &SessionId) -> Result<Verification> {
    let bytes = read_bytes(path)?;
    Ok(verify_bytes(&bytes, session))
}

/// One session log on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionFile {
    pub id: SessionId,
    pub path: PathBuf,
    #[serde(skip)]
    pub modified: SystemTime,
}

/// The session logs beneath `paths`, oldest first by modification time. Files whose names are not
/// valid session ids are ignored.
pub fn list_sessions(paths: &StatePaths) -> Result<Vec<SessionFile>> {
    let dir = paths.sessions_dir();
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => {
            return Err(Error::new(
                Code::AuditUnavailable,
                format!("cannot list {}: {err}", dir.display()),
            ));
        }
    };
    let mut sessions = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(stem) = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_suffix(".jsonl"))
        else {
            continue;
        };
        let Ok(id) = SessionId::parse(stem) else {
            continue;
        };
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if meta.is_file() {
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            sessions.push(SessionFile { id, path, modified });
        }
    }
    sessions.sort_by(|a, b| a.modified.cmp(&b.modified).then(a.id.cmp(&b.id)));
    Ok(sessions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::event::{Actor, ReviewSwitch};

    fn switch(enabled: bool) -> EventBody {
        EventBody::AutoReviewState(ReviewSwitch {
            enabled,
            by: Actor::Agent,
        })
    }

    fn session_in(dir: &Path) -> Session {
        let id = SessionId::parse("t1").unwrap();
        Session::open(&StatePaths::at(dir), id).unwrap()
    }

    #[test]
    fn appends_link_and_count() {
        let tmp = tempfile::tempdir().unwrap();
        let session = session_in(tmp.path());
        let first = session.append(None, switch(false)).unwrap();
        let second = session.append(None, switch(true)).unwrap();
        assert_eq!((first.seq, second.seq), (0, 1));
        assert_eq!(first.prev, genesis_hash(session.id()));
        let bytes = fs::read(session.path()).unwrap();
        let first_line = bytes.split(|b| *b == b'\n').next().unwrap();
        assert_eq!(second.prev, sha256_hex(first_line));
        let contents = session.read().unwrap();
        assert_eq!(contents.events, vec![first, second]);
        assert!(verify_bytes(&bytes, session.id()).is_intact());
        let mode = fs::metadata(session.path()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    /// Two writers of one log (two processes' handles): each links to the other's last event,
    /// not to the one it appended itself before the other wrote, and a torn line left between
    /// two appends of one writer is ended before its next event.
    #[test]
    fn a_writer_links_to_what_another_appended_since() {
        let tmp = tempfile::tempdir().unwrap();
        let (first, second) = (session_in(tmp.path()), session_in(tmp.path()));
        first.append(None, switch(false)).unwrap();
        second.append(None, switch(true)).unwrap();
        let third = first.append(None, switch(false)).unwrap();
        assert_eq!(third.seq, 2);
        first.append(None, switch(true)).unwrap();
        OpenOptions::new()
            .append(true)
            .open(first.path())
            .unwrap()
            .write_all(br#"{"v":1,"seq":4,"ti"#)
            .unwrap();
        let fifth = first.append(None, switch(false)).unwrap();
        assert_eq!(fifth.seq, 4);
        let bytes = fs::read(first.path()).unwrap();
        assert!(verify_bytes(&bytes, first.id()).is_intact());
        assert_eq!(first.read().unwrap().events.len(), 5);
    }

    #[test]
    fn request_ids_are_required_exactly_for_line_events() {
        let tmp = tempfile::tempdir().unwrap();
        let session = session_in(tmp.path());
        let request = RequestId::new_random();
        let err = session.append(Some(&request), switch(true)).unwrap_err();
        assert_eq!(err.code, Code::Internal);
        assert!(fs::read(session.path()).unwrap().is_empty());
    }

    #[test]
    fn torn_line_is_skipped_terminated_and_bridged() {
        let tmp = tempfile::tempdir().unwrap();
        let session = session_in(tmp.path());
        session.append(None, switch(false)).unwrap();
        OpenOptions::new()
            .append(true)
            .open(session.path())
            .unwrap()
            .write_all(br#"{"v":1,"seq":1,"ti"#)
            .unwrap();
        let contents = session.read().unwrap();
        assert_eq!(contents.events.len(), 1);
        assert_eq!(contents.skipped.len(), 1);
        assert!(contents.skipped[0].torn);
        let next = session.append(None, switch(true)).unwrap();
        assert_eq!(next.seq, 1);
        let bytes = fs::read(session.path()).unwrap();
        let verification = verify_bytes(&bytes, session.id());
        assert!(verification.is_intact(), "{verification:?}");
        assert_eq!(verification.events, 2);
        assert_eq!(verification.skipped[0].line_no, 2);
        assert!(!verification.skipped[0].torn);
    }

    #[test]
    fn chain_collects_the_events_of_one_line() {
        use crate::audit::event::{ExecStarted, LineAsked};
        use crate::mode::SandboxPolicy;
        let tmp = tempfile::tempdir().unwrap();
        let session = session_in(tmp.path());
        let (first, second) = (RequestId::new_random(), RequestId::new_random());
        let asked = |line: &str| {
            EventBody::ApprovalAsked(LineAsked {
                line: line.into(),
                program: "ls".into(),
                cwd: "/".into(),
                mode: "ask".into(),
                sandbox: SandboxPolicy::ReadOnly,
                grant: None,
                code: Code::Allowed,
                reason: String::new(),
            })
        };
        let started = EventBody::ExecStarted(ExecStarted {
            sandbox: SandboxPolicy::ReadOnly,
            grant: None,
            shell: "bash".into(),
            program: None,
            pid: None,
            withheld: Vec::new(),
        });
        session.append(Some(&first), asked("ls a")).unwrap();
        session.append(Some(&second), asked("ls b")).unwrap();
        session.append(None, switch(true)).unwrap();
        session.append(Some(&first), started).unwrap();
        let contents = session.read().unwrap();
        let kinds: Vec<&str> = contents.chain(&first).map(|e| e.body.kind()).collect();
        assert_eq!(kinds, ["approval/asked", "exec/started"]);
    }

    #[test]
    fn symlinks_are_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("elsewhere");
        fs::write(&target, "").unwrap();
        let link = tmp.path().join("log.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = Session::open_at(&link, SessionId::parse("x").unwrap()).unwrap_err();
        assert_eq!(err.code, Code::AuditUnavailable);
    }

    #[test]
    fn a_log_copied_to_another_session_does_not_verify() {
        let tmp = tempfile::tempdir().unwrap();
        let session = session_in(tmp.path());
        session.append(None, switch(false)).unwrap();
        let bytes = fs::read(session.path()).unwrap();
        let other = SessionId::parse("t2").unwrap();
        let verification = verify_bytes(&bytes, &other);
        assert_eq!(verification.broken.unwrap().line_no, 1);
    }

    #[test]
    fn sessions_are_listed_by_valid_name_only() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = StatePaths::at(tmp.path());
        session_in(tmp.path()).append(None, switch(true)).unwrap();
        fs::write(paths.sessions_dir().join("not a session.jsonl"), "").unwrap();
        fs::write(paths.sessions_dir().join("notes.txt"), "").unwrap();
        let listed: Vec<String> = list_sessions(&paths)
            .unwrap()
            .into_iter()
            .map(|s| s.id.to_string())
            .collect();
        assert_eq!(listed, vec!["t1"]);
    }
}
