//! `shellgate check`, `config` and `rules` through the real binary: JSON shape, exit codes,
//! standard input, config errors, project files.

use crate::support;

use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

struct Env {
    dir: tempfile::TempDir,
    user: support::Home,
}

impl Env {
    fn new() -> Env {
        let dir = support::scratch_dir();
        let user = support::Home::at(dir.path().join("home"));
        std::fs::create_dir_all(dir.path().join("home/.config/shellgate")).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Env { dir, user }
    }

    fn home(&self) -> &Path {
        self.dir.path()
    }

    fn work(&self) -> std::path::PathBuf {
        self.dir.path().join("work")
    }

    fn user_config(&self, text: &str) {
        std::fs::write(self.home().join("home/.config/shellgate/config.toml"), text).unwrap();
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_shellgate"));
        support::isolate(&mut c, &self.user)
            .args(args)
            .current_dir(self.work());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn json(&self, args: &[&str]) -> (i32, Value) {
        let out = self.run(args);
        let v = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
        (out.status.code().unwrap(), v)
    }
}

#[test]
fn json_decision_and_exit_codes() {
    let env = Env::new();
    let (code, v) = env.json(&["check", "--json", "--", "ls -la | grep x"]);
    assert_eq!(
        (code, v["decision"].as_str(), v["code"].as_str()),
        (0, Some("allow"), Some("ALLOWED"))
    );
    assert_eq!(v["route"], "known-safe");
    // A line that only reads runs in the read-only sandbox.
    assert_eq!(v["sandbox"], "read-only");
    assert_eq!(v["network"], "off");
    assert_eq!(v["commands"].as_array().unwrap().len(), 2);

    // A line that fetches is asked about with the grant it needs: the registry's port and cache.
    let (_, v) = env.json(&["check", "--json", "--", "npm install"]);
    assert_eq!(v["sandbox"], "workspace-write");
    assert_eq!(v["network"], serde_json::json!(["registry.npmjs.org:443"]));
    // The lines' own cache, never the person's `~/.npm` (see `policy::needs::LINE_CACHES`).
    assert_eq!(
        v["writable"],
        serde_json::json!(["~/.cache/shellgate-lines/npm"])
    );

    // In `ask` an ordinary line runs in the workspace-write sandbox without asking anyone.
    let (code, v) = env.json(&["check", "--json", "--", "make -j2"]);
    assert_eq!(
        (code, v["decision"].as_str(), v["route"].as_str()),
        (0, Some("allow"), Some("mode"))
    );
    assert_eq!(v["sandbox"], "workspace-write");
    let (code, v) = env.json(&["check", "--json", "--mode", "untrusted", "--", "make -j2"]);
    assert_eq!(
        (code, v["decision"].as_str(), v["code"].as_str()),
        (200, Some("ask"), Some("NEEDS_APPROVAL"))
    );

    let (code, v) = env.json(&["check", "--json", "--", "sudo rm -rf /home/user"]);
    assert_eq!(
        (code, v["code"].as_str(), v["rule"].as_str()),
        (202, Some("NEVER_POLICY"), Some("builtin.rm-system"))
    );

    // The sandbox has no network: a line that needs it is asked about.
    let (code, v) = env.json(&["check", "--json", "--", "cargo fetch"]);
    assert_eq!(
        (code, v["decision"].as_str(), v["code"].as_str()),
        (200, Some("ask"), Some("NEEDS_APPROVAL"))
    );
    assert_eq!(v["rule"], "builtin.network");

    let long = "a".repeat(4001);
    let (code, v) = env.json(&["check", "--json", "--", &long]);
    assert_eq!(
        (code, v["code"].as_str(), v["route"].as_str()),
        (205, Some("LINE_TOO_LONG"), Some("intake"))
    );
    assert!(v["reason"].as_str().unwrap().contains("4001"));
}

#[test]
fn readable_output_is_one_line() {
    let env = Env::new();
    let out = env.run(&["check", "--", "git reset --hard"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with("ask NEEDS_APPROVAL [rule builtin.workspace-destructive]"),
        "{text}"
    );
}

#[test]
fn stdin_is_read_exactly() {
    let env = Env::new();
    let mut child = env
        .cmd(&["check", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"ls \xe2\x80\xaetxt")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(206));
    assert_eq!(v["code"], "INPUT_REJECTED");
    assert!(v["reason"].as_str().unwrap().contains("U+202E"));
    assert!(v["reason"].as_str().unwrap().contains("column 4"));
}

#[test]
fn invalid_utf8_argument_is_rejected() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    let out = env
        .cmd(&["check", "--json", "--"])
        .arg(std::ffi::OsStr::from_bytes(b"ls \xff"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(206));
}

#[test]
fn broken_config_decides_with_the_strictest_policy_naming_the_file() {
    let env = Env::new();
    env.user_config("mode = \"ask\"\n\n[[rules]]\nid = \"x\"\npattern = \"(\"\nfield = \"argv\"\npolicy = \"never\"\nreason = \"r\"\n");
    let (code, v) = env.json(&["check", "--json", "--", "ls"]);
    assert_eq!(
        (code, v["code"].as_str(), v["mode"].as_str()),
        (0, Some("ALLOWED"), Some("untrusted"))
    );
    let note = v["note"].as_str().unwrap();
    assert!(note.contains("config.toml:5:11"), "{note}");
    let (code, v) = env.json(&["check", "--json", "--", "cargo fetch"]);
    assert_eq!((code, v["code"].as_str()), (200, Some("NEEDS_APPROVAL")));
    let out = env.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(207));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid regex"));
}

#[test]
fn project_file_adds_never_rules_and_cannot_loosen() {
    let env = Env::new();
    std::fs::write(
        env.work().join(".shellgate.toml"),
        "[[rules]]\nid = \"no-make\"\npattern = \"^make$\"\nfield = \"program\"\npolicy = \"never\"\nreason = \"use the CI\"\n",
    )
    .unwrap();
    let sub = env.work().join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    // An empty project file in a subdirectory does not shadow the stricter one above it.
    std::fs::write(sub.join(".shellgate.toml"), "").unwrap();
    let (code, v) = env.json(&[
        "check",
        "--json",
        "--cwd",
        sub.to_str().unwrap(),
        "--",
        "make all",
    ]);
    assert_eq!((code, v["rule"].as_str()), (202, Some("no-make")));
    std::fs::write(sub.join(".shellgate.toml"), "[[rules]]\nid = \"y\"\npattern = \"x\"\nfield = \"argv\"\npolicy = \"allow\"\nreason = \"r\"\n").unwrap();
    let (code, v) = env.json(&[
        "check",
        "--json",
        "--cwd",
        sub.to_str().unwrap(),
        "--",
        "ls",
    ]);
    // The loosening file is invalid: the strictest policy decides, and the note says why.
    assert_eq!((code, v["mode"].as_str()), (0, Some("untrusted")));
    assert!(v["note"].as_str().unwrap().contains("only tighten"));
}

#[test]
fn auto_without_reviewer_is_reported_and_fails_closed() {
    let env = Env::new();
    env.user_config("mode = \"auto\"\n");
    let out = env.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(207));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[reviewer]"));
    let (code, v) = env.json(&["check", "--json", "--", "cargo fetch"]);
    assert_eq!(
        (code, v["code"].as_str()),
        (208, Some("REVIEWER_UNCONFIGURED"))
    );
    // Known-safe lines still run without the reviewer.
    let (code, _) = env.json(&["check", "--json", "--", "ls"]);
    assert_eq!(code, 0);
}

