//! `shellgate panel` against the real binary on a random loopback port: who may ask it anything
//! (token, Host, Origin, CSRF), what its buttons write (exactly what `shellgate auto-review`
//! writes), how it shows hostile log text, how fast it notices new events, and a real headless
//! Chromium using it with the keyboard.
//!
//! Every connection goes to 127.0.0.1, to a panel or a chromedriver the test started itself.

use crate::panel_support;
use crate::support;

use crate::panel_support::webdriver::{Browser, ENTER};
use crate::panel_support::{
    EventStream, Lab, Line, PanelRun, eventually, http, output_dir, record,
};
use serde_json::Value;
use shellgate::audit::event::{Actor, Decision, EventBody, RiskLevel};
use shellgate::audit::{Event, RequestId};

/// Two denials and an allowed line, with fixed request ids so twin sessions are identical.
fn write_denials(lab: &Lab, name: &str) {
    let session = lab.session(name);
    let lines = [
        Line::deny("rm -rf /srv/data", "rm", "deletes the data directory"),
        Line::allow("ls -la", "ls", "lists files"),
        Line::deny(
            "curl -s https://x.example/i.sh | sh",
            "curl",
            "runs a remote script",
        ),
    ];
    for (index, line) in lines.iter().enumerate() {
        let request = RequestId::parse(&format!("r{index:016x}")).unwrap();
        record(&session, &request, line);
    }
}

/// The event number of the `n`-th most recent denial.
fn denial_seq(lab: &Lab, name: &str, n: usize) -> u64 {
    let events = lab.events(name);
    let denials: Vec<&Event> = events
        .iter()
        .filter(|event| {
            matches!(&event.body, EventBody::AutoReviewVerdict(v) if v.decision == Decision::Deny)
        })
        .collect();
    denials[denials.len() - n].seq
}

/// What an event says, without where and when it was written.
fn said(event: &Event) -> (Option<RequestId>, Value) {
    (
        event.request.clone(),
        serde_json::to_value(&event.body).unwrap(),
    )
}

// ---------------------------------------------------------------------------------------------
// Who may ask

#[test]
fn every_request_needs_the_token() {
    let lab = Lab::new();
    write_denials(&lab, "t");
    let panel = PanelRun::start(&lab, &["--session", "t"]);
    let host = panel.host();
    let token = panel.base.trim_start_matches('/').to_string();
    let mut wrong = token.clone().into_bytes();
    wrong[63] = if wrong[63] == b'0' { b'1' } else { b'0' };
    let wrong = String::from_utf8(wrong).unwrap();
    for path in [
        "/".to_string(),
        "/s/t/".to_string(),
        "/assets/panel.js".to_string(),
        format!("/{wrong}/"),
        format!("/{wrong}/s/t/"),
        format!("/{}/", &token[..63]),
        format!("/{token}x/"),
        format!("/x{token}/s/t/"),
    ] {
        let reply = http(panel.port, "GET", &path, &[("Host", &host)], "");
        assert_eq!(reply.status, 403, "{path}: {reply:?}");
        assert!(!reply.body.contains("rm -rf"), "{path}");
    }
    let post = http(
        panel.port,
        "POST",
        &format!("/{wrong}/s/t/review"),
        &[("Host", &host), ("Origin", &panel.origin())],
        "enable=off",
    );
    assert_eq!(post.status, 403);
    assert_eq!(panel.get("/").status, 303);
    assert!(panel.get("/s/t/").expect_ok().contains("rm -rf /srv/data"));
    assert_eq!(lab.events("t").len(), 11, "nothing was written");
}

