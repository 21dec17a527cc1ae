//! Grants, end to end with the real binary, the real sandbox and listeners this test starts on
//! 127.0.0.1: a line reaches exactly the TCP ports its grant names; what the sandbox refused is
//! reported (`SANDBOX_DENIED`, naming the address or path and the missing grant) and, with a
//! person at a terminal, run again once with exactly that grant — never twice, never wider.

use crate::support;

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SHELLGATE: &str = env!("CARGO_BIN_EXE_shellgate");
const TIMEOUT_MS: u64 = 30_000;

/// A home with a user config, a workspace (a git repository), and a client on `PATH`: `fetchx
/// HOST PORT` connects with bash's `/dev/tcp` and says `connected`.
struct Lab {
    dir: tempfile::TempDir,
    user: support::Home,
}

impl Lab {
    fn new() -> Lab {
        let dir = support::scratch_dir();
        let user = support::Home::at(dir.path().join("home"));
        std::fs::create_dir_all(user.config().join("shellgate")).unwrap();
        std::fs::create_dir_all(user.home.join("other")).unwrap();
        support::workspace(&dir.path().join("ws"));
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let client = bin.join("fetchx");
        support::write_executable(
            &client,
            "#!/bin/bash\nexec 3<>\"/dev/tcp/$1/$2\" || exit 7\necho connected\n",
        );
        Lab { dir, user }
    }

    /// The user config: a rule that allows `fetchx` and declares `needs` (or none).
    fn rule(&self, needs: Option<&str>) {
        let needs = needs.map_or(String::new(), |n| format!("needs = {n}\n"));
        std::fs::write(
            self.user.config().join("shellgate/config.toml"),
            format!(
                "[[rules]]\nid = \"test-fetch\"\npattern = \"^fetchx$\"\nfield = \"program\"\n\
                 policy = \"allow\"\nreason = \"the test's client\"\n{needs}"
            ),
        )
        .unwrap();
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    fn other(&self) -> PathBuf {
        self.user.home.join("other")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(SHELLGATE);
        support::isolate(&mut c, &self.user)
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", self.dir.path().join("bin").display()),
            )
            .env("SHELLGATE_SESSION", "grants-test")
            .current_dir(self.ws())
            .args(args);
        c
    }

    /// `shellgate run -- LINE` as an agent runs it: no terminal, nothing on standard input.
    fn agent_runs(&self, line: &str) -> (i32, String) {
        self.agent_runs_with(&[], line)
    }

    /// [`Lab::agent_runs`] with these variables set for `run`.
    fn agent_runs_with(&self, env: &[(&str, &Path)], line: &str) -> (i32, String) {
        let mut c = self.command(&["run", "--", line]);
        c.envs(env.iter().copied());
        support::detach(&mut c);
        let out = c.stdin(Stdio::null()).output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), text)
    }

    /// `shellgate run -- LINE` with a person at a pseudo-terminal, answering each question in
    /// turn; everything the terminal showed and the exit status.
    fn person_runs(&self, line: &str, answers: &[&str]) -> (String, i32) {
        self.person_runs_and(line, answers, || {})
    }

    /// [`Lab::person_runs`], calling `meanwhile` while each question waits for its answer.
    fn person_runs_and(&self, line: &str, answers: &[&str], meanwhile: impl Fn()) -> (String, i32) {
        self.person_runs_with(&[], line, answers, meanwhile)
    }

    /// [`Lab::person_runs_and`] with these variables set for `run`.
    fn person_runs_with(
        &self,
        env: &[(&str, &Path)],
        line: &str,
        answers: &[&str],
        meanwhile: impl Fn(),
    ) -> (String, i32) {
        let mut c = self.command(&["run", "--", line]);
        c.envs(env.iter().copied());
        Lab::person_answers(c, line, answers, meanwhile)
    }

    /// `command` (a `run` of `line`) at a pseudo-terminal, answering each question in turn.
    fn person_answers(
        command: Command,
        line: &str,
        answers: &[&str],
        meanwhile: impl Fn(),
    ) -> (String, i32) {
        let mut pty = rexpect::session::spawn_command(command, Some(TIMEOUT_MS)).unwrap();
        let mut seen = String::new();
        for answer in answers {
            let (before, matched) = pty
                .exp_regex(r"\[y/N[^\]]*\]")
                .unwrap_or_else(|e| panic!("no question for {line:?}: {e}\n{seen}"));
            seen.push_str(&before);
            seen.push_str(&matched);
            meanwhile();
            pty.send_line(answer).unwrap();
        }
        seen.push_str(&pty.exp_eof().unwrap());
        let code = match pty.process().wait().unwrap() {
            nix::sys::wait::WaitStatus::Exited(_, code) => code,
            other => panic!("{line:?} ended with {other:?}"),
        };
        (seen, code)
    }

    /// The kinds of this session's events, in order.
    fn log_kinds(&self) -> Vec<String> {
        let log = self
            .user
            .state()
            .join("shellgate/sessions/grants-test.jsonl");
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["kind"].as_str().unwrap_or("").to_owned()
            })
            .collect()
    }
}

/// A listener on an unused loopback port, polled without blocking.
fn listener() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

/// Did a connection reach `l` (the client has finished: a completed connection waits in the
/// backlog even after the client closed it)?
fn reached(l: &TcpListener) -> bool {
    match l.accept() {
        Ok((stream, _)) => {
            drop::<TcpStream>(stream);
            true
        }
        Err(e) if e.kind() == ErrorKind::WouldBlock => false,
        Err(e) => panic!("accept: {e}"),
    }
}

/// A listener that answers every connection by closing it (a server that speaks no protocol: a
/// client waiting for its greeting fails at once), counting them.
fn closing_listener() -> (std::sync::Arc<std::sync::atomic::AtomicUsize>, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in l.incoming() {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(stream);
        }
    });
    (count, port)
}

fn exists(p: &Path) -> bool {
    p.symlink_metadata().is_ok()
}

#[test]
fn a_declared_need_reaches_its_port_and_no_other() {
    let lab = Lab::new();
    let (granted, a) = listener();
    let (other, b) = listener();
    lab.rule(Some(&format!("{{ network = [{a}] }}")));
    let (code, out) = lab.agent_runs(&format!("fetchx 127.0.0.1 {a}"));
    assert_eq!((code, out.trim()), (0, "connected"), "{out}");
    assert!(reached(&granted), "the granted port saw no connection");
    // The same client, another port: the kernel refuses it, and the agent is told which address
    // and what grant would be missing — no silent retry.
    let (code, out) = lab.agent_runs(&format!("fetchx 127.0.0.1 {b}"));
    assert_eq!(code, 217, "{out}");
    assert!(out.contains("SANDBOX_DENIED"), "{out}");
    assert!(out.contains(&format!("127.0.0.1:{b}")), "no address: {out}");
    assert!(
        out.contains(&format!("\"network\":[{b}]")),
        "no missing grant: {out}"
    );
    assert!(!reached(&other), "a port outside the grant was reached");
    assert!(lab.log_kinds().contains(&"sandbox/denied".to_owned()));
    // The control: without the rule's need, the granted port is refused too.
    lab.rule(None);
    let (code, out) = lab.agent_runs(&format!("fetchx 127.0.0.1 {a}"));
    assert_eq!(code, 217, "{out}");
    assert!(!reached(&granted), "the port was reached without a grant");
}