#[test]
fn full_mode_needs_confirmation_and_check_says_so() {
    let env = Env::new();
    let (code, v) = env.json(&["check", "--json", "--mode", "full", "--", "cargo fetch"]);
    assert_eq!(
        (code, v["mode"].as_str(), v["sandbox"].as_str()),
        (200, Some("ask"), Some("workspace-write"))
    );
    assert!(v["note"].as_str().unwrap().contains("not confirmed"));
}

#[test]
fn config_show_names_sources() {
    let env = Env::new();
    env.user_config("mode = \"read-only\"\n");
    let (code, v) = env.json(&["config", "show", "--json"]);
    assert_eq!(code, 0);
    let settings = v["settings"].as_array().unwrap();
    assert!(settings.iter().any(|s| s["key"] == "mode"
        && s["value"] == "read-only"
        && s["source"].as_str().unwrap().contains("config.toml")));
}

#[test]
fn rules_lists_builtins() {
    let env = Env::new();
    let (code, v) = env.json(&["rules", "--json"]);
    assert_eq!(code, 0);
    let ids: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"builtin.rm-system") && ids.contains(&"builtin.fork-bomb"),
        "{ids:?}"
    );
}

#[test]
fn exit_code_table_in_docs_matches_the_binary() {
    let env = Env::new();
    let table = String::from_utf8(env.run(&["exit-codes"]).stdout).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for doc in ["README.md", "docs/exit-codes.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        assert!(
            text.contains(&table),
            "{doc} does not contain the current exit-code table:\n{table}"
        );
    }
}

