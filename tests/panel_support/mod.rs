//! Support for the panel tests: a lab (state, config and working directories of its own), session
//! logs written through the audit API, the real `shellgate panel` binary on a random port, and a
//! small HTTP/1.1 client that can send exactly the headers a test wants (a wrong Host, a hostile
//! Origin), which a full client would not.
//!
//! Every connection goes to 127.0.0.1, to a server the test started itself.

pub mod webdriver;

use shellgate::audit::event::{
    ApprovalDecision, Decider, Decision, EventBody, ExecFinished, ExecStarted, LineAsked,
    ReviewVerdict, Reviewer, RiskLevel,
};
use shellgate::audit::{RequestId, Session, SessionId, StatePaths};
use shellgate::error::Code;
use shellgate::mode::SandboxPolicy;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a test waits for something that should take milliseconds before it fails: generous,
/// because CI runs the suite on two busy cores. Only a failing test ever waits this long.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// How long one HTTP exchange may take (starting a browser session is the slowest).
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(90);

/// A home of its own: state, config and a working directory, outside /tmp.
pub struct Lab {
    dir: tempfile::TempDir,
    user: crate::support::Home,
}

impl Lab {
    pub fn new() -> Lab {
        let dir = crate::support::scratch_dir();
        let user = crate::support::Home::at(dir.path().join("home"));
        let lab = Lab { dir, user };
        for sub in ["state", "config", "work"] {
            std::fs::create_dir_all(lab.dir.path().join(sub)).expect("lab dirs");
        }
        lab
    }

    pub fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    pub fn paths(&self) -> StatePaths {
        StatePaths::at(self.path("state").join("shellgate"))
    }

    /// Writes the user config (`$XDG_CONFIG_HOME/shellgate/config.toml`).
    pub fn config(&self, toml: &str) {
        let dir = self.path("config").join("shellgate");
        std::fs::create_dir_all(&dir).expect("config dir");
        std::fs::write(dir.join("config.toml"), toml).expect("config written");
    }