#[test]
fn a_git_client_asked_about_gets_the_port_of_its_url_only() {
    let lab = Lab::new();
    lab.rule(None);
    let (remote, a) = closing_listener();
    let (other, b) = listener();
    let connections = || remote.load(std::sync::atomic::Ordering::SeqCst);
    // `git ls-remote git://127.0.0.1:A/x` needs the network: asked, with the grant shown. The
    // same line's client to another port is refused by the kernel, and its rerun declined.
    let line = format!("git ls-remote git://127.0.0.1:{a}/x; fetchx 127.0.0.1 {b}");
    let (seen, code) = lab.person_runs(&line, &["y", "n"]);
    assert_ne!(code, 0, "{seen}");
    assert!(
        seen.contains(&format!("network: tcp:{a}\r\n")),
        "the question does not show the port: {seen}"
    );
    assert!(
        connections() >= 1,
        "git did not reach the port of its URL: {seen}"
    );
    assert!(
        seen.contains(&format!("127.0.0.1:{b}")),
        "the refusal names no address: {seen}"
    );
    assert!(
        !reached(&other),
        "the line reached a port beyond its grant: {seen}"
    );
    // An agent, with nobody to ask: refused before anything runs.
    let before = connections();
    let (code, out) = lab.agent_runs(&format!("git ls-remote git://127.0.0.1:{a}/x"));
    assert_eq!(code, 210, "{out}");
    assert_eq!(connections(), before, "it ran without approval");
}

#[test]
fn escalation_runs_a_refused_connection_again_once_with_that_port() {
    let lab = Lab::new();
    let (granted, a) = listener();
    let (wanted, b) = listener();
    lab.rule(Some(&format!("{{ network = [{a}] }}")));
    let line = format!("fetchx 127.0.0.1 {b}");
    // The sandbox refuses B; the person is asked to run it again with exactly B, and says yes.
    let (seen, code) = lab.person_runs(&line, &["y"]);
    assert_eq!(code, 0, "{seen}");
    assert!(
        seen.contains(&format!("127.0.0.1:{b}")),
        "the question names no address: {seen}"
    );
    assert!(reached(&wanted), "the rerun did not reach the port: {seen}");
    assert!(!reached(&granted));
    // The grant does not outlive its line: the same line is refused again, and with a "no" the
    // person's refusal is final.
    let (seen, code) = lab.person_runs(&line, &["n"]);
    assert_ne!(code, 0, "{seen}");
    assert!(
        !reached(&wanted),
        "the second line reached the port unasked"
    );
    let kinds = lab.log_kinds();
    assert_eq!(
        kinds.iter().filter(|k| *k == "sandbox/denied").count(),
        2,
        "{kinds:?}"
    );
}

/// An HTTP server on loopback answering every request `served`, counting them.
fn http_server() -> (std::sync::Arc<std::sync::atomic::AtomicUsize>, u16) {
    http_server_answering(|_, _| ("text/plain", b"served".to_vec()))
}

/// An HTTP server on loopback answering every request with `answer(its port, the request's
/// path)` (a content type and a body), counting them.
fn http_server_answering(
    answer: fn(u16, &str) -> (&'static str, Vec<u8>),
) -> (std::sync::Arc<std::sync::atomic::AtomicUsize>, u16) {
    use std::io::{BufRead, BufReader, Write};
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in l.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            let mut line = request.clone();
            while line != "\r\n" && !line.is_empty() {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
            }
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let path = request.split_whitespace().nth(1).unwrap_or("/");
            // Only GET is served (npm's audit POSTs are not found).
            let (status, kind, body) = if request.starts_with("GET ") {
                let (kind, body) = answer(port, path);
                ("200 OK", kind, body)
            } else {
                ("404 Not Found", "text/plain", Vec::new())
            };
            // Cacheable for a while, as registries serve their packages.
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
                 Cache-Control: public, max-age=300\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = reader.get_mut().write_all(head.as_bytes());
            let _ = reader.get_mut().write_all(&body);
        }
    });
    (count, port)
}

/// A stand-in npm registry on loopback, counting requests: the packument of `demo` (version
/// 1.2.3) for any path but its tarball's, and the tarball [`DEMO_TARBALL`] names (made by `npm
/// pack` in the test; an empty body before).
fn npm_registry() -> (std::sync::Arc<std::sync::atomic::AtomicUsize>, u16) {
    http_server_answering(|port, path| {
        if path.ends_with(".tgz") {
            let tarball = DEMO_TARBALL.get().cloned().unwrap_or_default();
            return (
                "application/octet-stream",
                std::fs::read(tarball).unwrap_or_default(),
            );
        }
        let body = format!(
            "{{\"name\":\"demo\",\"dist-tags\":{{\"latest\":\"1.2.3\"}},\"versions\":\
             {{\"1.2.3\":{{\"name\":\"demo\",\"version\":\"1.2.3\",\"dist\":\
             {{\"tarball\":\"http://127.0.0.1:{port}/demo/-/demo-1.2.3.tgz\"}}}}}}}}"
        );
        ("application/json", body.into_bytes())
    })
}

/// The `demo` package's tarball the stand-in registry serves.
static DEMO_TARBALL: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// `npm ci` fetches only what the lines' npm cache lacks: after one approved `npm install demo`
/// (from a stand-in registry: the cache and the lockfile filled), `npm ci` reinstalls with nobody
/// to ask, without the network, and the registry sees nothing; in a workspace whose lines' cache
/// is empty it is refused, with the registry's grant offered. Before, `npm ci` needed the
/// network every time, and an agent with nobody to ask was refused.
#[test]
fn npm_ci_installs_from_the_lines_cache_unasked() {
    use std::sync::atomic::Ordering::SeqCst;
    let lab = Lab::new();
    assert!(
        Path::new("/usr/bin/npm").exists(),
        "npm is installed: .ci/run installs it"
    );
    let package = lab.dir.path().join("demo-package");
    std::fs::create_dir_all(&package).unwrap();
    std::fs::write(
        package.join("package.json"),
        "{\"name\": \"demo\", \"version\": \"1.2.3\"}\n",
    )
    .unwrap();
    std::fs::write(package.join("index.js"), "module.exports = 42;\n").unwrap();
    let packed = Command::new("npm")
        .args(["pack", "--silent"])
        .current_dir(&package)
        .env("npm_config_cache", lab.dir.path().join("pack-cache"))
        .output()
        .unwrap();
    assert!(packed.status.success(), "{packed:?}");
    DEMO_TARBALL.get_or_init(|| package.join("demo-1.2.3.tgz"));
    let (served, port) = npm_registry();
    let ws = lab.ws();
    std::fs::write(
        ws.join("package.json"),
        "{\"name\": \"app\", \"version\": \"1.0.0\"}\n",
    )
    .unwrap();
    std::fs::write(
        ws.join(".npmrc"),
        format!("registry=http://127.0.0.1:{port}/\n"),
    )
    .unwrap();
    let (seen, code) = lab.person_runs("npm install demo", &["y"]);
    assert_eq!(code, 0, "{seen}");
    assert!(ws.join("node_modules/demo/index.js").exists(), "{seen}");
    assert!(ws.join("package-lock.json").exists(), "{seen}");
    let before = served.load(SeqCst);
    std::fs::remove_dir_all(ws.join("node_modules")).unwrap();
    let (code, text) = lab.agent_runs("npm ci");
    assert_eq!(code, 0, "{text}");
    assert!(ws.join("node_modules/demo/index.js").exists(), "{text}");
    assert_eq!(
        served.load(SeqCst),
        before,
        "npm ci reached the registry: {text}"
    );
    // The lines' cache empty (another workspace's would be): refused, the fetch's grant offered.
    let caches = lab.user.home.join(".cache/shellgate-lines");
    std::fs::remove_dir_all(&caches).unwrap();
    let (code, text) = lab.agent_runs("npm ci");
    assert_eq!(code, 217, "{text}");
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
    assert_eq!(served.load(SeqCst), before, "{text}");
}

