//! The panel's secrets and the checks every request passes before anything else looks at it.
//!
//! The page can turn review off and approve denied lines, so a request must prove three things:
//!
//! 1. **It comes from the person who started the panel.** The URL carries a random per-run token
//!    (256 bits); only the terminal that started `shellgate panel` saw it. A request whose path does
//!    not start with it is refused with 403.
//! 2. **It was addressed to this loopback server, by name.** `Host` must be exactly
//!    `127.0.0.1:PORT`. A DNS-rebinding page (a hostile name that resolves to 127.0.0.1) sends its
//!    own name in `Host` and is refused, before the token is even compared.
//! 3. **An action comes from the panel's own page.** Actions are POSTs only; they carry a second
//!    per-run secret (the CSRF token, found only inside the page, never in a URL) and an `Origin`
//!    that is exactly `http://127.0.0.1:PORT`. `Origin` on any request, and `Sec-Fetch-Site` when a
//!    browser sends it, must say the request is same-origin (or typed by the person). The one
//!    exception is a top-level GET navigation to a page: the `--open` launcher is a `file://` page
//!    (an opaque origin, so "cross-site"), and a navigation can neither act (GET never does) nor
//!    let the page that started it read the answer; it still needs the token.
//!
//! Everything here is pure: the server hands in the header values, these functions decide.

use crate::error::{Error, Result};
use std::fmt::Write as _;

/// Bytes of randomness in each per-run secret.
pub const SECRET_BYTES: usize = 32;

/// The form field (and only place) the CSRF token travels in.
pub const CSRF_FIELD: &str = "csrf";

/// A per-run secret, as lowercase hex (so it is safe in a URL path and a form field unencoded).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// A fresh secret from the operating system's random source.
    pub fn generate() -> Result<Secret> {
        let mut bytes = [0u8; SECRET_BYTES];
        getrandom::getrandom(&mut bytes).map_err(|err| {
            Error::internal(format!("no randomness for the panel's token: {err}"))
        })?;
        Ok(Secret::from_bytes(&bytes))
    }

    fn from_bytes(bytes: &[u8]) -> Secret {
        let mut hex = String::with_capacity(bytes.len() * 2);
        for byte in bytes {
            // Writing to a String cannot fail.
            let _ = write!(hex, "{byte:02x}");
        }
        Secret(hex)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Compares in time independent of where the first difference is, so a local attacker cannot
    /// learn the token byte by byte from response times.
    pub fn matches(&self, candidate: &str) -> bool {
        let (ours, theirs) = (self.0.as_bytes(), candidate.as_bytes());
        if ours.len() != theirs.len() {
            return false;
        }
        let difference = ours
            .iter()
            .zip(theirs)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        difference == 0
    }
}

// Never print a secret by accident (a `{:?}` in an error message or a log).
impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// The two secrets of one panel run.
#[derive(Debug, Clone)]
pub struct Secrets {
    /// In every URL: proves the request comes from whoever was shown the URL.
    pub url_token: Secret,
    /// Only inside the page's forms: proves an action was sent by the page itself.
    pub csrf: Secret,
}

impl Secrets {
    pub fn generate() -> Result<Secrets> {
        Ok(Secrets {
            url_token: Secret::generate()?,
            csrf: Secret::generate()?,
        })
    }
}

/// The one address the panel answers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loopback {
    /// `127.0.0.1:PORT`: the only acceptable `Host`.
    authority: String,
    /// `http://127.0.0.1:PORT`: the only acceptable `Origin`.
    origin: String,
}

impl Loopback {
    pub fn new(port: u16) -> Loopback {
        let authority = format!("127.0.0.1:{port}");
        Loopback {
            origin: format!("http://{authority}"),
            authority,
        }
    }

    pub fn authority(&self) -> &str {
        &self.authority
    }

    pub fn origin(&self) -> &str {
        &self.origin
    }
}

/// Why a request was refused before routing. Each is answered with 403.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No `Host`, or not exactly the loopback address and port served.
    Host,
    /// The request target names another authority (`GET http://elsewhere/ HTTP/1.1`).
    Authority,
    /// An `Origin` other than the panel's own (a cross-site page, or a rebinding name).
    Origin,
    /// The browser says the request was started by another site.
    CrossSite,
    /// The path does not start with the per-run token.
    Token,
    /// An action without the page's CSRF token, or without the panel's own `Origin`.
    Csrf,
}

impl Refusal {
    /// The (deliberately short) text of the 403 answer.
    pub fn message(self) -> &'static str {
        match self {
            Refusal::Host => "forbidden: this panel answers only to its own loopback address",
            Refusal::Authority => "forbidden: the request names another server",
            Refusal::Origin => "forbidden: a request from another origin",
            Refusal::CrossSite => "forbidden: a cross-site request",
            Refusal::Token => {
                "forbidden: the URL lacks this panel's token (see the terminal \
                               that started `shellgate panel`)"
            }
            Refusal::Csrf => {
                "forbidden: an action must come from the panel's own page \
                              (reload it and try again)"
            }
        }
    }
}

/// The header values the checks look at; `None` for an absent header, and for a value that is
/// not visible ASCII (which can never match).
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestFacts<'a> {
    pub host: Option<&'a str>,
    /// The authority of an absolute-form request target, if the client sent one.
    pub target_authority: Option<&'a str>,
    pub origin: Option<&'a str>,
    pub sec_fetch_site: Option<&'a str>,
    pub sec_fetch_mode: Option<&'a str>,
    pub sec_fetch_dest: Option<&'a str>,
    pub is_get: bool,
}

