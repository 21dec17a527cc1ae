//! The shell hooks in real shells: interactive bash and zsh in a pseudo-terminal (rexpect), and
//! agent-style `bash -c` / `zsh -c` through `BASH_ENV` and `ZDOTDIR`. Every test checks effects
//! (marker files, the shell's working directory and variables), not only output.
//!
//! A test config allows `touch` (so a line can leave a marker without asking) and nothing else
//! beyond the built-in rules; other commands are asked about on the terminal, and the tests answer.
//!
//! zsh, shellcheck and pwsh tests are ignored, with the reason, where the program is missing
//! (`build.rs` finds them).

mod support;

use rexpect::session::PtySession;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SHELLGATE: &str = env!("CARGO_BIN_EXE_shellgate");
const TIMEOUT_MS: u64 = 20_000;
const PROMPT: &str = "PROMPT$ ";

/// A home of its own, a workspace, state and config for one test, plus a directory outside every
/// sandbox-writable root for markers that must not appear; all outside /tmp (see
/// [`support::scratch_dir`]).
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
        let tmp = support::scratch_dir();
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
        std::fs::write(
            home.join(".config/shellgate/config.toml"),
            "[[rules]]\nid = \"test-allow-touch\"\npattern = \"^touch$\"\nfield = \"program\"\n\
             policy = \"allow\"\nreason = \"tests leave marker files\"\n",
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
        std::fs::write(home.join("hook.bash"), init("bash")).unwrap();
        std::fs::write(home.join("hook.zsh"), init("zsh")).unwrap();
        std::fs::write(
            home.join(".bashrc"),
            format!("PS1='{PROMPT}'\nHISTCONTROL=ignoreboth\nsource ~/hook.bash\n"),
        )
        .unwrap();
        std::fs::write(
            home.join(".zshrc"),
            format!("PS1='{PROMPT}'\nsetopt histignorespace\nsource ~/hook.zsh\n"),
        )
        .unwrap();
        // zsh -c reads .zshenv: agent shells get the hook there.
        std::fs::write(home.join(".zshenv"), "source ~/hook.zsh\n").unwrap();
        Fixture {
            _tmp: tmp,
            user,
            home,
            ws,
            outside,
            bin,
        }
    }

    /// A clean environment: no inherited hooks, sessions or ignored signals.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        support::isolate(&mut c, &self.user)
            .current_dir(&self.ws)
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .env("TERM", "xterm");
        c
    }

    fn interactive(&self, shell: &str) -> Shell {
        let mut command = self.command(shell);
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
        pty.exp_string(PROMPT).expect("the shell's first prompt");
        Shell { pty }
    }

    fn marker(&self, name: &str) -> PathBuf {
        self.outside.join(name)
    }
}

struct Shell {
    pty: PtySession,
}

impl Shell {
    /// Type a line and return everything printed up to the next prompt.
    fn line(&mut self, text: &str) -> String {
        self.pty.send_line(text).unwrap();
        self.pty
            .exp_string(PROMPT)
            .unwrap_or_else(|e| panic!("no prompt after {text:?}: {e}"))
    }

    /// Type a line that will be asked about, answer it, and return the output up to the prompt.
    fn line_answered(&mut self, text: &str, answer: &str) -> String {
        self.pty.send_line(text).unwrap();
        let before = self
            .pty
            .exp_regex(r"Allow once\? \[y/N\]|Type .full. to confirm")
            .unwrap_or_else(|e| panic!("{text:?} was not asked about: {e}"))
            .0;
        self.pty.send_line(answer).unwrap();
        let after = self.pty.exp_string(PROMPT).unwrap();
        format!("{before}{after}")
    }
}

fn run(mut command: Command) -> Output {
    command.output().unwrap()
}

// ------------------------------------------------------------------------------------------------
// Interactive shells.

