//! HTTP/1.1 on 127.0.0.1 (hyper on a current-thread tokio runtime), and the dispatch from a
//! request to the module that answers it.
//!
//! Order of business for every request: the Host/Origin/fetch-metadata checks, then the token in the
//! path, then the route and its method, then whether the session is in the panel's scope; only
//! then is anything read. Reading and folding a log is blocking file I/O, so it runs on tokio's
//! blocking pool and the event streams keep flowing meanwhile.

use super::actions::{Action, Form, MAX_FORM_BYTES, perform};
use super::live::EventStream;
use super::routes::{self, Asset, Method, Route, RouteError};
use super::security::{Refusal, RequestFacts, check_action, check_request};
use super::snapshot::{self, default_session, in_scope};
use super::{Panel, view};
use crate::audit::SessionId;
use crate::error::{Code, Error, Result};
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

const CSS: &str = include_str!("assets/panel.css");
const SCRIPT: &str = include_str!("assets/panel.js");

/// The page may load its own style and script and talk to its own server; nothing else, and no
/// inline script at all (so text that escaped escaping still could not run).
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; \
     base-uri 'none'";

/// A slow client gets this long to send its request head.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// A response body: a whole text, or the endless event stream.
pub enum PanelBody {
    Full(Option<Bytes>),
    Events(Box<EventStream>),
}

impl Body for PanelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            PanelBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            PanelBody::Events(stream) => stream.poll_chunk(cx).map(|b| Some(Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, PanelBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            PanelBody::Full(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            PanelBody::Full(None) => SizeHint::with_exact(0),
            PanelBody::Events(_) => SizeHint::default(),
        }
    }
}

/// Serves `panel` on `listener` until the process is stopped.
pub fn serve(panel: Arc<Panel>, listener: std::net::TcpListener) -> Result<()> {
    let failed = |what: &str, err: std::io::Error| Error::internal(format!("panel: {what}: {err}"));
    listener
        .set_nonblocking(true)
        .map_err(|err| failed("cannot configure the socket", err))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|err| failed("cannot start the runtime", err))?;
    runtime.block_on(accept_loop(panel, listener))
}

async fn accept_loop(panel: Arc<Panel>, listener: std::net::TcpListener) -> Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|err| Error::internal(format!("panel: cannot listen: {err}")))?;
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                // Out of descriptors and the like: wait a moment rather than spin.
                eprintln!("shellgate panel: cannot accept a connection: {err}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        // Bound to 127.0.0.1, so every peer is local; checked anyway, as the panel's promise.
        if !peer.ip().is_loopback() {
            continue;
        }
        let panel = Arc::clone(&panel);
        tokio::spawn(async move {
            let service = service_fn(move |request| handle(Arc::clone(&panel), request));
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            // A client that hangs up mid-request is not the panel's error: nothing to report.
            let _ = connection.await;
        });
    }
}

async fn handle(
    panel: Arc<Panel>,
    request: Request<Incoming>,
) -> std::result::Result<Response<PanelBody>, Infallible> {
    let mut response = answer(panel, request).await;
    harden(&mut response);
    Ok(response)
}

/// A header's value, when it is present once and visible ASCII.
fn header_value<'a>(request: &'a Request<Incoming>, name: &HeaderName) -> Option<&'a str> {
    let mut values = request.headers().get_all(name).iter();
    let first = values.next()?;
    if values.next().is_some() {
        // Two Hosts or two Origins: ambiguous, so it matches nothing.
        return Some("");
    }
    first.to_str().ok()
}

fn method(request: &Request<Incoming>) -> Method {
    match *request.method() {
        hyper::Method::GET => Method::Get,
        hyper::Method::POST => Method::Post,
        _ => Method::Other,
    }
}

