//! The shell hooks in real shells: interactive bash and zsh in a pseudo-terminal (rexpect), with
//! the README's init line in real startup files, and agent-style `bash -c` / `zsh -c` through
//! `BASH_ENV` and `ZDOTDIR`. Every test checks effects (marker files, the shell's working
//! directory, variables and status shown in its prompt), not only output.
//!
//! A test config allows the programs the tests use (`touch`, `sleep`, the startup files' `gs` and
//! `greet`, the venv's tool) so that a line can run without asking, and makes `mkdir` need a
//! person in every mode; other commands may be asked about on the terminal (depending on the
//! mode's defaults), and [`Shell::run`] answers.
//!
//! zsh, shellcheck and pwsh tests are ignored, with the reason, where the program is missing
//! (`build.rs` finds them).

use crate::support;

use rexpect::session::PtySession;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const SHELLGATE: &str = env!("CARGO_BIN_EXE_shellgate");
const TIMEOUT_MS: u64 = 20_000;
/// The prompt shows `$?` (`%?` in zsh): every test sees the status the shell itself has.
const PROMPT_RE: &str = r"\[(\d+)\]PROMPT\$ ";
/// A question of shellgate's: allow a line, or apply what it changed.
const QUESTION_RE: &str = r"Allow once\? \[y/N[^\n]*\(\d+ s\) |apply to this shell\? \[[yY]/[nN]\] |Type .full. to confirm[^\n]*\(\d+ s\) ";

/// The init line for `shell` as the README shows it (one line, which the tests put in the
/// startup files exactly as a person would).
fn readme_init_line(shell: &str) -> String {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    readme
        .lines()
        .find(|l| {
            l.starts_with(&format!(
                "eval \"$(\"$HOME/.local/bin/shellgate\" init {shell} "
            ))
        })
        .unwrap_or_else(|| panic!("the README shows no init line for {shell}"))
        .to_owned()
}

/// A home of its own with the README's init line in `.bashrc`, `.zshrc` and `.zshenv`, a
/// workspace, state and config for one test, plus a directory outside every sandbox-writable
/// root for markers that must not appear; all outside /tmp (see [`support::scratch_dir`]).
struct Fixture {
    _tmp: tempfile::TempDir,
    user: support::Home,
    home: PathBuf,
    ws: PathBuf,
    outside: PathBuf,
    bin: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture::with_rc("")
    }

    /// `extra` goes at the end of both interactive startup files.
    fn with_rc(extra: &str) -> Fixture {
        Fixture::in_dir(support::scratch_dir(), extra)
    }

    /// In `tmp`, with `extra` at the end of both interactive startup files.
    fn in_dir(tmp: tempfile::TempDir, extra: &str) -> Fixture {
        let user = support::Home::at(tmp.path().join("home"));
        let home = user.home.clone();
        let ws = tmp.path().join("ws");
        let bin = tmp.path().join("bin");
        let outside = tmp.path().join("outside");
        for dir in [&ws, &bin, &outside, &home.join(".config/shellgate")] {
            std::fs::create_dir_all(dir).unwrap();
        }
        support::workspace(&ws);
        std::os::unix::fs::symlink(SHELLGATE, bin.join("shellgate")).unwrap();
        // Where install.sh puts it, and the README's init line names it.
        std::fs::create_dir_all(home.join(".local/bin")).unwrap();
        std::os::unix::fs::symlink(SHELLGATE, home.join(".local/bin/shellgate")).unwrap();
        std::fs::write(
            home.join(".config/shellgate/config.toml"),
            "[[rules]]\nid = \"test-allow\"\npattern = \"^(touch|sleep|gs|greet|venvtool|lsx)$\"\n\
             field = \"program\"\npolicy = \"allow\"\nreason = \"tests leave marker files\"\n\n\
             [[rules]]\nid = \"test-ask-mkdir\"\npattern = \"^mkdir$\"\nfield = \"program\"\n\
             policy = \"human\"\nreason = \"tests ask\"\n",
        )
        .unwrap();
        let init = |shell: &str| {
            let out = support::isolate(&mut Command::new(SHELLGATE), &user)
                .args(["init", shell])
                .output()
                .unwrap();
            assert!(out.status.success());
            String::from_utf8(out.stdout).unwrap()
        };
        // For agent shells started with BASH_ENV.
        std::fs::write(home.join("hook.bash"), init("bash")).unwrap();
        std::fs::write(home.join("hook.zsh"), init("zsh")).unwrap();
        let common = "alias gs='echo GS-$((40+2))'\nPLAIN_VAR=pl41n\nSECRET_VAR=s3cr3t\n";
        std::fs::write(
            home.join(".bashrc"),
            format!(
                "PS1='[$?]PROMPT$ '\nHISTCONTROL=ignoreboth\n{common}\
                 greet() {{ echo \"hello-$((6*7)) $1\"; }}\n{}\n{extra}\n",
                readme_init_line("bash")
            ),
        )
        .unwrap();
        std::fs::write(
            home.join(".zshrc"),
            format!(
                "PS1='[%?]PROMPT$ '\nsetopt histignorespace\n{common}\
                 greet() {{ print -r -- \"hello-$((6*7)) $1\" }}\n{}\n{extra}\n",
                readme_init_line("zsh")
            ),
        )
        .unwrap();
        // zsh -c reads .zshenv: agent shells get the hook there.
        std::fs::write(
            home.join(".zshenv"),
            format!("{}\n", readme_init_line("zsh")),
        )
        .unwrap();
        Fixture {
            _tmp: tmp,
            user,
            home,
            ws,
            outside,
            bin,
        }
    }

    /// A clean environment: no inherited hooks, sessions or ignored signals; shellgate on PATH.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        support::isolate(&mut c, &self.user)
            .current_dir(&self.ws)
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .env("TERM", "xterm");
        c
    }

    fn interactive(&self, shell: &str) -> Shell {
        self.spawn(self.command(shell), shell)
    }

    /// The shell with shellgate's binary neither where the init line names it nor on PATH.
    fn interactive_without_binary(&self, shell: &str) -> Shell {
        self.remove_binary();
        let mut command = self.command(shell);
        command.env("PATH", "/usr/bin:/bin");
        self.spawn(command, shell)
    }

    /// Removes the binary from where the init line names it (as an uninstall would).
    fn remove_binary(&self) {
        let _ = std::fs::remove_file(self.home.join(".local/bin/shellgate"));
    }

    /// Puts a binary of its own where the init line names it (a hard link, or a copy on another
    /// file system), instead of the link to the build: the hook names the binary it was started
    /// as, and removing this one removes the hook's binary.
    fn own_binary(&self) -> PathBuf {
        let installed = self.home.join(".local/bin/shellgate");
        self.remove_binary();
        if std::fs::hard_link(SHELLGATE, &installed).is_err() {
            support::copy_executable(Path::new(SHELLGATE), &installed);
        }
        installed
    }

    fn spawn(&self, mut command: Command, shell: &str) -> Shell {
        match shell {
            "bash" => {
                command
                    .args(["--noprofile", "--rcfile"])
                    .arg(self.home.join(".bashrc"))
                    .arg("-i");
            }
            _ => {
                command.env("ZDOTDIR", &self.home).arg("-i");
            }
        }
        let mut pty = rexpect::session::spawn_command(command, Some(TIMEOUT_MS)).unwrap();
        // Interactive shells ignore SIGTERM: when the test drops the session, SIGKILL soon after.
        pty.process_mut().set_kill_timeout(Some(200));
        let (startup, _) = pty.exp_regex(PROMPT_RE).expect("the shell's first prompt");
        Shell {
            pty,
            startup,
            zsh: shell == "zsh",
        }
    }

    /// A commit in the workspace and `origin`, a bare repository `~/backup.git` (returned).
    fn own_remote(&self) -> PathBuf {
        let git = |dir: &Path, args: &[&str]| support::git(dir, &self.home, args);
        git(&self.ws, &["commit", "-q", "--allow-empty", "-m", "one"]);
        git(&self.home, &["init", "-q", "--bare", "backup.git"]);
        let bare = self.home.join("backup.git");
        git(
            &self.ws,
            &["remote", "add", "origin", bare.to_str().unwrap()],
        );
        bare
    }

    fn marker(&self, name: &str) -> PathBuf {
        self.outside.join(name)
    }
}

struct Shell {
    pty: PtySession,
    /// What the shell printed before its first prompt.
    startup: String,
    zsh: bool,
}

impl Shell {
    /// Type a line, answer shellgate's questions with `answers` (then `y`), and return everything
    /// printed up to the next prompt and the status that prompt shows.
    fn run(&mut self, text: &str, answers: &[&str]) -> (String, i32) {
        let mut answers = answers.iter();
        self.answering(text, |_| answers.next().copied().unwrap_or("y").to_owned())
    }

    /// Type a line, answer the offer to run it outside the sandbox with `outside` and any other
    /// question with `y`; everything printed up to the next prompt, and its status.
    fn run_answering_outside(&mut self, text: &str, outside: &str) -> (String, i32) {
        self.answering(text, |question| {
            if question.contains("outside the sandbox, in this shell") {
                outside.to_owned()
            } else {
                "y".to_owned()
            }
        })
    }

    /// Type a line and answer each question with what `answer` makes of the text before it;
    /// everything printed up to the next prompt, and the status that prompt shows.
    fn answering(&mut self, text: &str, mut answer: impl FnMut(&str) -> String) -> (String, i32) {
        self.pty.send_line(text).unwrap();
        let mut out = String::new();
        loop {
            let (before, matched) = self
                .pty
                .exp_regex(&format!("{QUESTION_RE}|{PROMPT_RE}"))
                .unwrap_or_else(|e| panic!("no prompt after {text:?}: {e}\n{out}"));
            out.push_str(&before);
            if let Some(status) = matched.strip_prefix('[') {
                let status = status.split(']').next().unwrap_or("").parse().unwrap();
                return (out, status);
            }
            out.push_str(&matched);
            let reply = answer(&before);
            self.pty.send_line(&reply).unwrap();
        }
    }

    /// Type a line and return its output (questions answered `y`).
    fn line(&mut self, text: &str) -> String {
        self.run(text, &[]).0
    }

    /// Type a line that will be asked about, answer it, and return the output up to the prompt.
    fn line_answered(&mut self, text: &str, answer: &str) -> String {
        let (out, _) = self.run(text, &[answer]);
        assert!(
            out.contains("approval is needed") || out.contains("apply to this shell"),
            "{text:?} was not asked about: {out}"
        );
        out
    }
}

fn run(mut command: Command) -> Output {
    command.output().unwrap()
}

/// `text` as a person sees it: without terminal escape sequences and carriage returns.
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for n in chars.by_ref() {
                        if n.is_ascii_alphabetic() || n == '~' {
                            break;
                        }
                    }
                } else {
                    chars.next();
                }
            }
            '\r' => {}
            _ => out.push(c),
        }
    }
    out
}

// ------------------------------------------------------------------------------------------------
// Interactive shells: what runs, and where.

fn allowed_line_runs_once(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    // Declining (Enter) the offer to run it outside the sandbox, which a person's shell makes.
    let (out, status) = sh.run_answering_outside(
        &format!("echo A$((40+2)); touch {}", f.marker("once").display()),
        "",
    );
    assert_eq!(out.matches("A42").count(), 1, "{out}");
    // The line ran; the person is told it failed in the sandbox, not that it did not run.
    assert_eq!(status, 217, "{out}");
    assert!(
        out.contains(
            "shellgate: failed in the sandbox: the line exited 1 after the sandbox refused"
        ),
        "{out}"
    );
    assert!(!out.contains("not run"), "{out}");
    assert_eq!(
        out.matches("A42").count(),
        1,
        "the line ran more than once: {out}"
    );
    // `touch` ran in the sandbox, which cannot write outside the workspace.
    assert!(
        !f.marker("once").exists(),
        "a sandboxed line wrote outside the workspace"
    );
    let out = sh.line("touch inside; echo done");
    assert!(out.contains("done"));
    assert!(f.ws.join("inside").exists());
    // Nothing of shellgate's own follows a line's output: the next prompt comes right after it.
    let (out, _) = sh.run("echo last-$((1+1))", &[]);
    // (zsh marks a partial last line with `%` or `#` and spaces before every prompt.)
    let text = plain(&out);
    let text = text.trim_end_matches(' ').trim_end_matches(['#', '%']);
    assert!(text.ends_with("last-2\n"), "{out:?}");
}