/// The network `shellgate check --json LINE` reports for a line in the lab's workspace.
fn checked_network(lab: &Lab, line: &str) -> serde_json::Value {
    let out = lab.command(&["check", "--json", line]).output().unwrap();
    let decision: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    decision["network"].clone()
}

/// The registry a project's `.npmrc` names is the host an npm line is granted: the question
/// names it, not the public registry, and after a yes real npm reaches it (a stand-in registry
/// on loopback). Without the judgement by the project's configuration the grant was the public
/// registry's, and npm's request was refused by the line's proxy.
#[test]
fn a_projects_npmrc_registry_is_the_host_granted() {
    let lab = Lab::new();
    assert!(
        Path::new("/usr/bin/npm").exists(),
        "npm is installed: .ci/run installs it"
    );
    let (served, port) = npm_registry();
    let ws = lab.ws();
    std::fs::write(ws.join("package.json"), "{\"name\": \"app\"}\n").unwrap();
    std::fs::write(
        ws.join(".npmrc"),
        format!("registry=http://127.0.0.1:{port}/\n"),
    )
    .unwrap();
    let network = |line: &str| checked_network(&lab, line);
    assert_eq!(
        network("npm view demo version"),
        serde_json::json!([format!("127.0.0.1:{port}")])
    );
    let (seen, code) = lab.person_runs("npm view demo version", &["y"]);
    assert_eq!(code, 0, "{seen}");
    assert!(seen.contains("1.2.3"), "{seen}");
    assert!(
        served.load(std::sync::atomic::Ordering::SeqCst) >= 1,
        "the registry was not reached: {seen}"
    );
    // A registry the line names itself is the one npm uses; without the project's, the public.
    assert_eq!(
        network("npm view demo --registry=https://other.example/"),
        serde_json::json!(["other.example:443"])
    );
    std::fs::remove_file(ws.join(".npmrc")).unwrap();
    assert_eq!(
        network("npm view demo version"),
        serde_json::json!(["registry.npmjs.org:443"])
    );
}

/// The mirror a project's `.cargo/config.toml` replaces crates.io with is the host a cargo line is
/// granted: `check --json` and the question name it, and after a yes real cargo resolves the
/// project's dependency from it (a stand-in sparse index on loopback) in the lines' own cargo
/// home. Before, the grant was crates.io's and cargo's request was refused by the line's proxy.
#[test]
fn a_projects_cargo_mirror_is_the_host_granted() {
    use std::sync::atomic::Ordering::SeqCst;
    let lab = Lab::new();
    let cargo = PathBuf::from(std::env::var_os("CARGO").expect("cargo test sets CARGO"));
    let (served, port) = http_server_answering(|port, path| {
        let body = if path.ends_with("/index/config.json") {
            format!("{{\"dl\":\"http://127.0.0.1:{port}/dl\"}}")
        } else if path.ends_with("/index/de/mo/demo") {
            format!(
                "{{\"name\":\"demo\",\"vers\":\"1.0.0\",\"deps\":[],\"cksum\":\"{}\",\
                 \"features\":{{}},\"yanked\":false}}\n",
                "0".repeat(64)
            )
        } else {
            String::new()
        };
        ("application/json", body.into_bytes())
    });
    let ws = lab.ws();
    std::fs::create_dir_all(ws.join(".cargo")).unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/lib.rs"), "").unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\ndemo = \"1\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        ws.join(".cargo/config.toml"),
        format!(
            "[source.crates-io]\nreplace-with = \"mirror\"\n\n[source.mirror]\n\
             registry = \"sparse+http://127.0.0.1:{port}/index/\"\n"
        ),
    )
    .unwrap();
    assert_eq!(
        checked_network(&lab, "cargo generate-lockfile"),
        serde_json::json!([format!("127.0.0.1:{port}")])
    );
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        lab.dir.path().join("bin").display(),
        cargo.parent().unwrap().display()
    );
    let (seen, code) = lab.person_runs_with(
        &[("PATH", Path::new(&path))],
        "cargo generate-lockfile",
        &["y"],
        || {},
    );
    assert!(seen.contains(&format!("127.0.0.1:{port}")), "{seen}");
    assert_eq!(code, 0, "{seen}");
    assert!(
        served.load(SeqCst) >= 1,
        "the mirror was not reached: {seen}"
    );
    let lock = std::fs::read_to_string(ws.join("Cargo.lock")).unwrap_or_default();
    assert!(lock.contains("name = \"demo\""), "{lock}\n{seen}");
    // The index went to the lines' cargo home; the home has no ~/.cargo of the line's making.
    assert!(!lab.user.home.join(".cargo").exists());
    let caches = std::fs::read_dir(lab.user.home.join(".cache/shellgate-lines")).unwrap();
    let indexed = caches
        .flatten()
        .any(|ws| ws.path().join("cargo-home/registry/index").is_dir());
    assert!(indexed, "{seen}");
}

/// The registry a project's `.yarnrc.yml` names (yarn 2 and later) is the host a yarn line is
/// granted; npm in the same project keeps its `.npmrc`'s.
#[test]
fn a_projects_yarnrc_registry_is_the_host_granted_to_yarn() {
    let lab = Lab::new();
    let ws = lab.ws();
    std::fs::write(ws.join("package.json"), "{\"name\": \"app\"}\n").unwrap();
    let network = |line: &str| checked_network(&lab, line);
    assert_eq!(
        network("yarn install"),
        serde_json::json!([
            "registry.npmjs.org:443",
            "registry.yarnpkg.com:443",
            "repo.yarnpkg.com:443"
        ])
    );
    std::fs::write(
        ws.join(".yarnrc.yml"),
        "npmRegistryServer: \"https://yarn.corp.example\"\n",
    )
    .unwrap();
    assert_eq!(
        network("yarn install"),
        serde_json::json!(["yarn.corp.example:443"])
    );
    assert_eq!(
        network("npm install"),
        serde_json::json!(["registry.npmjs.org:443"])
    );
}

/// The indexes a project's `pyproject.toml` names for uv (`[[tool.uv.index]]`) are granted to a
/// uv line beside PyPI, and one marked `default = true` in its `uv.toml` replaces PyPI: the
/// question and `check --json` name them. Before, only uv's variables were read, and such an
/// index was refused by the line's proxy and offered after a failed run.
#[test]
fn a_projects_uv_indexes_are_the_hosts_granted() {
    let lab = Lab::new();
    let ws = lab.ws();
    std::fs::write(
        ws.join("pyproject.toml"),
        "[project]\nname = \"app\"\n\n[[tool.uv.index]]\nname = \"torch\"\n\
         url = \"https://download.pytorch.org/whl/cpu\"\n",
    )
    .unwrap();
    let network = |line: &str| checked_network(&lab, line);
    assert_eq!(
        network("uv sync"),
        serde_json::json!([
            "download.pytorch.org:443",
            "files.pythonhosted.org:443",
            "pypi.org:443"
        ])
    );
    std::fs::write(
        ws.join("uv.toml"),
        "[[index]]\nurl = \"https://pypi.corp.example/simple\"\ndefault = true\n",
    )
    .unwrap();
    assert_eq!(
        network("uv sync"),
        serde_json::json!(["pypi.corp.example:443"])
    );
    // A command that fetches nothing is judged as typed, with no network.
    assert_eq!(network("uv --version"), serde_json::json!("off"));
}