    /// The environment every shellgate of this lab runs in: its own home, state and config,
    /// nothing inherited, default signals.
    pub fn env(&self, command: &mut Command) {
        crate::support::isolate(command, &self.user)
            .env("XDG_STATE_HOME", self.path("state"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .current_dir(self.path("work"));
    }

    /// `shellgate` without a terminal: an agent's call.
    pub fn shellgate(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_shellgate"));
        self.env(&mut command);
        command.stdin(Stdio::null());
        command
    }

    /// `shellgate ARGS` in a pseudo-terminal of its own (a person typing); returns its output.
    pub fn in_terminal(&self, args: &[&str]) -> String {
        let mut command = Command::new(env!("CARGO_BIN_EXE_shellgate"));
        self.env(&mut command);
        command.args(args);
        let mut session =
            rexpect::session::spawn_command(command, Some(PATIENCE.as_millis() as u64))
                .expect("shellgate in a pty");
        session.exp_eof().expect("shellgate finishes")
    }

    pub fn session(&self, name: &str) -> Session {
        Session::open(&self.paths(), SessionId::parse(name).expect("valid id")).expect("log opens")
    }

    pub fn events(&self, name: &str) -> Vec<shellgate::audit::Event> {
        let id = SessionId::parse(name).expect("valid id");
        shellgate::audit::log::read_log(&self.paths().session_log(&id))
            .expect("log reads")
            .events
    }
}

/// One reviewed line, as the gate would record it.
pub struct Line<'a> {
    pub line: &'a str,
    pub program: &'a str,
    pub decision: Decision,
    pub risk: RiskLevel,
    pub reason: &'a str,
    pub duration_ms: u64,
    pub cached: bool,
}

impl<'a> Line<'a> {
    pub fn allow(line: &'a str, program: &'a str, reason: &'a str) -> Line<'a> {
        Line {
            line,
            program,
            decision: Decision::Allow,
            risk: RiskLevel::Low,
            reason,
            duration_ms: 640,
            cached: false,
        }
    }

    pub fn deny(line: &'a str, program: &'a str, reason: &'a str) -> Line<'a> {
        Line {
            line,
            program,
            decision: Decision::Deny,
            risk: RiskLevel::High,
            reason,
            duration_ms: 910,
            cached: false,
        }
    }
}

/// Records `line`'s whole chain under `request`: asked → verdict → decided (→ exec/* when allowed).
pub fn record(session: &Session, request: &RequestId, line: &Line<'_>) {
    let append = |body: EventBody| {
        session.append(Some(request), body).expect("event appended");
    };
    append(EventBody::ApprovalAsked(LineAsked {
        line: line.line.into(),
        program: line.program.into(),
        cwd: "/home/dev/project".into(),
        mode: "auto".into(),
        sandbox: SandboxPolicy::WorkspaceWrite,
        grant: None,
        code: Code::NeedsReview,
        reason: "no rule decides this line".into(),
    }));
    append(EventBody::AutoReviewVerdict(ReviewVerdict {
        line: line.line.into(),
        program: line.program.into(),
        decision: line.decision,
        risk: line.risk,
        reason: line.reason.into(),
        reviewer: Reviewer {
            provider: "openai".into(),
            model: "qwen2.5-coder-7b".into(),
        },
        duration_ms: line.duration_ms,
        cached: line.cached,
    }));
    let allowed = line.decision == Decision::Allow;
    append(EventBody::ApprovalDecided(ApprovalDecision {
        decision: line.decision,
        by: Decider::Reviewer,
        code: if allowed {
            Code::Allowed
        } else {
            Code::AutoReviewDenied
        },
        reason: line.reason.into(),
    }));
    if allowed {
        append(EventBody::ExecStarted(ExecStarted {
            sandbox: SandboxPolicy::WorkspaceWrite,
            grant: Some(shellgate::policy::grant::Grant {
                sandbox: SandboxPolicy::WorkspaceWrite,
                network: shellgate::policy::grant::Network::tcp([443]),
                listen: Default::default(),
                writable: vec!["~/.npm".into()],
                env: Vec::new(),
                sockets: Vec::new(),
            }),
            shell: "bash".into(),
            program: None,
            pid: Some(4242),
            withheld: Vec::new(),
        }));
        append(EventBody::ExecFinished(ExecFinished {
            exit_code: Some(0),
            signal: None,
            duration_ms: 35,
            sandbox: SandboxPolicy::WorkspaceWrite,
        }));
    }
}

/// A running `shellgate panel`, stopped when dropped.
pub struct PanelRun {
    pub port: u16,
    /// `/TOKEN`: the prefix of every path.
    pub base: String,
    process: Running,
}

enum Running {
    Plain(Child),
    // Held for its Drop, which stops the process; the person's side through `terminal`.
    Terminal(rexpect::session::PtySession),
}

impl Drop for PanelRun {
    fn drop(&mut self) {
        if let Running::Plain(child) = &mut self.process {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl PanelRun {
    /// `shellgate panel ARGS` without a terminal (an agent started it).
    pub fn start(lab: &Lab, args: &[&str]) -> PanelRun {
        PanelRun::start_with_env(lab, args, &[])
    }

    /// `shellgate panel ARGS` without a terminal, with extra environment variables.
    pub fn start_with_env(lab: &Lab, args: &[&str], env: &[(&str, String)]) -> PanelRun {
        let mut child = lab
            .shellgate()
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .arg("panel")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("shellgate panel starts");
        let mut url = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        BufReader::new(stdout)
            .read_line(&mut url)
            .expect("reads the URL");
        if url.is_empty() {
            let mut err = String::new();
            let _ = child.stderr.take().map(|mut e| e.read_to_string(&mut err));
            panic!("shellgate panel printed no URL: {err}");
        }
        PanelRun::from_url(url.trim(), Running::Plain(child))
    }

    /// `shellgate panel ARGS` in a pseudo-terminal: a person started it.
    pub fn start_as_person(lab: &Lab, args: &[&str]) -> PanelRun {
        let mut command = Command::new(env!("CARGO_BIN_EXE_shellgate"));
        lab.env(&mut command);
        command.arg("panel").args(args);
        let mut session =
            rexpect::session::spawn_command(command, Some(PATIENCE.as_millis() as u64))
                .expect("shellgate panel in a pty");
        let (_, url) = session
            .exp_regex(r"http://127\.0\.0\.1:[0-9]+/[0-9a-f]{64}/")
            .expect("the panel prints its URL");
        PanelRun::from_url(&url, Running::Terminal(session))
    }

    fn from_url(url: &str, process: Running) -> PanelRun {
        let rest = url
            .strip_prefix("http://127.0.0.1:")
            .unwrap_or_else(|| panic!("a loopback URL: {url:?}"));
        let (port, path) = rest.split_once('/').expect("a path after the port");
        let token = path.trim_end_matches('/');
        assert_eq!(token.len(), 64, "a 256-bit token in {url:?}");
        PanelRun {
            port: port.parse().expect("a port"),
            base: format!("/{token}"),
            process,
        }
    }

    /// The terminal a person started the panel from (panics for a panel started without one).
    #[allow(dead_code)]
    pub fn terminal(&mut self) -> &mut rexpect::session::PtySession {
        match &mut self.process {
            Running::Terminal(session) => session,
            Running::Plain(_) => panic!("this panel was started without a terminal"),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{}{path}", self.port, self.base)
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// GET `base + path` as the panel's own page would.
    pub fn get(&self, path: &str) -> Reply {
        let full = format!("{}{path}", self.base);
        http(self.port, "GET", &full, &[("Host", &self.host())], "")
    }

    /// POST a form to `base + path` with the panel's own Origin.
    pub fn post(&self, path: &str, form: &str) -> Reply {
        let full = format!("{}{path}", self.base);
        http(
            self.port,
            "POST",
            &full,
            &[
                ("Host", &self.host()),
                ("Origin", &self.origin()),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            form,
        )
    }

    /// The CSRF token, as the page carries it.
    pub fn csrf(&self, session: &str) -> String {
        let page = self.get(&format!("/s/{session}/")).expect_ok();
        let marker = "name=\"csrf\" value=\"";
        let start = page.find(marker).expect("the page has a CSRF field") + marker.len();
        page[start..start + 64].to_string()
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn expect_ok(self) -> String {
        assert_eq!(self.status, 200, "{self:?}");
        self.body
    }
}

/// One request on a fresh connection to 127.0.0.1:`port`, with exactly `headers` (plus
/// `Connection: close` and the body's length), read to the end.
pub fn http(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connects to the server");
    stream
        .set_read_timeout(Some(EXCHANGE_TIMEOUT))
        .expect("timeout");
    let mut request = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("Connection: close\r\n");
    if method == "POST" || !body.is_empty() {
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).expect("request sent");
    read_reply(&mut stream)
}

/// Reads one answer: the head, then `Content-Length` bytes of body (or everything until the server
/// closes, when it gives no length). Some servers (chromedriver) ignore `Connection: close`.
fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let n = stream.read(&mut chunk).expect("response head read");
        assert!(
            n > 0,
            "the server closed before answering: {:?}",
            String::from_utf8_lossy(&raw)
        );
        raw.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let mut reply = parse_head(&head);
    let length: Option<usize> = reply
        .header("Content-Length")
        .and_then(|value| value.parse().ok());
    let mut body = raw[head_end..].to_vec();
    match length {
        Some(length) => {
            while body.len() < length {
                let n = stream.read(&mut chunk).expect("response body read");
                assert!(n > 0, "the body ended early");
                body.extend_from_slice(&chunk[..n]);
            }
            body.truncate(length);
        }
        None => {
            stream.read_to_end(&mut body).expect("response body read");
        }
    }
    reply.body = String::from_utf8_lossy(&body).into_owned();
    reply
}

fn parse_head(head: &str) -> Reply {
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    Reply {
        status,
        headers,
        body: String::new(),
    }
}

/// A server-sent-event stream, read as it arrives.
pub struct EventStream {
    stream: TcpStream,
    seen: String,
}

impl EventStream {
    pub fn open(panel: &PanelRun, session: &str) -> EventStream {
        let mut stream = TcpStream::connect(("127.0.0.1", panel.port)).expect("connects");
        let request = format!(
            "GET {}/s/{session}/events HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\r\n",
            panel.base,
            panel.host()
        );
        stream.write_all(request.as_bytes()).expect("request sent");
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .expect("timeout");
        EventStream {
            stream,
            seen: String::new(),
        }
    }

    /// Reads until the stream has said `needle` `count` times in all; fails after [`PATIENCE`].
    pub fn wait_for(&mut self, needle: &str, count: usize) {
        let deadline = Instant::now() + PATIENCE;
        let mut chunk = [0u8; 4096];
        while self.seen.matches(needle).count() < count {
            assert!(
                Instant::now() < deadline,
                "the stream never said {needle:?} {count} time(s); it said {:?}",
                self.seen
            );
            match self.stream.read(&mut chunk) {
                Ok(0) => panic!("the stream ended: {:?}", self.seen),
                Ok(n) => self.seen.push_str(&String::from_utf8_lossy(&chunk[..n])),
                Err(err)
                    if matches!(
                        err.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(err) => panic!("reading the stream: {err}"),
            }
        }
    }

    pub fn seen(&self) -> &str {
        &self.seen
    }
}

/// Waits until `check` is true; fails with `what` after [`PATIENCE`].
pub fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !check() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Where a test leaves files for people to look at: `target/panel-test/`.
pub fn output_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp has a parent")
        .join("panel-test");
    std::fs::create_dir_all(&dir).expect("output dir");
    dir
}
