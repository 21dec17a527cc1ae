//! Just enough WebDriver to drive Debian's headless Chromium through `chromedriver`: open a page,
//! find elements, read their text, press keys, switch the color scheme and take screenshots.
//!
//! Chromium runs with a fresh profile (`--user-data-dir`) and a home of its own (HOME and the XDG
//! dirs, so nothing lands in the real `~/.config/chromium` or `~/.pki`), the flags that keep it
//! from calling home, and a proxy that goes nowhere (127.0.0.1:9) for anything that is not
//! loopback: should some feature still try to reach the network, it reaches nothing. Loopback
//! (the panel) is never proxied.

use super::{PATIENCE, Reply, http};
use base64::Engine as _;
use serde_json::{Value, json};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The W3C key of an element reference.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// WebDriver's code for the Enter key.
pub const ENTER: &str = "\u{E007}";

/// A headless Chromium, driven by its own chromedriver; both stop when dropped.
pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
    _profile: tempfile::TempDir,
}

fn free_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// Fails the test, saying how to get the browser, when it is not installed.
pub fn require_chromium() {
    for program in [CHROMIUM, CHROMEDRIVER] {
        assert!(
            Path::new(program).exists(),
            "{program} is missing: the browser test needs Debian's Chromium. `.ci/run` installs \
             it; by hand: apt-get install -y chromium chromium-driver"
        );
    }
}

impl Browser {
    pub fn start(log_dir: &Path) -> Browser {
        require_chromium();
        let port = free_port();
        let profile = crate::support::scratch_dir();
        let home = crate::support::Home::at(profile.path().join("home"));
        let driver = crate::support::isolate(&mut Command::new(CHROMEDRIVER), &home)
            .arg(format!("--port={port}"))
            .arg(format!(
                "--log-path={}",
                log_dir.join("chromedriver.log").display()
            ))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
            _profile: profile,
        };
        browser.wait_until_ready();
        browser.session = browser.new_session();
        browser
    }

    fn wait_until_ready(&self) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let ready = std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok()
                && self.raw("GET", "/status", None).status == 200;
            if ready {
                return;
            }
            assert!(Instant::now() < deadline, "chromedriver never became ready");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn new_session(&self) -> String {
        let profile = self._profile.path().join("profile").display().to_string();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-domain-reliability",
            "--disable-client-side-phishing-detection",
            "--disable-features=MediaRouter,OptimizationHints,Translate",
            "--proxy-server=http://127.0.0.1:9",
            "--window-size=1280,1700",
            "--hide-scrollbars",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("--user-data-dir={profile}")])
        .collect::<Vec<_>>();
        let capabilities = json!({
            "capabilities": { "alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": { "binary": CHROMIUM, "args": args }
            }}
        });
        let value = self.call("POST", "/session", Some(capabilities));
        value["sessionId"]
            .as_str()
            .expect("a WebDriver session id")
            .to_string()
    }

    fn raw(&self, method: &str, path: &str, body: Option<Value>) -> Reply {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let host = format!("127.0.0.1:{}", self.port);
        let mut headers = vec![("Host", host.as_str())];
        if method == "POST" {
            headers.push(("Content-Type", "application/json"));
        }
        http(self.port, method, path, &headers, &body)
    }

    /// One WebDriver command; its `value`, or the test fails with WebDriver's error.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let reply = self.raw(method, path, body);
        let parsed: Value = serde_json::from_str(&reply.body)
            .unwrap_or_else(|err| panic!("chromedriver answered {reply:?}: {err}"));
        assert_eq!(reply.status, 200, "{method} {path}: {parsed}");
        parsed["value"].clone()
    }

    fn in_session(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    pub fn goto(&self, url: &str) {
        self.in_session("POST", "/url", Some(json!({ "url": url })));
    }

    pub fn find_all(&self, css: &str) -> Vec<String> {
        let found = self.in_session(
            "POST",
            "/elements",
            Some(json!({ "using": "css selector", "value": css })),
        );
        found
            .as_array()
            .map(|elements| {
                elements
                    .iter()
                    .filter_map(|e| e[ELEMENT_KEY].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn find(&self, css: &str) -> Option<String> {
        self.find_all(css).into_iter().next()
    }

    /// The text of the first element matching `css`, or "" when there is none. The live page
    /// re-renders as events arrive, so an element found a moment ago may be gone before its text
    /// is read (WebDriver's "stale element reference"): it is found again, a bounded number of
    /// times; any other error fails the test.
    pub fn text_of(&self, css: &str) -> String {
        for _ in 0..50 {
            let Some(element) = self.find(css) else {
                return String::new();
            };
            let path = format!("/session/{}/element/{element}/text", self.session);
            let reply = self.raw("GET", &path, None);
            if reply.status == 200 {
                let parsed: Value = serde_json::from_str(&reply.body)
                    .unwrap_or_else(|err| panic!("chromedriver answered {reply:?}: {err}"));
                return parsed["value"].as_str().unwrap_or_default().to_string();
            }
            assert!(
                reply.body.contains("stale element reference"),
                "GET {path}: {reply:?}"
            );
        }
        panic!("the element {css} went stale 50 times in a row")
    }

    /// Types `keys` into `element` (it receives the focus first), as a keyboard would.
    pub fn press(&self, element: &str, keys: &str) {
        self.in_session(
            "POST",
            &format!("/element/{element}/value"),
            Some(json!({ "text": keys })),
        );
    }

    /// Clicks `element` as a pointer would.
    pub fn click(&self, element: &str) {
        self.in_session(
            "POST",
            &format!("/element/{element}/click"),
            Some(json!({})),
        );
    }

    /// The id of the element that has the keyboard focus.
    pub fn focused(&self) -> String {
        let active = self.in_session("GET", "/element/active", None);
        active[ELEMENT_KEY].as_str().unwrap_or_default().to_string()
    }

    /// The page as the browser has it now (after the script's changes).
    pub fn source(&self) -> String {
        self.in_session("GET", "/source", None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Emulates the system's color-scheme preference (`light` or `dark`).
    pub fn color_scheme(&self, scheme: &str) {
        self.in_session(
            "POST",
            "/goog/cdp/execute",
            Some(json!({
                "cmd": "Emulation.setEmulatedMedia",
                "params": { "features": [{ "name": "prefers-color-scheme", "value": scheme }] }
            })),
        );
    }

    /// Saves a PNG of the window.
    pub fn screenshot(&self, path: &Path) {
        let encoded = self.in_session("GET", "/screenshot", None);
        let png = base64::engine::general_purpose::STANDARD
            .decode(encoded.as_str().expect("a base64 screenshot"))
            .expect("valid base64");
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        std::fs::write(path, png).expect("screenshot saved");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.raw("DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
