//! The HTTP side of a review: one current-thread tokio runtime, one reqwest client, one deadline.
//!
//! - **One deadline** bounds the whole review — connecting, every request, every response body and
//!   the tool rounds in between — at `timeout_ms`. A server that accepts and never answers, answers
//!   slowly, or sends a body that never ends all end in [`FailureKind::Timeout`].
//! - **Bodies are capped** while they are read ([`MAX_RESPONSE_BYTES`]); a larger answer is a
//!   failure, never an allocation of whatever the server sends.
//! - **Redirects are never followed**: a redirect would send the prompt to another address.
//! - **No retries**: a failure is reported at once and the fallback policy decides.

use super::failure::{FailureKind, ReviewFailure};
use super::tools::Workspace;
use super::transcript::{ToolTrace, Transcript};
use super::verdict::Verdict;
use super::{Reply, ToolCall, anthropic, openai};
use crate::config::{Provider, ReviewerConfig};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use std::time::{Duration, Instant};

/// The largest successful response body read.
pub const MAX_RESPONSE_BYTES: usize = 1 << 20;
/// The most of an error body read for its message.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;
/// Tool calls executed per round; further calls in the same round are answered as skipped.
pub const MAX_CALLS_PER_ROUND: usize = 4;

/// The conversation in the provider's wire format.
enum Dialogue {
    OpenAi(openai::Dialogue),
    Anthropic(anthropic::Dialogue),
}

impl Dialogue {
    fn body(&self, tools_allowed: bool) -> Value {
        match self {
            Dialogue::OpenAi(d) => d.body(tools_allowed),
            Dialogue::Anthropic(d) => d.body(tools_allowed),
        }
    }

    fn read(&mut self, body: &[u8]) -> Result<Reply, ReviewFailure> {
        match self {
            Dialogue::OpenAi(d) => d.read(body),
            Dialogue::Anthropic(d) => d.read(body),
        }
    }

    fn add_results(&mut self, results: &[(ToolCall, String)]) {
        match self {
            Dialogue::OpenAi(d) => d.add_results(results),
            Dialogue::Anthropic(d) => d.add_results(results),
        }
    }
}

/// Where requests go and what they carry besides the body.
struct Endpoint {
    provider: Provider,
    url: String,
    headers: HeaderMap,
}

impl Endpoint {
    fn new(config: &ReviewerConfig) -> Result<Endpoint, ReviewFailure> {
        let base = config.base_url.trim_end_matches('/');
        let path = match config.provider {
            Provider::Openai => "chat/completions",
            Provider::Anthropic => "messages",
        };
        let url = format!("{base}/{path}");
        match reqwest::Url::parse(&url) {
            Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => {}
            _ => {
                return Err(ReviewFailure::new(
                    FailureKind::Config,
                    format!(
                        "base_url {:?} is not an http(s) URL",
                        super::failure::clean(&config.base_url)
                    ),
                ));
            }
        }
        Ok(Endpoint {
            provider: config.provider,
            url,
            headers: headers(config)?,
        })
    }
}

/// Authentication, the API version and the configured extra headers.
fn headers(config: &ReviewerConfig) -> Result<HeaderMap, ReviewFailure> {
    let mut map = HeaderMap::new();
    map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if config.provider == Provider::Anthropic {
        map.insert(
            "anthropic-version",
            HeaderValue::from_static(anthropic::API_VERSION),
        );
    }
    if let Some(key) = api_key(config)? {
        let (name, value) = match config.provider {
            Provider::Openai => (AUTHORIZATION, format!("Bearer {key}")),
            Provider::Anthropic => (HeaderName::from_static("x-api-key"), key),
        };
        let mut value = HeaderValue::from_str(&value).map_err(|_| {
            ReviewFailure::new(
                FailureKind::Config,
                "the API key contains characters a header cannot carry",
            )
        })?;
        value.set_sensitive(true);
        map.insert(name, value);
    }
    for (name, value) in &config.headers {
        let header_name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            ReviewFailure::new(
                FailureKind::Config,
                format!(
                    "headers: {:?} is not a valid header name",
                    super::failure::clean(name)
                ),
            )
        })?;
        let mut header_value = HeaderValue::from_str(value).map_err(|_| {
            ReviewFailure::new(
                FailureKind::Config,
                format!("headers: the value of {name} is not a valid header value"),
            )
        })?;
        header_value.set_sensitive(true);
        map.insert(header_name, header_value);
    }
    Ok(map)
}