/// shellgate's config comes from the user's home in the password database, not from whatever
/// `HOME` a process was given: a `HOME` pointing at a directory a line could write does not
/// bring its config along. `XDG_CONFIG_HOME`, when set, is the person's own choice and is used.
#[test]
fn the_config_is_anchored_in_the_password_databases_home() {
    let env = Env::new();
    env.user_config("mode = \"read-only\"\n");
    let config = env.home().join("home/.config/shellgate/config.toml");
    let show = |xdg: bool| {
        let mut c = env.cmd(&["config", "show", "--json"]);
        c.env_remove("XDG_CONFIG_HOME");
        if xdg {
            c.env("XDG_CONFIG_HOME", env.home().join("home/.config"));
        }
        let out = c.output().unwrap();
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["files"].to_string()
    };
    let needle = config.display().to_string();
    assert!(
        !show(false).contains(&needle),
        "HOME alone moved the config: {}",
        show(false)
    );
    assert!(show(true).contains(&needle), "XDG_CONFIG_HOME was ignored");
}

// ---------------------------------------------------------------------------------------------
// What users of a CLI expect: completions, a manual page, NO_COLOR.

/// The hidden subcommands; each is checked to exist, so the list cannot go stale unnoticed.
const HIDDEN_SUBCOMMANDS: [&str; 5] = ["hook", "wrap-enter", "wrap-agent", "new-session", "man"];

/// The subcommands `shellgate --help` lists (its "Commands:" section), clap's `help` included.
fn visible_subcommands(env: &Env) -> Vec<String> {
    let help = String::from_utf8(env.run(&["--help"]).stdout).unwrap();
    let names: Vec<String> = help
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect();
    assert!(names.len() > 10, "no command list in --help:\n{help}");
    names
}

fn assert_hidden_subcommands_exist(env: &Env) {
    for name in HIDDEN_SUBCOMMANDS {
        let out = env.run(&[name, "--help"]);
        assert!(out.status.success(), "{name} is not a subcommand any more");
    }
}