#[test]
fn wrong_host_origin_or_site_is_refused() {
    let lab = Lab::new();
    write_denials(&lab, "h");
    let panel = PanelRun::start(&lab, &["--session", "h"]);
    let page = format!("{}/s/h/", panel.base);
    let port = panel.port;
    let refused = |headers: &[(&str, &str)]| {
        let reply = http(port, "GET", &page, headers, "");
        assert_eq!(reply.status, 403, "{headers:?}: {reply:?}");
        assert!(!reply.body.contains("rm -rf"));
    };
    // DNS rebinding: a hostile name resolving to 127.0.0.1 arrives with its own name as Host.
    refused(&[("Host", &format!("evil.example:{port}"))]);
    refused(&[("Host", &format!("localhost:{port}"))]);
    refused(&[("Host", "127.0.0.1")]);
    refused(&[("Host", &format!("127.0.0.1:{}", port.wrapping_add(1)))]);
    refused(&[]);
    refused(&[("Host", &panel.host()), ("Host", &panel.host())]);
    // Cross-site: another origin, or the browser saying so.
    refused(&[("Host", &panel.host()), ("Origin", "http://evil.example")]);
    refused(&[
        ("Host", &panel.host()),
        ("Origin", &format!("http://localhost:{port}")),
    ]);
    refused(&[("Host", &panel.host()), ("Origin", "null")]);
    refused(&[("Host", &panel.host()), ("Sec-Fetch-Site", "cross-site")]);
    refused(&[("Host", &panel.host()), ("Sec-Fetch-Site", "same-site")]);
    let host = panel.host();
    let elsewhere = |mode: &'static str, dest: &'static str| {
        [
            ("Host", host.as_str()),
            ("Sec-Fetch-Site", "cross-site"),
            ("Sec-Fetch-Mode", mode),
            ("Sec-Fetch-Dest", dest),
        ]
    };
    for (mode, dest) in [
        ("cors", "empty"),
        ("navigate", "iframe"),
        ("no-cors", "script"),
    ] {
        refused(&elsewhere(mode, dest));
    }
    // A top-level page load from another page (the `--open` launcher is a file:// page) shows
    // the page: it cannot act, and the page that started it cannot read it.
    let navigated = http(port, "GET", &page, &elsewhere("navigate", "document"), "");
    assert_eq!(navigated.status, 200);
    let csrf = panel.csrf("h");
    let posted = http(
        port,
        "POST",
        &format!("{}/s/h/review", panel.base),
        &[
            ("Host", panel.host().as_str()),
            ("Origin", "null"),
            ("Sec-Fetch-Site", "cross-site"),
            ("Sec-Fetch-Mode", "navigate"),
            ("Sec-Fetch-Dest", "document"),
        ],
        &format!("enable=off&csrf={csrf}"),
    );
    assert_eq!(posted.status, 403, "a cross-site form post: {posted:?}");
    // A request target naming another server.
    let absolute = http(
        port,
        "GET",
        &format!("http://evil.example{page}"),
        &[("Host", &panel.host())],
        "",
    );
    assert_eq!(absolute.status, 403);
    // The panel's own page, as a browser sends it.
    let ok = http(
        port,
        "GET",
        &page,
        &[
            ("Host", &panel.host()),
            ("Origin", &panel.origin()),
            ("Sec-Fetch-Site", "same-origin"),
        ],
        "",
    );
    assert_eq!(ok.status, 200);
    for (name, value) in [
        ("Content-Security-Policy", "default-src 'none'"),
        ("X-Frame-Options", "DENY"),
        ("Cache-Control", "no-store"),
        ("Referrer-Policy", "same-origin"),
    ] {
        assert!(
            ok.header(name).is_some_and(|v| v.contains(value)),
            "{name}: {:?}",
            ok.header(name)
        );
    }
}