/// A line granted one host by name (a user rule's `needs`) whose program asks for another: the
/// line's proxy refuses it, the agent is told exactly that `host:port` is missing, and a person's
/// yes runs it again with it — and the request arrives only then.
#[test]
fn escalation_offers_exactly_the_host_the_proxy_refused() {
    use std::sync::atomic::Ordering::SeqCst;
    let lab = Lab::new();
    let (_, a) = http_server();
    let (wanted, b) = http_server();
    support::write_executable(
        &lab.dir.path().join("bin/getx"),
        "#!/usr/bin/python3\nimport sys, urllib.request\n\
         print(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode())\n",
    );
    std::fs::write(
        lab.user.config().join("shellgate/config.toml"),
        format!(
            "[[rules]]\nid = \"test-get\"\npattern = \"^getx$\"\nfield = \"program\"\n\
             policy = \"allow\"\nreason = \"the test's client\"\n\
             needs = {{ network = [\"localhost:{a}\"] }}\n"
        ),
    )
    .unwrap();
    let line = format!("getx http://localhost:{b}/");
    let (code, text) = lab.agent_runs(&line);
    assert_ne!(code, 0, "{text}");
    assert!(
        text.contains(&format!("refused a connection to localhost:{b}"))
            && text.contains(&format!("\"network\":[\"localhost:{b}\"]")),
        "the refusal does not name the host: {text}"
    );
    assert_eq!(
        wanted.load(SeqCst),
        0,
        "the refused request arrived: {text}"
    );
    let (seen, code) = lab.person_runs(&line, &["y"]);
    assert_eq!(code, 0, "{seen}");
    assert!(seen.contains(&format!("localhost:{b}")), "{seen}");
    assert!(seen.contains("served"), "{seen}");
    assert_eq!(wanted.load(SeqCst), 1, "{seen}");
}

/// "Always" is offered on the question about the line's own grant only: the escalation that
/// follows a refusal asks about a wider grant, and its yes is for that run alone.
#[test]
fn always_is_not_offered_for_an_escalations_wider_grant() {
    let lab = Lab::new();
    let (_, a) = http_server();
    let (_, b) = http_server();
    // A `curl` that fetches another host than the one its line names.
    let other = lab.dir.path().join("other-url");
    std::fs::write(&other, format!("http://localhost:{b}/")).unwrap();
    support::write_executable(
        &lab.dir.path().join("bin/curl"),
        format!(
            "#!/usr/bin/python3\nimport urllib.request\n\
             url = open({:?}).read()\n\
             print(urllib.request.urlopen(url, timeout=20).read().decode())\n",
            other.display().to_string()
        ),
    );
    let (seen, _) = lab.person_runs(&format!("curl http://localhost:{a}/"), &["y", "n"]);
    let questions: Vec<&str> = seen.split("approval is needed").skip(1).collect();
    assert_eq!(questions.len(), 2, "{seen}");
    assert!(
        questions[0].contains("a = always allow this line"),
        "{seen}"
    );
    assert!(questions[1].contains(&format!("localhost:{b}")), "{seen}");
    assert!(!questions[1].contains("a = always"), "{seen}");
}

/// A server a line starts on a port nobody named (a dev server): the sandbox refuses its `bind`,
/// naming the address; an agent gets that refusal with the missing grant; a person is asked to
/// run it again once listening on that port on loopback, says yes, and the server is reached
/// from outside, bound on loopback though it asked for every address.
#[test]
fn escalation_runs_a_refused_server_again_once_listening_on_that_port() {
    let lab = Lab::new();
    support::write_executable(
        &lab.dir.path().join("bin/servex"),
        "#!/usr/bin/python3\n\
         import socket, sys\n\
         s = socket.socket()\n\
         s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
         s.bind(('0.0.0.0', int(sys.argv[1])))\n\
         s.listen(1)\n\
         s.settimeout(20)\n\
         c, _ = s.accept()\n\
         c.sendall(('served from %s' % s.getsockname()[0]).encode())\n",
    );
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let line = format!("servex {port}");
    let (code, text) = lab.agent_runs(&line);
    assert_ne!(code, 0, "{text}");
    assert!(
        text.contains(&format!("listening on 0.0.0.0:{port}"))
            && text.contains(&format!("\"listen\":[{port}]")),
        "the refusal names neither the address nor the grant: {text}"
    );
    let client = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(25);
        while std::time::Instant::now() < deadline {
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
                let mut got = String::new();
                let _ = std::io::Read::read_to_string(&mut stream, &mut got);
                return got;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        String::new()
    });
    let (seen, code) = lab.person_runs(&line, &["y"]);
    assert_eq!(code, 0, "{seen}");
    assert!(
        seen.contains(&format!("listens on loopback tcp:{port}")),
        "the question does not offer the port: {seen}"
    );
    assert_eq!(client.join().unwrap(), "served from 127.0.0.1", "{seen}");
}

/// A build fetches only what its cache lacks (`cargo build`, a stand-in here): with everything
/// cached it runs without the network and nobody is asked (an agent's line too, which was refused
/// for approval before); one that turns out to fetch is refused the connection, and offered once
/// the fetch's grant (TCP 443, the registry cache) with the port it tried; its first run was told
/// not to retry.
#[test]
fn a_build_is_asked_about_only_when_it_fetches() {
    let lab = Lab::new();
    support::write_executable(
        &lab.dir.path().join("bin/cargo"),
        "#!/bin/bash\n\
         echo \"retries=${CARGO_NET_RETRY-unset}\"\n\
         if [[ -e need-fetch ]]; then\n\
           exec 3<>\"/dev/tcp/127.0.0.1/$(cat need-fetch)\" || exit 101\n\
           echo fetched\n\
         fi\n\
         echo built\n",
    );
    let (code, text) = lab.agent_runs("cargo build");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("retries=0\nbuilt"), "{text}");
    let (registry, port) = listener();
    std::fs::write(lab.ws().join("need-fetch"), port.to_string()).unwrap();
    let (code, text) = lab.agent_runs("cargo build");
    assert_ne!(code, 0, "{text}");
    assert!(!reached(&registry), "{text}");
    assert!(
        text.contains(&format!(
            "\"network\":[{port},\"crates.io:443\",\"index.crates.io:443\",\"static.crates.io:443\"]"
        ))
            && text.contains("\"writable\":[\"~/.cargo/registry\",\"~/.cargo/git\"]"),
        "the refusal does not offer the fetch's grant: {text}"
    );
    let (seen, code) = lab.person_runs("cargo build", &["y"]);
    assert_eq!(code, 0, "{seen}");
    assert!(
        seen.contains(&format!("tcp:{port},crates.io:443")) && seen.contains("~/.cargo/registry"),
        "the question does not offer the fetch's grant: {seen}"
    );
    assert!(
        seen.contains("retries=unset\r\nfetched"),
        "the run with the grant: {seen}"
    );
    assert!(reached(&registry), "{seen}");
}