impl RequestFacts<'_> {
    /// A top-level page load: a GET whose answer replaces the tab's document.
    fn is_page_navigation(&self) -> bool {
        self.is_get
            && self.sec_fetch_mode == Some("navigate")
            && self.sec_fetch_dest == Some("document")
    }
}

/// Host, Origin and fetch metadata: the checks every request passes, whatever its method or path.
pub fn check_request(
    loopback: &Loopback,
    facts: &RequestFacts<'_>,
) -> std::result::Result<(), Refusal> {
    if facts.host != Some(loopback.authority()) {
        return Err(Refusal::Host);
    }
    if facts
        .target_authority
        .is_some_and(|authority| authority != loopback.authority())
    {
        return Err(Refusal::Authority);
    }
    if facts
        .origin
        .is_some_and(|origin| origin != loopback.origin())
    {
        return Err(Refusal::Origin);
    }
    // `none` is a navigation the person typed or opened from outside a page; `same-origin` is
    // the panel's own page. `same-site` would include other ports of 127.0.0.1: not ours.
    let own = |site: &str| site == "same-origin" || site == "none";
    if facts
        .sec_fetch_site
        .is_some_and(|site| !own(site) && !facts.is_page_navigation())
    {
        return Err(Refusal::CrossSite);
    }
    Ok(())
}

/// The extra checks of an action (a POST that changes the session): the panel's own `Origin`
/// must be present (browsers send it on every POST) and the form must carry the CSRF token.
pub fn check_action(
    loopback: &Loopback,
    secrets: &Secrets,
    origin: Option<&str>,
    csrf_field: Option<&str>,
) -> std::result::Result<(), Refusal> {
    if origin != Some(loopback.origin()) {
        return Err(Refusal::Csrf);
    }
    match csrf_field {
        Some(candidate) if secrets.csrf.matches(candidate) => Ok(()),
        _ => Err(Refusal::Csrf),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(host: &'a str) -> RequestFacts<'a> {
        RequestFacts {
            host: Some(host),
            ..RequestFacts::default()
        }
    }

    #[test]
    fn secrets_are_long_hex_and_differ() {
        let (a, b) = (Secret::generate().unwrap(), Secret::generate().unwrap());
        assert_eq!(a.as_str().len(), SECRET_BYTES * 2);
        assert!(a.as_str().bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert!(!format!("{a:?}").contains(a.as_str()));
    }

    #[test]
    fn secret_matches_only_itself() {
        let secret = Secret::from_bytes(&[0xab; 4]);
        assert!(secret.matches("abababab"));
        assert!(!secret.matches("abababac"));
        assert!(!secret.matches("ababab"));
        assert!(!secret.matches("abababab0"));
        assert!(!secret.matches(""));
    }

    #[test]
    fn host_must_be_the_exact_loopback_authority() {
        let loopback = Loopback::new(8123);
        assert_eq!(check_request(&loopback, &facts("127.0.0.1:8123")), Ok(()));
        for bad in [
            "localhost:8123",
            "127.0.0.1",
            "127.0.0.1:8124",
            "evil.example:8123",
            "[::1]:8123",
        ] {
            assert_eq!(
                check_request(&loopback, &facts(bad)),
                Err(Refusal::Host),
                "{bad}"
            );
        }
        assert_eq!(
            check_request(&loopback, &RequestFacts::default()),
            Err(Refusal::Host)
        );
    }

    #[test]
    fn origin_and_fetch_site_must_be_our_own() {
        let loopback = Loopback::new(8123);
        let with = |origin: Option<&'static str>, site: Option<&'static str>| RequestFacts {
            origin,
            sec_fetch_site: site,
            ..facts("127.0.0.1:8123")
        };
        assert_eq!(
            check_request(
                &loopback,
                &with(Some("http://127.0.0.1:8123"), Some("same-origin"))
            ),
            Ok(())
        );
        assert_eq!(check_request(&loopback, &with(None, Some("none"))), Ok(()));
        assert_eq!(
            check_request(&loopback, &with(Some("http://evil.example"), None)),
            Err(Refusal::Origin)
        );
        assert_eq!(
            check_request(&loopback, &with(Some("null"), None)),
            Err(Refusal::Origin)
        );
        assert_eq!(
            check_request(&loopback, &with(None, Some("cross-site"))),
            Err(Refusal::CrossSite)
        );
        assert_eq!(
            check_request(&loopback, &with(None, Some("same-site"))),
            Err(Refusal::CrossSite)
        );
        let absolute = RequestFacts {
            target_authority: Some("evil.example"),
            ..facts("127.0.0.1:8123")
        };
        assert_eq!(check_request(&loopback, &absolute), Err(Refusal::Authority));
    }

    #[test]
    fn actions_need_origin_and_csrf_token() {
        let loopback = Loopback::new(8123);
        let secrets = Secrets::generate().unwrap();
        let csrf = secrets.csrf.as_str().to_owned();
        let origin = Some("http://127.0.0.1:8123");
        assert_eq!(
            check_action(&loopback, &secrets, origin, Some(&csrf)),
            Ok(())
        );
        assert_eq!(
            check_action(&loopback, &secrets, None, Some(&csrf)),
            Err(Refusal::Csrf)
        );
        assert_eq!(
            check_action(&loopback, &secrets, origin, None),
            Err(Refusal::Csrf)
        );
        let url_token = secrets.url_token.as_str().to_owned();
        assert_eq!(
            check_action(&loopback, &secrets, origin, Some(&url_token)),
            Err(Refusal::Csrf),
            "the URL token is not the CSRF token"
        );
    }
}