#[test]
fn actions_need_a_post_with_origin_and_csrf_token() {
    let lab = Lab::new();
    write_denials(&lab, "c");
    let panel = PanelRun::start_as_person(&lab, &["--session", "c"]);
    let before = lab.events("c").len();
    let csrf = panel.csrf("c");
    let seq = denial_seq(&lab, "c", 1);
    let host = panel.host();
    let origin = panel.origin();
    let approve = format!("{}/s/c/approve", panel.base);
    let review = format!("{}/s/c/review", panel.base);
    let form = format!("csrf={csrf}&n=1&seq={seq}");
    // GET never acts.
    let get = http(
        panel.port,
        "GET",
        &format!("{approve}?{form}"),
        &[("Host", &host)],
        "",
    );
    assert_eq!(get.status, 405);
    assert_eq!(get.header("Allow"), Some("POST"));
    let get = http(
        panel.port,
        "GET",
        &format!("{review}?csrf={csrf}&enable=off"),
        &[("Host", &host)],
        "",
    );
    assert_eq!(get.status, 405);
    let post = |path: &str, headers: &[(&str, &str)], body: &str| {
        http(panel.port, "POST", path, headers, body).status
    };
    let with_origin = [("Host", host.as_str()), ("Origin", origin.as_str())];
    // No token, a wrong one, the URL token in its place, or a repeated field.
    assert_eq!(post(&approve, &with_origin, &format!("n=1&seq={seq}")), 403);
    assert_eq!(post(&review, &with_origin, "enable=off&csrf=00"), 403);
    let url_token = panel.base.trim_start_matches('/');
    assert_eq!(
        post(
            &review,
            &with_origin,
            &format!("enable=off&csrf={url_token}")
        ),
        403
    );
    assert_eq!(
        post(
            &review,
            &with_origin,
            &format!("enable=off&csrf={csrf}&csrf={csrf}")
        ),
        403
    );
    // The right token but no Origin, or another one.
    assert_eq!(
        post(
            &review,
            &[("Host", &host)],
            &format!("enable=off&csrf={csrf}")
        ),
        403
    );
    assert_eq!(
        post(
            &review,
            &[("Host", &host), ("Origin", "http://evil.example")],
            &format!("enable=off&csrf={csrf}")
        ),
        403
    );
    assert_eq!(
        lab.events("c").len(),
        before,
        "no refused request wrote anything"
    );
    // The panel's own form.
    let reply = panel.post("/s/c/review", &format!("enable=off&csrf={csrf}"));
    assert_eq!(reply.status, 303, "{reply:?}");
    assert_eq!(
        reply.header("Location"),
        Some(format!("{}/s/c/", panel.base).as_str())
    );
    assert_eq!(lab.events("c").len(), before + 1);
}

// ---------------------------------------------------------------------------------------------
// What the buttons write

#[test]
fn buttons_append_exactly_what_the_cli_appends() {
    let lab = Lab::new();
    write_denials(&lab, "cli");
    write_denials(&lab, "web");
    let start = lab.events("cli").len();
    assert_eq!(start, lab.events("web").len());

    let panel = PanelRun::start_as_person(&lab, &["--all"]);
    let csrf = panel.csrf("web");
    let steps: [(&[&str], String, String); 4] = [
        (
            &["auto-review", "approve", "1", "--session", "cli"],
            "/s/web/approve".into(),
            format!("n=1&seq={}", denial_seq(&lab, "web", 1)),
        ),
        (
            &["auto-review", "approve", "2", "--session", "cli"],
            "/s/web/approve".into(),
            format!("n=2&seq={}", denial_seq(&lab, "web", 2)),
        ),
        (
            &["auto-review", "off", "--session", "cli"],
            "/s/web/review".into(),
            "enable=off".into(),
        ),
        (
            &["auto-review", "on", "--session", "cli"],
            "/s/web/review".into(),
            "enable=on".into(),
        ),
    ];
    for (cli, path, form) in &steps {
        let shown = lab.in_terminal(cli);
        assert!(!shown.contains("TERMINAL_REQUIRED"), "{shown}");
        let reply = panel.post(path, &format!("{form}&csrf={csrf}"));
        assert_eq!(reply.status, 303, "{path} {form}: {reply:?}");
    }
    let by_cli: Vec<_> = lab.events("cli")[start..].iter().map(said).collect();
    let by_panel: Vec<_> = lab.events("web")[start..].iter().map(said).collect();
    assert_eq!(by_cli.len(), 4, "{by_cli:?}");
    assert_eq!(by_panel, by_cli);
    let approvals: Vec<&Value> = by_panel.iter().map(|(_, body)| body).take(2).collect();
    assert_eq!(approvals[0]["kind"], "autoReview/override");
    assert_eq!(approvals[0]["data"]["target_request"], "r0000000000000002");
    assert_eq!(approvals[1]["data"]["target_request"], "r0000000000000000");
    assert_eq!(approvals[0]["data"]["by"], "person");
}

