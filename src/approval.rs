//! Asking a person on the controlling terminal.
//!
//! The question goes to `/dev/tty`, never to stdin/stdout: an agent that pipes into shellgate owns
//! those, but not the terminal, so it cannot answer for the person. No terminal, or no answer within
//! the timeout, is [`Code::ApprovalUnavailable`] (the line does not run); an explicit "no" is
//! [`Answer::Rejected`], which the caller reports as `APPROVAL_REJECTED`.
//!
//! The terminal is switched to canonical mode with echo for the question (a line editor such as
//! readline may have left it raw) and restored afterwards. Input typed before the question was shown
//! is discarded, so a stray keypress cannot answer a question the person has not seen.
//!
//! Asking never hangs: a process outside the terminal's foreground process group (started with `&`,
//! or under `timeout`, which puts itself in a group of its own) would be stopped by the kernel
//! (SIGTTIN/SIGTTOU) the moment it touched the terminal, and a stopped process's timeout never
//! fires. So the question is only asked from the foreground group (otherwise it is
//! `APPROVAL_UNAVAILABLE` at once, saying why; `wrap`'s broker borrows the foreground from the
//! caller's group that holds it, see [`on_behalf_of`]), and while it is asked SIGTTIN and SIGTTOU
//! are ignored: a process moved to the background mid-question gets an error from the terminal
//! instead of being stopped.

use crate::error::{Code, Error, Result};
use crate::intake::visible_line as visible;
use crate::mode::SandboxPolicy;
use crate::policy::grant::Grant;
use std::fs::{File, OpenOptions};
use std::io::{IsTerminal, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// The controlling terminal of the process.
pub const CONTROLLING_TTY: &str = "/dev/tty";

/// How long a person has to answer by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How many unclear answers to an allow/reject question are met with the question again.
const MAX_ATTEMPTS: usize = 3;

/// The longest answer read; anything longer is not one of the expected answers anyway.
const MAX_ANSWER_BYTES: usize = 256;

/// What the person is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuestionKind {
    /// Allow the line once, or reject it (`y`/`n`; anything unclear is asked again, then rejected).
    AllowOnce,
    /// As [`QuestionKind::AllowOnce`], and `a` allows the program for good, with what the rule
    /// declares (the caller writes it to the user's config: [`crate::policy::always`]).
    AllowOnceOrAlways {
        always: crate::policy::always::Always,
    },
    /// Type `word` exactly to confirm (e.g. `full` for Full access); anything else rejects.
    TypedConfirmation { word: String },
}

/// One question for the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub line: String,
    pub cwd: String,
    /// What the sandbox would give the line (the answer approves exactly this).
    pub grant: Grant,
    /// Why the person is asked (e.g. `Auto review denied command "…": <reason>`).
    pub why: String,
    pub kind: QuestionKind,
    pub timeout: Duration,
}

/// The person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Allowed once, or the typed confirmation matched.
    Approved,
    /// Allowed, and the person asked for the program to be allowed from now on.
    ApprovedAlways,
    Rejected,
}

/// Asks on the controlling terminal.
pub fn ask(question: &Question) -> Result<Answer> {
    ask_on(Path::new(CONTROLLING_TTY), question)
}

/// Asks on the terminal at `tty` (tests pass a pseudo-terminal here).
pub fn ask_on(tty: &Path, question: &Question) -> Result<Answer> {
    ask_terminal(tty, question).map_err(|err| {
        if err.code == Code::ApprovalUnavailable {
            // Say what needed the person, not only why they could not be reached.
            Error::new(
                err.code,
                format!(
                    "{}; a person's approval was needed because {}",
                    err.reason,
                    visible(&question.why)
                ),
            )
        } else {
            err
        }
    })
}