/// `go build` (a stand-in here) writes its build cache on every run — the workspace's lines'
/// own, granted unasked — and fetches on demand: with its modules cached it runs and nobody is
/// asked; one that must fetch a module is refused, and the refusal offers go's hosts and the
/// module cache. The person's own go caches are never written.
#[test]
fn a_go_build_writes_its_lines_build_cache_and_fetches_on_demand() {
    let lab = Lab::new();
    support::write_executable(
        &lab.dir.path().join("bin/go"),
        "#!/bin/bash\n\
         echo built > \"$GOCACHE/entry\" || exit 1\n\
         echo \"cache=$GOCACHE\"\n\
         if [[ -e need-module ]]; then\n\
           echo module > \"$GOMODCACHE/m\" || exit 1\n\
         fi\n\
         echo built\n",
    );
    let (code, text) = lab.agent_runs("go build ./...");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("built"), "{text}");
    assert!(
        text.contains(&format!(
            "cache={}",
            lab.user.home.join(".cache/shellgate-lines").display()
        )),
        "{text}"
    );
    assert!(!lab.user.home.join(".cache/go-build").exists());
    std::fs::write(lab.ws().join("need-module"), "").unwrap();
    let (code, text) = lab.agent_runs("go build ./...");
    assert_ne!(code, 0, "{text}");
    assert!(
        text.contains("\"network\":[\"proxy.golang.org:443\",\"sum.golang.org:443\"]")
            && text.contains("~/.cache/shellgate-lines/go-mod"),
        "the refusal does not offer the fetch's grant: {text}"
    );
}

/// `npx TOOL` (real npm): the project's own `node_modules/.bin/TOOL` runs unasked and without the
/// network, and its own failure is its own (npm's version check and log, off for that run, are not
/// taken for a fetch); a tool the project lacks fails at once in the sandbox (no retries) and the
/// refusal offers the registry's grant. Nothing leaves the machine: the sandbox has no network,
/// and the yes that would fetch is not given.
#[test]
fn npx_runs_the_projects_own_tool_unasked_and_asks_only_to_fetch() {
    let lab = Lab::new();
    assert!(
        Path::new("/usr/bin/npx").exists(),
        "npm is installed: .ci/run installs it"
    );
    let ws = lab.ws();
    std::fs::write(
        ws.join("package.json"),
        "{\"name\": \"demo\", \"version\": \"1.0.0\"}\n",
    )
    .unwrap();
    let tools = ws.join("node_modules/.bin");
    std::fs::create_dir_all(&tools).unwrap();
    support::write_executable(
        &tools.join("hello"),
        "#!/bin/sh\necho \"project tool $* retries=$npm_config_fetch_retries\"\n",
    );
    support::write_executable(
        &tools.join("typecheck"),
        "#!/bin/sh\necho 'type error'\nexit 2\n",
    );
    let (code, text) = lab.agent_runs("npx hello a b");
    assert_eq!(code, 0, "{text}");
    // The lines' caches are set without a word from npm (pnpm's settings are pnpm's lines' only).
    assert!(!text.contains("Unknown env config"), "{text}");
    // Told not to retry a fetch (npm retrying a lookup it cannot make takes over a minute).
    assert!(text.contains("project tool a b retries=0"), "{text}");
    // npm removes logs beyond its limit on every run: old ones in the cache change nothing.
    let logs = lab.user.home.join(".cache/shellgate-lines/npm/_logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("2026-01-01T00_00_00_000Z-debug-0.log"), "old\n").unwrap();
    let (code, text) = lab.agent_runs("npx typecheck");
    assert_eq!(code, 2, "the tool's own failure is its own: {text}");
    assert!(!text.contains("SANDBOX_DENIED"), "{text}");
    let (code, text) = lab.agent_runs("npx shellgate-test-no-such-tool");
    assert_eq!(code, 217, "{text}");
    assert!(
        text.contains("registry.npmjs.org:443")
            && text.contains("\"writable\":[\"~/.cache/shellgate-lines/npm\"]"),
        "the refusal does not offer the fetch's grant: {text}"
    );
}

/// An ssh agent the test starts, with one key added; ended with the test.
struct Agent {
    child: std::process::Child,
    socket: PathBuf,
}

impl Agent {
    fn start(dir: &Path, name: &str) -> Agent {
        let socket = dir.join(name);
        let child = Command::new("ssh-agent")
            .args(["-D", "-a"])
            .arg(&socket)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("ssh-agent (openssh-client) is installed: .ci/run installs it");
        for _ in 0..200 {
            if socket.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let key = dir.join(format!("{name}.key"));
        let made = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
            .arg(&key)
            .status()
            .unwrap();
        assert!(made.success());
        let added = Command::new("ssh-add")
            .arg(&key)
            .env("SSH_AUTH_SOCK", &socket)
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(added.success());
        Agent { child, socket }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A stand-in ssh server on `server`: it sends an ssh banner to each connection, reads the
/// client's, and hangs up (ssh then fails its handshake), counting the connections.
fn ssh_stand_in(server: TcpListener) -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
    use std::io::{Read, Write};
    let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for mut stream in server.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let _ = stream.write_all(b"SSH-2.0-OpenSSH_9.2 shellgate-test\r\n");
            let mut hello = [0u8; 64];
            let _ = stream.read(&mut hello);
        }
    });
    served
}