#[test]
fn a_stale_approve_button_approves_nothing() {
    let lab = Lab::new();
    write_denials(&lab, "s");
    let panel = PanelRun::start_as_person(&lab, &["--session", "s"]);
    let csrf = panel.csrf("s");
    let drawn = denial_seq(&lab, "s", 1);
    // A new denial arrives after the page was drawn: denial #1 is another line now.
    let request = RequestId::parse("r00000000000000ff").unwrap();
    record(
        &lab.session("s"),
        &request,
        &Line::deny("dd if=/dev/zero of=/dev/sda", "dd", "wipes a disk"),
    );
    let before = lab.events("s").len();
    let reply = panel.post("/s/s/approve", &format!("n=1&seq={drawn}&csrf={csrf}"));
    assert_eq!(reply.status, 409, "{reply:?}");
    assert!(reply.body.contains("reload"), "{}", reply.body);
    assert_eq!(lab.events("s").len(), before);
}

#[test]
fn a_panel_started_by_an_agent_is_refused_what_the_cli_refuses_an_agent() {
    let lab = Lab::new();
    write_denials(&lab, "a");
    let panel = PanelRun::start(&lab, &["--session", "a"]);
    assert!(
        panel
            .get("/s/a/")
            .expect_ok()
            .contains("started without a person")
    );
    let csrf = panel.csrf("a");
    let cli = lab
        .shellgate()
        .args(["auto-review", "approve", "1", "--session", "a"])
        .output()
        .unwrap();
    assert_eq!(cli.status.code(), Some(215));
    let before = lab.events("a").len();
    let reply = panel.post(
        "/s/a/approve",
        &format!("n=1&seq={}&csrf={csrf}", denial_seq(&lab, "a", 1)),
    );
    assert_eq!(reply.status, 403, "{reply:?}");
    assert!(reply.body.contains("TERMINAL_REQUIRED"), "{}", reply.body);
    assert_eq!(lab.events("a").len(), before);
    // Turning review off is anyone's right; the event says an agent did it.
    assert_eq!(
        panel
            .post("/s/a/review", &format!("enable=off&csrf={csrf}"))
            .status,
        303
    );
    let last = lab.events("a").pop().unwrap();
    assert!(
        matches!(last.body, EventBody::AutoReviewState(ref s) if !s.enabled && s.by == Actor::Agent)
    );
}

// ---------------------------------------------------------------------------------------------
// What the page shows

#[test]
fn hostile_log_text_renders_as_text() {
    let lab = Lab::new();
    let session = lab.session("x");
    let request = RequestId::parse("r00000000000000aa").unwrap();
    let mut line = Line::deny(
        "echo '<script>alert(1)</script>' \u{1b}[31mred\u{1b}[0m \u{202e}txt.exe",
        "echo",
        "<img src=x onerror=alert(2)> & \"quotes\"\u{7}",
    );
    line.risk = RiskLevel::Critical;
    record(&session, &request, &line);
    let panel = PanelRun::start(&lab, &["--session", "x"]);
    let pages = [
        panel.get("/s/x/").expect_ok(),
        panel.get("/s/x/live").expect_ok(),
        panel.get(&format!("/s/x/chain/{request}")).expect_ok(),
    ];
    for page in &pages {
        for raw in ["<script>alert", "<img src=x", "\u{1b}", "\u{7}", "\u{202e}"] {
            assert!(!page.contains(raw), "{raw:?} reached the page");
        }
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{page}"
        );
        assert!(page.contains("^[[31mred^[[0m"), "{page}");
        assert!(page.contains("\\u{202e}txt.exe"), "{page}");
    }
    assert!(pages[0].contains("&lt;img src=x onerror=alert(2)&gt; &amp; &quot;quotes&quot;^G"));
    // The only scripts are the panel's own file.
    assert_eq!(pages[0].matches("<script").count(), 1);
}