fn ask_terminal(tty: &Path, question: &Question) -> Result<Answer> {
    // One question at a time on the terminal (the `wrap` broker decides lines in parallel).
    let _one_at_a_time = QUESTION
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let _stop_signals = StopSignalsIgnored::new();
    let mut terminal = Terminal::open(tty)?;
    let _loan = ForegroundLoan::take(&terminal)?;
    terminal.enter_canonical_mode();
    terminal.discard_typeahead();
    let deadline = Instant::now() + question.timeout;
    terminal.write(&render_question(question))?;
    for attempt in 1..=MAX_ATTEMPTS {
        let reply = match terminal.read_line(deadline) {
            Ok(reply) => reply,
            Err(err) => {
                // Leave the person's terminal on a fresh line after a timeout.
                let _ = terminal.write("\n");
                return Err(err);
            }
        };
        let Some(reply) = reply else {
            // End of input (Ctrl-D) is the person's way of saying no.
            terminal.write("\n")?;
            return Ok(Answer::Rejected);
        };
        match interpret(&question.kind, &reply) {
            Some(answer) => return Ok(answer),
            None if attempt < MAX_ATTEMPTS => terminal.write(match question.kind {
                QuestionKind::AllowOnceOrAlways { .. } => "Please answer y, a or n: ",
                _ => "Please answer y or n: ",
            })?,
            None => {}
        }
    }
    terminal.write("No clear answer: rejected.\n")?;
    Ok(Answer::Rejected)
}

/// Maps a reply to an answer; `None` asks again.
fn interpret(kind: &QuestionKind, reply: &str) -> Option<Answer> {
    let reply = reply.trim();
    match kind {
        QuestionKind::TypedConfirmation { word } if reply == word => Some(Answer::Approved),
        QuestionKind::TypedConfirmation { .. } => Some(Answer::Rejected),
        QuestionKind::AllowOnce => match reply.to_ascii_lowercase().as_str() {
            "y" | "yes" => Some(Answer::Approved),
            "" | "n" | "no" => Some(Answer::Rejected),
            _ => None,
        },
        QuestionKind::AllowOnceOrAlways { .. } => match reply.to_ascii_lowercase().as_str() {
            "y" | "yes" => Some(Answer::Approved),
            "a" | "always" => Some(Answer::ApprovedAlways),
            "" | "n" | "no" => Some(Answer::Rejected),
            _ => None,
        },
    }
}

/// Asks a yes/no question on the controlling terminal, no by default (Enter).
/// `Ok(false)` for no; unavailable as for [`ask`].
pub fn confirm(prompt: &str, timeout: Duration) -> Result<bool> {
    let _one_at_a_time = QUESTION
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let _stop_signals = StopSignalsIgnored::new();
    let mut terminal = Terminal::open(Path::new(CONTROLLING_TTY))?;
    let _loan = ForegroundLoan::take(&terminal)?;
    terminal.enter_canonical_mode();
    terminal.discard_typeahead();
    let deadline = Instant::now() + timeout;
    // No is the default: Enter (or an empty line) applies nothing. The prompt's newlines are its
    // layout (one change per line): kept; every other character intake would refuse is escaped.
    terminal.write(&format!("{} [y/N] ", crate::intake::visible(prompt)))?;
    for attempt in 1..=MAX_ATTEMPTS {
        let reply = match terminal.read_line(deadline) {
            Ok(Some(reply)) => reply,
            Ok(None) => {
                terminal.write("\n")?;
                return Ok(false);
            }
            Err(err) => {
                let _ = terminal.write("\n");
                return Err(err);
            }
        };
        match reply.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Ok(true),
            "" | "n" | "no" => return Ok(false),
            _ if attempt < MAX_ATTEMPTS => terminal.write("Please answer y or n: ")?,
            _ => {}
        }
    }
    terminal.write("No clear answer: not applied.\n")?;
    Ok(false)
}

/// Writes a short note to the person's terminal (standard error when there is none).
pub fn tell(text: &str) {
    match OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(CONTROLLING_TTY)
    {
        Ok(mut tty) => {
            let _ = tty.write_all(text.as_bytes());
        }
        Err(_) => eprint!("{text}"),
    }
}

