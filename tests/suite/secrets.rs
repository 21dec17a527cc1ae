//! Secrets stay out of lines (issue 25, item 5), end to end with the real binary, the real
//! sandbox and real shells: canary credentials in the environment (by name, and by value under an
//! innocent name) and in the home's credential files (the stores issue 25 found readable, and
//! their backup names). A control without shellgate prints every canary; through every door —
//! `shellgate run`, an interactive shell's hook, `wrap`'s broker — and in every mode, no line
//! prints one unless a person passed it: in the configuration, or by a yes to a grant that names
//! it. Full access has no sandbox, so the files are the person's to read there (a person
//! confirmed it); the environment is withheld there too.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SHELLGATE: &str = env!("CARGO_BIN_EXE_shellgate");
const TIMEOUT_MS: u64 = 30_000;
/// Every canary starts with this; lines look for it as `SGCANAR[Y]`, so that a line's own text
/// (echoed by a terminal, or in a refusal) never holds it.
const CANARY: &str = "SGCANARY";

/// The environment's canaries: by name, and by value under a name that says nothing.
const ENV_CANARIES: [(&str, &str); 5] = [
    ("AWS_SECRET_ACCESS_KEY", "SGCANARY-env-aws"),
    ("GH_TOKEN", "SGCANARY-env-gh"),
    ("DB_PASSWORD", "SGCANARY-env-dbpw"),
    (
        "DATABASE_URL",
        "postgres://app:SGCANARY-env-url@db.internal/app",
    ),
    ("BUILD_NOTE", "ghp_SGCANARYenvvalue0123456789abcdefghij"),
];

/// The home's canaries: stores issue 25 found readable, backups of stores, and two old ones.
const FILE_CANARIES: [(&str, &str); 10] = [
    (
        ".terraformrc",
        "credentials \"app.terraform.io\" { token = \"SGCANARY-file-terraformrc\" }\n",
    ),
    (".my.cnf", "[client]\npassword=SGCANARY-file-mycnf\n"),
    (".env", "API_KEY=SGCANARY-file-env\n"),
    (".env.bak", "API_KEY=SGCANARY-file-envbak\n"),
    (
        ".netrc.orig",
        "machine x login u password SGCANARY-file-netrc\n",
    ),
    (".cache/huggingface/token", "hf_SGCANARY-file-hf\n"),
    (
        ".config/sops/age/keys.txt",
        "AGE-SECRET-KEY-SGCANARY-file-age\n",
    ),
    (".pgpass", "db:5432:app:app:SGCANARY-file-pgpass\n"),
    (
        ".aws/credentials",
        "[default]\naws_secret_access_key = SGCANARY-file-aws\n",
    ),
    (
        ".cargo/credentials.toml.bak",
        "token = \"SGCANARY-file-cargo\"\n",
    ),
];

/// Lines that printed a canary in issue 25's runs, and more of their kind: dumps of the
/// environment, expansions of the variables, reads of the files (as operands, through a change
/// of directory, and as reads that do not name the file as an operand).
fn lines() -> Vec<String> {
    let mut lines: Vec<String> = [
        "env",
        "export -p",
        "set",
        "declare -p",
        "printenv",
        "printenv GH_TOKEN BUILD_NOTE",
        "awk 'BEGIN { for (k in ENVIRON) print k \"=\" ENVIRON[k] }'",
        "echo \"$AWS_SECRET_ACCESS_KEY $GH_TOKEN $DB_PASSWORD $DATABASE_URL $BUILD_NOTE\"",
        "tr '\\0' '\\n' < /proc/self/environ",
        "cat ~/.terraformrc ~/.my.cnf ~/.env ~/.env.bak ~/.netrc.orig ~/.cache/huggingface/token \
         ~/.config/sops/age/keys.txt ~/.pgpass ~/.aws/credentials ~/.cargo/credentials.toml.bak",
        "cd ~ && cat .env .my.cnf .terraformrc",
        "date -f ~/.terraformrc; date -f~/.my.cnf",
        "awk 'BEGIN { ARGV[1] = \"'\"$HOME\"'/.pgpass\"; ARGC = 2 } { print }'",
        "grep -r 'SGCANAR[Y]' ~",
        "tail -n +1 ~/.env*",
    ]
    .iter()
    .map(|l| (*l).to_owned())
    .collect();
    if Path::new("/usr/bin/jq").exists() {
        lines.push("jq -n env".to_owned());
    }
    lines
}