/// The key from the variable `api_key_env` names; a named but missing variable is a failure.
fn api_key(config: &ReviewerConfig) -> Result<Option<String>, ReviewFailure> {
    let Some(variable) = config.api_key_env.as_deref() else {
        return Ok(None);
    };
    match crate::env::get()
        .var(variable)
        .and_then(std::ffi::OsStr::to_str)
    {
        Some(key) if !key.trim().is_empty() => Ok(Some(key.trim().to_owned())),
        _ => Err(ReviewFailure::new(
            FailureKind::Config,
            format!(
                "api_key_env names {:?}, but that environment variable is not set",
                super::failure::clean(variable)
            ),
        )),
    }
}

/// Runs the conversation: sends the prompt, runs requested tools, until a verdict or a failure,
/// all within `timeout_ms`. With a `transcript`, every round is recorded in it as it happens (so a
/// timeout leaves the rounds up to the one that did not finish).
pub fn converse(
    config: &ReviewerConfig,
    workspace: Option<&Workspace>,
    system: String,
    user: String,
    transcript: Option<&mut Transcript>,
) -> Result<Verdict, ReviewFailure> {
    let endpoint = Endpoint::new(config)?;
    let timeout = Duration::from_millis(config.timeout_ms);
    let dialogue = match config.provider {
        Provider::Openai => Dialogue::OpenAi(openai::Dialogue::new(config, system, user)),
        Provider::Anthropic => Dialogue::Anthropic(anthropic::Dialogue::new(config, system, user)),
    };
    let client = reqwest::Client::builder()
        .connect_timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("shellgate/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|err| ReviewFailure::new(FailureKind::Config, error_chain(&err)))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| {
            ReviewFailure::new(
                FailureKind::Transport,
                format!("cannot start the HTTP runtime: {err}"),
            )
        })?;
    let session = Session {
        client,
        endpoint,
        dialogue,
        workspace,
        max_rounds: config.max_tool_rounds,
        transcript,
    };
    let result = runtime.block_on(async {
        match tokio::time::timeout(timeout, session.run()).await {
            Ok(result) => result,
            Err(_) => Err(ReviewFailure::new(
                FailureKind::Timeout,
                format!(
                    "no complete answer within timeout_ms = {} ms",
                    config.timeout_ms
                ),
            )),
        }
    });
    // A resolver thread stuck in getaddrinfo must not keep the process waiting.
    runtime.shutdown_background();
    result
}

struct Session<'a> {
    client: reqwest::Client,
    endpoint: Endpoint,
    dialogue: Dialogue,
    workspace: Option<&'a Workspace>,
    max_rounds: u32,
    transcript: Option<&'a mut Transcript>,
}