fn allowed_line_runs_once(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    let out = sh.line(&format!(
        "echo A$((40+2)); touch {}",
        f.marker("once").display()
    ));
    assert!(out.contains("A42"), "{out}");
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
    let out = sh.line("cd /; X=1; touch marker; rm -rf ~");
    assert!(out.contains("[auto-review-never] NEVER_POLICY"), "{out}");
    assert!(
        out.contains("Do not try to achieve the same effect another way"),
        "{out}"
    );
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
    assert!(out.contains("NEVER_POLICY"), "{out}");
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
    let mut sh = f.interactive(shell);
    // Ordinary lines run unasked in the sandbox; destroying work in the workspace is asked.
    for d in ["rejected-dir", "approved-dir"] {
        std::fs::create_dir_all(f.ws.join(d)).unwrap();
    }
    let out = sh.line_answered("rm -r rejected-dir", "n");
    assert!(out.contains("APPROVAL_REJECTED"), "{out}");
    assert!(f.ws.join("rejected-dir").is_dir());
    let out = sh.line_answered("rm -r approved-dir", "y");
    assert!(!out.contains("APPROVAL_REJECTED"), "{out}");
    assert!(!f.ws.join("approved-dir").exists());
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

fn state_changing_builtins_run_in_the_shell(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    sh.line("cd /tmp");
    let out = sh.line("export SG_TEST_VAR=kept");
    assert!(!out.contains("REJECTED"), "{out}");
    let out = sh.line("echo \"$PWD $SG_TEST_VAR\"");
    assert!(
        out.contains("/tmp kept"),
        "cd/export did not take effect in the shell: {out}"
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

fn multi_line_paste_is_decided_once(shell: &str) {
    let f = Fixture::new();
    let mut sh = f.interactive(shell);
    for d in ["p1", "p2", "p3"] {
        std::fs::create_dir_all(f.ws.join(d)).unwrap();
    }
    // A bracketed paste of three lines that each need a person, then Enter.
    sh.pty
        .send("\x1b[200~rm -r p1\nrm -r p2\nrm -r p3\x1b[201~")
        .unwrap();
    sh.pty.send_line("").unwrap();
    let (before, _) = sh.pty.exp_regex(r"Allow once\? \[y/N\]").unwrap();
    sh.pty.send_line("y").unwrap();
    let rest = sh.pty.exp_string(PROMPT).unwrap();
    let later = sh.line("echo end-of-paste");
    let all = format!("{before}{rest}{later}");
    assert_eq!(
        all.matches("Allow once?").count(),
        0,
        "the paste was asked about more than once: {all}"
    );
    for d in ["p1", "p2", "p3"] {
        assert!(!f.ws.join(d).exists(), "{d} still there: {all}");
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
    // Before: the sandbox stops the write.
    sh.line(&format!("touch {}", marker.display()));
    assert!(!marker.exists());
    // Selecting Full access: the tamper rule asks, then the typed confirmation.
    sh.pty.send_line("shellgate mode full").unwrap();
    sh.pty.exp_string("Allow once? [y/N]").unwrap();
    sh.pty.send_line("y").unwrap();
    let warning = sh.pty.exp_string("to confirm").unwrap();
    assert!(warning.contains("NO sandbox"), "{warning}");
    sh.pty.send_line("full").unwrap();
    let out = sh.pty.exp_string(PROMPT).unwrap();
    assert!(out.contains("mode: full"), "{out}");
    sh.line(&format!("touch {}", marker.display()));
    assert!(
        marker.exists(),
        "Full access still ran the line in the sandbox"
    );
    // A new shell starts in the safe mode again.
    let mut second = f.interactive(shell);
    let again = f.marker("again");
    second.line(&format!("touch {}", again.display()));
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

#[test]
fn bash_hook_tampering_is_not_run_in_the_shell() {
    let f = Fixture::new();
    let mut sh = f.interactive("bash");
    // The line is asked about (hook state is never allowed by rules alone); approved, it runs in
    // a sandboxed child and cannot touch this shell's hook.
    sh.line_answered("PS0=''; trap - DEBUG", "y");
    let out = sh.line("rm -rf ~");
    assert!(out.contains("NEVER_POLICY"), "the hook was disabled: {out}");
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
    sh.pty.send_line("shellgate mode full").unwrap();
    sh.pty.exp_string("Allow once? [y/N]").unwrap();
    sh.pty.send_line("y").unwrap();
    sh.pty.exp_string("to confirm").unwrap();
    sh.pty.send_line("full").unwrap();
    sh.pty.exp_string(PROMPT).unwrap();
    // Hook state is a person's to allow, in every mode.
    sh.line_answered("PROMPT_COMMAND=", "y");
    sh.line_answered("shellgate mode ask", "y");
    let marker = f.marker("after-clear");
    sh.line(&format!("touch {}", marker.display()));
    assert!(
        !marker.exists(),
        "a line ran unsandboxed after PROMPT_COMMAND was cleared"
    );
    let out = sh.line("rm -rf ~");
    assert!(out.contains("NEVER_POLICY"), "{out}");
}