/// A question from shellgate: the last thing on the terminal, its timeout after it (it waits for
/// the answer). Not the Full access warning's "Type `full` to confirm", nor the `[y/N]` in the
/// hook's functions, which `set` prints under Full access.
const QUESTION: &str =
    r"(\[y/N[^\]]*\]|Type .full. to confirm, anything else rejects:) \(\d+ s\) $|\[Y/n\] $";

/// A home holding the file canaries and a user config, a workspace, and the canary environment.
struct Lab {
    dir: tempfile::TempDir,
    user: support::Home,
}

impl Lab {
    fn new(config: &str) -> Lab {
        let dir = support::scratch_dir();
        let user = support::Home::at(dir.path().join("home"));
        for (rel, text) in FILE_CANARIES {
            let path = user.home.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::fs::create_dir_all(user.config().join("shellgate")).unwrap();
        std::fs::write(user.config().join("shellgate/config.toml"), config).unwrap();
        support::workspace(&dir.path().join("ws"));
        Lab { dir, user }
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// `program` with a clean environment, the canaries in it, in the workspace.
    fn command(&self, program: &str, session: &str) -> Command {
        let mut c = Command::new(program);
        support::isolate(&mut c, &self.user)
            .envs(ENV_CANARIES)
            .env("SHELLGATE_SESSION", session)
            .env("TERM", "dumb")
            .current_dir(self.ws());
        c
    }

    /// `shellgate run --mode MODE -- LINE` as an agent runs it: no terminal.
    fn agent_runs(&self, mode: Option<&str>, line: &str) -> String {
        let mut c = self.command(SHELLGATE, "secrets-test");
        c.arg("run");
        if let Some(mode) = mode {
            c.args(["--mode", mode]);
        }
        c.args(["--", line]).stdin(Stdio::null());
        support::detach(&mut c);
        let out = c.output().unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    /// `shellgate ARGS` with a person at a pseudo-terminal answering every question with the
    /// next of `answers` (then `y`): everything the terminal showed.
    fn person_runs(&self, session: &str, args: &[&str], answers: &[&str]) -> String {
        let mut c = self.command(SHELLGATE, session);
        c.args(args);
        let mut pty = rexpect::session::spawn_command(c, Some(TIMEOUT_MS)).unwrap();
        let mut seen = String::new();
        let mut answers = answers.iter();
        loop {
            match pty.exp_regex(QUESTION) {
                Ok((before, matched)) => {
                    seen.push_str(&before);
                    seen.push_str(&matched);
                    pty.send_line(answers.next().unwrap_or(&"y")).unwrap();
                }
                Err(rexpect::error::Error::EOF { got, .. }) => {
                    seen.push_str(&got);
                    return seen;
                }
                Err(e) => panic!("{args:?}: {e}\n{seen}"),
            }
        }
    }
}

/// The canaries found in `text`, each once, in order.
fn canaries_in(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for (at, _) in text.match_indices(CANARY) {
        let canary: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !found.contains(&canary) {
            found.push(canary);
        }
    }
    found
}

fn all_canaries() -> Vec<&'static str> {
    ENV_CANARIES
        .iter()
        .chain(FILE_CANARIES.iter())
        .map(|(_, value)| {
            let at = value.find(CANARY).unwrap();
            let end = value[at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(value.len(), |e| at + e);
            &value[at..end]
        })
        .collect()
}

/// The control: the same lines in the same environment and home, each with `bash -c` and no
/// shellgate, print every canary.
#[test]
fn without_shellgate_the_lines_print_every_canary() {
    let lab = Lab::new("");
    let mut printed = String::new();
    for line in lines() {
        let out = lab
            .command("/bin/bash", "control")
            .args(["-c", &line])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        printed.push_str(&String::from_utf8_lossy(&out.stdout));
        printed.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    let found = canaries_in(&printed);
    for canary in all_canaries() {
        assert!(
            found.iter().any(|f| f == canary),
            "{canary} was not printed"
        );
    }
}

/// `shellgate run` with nobody to ask, in every mode that needs no confirmation: no line prints a
/// canary. Lines that need a person or the reviewer are refused; the rest run without the
/// credentials (absent, named in `SHELLGATE_WITHHELD`) and with the files hidden.
#[test]
fn no_line_prints_a_canary_in_any_mode_through_run() {
    let lab = Lab::new("");
    for mode in ["ask", "auto", "untrusted", "read-only"] {
        for line in lines() {
            let out = lab.agent_runs(Some(mode), &line);
            assert_eq!(
                canaries_in(&out),
                Vec::<String>::new(),
                "{mode}: {line}\n{out}"
            );
        }
    }
    // The names (never the values) of what was withheld, for the line and in the log.
    let out = lab.agent_runs(Some("ask"), "printenv SHELLGATE_WITHHELD");
    let mut names: Vec<&str> = out.trim().split(':').collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "AWS_SECRET_ACCESS_KEY",
            "BUILD_NOTE",
            "DATABASE_URL",
            "DB_PASSWORD",
            "GH_TOKEN"
        ],
        "{out}"
    );
    let log = std::fs::read_to_string(
        lab.user
            .state()
            .join("shellgate/sessions/secrets-test.jsonl"),
    )
    .unwrap();
    assert!(
        log.contains("\"withheld\":[") && log.contains("\"DATABASE_URL\""),
        "{log}"
    );
    assert!(canaries_in(&log).is_empty(), "the log holds a canary");
}

/// A person at the terminal who says yes to every question still gets no canary from a line's
/// grant that does not name it: the files stay hidden in the sandbox, the variables withheld.
#[test]
fn a_persons_yes_to_the_lines_does_not_pass_a_canary() {
    let lab = Lab::new("");
    for line in lines() {
        let out = lab.person_runs("secrets-yes", &["run", "--mode", "ask", "--", &line], &[]);
        assert_eq!(canaries_in(&out), Vec::<String>::new(), "{line}\n{out}");
    }
}

/// Confirmed Full access (no sandbox): the environment is withheld there as well, also from the
/// lines that would print it.
#[test]
fn full_access_withholds_the_environment() {
    let lab = Lab::new("");
    let out = lab.person_runs("secrets-full", &["mode", "full"], &["full"]);
    assert!(out.contains("mode: full"), "{out}");
    let env_lines = lines()
        .into_iter()
        .filter(|l| !l.contains('~') && !l.contains("HOME"));
    for line in env_lines {
        let mut c = lab.command(SHELLGATE, "secrets-full");
        c.args(["run", "--", &line]).stdin(Stdio::null());
        support::detach(&mut c);
        let out = c.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(canaries_in(&text), Vec::<String>::new(), "{line}\n{text}");
    }
    let log = std::fs::read_to_string(
        lab.user
            .state()
            .join("shellgate/sessions/secrets-full.jsonl"),
    )
    .unwrap();
    assert!(log.contains("\"sandbox\":\"full-access\""), "{log}");
}

/// A variable passes only when a person passed it: named in `[sandbox] pass_env`, or on a yes to
/// a question whose grant names it. A rule that declares it without a person passes nothing.
#[test]
fn a_credential_passes_only_when_a_person_passed_it() {
    // The configuration passes GH_TOKEN, and only it.
    let lab = Lab::new("[sandbox]\npass_env = [\"GH_TOKEN\"]\n");
    let out = lab.agent_runs(Some("ask"), "printenv GH_TOKEN; env");
    assert_eq!(canaries_in(&out), ["SGCANARY-env-gh"], "{out}");
    // In untrusted mode a person is asked, and the question names the variable; yes passes it.
    let lab = Lab::new("");
    let out = lab.person_runs(
        "secrets-grant",
        &["run", "--mode", "untrusted", "--", "printenv GH_TOKEN"],
        &["y"],
    );
    assert!(out.contains("passes:  GH_TOKEN"), "{out}");
    assert_eq!(canaries_in(&out), ["SGCANARY-env-gh"], "{out}");
    let out = lab.person_runs(
        "secrets-grant",
        &["run", "--mode", "untrusted", "--", "printenv GH_TOKEN"],
        &["n"],
    );
    assert!(canaries_in(&out).is_empty(), "{out}");
    // Without a person (ask mode runs such a line unasked), it is not passed.
    let out = lab.agent_runs(Some("ask"), "printenv GH_TOKEN");
    assert!(canaries_in(&out).is_empty(), "{out}");
    // A rule may declare it, and allow the line: a rule is not a person.
    let lab = Lab::new(
        "[[rules]]\nid = \"t\"\npattern = \"^printenv$\"\nfield = \"program\"\n\
         policy = \"allow\"\nreason = \"test\"\nneeds = { env = [\"GH_TOKEN\"] }\n",
    );
    let out = lab.agent_runs(Some("ask"), "printenv GH_TOKEN");
    assert!(canaries_in(&out).is_empty(), "{out}");
    // The same rule asking a person: the yes passes it.
    let lab = Lab::new(
        "[[rules]]\nid = \"t\"\npattern = \"^printenv$\"\nfield = \"program\"\n\
         policy = \"human\"\nreason = \"test\"\nneeds = { env = [\"GH_TOKEN\"] }\n",
    );
    let out = lab.person_runs("secrets-rule", &["run", "--", "printenv PATH; env"], &["y"]);
    assert!(out.contains("passes:  GH_TOKEN (credentials"), "{out}");
    assert_eq!(canaries_in(&out), ["SGCANARY-env-gh"], "{out}");
}

/// `wrap`'s broker: a stand-in agent with the canaries in its own environment (it needs its own
/// key) runs the lines with `/bin/bash -c`, as Codex does: no line prints one.
#[test]
#[cfg_attr(
    not(all(has_git, has_python3)),
    ignore = "needs /usr/bin/git and /usr/bin/python3 (apt-get install git python3)"
)]
fn no_line_prints_a_canary_under_wrap() {
    let lab = Lab::new("");
    let script = [
        "import json, subprocess, sys",
        "for line in json.loads(sys.argv[1]):",
        "    p = subprocess.run(['/bin/bash', '-c', line], capture_output=True, text=True)",
        "    print('=== ' + line + '\\n' + p.stdout + p.stderr)",
    ]
    .join("\n");
    for mode in ["ask", "auto"] {
        let all = serde_json::to_string(&lines()).unwrap();
        let mut c = lab.command(SHELLGATE, &format!("secrets-wrap-{mode}"));
        c.args(["wrap", "--mode", mode, "--", "/usr/bin/python3", "-c"])
            .args([&script, &all])
            .stdin(Stdio::null());
        support::detach(&mut c);
        let out = c.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{text}");
        assert_eq!(text.matches("=== ").count(), lines().len(), "{text}");
        assert_eq!(canaries_in(&text), Vec::<String>::new(), "{mode}: {text}");
    }
}