impl Session<'_> {
    async fn run(mut self) -> Result<Verdict, ReviewFailure> {
        for round in 0..=self.max_rounds {
            let tools_allowed = round < self.max_rounds;
            let body = self.dialogue.body(tools_allowed);
            let bytes = self.post(&body).await?;
            match self.dialogue.read(&bytes)? {
                Reply::Verdict(verdict) => return Ok(verdict),
                Reply::Tools(calls) if tools_allowed => {
                    let results = self.run_tools(calls)?;
                    if let Some(transcript) = self.transcript.as_deref_mut() {
                        transcript.tools(results.iter().map(|(call, result)| ToolTrace {
                            call: call.request.describe(),
                            result: result.clone(),
                        }));
                    }
                    self.dialogue.add_results(&results);
                }
                Reply::Tools(_) => break,
            }
        }
        Err(ReviewFailure::new(
            FailureKind::ToolLimit,
            format!(
                "the reviewer still asked for tools after max_tool_rounds = {} round(s) instead of \
                 giving a verdict",
                self.max_rounds
            ),
        ))
    }

    /// Runs the first [`MAX_CALLS_PER_ROUND`] calls; every call gets a result (the API requires
    /// one per call). An escape attempt fails the review.
    fn run_tools(&self, calls: Vec<ToolCall>) -> Result<Vec<(ToolCall, String)>, ReviewFailure> {
        let mut results = Vec::with_capacity(calls.len());
        for (index, call) in calls.into_iter().enumerate() {
            let text = if index >= MAX_CALLS_PER_ROUND {
                format!("skipped: at most {MAX_CALLS_PER_ROUND} tool calls per round")
            } else {
                match self.workspace {
                    None => "the workspace cannot be read".to_owned(),
                    Some(workspace) => workspace.run(&call.request).map_err(|escape| {
                        ReviewFailure::new(
                            FailureKind::ToolEscape,
                            format!(
                                "the reviewer asked {} for {:?}, which is refused: {}; a reviewer \
                                 reaching outside the workspace is not trusted",
                                escape.tool.as_str(),
                                super::failure::clean(&escape.path),
                                escape.why
                            ),
                        )
                    })?,
                }
            };
            results.push((call, text));
        }
        Ok(results)
    }

    async fn post(&mut self, body: &Value) -> Result<Vec<u8>, ReviewFailure> {
        if let Some(transcript) = self.transcript.as_deref_mut() {
            transcript.sent(body);
        }
        let started = Instant::now();
        let payload = serde_json::to_vec(body).map_err(|err| {
            ReviewFailure::new(
                FailureKind::Config,
                format!("cannot encode the request: {err}"),
            )
        })?;
        let response = self
            .client
            .post(&self.endpoint.url)
            .headers(self.endpoint.headers.clone())
            .body(payload)
            .send()
            .await
            .map_err(|err| classify(&err))?;
        let status = response.status();
        if !status.is_success() {
            let body = read_capped(response, MAX_ERROR_BODY_BYTES, false)
                .await
                .unwrap_or_default();
            self.record(status.as_u16(), &body, started);
            return Err(ReviewFailure::http(
                status.as_u16(),
                provider_message(self.endpoint.provider, &body),
            ));
        }
        let body = read_capped(response, MAX_RESPONSE_BYTES, true).await?;
        self.record(status.as_u16(), &body, started);
        Ok(body)
    }

    fn record(&mut self, status: u16, body: &[u8], started: Instant) {
        if let Some(transcript) = self.transcript.as_deref_mut() {
            let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            transcript.received(status, body, ms);
        }
    }
}

/// Reads a body up to `cap` bytes. Beyond it: a failure when `strict`, else the first `cap` bytes.
async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
    strict: bool,
) -> Result<Vec<u8>, ReviewFailure> {
    let too_large = || {
        ReviewFailure::new(
            FailureKind::TooLarge,
            format!("the response is larger than {cap} bytes"),
        )
    };
    if strict
        && response
            .content_length()
            .is_some_and(|len| len > cap as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|err| classify(&err))? {
        if body.len() + chunk.len() > cap {
            if strict {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk[..cap - body.len()]);
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The provider's own message in an error body, or its first line of text.
fn provider_message(provider: Provider, body: &[u8]) -> Option<String> {
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        let message = match provider {
            Provider::Openai => openai::error_message(&value),
            Provider::Anthropic => anthropic::error_message(&value),
        };
        // Some servers use the other provider's error shape.
        return message
            .or_else(|| openai::error_message(&value))
            .or_else(|| anthropic::error_message(&value))
            .or_else(|| Some(value.to_string()));
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Maps a reqwest error to a failure kind, naming the underlying cause.
fn classify(err: &reqwest::Error) -> ReviewFailure {
    let chain = error_chain(err);
    let kind = if err.is_timeout() {
        FailureKind::Timeout
    } else if err.is_connect() && is_tls(&chain) {
        FailureKind::Tls
    } else if err.is_connect() {
        FailureKind::Connect
    } else if err.is_builder() {
        FailureKind::Config
    } else {
        FailureKind::Transport
    };
    ReviewFailure::new(kind, chain)
}

fn is_tls(chain: &str) -> bool {
    let lower = chain.to_ascii_lowercase();
    ["certificate", "tls", "handshake", "invalid peer"]
        .iter()
        .any(|word| lower.contains(word))
}

/// `error: cause: cause …`, without the URL (it is in the config; it may carry credentials).
fn error_chain(err: &reqwest::Error) -> String {
    let mut out = err.without_url_ref().to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    super::failure::clean(&out)
}

/// Extension for a URL-free rendering of a reqwest error.
trait WithoutUrlRef {
    fn without_url_ref(&self) -> String;
}

impl WithoutUrlRef for reqwest::Error {
    fn without_url_ref(&self) -> String {
        let text = self.to_string();
        match self.url() {
            Some(url) => text
                .replace(&format!(" ({url})"), "")
                .replace(url.as_str(), "<reviewer>"),
            None => text,
        }
    }
}