/// Whether a person is at a terminal: stdin is a terminal AND a controlling terminal can be opened.
/// Used to guard commands only a person may run (turning review back on, `approve`, a mode change).
/// It is a heuristic: a program that allocates a pseudo-terminal of its own (`script`, `expect`)
/// passes it, which is why such lines should not be allowed to reach shellgate unsandboxed.
pub fn person_present() -> bool {
    std::io::stdin().is_terminal() && Terminal::open(Path::new(CONTROLLING_TTY)).is_ok()
}

/// The question as shown on the terminal. It starts where the person's cursor is: after the line
/// they typed and its newline, so no blank line comes first.
pub fn render_question(question: &Question) -> String {
    let prompt = match &question.kind {
        QuestionKind::AllowOnce => "Allow once? [y/N]".to_string(),
        QuestionKind::AllowOnceOrAlways { always } => format!(
            "Allow once? [y/N, or a = always allow {}{}]",
            always_scope(always),
            always_reach(always)
        ),
        QuestionKind::TypedConfirmation { word } => {
            format!("Type {word:?} to confirm, anything else rejects:")
        }
    };
    let mut grant = String::new();
    if question.grant.sandbox != SandboxPolicy::FullAccess {
        if !question.grant.network.is_off() {
            grant.push_str(&format!("  network: {}\n", question.grant.network));
        }
        if !question.grant.listen.is_empty() {
            grant.push_str(&format!(
                "  listens: {} (this machine only)\n",
                crate::policy::grant::listen_ports(&question.grant.listen)
            ));
        }
        if !question.grant.writable.is_empty() {
            grant.push_str(&format!(
                "  writes:  {} (besides the workspace)\n",
                visible(&question.grant.writable.join(", "))
            ));
        }
    }
    if !question.grant.env.is_empty() {
        grant.push_str(&format!(
            "  passes:  {} (credentials: withheld from lines unless you say yes)\n",
            visible(&question.grant.env.join(", "))
        ));
    }
    for socket in &question.grant.sockets {
        let what = if socket == crate::policy::grant::SSH_AGENT {
            "your ssh agent's socket ($SSH_AUTH_SOCK: the line can sign with, list, add and remove your keys)"
                .to_owned()
        } else {
            format!("the socket {}", visible(socket))
        };
        grant.push_str(&format!("  reaches: {what}\n"));
    }
    format!(
        "shellgate: a person's approval is needed\n  line:    {}\n  cwd:     {}\n  sandbox: {}\n{grant}  \
         why:     {}\n{prompt} ({} s) ",
        visible(&question.line),
        visible(&question.cwd),
        match (&question.kind, question.grant.sandbox) {
            // A yes to one line outside the sandbox, not to the Full access mode.
            (
                QuestionKind::AllowOnce | QuestionKind::AllowOnceOrAlways { .. },
                SandboxPolicy::FullAccess,
            ) => {
                "NONE: this line, once, runs outside the sandbox"
            }
            (_, sandbox) => describe_sandbox(sandbox),
        },
        visible(&question.why),
        question.timeout.as_secs()
    )
}

/// What an "always" rule allows, in words: `` `mkdir` `` (the program) or `this line`.
pub fn always_scope(always: &crate::policy::always::Always) -> String {
    match &always.scope {
        crate::policy::always::Scope::Program(program) => format!("`{}`", visible(program)),
        crate::policy::always::Scope::Line(_) => "this line".to_owned(),
    }
}

/// What an "always" rule gives beyond the mode's sandbox, in words (` with network
/// tcp:registry.npmjs.org:443, writes ~/.npm`), or nothing.
pub fn always_reach(always: &crate::policy::always::Always) -> String {
    let base = Grant::base(SandboxPolicy::WorkspaceWrite, false);
    base.with_needs(&always.needs)
        .extra_over(&base)
        .map(|extra| format!(" with {}", visible(&extra)))
        .unwrap_or_default()
}

fn describe_sandbox(sandbox: SandboxPolicy) -> &'static str {
    match sandbox {
        SandboxPolicy::ReadOnly => "read-only (reads anywhere, writes nowhere)",
        SandboxPolicy::WorkspaceWrite => "workspace-write (writes only beneath the workspace)",
        SandboxPolicy::FullAccess => "NONE: Full access, no sandbox and no review",
    }
}

