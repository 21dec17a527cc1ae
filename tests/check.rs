//! `shellgate check`, `config` and `rules` through the real binary: JSON shape, exit codes,
//! standard input, config errors, project files.

// A test or benchmark may panic on what it set up itself; the lints are for the product code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

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
    assert_eq!(v["network"], serde_json::json!([443]));
    assert_eq!(v["writable"], serde_json::json!(["~/.npm"]));

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
    let (code, v) = env.json(&["check", "--json", "--", "cargo build"]);
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
fn broken_config_denies_every_line_naming_the_file() {
    let env = Env::new();
    env.user_config("mode = \"ask\"\n\n[[rules]]\nid = \"x\"\npattern = \"(\"\nfield = \"argv\"\npolicy = \"never\"\nreason = \"r\"\n");
    let (code, v) = env.json(&["check", "--json", "--", "ls"]);
    assert_eq!(
        (code, v["code"].as_str(), v["route"].as_str()),
        (207, Some("CONFIG_INVALID"), Some("config"))
    );
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains("config.toml:5:11"), "{reason}");
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
    assert_eq!(code, 207);
    assert!(v["reason"].as_str().unwrap().contains("only tighten"));
}

#[test]
fn auto_without_reviewer_is_reported_and_fails_closed() {
    let env = Env::new();
    env.user_config("mode = \"auto\"\n");
    let out = env.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(207));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[reviewer]"));
    let (code, v) = env.json(&["check", "--json", "--", "cargo build"]);
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
    let (code, v) = env.json(&["check", "--json", "--mode", "full", "--", "cargo build"]);
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