#[test]
fn bash_allowed_line_runs_once_in_the_sandbox() {
    allowed_line_runs_once("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_allowed_line_runs_once_in_the_sandbox() {
    allowed_line_runs_once("zsh");
}

fn denied_line_leaves_no_trace(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    let (out, status) = sh.run("cd /; X=1; touch marker; rm -rf ~", &[]);
    // A person gets a short reason, not the instruction meant for agents.
    assert!(out.contains("shellgate: not run: denied by rule"), "{out}");
    assert!(out.contains("never"), "{out}");
    assert!(!out.contains("Do not try"), "{out}");
    assert_eq!(status, 202, "a refused line has its own status: {out}");
    let out = sh.line("echo \"PWD=$PWD X=${X:-unset}\"");
    assert!(
        out.contains(&format!("PWD={} X=unset", f.ws.display())),
        "{out}"
    );
    assert!(
        !f.ws.join("marker").exists(),
        "the first command of a refused line ran"
    );
    assert!(f.home.exists());
    // A leading subshell is refused with the rest.
    sh.line("(touch sub); rm -rf ~");
    assert!(!f.ws.join("sub").exists());
}

#[test]
fn bash_denied_line_leaves_no_trace() {
    denied_line_leaves_no_trace("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_denied_line_leaves_no_trace() {
    denied_line_leaves_no_trace("zsh");
}

fn leading_space_line_is_checked(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    let out = sh.line(" touch hidden; rm -rf ~");
    assert!(out.contains("not run"), "{out}");
    assert!(!f.ws.join("hidden").exists());
}

#[test]
fn bash_leading_space_line_is_checked() {
    leading_space_line_is_checked("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_leading_space_line_is_checked() {
    leading_space_line_is_checked("zsh");
}

fn asked_line_runs_only_when_approved(shell: &str) {
    let f = Fixture::new();
    // `mkdir` needs a person in every mode (a rule of the fixture's).
    let mut sh = f.interactive(shell);
    let (out, status) = sh.run("mkdir rejected-dir", &["n"]);
    assert!(out.contains("approval is needed"), "{out}");
    assert!(out.contains("you answered no"), "{out}");
    assert_eq!(status, 204, "{out}");
    assert!(!f.ws.join("rejected-dir").exists());
    let out = sh.line_answered("mkdir approved-dir", "y");
    assert!(!out.contains("not run"), "{out}");
    assert!(f.ws.join("approved-dir").is_dir());
    // Asked once: the line's own gate is the only one (the backstop lets the call through).
    assert_eq!(out.matches("approval is needed").count(), 1, "{out}");
}

#[test]
fn bash_asked_line_runs_only_when_approved() {
    asked_line_runs_only_when_approved("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_asked_line_runs_only_when_approved() {
    asked_line_runs_only_when_approved("zsh");
}

/// A line granted a host by name runs with its own proxy in the proxy variables; that proxy is
/// gone with the line, so the variables never come back into the person's shell (nor are they
/// offered: applied, they would send every program the shell starts to a closed port). Typed by
/// the person, a line that needs only the hosts it names is not asked about.
fn a_granted_hosts_proxy_stays_in_its_line(shell: &str) {
    let f = Fixture::new();
    let port = support::serve_on_loopback(support::SERVED);
    let mut sh = f.interactive(shell);
    let (out, status) = sh.run(&format!("curl -s http://localhost:{port}/"), &["n"]);
    assert_eq!(status, 0, "{out}");
    assert!(!out.contains("approval is needed"), "asked: {out}");
    assert!(out.contains("served"), "{out}");
    assert!(!out.contains("apply to this shell"), "{out}");
    let out = sh.line("echo \"[${HTTPS_PROXY-}${http_proxy-}]\"");
    assert!(
        out.contains("[]"),
        "the proxy came back into the shell: {out}"
    );
}

#[test]
fn bash_a_granted_hosts_proxy_stays_in_its_line() {
    a_granted_hosts_proxy_stays_in_its_line("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_granted_hosts_proxy_stays_in_its_line() {
    a_granted_hosts_proxy_stays_in_its_line("zsh");
}

/// What a person's typed line is not asked about, the kernel still holds: the line gets the
/// hosts it names and nothing else. A redirect to another name for the same machine
/// (`127.0.0.1`) is refused by the line's proxy, named, and only then asked about — answered
/// no, the other server is never reached.
fn a_typed_lines_hosts_are_held_by_the_sandbox(shell: &str) {
    let f = Fixture::new();
    let target = support::serve_on_loopback(support::SERVED);
    let redirect = support::serve_on_loopback(format!(
        "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{target}/\r\nContent-Length: 0\r\n\
         Connection: close\r\n\r\n"
    ));
    let mut sh = f.interactive(shell);
    let mut questions: Vec<String> = Vec::new();
    let (out, status) = sh.answering(&format!("curl -fsSL http://localhost:{redirect}/"), |q| {
        questions.push(q.to_owned());
        "n".to_owned()
    });
    assert!(!out.contains("served"), "the other name was reached: {out}");
    assert_ne!(status, 0, "{out}");
    assert!(
        out.contains(&format!("127.0.0.1:{target}")),
        "the refusal names the host: {out}"
    );
    // The one question, if any, is the escalation for the refused host, not the line's own.
    assert!(
        questions
            .iter()
            .all(|q| q.contains(&format!("127.0.0.1:{target}"))
                && !q.contains(&format!("network: tcp:localhost:{redirect}\n"))),
        "{questions:#?}"
    );
}

#[test]
fn bash_a_typed_lines_hosts_are_held_by_the_sandbox() {
    a_typed_lines_hosts_are_held_by_the_sandbox("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_typed_lines_hosts_are_held_by_the_sandbox() {
    a_typed_lines_hosts_are_held_by_the_sandbox("zsh");
}

/// An install writes the lines' own package cache, never the person's (which their own installs
/// outside would read back): its grant gives exactly that (typed by the person, to the public
/// registry, it is not asked about); the cache's variable is the line's and does not come back
/// into the person's shell.
fn an_install_writes_the_lines_cache_only(shell: &str) {
    // The person's prompt shows the variable if it ever gets into their shell.
    let f = Fixture::with_rc(
        "if [ -n \"$ZSH_VERSION\" ]; then setopt promptsubst; \
         PS1='${npm_config_cache:+LEAKED}[%?]PROMPT$ '; \
         else PS1='${npm_config_cache:+LEAKED}[$?]PROMPT$ '; fi",
    );
    support::write_executable(
        &f.bin.join("npm"),
        "#!/bin/sh\necho \"cache=$npm_config_cache\"\n\
         echo \"seen=$(cat \"$npm_config_cache/_cacache/entry\" 2>/dev/null || echo none)\"\n\
         mkdir -p \"$npm_config_cache/_cacache\" && echo ok >\"$npm_config_cache/_cacache/entry\" \
         && echo wrote-the-lines-cache\n\
         mkdir -p \"$HOME/.npm\" 2>/dev/null; echo poison 2>/dev/null >\"$HOME/.npm/entry\" \
         && echo wrote-the-persons-cache\nexit 0\n",
    );
    let lines_caches = f.home.join(".cache/shellgate-lines");
    let mut sh = f.interactive(shell);
    // Typed by the person, to the public registry: not asked (the sandbox holds the host).
    let (out, status) = sh.run("npm install", &["n"]);
    assert_eq!(status, 0, "{out}");
    assert!(!out.contains("approval is needed"), "asked: {out}");
    // The workspace's own npm cache: `<home>/.cache/shellgate-lines/<workspace>-<hash>/npm`.
    let cache = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("cache="))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no cache: {out}"));
    assert!(
        cache.starts_with(&lines_caches) && cache.ends_with("npm"),
        "{out}"
    );
    let workspace_key = cache
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy();
    assert!(workspace_key.starts_with("ws-"), "{out}");
    assert!(out.contains("wrote-the-lines-cache"), "{out}");
    assert!(!out.contains("wrote-the-persons-cache"), "{out}");
    assert!(cache.join("_cacache/entry").is_file());
    assert!(!f.home.join(".npm/entry").exists());
    assert!(out.contains("seen=none"), "{out}");
    let (out, _) = sh.run("npm install", &["n"]);
    assert!(!out.contains("approval is needed"), "asked again: {out}");
    assert!(out.contains("wrote-the-lines-cache"), "{out}");
    assert!(
        out.contains("seen=ok"),
        "the workspace's cache is kept: {out}"
    );
    // Another workspace has a cache of its own: nothing a line wrote here reaches its installs.
    let other = f.ws.parent().unwrap().join("other");
    std::fs::create_dir_all(&other).unwrap();
    support::workspace(&other);
    sh.line(&format!("cd {}", other.display()));
    let (out, _) = sh.run("npm install", &["n"]);
    assert!(!out.contains("approval is needed"), "asked again: {out}");
    assert!(
        out.contains("seen=none"),
        "one workspace's cache reached another: {out}"
    );
    assert!(out.contains("wrote-the-lines-cache"), "{out}");
    assert!(
        !out.contains(&format!("cache={}", cache.display())),
        "{out}"
    );
    assert!(!out.contains("LEAKED"), "the line's cache came back: {out}");
    let out = sh.line("true");
    assert!(!out.contains("LEAKED"), "the line's cache came back: {out}");
}

#[test]
fn bash_an_install_writes_the_lines_cache_only() {
    an_install_writes_the_lines_cache_only("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_an_install_writes_the_lines_cache_only() {
    an_install_writes_the_lines_cache_only("zsh");
}

/// A build that fetches on demand runs told to fail a fetch at once (`CARGO_NET_RETRY=0` and
/// npm's settings); those are the line's, never offered back to the person's shell — `cargo
/// build` typed in a hooked shell asked "apply to this shell?" every time. A value the person
/// set themselves goes in and stays theirs.
fn a_builds_fetch_settings_stay_in_its_line(shell: &str) {
    let f = Fixture::new();
    support::write_executable(
        &f.bin.join("cargo"),
        "#!/bin/sh\necho \"built retries=$CARGO_NET_RETRY\"\n",
    );
    let mut sh = f.interactive(shell);
    let out = sh.line("cargo build");
    assert!(out.contains("built retries=0"), "{out}");
    assert!(!out.contains("apply to this shell"), "{out}");
    let out = sh.line("echo \"[${CARGO_NET_RETRY-}${npm_config_fetch_retries-}]\"");
    assert!(out.contains("[]"), "the build's settings came back: {out}");
    sh.line("export CARGO_NET_RETRY=7");
    let out = sh.line("cargo build");
    assert!(out.contains("built retries=7"), "{out}");
    assert!(!out.contains("apply to this shell"), "{out}");
    let out = sh.line("echo \"[${CARGO_NET_RETRY-}]\"");
    assert!(out.contains("[7]"), "{out}");
}

#[test]
fn bash_a_builds_fetch_settings_stay_in_its_line() {
    a_builds_fetch_settings_stay_in_its_line("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_builds_fetch_settings_stay_in_its_line() {
    a_builds_fetch_settings_stay_in_its_line("zsh");
}

/// A push into a repository in the home that is no remote of the project: asked once, before
/// it runs, with that repository (not the network) in the question, and then pushed — also
/// through a pipeline that hides git's status; with `-u` to the remote `origin` names, whose
/// upstream goes into the workspace's own git config, asked to run once outside the sandbox, and
/// then the upstream is set.
fn a_push_into_a_repository_in_the_home_works_after_one_yes(shell: &str) {
    let f = Fixture::new();
    let git = |dir: &Path, args: &[&str]| support::git(dir, &f.home, args);
    f.own_remote();
    git(&f.home, &["init", "-q", "--bare", "other.git"]);
    let other = f.home.join("other.git");
    let mut sh = f.interactive(shell);
    let (out, status) = sh.run(
        &format!(
            "git push -q {} HEAD:refs/heads/main 2>&1 | tail -1",
            other.display()
        ),
        &["y"],
    );
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("writes:  ~/other.git"), "{out}");
    assert!(!out.contains("network"), "asked about the network: {out}");
    assert!(other.join("refs/heads/main").exists(), "not pushed: {out}");
    let (out, status) = sh.run("git push -q -u origin HEAD:refs/heads/up", &["y"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("records the branch's upstream"), "{out}");
    let config = std::fs::read_to_string(f.ws.join(".git/config")).unwrap();
    assert!(config.contains("merge = refs/heads/up"), "{config}\n{out}");
}

#[test]
fn bash_a_push_into_a_repository_in_the_home_works_after_one_yes() {
    a_push_into_a_repository_in_the_home_works_after_one_yes("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_push_into_a_repository_in_the_home_works_after_one_yes() {
    a_push_into_a_repository_in_the_home_works_after_one_yes("zsh");
}

/// A push the person types into the remote their repository's own config names, on this
/// machine, runs without a question when nothing but the push can use the grant: with a `PATH` of
/// directories no line writes. Still asked: a forced push, a push from a repository nested in the
/// workspace (a config a line may have written) to the same place, and a push to a remote whose
/// config has a `push` refspec (which may force or delete).
fn a_push_into_the_own_remote_runs_unasked(shell: &str) {
    // The repository must lie where no line writes: not in the clone's own tree.
    let Some(tmp) = support::scratch_dir_outside_repositories() else {
        panic!(
            "no scratch directory outside a git repository: run as root, or set SHELLGATE_TEST_SCRATCH"
        );
    };
    let f = Fixture::in_dir(tmp, "");
    let git = |dir: &Path, args: &[&str]| support::git(dir, &f.home, args);
    let bare = f.own_remote();
    let nested = f.ws.join("nested");
    support::workspace(&nested);
    git(&nested, &["commit", "-q", "--allow-empty", "-m", "nested"]);
    git(
        &nested,
        &["remote", "add", "origin", bare.to_str().unwrap()],
    );
    let mut command = f.command(shell);
    command.env("PATH", "/usr/bin:/bin");
    let mut sh = f.spawn(command, shell);
    let (out, status) = sh.run(
        "git push -q origin HEAD:refs/heads/main 2>&1 | tail -1",
        &[],
    );
    assert_eq!(status, 0, "{out}");
    assert!(!out.contains("approval is needed"), "asked: {out}");
    assert!(bare.join("refs/heads/main").exists(), "not pushed: {out}");
    let (out, _) = sh.run("git push -q --force origin HEAD:refs/heads/forced", &["n"]);
    assert!(
        out.contains("it pushes into the repository ~/backup.git"),
        "{out}"
    );
    assert!(!bare.join("refs/heads/forced").exists(), "pushed: {out}");
    let (out, _) = sh.run(
        "cd nested && git push -q origin HEAD:refs/heads/nested; cd ..",
        &["n"],
    );
    assert!(out.contains("approval is needed"), "not asked: {out}");
    sh.line("cd nested");
    let (out, _) = sh.run("git push -q origin HEAD:refs/heads/nested", &["n"]);
    assert!(
        out.contains("it pushes into the repository ~/backup.git"),
        "{out}"
    );
    assert!(!bare.join("refs/heads/nested").exists(), "pushed: {out}");
    // A remote whose config may force or delete (a `push` refspec) is asked about.
    sh.line("cd ..");
    git(
        &f.ws,
        &["config", "remote.origin.push", "+HEAD:refs/heads/forced"],
    );
    let (out, _) = sh.run("git push -q origin", &["n"]);
    assert!(
        out.contains("it pushes into the repository ~/backup.git"),
        "{out}"
    );
    assert!(!bare.join("refs/heads/forced").exists(), "pushed: {out}");
}

#[test]
fn bash_a_push_into_the_own_remote_runs_unasked() {
    a_push_into_the_own_remote_runs_unasked("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_push_into_the_own_remote_runs_unasked() {
    a_push_into_the_own_remote_runs_unasked("zsh");
}

/// The push to the own remote is asked when something a line could have written would run with
/// its grant: a `tail` planted in a workspace directory on `PATH` (which, unasked, would have
/// written a branch into the remote), and a hook in the worktree where `core.hooksPath` points
/// (which a background line could rewrite while the push runs).
fn a_push_that_could_run_a_planted_file_is_asked(shell: &str) {
    let f = Fixture::new();
    let git = |dir: &Path, args: &[&str]| support::git(dir, &f.home, args);
    let bare = f.own_remote();
    let planted = bare.join("refs/heads/planted");
    let bin = f.ws.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    support::write_executable(
        &bin.join("tail"),
        format!(
            "#!/bin/sh\necho 0000 > '{}'\nexec /usr/bin/tail \"$@\"\n",
            planted.display()
        ),
    );
    let mut command = f.command(shell);
    command.env("PATH", format!("{}:/usr/bin:/bin", bin.display()));
    let mut sh = f.spawn(command, shell);
    let (out, _) = sh.run(
        "git push -q origin HEAD:refs/heads/main 2>&1 | tail -1",
        &["n"],
    );
    assert!(
        out.contains("it pushes into the repository ~/backup.git"),
        "{out}"
    );
    assert!(
        !planted.exists(),
        "the planted tail wrote into the remote: {out}"
    );
    assert!(!bare.join("refs/heads/main").exists(), "pushed: {out}");
    drop(sh);
    std::fs::create_dir_all(f.ws.join(".husky")).unwrap();
    git(&f.ws, &["config", "core.hooksPath", ".husky"]);
    let mut command = f.command(shell);
    command.env("PATH", "/usr/bin:/bin");
    let mut sh = f.spawn(command, shell);
    let (out, _) = sh.run("git push -q origin HEAD:refs/heads/main", &["n"]);
    assert!(
        out.contains("it pushes into the repository ~/backup.git"),
        "{out}"
    );
    assert!(!bare.join("refs/heads/main").exists(), "pushed: {out}");
}

#[test]
fn bash_a_push_that_could_run_a_planted_file_is_asked() {
    a_push_that_could_run_a_planted_file_is_asked("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_push_that_could_run_a_planted_file_is_asked() {
    a_push_that_could_run_a_planted_file_is_asked("zsh");
}

fn state_changing_builtins_run_in_the_shell(shell: &str) {
    let f = Fixture::new();
    std::fs::create_dir_all(f.ws.join("sub")).unwrap();
    let mut sh = f.interactive(shell);
    sh.line("cd /tmp");
    sh.line("export SG_TEST_VAR=kept");
    let out = sh.line("echo \"$PWD $SG_TEST_VAR\"");
    assert!(
        out.contains("/tmp kept"),
        "cd/export did not take effect in the shell: {out}"
    );
    // With plain parameters too (`cd $dir`, `echo $x`): no sandbox is started for them.
    sh.line(&format!("dir={}/sub", f.ws.display()));
    sh.line("cd $dir");
    let out = sh.line("echo \"[$PWD]\" ${SG_TEST_VAR}");
    assert!(out.contains("/ws/sub] kept"), "{out}");
    assert!(
        started_programs(&f).is_empty(),
        "a sandbox was started: {:#?}",
        session_events(&f)
    );
}

#[test]
fn bash_state_changing_builtins_run_in_the_shell() {
    state_changing_builtins_run_in_the_shell("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_state_changing_builtins_run_in_the_shell() {
    state_changing_builtins_run_in_the_shell("zsh");
}

/// Builtins that only change the shell's state run in the shell, but not with a redirection
/// anywhere on the line: `cd / && echo x > FILE` (which tree-sitter reads as the list
/// redirected) wrote FILE unsandboxed, outside the workspace, unasked.
fn builtins_that_write_a_file_run_in_the_sandbox(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    let marker = f.marker("planted");
    for line in [
        format!("cd / && echo planted > {}", marker.display()),
        format!("true && echo planted >> {}", marker.display()),
        format!("{{ cd /; echo planted; }} > {}", marker.display()),
        // Opaque, so not asked in a person's own shell: the sandbox holds it all the same.
        format!(
            "python3 -c \"open('{}', 'w').write('planted')\"",
            marker.display()
        ),
        format!("eval \"echo planted > {}\"", marker.display()),
    ] {
        // Declining the offer to run it outside the sandbox (Enter).
        let (out, status) = sh.run_answering_outside(&line, "");
        assert!(!marker.exists(), "{line}: written unsandboxed\n{out}");
        assert_ne!(status, 0, "{line}: {out}");
    }
}

#[test]
fn bash_builtins_that_write_a_file_run_in_the_sandbox() {
    builtins_that_write_a_file_run_in_the_sandbox("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_builtins_that_write_a_file_run_in_the_sandbox() {
    builtins_that_write_a_file_run_in_the_sandbox("zsh");
}

/// An alias or an option a person types (`alias ll='ls -l'`, `shopt -s globstar`, `setopt
/// autocd`) applies unasked: it runs in the sandbox, and the seal applies what the typed line
/// spells out (it was asked twice: "Allow once?" as hook state, then "apply to this shell?",
/// whose Enter dropped it). One the line does not spell out (from a sourced file) is still asked
/// at the seal, and Enter drops it.
fn what_a_person_types_applies_unasked(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    sh.line(&format!("cd {}", f.ws.display()));
    let option = if shell == "bash" {
        "shopt -s globstar"
    } else {
        "setopt autocd"
    };
    for line in ["alias ll='ls -l'", option] {
        // Enter to any question.
        let (out, status) = sh.run(line, &["", ""]);
        let questions =
            out.matches("Allow once?").count() + out.matches("apply to this shell?").count();
        assert_eq!(questions, 0, "{line}: {out}");
        assert_eq!(status, 0, "{line}: {out}");
    }
    let check = if shell == "bash" {
        "alias ll; shopt globstar"
    } else {
        "alias ll; [[ -o autocd ]] && echo autocd-on"
    };
    let out = sh.line(check);
    assert!(out.contains("ls -l"), "{out}");
    assert!(
        out.contains("globstar") && out.contains("on") || out.contains("autocd-on"),
        "{out}"
    );
    std::fs::write(f.ws.join("aliases.sh"), "alias lx='ls -x'\n").unwrap();
    let (out, _) = sh.run(". ./aliases.sh", &["", ""]);
    assert!(out.contains("apply to this shell?"), "{out}");
    let (out, status) = sh.run("alias lx", &[]);
    assert_ne!(
        status, 0,
        "an alias the line did not spell out was applied: {out}"
    );
}

#[test]
fn bash_what_a_person_types_applies_unasked() {
    what_a_person_types_applies_unasked("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_what_a_person_types_applies_unasked() {
    what_a_person_types_applies_unasked("zsh");
}

fn multi_line_paste_is_decided_once(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    // A bracketed paste of three lines, then Enter: it takes the backstop path.
    sh.pty
        .send("\x1b[200~mkdir p1\nmkdir p2\nmkdir p3\x1b[201~")
        .unwrap();
    sh.pty.send_line("").unwrap();
    let (before, _) = sh.pty.exp_regex(r"Allow once\? \[y/N").unwrap();
    sh.pty.send_line("y").unwrap();
    let rest = sh.pty.exp_regex(PROMPT_RE).unwrap().0;
    let later = sh.line("echo end-of-paste");
    let all = format!("{before}{rest}{later}");
    assert_eq!(
        all.matches("Allow once?").count(),
        0,
        "the paste was asked about more than once: {all}"
    );
    for d in ["p1", "p2", "p3"] {
        assert!(f.ws.join(d).is_dir(), "{d} missing: {all}");
    }
}

#[test]
fn bash_multi_line_paste_is_decided_once() {
    multi_line_paste_is_decided_once("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_multi_line_paste_is_decided_once() {
    multi_line_paste_is_decided_once("zsh");
}

fn full_access_asks_then_skips_the_sandbox(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    let marker = f.marker("full");
    // Before: the sandbox stops the write (the offer to run it outside declined).
    sh.run_answering_outside(&format!("touch {}", marker.display()), "");
    assert!(!marker.exists());
    // Selecting Full access: the tamper rule asks, then the typed confirmation.
    let (out, _) = sh.run("shellgate mode full", &["y", "full"]);
    assert!(out.contains("NO sandbox"), "{out}");
    assert!(out.contains("mode: full"), "{out}");
    sh.line(&format!("touch {}", marker.display()));
    assert!(
        marker.exists(),
        "Full access still ran the line in the sandbox"
    );
    // A new shell starts in the safe mode again.
    let mut second = f.interactive(shell);
    let again = f.marker("again");
    second.run_answering_outside(&format!("touch {}", again.display()), "");
    assert!(!again.exists(), "a new session inherited Full access");
}

#[test]
fn bash_full_access_asks_then_skips_the_sandbox() {
    full_access_asks_then_skips_the_sandbox("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_full_access_asks_then_skips_the_sandbox() {
    full_access_asks_then_skips_the_sandbox("zsh");
}

/// `shellgate mode full --for 3s`: confirmed by the person, marked at every prompt while it lasts,
/// shown with its time left by `status`, and over by itself: the first line after the end runs in
/// the sandbox again, the prompt marker is gone and the log says the mode ended by expiry.
fn time_boxed_full_access_ends_by_itself(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    let (out, _) = sh.run("shellgate mode full --for 3s", &["y", "full"]);
    assert!(
        out.contains("for 3s (or until this shell session ends"),
        "the question names the time: {out}"
    );
    assert!(out.contains("mode: full"), "{out}");
    assert!(
        out.contains("[shellgate: FULL ACCESS, 0m0"),
        "no marker at the prompt: {out}"
    );
    let during = f.marker("during");
    let status = sh.line(&format!("touch {} ; shellgate status", during.display()));
    assert!(
        during.exists(),
        "Full access ran the line sandboxed: {status}"
    );
    // The line `touch …; shellgate status` is one line, run unsandboxed: status sees the session.
    assert!(
        status.contains("left (until"),
        "status shows no time left: {status}"
    );
    // Waiting for the end is the point of the test, not a limit on anything.
    std::thread::sleep(std::time::Duration::from_millis(3500));
    let after = f.marker("after");
    let (out, _) = sh.run_answering_outside(&format!("touch {}", after.display()), "");
    assert!(!after.exists(), "Full access outlived its time: {out}");
    assert!(
        !out.contains("FULL ACCESS"),
        "the marker outlived the mode: {out}"
    );
    let log = sh.line("shellgate log");
    assert!(
        log.contains("expiry"),
        "the log does not say the mode ended by expiry: {log}"
    );
}

#[test]
fn bash_time_boxed_full_access_ends_by_itself() {
    time_boxed_full_access_ends_by_itself("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_time_boxed_full_access_ends_by_itself() {
    time_boxed_full_access_ends_by_itself("zsh");
}

/// Without a terminal (an agent's pipe, no controlling tty) Full access cannot be confirmed, for
/// a time or not, whatever comes on standard input.
#[test]
fn time_boxed_full_access_needs_a_terminal() {
    let f = Fixture::new();
    for args in [&["mode", "full", "--for", "2s"][..], &["mode", "full"][..]] {
        let mut c = f.command(SHELLGATE);
        c.args(args).stdin(std::process::Stdio::piped());
        // SAFETY: setsid in the child before exec only detaches it from any controlling terminal.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut c, || {
                libc::setsid();
                Ok(())
            });
        }
        let mut child = c
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        let _ = child.stdin.take().unwrap().write_all(b"y\nfull\n");
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(215), "{args:?}: {err}");
        assert!(err.contains("TERMINAL_REQUIRED"), "{args:?}: {err}");
    }
    let out = run({
        let mut c = f.command(SHELLGATE);
        c.args(["mode", "ask", "--for", "2s"]);
        c
    });
    assert_eq!(out.status.code(), Some(2), "--for is Full access only");
}

#[test]
fn bash_hook_tampering_is_not_run_in_the_shell() {
    let f = Fixture::new();
    let mut sh = f.interactive("bash");
    // The line is asked about (hook state is never allowed by rules alone); approved, it runs in
    // a sandboxed child and cannot touch this shell's hook.
    sh.run("PS0=''; trap - DEBUG", &["y", "y"]);
    let out = sh.line("rm -rf ~");
    assert!(out.contains("not run"), "the hook was disabled: {out}");
}

// ------------------------------------------------------------------------------------------------
// Interactive shells: a gated line behaves as it would in the person's own shell.

fn startup_aliases_functions_and_variables_reach_lines(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    let out = sh.line("gs");
    assert!(
        out.contains("GS-42"),
        "the alias from the startup file: {out}"
    );
    let out = sh.line("greet you");
    assert!(out.contains("hello-42 you"), "the function: {out}");
    let out = sh.line("printf '%s\\n' \"V=$PLAIN_VAR\"");
    assert!(out.contains("V=pl41n"), "the unexported variable: {out}");
    // A credential's variable is withheld from lines (policy::environment), exported or not.
    let out = sh.line("printf '%s\\n' \"S=$SECRET_VAR.\"");
    assert!(out.contains("S=."), "a credential reached the line: {out}");
}

#[test]
fn bash_startup_aliases_functions_and_variables_reach_lines() {
    startup_aliases_functions_and_variables_reach_lines("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_startup_aliases_functions_and_variables_reach_lines() {
    startup_aliases_functions_and_variables_reach_lines("zsh");
}

/// A venv's `activate`, as Python's venv writes it in substance: the prompt is exported too.
const ACTIVATE: &str = "VIRTUAL_ENV=\"$PWD/venv\"\nexport VIRTUAL_ENV\n_OLD_PATH=\"$PATH\"\n\
PATH=\"$VIRTUAL_ENV/bin:$PATH\"\nexport PATH\n_OLD_PS1=\"${PS1-}\"\nPS1=\"(venv) ${PS1-}\"\nexport PS1\n\
deactivate() { PATH=\"$_OLD_PATH\"; export PATH; PS1=\"$_OLD_PS1\"; export PS1; unset VIRTUAL_ENV; \
unset -f deactivate; }\n";

fn lines_change_the_shell(shell: &str) {
    let f = Fixture::new();
    std::fs::create_dir_all(f.ws.join("sub")).unwrap();
    std::fs::create_dir_all(f.ws.join("venv/bin")).unwrap();
    std::fs::write(f.ws.join("venv/bin/activate"), ACTIVATE).unwrap();
    let tool = f.ws.join("venv/bin/venvtool");
    support::write_executable(&tool, "#!/bin/sh\necho VENV-TOOL-$((2*21))\n");
    let mut sh = f.interactive(shell);
    sh.line("cd sub");
    let out = sh.line("pwd");
    assert!(out.contains(&format!("{}/sub", f.ws.display())), "{out}");
    sh.line("cd ..");
    sh.line("FOO=bar");
    let out = sh.line("printf '%s\\n' \"F=$FOO\"");
    assert!(out.contains("F=bar"), "an assignment: {out}");
    sh.line("export EDITOR_TEST=vim");
    let out = sh.line("sh -c 'echo E=$EDITOR_TEST'");
    assert!(out.contains("E=vim"), "an export reaches programs: {out}");
    // The venv: the line is asked about (it runs a file's code), then what it changed (PATH and a
    // function) is applied after one yes.
    let (out, _) = sh.run("source venv/bin/activate", &["y", "y"]);
    assert!(out.contains("PATH"), "{out}");
    assert!(out.contains("deactivate()"), "{out}");
    // One change per line, not one line with `^J` between them.
    assert!(!out.contains("^J"), "{out}");
    let out = sh.line("venvtool");
    assert!(out.contains("VENV-TOOL-42"), "the venv's PATH: {out}");
    // `deactivate` sets PATH and the prompt back to the values the shell had before `activate`:
    // applied without a question (values the shell had; no directory it does not have now).
    let (out, _) = sh.run("deactivate", &["y", "y"]);
    assert!(
        !out.contains("apply to this shell"),
        "deactivate was asked about: {out}"
    );
    let (out, status) = sh.run("venvtool", &[]);
    assert_eq!(status, 127, "deactivate took the venv off PATH: {out}");
    // Activating again is asked again: answered no, PATH and the exports stay as they were (a
    // prompt whose text runs nothing is inert and may change, as any such prompt).
    let (out, _) = sh.run("source venv/bin/activate", &["n"]);
    assert!(out.contains("apply to this shell"), "{out}");
    let out = sh.line("printf '<%s>\\n' \"${VIRTUAL_ENV-none}\"");
    assert!(out.contains("<none>"), "{out}");
    let (out, status) = sh.run("venvtool", &[]);
    assert_eq!(status, 127, "{out}");
}

#[test]
fn bash_lines_change_the_shell() {
    lines_change_the_shell("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_lines_change_the_shell() {
    lines_change_the_shell("zsh");
}

fn status_is_the_lines(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    assert_eq!(sh.run("false", &[]).1, 1);
    let out = sh.line("echo \"was-$?\"");
    assert!(out.contains("was-1"), "{out}");
    if shell == "zsh" {
        // A plain parameter, but one the hook's function would change were the line run there.
        assert_eq!(sh.run("false", &[]).1, 1);
        let out = sh.line("echo \"st-$status\"");
        assert!(out.contains("st-1"), "{out}");
    }
    assert_eq!(sh.run("(exit 7)", &[]).1, 7);
    assert_eq!(
        sh.run("sh -c 'exit 9'", &[]).1,
        9,
        "a sandboxed line's status"
    );
    let out = sh.line("echo \"was-$?\"");
    assert!(out.contains("was-9"), "{out}");
    assert_eq!(sh.run("true | false", &[]).1, 1);
    let pipestatus = if shell == "bash" {
        "${PIPESTATUS[*]}"
    } else {
        "$pipestatus"
    };
    let out = sh.line(&format!("echo \"ps-{pipestatus}\""));
    assert!(out.contains("ps-0 1"), "{out}");
    assert_eq!(
        sh.run("sh -c 'exit 3' | true; true | sh -c 'exit 5'", &[])
            .1,
        5
    );
    let out = sh.line(&format!("echo \"ps-{pipestatus}\""));
    assert!(out.contains("ps-0 5"), "{out}");
    // Programs only: the line needs none of the shell's state and runs without it
    // (`shell::stateless`); its status and PIPESTATUS are the line's all the same.
    assert_eq!(sh.run("/bin/false | /bin/true | /bin/false", &[]).1, 1);
    let out = sh.line(&format!("echo \"ps-{pipestatus}\""));
    assert!(out.contains("ps-1 0 1"), "{out}");
    // An option that changes how such a line runs takes the state along.
    std::fs::write(f.ws.join("kept"), "old\n").unwrap();
    sh.line(if shell == "bash" {
        "set -o noclobber"
    } else {
        "setopt noclobber"
    });
    assert_ne!(sh.run("/bin/ls > kept", &[]).1, 0);
    assert_eq!(std::fs::read_to_string(f.ws.join("kept")).unwrap(), "old\n");
}

/// The stock aliases people have (Debian's `~/.bashrc`: `alias ls='ls --color=auto'`) go with a
/// line that otherwise needs none of the shell's state (`shell::stateless`): defined for it, one
/// leading to another, and nothing else of the state.
fn a_persons_plain_aliases_go_with_a_stateless_line(shell: &str) {
    let f = Fixture::with_rc("alias ls='ls -F'\nalias ll='ls -1'\n");
    std::fs::create_dir_all(f.ws.join("sub")).unwrap();
    let mut sh = f.interactive(shell);
    let out = sh.line("ls");
    assert!(out.contains("sub/"), "the alias was not applied: {out}");
    let out = sh.line("ll");
    assert!(
        out.contains("sub/"),
        "the alias's alias was not applied: {out}"
    );
    let out = sh.line("ll | cat");
    assert!(out.contains("sub/"), "{out}");
    // Each command's program started directly, with the aliases' words.
    let programs: Vec<bool> = started_programs(&f).iter().map(Option::is_some).collect();
    assert_eq!(programs, [true, true, true]);
}

#[test]
fn bash_a_persons_plain_aliases_go_with_a_stateless_line() {
    a_persons_plain_aliases_go_with_a_stateless_line("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_persons_plain_aliases_go_with_a_stateless_line() {
    a_persons_plain_aliases_go_with_a_stateless_line("zsh");
}

/// A typed line of one command of plain words starts its program in the sandbox without a shell
/// first, as the person's shell itself would (`stateless::direct_argv`; the session log names
/// the program): the program's `_` is its path, as a shell sets it, and its status is the line's;
/// a name not on `PATH` is still the shell's to report.
fn plain_lines_start_their_program(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    let out = sh.line("printenv _");
    assert!(out.contains("/printenv\r\n"), "{out}");
    let (out, status) = sh.run("ls -d no-such-file", &[]);
    assert_eq!(status, 2, "{out}");
    let (out, status) = sh.run("no-such-program-x", &[]);
    assert_eq!(status, 127, "{out}");
    assert!(out.contains("not found"), "{out}");
    // Quoted: the shell runs it.
    let out = sh.line("printenv '_'");
    assert!(out.contains("/printenv\r\n"), "{out}");
    let programs = started_programs(&f);
    assert_eq!(programs.len(), 4, "{programs:?}");
    assert!(
        programs[0]
            .as_deref()
            .is_some_and(|p| p.ends_with("/printenv")),
        "{programs:?}"
    );
    assert!(
        programs[1].as_deref().is_some_and(|p| p.ends_with("/ls")),
        "{programs:?}"
    );
    assert_eq!(programs[2..], [None, None], "{programs:?}");
}

/// A typed pipeline of plain commands starts its programs in the sandbox without a shell
/// (`stateless::direct_pipeline`; the session log names them): each reads what the one before
/// writes, PIPESTATUS is each one's status (a writer whose reader has gone ends by SIGPIPE, as
/// under a shell), and every program of it, not only the first, is confined: a script that
/// writes outside the workspace, first or last in the pipeline, writes nothing there — the same
/// script run outside the sandbox does (the control).
fn pipelines_start_their_programs(shell: &str) {
    let f = Fixture::new();
    let script = f.ws.join("markw");
    std::fs::write(
        &script,
        "#!/bin/sh\necho pwned > \"$1\"\necho \"wrote-$?\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let control = f.outside.join("control");
    let ran = Command::new(&script).arg(&control).output().unwrap();
    assert!(ran.status.success() && control.exists(), "{ran:?}");
    let mut sh = f.interactive(shell);
    let pipestatus = if shell == "bash" {
        "${PIPESTATUS[*]}"
    } else {
        "${pipestatus[*]}"
    };
    let (out, status) = sh.run("yes | head -2", &[]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("y\r\ny\r\n"), "{out}");
    let out = sh.line(&format!("echo \"ps-{pipestatus}\""));
    assert!(out.contains("ps-141 0"), "{out}");
    let (out, status) = sh.run("ls -d no-such-file | cat | wc -l", &[]);
    assert_eq!(status, 0, "{out}");
    let out = sh.line(&format!("echo \"ps-{pipestatus}\""));
    assert!(out.contains("ps-2 0 0"), "{out}");
    let first = f.outside.join("first");
    let (out, _) = sh.run(&format!("./markw {} | cat", first.display()), &[]);
    assert!(out.contains("wrote-") && !out.contains("wrote-0"), "{out}");
    let last = f.outside.join("last");
    let (out, _) = sh.run(&format!("ls | ./markw {}", last.display()), &[]);
    assert!(out.contains("wrote-") && !out.contains("wrote-0"), "{out}");
    assert!(
        !first.exists() && !last.exists(),
        "a program of the pipeline wrote outside"
    );
    // (The `echo` lines between ran in the shell: no program of theirs started directly.)
    let programs: Vec<String> = started_programs(&f).into_iter().flatten().collect();
    assert_eq!(programs.len(), 4, "{programs:?}");
    for (program, names) in programs.iter().zip([
        &["yes", "head"][..],
        &["ls", "cat", "wc"],
        &["markw", "cat"],
        &["ls", "markw"],
    ]) {
        let started: Vec<&str> = program
            .split(" | ")
            .map(|p| p.rsplit('/').next().unwrap_or_default())
            .collect();
        assert_eq!(started, names, "{programs:?}");
    }
    // Each program's `_` is its own path, as the shell sets it.
    let out = sh.line("ls | printenv _");
    assert!(out.contains("/printenv\r\n"), "{out}");
}

#[test]
fn bash_pipelines_start_their_programs() {
    pipelines_start_their_programs("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_pipelines_start_their_programs() {
    pipelines_start_their_programs("zsh");
}

/// A line of assignments of literal values and plain parameters (`FOO=bar`, `COPY=$FOO/x`)
/// runs in the person's shell, as `export NAME=…` does: no sandbox is started for it. One whose
/// value runs a substitution runs in the sandbox, and its value comes back as state.
fn literal_assignments_run_in_the_shell(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    sh.line("FOO=bar BAZ='a b'");
    assert!(started_programs(&f).is_empty(), "a sandbox was started");
    let out = sh.line("printf '%s\\n' \"F=$FOO/$BAZ\"");
    assert!(out.contains("F=bar/a b"), "{out}");
    // Plain parameters' values too: reading a variable runs nothing.
    let before = started_programs(&f).len();
    sh.line("COPY=$FOO/x BOTH=\"${COPY}:$BAZ\"");
    assert_eq!(started_programs(&f).len(), before, "a sandbox was started");
    let out = sh.line("printf '%s\\n' \"B=$BOTH\"");
    assert!(out.contains("B=bar/x:a b"), "{out}");
    let before = started_programs(&f).len();
    sh.line("QUX=$(printf hi)");
    assert_eq!(
        started_programs(&f).len(),
        before + 1,
        "an expansion ran in the shell"
    );
    let out = sh.line("printf '%s\\n' \"Q=$QUX\"");
    assert!(out.contains("Q=hi"), "{out}");
}

#[test]
fn bash_literal_assignments_run_in_the_shell() {
    literal_assignments_run_in_the_shell("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_literal_assignments_run_in_the_shell() {
    literal_assignments_run_in_the_shell("zsh");
}

/// A FIFO typed as a program (a line can make one in the workspace, or put one in a program's
/// place once it was found) does not hold the hook, and with it the person's shell, until a
/// writer comes: the shell runs the line, and says it cannot execute it, as zsh does. (bash
/// itself opens such a file to look at it after the exec fails, and waits there too, hooked or
/// not: that wait is bash's own, in the sandbox, and Ctrl-C ends it.)
#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_fifo_typed_as_a_program_does_not_hold_the_shell() {
    let f = Fixture::new();
    let fifo = f.ws.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    std::fs::set_permissions(&fifo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut sh = f.interactive("zsh");
    let (out, status) = sh.run("./fifo", &[]);
    assert_eq!(status, 126, "{out}");
    let out = sh.line("echo still-$((1+1))");
    assert!(out.contains("still-2"), "{out}");
}

/// Each line's `exec/started` in the fixture's session logs: the program it started directly, if
/// it did (else its shell ran it).
fn started_programs(f: &Fixture) -> Vec<Option<String>> {
    session_events(f)
        .iter()
        .filter(|e| e["kind"] == "exec/started")
        .map(|e| e["data"]["program"].as_str().map(str::to_owned))
        .collect()
}

/// Every event of the fixture's session logs, in order.
fn session_events(f: &Fixture) -> Vec<serde_json::Value> {
    let dir = f.user.state().join("shellgate/sessions");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    logs.sort();
    logs.iter()
        .flat_map(|log| {
            std::fs::read_to_string(log)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn bash_plain_lines_start_their_program() {
    plain_lines_start_their_program("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_plain_lines_start_their_program() {
    plain_lines_start_their_program("zsh");
}

/// oh-my-zsh's settings (`auto_cd`, the global aliases `...`, `ls='ls --color=tty'`) leave an
/// ordinary line without the shell's state, its program started directly; a line with the global
/// alias takes the state, and the alias expands.
#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_oh_my_zsh_settings_leave_lines_stateless() {
    let f = Fixture::with_rc("setopt auto_cd\nalias -g ...='../..'\nalias ls='ls --color=tty'\n");
    std::fs::create_dir_all(f.ws.join("sub/deeper")).unwrap();
    let mut sh = f.interactive("zsh");
    let out = sh.line("ls");
    assert!(out.contains("sub"), "{out}");
    let out = sh.line("ls -d ...");
    assert!(
        out.contains("../.."),
        "the global alias did not expand: {out}"
    );
    let programs: Vec<bool> = started_programs(&f).iter().map(Option::is_some).collect();
    assert_eq!(programs.first(), Some(&true), "{programs:?}");
    assert_eq!(programs.last(), Some(&false), "{programs:?}");
}

/// With `autocd` on (oh-my-zsh sets it), a directory typed as a command changes to it, as in the
/// person's own shell: the line is the `cd` the shell makes of it (the sandbox's shell is not
/// interactive, and autocd applies only in interactive shells).
fn a_directory_typed_with_autocd_changes_to_it(shell: &str) {
    let rc = if shell == "bash" {
        "shopt -s autocd\n"
    } else {
        "setopt auto_cd\n"
    };
    let f = Fixture::with_rc(rc);
    std::fs::create_dir_all(f.ws.join("sub/deeper")).unwrap();
    let mut sh = f.interactive(shell);
    sh.line("sub");
    let out = sh.line("pwd");
    assert!(out.contains("/ws/sub\r\n"), "{out}");
    sh.line("deeper");
    sh.line("..");
    let out = sh.line("pwd");
    assert!(out.contains("/ws/sub\r\n"), "{out}");
}

#[test]
fn bash_a_directory_typed_with_autocd_changes_to_it() {
    a_directory_typed_with_autocd_changes_to_it("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_directory_typed_with_autocd_changes_to_it() {
    a_directory_typed_with_autocd_changes_to_it("zsh");
}

/// A line that may need none of the shell's state is sent the names of it first
/// (`__shellgate_dump names`), and the whole state only when shellgate asks for it: function
/// bodies are most of a dump (bash-completion's, compinit's). Seen through the note a body over
/// 1 MiB gets, which only a whole dump reaches (once a shell); and a later command of the line
/// that is the person's function still reaches it. A line that expands variables of plain
/// values (`$NAME`, `${NAME}`) is such a line too: each variable is defined for it as the whole
/// state would define it, the person's own unexported ones included; one whose value the
/// shell's options could split or glob takes the whole state.
fn a_stateless_line_reads_no_function_bodies(shell: &str) {
    let big = Fixture::with_rc(&format!(
        "big() {{ : {}; }}\nproj=sub\nspaced='a  b'\n",
        "a".repeat(1_100_000)
    ));
    std::fs::create_dir_all(big.ws.join("sub/inside")).unwrap();
    let mut sh = big.interactive(shell);
    let out = sh.line("ls");
    assert!(!out.contains("over 1 MiB"), "a whole dump was read: {out}");
    let out = sh.line("ls $proj");
    assert!(out.contains("inside"), "{out}");
    assert!(!out.contains("over 1 MiB"), "a whole dump was read: {out}");
    // Its program started directly, the variable expanded as the shell would.
    let started = started_programs(&big);
    assert!(
        started
            .last()
            .and_then(Option::as_deref)
            .is_some_and(|p| p.ends_with("/ls")),
        "{started:?}"
    );
    let out = sh.line("echo \"$HOME\" ${proj}/x $NOT_SET_HERE.");
    assert!(
        out.contains(&format!("{} sub/x .", big.home.display())),
        "{out}"
    );
    assert!(!out.contains("over 1 MiB"), "a whole dump was read: {out}");
    let out = sh.line("echo $spaced");
    assert!(out.contains("over 1 MiB"), "{out}");
    let expected = if shell == "zsh" { "a  b" } else { "a b" };
    assert!(out.contains(expected), "{out}");
    let f = Fixture::with_rc("greet() { echo \"hi-$1\"; }\n");
    let mut sh = f.interactive(shell);
    let out = sh.line("ls -d .; greet there");
    assert!(out.contains("hi-there"), "{out}");
}

#[test]
fn bash_a_stateless_line_reads_no_function_bodies() {
    a_stateless_line_reads_no_function_bodies("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_stateless_line_reads_no_function_bodies() {
    a_stateless_line_reads_no_function_bodies("zsh");
}

/// zsh sends a line that may need none of its state the names of it only (`__shellgate_dump
/// names`), and the whole state when shellgate asks for it: reading every value and function body
/// is most of what such a line costs (issue 27). Counted by wrapping the hook's dump function in
/// the person's shell.
#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_sends_the_names_first_and_the_state_when_asked() {
    let f = Fixture::with_rc(
        "greet() { echo \"hi-$1\"; }\nwhole_dumps=0\n\
         functions[orig_dump]=$functions[__shellgate_dump]\n\
         __shellgate_dump() { [[ ${1-} == names ]] || (( ++whole_dumps )); orig_dump \"$@\"; }\n",
    );
    std::fs::create_dir_all(f.ws.join("sub")).unwrap();
    let mut sh = f.interactive("zsh");
    let out = sh.line("ls");
    assert!(out.contains("sub"), "{out}");
    assert_eq!(sh.run("ls -d sub", &[]).1, 0);
    // The first word is a program, a later one the person's function: shellgate asks for the
    // state, and the line runs with it.
    let out = sh.line("ls -d sub; greet there");
    assert!(
        out.contains("hi-there"),
        "the function did not reach the line: {out}"
    );
    // A `$NAME` alone: the names, with the values of the variables the line names.
    let out = sh.line("echo \"dumps-$whole_dumps\"");
    assert!(out.contains("dumps-1"), "{out}");
    // Any other `$` on the line: the whole state at once (this line's dump is the second).
    let out = sh.line("echo \"dumps-$whole_dumps$(true)\"");
    assert!(out.contains("dumps-2"), "{out}");
    // A variable named as the function's own locals were (`bg`) is the person's.
    sh.line("bg=7");
    let out = sh.line("echo \"bg-$bg\"");
    assert!(out.contains("bg-7"), "{out}");
}

/// A function with an extended pattern (bash-completion's, which Debian's skeleton loads, are
/// such) goes into the sandbox with `extglob` on before it is parsed: it was a syntax error that
/// stopped the input there, and every line that took the state failed.
#[test]
fn bash_functions_with_extended_patterns_reach_lines() {
    let f = Fixture::with_rc(
        "shopt -s extglob\nmatch_dir() { case $1 in --!(no-*)dir*) echo matched ;; *) echo no ;; esac; }\n",
    );
    let mut sh = f.interactive("bash");
    let out = sh.line("match_dir --xdir");
    assert!(out.contains("matched"), "{out}");
    assert!(!out.contains("syntax error"), "{out}");
}

#[test]
fn bash_status_is_the_lines() {
    status_is_the_lines("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_status_is_the_lines() {
    status_is_the_lines("zsh");
}

fn background_line_is_a_job(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    sh.line("sleep 30 &");
    let out = sh.line("jobs");
    assert!(out.to_lowercase().contains("running"), "{out}");
    assert!(out.contains("sleep 30"), "jobs shows the line: {out}");
    sh.line("kill %1");
    // The job ends (its shellgate and its sandbox with it); the shell reports it.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = sh.line("jobs");
        if !out.to_lowercase().contains("running") {
            break;
        }
        assert!(Instant::now() < deadline, "the job still runs: {out}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn bash_background_line_is_a_job() {
    background_line_is_a_job("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_background_line_is_a_job() {
    background_line_is_a_job("zsh");
}

/// A typed line that names the shell's jobs but runs in the sandbox (it holds a command that is
/// not a job builtin) is told so before it runs: before, `jobs; kill %1; sleep 0` said only "kill:
/// %1: no such job". The job itself is untouched, and a line of job builtins alone still reaches
/// it, in the shell, with no note.
fn a_line_naming_jobs_in_the_sandbox_says_why(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    sh.line("sleep 30 &");
    let out = sh.line("jobs; kill %1; sleep 0");
    assert!(out.contains("where this shell's jobs are not"), "{out}");
    let out = sh.line("jobs");
    assert!(
        out.to_lowercase().contains("running"),
        "the job was reached: {out}"
    );
    let out = sh.line("kill %1");
    assert!(!out.contains("jobs are not"), "{out}");
}

#[test]
fn bash_a_line_naming_jobs_in_the_sandbox_says_why() {
    a_line_naming_jobs_in_the_sandbox_says_why("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_line_naming_jobs_in_the_sandbox_says_why() {
    a_line_naming_jobs_in_the_sandbox_says_why("zsh");
}

fn ctrl_c_stops_a_sandboxed_line(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    sh.pty.send_line("sleep 30; touch after-sleep").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    sh.pty.send_control('c').unwrap();
    // Interrupted, not run to its end: the status is the interrupt's and the rest never ran (a
    // sleep left to finish would have let `touch` run and the line end 0).
    let (_, matched) = sh.pty.exp_regex(PROMPT_RE).unwrap();
    assert!(matched.starts_with("[130]"), "{matched}");
    assert!(
        !f.ws.join("after-sleep").exists(),
        "the rest of the line ran"
    );
    let out = sh.line("echo still-$((1+1))");
    assert!(out.contains("still-2"), "{out}");
}

#[test]
fn bash_ctrl_c_stops_a_sandboxed_line() {
    ctrl_c_stops_a_sandboxed_line("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_ctrl_c_stops_a_sandboxed_line() {
    ctrl_c_stops_a_sandboxed_line("zsh");
}

/// Ctrl-Z stops a sandboxed line as it stops any foreground job: the person is told it is stopped
/// (bash: by the hook, which says `fg` continues it; zsh suspends the hook's function and says
/// so itself), the status is the stop's (148), and the shell goes on.
fn ctrl_z_stops_a_sandboxed_line(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    sh.pty.send_line("sleep 30").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    sh.pty.send_control('z').unwrap();
    let (before, matched) = sh.pty.exp_regex(PROMPT_RE).unwrap();
    let told = if shell == "bash" {
        "the line is stopped"
    } else {
        "suspended"
    };
    assert!(before.contains(told), "{before}");
    assert!(!before.contains("the gate failed"), "{before}");
    assert!(matched.starts_with("[148]"), "{matched}");
    let out = sh.line("echo still-$((1+1))");
    assert!(out.contains("still-2"), "{out}");
}

#[test]
fn bash_ctrl_z_stops_a_sandboxed_line() {
    ctrl_z_stops_a_sandboxed_line("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_ctrl_z_stops_a_sandboxed_line() {
    ctrl_z_stops_a_sandboxed_line("zsh");
}

/// A line's state comes back within a bound (8 MiB): a line that leaves a larger variable has
/// none of its changes applied, says so, and the shell goes on; a line within the bound has its
/// changes applied.
fn a_state_larger_than_the_bound_is_not_applied(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    let out = sh.line("big=$(head -c 9000000 /dev/zero | tr '\\0' a); small=1");
    assert!(
        out.contains("the line's shell state was too large to read"),
        "{out}"
    );
    let out = sh.line("echo \"big=${#big} small=${small-unset}\"");
    assert!(out.contains("big=0 small=unset"), "{out}");
    sh.line("big=$(head -c 100000 /dev/zero | tr '\\0' a); small=1");
    let out = sh.line("echo \"big=${#big} small=${small-unset}\"");
    assert!(out.contains("big=100000 small=1"), "{out}");
}

#[test]
fn bash_a_state_larger_than_the_bound_is_not_applied() {
    a_state_larger_than_the_bound_is_not_applied("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_state_larger_than_the_bound_is_not_applied() {
    a_state_larger_than_the_bound_is_not_applied("zsh");
}

fn history_records_lines_as_typed(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    sh.line("echo one-$((1))");
    sh.line("FOO=1");
    let out = sh.line("history | tail -3");
    assert!(out.contains("echo one-$((1))"), "{out}");
    assert!(out.contains("FOO=1"), "{out}");
    assert!(!out.contains("__shellgate"), "{out}");
}

#[test]
fn bash_history_records_lines_as_typed() {
    history_records_lines_as_typed("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_history_records_lines_as_typed() {
    history_records_lines_as_typed("zsh");
}

fn the_hook_works_with_unusual_options(shell: &str) {
    let options = if shell == "bash" {
        "set -u; set -o noclobber; shopt -s nullglob failglob extglob"
    } else {
        "setopt ksharrays shwordsplit nounset interactivecomments extendedglob noclobber"
    };
    let f = Fixture::with_rc(options);
    let mut sh = f.interactive(shell);
    assert_eq!(sh.run("true | false", &[]).1, 1);
    // (With KSH_ARRAYS a subscript-less `$pipestatus` is its first element.)
    let pipestatus = if shell == "bash" {
        "${PIPESTATUS[*]}"
    } else {
        "${pipestatus[*]}"
    };
    let out = sh.line(&format!("echo \"ps-{pipestatus}\""));
    assert!(out.contains("ps-0 1"), "{out}");
    sh.line("FOO=kept");
    sh.line("cd /tmp");
    let out = sh.line("printf '%s\\n' \"$PWD:$FOO\"");
    assert!(out.contains("/tmp:kept"), "{out}");
    let out = sh.line("gs");
    assert!(out.contains("GS-42"), "{out}");
    assert!(
        !out.contains("__shellgate"),
        "the hook failed under these options: {out}"
    );
}

#[test]
fn bash_the_hook_works_with_unusual_options() {
    the_hook_works_with_unusual_options("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_the_hook_works_with_unusual_options() {
    the_hook_works_with_unusual_options("zsh");
}

// ------------------------------------------------------------------------------------------------
// Interactive shells: what must not get through.

fn returned_function_or_path_needs_a_yes(shell: &str) {
    let f = Fixture::new();
    let marker = f.marker("evil-ran");
    std::fs::write(
        f.ws.join("evil.sh"),
        format!(
            "PATH=/evil:$PATH\nlsx() {{ touch {m}; }}\ncd() {{ touch {m}; }}\nPLAIN=set\n",
            m = marker.display()
        ),
    )
    .unwrap();
    let mut sh = f.interactive(shell);
    // The line runs in the sandbox unasked (a person's own line is not asked for what only the
    // sandbox and the seal contain); what it changed is not applied on a no.
    let (out, _) = sh.run("source evil.sh", &["n"]);
    assert!(out.contains("PATH") && out.contains("lsx()"), "{out}");
    assert!(
        out.contains("not applied to this shell: cd()"),
        "a function named like a builtin is never applied: {out}"
    );
    let out = sh.line("printf '%s\\n' \"P=$PATH X=${PLAIN-unset}\"");
    assert!(
        !out.contains("/evil"),
        "PATH was applied without a yes: {out}"
    );
    assert!(
        out.contains("X=set"),
        "an ordinary variable is applied silently: {out}"
    );
    let (out, status) = sh.run("lsx", &[]);
    assert_eq!(status, 127, "the function was applied without a yes: {out}");
    sh.line("cd /");
    assert!(!marker.exists(), "the line's code ran outside the sandbox");
}

#[test]
fn bash_returned_function_or_path_needs_a_yes() {
    returned_function_or_path_needs_a_yes("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_returned_function_or_path_needs_a_yes() {
    returned_function_or_path_needs_a_yes("zsh");
}

fn alias_shadowing_cd_never_runs_unsandboxed(shell: &str) {
    let tmp_marker = "cd-alias-ran";
    let f = Fixture::with_rc(&format!(
        "alias cd='touch \"$HOME/../outside/{tmp_marker}\"; builtin cd'"
    ));
    let mut sh = f.interactive(shell);
    sh.line("cd /tmp");
    assert!(
        !f.marker(tmp_marker).exists(),
        "an alias named cd ran in the shell, outside the sandbox"
    );
    let out = sh.line("pwd");
    assert!(out.contains("/tmp"), "the cd still took effect: {out}");
}

#[test]
fn bash_alias_shadowing_cd_never_runs_unsandboxed() {
    alias_shadowing_cd_never_runs_unsandboxed("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_alias_shadowing_cd_never_runs_unsandboxed() {
    alias_shadowing_cd_never_runs_unsandboxed("zsh");
}

fn a_typed_hook_call_runs_nothing_of_its_own(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    // The call is a line like any other: judged as typed, and run in the sandbox, where the
    // hook's function does not exist.
    let marker = f.ws.join("smuggled");
    std::fs::write(
        f.home.join("payload"),
        format!("touch {}\n", marker.display()),
    )
    .unwrap();
    let (out, status) = sh.run("__shellgate_run \"$__shellgate_token\" ~/payload", &[]);
    assert_eq!(status, 127, "{out}");
    assert!(out.contains("not found"), "{out}");
    assert!(!marker.exists(), "{out}");
}

#[test]
fn bash_a_typed_hook_call_runs_nothing_of_its_own() {
    a_typed_hook_call_runs_nothing_of_its_own("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_typed_hook_call_runs_nothing_of_its_own() {
    a_typed_hook_call_runs_nothing_of_its_own("zsh");
}

fn own_commands_run_outside_the_sandbox_by_the_hooks_binary(shell: &str) {
    let fake = "fakebin";
    let f = Fixture::with_rc(&format!("PATH=\"$HOME/{fake}:$PATH\""));
    std::fs::create_dir_all(f.home.join(fake)).unwrap();
    let script = f.home.join(fake).join("shellgate");
    support::write_executable(&script, "#!/bin/sh\necho FAKE-SHELLGATE\n");
    let mut sh = f.interactive(shell);
    let (out, status) = sh.run("shellgate doctor", &[]);
    assert!(
        !out.contains("FAKE-SHELLGATE"),
        "PATH's shellgate ran: {out}"
    );
    assert!(
        !out.contains("NOT enforceable"),
        "doctor ran inside a sandbox: {out}"
    );
    assert!(out.contains("policy workspace-write"), "{out}");
    assert_eq!(status, 0, "{out}");
}

#[test]
fn bash_own_commands_run_outside_the_sandbox_by_the_hooks_binary() {
    own_commands_run_outside_the_sandbox_by_the_hooks_binary("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_own_commands_run_outside_the_sandbox_by_the_hooks_binary() {
    own_commands_run_outside_the_sandbox_by_the_hooks_binary("zsh");
}

/// The question the init line (or a hook whose binary is gone) asks before each line.
const UNGATED_RE: &str = r"Run this line without it\? \[y/N\] ";

/// Types `text`, expects the question, answers `answer` and returns the output up to the prompt
/// and its status.
fn answer_ungated(sh: &mut Shell, text: &str, answer: &str) -> (String, i32) {
    sh.pty.send_line(text).unwrap();
    let (before, _) = sh
        .pty
        .exp_regex(UNGATED_RE)
        .unwrap_or_else(|e| panic!("no question for {text:?}: {e}"));
    // zsh's `read -q` takes one key; bash's `read` a line.
    if sh.zsh {
        sh.pty.send(answer).unwrap();
        sh.pty.flush().unwrap();
    } else {
        sh.pty.send_line(answer).unwrap();
    }
    let (after, matched) = sh.pty.exp_regex(PROMPT_RE).unwrap();
    let status = matched
        .trim_start_matches('[')
        .split(']')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    (format!("{before}{after}"), status)
}

/// Without the binary where the init line names it, a person at the terminal is asked before each
/// line whether to run it ungated (no: it does not run; yes: it does, so they can repair the setup
/// or leave), an interactive shell with no terminal refuses every line, and an agent's `-c` shell
/// exits 127. Before, every line was refused, `exit` included.
fn missing_binary_asks_the_person_and_refuses_an_agent(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive_without_binary(shell);
    let marker = f.ws.join("ran-unhooked");
    let touch = format!("touch {}", marker.display());
    let (out, _) = answer_ungated(&mut sh, &touch, "n");
    assert!(out.contains("shellgate is not installed at"), "{out}");
    assert!(out.contains(".local/bin/shellgate"), "{out}");
    assert!(!marker.exists(), "a line ran after a no: {out}");
    let (out, status) = answer_ungated(&mut sh, &touch, "y");
    assert_eq!(status, 0, "{out}");
    assert!(
        marker.exists(),
        "the person's yes did not run the line: {out}"
    );
    std::fs::remove_file(&marker).unwrap();
    // An interactive shell with no terminal to ask on (an agent driving `-i` over pipes).
    let mut command = f.command(shell);
    command.env("PATH", "/usr/bin:/bin");
    if shell == "bash" {
        command
            .arg("--noprofile")
            .arg("--rcfile")
            .arg(f.home.join(".bashrc"));
    } else {
        command.env("ZDOTDIR", &f.home);
    }
    command
        .arg("-i")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    support::detach(&mut command);
    let mut child = command.spawn().unwrap();
    use std::io::Write;
    // The shell may be gone before it reads everything (a refused line interrupts it, and an
    // interrupted shell with no terminal may end): what matters is that nothing ran.
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{touch}\nexit\n").as_bytes());
    let piped = child.wait_with_output().unwrap();
    assert!(!marker.exists(), "{piped:?}");
    assert!(
        String::from_utf8_lossy(&piped.stderr).contains("shellgate is not installed"),
        "the line did not reach the hook: {piped:?}"
    );
    // Agent shells exit instead.
    let mut command = f.command(shell);
    command.env("PATH", "/usr/bin:/bin").arg("-c").arg(&touch);
    if shell == "bash" {
        command.env("BASH_ENV", f.home.join(".bashrc"));
    } else {
        command.env("ZDOTDIR", &f.home);
    }
    support::detach(&mut command);
    let out = run(command);
    assert_eq!(out.status.code(), Some(127), "{out:?}");
    assert!(!marker.exists());
}

#[test]
fn bash_missing_binary_asks_the_person_and_refuses_an_agent() {
    missing_binary_asks_the_person_and_refuses_an_agent("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_missing_binary_asks_the_person_and_refuses_an_agent() {
    missing_binary_asks_the_person_and_refuses_an_agent("zsh");
}

/// A hooked shell whose binary is removed while it runs (an uninstall) asks before each line as
/// well, instead of refusing every line as "the gate failed".
fn binary_removed_under_a_hooked_shell_asks(shell: &str) {
    let f = Fixture::new();
    f.own_binary();
    let mut sh = f.interactive(shell);
    let out = sh.line("echo before-$((1+1))");
    assert!(out.contains("before-2"), "{out}");
    f.remove_binary();
    let marker = f.ws.join("after-removal");
    let touch = format!("touch {}", marker.display());
    let (out, _) = answer_ungated(&mut sh, &touch, "n");
    assert!(out.contains("shellgate is gone"), "{out}");
    assert!(!marker.exists(), "{out}");
    let (out, status) = answer_ungated(&mut sh, &touch, "y");
    assert_eq!(status, 0, "{out}");
    assert!(marker.exists(), "{out}");
}

#[test]
fn bash_binary_removed_under_a_hooked_shell_asks() {
    binary_removed_under_a_hooked_shell_asks("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_binary_removed_under_a_hooked_shell_asks() {
    binary_removed_under_a_hooked_shell_asks("zsh");
}

/// The README's init lines are exactly what `shellgate init SHELL --startup-line` prints for the
/// binary where install.sh puts it (install.sh prints or writes that line).
#[test]
fn readme_init_lines_are_the_binarys_startup_lines() {
    let f = Fixture::new();
    // Not the symbolic link: the binary names itself by the path it was started from.
    let installed = f.own_binary();
    for shell in ["bash", "zsh"] {
        let out = support::isolate(&mut Command::new(&installed), &f.user)
            .args(["init", shell, "--startup-line"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().trim_end(),
            readme_init_line(shell),
            "{shell}"
        );
    }
}

/// The fixture's config with one `]` missing (the issue's typo), and the good text.
fn break_config(f: &Fixture) -> (PathBuf, String) {
    let config = f.home.join(".config/shellgate/config.toml");
    let good = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, good.replacen("[[rules]]", "[[rules]", 1)).unwrap();
    (config, good)
}

/// A config typo never locks the person out: lines are decided by the strictest built-in policy
/// (`untrusted`, built-in rules only) with a banner that names the file, `shellgate config check`
/// and `shellgate mode` run, a line approved runs, and the person's editor on the file (asked,
/// then run outside the sandbox, which never lets a line write shellgate's config) repairs it, as
/// `sed -i` with a plain substitution does after one question; removing the file does too. Before the fix every line was refused with CONFIG_INVALID.
fn config_typo_does_not_lock_the_person_out(shell: &str) {
    let f = Fixture::new();
    let (config, good) = break_config(&f);
    // A stand-in for the person's editor: it writes the good text into the file it is given.
    support::write_executable(
        &f.bin.join("fixconfig"),
        format!("#!/bin/sh\ncat > \"$1\" <<'EOF'\n{good}EOF\n"),
    );
    let mut sh = f.interactive(shell);
    let banner = "shellgate's config is invalid";
    assert!(
        sh.startup.contains(banner),
        "no banner at the start: {}",
        sh.startup
    );
    let (out, status) = sh.run("echo A$((40+2))", &[]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("A42"), "{out}");
    assert!(
        out.contains(banner) && out.contains("config.toml:1:"),
        "{out}"
    );
    assert!(out.contains("strictest built-in policy"), "{out}");
    let (out, status) = sh.run("shellgate config check", &[]);
    assert_eq!(status, 207, "{out}");
    assert!(
        out.contains("shellgate config: ") && out.contains("config.toml:1:"),
        "{out}"
    );
    assert!(!out.contains("not run"), "{out}");
    let (out, status) = sh.run("shellgate mode", &[]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("in effect: untrusted"), "{out}");
    // `touch` is allowed by the broken file's rule; now it is asked, and a yes works.
    let out = sh.line_answered("touch after-a-yes", "y");
    assert!(f.ws.join("after-a-yes").exists(), "{out}");
    // The editor: asked (it edits shellgate's config), then run outside the sandbox.
    let out = sh.line_answered(&format!("fixconfig {}", config.display()), "y");
    assert!(out.contains("runs outside the sandbox"), "{out}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), good, "{out}");
    // Repaired: no banner, and the file's rules apply again (`touch` runs unasked).
    let (out, status) = sh.run("touch unasked", &[]);
    assert_eq!(status, 0, "{out}");
    assert!(
        !out.contains(banner) && !out.contains("Allow once"),
        "{out}"
    );
    assert!(f.ws.join("unasked").exists());
    // `sed -i` with a plain substitution is an edit too: one question, then it works (before,
    // it was asked, failed in the sandbox, and was offered outside: two questions).
    break_config(&f);
    let mut questions = 0;
    let (out, status) = sh.answering(
        &format!(
            "sed -i 's/^\\[\\[rules\\]$/[[rules]]/' {}",
            config.display()
        ),
        |_| {
            questions += 1;
            "y".to_owned()
        },
    );
    assert_eq!(status, 0, "{out}");
    assert_eq!(questions, 1, "{out}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), good, "{out}");
    // Removing the file is the other way out.
    break_config(&f);
    let out = sh.line_answered(&format!("rm {}", config.display()), "y");
    assert!(!config.exists(), "{out}");
    let (out, status) = sh.run("echo fine", &[]);
    assert_eq!(status, 0, "{out}");
    assert!(!out.contains(banner), "{out}");
}

#[test]
fn bash_config_typo_does_not_lock_the_person_out() {
    config_typo_does_not_lock_the_person_out("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_config_typo_does_not_lock_the_person_out() {
    config_typo_does_not_lock_the_person_out("zsh");
}

/// A line the sandbox refused something, run again with the grant after a yes, gives back the
/// state of that second run: `cd sub` stays done (bash applied nothing, "the shell state has 22
/// sections, not 11": both runs' states came back on the same pipe; zsh applied the first's).
fn state_comes_back_from_the_run_with_the_grant(shell: &str) {
    let f = Fixture::new();
    std::fs::create_dir_all(f.ws.join("sub")).unwrap();
    std::fs::create_dir_all(f.home.join("notes")).unwrap();
    let mut sh = f.interactive(shell);
    // The first run fails (W=failed), the second succeeds (W=ok): only the second's state is
    // the line's.
    let line = "cd sub; echo x >> ~/notes/n.txt && W=ok || W=failed; [[ $W == ok ]]";
    let (out, status) = sh.run(line, &["y"]);
    assert!(out.contains("run it again, once"), "no escalation: {out}");
    assert_eq!(status, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(f.home.join("notes/n.txt")).unwrap(),
        "x\n"
    );
    assert!(
        !out.contains("not applied") && !out.contains("could not be read"),
        "{out}"
    );
    let out = sh.line("echo \"P=$PWD W=$W\"");
    assert!(
        out.contains(&format!("P={}/sub W=ok", f.ws.display())),
        "the state of the run with the grant was not applied: {out}"
    );
}

#[test]
fn bash_state_comes_back_from_the_run_with_the_grant() {
    state_comes_back_from_the_run_with_the_grant("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_state_comes_back_from_the_run_with_the_grant() {
    state_comes_back_from_the_run_with_the_grant("zsh");
}

/// `!!` runs the previous line again under the skeleton's `HISTCONTROL=ignoreboth` (the fixture's
/// `.bashrc` sets it): the repeated line is a duplicate that history does not record, so the
/// backstop saw no line and refused it ("the hook could not see this command line").
#[test]
fn bash_bang_bang_runs_under_ignoreboth() {
    let f = Fixture::new();
    let mut sh = f.interactive("bash");
    let out = sh.line("echo bang-$((40+2)) >> bangs.txt");
    assert!(!out.contains("not run"), "{out}");
    let (out, status) = sh.run("!!", &[]);
    assert!(!out.contains("could not see"), "{out}");
    // The Enter binding expands it and runs it as any other line: its own status, not the 130
    // of the backstop's interruption.
    assert_eq!(status, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(f.ws.join("bangs.txt")).unwrap(),
        "bang-42\nbang-42\n",
        "{out}"
    );
    // A line history did record (no duplicate) still comes from history.
    sh.line("echo other-$((1+1)) >> bangs.txt");
    let (out, status) = sh.run("!-2", &[]);
    assert_eq!(status, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(f.ws.join("bangs.txt")).unwrap(),
        "bang-42\nbang-42\nother-2\nbang-42\n"
    );
    // `^old^new` runs the last line with a substitution, and history keeps the line that ran, as
    // bash keeps it.
    let (out, status) = sh.run("^bang^bong", &[]);
    assert_eq!(status, 0, "{out}");
    let out = sh.line("history 2");
    assert!(out.contains("echo bong-$((40+2)) >> bangs.txt"), "{out}");
    // A `!` that does not expand (quoted) leaves the line as typed: the hook takes it as before,
    // and the prompt shows its own status.
    let (out, status) = sh.run("echo \"$((6*7))\"'-no-bang!' >> bangs.txt", &[]);
    assert_eq!(status, 0, "{out}");
    // An event that does not exist runs nothing (bash says so); `:p` only prints the line (both
    // are left to bash).
    let (out, _) = sh.run("echo !no-such-event >> bangs.txt", &[]);
    assert!(out.contains("event not found"), "{out}");
    let (out, _) = sh.run("!echo:p", &[]);
    assert!(out.contains("-no-bang!' >> bangs.txt"), "{out}");
    assert_eq!(
        std::fs::read_to_string(f.ws.join("bangs.txt")).unwrap(),
        "bang-42\nbang-42\nother-2\nbang-42\nbong-42\n42-no-bang!\n"
    );
}

/// `shellgate mode auto` without a `[reviewer]` is refused, saying why, instead of being accepted
/// silently and then refusing every flagged line with REVIEWER_UNCONFIGURED — and refused before
/// the person is asked about it: a yes would only have ended in the same refusal.
#[test]
fn bash_mode_auto_without_a_reviewer_is_refused() {
    let f = Fixture::new();
    let mut sh = f.interactive("bash");
    let (out, status) = sh.run("shellgate mode auto", &[]);
    assert!(!out.contains("Allow once?"), "asked, then refused: {out}");
    assert_eq!(status, 208, "{out}");
    assert!(out.contains("no `[reviewer]` is configured"), "{out}");
    assert!(out.contains("the mode was not changed"), "{out}");
    let (out, _) = sh.run("shellgate mode", &[]);
    assert!(out.contains("in effect: ask"), "{out}");
}

/// A here-document (a line the prompt's function cannot take: it goes to the backstop, which
/// interrupts the shell once the line ran) leaves the line's own status in `$?` for the next
/// line, not 130. (The prompt right after it still shows 130: bash restores `$?` around
/// PROMPT_COMMAND.)
#[test]
fn bash_here_document_leaves_its_own_status() {
    let f = Fixture::new();
    let mut sh = f.interactive("bash");
    sh.pty.send_line("cat <<EOF > hd.txt").unwrap();
    sh.pty.send_line("x-$((40+2))").unwrap();
    sh.run("EOF", &[]);
    assert_eq!(
        std::fs::read_to_string(f.ws.join("hd.txt")).unwrap(),
        "x-42\n"
    );
    let out = sh.line("echo \"was=$?\"");
    assert!(out.contains("was=0"), "{out}");
    sh.pty.send_line("sh -c 'exit 3' <<EOF").unwrap();
    sh.run("EOF", &[]);
    let out = sh.line("echo \"was=$?\"");
    assert!(out.contains("was=3"), "{out}");
    // Only the next line's: then the lines' own again.
    let (_, status) = sh.run("true", &[]);
    assert_eq!(status, 0);
    let out = sh.line("echo \"was=$?\"");
    assert!(out.contains("was=0"), "{out}");
}

/// Setting `PS1` to a value that runs nothing at the prompt is applied without a question
/// (before: "Allow once?" as hook state, then "apply to this shell?"), also when the value is only
/// known at run time (the line runs in the sandbox; the seal judges the value it left); one that
/// would run a command at every prompt is applied only after a yes, and Enter drops it (the
/// only question: the line itself runs in the sandbox).
fn typed_literal_prompt_is_applied_unasked(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    let status_escape = if shell == "zsh" { "%?" } else { "$?" };
    let (out, status) = sh.run(&format!("PS1='>[{status_escape}]PROMPT$ '"), &["n"]);
    assert_eq!(status, 0, "{out}");
    assert!(!out.contains("approval is needed"), "asked: {out}");
    assert!(!out.contains("apply to this shell"), "asked: {out}");
    assert!(out.ends_with('>'), "PS1 was not applied: {out:?}");
    let (out, _) = sh.run(
        &format!("PS1=\"$(echo '[{status_escape}]PROMPT$ ')\""),
        &["n"],
    );
    assert!(!out.contains("approval is needed"), "asked: {out}");
    assert!(!out.contains("apply to this shell"), "asked: {out}");
    assert!(!out.ends_with('>'), "PS1 was not applied: {out:?}");
    let marker = f.marker("prompt-ran");
    let (out, _) = sh.run(
        &format!(
            "PS1='$(touch {}) [{status_escape}]PROMPT$ '",
            marker.display()
        ),
        // Enter to applying it (the line itself runs in the sandbox unasked).
        &["", ""],
    );
    assert!(out.contains("apply to this shell"), "{out}");
    let (out, _) = sh.run("true", &[]);
    assert!(!marker.exists(), "{out}");
}

#[test]
fn bash_typed_literal_prompt_is_applied_unasked() {
    typed_literal_prompt_is_applied_unasked("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_typed_literal_prompt_is_applied_unasked() {
    typed_literal_prompt_is_applied_unasked("zsh");
}

/// zsh's `history` in a line that runs in the sandbox (`history | tail`) lists the history
/// without "locking failed … read-only file system": zsh locks every history file it reads, and
/// the copy of the person's history the line reads lies where the sandbox lets nothing write.
#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_history_in_the_sandbox_prints_no_locking_error() {
    // A shared history file too, as many zsh setups have.
    let f = Fixture::with_rc(
        "HISTFILE=~/.zsh_history; SAVEHIST=1000; HISTSIZE=1000\n\
         [ -n \"$ZSH_VERSION\" ] && setopt share_history",
    );
    let mut sh = f.interactive("zsh");
    sh.line("echo one-$((1+1))");
    let (out, status) = sh.run("history | tail -3", &[]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("echo one-$((1+1))"), "{out}");
    assert!(!out.contains("locking failed"), "{out}");
}

// ------------------------------------------------------------------------------------------------
// The README's Setup and Uninstall, followed as written, on the stock skeleton dotfiles.

/// A home made from `/etc/skel` (Debian's and Ubuntu's stock dotfiles), with the person's own
/// prompt at the end of their startup files, a workspace, and install.sh run as the README's
/// Setup says (`./install.sh --hook`; `--binary` installs the test's build instead of building a
/// release).
struct Skeleton {
    _tmp: tempfile::TempDir,
    user: support::Home,
    home: PathBuf,
    ws: PathBuf,
    /// More of the person's environment, for their shells.
    env: Vec<(String, String)>,
    /// Where the person's shells start (`None`: the workspace).
    start: Option<PathBuf>,
}

impl Skeleton {
    fn installed() -> Skeleton {
        let tmp = support::scratch_dir();
        let user = support::Home::at(tmp.path().join("home"));
        let home = user.home.clone();
        let ws = tmp.path().join("ws");
        support::workspace(&ws);
        let copied = Command::new("cp")
            .args(["-a", "/etc/skel/."])
            .arg(&home)
            .status()
            .unwrap();
        assert!(copied.success());
        let prompt = |file: &str, ps1: &str| {
            let path = home.join(file);
            let mut text = std::fs::read_to_string(&path).unwrap_or_default();
            text.push_str(&format!("PS1='{ps1}'\n"));
            std::fs::write(path, text).unwrap();
        };
        prompt(".bashrc", "[$?]PROMPT$ ");
        prompt(".zshrc", "[%?]PROMPT$ ");
        let skeleton = Skeleton {
            _tmp: tmp,
            user,
            home,
            ws,
            env: Vec::new(),
            start: None,
        };
        let install = Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
        let out = skeleton
            .command("bash")
            .arg(install)
            .args(["--hook", "--binary", SHELLGATE])
            .output()
            .unwrap();
        assert!(out.status.success(), "install.sh: {out:?}");
        skeleton
    }

    /// A clean environment for the person: no ~/.local/bin on PATH (only a login shell's
    /// ~/.profile adds it), as `su -`, ssh and a new tmux window start with.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        support::isolate(&mut c, &self.user)
            .current_dir(self.start.as_ref().unwrap_or(&self.ws))
            .env("TERM", "xterm")
            .env("SHELL", format!("/bin/{program}"))
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        c
    }

    /// A login shell (`bash -l`, `zsh -l`) in a pseudo-terminal, at its first prompt.
    fn login(&self, shell: &str) -> Shell {
        self.login_as(shell, None)
    }

    /// A login shell as `uid` (the test process must be root to give one).
    fn login_as(&self, shell: &str, uid: Option<u32>) -> Shell {
        let mut command = self.command(shell);
        command.args(["-l", "-i"]);
        if let Some(id) = uid {
            use std::os::unix::process::CommandExt;
            // SAFETY: between fork and exec, only async-signal-safe calls on plain integers.
            unsafe {
                command.pre_exec(move || {
                    if libc::setgroups(0, std::ptr::null()) != 0
                        || libc::setresgid(id, id, id) != 0
                        || libc::setresuid(id, id, id) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let mut pty = rexpect::session::spawn_command(command, Some(TIMEOUT_MS)).unwrap();
        pty.process_mut().set_kill_timeout(Some(200));
        let (startup, _) = pty
            .exp_regex(PROMPT_RE)
            .expect("the login shell's first prompt");
        Shell {
            pty,
            startup,
            zsh: shell == "zsh",
        }
    }
}

/// The README's Setup on the stock skeleton: after `./install.sh --hook`, a login shell — whose
/// `~/.profile` reads `~/.bashrc` before it puts `~/.local/bin` on `PATH` — is hooked (its
/// lines are gated) and has `~/.local/bin` on `PATH`. Then Uninstall: `shellgate uninstall`,
/// asked and answered, removes the line and the binary; the open shell asks before each line
/// from then on, and a new login shell starts without the hook. With the README's line before
/// (`shellgate init` found through `PATH`) the login shell refused every line, `exit` included.
fn readme_setup_and_uninstall_on_the_skeleton(shell: &str) {
    let s = Skeleton::installed();
    let bin = s.home.join(".local/bin/shellgate");
    assert!(bin.is_file());
    for file in [".bashrc", ".zshrc", ".zshenv"] {
        let text = std::fs::read_to_string(s.home.join(file)).unwrap();
        let want = if file == ".bashrc" { "bash" } else { "zsh" };
        assert!(
            text.lines().any(|l| l == readme_init_line(want)),
            "{file} lacks the README's line: {text}"
        );
    }
    let mut sh = s.login(shell);
    let (out, status) = sh.run("echo \"S=${SHELLGATE_SESSION:+hooked} P=$PATH\"", &[]);
    assert_eq!(status, 0, "{}{out}", sh.startup);
    assert!(
        out.contains("S=hooked"),
        "the login shell is not hooked: {out}"
    );
    if shell == "bash" {
        // ~/.profile ran, after ~/.bashrc: the init line did not need PATH.
        let local_bin = format!("{}/.local/bin", s.home.display());
        assert!(out.contains(&local_bin), "{out}");
    }
    let (out, status) = sh.run("rm -rf ~", &[]);
    assert_eq!(status, 202, "{out}");
    assert!(s.home.join(".profile").exists());
    // Uninstall, typed as the README says (zsh's login shell has no ~/.local/bin on PATH: the
    // hook runs its own commands by its binary's path): asked, then run in the shell.
    let (out, status) = sh.run("shellgate uninstall", &["y"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("approval is needed"), "{out}");
    assert!(out.contains("removed"), "{out}");
    assert!(!bin.exists(), "{out}");
    for file in [".bashrc", ".zshrc", ".zshenv"] {
        let text = std::fs::read_to_string(s.home.join(file)).unwrap();
        assert!(!text.contains("shellgate"), "{file}: {text}");
    }
    assert!(!s.home.join(".local/share/man/man1/shellgate.1").exists());
    // The open shell asks; a yes runs the line.
    let (out, status) = answer_ungated(&mut sh, "echo still-$((2+2))", "y");
    assert!(out.contains("shellgate is gone"), "{out}");
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("still-4"), "{out}");
    // A new login shell starts without the hook, and asks nothing.
    let mut fresh = s.login(shell);
    let (out, status) = fresh.run("echo \"S=${SHELLGATE_SESSION:-none}\"", &[]);
    assert_eq!(status, 0, "{}{out}", fresh.startup);
    assert!(out.contains("S=none"), "{out}");
    assert!(!out.contains("without it"), "{out}");
}

#[test]
#[cfg_attr(
    not(has_skel),
    ignore = "no /etc/skel/.profile and .bashrc (Debian's base-files, bash)"
)]
fn bash_readme_setup_and_uninstall_on_the_skeleton() {
    readme_setup_and_uninstall_on_the_skeleton("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_readme_setup_and_uninstall_on_the_skeleton() {
    readme_setup_and_uninstall_on_the_skeleton("zsh");
}

/// A line that only edits a shell startup file (an alias added to `~/.bashrc`) is asked once, as a
/// run outside the sandbox, and the yes works. Before, the yes ran it in the sandbox, where no line
/// can write a startup file, and a second question followed.
fn a_yes_to_editing_a_startup_file_works_the_first_time(shell: &str) {
    let f = Fixture::new();
    let rc = f.home.join(".bashrc");
    let before = std::fs::read_to_string(&rc).unwrap_or_default();
    let mut sh = f.interactive(shell);
    let mut questions: Vec<String> = Vec::new();
    let (out, status) = sh.answering("echo 'alias ll=\"ls -l\"' >> ~/.bashrc", |question| {
        questions.push(question.to_owned());
        "y".to_owned()
    });
    assert_eq!(status, 0, "{out}");
    assert_eq!(questions.len(), 1, "asked more than once: {out}");
    assert!(questions[0].contains("sandbox: NONE"), "{out}");
    assert!(out.contains("runs outside the sandbox"), "{out}");
    let after = std::fs::read_to_string(&rc).unwrap();
    assert_eq!(after, format!("{before}alias ll=\"ls -l\"\n"), "{out}");
}

#[test]
fn bash_a_yes_to_editing_a_startup_file_works_the_first_time() {
    a_yes_to_editing_a_startup_file_works_the_first_time("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_yes_to_editing_a_startup_file_works_the_first_time() {
    a_yes_to_editing_a_startup_file_works_the_first_time("zsh");
}

/// `bash` typed in a hooked bash (`zsh` in zsh) starts a shell of the person's that is hooked
/// too: it runs in the shell, reads the same startup files, and its lines are judged. Before, it
/// ran in the sandbox, an interactive shell whose lines nobody judged and that could write nothing
/// outside the workspace, until `exit` (seen typing in tmux).
fn a_nested_shell_is_hooked(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    // A program named like the shell, planted by a (sandboxed) line in a workspace directory the
    // person then put first on PATH (as a venv's `activate` does): the shell that starts outside
    // the sandbox is the real one, never this.
    let planted = f.marker("planted-shell-ran");
    sh.line(&format!(
        "mkdir -p planted && printf '#!/bin/sh\\ntouch {}\\n' > planted/{shell} && chmod +x planted/{shell}",
        planted.display()
    ));
    let (out, _) = sh.run("export PATH=\"$PWD/planted:$PATH\"", &["y"]);
    assert!(
        f.ws.join("planted").join(shell).exists(),
        "the planted program is not there: {out}"
    );
    let (out, status) = sh.run(shell, &[]);
    assert!(
        !planted.exists(),
        "the planted {shell} ran outside the sandbox: {out}"
    );
    assert_eq!(status, 0, "the nested shell did not start: {out}");
    assert!(!out.contains("Allow once"), "asked to start a shell: {out}");
    // A line of the nested shell is the gate's: a write outside the workspace fails in the
    // sandbox, and shellgate says so (in an unhooked sandboxed shell it failed with only the
    // program's error; in an unhooked shell outside, the marker would be there).
    let marker = f.marker("nested");
    let (out, status) = sh.run_answering_outside(&format!("touch {}", marker.display()), "");
    assert_eq!(status, 217, "{out}");
    assert!(out.contains("shellgate: failed in the sandbox"), "{out}");
    assert!(!marker.exists(), "{out}");
    // `exit` leaves the nested shell for the first one (whose `$?` is the nested shell's last
    // status), still hooked.
    let (out, status) = sh.run("exit", &[]);
    assert_eq!(status, 217, "{out}");
    let (out, status) = sh.run("touch inside-after-exit", &[]);
    assert_eq!(status, 0, "{out}");
    assert!(f.ws.join("inside-after-exit").exists(), "{out}");
}

#[test]
fn bash_a_nested_shell_is_hooked() {
    a_nested_shell_is_hooked("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_nested_shell_is_hooked() {
    a_nested_shell_is_hooked("zsh");
}

/// A line a person would let run outside the sandbox never runs a program that a sandboxed line
/// could have written: with a workspace directory first on PATH (as a venv's `activate` puts its
/// `bin`) holding a planted `vi` and `touch`, `vi ~/.bashrc` (an editor on a startup file, asked
/// as a run outside) and `touch ~/x` (refused by the sandbox, then offered outside) are refused
/// without a question, naming the file; before, a yes ran the planted program with the person's
/// rights.
fn a_planted_program_never_runs_outside(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    let planted = f.marker("planted-ran");
    for program in ["vi", "touch"] {
        sh.line(&format!(
            "mkdir -p bin && printf '#!/bin/sh\\n/usr/bin/touch {}\\nexit 1\\n' > bin/{program} && chmod +x bin/{program}",
            planted.display()
        ));
    }
    let (out, _) = sh.run("export PATH=\"$PWD/bin:$PATH\"", &["y"]);
    assert!(f.ws.join("bin/vi").exists(), "{out}");
    for line in ["vi ~/.bashrc", "touch ~/from-a-planted-touch"] {
        let mut questions = 0;
        let (out, status) = sh.answering(line, |_| {
            questions += 1;
            "y".to_owned()
        });
        assert_eq!(
            questions, 0,
            "{line:?} was offered outside the sandbox: {out}"
        );
        assert_ne!(status, 0, "{out}");
        assert!(
            out.contains("which lines in the sandbox may write"),
            "{line:?}: {out}"
        );
        assert!(out.contains(&format!("{}/bin/", f.ws.display())), "{out}");
        assert!(
            !planted.exists(),
            "{line:?}: the planted program ran outside: {out}"
        );
    }
    // Planted while the question is up: `zellij` (a multiplexer, asked as a run outside, and
    // installed nowhere here) appears in `bin/` after the question and before the yes, as an
    // agent beside the shell could put it. Checked again after the yes: refused, not run.
    assert!(
        !Path::new("/usr/bin/zellij").exists() && !Path::new("/usr/local/bin/zellij").exists(),
        "this test needs zellij not installed"
    );
    let script = format!("#!/bin/sh\n/usr/bin/touch {}\n", planted.display());
    let (out, status) = sh.answering("zellij", |_| {
        let file = f.ws.join("bin/zellij");
        std::fs::write(&file, &script).unwrap();
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        "y".to_owned()
    });
    assert_ne!(status, 0, "{out}");
    assert!(out.contains("after the yes"), "{out}");
    assert!(
        out.contains("which lines in the sandbox may write"),
        "{out}"
    );
    assert!(!planted.exists(), "the planted zellij ran outside: {out}");
}

#[test]
fn bash_a_planted_program_never_runs_outside() {
    a_planted_program_never_runs_outside("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_planted_program_never_runs_outside() {
    a_planted_program_never_runs_outside("zsh");
}

/// The prompt runs no program a line could have planted: with a workspace directory first on PATH
/// (as a venv's `activate` puts its `bin`), a `git` or `id` a sandboxed line wrote there after
/// PATH named it is not what the prompt runs (a precmd here, in a subshell as `$(__git_ps1)` is:
/// the shell's own command hash never learns the name).
/// Before, the next prompt ran the planted file with the person's rights (seen in tmux: it wrote
/// into the home). What the person types still finds the planted one first, and it runs in the
/// sandbox.
fn the_prompt_runs_no_planted_program(shell: &str) {
    let f = Fixture::with_rc(
        "sgprobe() { (git --version; id -u; whoami) >/dev/null 2>&1; }\n\
         if [ -n \"${ZSH_VERSION-}\" ]; then precmd_functions+=(sgprobe); \
         else PROMPT_COMMAND=\"$PROMPT_COMMAND\"$'\\n'sgprobe; fi",
    );
    let mut sh = f.interactive(shell);
    let plant = |sh: &mut Shell, program: &str| {
        let marker = f.marker(&format!("planted-{program}-ran"));
        sh.line(&format!(
            "mkdir -p bin && printf '#!/bin/sh\\n/usr/bin/touch {}\\nexec /usr/bin/{program} \"$@\"\\n' > bin/{program} && chmod +x bin/{program}",
            marker.display()
        ));
        assert!(f.ws.join("bin").join(program).exists());
        marker
    };
    // PATH first names a directory that does not exist yet (as a venv's bin before it is made).
    let (out, _) = sh.run("export PATH=\"$PWD/bin:$PATH\"", &["y"]);
    assert!(!f.ws.join("bin").exists(), "{out}");
    let mut markers = Vec::new();
    // A line makes it and puts `git` there; later another line adds `id` to it (the directory
    // exists then, and only its contents change).
    for program in ["git", "id"] {
        markers.push(plant(&mut sh, program));
        for line in ["true", "echo between-prompts", "cd ."] {
            let (out, status) = sh.run(line, &[]);
            assert_eq!(status, 0, "{out}");
            for marker in &markers {
                assert!(!marker.exists(), "the prompt ran a planted program: {out}");
            }
        }
    }
    // A background job of the shell's, still running at the prompts, puts a `whoami` there and
    // takes it away, over and over: no moment between a check and the prompt's use to win. (It
    // ends by itself within 30 s, so a failing test leaves nothing running.)
    let flicker = f.marker("planted-whoami-ran");
    std::fs::write(
        f.ws.join("flicker.sh"),
        format!(
            "while :; do printf '#!/bin/sh\\n/usr/bin/touch {}\\n' > bin/w.new && \\
             chmod +x bin/w.new && mv -f bin/w.new bin/whoami && sleep 0.05 && rm -f bin/whoami; done\n",
            flicker.display()
        ),
    )
    .unwrap();
    sh.line("timeout 30 sh flicker.sh &");
    for _ in 0..10 {
        let (out, _) = sh.run("true", &[]);
        assert!(
            !flicker.exists(),
            "the prompt ran the flickering whoami: {out}"
        );
    }
    let (out, _) = sh.run("jobs", &[]);
    // (bash says `Running`, zsh `running`.)
    assert!(
        out.to_lowercase().contains("running"),
        "the job is not running: {out}"
    );
    let (out, _) = sh.run("kill %1", &[]);
    assert!(!flicker.exists(), "{out}");
    // A typed line still runs the first `git` on PATH, the planted one, in the sandbox (where
    // its write outside fails), and the real git after it.
    let out = sh.line("git --version");
    assert!(out.contains("git version"), "{out}");
    assert!(!markers[0].exists(), "{out}");
}

#[test]
fn bash_the_prompt_runs_no_planted_program() {
    the_prompt_runs_no_planted_program("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_the_prompt_runs_no_planted_program() {
    the_prompt_runs_no_planted_program("zsh");
}

/// `exec bash` (`exec zsh`) is asked about once, and after the yes it replaces the person's shell
/// with a new one, which loads the hook: its lines are judged. Before, it ran unasked in the
/// sandbox, where it replaced only the line's own shell and left the person in an unhooked
/// sandboxed shell until `exit`.
fn exec_replaces_the_shell_with_a_hooked_one(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    let mut questions: Vec<String> = Vec::new();
    let (out, status) = sh.answering(&format!("exec {shell}"), |question| {
        questions.push(question.to_owned());
        "y".to_owned()
    });
    assert_eq!(status, 0, "{out}");
    assert_eq!(questions.len(), 1, "{out}");
    assert!(questions[0].contains("`exec` replaces this shell"), "{out}");
    assert!(questions[0].contains("sandbox: NONE"), "{out}");
    let marker = f.marker("after-exec");
    let (out, status) = sh.run_answering_outside(&format!("touch {}", marker.display()), "");
    assert_eq!(status, 217, "{out}");
    assert!(out.contains("shellgate: failed in the sandbox"), "{out}");
    assert!(!marker.exists(), "{out}");
}

#[test]
fn bash_exec_replaces_the_shell_with_a_hooked_one() {
    exec_replaces_the_shell_with_a_hooked_one("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_exec_replaces_the_shell_with_a_hooked_one() {
    exec_replaces_the_shell_with_a_hooked_one("zsh");
}

/// A line that only edits shellgate's config runs outside the sandbox only from the person's own
/// hooked shell: through `shellgate run` (an agent's shell, `wrap`) it would run with its
/// caller's environment, which the question does not show, so it is asked with the sandbox and
/// keeps it, and the edit fails.
#[test]
fn a_config_edit_through_run_keeps_the_sandbox() {
    let f = Fixture::new();
    let config = f.home.join(".config/shellgate/config.toml");
    let mut command = f.command(SHELLGATE);
    command
        .args(["run", "--"])
        .arg(format!("rm {}", config.display()));
    let mut pty = rexpect::session::spawn_command(command, Some(TIMEOUT_MS)).unwrap();
    let (before, _) = pty.exp_regex(r"Allow once\? \[y/N").unwrap();
    assert!(before.contains("sandbox: workspace-write"), "{before}");
    assert!(before.contains("not from this door"), "{before}");
    pty.send_line("y").unwrap();
    let rest = pty.exp_eof().unwrap();
    assert!(
        config.exists(),
        "the config was removed outside the sandbox: {rest}"
    );
}

/// A question from a background process group (here `timeout`, which puts itself in a group of
/// its own) cannot reach the person: it fails at once instead of stopping the process for good.
#[test]
fn approval_from_a_background_group_does_not_hang() {
    let f = Fixture::new();
    let mut command = f.command("bash");
    command
        .args(["--norc", "--noprofile", "-i"])
        .env("PS1", "[$?]PROMPT$ ");
    let mut pty = rexpect::session::spawn_command(command, Some(TIMEOUT_MS)).unwrap();
    pty.process_mut().set_kill_timeout(Some(200));
    pty.send_line("PS1='[$?]PROMPT$ '").unwrap();
    pty.exp_regex(PROMPT_RE).unwrap();
    pty.exp_regex(PROMPT_RE).unwrap();
    pty.send_line("bash -c 'timeout 5 shellgate run -- \"mkdir asked\"; echo \"rc=$?\"'")
        .unwrap();
    let (out, rc) = pty.exp_regex(r"rc=\d+").unwrap();
    // Refused at once, not left waiting for an answer that cannot come (`timeout` ends a hung
    // question with 124).
    assert_eq!(rc, "rc=210", "{out}");
    assert!(out.contains("APPROVAL_UNAVAILABLE"), "{out}");
    assert!(out.contains("background process group"), "{out}");
    assert!(!f.ws.join("asked").exists());
}

// ------------------------------------------------------------------------------------------------
// Agent shells: no terminal, `bash -c` through BASH_ENV, `zsh -c` through .zshenv.

fn agent_shell(f: &Fixture, shell: &str, line: &str) -> Output {
    let mut command = f.command(shell);
    command
        .arg("-c")
        .arg(line)
        .stdin(std::process::Stdio::null());
    if shell == "bash" {
        command.env("BASH_ENV", f.home.join("hook.bash"));
    } else {
        command.env("ZDOTDIR", &f.home);
    }
    // New session: no controlling terminal, like an agent's subprocess.
    support::detach(&mut command);
    run(command)
}

fn agent_lines(shell: &str) {
    let f = Fixture::new();
    // Allowed: runs, in the sandbox, with its own exit status.
    let out = agent_shell(&f, shell, "echo hi; touch inside");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
    assert_eq!(out.status.code(), Some(0));
    assert!(f.ws.join("inside").exists());
    let out = agent_shell(&f, shell, &format!("touch {}", f.marker("agent").display()));
    assert_ne!(out.status.code(), Some(0));
    assert!(
        !f.marker("agent").exists(),
        "an agent line wrote outside the workspace"
    );
    // Refused: nothing runs, the refusal reaches stderr, the status says why.
    let out = agent_shell(&f, shell, "touch first; rm -rf ~");
    assert_eq!(out.status.code(), Some(202));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[auto-review-never] NEVER_POLICY"), "{err}");
    assert!(!f.ws.join("first").exists());
    // Needs a person, and there is none.
    std::fs::create_dir_all(f.ws.join("d")).unwrap();
    let out = agent_shell(&f, shell, "rm -r d");
    assert_eq!(out.status.code(), Some(210));
    assert!(String::from_utf8_lossy(&out.stderr).contains("APPROVAL_UNAVAILABLE"));
    assert!(f.ws.join("d").is_dir());
    // An agent cannot reach Full access.
    let out = agent_shell(&f, shell, "shellgate mode full");
    assert_ne!(out.status.code(), Some(0));
    let out = agent_shell(
        &f,
        shell,
        &format!("touch {}", f.marker("agent-full").display()),
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(!f.marker("agent-full").exists());
}

#[test]
fn bash_c_lines_are_gated() {
    agent_lines("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_c_lines_are_gated() {
    agent_lines("zsh");
}

#[test]
fn bash_c_keeps_positional_parameters() {
    let f = Fixture::new();
    let mut command = f.command("bash");
    command
        .args(["-c", "echo \"$0:$1:$2\"", "zero", "one", "two"])
        .env("BASH_ENV", f.home.join("hook.bash"));
    let out = run(command);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "zero:one:two\n");
}

// ------------------------------------------------------------------------------------------------
// The templates themselves: linted and loaded by their real shells.

#[test]
#[cfg_attr(
    not(has_shellcheck),
    ignore = "shellcheck is not installed (apt-get install shellcheck)"
)]
fn bash_template_passes_shellcheck() {
    let f = Fixture::new();
    let out = f
        .command("shellcheck")
        .args(["--shell=bash", "--severity=warning"])
        .arg(f.home.join("hook.bash"))
        .output()
        .expect("shellcheck runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_template_parses() {
    let f = Fixture::new();
    let out = f
        .command("zsh")
        .arg("-n")
        .arg(f.home.join("hook.zsh"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bash_template_loads_cleanly_with_strict_options() {
    let f = Fixture::new();
    // An interactive bash reading its commands from standard input: strict options on (-e -u
    // -o pipefail), the hook loaded twice (the guard makes the second a no-op), no error printed,
    // and a builtin-only line still runs in the shell.
    let mut command = f.command("bash");
    command.args(["--noprofile", "--norc", "-i", "-e", "-u", "-o", "pipefail"]);
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    use std::io::Write;
    let script = format!(
        "source {hook}; source {hook}; echo \"loaded=$__shellgate_loaded\"\necho after-load\nexit 0\n",
        hook = f.home.join("hook.bash").display()
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("loaded=1"), "{stdout} {stderr}");
    // The next line went through the gate (an allowed builtin-only line runs in the shell).
    assert!(stdout.contains("after-load"), "{stdout} {stderr}");
    // Nothing but bash's own notice about job control (stdin is not a terminal) is printed.
    let unexpected: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            !l.contains("job control")
                && !l.contains("terminal process group")
                && !l.starts_with("bash-")
                && l.trim() != "exit"
                && !l.trim().is_empty()
        })
        .collect();
    assert!(unexpected.is_empty(), "{unexpected:?}");
}

#[test]
fn powershell_template_matches_its_golden_file_and_parses() {
    let f = Fixture::new();
    let out = f
        .command(SHELLGATE)
        .args(["init", "powershell"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // The binary path varies; everything else is fixed.
    let normalised = text
        .replace(SHELLGATE, "/path/to/shellgate")
        .lines()
        .map(|l| l.to_owned())
        .collect::<Vec<_>>()
        .join("\n");
    let golden_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/init-powershell.ps1");
    if std::env::var_os("SHELLGATE_BLESS").is_some() {
        std::fs::create_dir_all(golden_path.parent().unwrap()).unwrap();
        std::fs::write(&golden_path, &normalised).unwrap();
    }
    let golden =
        std::fs::read_to_string(&golden_path).expect("golden file (SHELLGATE_BLESS=1 writes it)");
    assert_eq!(normalised, golden);
    assert!(
        shellgate::parse::is_valid_powershell(&text),
        "the PowerShell hook does not parse"
    );
}

#[test]
#[cfg_attr(
    not(has_pwsh),
    ignore = "pwsh is not installed (the template is still checked by parser and golden file)"
)]
fn powershell_hook_runs_where_pwsh_exists() {
    let f = Fixture::new();
    let hook = String::from_utf8(
        f.command(SHELLGATE)
            .args(["init", "powershell"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    std::fs::write(f.home.join("hook.ps1"), hook).unwrap();
    let mut command = f.command("pwsh");
    command
        .args(["-NoLogo", "-NonInteractive", "-NoProfile", "-Command"])
        .arg(format!(
            ". {}; 'loaded:' + $global:__ShellgateLoaded",
            f.home.join("hook.ps1").display()
        ));
    let out = run(command);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("loaded:True"),
        "{out:?}"
    );
}

/// Even with the prompt hook removed (possible only where lines run in the shell: Full access),
/// every line is still judged, and an earlier decision is never replayed for a new line.
#[test]
fn bash_gate_survives_a_cleared_prompt_command() {
    let f = Fixture::new();
    let mut sh = f.interactive("bash");
    let (out, _) = sh.run("shellgate mode full", &["y", "full"]);
    assert!(out.contains("mode: full"), "{out}");
    sh.line("PROMPT_COMMAND=");
    sh.line_answered("shellgate mode ask", "y");
    let marker = f.marker("after-clear");
    sh.run_answering_outside(&format!("touch {}", marker.display()), "");
    assert!(
        !marker.exists(),
        "a line ran unsandboxed after PROMPT_COMMAND was cleared"
    );
    let out = sh.line("rm -rf ~");
    assert!(out.contains("not run"), "{out}");
}

/// A yes means it works: what no sandboxed line can be granted — a file in the home itself, a
/// directory made there, a shell startup file, `.git/config` through git's own command — is
/// offered to the person, in their own shell, as one run outside the sandbox (no by default);
/// after the yes it is done, after Enter (the default) nothing is. Before, the line failed with
/// "cannot be granted" and no way out. (The startup file's line is asked so up front, since it
/// only edits a startup file: `a_yes_to_editing_a_startup_file_works_the_first_time`.)
fn a_yes_to_what_no_line_can_be_granted_runs_it_outside_once(shell: &str) {
    let f = Fixture::new();
    let git = |args: &[&str]| {
        let ok = support::isolate(&mut Command::new("git"), &f.user)
            .args(args)
            .current_dir(&f.ws)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["config", "user.name", "t"]);
    let mut sh = f.interactive(shell);
    let rc = if shell == "zsh" { ".zshrc" } else { ".bashrc" };
    let lines = [
        "echo note >> ~/notes.txt".to_owned(),
        "install -d ~/proj".to_owned(),
        format!("echo \"alias ll='ls -l'\" >> ~/{rc}"),
        "git remote add origin /srv/nowhere.git".to_owned(),
    ];
    // Enter, the default, to the offer to run outside (a question before the run gets a yes):
    // nothing is done.
    for line in &lines {
        let (out, status) = sh.run_answering_outside(line, "");
        assert!(
            out.contains("outside the sandbox, in this shell"),
            "{line}: {out}"
        );
        assert_ne!(status, 0, "{line}: {out}");
    }
    assert!(!f.home.join("notes.txt").exists());
    assert!(!f.home.join("proj").exists());
    assert!(
        !std::fs::read_to_string(f.home.join(rc))
            .unwrap()
            .contains("alias ll")
    );
    // A yes: each is done.
    for line in &lines {
        let (out, status) = sh.run_answering_outside(line, "y");
        assert_eq!(status, 0, "{line}: {out}");
    }
    assert_eq!(
        std::fs::read_to_string(f.home.join("notes.txt")).unwrap(),
        "note\n"
    );
    assert!(f.home.join("proj").is_dir());
    assert!(
        std::fs::read_to_string(f.home.join(rc))
            .unwrap()
            .contains("alias ll")
    );
    assert!(
        std::fs::read_to_string(f.ws.join(".git/config"))
            .unwrap()
            .contains("nowhere.git")
    );
}

#[test]
fn bash_a_yes_to_what_no_line_can_be_granted_runs_it_outside_once() {
    a_yes_to_what_no_line_can_be_granted_runs_it_outside_once("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_yes_to_what_no_line_can_be_granted_runs_it_outside_once() {
    a_yes_to_what_no_line_can_be_granted_runs_it_outside_once("zsh");
}

/// A set-id program (found by its mode, not its name: `sudo`, `su`, `passwd`…) cannot work in
/// the sandbox (`no_new_privs`). In the person's own shell it is asked about as one run outside
/// the sandbox (Enter: nothing runs; yes: it runs, in the shell); anywhere else (`run`, an agent)
/// it is refused with TERMINAL_REQUIRED, saying a person can run it. Before, it was allowed
/// unasked and failed inside, unexplained. (The program here is a set-uid script, which the
/// kernel runs without privileges: what is checked is where it runs.)
fn a_set_id_program_is_asked_as_a_run_outside_the_sandbox(shell: &str) {
    let f = Fixture::new();
    let tool = f.bin.join("setidtool");
    support::write_executable(
        &tool,
        format!(
            "#!/bin/sh\ntouch {}\n",
            f.home.join("ran-outside").display()
        ),
    );
    std::fs::set_permissions(
        &tool,
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o4755),
    )
    .unwrap();
    let mut sh = f.interactive(shell);
    let (out, status) = sh.run_answering_outside("setidtool", "");
    assert!(out.contains("is set-id"), "{out}");
    assert_ne!(status, 0, "{out}");
    assert!(!f.home.join("ran-outside").exists());
    let (out, status) = sh.run_answering_outside("setidtool", "y");
    assert_eq!(status, 0, "{out}");
    assert!(f.home.join("ran-outside").exists(), "{out}");
    std::fs::remove_file(f.home.join("ran-outside")).unwrap();
    let mut agent = f.command(SHELLGATE);
    agent.args(["run", "--", "setidtool"]);
    let out = run(agent);
    assert_eq!(out.status.code(), Some(215), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is set-id"));
    assert!(!f.home.join("ran-outside").exists());
}

#[test]
fn bash_a_set_id_program_is_asked_as_a_run_outside_the_sandbox() {
    a_set_id_program_is_asked_as_a_run_outside_the_sandbox("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_set_id_program_is_asked_as_a_run_outside_the_sandbox() {
    a_set_id_program_is_asked_as_a_run_outside_the_sandbox("zsh");
}

/// A person who approves reading their own credential store in their own shell gets it: the
/// sandbox hides stores from every line (a yes used to print nothing and exit 0), so the line
/// runs once outside it. Enter (the default) shows nothing.
fn a_person_approving_a_credential_read_gets_it(shell: &str) {
    let f = Fixture::new();
    std::fs::create_dir_all(f.home.join(".ssh")).unwrap();
    std::fs::write(f.home.join(".ssh/id_ed25519"), "KEY-MATERIAL\n").unwrap();
    let mut sh = f.interactive(shell);
    let (out, _) = sh.run_answering_outside("cat ~/.ssh/id_ed25519", "");
    assert!(out.contains("outside the sandbox, in this shell"), "{out}");
    assert!(!out.contains("KEY-MATERIAL"), "{out}");
    let (out, status) = sh.run_answering_outside("cat ~/.ssh/id_ed25519", "y");
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("KEY-MATERIAL"), "{out}");
}

#[test]
fn bash_a_person_approving_a_credential_read_gets_it() {
    a_person_approving_a_credential_read_gets_it("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_person_approving_a_credential_read_gets_it() {
    a_person_approving_a_credential_read_gets_it("zsh");
}

/// A person's own processes are within reach of their own lines of process tools: `ps` shows a
/// process of theirs started outside, `kill` ends it. An agent's line (`run`) sees neither: its PID
/// namespace holds only its own processes. Before, the person's `ps` showed two processes and
/// `kill PID` said "No such process".
fn the_persons_own_processes_are_in_reach(shell: &str) {
    let f = Fixture::new();
    let mut outside = support::isolate(&mut Command::new("/bin/sleep"), &f.user)
        .arg("300")
        .spawn()
        .unwrap();
    let pid = outside.id();
    let mut agent = f.command(SHELLGATE);
    agent.args(["run", "--", "ps -e -o pid="]);
    let out = run(agent);
    assert!(
        !String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .any(|p| p == pid.to_string()),
        "an agent's line saw the process"
    );
    let mut agent = f.command(SHELLGATE);
    agent.args(["run", "--", &format!("kill {pid}")]);
    run(agent);
    assert!(
        outside.try_wait().unwrap().is_none(),
        "an agent's line killed it"
    );
    let mut sh = f.interactive(shell);
    let out = sh.line("ps -e -o pid= | grep -c .");
    let seen: u32 = out
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .next()
        .unwrap_or(0);
    assert!(seen > 3, "ps saw {seen} processes: {out}");
    let out = sh.line(&format!("ps -p {pid} -o comm="));
    assert!(out.contains("sleep"), "{out}");
    let (out, status) = sh.run(&format!("kill {pid}"), &[]);
    assert_eq!(status, 0, "{out}");
    let status = outside.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGTERM)
    );
}

#[test]
fn bash_the_persons_own_processes_are_in_reach() {
    the_persons_own_processes_are_in_reach("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_the_persons_own_processes_are_in_reach() {
    the_persons_own_processes_are_in_reach("zsh");
}

/// A terminal multiplexer serves the person's sessions from a server of theirs: in their own
/// shell it is asked about as one run outside the sandbox, and after the yes the session it made
/// is there outside (before, the server started inside the line and ended with it).
#[test]
#[cfg_attr(not(has_tmux), ignore = "tmux is not installed (apt-get install tmux)")]
fn bash_tmux_is_asked_as_a_run_outside_the_sandbox() {
    let f = Fixture::new();
    let socket = f.outside.join("tmux.sock");
    let mut sh = f.interactive("bash");
    let line = format!(
        "tmux -S {} new-session -d -s sg 'sleep 60'",
        socket.display()
    );
    let (out, status) = sh.run_answering_outside(&line, "y");
    assert!(out.contains("terminal multiplexer"), "{out}");
    assert_eq!(status, 0, "{out}");
    let listed = support::isolate(&mut Command::new("tmux"), &f.user)
        .arg("-S")
        .arg(&socket)
        .arg("ls")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("sg:"),
        "no session outside: {out}"
    );
    let _ = support::isolate(&mut Command::new("tmux"), &f.user)
        .arg("-S")
        .arg(&socket)
        .arg("kill-server")
        .status();
}

/// ssh uses the person's agent (`SSH_AUTH_SOCK`), keys and known hosts, which no sandbox gives a
/// line: in their own shell an ssh program is asked about as one run outside the sandbox, and
/// after the yes it reaches the agent (here a listener standing in for it); an agent's `run` does
/// not reach it (a line has no unix socket). Before, ssh ran in the sandbox and found no agent.
fn ssh_reaches_the_persons_agent_after_a_yes(shell: &str) {
    use std::os::unix::net::UnixListener;
    let f = Fixture::new();
    let socket = f.outside.join("agent.sock");
    let agent = UnixListener::bind(&socket).unwrap();
    // The stand-in agent takes each connection and hangs up at once (ssh-add then says it could
    // not list identities), counting them.
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in agent.incoming() {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(stream);
        }
    });
    let connections = || count.load(std::sync::atomic::Ordering::SeqCst);
    let mut run_line = f.command(SHELLGATE);
    run_line
        .env("SSH_AUTH_SOCK", &socket)
        .args(["run", "--", "ssh-add -l"]);
    run(run_line);
    assert_eq!(connections(), 0, "an agent's line reached the ssh agent");
    let mut command = f.command(shell);
    command.env("SSH_AUTH_SOCK", &socket);
    let mut sh = f.spawn(command, shell);
    let (out, _) = sh.run_answering_outside("ssh-add -l", "y");
    assert!(out.contains("ssh agent"), "{out}");
    assert_eq!(
        connections(),
        1,
        "the person's ssh did not reach their agent: {out}"
    );
    // A run outside the sandbox offers no "always": the rule would allow the line in the
    // sandbox, and in this shell the line is asked as a run outside each time.
    let (out, _) = sh.run_answering_outside("ssh -o BatchMode=yes -p 9 127.0.0.1 true", "n");
    assert!(out.contains("outside the sandbox, in this shell"), "{out}");
    assert!(!out.contains("a = always"), "{out}");
}

#[test]
fn bash_ssh_reaches_the_persons_agent_after_a_yes() {
    ssh_reaches_the_persons_agent_after_a_yes("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_ssh_reaches_the_persons_agent_after_a_yes() {
    ssh_reaches_the_persons_agent_after_a_yes("zsh");
}

// ------------------------------------------------------------------------------------------------
// Sealed: nothing a line leaves behind in its sandboxed shell runs later in the person's shell
// (issue 24, part B). Each scenario is a person on the stock skeleton dotfiles with the README's
// line, an unprivileged user (nobody, when the tests run as root), whose prompt runs git
// (bash: git's own `__git_ps1` with GIT_PS1_SHOWDIRTYSTATE; zsh: a precmd running `git
// status`). A project file holds the payload, and the person loads it with a function of their
// own (`envfile NAME`, a dotenv loader: a line no rule flags, so it runs in the sandbox unasked),
// answers every question with Enter, and types a few ordinary lines. From outside: no marker
// file the payload would create in the home (which the sandbox cannot write), and the startup
// files unchanged.

/// The person's additions to their startup files (after the README's line).
fn person_rc(shell: &str) -> String {
    match shell {
        "bash" => "source /usr/lib/git-core/git-sh-prompt\nGIT_PS1_SHOWDIRTYSTATE=1\n\
                   PS1='[$?]PROMPT$ $(__git_ps1 \"(%s) \")'\n\
                   envfile() { . \"./$1\"; }\n"
            .to_owned(),
        _ => "setopt prompt_subst\ngit_line() { git status --porcelain >/dev/null 2>&1 }\n\
              precmd() { git_line }\nenvfile() { . \"./$1\" }\n"
            .to_owned(),
    }
}

/// A person at a hooked login shell, as above.
struct Person {
    skel: Skeleton,
    shell: Shell,
    /// The startup files as they were before the shell started.
    rc_before: Vec<(PathBuf, Vec<u8>)>,
}

impl Person {
    /// `files`: (name in the workspace, contents) — the project's files.
    fn new(shell: &str, files: &[(&str, &[u8])]) -> Person {
        Person::with_env(shell, files, &[])
    }

    /// `env`: the person's own environment besides the skeleton's (a locale of theirs); `{ws}`
    /// in a value is the workspace.
    fn with_env(shell: &str, files: &[(&str, &[u8])], env: &[(&str, String)]) -> Person {
        Person::prepared(shell, files, env, |_| {})
    }

    /// As [`Person::with_env`], with `prepare` run on the skeleton before the shell starts.
    fn prepared(
        shell: &str,
        files: &[(&str, &[u8])],
        env: &[(&str, String)],
        prepare: impl FnOnce(&mut Skeleton),
    ) -> Person {
        let mut skel = Skeleton::installed();
        let ws = skel.ws.display().to_string();
        skel.env = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.replace("{ws}", &ws)))
            .collect();
        let rc = if shell == "bash" { ".bashrc" } else { ".zshrc" };
        let path = skel.home.join(rc);
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        text.push_str(&person_rc(shell));
        std::fs::write(&path, text).unwrap();
        for (name, contents) in files {
            let path = skel.ws.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, contents).unwrap();
        }
        prepare(&mut skel);
        let uid = unprivileged(&skel);
        let rc_before = [".bashrc", ".zshrc", ".zshenv", ".profile"]
            .iter()
            .map(|f| skel.home.join(f))
            .filter(|p| p.exists())
            .map(|p| {
                let bytes = std::fs::read(&p).unwrap();
                (p, bytes)
            })
            .collect();
        let shell = skel.login_as(shell, uid);
        Person {
            skel,
            shell,
            rc_before,
        }
    }

    /// Types `text` and answers every question with Enter; returns the output and status.
    fn enter(&mut self, text: &str) -> (String, i32) {
        self.shell.answering(text, |_| String::new())
    }

    fn marker(&self, name: &str) -> PathBuf {
        self.skel.home.join(name)
    }

    /// No marker of `names` exists and the startup files are unchanged.
    fn assert_no_trace(&self, names: &[&str], transcript: &str) {
        let ran: Vec<&&str> = names.iter().filter(|n| self.marker(n).exists()).collect();
        assert!(
            ran.is_empty(),
            "{ran:?}: the payload ran outside the sandbox\n{transcript}"
        );
        for (path, before) in &self.rc_before {
            let now = std::fs::read(path).unwrap();
            assert!(
                now == *before,
                "{} changed:\n{}\n{transcript}",
                path.display(),
                String::from_utf8_lossy(&now)
            );
        }
    }
}

/// Hands the skeleton's files to `nobody` when the tests run as root (the sandbox then takes the
/// unprivileged path, user namespaces); returns that uid.
fn unprivileged(skel: &Skeleton) -> Option<u32> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    const NOBODY: u32 = 65534;
    let root = skel.home.parent().unwrap();
    let status = Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(root)
        .status()
        .unwrap();
    assert!(status.success());
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
    Some(NOBODY)
}

/// Runs `transcript` lines as the person, each answered with Enter; returns everything printed.
fn day(p: &mut Person, lines: &[&str]) -> String {
    let mut all = String::new();
    for line in lines {
        let (out, _) = p.enter(line);
        all.push_str(&out);
    }
    all
}

/// Exported variables that programs the prompt runs outside the sandbox read: git's
/// configuration from the environment (`core.fsmonitor` runs a program at the prompt's next
/// `git diff`/`git status`), git's trace written into a startup file.
fn sealed_exports(shell: &str) {
    let rc = if shell == "bash" { ".bashrc" } else { ".zshrc" };
    let payload = format!(
        "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor \
         GIT_CONFIG_VALUE_0=\"touch $HOME/M-config-count; false\"\n\
         export GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='touch $HOME/M-config-params; false'\"\n\
         export GIT_TRACE2_EVENT=$HOME/{rc}\nexport BROWSER=\"touch $HOME/M-browser\"\n"
    );
    let mut p = Person::new(shell, &[("git.env", payload.as_bytes())]);
    let out = day(
        &mut p,
        &["envfile git.env", "true", "echo done-$((1+1))", "true"],
    );
    assert!(out.contains("done-2"), "{out}");
    assert!(
        out.contains("GIT_CONFIG_COUNT"),
        "the question names what it grants: {out}"
    );
    p.assert_no_trace(&["M-config-count", "M-config-params"], &out);
    // Nothing of it reached the person's shell.
    let (out, _) = p.enter("echo \"C=${GIT_CONFIG_COUNT-unset} T=${GIT_TRACE2_EVENT-unset}\"");
    assert!(out.contains("C=unset T=unset"), "{out}");
}

#[test]
#[cfg_attr(
    not(has_skel),
    ignore = "no /etc/skel/.profile and .bashrc (Debian's base-files, bash)"
)]
fn bash_sealed_exports() {
    sealed_exports("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_sealed_exports() {
    sealed_exports("zsh");
}

/// A repository a line planted where lines write — nested in the workspace — with a
/// `core.fsmonitor`, which git runs on `git status` and `git diff`: the person's prompt (bash's
/// `__git_ps1` with GIT_PS1_SHOWDIRTYSTATE, zsh's precmd running `git status`) runs git there
/// after the person changes into it. The prompt's git must not read that repository (the hook
/// sets `GIT_DIR=/dev/null` while the prompt is up, and says so); git on a line the person types
/// still reads it, in the sandbox.
fn sealed_planted_repository(shell: &str) {
    let plant = "git init -q sub && git -C sub config core.fsmonitor \"touch $HOME/M-fsmonitor; false\" \
                 && echo x > sub/f && git -C sub add f \
                 && git -C sub -c user.email=a@b -c user.name=a commit -qm x && echo planted\n";
    // The same, made by a line in the directory the person is in (no change of directory
    // follows for the hook to look again).
    let here = "git init -q . && git config core.fsmonitor \"touch $HOME/M-fsmonitor-here; false\" \
                && echo x > f && git add f \
                && git -c user.email=a@b -c user.name=a commit -qm x && echo made-here\n";
    let mut p = Person::new(
        shell,
        &[
            ("plant.env", plant.as_bytes()),
            ("d3/here.env", here.as_bytes()),
        ],
    );
    let out = day(&mut p, &["cd d3", "envfile here.env", "true", "cd .."]);
    assert!(out.contains("made-here"), "{out}");
    p.assert_no_trace(&["M-fsmonitor-here"], &out);
    let out = day(
        &mut p,
        &["envfile plant.env", "cd sub", "true", "echo here"],
    );
    let config = std::fs::read_to_string(p.skel.ws.join("sub/.git/config")).unwrap_or_default();
    assert!(
        out.contains("planted") && config.contains("fsmonitor"),
        "the line did not plant the repository: {out}"
    );
    p.assert_no_trace(&["M-fsmonitor"], &out);
    assert!(
        out.contains("your prompt's git does not read the repository"),
        "the person was not told: {out}"
    );
    // A line the person types reads the repository as always (the prompt's GIT_DIR is gone).
    let (out, _) = p.enter("git rev-parse --show-toplevel; echo \"D=${GIT_DIR-unset}\"");
    assert!(out.contains("/ws/sub"), "{out}");
    assert!(out.contains("D=unset"), "{out}");
}

/// A repository made where the person is by a job of theirs still running after its line (`sh
/// job.sh &`), while the prompt is up: the next Enter, even on an empty line, must not let the
/// prompt's git read it — bash with a git prompt command of the person's own set after the
/// README's line (it runs before the hook's), zsh with its `precmd` function (run before
/// `precmd_functions`).
fn sealed_repository_made_by_a_job(shell: &str) {
    let job = "sleep 1; git init -q . && git config core.fsmonitor \"touch $HOME/M-fsmonitor-job; false\" \
               && echo x > f && git add f && git -c user.email=a@b -c user.name=a commit -qm x \
               && touch made-by-job\n";
    let mut p = Person::prepared(shell, &[("d5/job.sh", job.as_bytes())], &[], |skel| {
        if shell == "bash" {
            let rc = skel.home.join(".bashrc");
            let mut text = std::fs::read_to_string(&rc).unwrap();
            text.push_str(
                "git_line() { git status --porcelain >/dev/null 2>&1; }\nPROMPT_COMMAND=(git_line)\n",
            );
            std::fs::write(&rc, text).unwrap();
        }
    });
    let mut out = day(&mut p, &["cd d5", "sh job.sh &"]);
    let made = p.skel.ws.join("d5/made-by-job");
    let start = Instant::now();
    while !made.exists() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(made.exists(), "the job made no repository: {out}");
    out.push_str(&day(&mut p, &["", ""]));
    p.assert_no_trace(&["M-fsmonitor-job"], &out);
}

#[test]
#[cfg_attr(
    not(has_skel),
    ignore = "no /etc/skel/.profile and .bashrc (Debian's base-files, bash)"
)]
fn bash_sealed_repository_made_by_a_job() {
    sealed_repository_made_by_a_job("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_sealed_repository_made_by_a_job() {
    sealed_repository_made_by_a_job("zsh");
}

/// The same repository, planted before the person's shell starts in it (a new terminal opened
/// there): the person's prompt code may run before the hook's precmd (zsh runs a `precmd`
/// function first), so the hook sets the prompt's git as it loads.
fn sealed_planted_repository_at_start(shell: &str) {
    let mut p = Person::prepared(shell, &[], &[], |skel| {
        let sub = skel.ws.join("sub");
        let marker = skel.home.join("M-fsmonitor");
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .arg("-C")
                .arg(&sub)
                .args(["-c", "user.email=a@b", "-c", "user.name=a"])
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
        };
        std::fs::create_dir_all(&sub).unwrap();
        git(&["init", "-q"]);
        std::fs::write(sub.join("f"), "x\n").unwrap();
        git(&["add", "f"]);
        git(&["commit", "-qm", "x"]);
        let monitor = format!("touch {}; false", marker.display());
        git(&["config", "core.fsmonitor", &monitor]);
        skel.start = Some(sub);
        if shell == "bash" {
            // A prompt command of the person's own that runs git, set after the README's line
            // (as an array, bash 5.1's form): it runs at the first prompt before the hook puts its
            // own back.
            let rc = skel.home.join(".bashrc");
            let mut text = std::fs::read_to_string(&rc).unwrap();
            text.push_str("git_line() { git status --porcelain >/dev/null 2>&1; }\nPROMPT_COMMAND=(git_line)\n");
            std::fs::write(&rc, text).unwrap();
        }
    });
    let out = day(&mut p, &["true", "echo here"]);
    p.assert_no_trace(&["M-fsmonitor"], &format!("{}{out}", p.shell.startup));
}

#[test]
#[cfg_attr(
    not(has_skel),
    ignore = "no /etc/skel/.profile and .bashrc (Debian's base-files, bash)"
)]
fn bash_sealed_planted_repository_at_start() {
    sealed_planted_repository_at_start("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_sealed_planted_repository_at_start() {
    sealed_planted_repository_at_start("zsh");
}

#[test]
#[cfg_attr(
    not(has_skel),
    ignore = "no /etc/skel/.profile and .bashrc (Debian's base-files, bash)"
)]
fn bash_sealed_planted_repository() {
    sealed_planted_repository("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_sealed_planted_repository() {
    sealed_planted_repository("zsh");
}

/// Variables the shell itself later runs as code: a mail check's message, the prompt command,
/// zsh's prompt strings under prompt_subst (also by their lowercase name, `prompt`).
fn sealed_shell_code_variables(shell: &str) {
    let payload = match shell {
        "bash" => "MAILPATH=\"$PWD/mbox?\\$(touch $HOME/M-mail)\"; MAILCHECK=0\n\
                   PROMPT_COMMAND=\"touch $HOME/M-prompt-command\"\n"
            .to_owned(),
        _ => "MAILPATH=\"$PWD/mbox?\\$(touch $HOME/M-mail)\"; MAILCHECK=1\n\
              prompt='$(touch '\"$HOME\"'/M-prompt)[%?]PROMPT$ '\n\
              PROMPT_EOL_MARK='$(touch '\"$HOME\"'/M-eol)'\n\
              RPROMPT='$(touch '\"$HOME\"'/M-rprompt)'\n"
            .to_owned(),
    };
    let mut p = Person::new(shell, &[("code.env", payload.as_bytes())]);
    let out = day(
        &mut p,
        &[
            "envfile code.env",
            "echo mail >> mbox",
            // zsh checks mail when more than MAILCHECK seconds have passed since the last check.
            "sleep 2.2",
            "printf no-newline",
            "true",
        ],
    );
    p.assert_no_trace(
        &[
            "M-mail",
            "M-prompt-command",
            "M-prompt",
            "M-eol",
            "M-rprompt",
        ],
        &out,
    );
}

#[test]
#[cfg_attr(
    not(has_skel),
    ignore = "no /etc/skel/.profile and .bashrc (Debian's base-files, bash)"
)]
fn bash_sealed_shell_code_variables() {
    sealed_shell_code_variables("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_sealed_shell_code_variables() {
    sealed_shell_code_variables("zsh");
}

/// Functions and aliases: the question defaults to no, and a function the prompt calls (or a
/// name it runs, such as `git`) is never redefined by a line.
fn sealed_functions(shell: &str) {
    let payload = match shell {
        "bash" => "__git_ps1() { touch \"$HOME/M-git-ps1\"; }\n\
                   __git_eread() { touch \"$HOME/M-git-eread\"; }\n\
                   git() { touch \"$HOME/M-git\"; }\n\
                   helper() { touch \"$HOME/M-helper\"; }\n"
            .to_owned(),
        _ => "precmd() { touch \"$HOME/M-precmd\" }\n\
              git_line() { touch \"$HOME/M-git-line\" }\n\
              git() { touch \"$HOME/M-git\" }\n\
              helper() { touch \"$HOME/M-helper\" }\n"
            .to_owned(),
    };
    let mut p = Person::new(shell, &[("fn.env", payload.as_bytes())]);
    let out = day(&mut p, &["envfile fn.env", "true", "true"]);
    p.assert_no_trace(
        &[
            "M-git-ps1",
            "M-git-eread",
            "M-git",
            "M-precmd",
            "M-git-line",
        ],
        &out,
    );
    let (out, status) = p.enter("helper");
    assert_eq!(status, 127, "helper() was applied on Enter: {out}");
}

#[test]
#[cfg_attr(
    not(has_skel),
    ignore = "no /etc/skel/.profile and .bashrc (Debian's base-files, bash)"
)]
fn bash_sealed_functions() {
    sealed_functions("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_sealed_functions() {
    sealed_functions("zsh");
}

/// A value that runs code when the shell evaluates it again: as an array subscript or
/// arithmetic in a builtin that runs in the person's shell, or a `$"…"` translation from a
/// catalog the line pointed the shell at.
fn sealed_reevaluation(shell: &str) {
    let payload = "x='a[$(touch '\"$HOME\"'/M-subscript)]'\n\
                   TEXTDOMAINDIR=$PWD/locale; TEXTDOMAIN=evil\n";
    let mo = message_catalog("hello", &format!("$(touch {})", "\"$HOME\"/M-translated"));
    let mut files: Vec<(&str, &[u8])> = vec![
        ("sub.env", payload.as_bytes()),
        ("locale/xx_XX/LC_MESSAGES/evil.mo", &mo),
    ];
    let locale = copy_of_c_locale();
    for (name, bytes) in &locale {
        files.push((name.as_str(), bytes));
    }
    // The person works in a locale of their own (not C: gettext looks up no catalog for C).
    let mut p = Person::with_env(
        shell,
        &files,
        &[
            ("LOCPATH", "{ws}/loc".to_owned()),
            ("LANG", "xx_XX.UTF-8".to_owned()),
        ],
    );
    let mut lines = vec![
        "envfile sub.env",
        "test -v 'a[x]'",
        "unset 'a[x]'",
        "printf -v 'a[x]' %s 1",
        "cd . && (( x ))",
        "cd . && [[ -v a[x] ]]",
        "echo $\"hello\"",
    ];
    if shell == "zsh" {
        lines.push("test x -eq 1");
    }
    let out = day(&mut p, &lines);
    p.assert_no_trace(&["M-subscript", "M-translated"], &out);
}

#[test]
#[cfg_attr(
    not(has_skel),
    ignore = "no /etc/skel/.profile and .bashrc (Debian's base-files, bash)"
)]
fn bash_sealed_reevaluation() {
    sealed_reevaluation("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_sealed_reevaluation() {
    sealed_reevaluation("zsh");
}

/// A GNU message catalog (`.mo`) with one translation, as `msgfmt` writes it: the header entry
/// (its charset) and `id` → `text`, sorted, no hash table.
fn message_catalog(id: &str, text: &str) -> Vec<u8> {
    let entries = [
        ("", "Content-Type: text/plain; charset=UTF-8\n"),
        (id, text),
    ];
    let n = entries.len() as u32;
    let originals = 28u32;
    let translations = originals + 8 * n;
    let mut strings = translations + 8 * n;
    let mut head = Vec::new();
    for v in [0x9504_12de_u32, 0, n, originals, translations, 0, strings] {
        head.extend_from_slice(&v.to_le_bytes());
    }
    let mut tables: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    let mut data = Vec::new();
    for (side, table) in tables.iter_mut().enumerate() {
        for entry in &entries {
            let s = if side == 0 { entry.0 } else { entry.1 };
            table.extend_from_slice(&(s.len() as u32).to_le_bytes());
            table.extend_from_slice(&strings.to_le_bytes());
            data.extend_from_slice(s.as_bytes());
            data.push(0);
            strings += s.len() as u32 + 1;
        }
    }
    let mut out = head;
    out.extend_from_slice(&tables[0]);
    out.extend_from_slice(&tables[1]);
    out.extend_from_slice(&data);
    out
}

/// The C.UTF-8 locale's files under another name (`loc/xx_XX.UTF-8/…`): a locale that is not
/// `C`, so gettext looks its catalogs up, without generating one (`LOCPATH` names the directory).
fn copy_of_c_locale() -> Vec<(String, Vec<u8>)> {
    let source = ["/usr/lib/locale/C.utf8", "/usr/lib/locale/C.UTF-8"]
        .iter()
        .map(Path::new)
        .find(|p| p.is_dir())
        .expect("the C.UTF-8 locale's files (package libc-bin)");
    let mut out = Vec::new();
    let mut stack = vec![source.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(source).unwrap();
                out.push((
                    format!("loc/xx_XX.UTF-8/{}", rel.display()),
                    std::fs::read(&path).unwrap(),
                ));
            }
        }
    }
    out
}

/// The second seal, on its own: even a value holding code that is already in the person's shell
/// (here from their own startup file) is never evaluated again by a line run in the shell itself —
/// such lines run in the sandbox instead. The sandbox refuses the payload's write outside, and the
/// offer that follows (run the line again outside the sandbox, in this shell as typed) is declined:
/// a yes there is the person's grant to run it in their shell, payload and all.
fn builtins_in_the_shell_evaluate_nothing_again(shell: &str) {
    let f = Fixture::with_rc("x='a[$(touch \"$HOME/../outside/M-in-shell\")]'");
    let mut sh = f.interactive(shell);
    let mut lines = vec![
        "test -v 'a[x]'",
        "unset 'a[x]'",
        "printf -v 'a[x]' %s 1",
        "cd . && (( x ))",
        "cd . && [[ -v a[x] ]]",
        "cd . && [[ x -eq 1 ]]",
    ];
    if shell == "zsh" {
        lines.extend(["test x -eq 1", "printf '%d' x", "exit x"]);
    }
    let mut out = String::new();
    for line in lines {
        out.push_str(&sh.run_answering_outside(line, "").0);
    }
    assert!(
        !f.marker("M-in-shell").exists(),
        "a builtin evaluated a value again in the person's shell:\n{out}"
    );
}

#[test]
fn bash_builtins_in_the_shell_evaluate_nothing_again() {
    builtins_in_the_shell_evaluate_nothing_again("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_builtins_in_the_shell_evaluate_nothing_again() {
    builtins_in_the_shell_evaluate_nothing_again("zsh");
}

/// The bash hook tells the shape of the plainest lines itself (`__shellgate_quickshape`,
/// shell/bash-shape.sh) instead of forking `shellgate hook bash --shape` for each: wherever it
/// answers, its answer must be the binary's (a wrong pipeline length gives the person a wrong
/// `PIPESTATUS`; a wrong first word runs the line under the wrong alias). Lines that must be
/// answered in the shell, then 600 put together at random from words, `$NAME`s, quotes,
/// assignments, operators and reserved words, each asked of both (every line the hook answers).
#[test]
fn bash_quick_shape_is_the_binarys_shape() {
    const PLAIN: [&str; 16] = [
        "ls",
        "echo",
        "git",
        "-a",
        "x.txt",
        "$HOME",
        "${PATH}",
        "\"a b\"",
        "\"$USER/x\"",
        "'a|b'",
        "'a;b c'",
        "FOO=1",
        "A=$B",
        "B=",
        "|",
        "|",
    ];
    const OTHER: [&str; 28] = [
        "$1", "||", "&&", ";", "&", ">", "<", "(", ")", "{", "}", "if", "then", "fi", "for", "do",
        "done", "time", "!", "#", "\\", "`date`", "$(pwd)", "*", "~", "2>&1", "\"", "'",
    ];
    let must_answer = [
        "echo $HOME",
        "git commit -m \"wip $USER\"",
        "FOO=1 make",
        "ls -a | cat",
        "grep -r 'fn main' src | head -3",
    ];
    let must_agree = [
        "if",
        "for",
        "echo x | if",
        "ls | time cat",
        "time ls",
        "do x",
        "FOO=1 for x",
        "echo 'a|b' | cat",
        "echo \"a|b\"",
        "ls|cat|wc",
        "echo 'x' 'y'|cat",
    ];
    let mut lines: Vec<String> = must_answer
        .iter()
        .chain(&must_agree)
        .map(|l| (*l).to_owned())
        .collect();
    let mut seed: u64 = 0x5eed_2026_1205;
    let mut next = |bound: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(seed >> 33).unwrap() % bound
    };
    for _ in 0..600 {
        let count = 1 + next(6);
        let mut line = String::new();
        for i in 0..count {
            if i > 0 && next(5) != 0 {
                line.push(' ');
            }
            // Mostly what the hook may answer, so that most lines are close to its edge.
            let token = if next(5) == 0 {
                OTHER[next(OTHER.len())]
            } else {
                PLAIN[next(PLAIN.len())]
            };
            line.push_str(token);
        }
        lines.push(line);
    }
    let tmp = support::scratch_dir();
    let input = tmp.path().join("lines");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let script = format!(
        "{}\nwhile IFS= read -r l; do __shellgate_quickshape \"$l\"; \
         printf '%s\\n' \"${{__shellgate_qs:-ask}}\"; done",
        include_str!("../../shell/bash-shape.sh")
    );
    let out = run({
        let mut c = Command::new("bash");
        c.args(["--noprofile", "--norc", "-u", "-c", &script])
            .stdin(std::fs::File::open(&input).unwrap());
        c
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let quick: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(quick.len(), lines.len());
    let mut answered = 0;
    for (line, quick) in lines.iter().zip(&quick) {
        if quick == "ask" {
            assert!(
                !must_answer.contains(&line.as_str()),
                "the hook asks the binary about `{line}`"
            );
            continue;
        }
        answered += 1;
        let binary = Command::new(env!("CARGO_BIN_EXE_shellgate"))
            .args(["hook", "bash", "--shape", "--", line])
            .output()
            .unwrap();
        let binary = String::from_utf8_lossy(&binary.stdout).trim().to_owned();
        assert_eq!(
            quick, &binary,
            "the hook's shape of `{line}` is not the binary's"
        );
    }
    // Not vacuous: the random lines include plain ones the hook answers.
    assert!(answered > 50, "only {answered} answered");
}

/// A program of the line that writes where its shell reports its state (bash cannot close that
/// descriptor on exec, so every program of the line inherits it). This one waits in the
/// background for the shell's report and rewrites it, with the working directory replaced by one
/// of its choice — where a repository it planted would have the prompt's `git` run its
/// `core.fsmonitor` outside the sandbox — or, where it cannot read the report back, writes one of
/// its own. The person's shell must stay where it was, and the person is told: only the shell's
/// own bytes are its report (`shell::channel`).
fn a_program_of_the_line_cannot_write_the_shells_state(shell: &str) {
    const FORGER: &str = r#"
import os, sys
want, real, shell = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3]
fds = [n for n in range(10, 64) if os.path.exists(f"/proc/self/fd/{n}")]
if not fds:
    sys.exit("no inherited descriptor")
fd = fds[0]
if os.fork():
    os._exit(0)
if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
    # Nothing can be read back: a report of its own, greeting as the shell does.
    os.write(fd, b"shellgate-hello\0" + b"shellgate-" + shell.encode() + b"-state 1\0" * 4)
    sys.exit(0)
def pos():
    with open(f"/proc/self/fdinfo/{fd}") as info:
        return int(info.readline().split()[1])
def whole(data):
    return data.endswith(b"\0E\0") if shell == "zsh" else data.count(b"\0") >= 11
while True:
    data = os.pread(fd, pos(), 0)
    if whole(data):
        break
os.pwrite(fd, data.replace(b"\0" + real + b"\0", b"\0" + want + b"\0"), 0)
"#;
    let f = Fixture::new();
    // A directory whose path is as long as the workspace's, so the report keeps its length.
    let forged = f.ws.with_file_name("fg");
    std::fs::create_dir_all(&forged).unwrap();
    std::fs::write(f.ws.join("forger.py"), FORGER).unwrap();
    let mut sh = f.interactive(shell);
    let line = format!(
        "python3 forger.py {} {} {shell}; echo \"$HOME\" >/dev/null",
        forged.display(),
        f.ws.display()
    );
    let (out, _) = sh.run(&line, &["y"]);
    let here = sh.line("pwd");
    assert!(
        !here.contains(&forged.display().to_string()),
        "a program of the line moved the person's shell: {out}\n{here}"
    );
    assert!(here.contains(&f.ws.display().to_string()), "{here}");
    assert!(
        out.contains("they were ignored"),
        "the person was not told that a program wrote the shell's report: {out}"
    );
}

#[test]
fn bash_a_program_of_the_line_cannot_write_the_shells_state() {
    a_program_of_the_line_cannot_write_the_shells_state("bash");
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_a_program_of_the_line_cannot_write_the_shells_state() {
    a_program_of_the_line_cannot_write_the_shells_state("zsh");
}