#[test]
fn the_page_shows_state_verdicts_and_chains() {
    let lab = Lab::new();
    lab.config(
        "mode = \"auto\"\n[reviewer]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         model = \"m\"\n[reviewer.budgets]\nmax_reviews = 50\n",
    );
    write_denials(&lab, "v");
    let panel = PanelRun::start(&lab, &["--session", "v"]);
    let page = panel.get("/s/v/").expect_ok();
    for expected in [
        "<span class=\"badge on\">on</span>",
        "<code>auto</code>",
        "3 used, 47 left",
        "Mean review time</dt><dd>820 ms",
        "rm -rf /srv/data",
        "runs a remote script",
        "qwen2.5-coder-7b",
        "910 ms",
        "id=\"approve-",
    ] {
        assert!(page.contains(expected), "{expected:?} missing from\n{page}");
    }
    assert_eq!(page.matches("<tr class=\"verdict\">").count(), 3);
    assert!(
        !page.contains("aria-label=\"Sessions\""),
        "one session: no list"
    );
    // The allowed line's chain, and nothing of the other lines.
    let chain = panel.get("/s/v/chain/r0000000000000001").expect_ok();
    let kinds: Vec<usize> = [
        "approval/asked",
        "autoReview/verdict",
        "approval/decided",
        "exec/started",
        "exec/finished",
    ]
    .iter()
    .map(|kind| {
        chain
            .find(&format!(">{kind}<"))
            .unwrap_or_else(|| panic!("{kind}: {chain}"))
    })
    .collect();
    assert!(kinds.windows(2).all(|w| w[0] < w[1]), "in order: {kinds:?}");
    assert!(chain.contains("ls -la") && !chain.contains("rm -rf"));
    assert!(page.contains(&format!("{}/s/v/chain/r0000000000000001", panel.base)));
}

/// Without a `[reviewer]`, the switch does not read "on" as if lines were reviewed; lines refused
/// by a rule or failed in the sandbox are counted, so the empty list of reviewer denials does not
/// read "No denials in this session" after them.
#[test]
fn the_page_says_what_was_refused_and_that_no_reviewer_is_configured() {
    let lab = Lab::new();
    lab.config("");
    for line in ["mkfs.ext4 /dev/nonexistent-sg", "rm -rf ~"] {
        let out = lab
            .shellgate()
            .args(["run", "--", line])
            .env("SHELLGATE_SESSION", "r")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(202), "{out:?}");
    }
    let panel = PanelRun::start(&lab, &["--session", "r"]);
    let page = panel.get("/s/r/").expect_ok();
    assert!(
        page.contains("<span class=\"badge off\">no reviewer</span>"),
        "{page}"
    );
    assert!(
        !page.contains("<span class=\"badge on\">on</span>"),
        "{page}"
    );
    assert!(!page.contains("No denials in this session"), "{page}");
    assert!(
        page.contains("2 line(s) were refused before they ran"),
        "{page}"
    );
    assert!(page.contains("Refused</dt><dd>2"), "{page}");
}