/// `shellgate completions SHELL` into a file in the scratch directory.
fn completion_script(env: &Env, shell: &str) -> (std::path::PathBuf, String) {
    let out = env.run(&["completions", shell]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script = String::from_utf8(out.stdout).unwrap();
    let path = env.home().join(format!("completion.{shell}"));
    std::fs::write(&path, &script).unwrap();
    (path, script)
}

/// What bash's completion function offers after `shellgate WORDS…` (the last word is completed).
fn bash_completes(script: &Path, words: &[&str]) -> Vec<String> {
    let program = format!(
        "source {}; COMP_WORDS=(shellgate{}); COMP_CWORD={}; COMP_LINE=\"${{COMP_WORDS[*]}}\"; \
         COMP_POINT=${{#COMP_LINE}}; _shellgate shellgate \"${{COMP_WORDS[-1]}}\" \
         \"${{COMP_WORDS[-2]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        words.iter().map(|w| format!(" '{w}'")).collect::<String>(),
        words.len()
    );
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-e", "-u", "-c", &program])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completions_offer_the_visible_subcommands_and_no_hidden_one() {
    let env = Env::new();
    assert_hidden_subcommands_exist(&env);
    let (path, script) = completion_script(&env, "bash");
    let syntax = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(
        syntax.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    assert!(script.contains("complete -F _shellgate"), "{script}");
    let offered = bash_completes(&path, &[""]);
    for name in visible_subcommands(&env) {
        assert!(offered.contains(&name), "{name} not offered: {offered:?}");
    }
    for name in HIDDEN_SUBCOMMANDS {
        assert!(
            !offered.contains(&name.to_owned()),
            "hidden {name} offered: {offered:?}"
        );
    }
    // A subcommand's values come from its own definition.
    let mut shells = bash_completes(&path, &["completions", ""]);
    shells.retain(|word| !word.starts_with('-'));
    assert_eq!(shells, ["bash", "elvish", "fish", "powershell", "zsh"]);
    assert!(bash_completes(&path, &["check", "--sh"]).contains(&"--shell".to_owned()));
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn zsh_completions_load_under_compinit_and_list_the_visible_subcommands() {
    let env = Env::new();
    let (path, _) = completion_script(&env, "zsh");
    let syntax = Command::new("zsh").arg("-n").arg(&path).output().unwrap();
    assert!(
        syntax.status.success(),
        "zsh -n: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    // Loaded as the README says (compinit, then the file), the function is registered; its list
    // of subcommands is what `_describe` is handed (stubbed here to print it).
    let program = format!(
        "autoload -U compinit; compinit -u -D; source {}; print -r -- \"$_comps[shellgate]\"; \
         _describe() {{ print -rl -- \"${{(@P)4}}\" }}; _shellgate_commands",
        path.display()
    );
    let out = Command::new("zsh")
        .args(["-f", "-c", &program])
        .env("HOME", env.home())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some("_shellgate"), "{stdout}");
    let listed: Vec<&str> = lines.filter_map(|l| l.split(':').next()).collect();
    assert_eq!(
        listed,
        visible_subcommands(&env),
        "zsh lists other subcommands than --help"
    );
}

/// How a completion script is recognised: the shell, what it must contain, and how it marks
/// subcommand NAME.
type ScriptShape = (&'static str, &'static str, fn(&str) -> String);

#[test]
fn powershell_fish_and_elvish_completions_name_the_visible_subcommands_only() {
    let env = Env::new();
    let shells: [ScriptShape; 3] = [
        (
            "powershell",
            "Register-ArgumentCompleter -Native -CommandName 'shellgate'",
            |name| format!("'shellgate;{name}'"),
        ),
        ("fish", "complete -c shellgate", |name| {
            format!("__fish_shellgate_needs_command\" -f -a \"{name}\"")
        }),
        (
            "elvish",
            "set edit:completion:arg-completer[shellgate]",
            |name| format!("&'shellgate;{name}'="),
        ),
    ];
    let visible = visible_subcommands(&env);
    for (shell, must, marks) in shells {
        let (_, script) = completion_script(&env, shell);
        assert!(script.contains(must), "{shell}: no {must:?}");
        for name in visible.iter().filter(|name| *name != "help") {
            assert!(script.contains(&marks(name)), "{shell}: {name} missing");
        }
        for name in HIDDEN_SUBCOMMANDS {
            assert!(!script.contains(&marks(name)), "{shell}: hidden {name}");
        }
    }
}

#[test]
fn completions_for_an_unknown_shell_are_a_usage_error() {
    let env = Env::new();
    let out = env.run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value 'tcsh'") && err.contains("powershell"),
        "{err}"
    );
}

#[test]
fn the_man_page_describes_every_visible_subcommand_and_exit_status() {
    let env = Env::new();
    let out = env.run(&["man"]);
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH shellgate 1"), "{page}");
    for section in [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "COMMANDS",
        "\"EXIT STATUS\"",
        "ENVIRONMENT",
    ] {
        assert!(page.contains(&format!("\n.SH {section}\n")), "no {section}");
    }
    for name in visible_subcommands(&env)
        .iter()
        .filter(|name| *name != "help")
    {
        assert!(
            page.contains(&format!(".SS \"shellgate {name}\"")),
            "{name}"
        );
    }
    // Nested subcommands have entries of their own, with their own options.
    assert!(page.contains(".SS \"shellgate log verify\""), "{page}");
    for name in HIDDEN_SUBCOMMANDS {
        assert!(
            !page.contains(&format!("shellgate {name}\"")),
            "hidden {name}"
        );
    }
    // No page that nothing installs is referred to.
    assert!(!page.contains("shellgate\\-check(1)"), "{page}");
    let table = String::from_utf8(env.run(&["exit-codes"]).stdout).unwrap();
    for code in table
        .lines()
        .skip(2)
        .filter_map(|row| row.split('`').nth(1))
    {
        assert!(page.contains(code), "{code} missing from EXIT STATUS");
    }
}

#[test]
#[cfg_attr(
    not(has_groff),
    ignore = "groff is not installed (apt-get install groff-base)"
)]
fn the_man_page_renders_without_a_warning() {
    let env = Env::new();
    let page = env.home().join("shellgate.1");
    std::fs::write(&page, env.run(&["man"]).stdout).unwrap();
    let out = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `shellgate ARGS` at a pseudo-terminal with `TERM=xterm-256color` and `env`: what it showed.
fn at_terminal(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> String {
    let mut c = env.cmd(args);
    c.env("TERM", "xterm-256color");
    for (name, value) in vars {
        c.env(name, value);
    }
    let mut pty = rexpect::session::spawn_command(c, Some(30_000)).unwrap();
    pty.exp_eof().unwrap()
}

/// clap styles its help on a terminal, and only there; `NO_COLOR` (set, not empty) turns the
/// styling off even on a terminal.
#[test]
fn help_is_styled_on_a_terminal_only_and_never_with_no_color() {
    let env = Env::new();
    let styled = at_terminal(&env, &["--help"], &[]);
    assert!(styled.contains("check"), "{styled}");
    assert!(
        styled.contains("\x1b["),
        "no styling on a terminal: {styled:?}"
    );
    // An empty NO_COLOR is as if it were unset (no-color.org).
    let empty = at_terminal(&env, &["--help"], &[("NO_COLOR", "")]);
    assert!(empty.contains("\x1b["), "{empty:?}");
    for args in [
        &["--help"][..],
        &["check", "--help"],
        &["completions", "nosuch"],
    ] {
        let plain = at_terminal(&env, args, &[("NO_COLOR", "1")]);
        assert!(
            plain.contains("check") || plain.contains("nosuch"),
            "{plain}"
        );
        assert!(!plain.contains('\x1b'), "NO_COLOR=1 {args:?}: {plain:?}");
    }
    let mut piped = env.cmd(&["--help"]);
    let piped = piped.env("TERM", "xterm-256color").output().unwrap();
    assert!(!piped.stdout.is_empty());
    assert!(
        !piped.stdout.contains(&0x1b),
        "styled into a pipe: {:?}",
        String::from_utf8_lossy(&piped.stdout)
    );
}

/// `install.sh` installs the completions and the manual page too; it stays shellcheck-clean.
#[test]
#[cfg_attr(
    not(has_shellcheck),
    ignore = "shellcheck is not installed (apt-get install shellcheck)"
)]
fn install_sh_passes_shellcheck() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    for installed in [
        "completions bash",
        "completions zsh",
        "man/man1/shellgate.1\" man",
    ] {
        assert!(text.contains(installed), "install.sh lacks {installed:?}");
    }
    let out = Command::new("shellcheck").arg(&script).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The `sed -i` scripts a person's line may run outside the sandbox as an edit of shellgate's