/// ssh's grant names its host (not its port on every host): after a person's yes, `ssh -p P
/// box.test` reaches the server at the addresses shellgate resolved for `box.test` — a name ssh
/// resolves in the sandbox only from the line's own `/etc/hosts`, which shellgate wrote, as ssh
/// reads no proxy variable — and another host's address on the same port is refused and named.
/// The names are the test's own: as root, shellgate runs in a mount namespace whose `/etc/hosts`
/// the test wrote; unprivileged, the host is granted by address.
#[test]
fn ssh_after_a_yes_reaches_its_host_and_no_other() {
    let lab = Lab::new();
    let server = TcpListener::bind("127.0.0.2:0").unwrap();
    let port = server.local_addr().unwrap().port();
    let other = TcpListener::bind(format!("127.0.0.3:{port}")).unwrap();
    other.set_nonblocking(true).unwrap();
    let served = ssh_stand_in(server);
    let named = support::geteuid() == 0;
    let host = if named { "box.test" } else { "127.0.0.2" };
    let hosts = lab.user.home.join("hosts");
    std::fs::write(&hosts, "127.0.0.1 localhost\n127.0.0.2 box.test\n").unwrap();
    let ssh = |host: &str| {
        format!(
            "ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
             -p {port} {host} true"
        )
    };
    // As root, the test's own home stands over root's in the password database's place, where
    // ssh reads its config (not `$HOME`).
    let root_home = PathBuf::from("/root");
    let person_runs = |line: &str, answers: &[&str]| {
        let mut c = lab.command(&["run", "--", line]);
        if named {
            support::with_binds(
                &mut c,
                &[
                    (&hosts, Path::new("/etc/hosts")),
                    (&lab.user.home, &root_home),
                ],
            );
        }
        Lab::person_answers(c, line, answers, || {})
    };
    let (seen, code) = person_runs(&ssh(host), &["y"]);
    assert!(
        seen.contains(&format!("{host}:{port}")),
        "the question names the host: {seen}"
    );
    assert_eq!(code, 255, "ssh fails on the stand-in's handshake: {seen}");
    assert!(
        served.load(std::sync::atomic::Ordering::SeqCst) >= 1,
        "ssh did not reach {host}: {seen}"
    );
    assert!(!seen.contains("did not resolve"), "{seen}");
    // The same line then reaching another host's address on that port: refused, named (and the
    // escalation's offer declined).
    let line = format!(
        "{}; python3 -c 'import socket; socket.create_connection((\"127.0.0.3\", {port}))'",
        ssh(host)
    );
    let (seen, _) = person_runs(&line, &["y", "n"]);
    assert!(seen.contains(&format!("127.0.0.3:{port}")), "{seen}");
    match other.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        got => panic!("the other host was reached: {got:?}\n{seen}"),
    }
    // An alias in the person's ~/.ssh/config: asked about where it goes (its HostName and Port),
    // and reached after one yes (judged as typed, `box:22` was granted and ssh's connection to
    // the alias's address was refused, then offered in a second question). As root only: ssh
    // reads the password database's home, which only a mount namespace can make the test's.
    if !named {
        return;
    }
    let ssh_dir = lab.user.home.join(".ssh");
    std::fs::create_dir_all(&ssh_dir).unwrap();
    std::fs::write(
        ssh_dir.join("config"),
        format!("Host box\n    HostName {host}\n    Port {port}\n"),
    )
    .unwrap();
    let before = served.load(std::sync::atomic::Ordering::SeqCst);
    let alias =
        "ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null box true";
    let (seen, code) = person_runs(alias, &["y"]);
    assert!(seen.contains(&format!("{host}:{port}")), "{seen}");
    assert!(!seen.contains("box:22"), "{seen}");
    assert_eq!(
        code, 255,
        "one yes, then ssh's own failure on the stand-in: {seen}"
    );
    assert!(
        served.load(std::sync::atomic::Ordering::SeqCst) > before,
        "the alias's host was not reached: {seen}"
    );
    // scp to the alias: judged where it goes too, one yes, and the host reached.
    let before = served.load(std::sync::atomic::Ordering::SeqCst);
    std::fs::write(lab.ws().join("f"), "x").unwrap();
    let copy = "scp -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
                f box:/tmp/";
    let (seen, _) = person_runs(copy, &["y"]);
    assert!(seen.contains(&format!("{host}:{port}")), "{seen}");
    assert!(!seen.contains("box:22"), "{seen}");
    assert_eq!(seen.matches("approval is needed").count(), 1, "{seen}");
    assert!(
        served.load(std::sync::atomic::Ordering::SeqCst) > before,
        "scp did not reach the alias's host: {seen}"
    );
}

/// "Always" to an ssh line that names its host: the person's answer writes a rule for exactly
/// that line with its host and the agent's socket, and the same line then reaches the host with
/// nobody asked (an agent's run); another remote command to the same host is asked as before.
#[test]
fn always_to_an_ssh_line_reaches_its_host_unasked() {
    let lab = Lab::new();
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::start(dir.path(), "granted");
    let server = TcpListener::bind("127.0.0.2:0").unwrap();
    let port = server.local_addr().unwrap().port();
    let served = ssh_stand_in(server);
    let ssh = |command: &str| {
        format!(
            "ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
             -p {port} 127.0.0.2 {command}"
        )
    };
    let (seen, code) = lab.person_runs_with(
        &[("SSH_AUTH_SOCK", &agent.socket)],
        &ssh("true"),
        &["a"],
        || {},
    );
    assert!(seen.contains("a = always"), "{seen}");
    assert_ne!(code, 0, "ssh fails on the stand-in's handshake: {seen}");
    // ssh's own words on the stand-in's handshake: "Connection closed" or "reset".
    assert!(seen.contains(" by 127.0.0.2 port"), "{seen}");
    let config = std::fs::read_to_string(lab.user.config().join("shellgate/config.toml")).unwrap();
    assert!(
        config.contains("field = \"line\"") && config.contains("sockets = [\"ssh-agent\"]"),
        "{config}"
    );
    let unasked = |line: &str| lab.agent_runs_with(&[("SSH_AUTH_SOCK", &agent.socket)], line);
    let before = served.load(std::sync::atomic::Ordering::SeqCst);
    let (_, text) = unasked(&ssh("true"));
    assert!(text.contains(" by 127.0.0.2 port"), "{text}");
    assert!(!text.contains("APPROVAL"), "{text}");
    assert!(
        served.load(std::sync::atomic::Ordering::SeqCst) > before,
        "the host was not reached: {text}"
    );
    let before = served.load(std::sync::atomic::Ordering::SeqCst);
    let (_, text) = unasked(&ssh("id"));
    assert!(text.contains("APPROVAL_UNAVAILABLE"), "{text}");
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), before);
}

/// The ssh agent's socket is a grant a person gives: after a yes the line reaches exactly the
/// agent its caller's `SSH_AUTH_SOCK` names (`ssh-add -l` lists the key: the supervisor made the
/// connection), never another agent the line names itself; without a person (a rule's allow)
/// the grant is not passed and the agent is out of reach.
#[test]
fn the_ssh_agent_is_reached_only_after_a_persons_yes() {
    let lab = Lab::new();
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::start(dir.path(), "granted");
    let other = Agent::start(dir.path(), "other");
    let config = lab.user.config().join("shellgate/config.toml");
    let rule = |policy: &str| {
        format!(
            "[[rules]]\nid = \"test-agent\"\npattern = \"^ssh-add$\"\nfield = \"program\"\n\
             policy = \"{policy}\"\nreason = \"lists the agent's keys\"\n\
             needs = {{ sockets = [\"ssh-agent\"] }}\n"
        )
    };
    std::fs::write(&config, rule("human")).unwrap();
    let with_agent = |line: &str, answers: &[&str]| {
        lab.person_runs_with(&[("SSH_AUTH_SOCK", &agent.socket)], line, answers, || {})
    };
    let (seen, code) = with_agent("ssh-add -l", &["y"]);
    assert_eq!(code, 0, "{seen}");
    assert!(seen.contains("your ssh agent's socket"), "{seen}");
    assert!(
        seen.contains("ED25519") && seen.contains("granted"),
        "{seen}"
    );
    // The line names another agent itself: refused (SANDBOX_DENIED), and named.
    let line = format!("SSH_AUTH_SOCK={} ssh-add -l", other.socket.display());
    let (seen, code) = with_agent(&line, &["y"]);
    assert_eq!(code, 217, "{seen}");
    assert!(!seen.contains("other (ED25519)"), "{seen}");
    assert!(
        seen.contains(&format!("the unix socket {}", other.socket.display())),
        "{seen}"
    );
    // The granted path, in a directory the line can write (/tmp), replaced by a link to the
    // other agent: the connection still reaches the socket held since the line started.
    let line = format!(
        "rm -f {g} && ln -s {o} {g} && ssh-add -l",
        g = agent.socket.display(),
        o = other.socket.display()
    );
    let (seen, code) = with_agent(&line, &["y"]);
    assert!(
        std::fs::symlink_metadata(&agent.socket).is_ok_and(|m| m.file_type().is_symlink()),
        "the line did not replace the path: {seen}"
    );
    assert_eq!(code, 0, "{seen}");
    assert!(
        seen.contains("granted (ED25519)") && !seen.contains("other (ED25519)"),
        "{seen}"
    );
    // An earlier line left the link in place (a later line's grant is taken with the path as it
    // is then): the link is not followed, and the granted line reaches no agent at all.
    let (seen, code) = with_agent("ssh-add -l", &["y"]);
    assert_ne!(code, 0, "{seen}");
    assert!(!seen.contains("other (ED25519)"), "{seen}");
    // Allowed by a rule on the program, with nobody to say yes: no socket.
    std::fs::write(&config, rule("allow")).unwrap();
    let (code, text) = lab.agent_runs_with(&[("SSH_AUTH_SOCK", &agent.socket)], "ssh-add -l");
    assert_eq!(code, 2, "{text}");
    // The person's own rule for exactly this line, declaring the socket (what an "always"
    // answer writes): a yes to the line for good, and the agent is reached unasked.
    let agent = Agent::start(dir.path(), "always");
    std::fs::write(
        &config,
        "[[rules]]\nid = \"always-agent\"\npattern = \"^ssh-add\\\\x{20}-l$\"\n\
         field = \"line\"\npolicy = \"allow\"\nreason = \"always\"\n\
         needs = { sockets = [\"ssh-agent\"] }\n",
    )
    .unwrap();
    let (code, text) = lab.agent_runs_with(&[("SSH_AUTH_SOCK", &agent.socket)], "ssh-add -l");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("always (ED25519)"), "{text}");
}