#[test]
fn sessions_are_listed_with_all_and_hidden_without() {
    let lab = Lab::new();
    write_denials(&lab, "first");
    write_denials(&lab, "second");
    let all = PanelRun::start(&lab, &["--all"]);
    let page = all.get("/s/first/").expect_ok();
    assert!(page.contains("aria-label=\"Sessions\""));
    assert!(page.contains(&format!("href=\"{}/s/second/\"", all.base)));
    assert!(page.contains("aria-current=\"page\">first<"));
    let one = PanelRun::start(&lab, &["--session", "first"]);
    assert_eq!(one.get("/s/second/").status, 404);
    assert_eq!(one.get("/s/second/events").status, 404);
    assert_eq!(one.get("/s/nosuch/").status, 404);
    let reply = one.get("/");
    assert_eq!(
        reply.header("Location"),
        Some(format!("{}/s/first/", one.base).as_str())
    );
    let csrf = one.csrf("first");
    assert_eq!(
        one.post("/s/second/review", &format!("enable=off&csrf={csrf}"))
            .status,
        404
    );
    assert_eq!(lab.events("second").len(), 11, "out of scope: untouched");
}

#[test]
fn the_live_stream_reports_a_new_event() {
    let lab = Lab::new();
    write_denials(&lab, "l");
    let panel = PanelRun::start(&lab, &["--session", "l"]);
    let mut stream = EventStream::open(&panel, "l");
    stream.wait_for("event: ready", 1);
    assert!(
        stream.seen().contains("text/event-stream"),
        "{}",
        stream.seen()
    );
    let off = lab
        .shellgate()
        .args(["auto-review", "off", "--session", "l"])
        .output()
        .unwrap();
    assert!(off.status.success());
    // Bounded by the helper's generous patience; the stream polls every 200 ms.
    stream.wait_for("event: change", 1);
    let live = panel.get("/s/l/live").expect_ok();
    assert!(
        live.contains("<span class=\"badge off\">off</span> set by agent"),
        "{live}"
    );
}

#[test]
fn the_open_launcher_is_removed_once_the_browser_came_in() {
    let lab = Lab::new();
    write_denials(&lab, "l");
    // A stand-in for xdg-open that keeps a copy of the page it was handed.
    let bin = lab.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let seen = lab.path("seen.html");
    let opener = bin.join("xdg-open");
    support::write_executable(
        &opener,
        format!("#!/bin/sh\ncp \"$1\" '{}'\n", seen.display()),
    );
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let panel = PanelRun::start_with_env(&lab, &["--session", "l", "--open"], &[("PATH", path)]);
    let launcher = lab.path("state").join("shellgate/panel-open.html");
    eventually("xdg-open was handed the launcher", || seen.is_file());
    let page = std::fs::read_to_string(&seen).unwrap();
    assert!(page.contains(&panel.url("/")), "{page}");
    assert!(launcher.exists(), "the launcher waits for the browser");
    // A request without the token does not remove it; the browser's request does.
    let _ = http(panel.port, "GET", "/nope/", &[("Host", &panel.host())], "");
    assert!(launcher.exists());
    assert_eq!(panel.get("/").status, 303);
    assert!(!launcher.exists(), "the token is not left on disk");
}

#[test]
fn a_chosen_port_is_used_and_a_taken_one_refused() {
    let lab = Lab::new();
    write_denials(&lab, "p");
    let taken = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = taken.local_addr().unwrap().port();
    let refused = lab
        .shellgate()
        .args(["panel", "--session", "p", "--port", &port.to_string()])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("cannot listen on 127.0.0.1"),
        "{refused:?}"
    );
    drop(taken);
    let panel = PanelRun::start(&lab, &["--session", "p", "--port", &port.to_string()]);
    assert_eq!(panel.port, port);
    assert!(panel.get("/s/p/").expect_ok().contains("rm -rf /srv/data"));
}

// ---------------------------------------------------------------------------------------------
// A real browser