/// config (`policy::own_config`) are ones GNU sed itself calls harmless: every script `check`
/// lets run outside is accepted by `sed --sandbox`, which refuses each command and flag that runs
/// a program or reads or writes another file (`e`, `r`, `R`, `w`, `W`, `s///e`, `s///w`), or is
/// refused by sed altogether (a bad expression: the edit does nothing). Scripts
/// drawn from sed's own alphabet (a fixed seed, so a failure repeats), and hand-picked ones.
#[test]
fn sed_scripts_run_outside_as_edits_are_ones_sed_calls_harmless() {
    let env = Env::new();
    let config = env.home().join("home/.config/shellgate/config.toml");
    std::fs::write(&config, "mode = \"ask\"\n").unwrap();
    let sed_accepts = |sandbox: bool, script: &str| {
        Command::new("sed")
            .args(sandbox.then_some("--sandbox"))
            .args(["-e", script, "/dev/null"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let alphabet: Vec<char> = "s/|:ab\\gGeEwWrRpPiIM0123; {}#&$.*".chars().collect();
    let mut seed: u64 = 0x5eed_5eed;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    let mut scripts: Vec<String> = [
        "s/a/b/",
        "s/a/b/g",
        "s|a|b|2",
        "s/a/b/e",
        "s/a/b/w /tmp/x",
        "s/a/b/;e id",
        "1e id",
        "s/a/b/ ; w x",
        "s/\\//x/",
        "s/a/b/gI",
        "s/a/b/M",
        "r /etc/passwd",
        "s/a\\/b/c/",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    for _ in 0..300 {
        let len = 4 + next(8);
        let mut script = String::from("s");
        for _ in 0..len {
            script.push(alphabet[next(alphabet.len())]);
        }
        scripts.push(script);
    }
    let mut edits = 0;
    for script in &scripts {
        let line = format!("sed -i '{script}' ~/.config/shellgate/config.toml");
        let (_, v) = env.json(&["check", "--json", "--", &line]);
        if v["sandbox"] == "full-access" {
            edits += 1;
            // A script sed refuses anyway (a bad expression) edits nothing.
            assert!(
                sed_accepts(true, script) || !sed_accepts(false, script),
                "{script:?} runs outside as an edit, and `sed --sandbox` refuses it"
            );
        }
    }
    assert!(
        edits >= 5,
        "only {edits} scripts were taken for edits: the test shows nothing"
    );
}