/// The person's "no" to an escalation is recorded like every other decision; a log that cannot
/// take it fails the line as an audit failure (naming the sandbox's refusal), never a refusal
/// that went unrecorded. The log breaks while the question waits for its answer.
#[test]
fn an_escalation_refusal_the_log_cannot_take_fails_as_an_audit_failure() {
    let lab = Lab::new();
    let (granted, a) = listener();
    let (wanted, b) = listener();
    lab.rule(Some(&format!("{{ network = [{a}] }}")));
    let log = lab
        .user
        .state()
        .join("shellgate/sessions/grants-test.jsonl");
    let (seen, code) = lab.person_runs_and(&format!("fetchx 127.0.0.1 {b}"), &["n"], || {
        // Its last megabyte holds no event: every later append fails.
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        file.write_all("x\n".repeat(1 << 20).as_bytes()).unwrap();
    });
    assert_eq!(code, 213, "{seen}");
    assert!(
        seen.contains("AUDIT_UNAVAILABLE") && seen.contains(&format!("127.0.0.1:{b}")),
        "{seen}"
    );
    assert!(!reached(&wanted) && !reached(&granted), "{seen}");
}

#[test]
fn escalation_runs_a_refused_write_again_once_with_that_directory() {
    let lab = Lab::new();
    lab.rule(None);
    let target = lab.other().join("made");
    let line = format!("touch {}", target.display());
    // As an agent: refused by the kernel, reported with the path and the directory it would need.
    let (code, out) = lab.agent_runs(&line);
    assert_eq!(code, 217, "{out}");
    assert!(
        out.contains(&target.display().to_string()),
        "no path: {out}"
    );
    assert!(out.contains("\"writable\""), "no missing grant: {out}");
    assert!(!exists(&target));
    // With a person: asked, run again once with that directory writable.
    let (seen, code) = lab.person_runs(&line, &["y"]);
    assert_eq!(code, 0, "{seen}");
    assert!(exists(&target), "the rerun did not write: {seen}");
    // Only that directory: a line writing beside it in the home is refused as before.
    let beside = lab.user.home.join("beside");
    let (code, out) = lab.agent_runs(&format!("touch {}", beside.display()));
    assert_eq!(code, 217, "{out}");
    assert!(!exists(&beside));
    // And the grant was for that line only.
    let again = lab.other().join("again");
    let (code, out) = lab.agent_runs(&format!("touch {}", again.display()));
    assert_eq!(code, 217, "{out}");
    assert!(!exists(&again), "the grant outlived its line");
}

/// A push to a repository on this machine (a bare one beneath the home) asks nothing about the
/// network, is refused by the kernel, and after one yes works: the grant is the repository (its
/// objects, refs and the lock beside `HEAD`), not only the first directory refused. Its config
/// and hooks, which git runs later, stay read-only in the rerun.
#[test]
fn a_push_to_a_repository_on_this_machine_works_after_one_yes() {
    let lab = Lab::new();
    lab.rule(None);
    let git = |dir: &Path, args: &[&str]| support::git(dir, &lab.user.home, args);
    git(&lab.ws(), &["commit", "-q", "--allow-empty", "-m", "one"]);
    let bare = lab.other().join("backup.git");
    git(&lab.other(), &["init", "-q", "--bare", "backup.git"]);
    let config = std::fs::read(bare.join("config")).unwrap();
    let (seen, code) = lab.person_runs(
        &format!("git push -q {} HEAD:refs/heads/main", bare.display()),
        &["y"],
    );
    assert_eq!(code, 0, "{seen}");
    assert!(!seen.contains("network"), "asked about the network: {seen}");
    assert!(bare.join("refs/heads/main").exists(), "not pushed: {seen}");
    // The same grant, a line that also plants a hook and changes the config: the push works,
    // the rest is refused.
    let hook = bare.join("hooks/post-receive");
    let (seen, code) = lab.person_runs(
        &format!(
            "git push -q {0} HEAD:refs/heads/second; echo 'touch /tmp/x' > {1}; \
             printf '[core]\\n\\thooksPath = /tmp\\n' >> {0}/config",
            bare.display(),
            hook.display()
        ),
        &["y"],
    );
    assert_ne!(code, 0, "{seen}");
    assert!(seen.contains("backup.git"), "{seen}");
    assert!(
        bare.join("refs/heads/second").exists(),
        "not pushed: {seen}"
    );
    assert!(
        !exists(&hook),
        "a hook was planted in the granted repository"
    );
    assert_eq!(std::fs::read(bare.join("config")).unwrap(), config);
}

/// A remote named on the line is judged by where the repository's config says it points: a
/// fetch from a repository on this machine needs no network and runs unasked; a push into one
/// outside the workspace is asked before it runs — even where a pipeline would hide its failure
/// from escalation — with exactly that repository writable, and then works; an HTTPS remote is
/// granted its host by name, not every host on 22 and 443.
#[test]
fn a_named_remote_is_judged_by_where_it_points() {
    let lab = Lab::new();
    lab.rule(None);
    let git = |dir: &Path, args: &[&str]| support::git(dir, &lab.user.home, args);
    git(&lab.ws(), &["commit", "-q", "--allow-empty", "-m", "one"]);
    git(&lab.other(), &["init", "-q", "--bare", "backup.git"]);
    let bare = lab.other().join("backup.git");
    let bare_text = bare.to_str().unwrap();
    git(&lab.ws(), &["remote", "add", "origin", bare_text]);
    git(
        &lab.ws(),
        &[
            "remote",
            "add",
            "hub",
            "https://github.example/team/app.git",
        ],
    );
    // Pushed into, asked first, with the repository (and nothing of the network) in the question.
    let (seen, code) = lab.person_runs(
        "git push -q origin HEAD:refs/heads/main 2>&1 | tail -1",
        &["y"],
    );
    assert_eq!(code, 0, "{seen}");
    assert!(
        seen.contains("it pushes into the repository ~/other/backup.git"),
        "{seen}"
    );
    assert!(seen.contains("writes:  ~/other/backup.git"), "{seen}");
    assert!(!seen.contains("network"), "asked about the network: {seen}");
    assert!(bare.join("refs/heads/main").exists(), "not pushed: {seen}");
    // Fetched from, unasked: an agent with nobody to ask gets it done.
    let (code, text) = lab.agent_runs("git fetch -q origin");
    assert_eq!(code, 0, "{text}");
    assert!(
        lab.ws().join(".git/refs/remotes/origin/main").exists(),
        "{text}"
    );
    // An HTTPS remote: its host, by name.
    let out = lab
        .command(&["check", "--json", "git fetch hub"])
        .output()
        .unwrap();
    let decision: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        decision["network"],
        serde_json::json!(["github.example:443"])
    );
    assert!(decision.get("sockets").is_none(), "{decision}");
}