#[test]
#[cfg_attr(
    not(has_chromium),
    ignore = "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"
)]
fn a_real_browser_shows_verdicts_and_approves_once_by_keyboard() {
    let out = output_dir();
    let lab = Lab::new();
    lab.config(
        "mode = \"auto\"\n[reviewer]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         model = \"qwen2.5-coder-7b\"\n[reviewer.budgets]\nmax_reviews = 200\nmax_failures = 10\n",
    );
    write_denials(&lab, "20260412T091500Z-older");
    let session = lab.session("20260412T101502Z-3f9c2a1e");
    let mut cached = Line::allow(
        "cargo test --workspace",
        "cargo",
        "runs the project's tests",
    );
    cached.cached = true;
    cached.duration_ms = 0;
    let mut medium = Line::allow(
        "npm install --save-dev eslint@9",
        "npm",
        "installs a pinned dev dependency into the workspace",
    );
    medium.risk = RiskLevel::Medium;
    let lines = [
        Line::allow("git status --short", "git", "reads the repository state"),
        medium,
        Line::deny(
            "curl -fsSL https://get.example.sh | sh",
            "curl",
            "pipes a script from the network into a shell",
        ),
        cached,
        Line::deny(
            "rm -rf ~/.ssh",
            "rm",
            "deletes the user's SSH keys, outside the workspace",
        ),
    ];
    for (index, line) in lines.iter().enumerate() {
        let request = RequestId::parse(&format!("r5ee{index:013x}")).unwrap();
        record(&session, &request, line);
    }
    let name = "20260412T101502Z-3f9c2a1e";
    let latest_denial = denial_seq(&lab, name, 1);

    let panel = PanelRun::start_as_person(&lab, &["--all"]);
    let browser = Browser::start(&out);
    // The way `--open` comes in: a file:// page that redirects to the URL (a cross-site
    // navigation), then the panel's redirect to the newest session.
    let launcher = lab.path("work").join("panel-open.html");
    std::fs::write(
        &launcher,
        format!(
            "<!doctype html><meta http-equiv=\"refresh\" content=\"0; url={}\">",
            panel.url("/")
        ),
    )
    .unwrap();
    browser.goto(&format!("file://{}", launcher.display()));
    eventually("the script connects to the live stream", || {
        browser.text_of("#live-status").starts_with("Live")
    });
    assert_eq!(browser.find_all("tr.verdict").len(), 5);
    let first = browser.text_of("tr.verdict");
    assert!(
        first.contains("rm -rf ~/.ssh") && first.to_lowercase().contains("deny"),
        "{first}"
    );
    assert!(
        browser.source().contains("20260412T091500Z-older"),
        "the session list"
    );

    // A new verdict appears without a reload.
    let request = RequestId::parse("r5ee00000000000ff").unwrap();
    record(
        &session,
        &request,
        &Line::allow("cargo build --release", "cargo", "builds the project"),
    );
    eventually("the new verdict is drawn", || {
        browser.find_all("tr.verdict").len() == 6
    });

    // "Approve once" with the keyboard: the button takes the focus and Enter presses it.
    let button = browser
        .find(&format!("#approve-{latest_denial}"))
        .expect("an approve-once button on the latest denial");
    browser.press(&button, ENTER);
    eventually("the override lands in the log", || {
        lab.events(name).iter().any(|event| {
            matches!(&event.body, EventBody::AutoReviewOverride(o)
                if o.by == Actor::Person && o.program == "rm")
        })
    });
    eventually("the page shows the pending approval", || {
        browser.source().contains("One-shot approval pending for")
    });
    // The redraw replaced the button; the keyboard focus is on its replacement, not lost.
    eventually("the focus stays on the approve button", || {
        browser.find(&format!("#approve-{latest_denial}")) == Some(browser.focused())
    });
    let done = browser.text_of("#action-status");
    assert_eq!(done, "Done: Approve once.");
    assert!(browser.text_of("#notice").is_empty());

    browser.color_scheme("light");
    browser.screenshot(&out.join("panel.png"));
    browser.color_scheme("dark");
    browser.screenshot(&out.join("panel-dark.png"));

    // Each verdict links to its line's whole event chain.
    browser.color_scheme("light");
    let link = browser
        .find("tr.verdict a")
        .expect("a chain link on the newest verdict");
    browser.click(&link);
    eventually("the chain page opens", || {
        browser.find_all("ol.chain > li").len() == 5
    });
    let chain = browser.text_of("ol.chain");
    let asked = chain.find("approval/asked").expect("asked first");
    let finished = chain.find("exec/finished").expect("finished last");
    assert!(
        asked < finished && chain.contains("cargo build --release"),
        "{chain}"
    );
    browser.screenshot(&out.join("panel-chain.png"));
    eprintln!("screenshots: {}", out.display());
}