async fn answer(panel: Arc<Panel>, request: Request<Incoming>) -> Response<PanelBody> {
    let fetch = |name: &'static str| HeaderName::from_static(name);
    let (site, mode, dest) = (
        fetch("sec-fetch-site"),
        fetch("sec-fetch-mode"),
        fetch("sec-fetch-dest"),
    );
    let facts = RequestFacts {
        host: header_value(&request, &header::HOST),
        target_authority: request.uri().authority().map(|a| a.as_str()),
        origin: header_value(&request, &header::ORIGIN),
        sec_fetch_site: header_value(&request, &site),
        sec_fetch_mode: header_value(&request, &mode),
        sec_fetch_dest: header_value(&request, &dest),
        is_get: request.method() == hyper::Method::GET,
    };
    if let Err(refusal) = check_request(&panel.loopback, &facts) {
        return forbidden(refusal);
    }
    let route = match routes::route(
        method(&request),
        request.uri().path(),
        &panel.secrets.url_token,
    ) {
        Ok(route) => {
            // The browser is in with the token: the redirect page that carried it goes.
            panel.forget_launcher();
            route
        }
        Err(RouteError::Token) => return forbidden(Refusal::Token),
        Err(RouteError::NotFound) => return text(StatusCode::NOT_FOUND, "not found"),
        Err(RouteError::Method { allow }) => return method_not_allowed(allow),
    };
    if let Some(id) = route.session().cloned() {
        let known = blocking(&panel, move |p| {
            Ok(match in_scope(p, &id)? {
                true => None,
                false => Some(text(
                    StatusCode::NOT_FOUND,
                    "no such session in this panel's scope",
                )),
            })
        })
        .await;
        match known {
            Ok(None) => {}
            Ok(Some(response)) | Err(response) => return response,
        }
    }
    dispatch(panel, request, route).await
}

async fn dispatch(
    panel: Arc<Panel>,
    request: Request<Incoming>,
    route: Route,
) -> Response<PanelBody> {
    let answered = match route {
        Route::Home => blocking(&panel, home).await,
        Route::Asset(asset) => Ok(asset_response(asset)),
        Route::Page(id) => {
            blocking(&panel, move |p| {
                Ok(html(view::page(p, &snapshot::load(p, &id)?)))
            })
            .await
        }
        Route::Live(id) => {
            blocking(&panel, move |p| {
                Ok(html(view::live(p, &snapshot::load(p, &id)?)))
            })
            .await
        }
        Route::Events(id) => Ok(events(&panel, &id)),
        Route::Chain(id, line) => {
            blocking(&panel, move |p| {
                let events = snapshot::chain(p, &id, &line)?;
                Ok(html(view::chain_page(p, &id, &line, &events)))
            })
            .await
        }
        Route::Review(ref id) | Route::Approve(ref id) | Route::FullAccess(ref id) => {
            let id = id.clone();
            act(panel, request, route, id).await
        }
    };
    answered.unwrap_or_else(|response| response)
}

/// Runs `work` on the blocking pool; its error becomes the error response.
async fn blocking<T, F>(panel: &Arc<Panel>, work: F) -> std::result::Result<T, Response<PanelBody>>
where
    T: Send + 'static,
    F: FnOnce(&Panel) -> Result<T> + Send + 'static,
{
    let panel = Arc::clone(panel);
    match tokio::task::spawn_blocking(move || work(&panel)).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(error_response(&err)),
        Err(_) => Err(text(StatusCode::INTERNAL_SERVER_ERROR, "internal error")),
    }
}

fn home(panel: &Panel) -> Result<Response<PanelBody>> {
    match default_session(panel)? {
        Some(id) => Ok(redirect(&session_page(panel, &id))),
        None => {
            let mut response = html(view::no_session_page(panel));
            response
                .headers_mut()
                .insert(header::REFRESH, HeaderValue::from_static("3"));
            Ok(response)
        }
    }
}

fn session_page(panel: &Panel, id: &SessionId) -> String {
    format!("{}/s/{}/", panel.base(), id.as_str())
}

fn events(panel: &Panel, id: &SessionId) -> Response<PanelBody> {
    let watched = vec![
        panel.paths.session_log(id),
        panel.paths.sessions_dir(),
        panel.paths.settings_file(),
    ];
    let mut response = Response::new(PanelBody::Events(Box::new(EventStream::new(watched))));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    response
}