/// An open terminal in canonical mode, restored when dropped.
struct Terminal {
    file: File,
    saved: Option<libc::termios>,
}

/// Held while a question is on the terminal.
static QUESTION: std::sync::Mutex<()> = std::sync::Mutex::new(());

thread_local! {
    /// The process group of the caller this thread decides for (the `wrap` broker's caller).
    static CALLER_GROUP: std::cell::Cell<Option<libc::pid_t>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` on behalf of a caller in process group `group`: when that group is the terminal's
/// foreground job (a wrapped interactive shell's line), a question borrows the terminal's
/// foreground for itself and gives it back; anyone else in the background cannot ask.
pub fn on_behalf_of<R>(group: Option<libc::pid_t>, f: impl FnOnce() -> R) -> R {
    let before = CALLER_GROUP.with(|g| g.replace(group));
    let result = f();
    CALLER_GROUP.with(|g| g.set(before));
    result
}

/// The terminal's foreground, lent to this process for one question by the caller's group that
/// holds it, and handed back on drop. A process outside the foreground would otherwise be stopped
/// by the kernel the moment it read the answer (SIGTTIN), and with it `wrap` and its agent.
struct ForegroundLoan {
    fd: std::os::fd::RawFd,
    back_to: Option<libc::pid_t>,
}

impl ForegroundLoan {
    fn take(terminal: &Terminal) -> Result<ForegroundLoan> {
        let fd = terminal.fd();
        // SAFETY: tcgetpgrp and getpgrp take no pointers; the descriptor is open.
        let (foreground, own) = unsafe { (libc::tcgetpgrp(fd), libc::getpgrp()) };
        let mut loan = ForegroundLoan { fd, back_to: None };
        if foreground <= 0 || foreground == own {
            return Ok(loan);
        }
        if CALLER_GROUP.with(std::cell::Cell::get) != Some(foreground) {
            return Err(unavailable(
                "shellgate runs in a background process group (started with `&`, or under a \
                 program such as `timeout` that starts it in a group of its own), so it cannot \
                 ask on the terminal",
            ));
        }
        // SAFETY: tcsetpgrp on an open terminal descriptor, to this process's own group. A
        // background process asking is sent SIGTTOU unless it ignores it, which `wrap` does.
        if unsafe { libc::tcsetpgrp(fd, own) } != 0 {
            return Err(unavailable(format!(
                "cannot bring the question to the terminal's foreground: {}",
                std::io::Error::last_os_error()
            )));
        }
        loan.back_to = Some(foreground);
        Ok(loan)
    }
}

impl Drop for ForegroundLoan {
    fn drop(&mut self) {
        if let Some(group) = self.back_to {
            // SAFETY: as in `take`; the group that held the foreground gets it back.
            unsafe {
                libc::tcsetpgrp(self.fd, group);
            }
        }
    }
}

fn unavailable(detail: impl std::fmt::Display) -> Error {
    Error::new(
        Code::ApprovalUnavailable,
        format!("no person could be asked: {detail}"),
    )
}

/// Why the terminal could not be opened, in words: ENXIO on `/dev/tty` means this process has no
/// controlling terminal (an agent's subprocess, a CI job, a pipe).
fn no_terminal(path: &Path, err: &std::io::Error) -> String {
    match err.raw_os_error() {
        Some(libc::ENXIO) | Some(libc::ENODEV) => {
            "there is no terminal (the line came from a program, not from a person typing)"
                .to_owned()
        }
        _ => format!("cannot open {}: {err}", path.display()),
    }
}

impl Terminal {
    fn open(path: &Path) -> Result<Terminal> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            // O_NOCTTY: asking must never make a terminal our controlling one.
            .custom_flags(libc::O_NOCTTY)
            .open(path)
            .map_err(|err| unavailable(no_terminal(path, &err)))?;
        if !file.is_terminal() {
            return Err(unavailable(format!("{} is not a terminal", path.display())));
        }
        // Opening changes nothing on the terminal: `person_present` only opens it.
        Ok(Terminal { file, saved: None })
    }

    fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// Line input with echo and signals, whatever mode a line editor left the terminal in.
    fn enter_canonical_mode(&mut self) {
        // SAFETY: `termios` is a plain C struct for which all-zero bytes are a valid value; it is
        // only used after `tcgetattr` filled it.
        let mut mode: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: the descriptor is open for the lifetime of `self`, and `mode` is a valid,
        // exclusively borrowed `termios` for `tcgetattr` to write.
        if unsafe { libc::tcgetattr(self.fd(), &mut mode) } != 0 {
            return;
        }
        self.saved = Some(mode);
        mode.c_lflag |= libc::ICANON | libc::ECHO | libc::ISIG;
        mode.c_iflag |= libc::ICRNL;
        // SAFETY: as above; `tcsetattr` only reads `mode`.
        unsafe { libc::tcsetattr(self.fd(), libc::TCSANOW, &mode) };
    }

    fn discard_typeahead(&self) {
        // SAFETY: the descriptor is open; `tcflush` takes no pointers.
        unsafe { libc::tcflush(self.fd(), libc::TCIFLUSH) };
    }

    fn write(&mut self, text: &str) -> Result<()> {
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|err| unavailable(format!("cannot write to the terminal: {err}")))
    }

    /// Reads one line before `deadline`. `Ok(None)` is end of input.
    fn read_line(&mut self, deadline: Instant) -> Result<Option<String>> {
        let mut line = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::new(
                    Code::ApprovalUnavailable,
                    "no answer from the person in time",
                ));
            }
            if !self.wait_readable(left)? {
                continue;
            }
            let mut chunk = [0u8; 128];
            let count = match self.file.read(&mut chunk) {
                Ok(count) => count,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(unavailable(format!("the terminal went away: {err}"))),
            };
            if count == 0 {
                return Ok(None);
            }
            line.extend_from_slice(&chunk[..count]);
            if let Some(end) = line.iter().position(|b| *b == b'\n') {
                line.truncate(end);
                return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
            }
            if line.len() > MAX_ANSWER_BYTES {
                line.clear();
            }
        }
    }

    /// Waits up to `left` for input; `false` when none came (the caller checks its deadline).
    fn wait_readable(&self, left: Duration) -> Result<bool> {
        let mut poll = libc::pollfd {
            fd: self.fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = libc::c_int::try_from(left.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
        // SAFETY: `poll` reads and writes exactly one `pollfd`, which lives on our stack for the
        // whole call.
        let ready = unsafe { libc::poll(&mut poll, 1, millis) };
        if ready < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                return Ok(false);
            }
            return Err(unavailable(format!("cannot wait for the terminal: {err}")));
        }
        if poll.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
            && poll.revents & libc::POLLIN == 0
        {
            return Err(unavailable("the terminal hung up"));
        }
        // Reading only after poll said so: a blocking read would ignore the deadline.
        Ok(ready > 0 && poll.revents & libc::POLLIN != 0)
    }
}

/// SIGTTIN and SIGTTOU ignored while asking (see the module comment), restored when dropped.
struct StopSignalsIgnored {
    ttin: libc::sighandler_t,
    ttou: libc::sighandler_t,
}

impl StopSignalsIgnored {
    fn new() -> StopSignalsIgnored {
        // SAFETY: installs SIG_IGN (no Rust code runs as a handler); the previous dispositions
        // are restored on drop.
        unsafe {
            StopSignalsIgnored {
                ttin: libc::signal(libc::SIGTTIN, libc::SIG_IGN),
                ttou: libc::signal(libc::SIGTTOU, libc::SIG_IGN),
            }
        }
    }
}

impl Drop for StopSignalsIgnored {
    fn drop(&mut self) {
        // SAFETY: restores the dispositions saved in `new`.
        unsafe {
            libc::signal(libc::SIGTTIN, self.ttin);
            libc::signal(libc::SIGTTOU, self.ttou);
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            // SAFETY: the descriptor is still open (the file is dropped after this runs) and
            // `saved` is the `termios` read from it.
            unsafe { libc::tcsetattr(self.fd(), libc::TCSANOW, saved) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        let once = QuestionKind::AllowOnce;
        assert_eq!(interpret(&once, " Y "), Some(Answer::Approved));
        assert_eq!(interpret(&once, "yes"), Some(Answer::Approved));
        assert_eq!(interpret(&once, ""), Some(Answer::Rejected));
        assert_eq!(interpret(&once, "no"), Some(Answer::Rejected));
        assert_eq!(interpret(&once, "maybe"), None);
        let typed = QuestionKind::TypedConfirmation {
            word: "full".into(),
        };
        assert_eq!(interpret(&typed, "full"), Some(Answer::Approved));
        assert_eq!(interpret(&typed, "y"), Some(Answer::Rejected));
        assert_eq!(interpret(&typed, "FULL"), Some(Answer::Rejected));
        let always = QuestionKind::AllowOnceOrAlways {
            always: crate::policy::always::Always {
                scope: crate::policy::always::Scope::Program("mkdir".into()),
                needs: crate::policy::grant::Needs::default(),
            },
        };
        assert_eq!(interpret(&always, "a"), Some(Answer::ApprovedAlways));
        assert_eq!(interpret(&always, "y"), Some(Answer::Approved));
        assert_eq!(interpret(&always, "N"), Some(Answer::Rejected));
        assert_eq!(interpret(&always, "x"), None);
    }

    #[test]
    fn the_question_starts_on_the_persons_line() {
        let question = Question {
            line: "mkdir d".into(),
            cwd: "/w".into(),
            grant: Grant::base(SandboxPolicy::WorkspaceWrite, false),
            why: "test".into(),
            kind: QuestionKind::AllowOnceOrAlways {
                always: crate::policy::always::Always {
                    scope: crate::policy::always::Scope::Program("mkdir".into()),
                    needs: crate::policy::grant::Needs::default(),
                },
            },
            timeout: Duration::from_secs(9),
        };
        let text = render_question(&question);
        assert!(text.starts_with("shellgate: "), "{text:?}");
        assert!(text.contains("a = always allow `mkdir`]"), "{text}");
    }

    /// The grant a yes gives is shown whole: a listening grant too.
    #[test]
    fn the_question_shows_the_ports_a_line_would_listen_on() {
        let mut grant = Grant::base(SandboxPolicy::WorkspaceWrite, false);
        grant.listen = [8000, 5173].into();
        let question = Question {
            line: "python3 -m http.server".into(),
            cwd: "/w".into(),
            grant,
            why: "test".into(),
            kind: QuestionKind::AllowOnce,
            timeout: Duration::from_secs(9),
        };
        let text = render_question(&question);
        assert!(
            text.contains("  listens: loopback tcp:5173,8000 (this machine only)\n"),
            "{text}"
        );
    }

    /// A yes to one line outside the sandbox says so; Full access (the mode) keeps its words.
    #[test]
    fn one_line_outside_the_sandbox_is_not_called_full_access() {
        let mut question = Question {
            line: "vim ~/.config/shellgate/config.toml".into(),
            cwd: "/w".into(),
            grant: Grant::base(SandboxPolicy::FullAccess, true),
            why: "test".into(),
            kind: QuestionKind::AllowOnce,
            timeout: Duration::from_secs(9),
        };
        let text = render_question(&question);
        assert!(text.contains("sandbox: NONE: this line, once,"), "{text}");
        question.kind = QuestionKind::TypedConfirmation {
            word: "full".into(),
        };
        let text = render_question(&question);
        assert!(text.contains("NONE: Full access"), "{text}");
    }

    #[test]
    fn no_terminal_is_unavailable() {
        let question = Question {
            line: "ls".into(),
            cwd: "/".into(),
            grant: Grant::base(SandboxPolicy::WorkspaceWrite, false),
            why: "test".into(),
            kind: QuestionKind::AllowOnce,
            timeout: Duration::from_secs(1),
        };
        for path in ["/dev/null", "/nonexistent/tty"] {
            let err = ask_on(Path::new(path), &question).unwrap_err();
            assert_eq!(err.code, Code::ApprovalUnavailable, "{path}");
        }
    }
}
