//! What a request path means. Pure: the server asks, this module answers.
//!
//! Every path starts with the per-run token; the rest names a page, an asset, the live stream or an
//! action of one session:
//!
//! | method | path                                   | what                                     |
//! |--------|----------------------------------------|------------------------------------------|
//! | GET    | `/T/`                                  | the default session's page               |
//! | GET    | `/T/assets/panel.css`, `panel.js`      | the page's style and script              |
//! | GET    | `/T/s/ID/`                             | session ID's page                        |
//! | GET    | `/T/s/ID/live`                         | the part of the page that changes (HTML) |
//! | GET    | `/T/s/ID/events`                       | server-sent events: "the log changed"    |
//! | GET    | `/T/s/ID/chain/REQ`                    | every event of one line                  |
//! | POST   | `/T/s/ID/review`                       | turn review on or off                    |
//! | POST   | `/T/s/ID/approve`                      | approve a denial once                    |
//!
//! Ids are validated by [`SessionId::parse`] and [`RequestId::parse`]: a path can never name a
//! file outside the sessions directory.

use super::security::Secret;
use crate::audit::{RequestId, SessionId};

/// A static file of the page, embedded in the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asset {
    Css,
    Script,
}

/// What a request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Home,
    Asset(Asset),
    Page(SessionId),
    Live(SessionId),
    Events(SessionId),
    Chain(SessionId, RequestId),
    Review(SessionId),
    Approve(SessionId),
    /// Full access for a time, confirmed on the panel's own terminal.
    FullAccess(SessionId),
}

impl Route {
    /// The session the route is about, if any.
    pub fn session(&self) -> Option<&SessionId> {
        match self {
            Route::Home | Route::Asset(_) => None,
            Route::Page(id)
            | Route::Live(id)
            | Route::Events(id)
            | Route::Chain(id, _)
            | Route::Review(id)
            | Route::Approve(id)
            | Route::FullAccess(id) => Some(id),
        }
    }

    /// Actions change the session; they are POSTs, everything else is a GET.
    pub fn is_action(&self) -> bool {
        matches!(
            self,
            Route::Review(_) | Route::Approve(_) | Route::FullAccess(_)
        )
    }
}

/// Why a path has no route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteError {
    /// The path does not start with the token (403).
    Token,
    /// Nothing here (404).
    NotFound,
    /// The route exists for another method (405), which the `Allow` header names.
    Method { allow: &'static str },
}

/// The method of a request, as far as routing cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Other,
}

/// Maps a method and a path (without the query) to a route.
pub fn route(method: Method, path: &str, token: &Secret) -> Result<Route, RouteError> {
    let rest = path.strip_prefix('/').ok_or(RouteError::Token)?;
    let (first, rest) = rest.split_once('/').unwrap_or((rest, ""));
    if !token.matches(first) {
        return Err(RouteError::Token);
    }
    let route = route_after_token(rest).ok_or(RouteError::NotFound)?;
    let wanted = if route.is_action() {
        Method::Post
    } else {
        Method::Get
    };
    if method != wanted {
        let allow = if route.is_action() { "POST" } else { "GET" };
        return Err(RouteError::Method { allow });
    }
    Ok(route)
}

fn route_after_token(rest: &str) -> Option<Route> {
    let segments: Vec<&str> = rest.split('/').collect();
    match segments.as_slice() {
        [] | [""] => Some(Route::Home),
        ["assets", "panel.css"] => Some(Route::Asset(Asset::Css)),
        ["assets", "panel.js"] => Some(Route::Asset(Asset::Script)),
        ["s", id] | ["s", id, ""] => Some(Route::Page(session(id)?)),
        ["s", id, "live"] => Some(Route::Live(session(id)?)),
        ["s", id, "events"] => Some(Route::Events(session(id)?)),
        ["s", id, "chain", request] => {
            Some(Route::Chain(session(id)?, RequestId::parse(request).ok()?))
        }
        ["s", id, "review"] => Some(Route::Review(session(id)?)),
        ["s", id, "approve"] => Some(Route::Approve(session(id)?)),
        ["s", id, "full-access"] => Some(Route::FullAccess(session(id)?)),
        _ => None,
    }
}

fn session(raw: &str) -> Option<SessionId> {
    SessionId::parse(raw).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token() -> Secret {
        Secret::generate().unwrap()
    }

    #[test]
    fn every_route_needs_the_token() {
        let token = token();
        let t = token.as_str();
        assert_eq!(
            route(Method::Get, &format!("/{t}/"), &token),
            Ok(Route::Home)
        );
        assert_eq!(
            route(Method::Get, &format!("/{t}"), &token),
            Ok(Route::Home)
        );
        for path in ["/", "/s/a/", "/assets/panel.css", "/wrong/", "", "x"] {
            assert_eq!(
                route(Method::Get, path, &token),
                Err(RouteError::Token),
                "{path}"
            );
        }
        let other = self::token();
        assert_eq!(
            route(Method::Get, &format!("/{}/", other.as_str()), &token),
            Err(RouteError::Token)
        );
    }

    #[test]
    fn session_routes_parse_their_ids() {
        let token = token();
        let t = token.as_str();
        let id = SessionId::parse("abc-1").unwrap();
        let get = |p: &str| route(Method::Get, &format!("/{t}/{p}"), &token);
        assert_eq!(get("s/abc-1/"), Ok(Route::Page(id.clone())));
        assert_eq!(get("s/abc-1/live"), Ok(Route::Live(id.clone())));
        assert_eq!(get("s/abc-1/events"), Ok(Route::Events(id.clone())));
        assert_eq!(get("assets/panel.js"), Ok(Route::Asset(Asset::Script)));
        let request = RequestId::parse("r0123456789abcdef").unwrap();
        assert_eq!(
            get("s/abc-1/chain/r0123456789abcdef"),
            Ok(Route::Chain(id, request))
        );
        for bad in [
            "s/../x/",
            "s/..%2f/",
            "s/a%20b/",
            "s/abc/chain/../x",
            "s/abc/nope",
            "assets/x",
        ] {
            assert_eq!(get(bad), Err(RouteError::NotFound), "{bad}");
        }
    }

    #[test]
    fn actions_are_posts_only_and_pages_gets_only() {
        let token = token();
        let t = token.as_str();
        let review = format!("/{t}/s/a/review");
        assert_eq!(
            route(Method::Get, &review, &token),
            Err(RouteError::Method { allow: "POST" })
        );
        assert_eq!(
            route(Method::Post, &review, &token),
            Ok(Route::Review(SessionId::parse("a").unwrap()))
        );
        assert_eq!(
            route(Method::Post, &format!("/{t}/s/a/"), &token),
            Err(RouteError::Method { allow: "GET" })
        );
        assert_eq!(
            route(Method::Other, &format!("/{t}/s/a/approve"), &token),
            Err(RouteError::Method { allow: "POST" })
        );
    }
}
