//! `shellgate log [--session ID] [--follow] [--json] [--since T]` and `shellgate log verify`.
//!
//! Everything printed from the log goes through [`visible`]: a logged command line is attacker-
//! controlled text and must not be able to drive the reader's terminal.

use crate::audit::describe::describe_event;
use crate::audit::event::{Event, Timestamp};
use crate::audit::log::{self, SkippedLine};
use crate::audit::{SessionId, StatePaths};
use crate::error::{Error, Result};
use crate::intake::visible_line as visible;
use clap::{Args, Subcommand};
use std::fs;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct LogArgs {
    #[command(subcommand)]
    pub command: Option<LogCommand>,
    /// The session to show (default: $SHELLGATE_SESSION, else the most recent session).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Keep printing events as they are appended.
    #[arg(long)]
    pub follow: bool,
    /// Print the stored JSON lines instead of a readable summary.
    #[arg(long)]
    pub json: bool,
    /// Only events at or after T: an RFC 3339 time (2025-01-02T03:04:05Z) or a duration ago (10m, 2h).
    #[arg(long, value_name = "T")]
    pub since: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum LogCommand {
    /// Check the hash chain: exit 0 when intact, 1 with the first broken line otherwise.
    Verify(VerifyArgs),
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The session to verify (default: $SHELLGATE_SESSION, else the most recent session).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Exit status of `log verify` when the chain is broken: distinct from shellgate's own 2xx codes,
/// like `cmp` and `diff` report a difference with 1.
pub const VERIFY_BROKEN_STATUS: u8 = 1;

pub fn run(args: LogArgs) -> ExitCode {
    match args.command {
        Some(LogCommand::Verify(verify)) => super::exit_with(run_verify(&verify)),
        None => super::exit_with(run_show(&args).map(|()| ExitCode::SUCCESS)),
    }
}

/// The session a command acts on: `--session`, else `$SHELLGATE_SESSION`, else (for commands that
/// only read) the most recently written session.
pub fn resolve_session(
    paths: &StatePaths,
    explicit: Option<&str>,
    latest_allowed: bool,
) -> Result<SessionId> {
    if let Some(raw) = explicit {
        return SessionId::parse(raw);
    }
    if let Some(id) = SessionId::from_env()? {
        return Ok(id);
    }
    if latest_allowed && let Some(latest) = log::list_sessions(paths)?.pop() {
        return Ok(latest.id);
    }
    Err(Error::usage(
        "no session given: pass --session ID or set SHELLGATE_SESSION (the shell hook sets it)",
    ))
}

fn run_verify(args: &VerifyArgs) -> Result<ExitCode> {
    let paths = StatePaths::from_env()?;
    let session = resolve_session(&paths, args.session.as_deref(), true)?;
    let path = paths.session_log(&session);
    if !path.exists() {
        return Err(Error::usage(format!("session {session} has no log")));
    }
    let verification = log::verify_log(&path, &session)?;
    let mut out = io::stdout().lock();
    let written = if args.json {
        let json = serde_json::json!({ "session": session, "intact": verification.is_intact(),
            "verification": verification });
        writeln!(out, "{json}")
    } else {
        for skipped in &verification.skipped {
            eprintln!("shellgate: line {}: {}", skipped.line_no, skipped.reason);
        }
        match &verification.broken {
            None => writeln!(
                out,
                "intact: {} events in session {session}; head {}",
                verification.events, verification.head
            ),
            Some(broken) => writeln!(
                out,
                "BROKEN at line {}: {} ({} events verified before it)",
                broken.line_no, broken.reason, verification.events
            ),
        }
    };
    ignore_broken_pipe(written)?;
    Ok(if verification.is_intact() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(VERIFY_BROKEN_STATUS)
    })
}

/// Parses `--since`: an RFC 3339 time, or a duration before now.
pub fn parse_since(text: &str, now: SystemTime) -> Result<Timestamp> {
    if let Some(time) = Timestamp::parse_rfc3339(text) {
        return Ok(time);
    }
    let ago = humantime::parse_duration(text).map_err(|_| {
        Error::usage(format!(
            "--since {:?}: expected an RFC 3339 time (2025-01-02T03:04:05Z) or a duration (10m, 2h)",
            visible(text)
        ))
    })?;
    Ok(Timestamp::from_system_time(
        now.checked_sub(ago).unwrap_or(SystemTime::UNIX_EPOCH),
    ))
}

fn run_show(args: &LogArgs) -> Result<()> {
    let paths = StatePaths::from_env()?;
    let session = resolve_session(&paths, args.session.as_deref(), true)?;
    let since = match &args.since {
        Some(text) => Some(parse_since(text, SystemTime::now())?),
        None => None,
    };
    let path = paths.session_log(&session);
    let printer = Printer {
        json: args.json,
        since,
    };
    if args.follow {
        return follow(&path, &printer);
    }
    if !path.exists() {
        return Err(Error::usage(format!("session {session} has no log")));
    }
    let contents = log::read_log(&path)?;
    let mut out = io::stdout().lock();
    for event in &contents.events {
        ignore_broken_pipe(printer.print(&mut out, event))?;
    }
    report_skipped(&contents.skipped);
    Ok(())
}

fn report_skipped(skipped: &[SkippedLine]) {
    for line in skipped {
        eprintln!("shellgate: line {}: {}", line.line_no, line.reason);
    }
}

/// A closed pipe (`shellgate log | head`) ends the output quietly; other write errors are errors.
fn ignore_broken_pipe(result: io::Result<()>) -> Result<()> {
    match result {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(err) => Err(Error::internal(format!("cannot write to stdout: {err}"))),
        Ok(()) => Ok(()),
    }
}

struct Printer {
    json: bool,
    since: Option<Timestamp>,
}

impl Printer {
    fn print(&self, out: &mut impl Write, event: &Event) -> io::Result<()> {
        if self.since.is_some_and(|since| event.time < since) {
            return Ok(());
        }
        if self.json {
            // The event re-encoded: one JSON object per line, in the stored format (`log verify`
            // checks the stored bytes themselves).
            writeln!(
                out,
                "{}",
                serde_json::to_string(event).map_err(io::Error::other)?
            )
        } else {
            writeln!(out, "{}", describe_event(event))
        }
    }
}

/// Prints new lines as they are appended; runs until killed or stdout closes.
fn follow(path: &Path, printer: &Printer) -> Result<()> {
    const POLL: Duration = Duration::from_millis(200);
    let mut offset: u64 = 0;
    let mut pending: Vec<u8> = Vec::new();
    let mut line_no: usize = 0;
    let mut out = io::stdout();
    loop {
        let len = fs::metadata(path).map(|meta| meta.len()).unwrap_or(0);
        if len < offset {
            // The file was replaced or truncated: start over.
            offset = 0;
            pending.clear();
            line_no = 0;
        }
        if len > offset {
            let mut file = fs::File::open(path)
                .map_err(|err| Error::internal(format!("cannot read {}: {err}", path.display())))?;
            file.seek(SeekFrom::Start(offset))
                .and_then(|_| file.take(len - offset).read_to_end(&mut pending))
                .map_err(|err| Error::internal(format!("cannot read {}: {err}", path.display())))?;
            offset = len;
            while let Some(end) = pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                line_no += 1;
                let parsed = log::parse_log(&line);
                for event in &parsed.events {
                    ignore_broken_pipe(printer.print(&mut out, event))?;
                }
                if !parsed.events.is_empty() {
                    continue;
                }
                let skipped: Vec<SkippedLine> = parsed
                    .skipped
                    .into_iter()
                    .map(|skip| SkippedLine { line_no, ..skip })
                    .collect();
                report_skipped(&skipped);
            }
            ignore_broken_pipe(out.flush())?;
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_accepts_times_and_durations() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(10_000);
        assert_eq!(
            parse_since("10m", now).unwrap(),
            Timestamp::from_unix_ms(9_400_000)
        );
        assert_eq!(
            parse_since("1970-01-01T00:00:01Z", now).unwrap(),
            Timestamp::from_unix_ms(1_000)
        );
        assert!(parse_since("yesterday-ish", now).is_err());
    }
}