/// In a repository with no remotes, `git push`, `git pull` and `git fetch origin` have nowhere to
/// go: they are not asked about and fail with git's own words (without the judgement by the
/// repository's config, each needed the network, and an agent with nobody to ask was refused
/// before git ran). A branch whose remote is a URL still sends git out: the sandbox, which holds
/// the network, refuses that connection and names it.
#[test]
fn a_repository_without_remotes_is_not_asked_about_the_network() {
    let lab = Lab::new();
    lab.rule(None);
    let git = |args: &[&str]| support::git(&lab.ws(), &lab.user.home, args);
    git(&["commit", "-q", "--allow-empty", "-m", "one"]);
    for (line, status, says) in [
        ("git push", 128, "No configured push destination"),
        ("git pull", 1, "There is no tracking information"),
        (
            "git fetch origin",
            128,
            "'origin' does not appear to be a git repository",
        ),
    ] {
        let out = lab.command(&["check", "--json", line]).output().unwrap();
        let decision: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_ne!(decision["decision"], "ask", "{line}: {decision}");
        assert_eq!(decision["network"], "off", "{line}: {decision}");
        let (code, text) = lab.agent_runs(line);
        assert_eq!(code, status, "{line}: {text}");
        assert!(text.contains(says), "{line}: {text}");
        assert!(!text.contains("SANDBOX_DENIED"), "{line}: {text}");
    }
    // A branch's remote that is a URL: git goes there, the sandbox refuses, and says where.
    let spare = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = spare.local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/x.git");
    let branch = String::from_utf8(
        std::process::Command::new("git")
            .args(["symbolic-ref", "--short", "HEAD"])
            .current_dir(lab.ws())
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    git(&["config", &format!("branch.{}.remote", branch.trim()), &url]);
    git(&[
        "config",
        &format!("branch.{}.merge", branch.trim()),
        "refs/heads/main",
    ]);
    let (code, text) = lab.agent_runs("git pull");
    assert_eq!(code, 217, "{text}");
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
}

/// A line's processes end with it: one it left running that ends by itself within a moment (git's
/// detached auto-maintenance after a commit) finishes its work unnoticed; one that does not is
/// killed, said so, and never does what it was left to do.
#[test]
fn processes_a_line_leaves_running_get_a_moment_and_then_end_with_it() {
    let lab = Lab::new();
    lab.rule(None);
    let quick = lab.ws().join("quick");
    let late = lab.ws().join("late");
    let (code, text) = lab.agent_runs("(sleep 0.05; echo done > quick) & echo started");
    assert_eq!(code, 0, "{text}");
    assert!(exists(&quick), "the quick one was killed: {text}");
    assert!(!text.contains("left running"), "{text}");
    let (code, text) = lab.agent_runs("(sleep 2; echo done > late) & echo started");
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("processes this line left running were stopped with it"),
        "{text}"
    );
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(!exists(&late), "a process outlived its line");
    // Orphans exiting all the time (each reaped by the line's init) do not stretch the moment.
    let (code, text) = lab.agent_runs(
        "(while :; do (/bin/true &); done) & (while :; do (/bin/true &); done) & echo started",
    );
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("left running were stopped"), "{text}");
}

/// A line that writes its own output through `/proc/self/fd/1` or `/dev/stdout` and then fails
/// keeps its own exit status: nothing the sandbox refused, no escalation, no SANDBOX_DENIED.
#[test]
fn a_failing_line_that_wrote_its_own_output_keeps_its_status() {
    let lab = Lab::new();
    lab.rule(None);
    let (code, out) = lab.agent_runs("echo one > /proc/self/fd/1; echo two > /dev/stdout; exit 3");
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("one") && out.contains("two"), "{out}");
    assert!(!out.contains("SANDBOX_DENIED"), "{out}");
    assert!(!lab.log_kinds().contains(&"sandbox/denied".to_owned()));
}

/// A refused write beneath the home's hidden directories (where configuration that runs later
/// lives: systemd user units, `~/.local/bin`, `~/.ssh`) is never offered as a grant.
#[test]
fn the_homes_hidden_directories_are_never_granted() {
    let lab = Lab::new();
    lab.rule(None);
    for dir in [".config/systemd/user", ".local/bin", ".ssh"] {
        let dir = lab.user.home.join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("planted");
        let (code, out) = lab.agent_runs(&format!("touch {}", target.display()));
        assert_eq!(code, 217, "{out}");
        assert!(
            out.contains("no sandboxed line can be granted"),
            "{dir:?} was offered: {out}"
        );
        assert!(!exists(&target));
    }
}

/// cargo reading only its index (`cargo update`, a stand-in here) runs with a cargo home of the
/// workspace's lines, which its grant writes; the person's `~/.cargo/registry`, which their own
/// builds compile from, stays read-only to it (with the grant it had before — the person's
/// registry — the stand-in's plant would land there). Its question offers "always", and the
/// same line then runs unasked; another cargo line is still asked.
#[test]
fn cargo_reading_its_index_writes_the_lines_cargo_home_and_may_be_always_allowed() {
    let lab = Lab::new();
    let registry = lab.user.home.join(".cargo/registry");
    std::fs::create_dir_all(&registry).unwrap();
    support::write_executable(
        &lab.dir.path().join("bin/cargo"),
        "#!/bin/bash\n\
         echo \"home=$CARGO_HOME\"\n\
         mkdir -p \"$CARGO_HOME/registry/index\" && echo idx > \"$CARGO_HOME/registry/index/entry\" \\\n\
           && echo 'index written'\n\
         echo plant 2>/dev/null > \"$HOME/.cargo/registry/planted\" && echo 'registry planted'\n\
         exit 0\n",
    );
    let (seen, code) = lab.person_runs("cargo update", &["a"]);
    assert_eq!(code, 0, "{seen}");
    assert!(
        seen.contains("~/.cache/shellgate-lines/cargo-home") && seen.contains("a = always"),
        "the question: {seen}"
    );
    let lines_caches = lab.user.home.join(".cache/shellgate-lines");
    assert!(
        seen.contains(&format!("home={}", lines_caches.display()))
            && seen.contains("index written"),
        "{seen}"
    );
    assert!(!seen.contains("registry planted"), "{seen}");
    assert!(!registry.join("planted").exists());
    let (code, text) = lab.agent_runs("cargo update");
    assert_eq!(code, 0, "the same line is asked again: {text}");
    assert!(text.contains("index written"), "{text}");
    let (code, text) = lab.agent_runs("cargo fetch");
    assert_ne!(code, 0, "{text}");
    assert!(text.contains("APPROVAL_UNAVAILABLE"), "{text}");
    assert!(!registry.join("planted").exists());
}