/// An interactive bash with the README's hook, the canaries exported and one more in an
/// unexported shell variable: no line prints one — neither in the sandbox (whose shell state is
/// the person's, restored without credentials) nor in the person's own shell (where a dump of the
/// environment never runs), not from the shell's state files, and not under Full access either —
/// unless the person accepts the offer to run a line that names a credential file outside the
/// sandbox, in their shell. The person's shell keeps its variables (its prompt shows `-HAS` while
/// `GH_TOKEN` is set).
#[test]
fn no_line_prints_a_canary_through_the_hook() {
    let lab = Lab::new("");
    let home = lab.user.home.clone();
    let init = support::isolate(&mut Command::new(SHELLGATE), &lab.user)
        .args(["init", "bash"])
        .output()
        .unwrap();
    assert!(init.status.success());
    std::fs::write(
        home.join(".bashrc"),
        format!(
            "PS1='[$?]P${{GH_TOKEN:+-HAS}}$ '\nSHELL_VAR_TOKEN=SGCAN''ARY-shell-var\n{}\n",
            String::from_utf8_lossy(&init.stdout)
        ),
    )
    .unwrap();
    let bin = lab.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(SHELLGATE, bin.join("shellgate")).unwrap();
    let mut c = lab.command("bash", "secrets-hook");
    c.env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .args(["--noprofile", "--rcfile"])
        .arg(home.join(".bashrc"))
        .arg("-i");
    let mut pty = rexpect::session::spawn_command(c, Some(TIMEOUT_MS)).unwrap();
    pty.process_mut().set_kill_timeout(Some(200));
    let prompt = r"\[(\d+)\]P(-HAS)?\$ ";
    pty.exp_regex(prompt).unwrap();
    let mut type_line = |line: &str, answers: &[&str]| -> String {
        pty.send_line(line).unwrap();
        let mut answers = answers.iter();
        let mut out = String::new();
        loop {
            let (before, matched) = pty
                .exp_regex(&format!(r"{prompt}|{QUESTION}"))
                .unwrap_or_else(|e| panic!("{line}: {e}\n{out}"));
            out.push_str(&before);
            out.push_str(&matched);
            if matched.starts_with('[') && matched.contains("]P") {
                return out;
            }
            // Yes to every question but an offer to run the line outside the sandbox, in the
            // shell as typed (a credential store's line): that yes is a person granting it.
            let offer = before.contains("runs once outside the sandbox");
            let default = if offer { "n" } else { "y" };
            pty.send_line(answers.next().unwrap_or(&default)).unwrap();
        }
    };
    let mut hook_lines = lines();
    hook_lines.push("echo \"$SHELL_VAR_TOKEN\"".to_owned());
    hook_lines.push("declare -p SHELL_VAR_TOKEN GH_TOKEN".to_owned());
    // The shell's state files, which the sandbox can read.
    hook_lines.push("grep -r 'SGCANAR[Y]' ~/.local/state/shellgate".to_owned());
    for line in &hook_lines {
        let out = type_line(line, &[]);
        assert_eq!(canaries_in(&out), Vec::<String>::new(), "{line}\n{out}");
        assert!(out.ends_with("-HAS$ "), "the shell lost GH_TOKEN: {out}");
    }
    // The offer to read the files outside the sandbox, accepted: the person granted it.
    let out = type_line("cat ~/.my.cnf", &["y"]);
    assert!(out.contains("runs once outside the sandbox"), "{out}");
    assert_eq!(canaries_in(&out), ["SGCANARY-file-mycnf"], "{out}");
    // Full access: lines run unsandboxed, and some in the shell itself; the environment is
    // still withheld (the files are the person's: no sandbox hides them).
    let out = type_line("shellgate mode full", &["y", "full"]);
    assert!(out.contains("mode: full"), "{out}");
    for line in hook_lines
        .iter()
        .filter(|l| !l.contains('~') && !l.contains("HOME"))
    {
        let out = type_line(line, &[]);
        assert_eq!(
            canaries_in(&out),
            Vec::<String>::new(),
            "full: {line}\n{out}"
        );
        assert!(out.ends_with("-HAS$ "), "the shell lost GH_TOKEN: {out}");
    }
    // Setting a credential at the prompt runs in the shell and stays there.
    let out = type_line("export GH_TOKEN=SGCANARY-typed", &[]);
    assert!(out.ends_with("-HAS$ "), "{out}");
    pty.send_line("exit").unwrap();
    pty.exp_eof().unwrap();
}
