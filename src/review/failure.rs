//! Why a review produced no verdict. A failure is never a denial: it is reported as
//! `AUTO_REVIEW_FAILED` and then the fallback policy decides.

use super::verdict::AnswerError;
use crate::intake::visible_line as visible;
use crate::redact::redact;
use serde::Serialize;
use std::fmt;

/// The longest provider message quoted in a failure.
const MAX_PROVIDER_MESSAGE_CHARS: usize = 300;

/// The kind of failure, stable in JSON (`review.failure.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The whole review did not finish within `timeout_ms` (connect, first byte, body, tool rounds).
    Timeout,
    /// No connection (refused, unreachable, DNS).
    Connect,
    /// The TLS handshake failed (certificate, protocol).
    Tls,
    /// The server answered with a non-2xx status.
    HttpStatus,
    /// The connection broke mid-request or mid-response (reset, truncated body).
    Transport,
    /// The response body was larger than the cap.
    TooLarge,
    /// The model stopped for another reason than a completed answer (`length`, `content_filter` …).
    FinishReason,
    /// The model refused to answer.
    Refusal,
    /// The response carried no answer.
    Empty,
    /// The response or the answer is not JSON.
    Unparseable,
    /// The answer is JSON but not a valid verdict or tool request.
    Schema,
    /// The model kept asking for tools after the last allowed round.
    ToolLimit,
    /// A tool call tried to read outside the workspace (`..`, an absolute path, a symlink).
    ToolEscape,
    /// The reviewer is misconfigured (base URL, missing API key variable, header).
    Config,
}

impl FailureKind {
    pub const ALL: [FailureKind; 14] = [
        FailureKind::Timeout,
        FailureKind::Connect,
        FailureKind::Tls,
        FailureKind::HttpStatus,
        FailureKind::Transport,
        FailureKind::TooLarge,
        FailureKind::FinishReason,
        FailureKind::Refusal,
        FailureKind::Empty,
        FailureKind::Unparseable,
        FailureKind::Schema,
        FailureKind::ToolLimit,
        FailureKind::ToolEscape,
        FailureKind::Config,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Timeout => "timeout",
            FailureKind::Connect => "connect",
            FailureKind::Tls => "tls",
            FailureKind::HttpStatus => "http-status",
            FailureKind::Transport => "transport",
            FailureKind::TooLarge => "too-large",
            FailureKind::FinishReason => "finish-reason",
            FailureKind::Refusal => "refusal",
            FailureKind::Empty => "empty",
            FailureKind::Unparseable => "unparseable",
            FailureKind::Schema => "schema",
            FailureKind::ToolLimit => "tool-limit",
            FailureKind::ToolEscape => "tool-escape",
            FailureKind::Config => "config",
        }
    }
}

/// One failure, with what the user needs to fix it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewFailure {
    pub kind: FailureKind,
    /// The HTTP status, for [`FailureKind::HttpStatus`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The provider's finish or stop reason, when it is the cause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The provider's own error message (redacted, made visible, capped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_message: Option<String>,
    /// What went wrong, in shellgate's words.
    pub detail: String,
}

impl ReviewFailure {
    pub fn new(kind: FailureKind, detail: impl Into<String>) -> ReviewFailure {
        ReviewFailure {
            kind,
            status: None,
            finish_reason: None,
            provider_message: None,
            detail: detail.into(),
        }
    }

    pub fn http(status: u16, provider_message: Option<String>) -> ReviewFailure {
        let reason = reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|code| code.canonical_reason())
            .unwrap_or("");
        ReviewFailure {
            kind: FailureKind::HttpStatus,
            status: Some(status),
            finish_reason: None,
            provider_message: provider_message.map(|m| clean(&m)),
            detail: format!("HTTP {status} {reason}").trim_end().to_owned(),
        }
    }

    pub fn finish(reason: &str, detail: &str) -> ReviewFailure {
        ReviewFailure {
            kind: FailureKind::FinishReason,
            status: None,
            finish_reason: Some(clean(reason)),
            provider_message: None,
            detail: format!("finish reason `{}`: {detail}", clean(reason)),
        }
    }

    pub fn refusal(message: &str) -> ReviewFailure {
        ReviewFailure {
            kind: FailureKind::Refusal,
            status: None,
            finish_reason: None,
            provider_message: Some(clean(message)),
            detail: "the model refused to review the command".to_owned(),
        }
    }

    /// Adds the provider's message (any text the provider sent that explains the failure).
    pub fn with_provider_message(mut self, message: &str) -> ReviewFailure {
        if !message.trim().is_empty() {
            self.provider_message = Some(clean(message));
        }
        self
    }
}

impl From<AnswerError> for ReviewFailure {
    fn from(error: AnswerError) -> ReviewFailure {
        match error {
            AnswerError::Empty => ReviewFailure::new(FailureKind::Empty, "the answer is empty"),
            AnswerError::Unparseable(why) => ReviewFailure::new(
                FailureKind::Unparseable,
                format!("the answer is not a JSON verdict ({})", clean(&why)),
            ),
            AnswerError::Schema(why) => ReviewFailure::new(
                FailureKind::Schema,
                format!("the answer is not a valid verdict: {}", clean(&why)),
            ),
        }
    }
}

impl fmt::Display for ReviewFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.kind.as_str(), self.detail)?;
        if let Some(message) = &self.provider_message {
            write!(f, " (provider: {message})")?;
        }
        Ok(())
    }
}

/// Provider text is untrusted: redact it, make control characters visible, cap it.
pub fn clean(text: &str) -> String {
    let visible = visible(&redact(text));
    match visible.char_indices().nth(MAX_PROVIDER_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &visible[..cut]),
        None => visible,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_match_the_json_form() {
        for kind in FailureKind::ALL {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
    }

    #[test]
    fn messages_name_status_finish_and_provider_text() {
        let failure = ReviewFailure::http(
            429,
            Some("Rate limit\u{1b}[31m for sk-abcdefghijklmnopqrstuvwxyz".into()),
        );
        let text = failure.to_string();
        assert!(text.contains("HTTP 429 Too Many Requests"), "{text}");
        assert!(text.contains("Rate limit^["), "{text}");
        assert!(!text.contains("abcdefghijklmnop"), "{text}");
        let cut = ReviewFailure::finish("length", "the answer was cut off at max_tokens");
        assert!(cut.to_string().contains("finish reason `length`"));
        let long = ReviewFailure::refusal(&"x".repeat(1000));
        assert!(long.provider_message.unwrap().chars().count() <= MAX_PROVIDER_MESSAGE_CHARS + 1);
    }
}