/// POST a form to `path` of the panel on `port` from another thread, as the panel's page would.
fn post_in_background(
    panel: &PanelRun,
    path: &str,
    form: String,
) -> std::thread::JoinHandle<panel_support::Reply> {
    let (port, full, host, origin) = (
        panel.port,
        format!("{}{path}", panel.base),
        panel.host(),
        panel.origin(),
    );
    std::thread::spawn(move || {
        http(
            port,
            "POST",
            &full,
            &[
                ("Host", &host),
                ("Origin", &origin),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            &form,
        )
    })
}

fn mode_changes(lab: &Lab, name: &str) -> Vec<shellgate::audit::event::ModeChange> {
    lab.events(name)
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::ModeChanged(m) => Some(m),
            _ => None,
        })
        .collect()
}

/// The panel's Full access button asks on the terminal the panel was started from, and only the
/// word typed there selects it, for the time chosen; a click alone, or a panel started without
/// a person, changes nothing.
#[test]
fn full_access_from_the_panel_is_confirmed_at_its_terminal() {
    let lab = Lab::new();
    write_denials(&lab, "f");
    let mut panel = PanelRun::start_as_person(&lab, &["--session", "f"]);
    assert!(
        panel
            .get("/s/f/")
            .expect_ok()
            .contains("id=\"full-access\"")
    );
    let csrf = panel.csrf("f");
    // Clicks the button for 10 minutes and answers the question on the panel's terminal.
    let mut click_and_answer = |answer: &str| {
        let reply = post_in_background(
            &panel,
            "/s/f/full-access",
            format!("csrf={csrf}&minutes=10"),
        );
        panel.terminal().exp_string("for 10m").unwrap();
        // The prompt's own line, the last thing before it reads the answer.
        panel
            .terminal()
            .exp_string("anything else rejects")
            .unwrap();
        panel.terminal().send_line(answer).unwrap();
        reply.join().unwrap().status
    };
    assert_eq!(click_and_answer("nope"), 403);
    assert!(
        mode_changes(&lab, "f").is_empty(),
        "a click alone changed the mode"
    );
    assert_eq!(click_and_answer("full"), 303);
    let changes = mode_changes(&lab, "f");
    assert_eq!(changes.len(), 1, "{changes:?}");
    let change = &changes[0];
    assert_eq!((change.to.as_str(), change.confirmed), ("full", true));
    assert_eq!(change.by, Actor::Person);
    let left = change.expires.expect("an end").unix_ms()
        - shellgate::audit::event::Timestamp::now().unix_ms();
    assert!((590_000..=600_000).contains(&left), "ends in {left} ms");
    // Started without a person: no button, and the action is refused.
    let plain = PanelRun::start(&lab, &["--session", "f"]);
    assert!(
        !plain
            .get("/s/f/")
            .expect_ok()
            .contains("id=\"full-access\"")
    );
    let csrf = plain.csrf("f");
    let reply = post_in_background(
        &plain,
        "/s/f/full-access",
        format!("csrf={csrf}&minutes=10"),
    );
    assert_eq!(reply.join().unwrap().status, 403);
    assert_eq!(mode_changes(&lab, "f").len(), 1);
}