/// An action: the form is read (at most [`MAX_FORM_BYTES`]), its Origin and CSRF token checked,
/// then the same function as the CLI's runs; success goes back to the session's page.
async fn act(
    panel: Arc<Panel>,
    request: Request<Incoming>,
    route: Route,
    id: SessionId,
) -> std::result::Result<Response<PanelBody>, Response<PanelBody>> {
    let origin = header_value(&request, &header::ORIGIN).map(str::to_owned);
    let body = Limited::new(request.into_body(), MAX_FORM_BYTES)
        .collect()
        .await
        .map_err(|_| text(StatusCode::PAYLOAD_TOO_LARGE, "the form is too large"))?
        .to_bytes();
    let form = Form::parse(&body);
    check_action(
        &panel.loopback,
        &panel.secrets,
        origin.as_deref(),
        form.csrf(),
    )
    .map_err(forbidden)?;
    let action = match route {
        Route::Review(_) => Action::review_from(&form),
        Route::FullAccess(_) => Action::full_access_from(&form),
        _ => Action::approve_from(&form),
    }
    .map_err(|err| text(StatusCode::BAD_REQUEST, &err.reason))?;
    blocking(&panel, move |p| {
        perform(p, &id, action)?;
        Ok(redirect(&session_page(p, &id)))
    })
    .await
}

fn asset_response(asset: Asset) -> Response<PanelBody> {
    let (body, content_type) = match asset {
        Asset::Css => (CSS, "text/css; charset=utf-8"),
        Asset::Script => (SCRIPT, "text/javascript; charset=utf-8"),
    };
    with_body(
        StatusCode::OK,
        content_type,
        Bytes::from_static(body.as_bytes()),
    )
}

fn with_body(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<PanelBody> {
    let mut response = Response::new(PanelBody::Full(Some(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn html(page: String) -> Response<PanelBody> {
    with_body(
        StatusCode::OK,
        "text/html; charset=utf-8",
        Bytes::from(page),
    )
}

fn text(status: StatusCode, message: &str) -> Response<PanelBody> {
    with_body(
        status,
        "text/plain; charset=utf-8",
        Bytes::from(format!("{message}\n")),
    )
}

fn forbidden(refusal: Refusal) -> Response<PanelBody> {
    text(StatusCode::FORBIDDEN, refusal.message())
}

fn method_not_allowed(allow: &'static str) -> Response<PanelBody> {
    let mut response = text(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!("method not allowed: this path takes {allow} only"),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

/// 303 See Other: after an action, the browser GETs the page (a reload never re-posts).
fn redirect(location: &str) -> Response<PanelBody> {
    match HeaderValue::from_str(location) {
        Ok(value) => {
            let mut response = text(StatusCode::SEE_OTHER, "done");
            response.headers_mut().insert(header::LOCATION, value);
            response
        }
        Err(_) => text(StatusCode::INTERNAL_SERVER_ERROR, "internal error"),
    }
}

/// A shellgate error as an HTTP answer: the CLI's code and reason, as text.
fn error_response(err: &Error) -> Response<PanelBody> {
    let status = match err.code {
        Code::TerminalRequired | Code::ApprovalRejected | Code::ApprovalUnavailable => {
            StatusCode::FORBIDDEN
        }
        Code::Usage => StatusCode::CONFLICT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    text(status, &format!("{}: {}", err.code, err.reason))
}

/// Headers every answer carries: nothing is cached, sniffed, framed, or sent on as a referrer to
/// anyone else.
fn harden(response: &mut Response<PanelBody>) {
    let headers = response.headers_mut();
    let fixed: [(HeaderName, &'static str); 7] = [
        (header::CACHE_CONTROL, "no-store"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "same-origin"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (
            HeaderName::from_static("cross-origin-opener-policy"),
            "same-origin",
        ),
        (
            HeaderName::from_static("cross-origin-resource-policy"),
            "same-origin",
        ),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
}
