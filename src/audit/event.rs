//! The typed events of the audit log: one JSON object per line.
//!
//! Every event has the same header (schema version, sequence number, time, session, request id and
//! the hash of the previous line) followed by `kind` and a typed `data` payload:
//!
//! ```json
//! {"v":1,"seq":3,"time":"2025-01-02T03:04:05.678Z","session":"s1","request":"r0123456789abcdef",
//!  "prev":"9f86d0…","kind":"autoReview/verdict","data":{"line":"rm -rf build", … }}
//! ```
//!
//! A line's way through shellgate is one request id across
//! `approval/asked → autoReview/verdict | autoReview/rejection → approval/decided → exec/started →
//! exec/finished`. Session-wide events (`autoReview/state`, `autoReview/override`,
//! `autoReview/circuit`, `mode/changed`) carry no request id.

use super::paths::{RequestId, SessionId};
use crate::error::Code;
use crate::mode::SandboxPolicy;
use crate::redact::redact;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The schema version written into every event. Readers refuse events from a newer schema rather
/// than misread them.
pub const SCHEMA_VERSION: u32 = 1;

/// Caps on free text, so one event stays small enough to be written with one `write` and read back
/// cheaply. A line is at most 4,000 characters after intake; a reviewer's reason has no such bound.
pub const MAX_LINE_CHARS: usize = 8_000;
pub const MAX_TEXT_CHARS: usize = 2_000;

/// One line of the log. Written with the derived `Serialize`; read with a hand-written
/// `Deserialize` (see [`decode`]) that is several times faster than serde's `flatten`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// Schema version ([`SCHEMA_VERSION`]).
    pub v: u32,
    /// Position in the session's chain: 0 for the first event, then +1.
    pub seq: u64,
    pub time: Timestamp,
    pub session: SessionId,
    /// The line this event belongs to; absent for session-wide events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RequestId>,
    /// SHA-256 (hex) of the previous event's line, or of the session's genesis text for the first.
    pub prev: String,
    #[serde(flatten)]
    pub body: EventBody,
}

/// What happened. The `kind` strings are part of the log format; never rename one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "data")]
pub enum EventBody {
    /// A line arrived and a decision about it is being made.
    #[serde(rename = "approval/asked")]
    ApprovalAsked(LineAsked),
    /// The reviewer model judged the line.
    #[serde(rename = "autoReview/verdict")]
    AutoReviewVerdict(ReviewVerdict),
    /// The line was refused without a reviewer verdict (review failed, `never` rule, breaker, budget).
    #[serde(rename = "autoReview/rejection")]
    AutoReviewRejection(ReviewRejection),
    /// The final decision about the line, and who made it.
    #[serde(rename = "approval/decided")]
    ApprovalDecided(ApprovalDecision),
    #[serde(rename = "exec/started")]
    ExecStarted(ExecStarted),
    #[serde(rename = "exec/finished")]
    ExecFinished(ExecFinished),
    /// The sandbox's guard found a guarded name planted or changed by the line and moved it aside.
    #[serde(rename = "sandbox/violation")]
    SandboxViolation(SandboxViolation),
    /// The line failed where the sandbox refused it something; what, and the grant it lacked.
    #[serde(rename = "sandbox/denied")]
    SandboxDenied(SandboxDenied),
    /// Auto review turned on or off.
    #[serde(rename = "autoReview/state")]
    AutoReviewState(ReviewSwitch),
    /// A person's single-use approval of a denied line (`shellgate auto-review approve N`).
    #[serde(rename = "autoReview/override")]
    AutoReviewOverride(OneShotApproval),
    /// The circuit breaker tripped or was reset.
    #[serde(rename = "autoReview/circuit")]
    AutoReviewCircuit(CircuitChange),
    /// The session's mode changed.
    #[serde(rename = "mode/changed")]
    ModeChanged(ModeChange),
    /// `wrap` did a known agent's start-up step in its place (Claude Code's shell snapshot).
    #[serde(rename = "wrap/harness")]
    HarnessStep(HarnessStep),
}

impl EventBody {
    /// The `kind` string of this event.
    pub fn kind(&self) -> &'static str {
        match self {
            EventBody::ApprovalAsked(_) => "approval/asked",
            EventBody::AutoReviewVerdict(_) => "autoReview/verdict",
            EventBody::AutoReviewRejection(_) => "autoReview/rejection",
            EventBody::ApprovalDecided(_) => "approval/decided",
            EventBody::ExecStarted(_) => "exec/started",
            EventBody::ExecFinished(_) => "exec/finished",
            EventBody::SandboxViolation(_) => "sandbox/violation",
            EventBody::SandboxDenied(_) => "sandbox/denied",
            EventBody::AutoReviewState(_) => "autoReview/state",
            EventBody::AutoReviewOverride(_) => "autoReview/override",
            EventBody::AutoReviewCircuit(_) => "autoReview/circuit",
            EventBody::ModeChanged(_) => "mode/changed",
            EventBody::HarnessStep(_) => "wrap/harness",
        }
    }

    /// Whether this kind belongs to one line (and so must carry a request id).
    pub fn is_per_line(&self) -> bool {
        matches!(
            self,
            EventBody::ApprovalAsked(_)
                | EventBody::AutoReviewVerdict(_)
                | EventBody::AutoReviewRejection(_)
                | EventBody::ApprovalDecided(_)
                | EventBody::ExecStarted(_)
                | EventBody::ExecFinished(_)
                | EventBody::SandboxViolation(_)
                | EventBody::SandboxDenied(_)
        )
    }

    /// Redacts secrets from every free-text field and caps its length. The log's one append seam
    /// calls this, so no caller can write an unredacted line by forgetting to.
    pub fn scrub(&mut self) {
        match self {
            EventBody::ApprovalAsked(e) => {
                scrub(&mut e.line, MAX_LINE_CHARS);
                scrub(&mut e.program, MAX_TEXT_CHARS);
                scrub(&mut e.cwd, MAX_TEXT_CHARS);
                scrub(&mut e.mode, MAX_TEXT_CHARS);
                scrub(&mut e.reason, MAX_TEXT_CHARS);
            }
            EventBody::AutoReviewVerdict(e) => {
                scrub(&mut e.line, MAX_LINE_CHARS);
                scrub(&mut e.program, MAX_TEXT_CHARS);
                scrub(&mut e.reason, MAX_TEXT_CHARS);
                e.reviewer.scrub();
            }
            EventBody::AutoReviewRejection(e) => {
                scrub(&mut e.line, MAX_LINE_CHARS);
                scrub(&mut e.program, MAX_TEXT_CHARS);
                scrub(&mut e.reason, MAX_TEXT_CHARS);
                if let Some(reviewer) = &mut e.reviewer {
                    reviewer.scrub();
                }
            }
            EventBody::ApprovalDecided(e) => scrub(&mut e.reason, MAX_TEXT_CHARS),
            EventBody::ExecStarted(e) => {
                scrub(&mut e.shell, MAX_TEXT_CHARS);
                for name in &mut e.withheld {
                    scrub(name, MAX_TEXT_CHARS);
                }
            }
            EventBody::ExecFinished(_) | EventBody::AutoReviewState(_) => {}
            EventBody::HarnessStep(e) => {
                scrub(&mut e.agent, MAX_TEXT_CHARS);
                scrub(&mut e.step, MAX_TEXT_CHARS);
                scrub(&mut e.path, MAX_TEXT_CHARS);
                scrub(&mut e.note, MAX_TEXT_CHARS);
            }
            EventBody::SandboxDenied(e) => {
                for what in &mut e.refused {
                    scrub(what, MAX_TEXT_CHARS);
                }
            }
            EventBody::SandboxViolation(e) => {
                scrub(&mut e.path, MAX_TEXT_CHARS);
                scrub(&mut e.what, MAX_TEXT_CHARS);
                if let Some(q) = &mut e.quarantined {
                    scrub(q, MAX_TEXT_CHARS);
                }
            }
            EventBody::AutoReviewOverride(e) => {
                scrub(&mut e.line, MAX_LINE_CHARS);
                scrub(&mut e.program, MAX_TEXT_CHARS);
            }
            EventBody::AutoReviewCircuit(e) => scrub(&mut e.reason, MAX_TEXT_CHARS),
            EventBody::ModeChanged(e) => {
                if let Some(from) = &mut e.from {
                    scrub(from, MAX_TEXT_CHARS);
                }
                scrub(&mut e.to, MAX_TEXT_CHARS);
            }
        }
    }
}

/// Redacts `text` and cuts it to `max_chars`, marking the cut.
fn scrub(text: &mut String, max_chars: usize) {
    if let Cow::Owned(redacted) = redact(text) {
        *text = redacted;
    }
    if let Some((cut, _)) = text.char_indices().nth(max_chars) {
        text.truncate(cut);
        text.push_str("…[truncated]");
    }
}

/// `approval/asked`: the line and the context a decision about it is made in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineAsked {
    /// The command line (redacted).
    pub line: String,
    /// The program the line is about (the first command's name), used to match one-shot approvals.
    pub program: String,
    pub cwd: String,
    /// The mode id the line is decided in.
    pub mode: String,
    pub sandbox: SandboxPolicy,
    /// What the line asks the sandbox for (network, extra writable directories), when more than
    /// the mode's sandbox alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<crate::policy::grant::Grant>,
    /// The decision core's outcome before anyone was asked (e.g. `NEEDS_REVIEW`).
    #[serde(with = "code_name")]
    pub code: Code,
    /// Why a decision is needed (the rule that matched, …).
    pub reason: String,
}

/// Allow or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
        }
    }
}

pub use crate::config::RiskLevel;

/// Which model judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reviewer {
    /// `openai` (any OpenAI-compatible server) or `anthropic`.
    pub provider: String,
    pub model: String,
}

impl Reviewer {
    fn scrub(&mut self) {
        scrub(&mut self.provider, MAX_TEXT_CHARS);
        scrub(&mut self.model, MAX_TEXT_CHARS);
    }
}

/// `autoReview/verdict`: the reviewer's judgment of one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewVerdict {
    pub line: String,
    pub program: String,
    pub decision: Decision,
    pub risk: RiskLevel,
    pub reason: String,
    pub reviewer: Reviewer,
    /// Wall time of the review (0 or near it when cached).
    pub duration_ms: u64,
    /// The verdict was reused from the cache: nothing was sent to the model.
    pub cached: bool,
}

/// Why a line was refused without a reviewer verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RejectionCause {
    /// The reviewer failed (timeout, HTTP error, invalid verdict …); counts against `max_failures`.
    ReviewFailed,
    /// A `never` rule matched.
    NeverRule,
    /// The circuit breaker was open.
    CircuitOpen,
    /// The session's review budget was used up.
    BudgetExhausted,
}

/// What the fallback policy did with a line that got no verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FallbackAction {
    Rejected,
    Delegate,
    AllowOnce,
}

/// `autoReview/rejection`: no verdict was produced for the line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewRejection {
    pub line: String,
    pub program: String,
    pub cause: RejectionCause,
    #[serde(with = "code_name")]
    pub code: Code,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<Reviewer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<FallbackAction>,
}

/// Who or what made a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decider {
    /// A rule of the decision core.
    Rule,
    /// The reviewer model.
    Reviewer,
    /// A person at the terminal.
    Person,
    /// The fallback policy after a review failure.
    Fallback,
    /// The circuit breaker.
    Breaker,
}

/// `approval/decided`: the final decision about the line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalDecision {
    pub decision: Decision,
    pub by: Decider,
    #[serde(with = "code_name")]
    pub code: Code,
    pub reason: String,
}

/// `exec/started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecStarted {
    pub sandbox: SandboxPolicy,
    /// Exactly what the sandbox gave the line (absent in logs from before grants).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<crate::policy::grant::Grant>,
    /// The shell that runs the line (`bash`, `zsh`, `pwsh`).
    pub shell: String,
    /// The program started in the shell's place, for a typed line of one command of plain words
    /// (the path found on the line's `PATH`), or the programs of a pipeline of such commands
    /// (their paths joined by ` | `); absent when the shell ran the line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The names of the credential variables withheld from the line (never their values).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<String>,
}

/// `exec/finished`: how the line ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecFinished {
    /// The exit status, when the process exited.
    pub exit_code: Option<i32>,
    /// The signal number, when a signal killed it.
    pub signal: Option<i32>,
    pub duration_ms: u64,
    pub sandbox: SandboxPolicy,
}

/// `sandbox/violation`: what the guard found and where it put it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SandboxViolation {
    /// The guarded path that appeared or changed.
    pub path: String,
    /// Where it was moved aside, or absent when that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarantined: Option<String>,
    /// What happened, in words.
    pub what: String,
}

/// `sandbox/denied`: what the sandbox refused a line that then failed, and the grant it lacked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SandboxDenied {
    /// What was refused, in words (`a connection to 127.0.0.1:8080`, `create /home/u/.cache/x`).
    pub refused: Vec<String>,
    /// What a grant would have to add; absent when nothing of it can be granted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<crate::policy::grant::Needs>,
    /// The line's exit status (absent: killed by a signal).
    pub exit_code: Option<i32>,
}

/// `wrap/harness`: a known agent's own start-up step that `wrap` did in its place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HarnessStep {
    /// `claude-code`.
    pub agent: String,
    /// `shell-snapshot`.
    pub step: String,
    /// The file written.
    pub path: String,
    /// What was done instead of the agent's script, or why it failed.
    pub note: String,
}

/// Who changed a session setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Actor {
    /// A person at the controlling terminal.
    Person,
    /// A caller without a terminal (an agent, a script).
    Agent,
    /// Nobody: the configured default.
    Default,
    /// The clock: a time-boxed Full access ended.
    Expiry,
}

impl Actor {
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Person => "person",
            Actor::Agent => "agent",
            Actor::Default => "default",
            Actor::Expiry => "expiry",
        }
    }
}

/// `autoReview/state`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewSwitch {
    pub enabled: bool,
    pub by: Actor,
}

/// `autoReview/override`: a single-use approval for the next review of `program`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OneShotApproval {
    /// The request id of the denied line that was approved.
    pub target_request: Option<RequestId>,
    pub program: String,
    pub line: String,
    /// How long the approval waits for the next review of `program`.
    pub ttl_secs: u64,
    pub by: Actor,
}

/// Whether the breaker tripped or was reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CircuitTransition {
    Tripped,
    Reset,
}

/// `autoReview/circuit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CircuitChange {
    pub transition: CircuitTransition,
    pub reason: String,
    pub by: Actor,
}

/// `mode/changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModeChange {
    pub from: Option<String>,
    pub to: String,
    pub sandbox: SandboxPolicy,
    pub by: Actor,
    /// A person confirmed the change on the terminal (required for Full access).
    pub confirmed: bool,
    /// Full access for a while (`mode full --for 10m`): when it ends by itself. At that time the
    /// session's mode is `from` again, whoever looks (no event is needed for the change to hold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<Timestamp>,
}

/// A point in time, in milliseconds since the Unix epoch; written as RFC 3339 UTC with milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(u64);

impl Timestamp {
    pub fn now() -> Timestamp {
        Timestamp::from_system_time(SystemTime::now())
    }

    pub fn from_unix_ms(ms: u64) -> Timestamp {
        Timestamp(ms)
    }

    pub fn from_system_time(time: SystemTime) -> Timestamp {
        let ms = time
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        Timestamp(ms)
    }

    pub fn unix_ms(self) -> u64 {
        self.0
    }

    pub fn to_system_time(self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.0)
    }

    /// This time plus `secs` seconds (saturating).
    pub fn plus_secs(self, secs: u64) -> Timestamp {
        Timestamp(self.0.saturating_add(secs.saturating_mul(1000)))
    }

    /// Parses RFC 3339 (`2025-01-02T03:04:05Z`, with or without fractional seconds).
    pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
        humantime::parse_rfc3339_weak(text)
            .ok()
            .map(Timestamp::from_system_time)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}",
            humantime::format_rfc3339_millis(self.to_system_time())
        )
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Timestamp, D::Error> {
        deserializer.deserialize_str(TimestampVisitor)
    }
}

/// Parses the time from the borrowed input: no allocation per event on replay.
struct TimestampVisitor;

impl serde::de::Visitor<'_> for TimestampVisitor {
    type Value = Timestamp;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an RFC 3339 time")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Timestamp, E> {
        humantime::parse_rfc3339(text)
            .map(Timestamp::from_system_time)
            .map_err(|err| E::custom(format!("time {text:?}: {err}")))
    }
}

/// Reading an event without serde's `flatten`, which buffers every field of every line into an
/// intermediate map before building the structs. Replaying a long session is the price of every
/// shell line, so the header fields and the typed payload are decoded in one pass: `kind` names the
/// payload type and `data` is decoded straight into it. (Should `data` ever come before `kind`, it is
/// buffered and decoded once the kind is known.)
mod decode {
    use super::*;
    use serde::de::{self, DeserializeSeed, MapAccess, Visitor};

    #[derive(Deserialize)]
    #[serde(field_identifier, rename_all = "lowercase")]
    enum Field {
        V,
        Seq,
        Time,
        Session,
        Request,
        Prev,
        Kind,
        Data,
        #[serde(other)]
        Other,
    }

    #[derive(Debug, Clone, Copy, Deserialize)]
    enum Kind {
        #[serde(rename = "approval/asked")]
        ApprovalAsked,
        #[serde(rename = "autoReview/verdict")]
        AutoReviewVerdict,
        #[serde(rename = "autoReview/rejection")]
        AutoReviewRejection,
        #[serde(rename = "approval/decided")]
        ApprovalDecided,
        #[serde(rename = "exec/started")]
        ExecStarted,
        #[serde(rename = "exec/finished")]
        ExecFinished,
        #[serde(rename = "sandbox/violation")]
        SandboxViolation,
        #[serde(rename = "sandbox/denied")]
        SandboxDenied,
        #[serde(rename = "autoReview/state")]
        AutoReviewState,
        #[serde(rename = "autoReview/override")]
        AutoReviewOverride,
        #[serde(rename = "autoReview/circuit")]
        AutoReviewCircuit,
        #[serde(rename = "mode/changed")]
        ModeChanged,
        #[serde(rename = "wrap/harness")]
        HarnessStep,
    }

    /// Decodes `data` as the payload type of a kind.
    struct Payload(Kind);

    impl<'de> DeserializeSeed<'de> for Payload {
        type Value = EventBody;

        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<EventBody, D::Error> {
            Ok(match self.0 {
                Kind::ApprovalAsked => EventBody::ApprovalAsked(Deserialize::deserialize(d)?),
                Kind::AutoReviewVerdict => {
                    EventBody::AutoReviewVerdict(Deserialize::deserialize(d)?)
                }
                Kind::AutoReviewRejection => {
                    EventBody::AutoReviewRejection(Deserialize::deserialize(d)?)
                }
                Kind::ApprovalDecided => EventBody::ApprovalDecided(Deserialize::deserialize(d)?),
                Kind::ExecStarted => EventBody::ExecStarted(Deserialize::deserialize(d)?),
                Kind::ExecFinished => EventBody::ExecFinished(Deserialize::deserialize(d)?),
                Kind::SandboxViolation => EventBody::SandboxViolation(Deserialize::deserialize(d)?),
                Kind::SandboxDenied => EventBody::SandboxDenied(Deserialize::deserialize(d)?),
                Kind::AutoReviewState => EventBody::AutoReviewState(Deserialize::deserialize(d)?),
                Kind::AutoReviewOverride => {
                    EventBody::AutoReviewOverride(Deserialize::deserialize(d)?)
                }
                Kind::AutoReviewCircuit => {
                    EventBody::AutoReviewCircuit(Deserialize::deserialize(d)?)
                }
                Kind::ModeChanged => EventBody::ModeChanged(Deserialize::deserialize(d)?),
                Kind::HarnessStep => EventBody::HarnessStep(Deserialize::deserialize(d)?),
            })
        }
    }

    struct EventVisitor;

    impl<'de> Visitor<'de> for EventVisitor {
        type Value = Event;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an audit event object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
            let mut v = None;
            let mut seq = None;
            let mut time = None;
            let mut session = None;
            let mut request = None;
            let mut prev = None;
            let mut kind = None;
            let mut body = None;
            let mut early_data: Option<serde_json::Value> = None;
            while let Some(field) = map.next_key::<Field>()? {
                match field {
                    Field::V => v = Some(map.next_value()?),
                    Field::Seq => seq = Some(map.next_value()?),
                    Field::Time => time = Some(map.next_value()?),
                    Field::Session => session = Some(map.next_value()?),
                    Field::Request => request = map.next_value()?,
                    Field::Prev => prev = Some(map.next_value()?),
                    Field::Kind => kind = Some(map.next_value::<Kind>()?),
                    Field::Data => match kind {
                        Some(kind) => body = Some(map.next_value_seed(Payload(kind))?),
                        None => early_data = Some(map.next_value()?),
                    },
                    Field::Other => {
                        map.next_value::<de::IgnoredAny>()?;
                    }
                }
            }
            let kind = kind.ok_or_else(|| de::Error::missing_field("kind"))?;
            let body = match (body, early_data) {
                (Some(body), _) => body,
                (None, Some(data)) => Payload(kind).deserialize(data).map_err(de::Error::custom)?,
                (None, None) => return Err(de::Error::missing_field("data")),
            };
            Ok(Event {
                v: v.ok_or_else(|| de::Error::missing_field("v"))?,
                seq: seq.ok_or_else(|| de::Error::missing_field("seq"))?,
                time: time.ok_or_else(|| de::Error::missing_field("time"))?,
                session: session.ok_or_else(|| de::Error::missing_field("session"))?,
                request,
                prev: prev.ok_or_else(|| de::Error::missing_field("prev"))?,
                body,
            })
        }
    }

    impl<'de> Deserialize<'de> for Event {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Event, D::Error> {
            d.deserialize_map(EventVisitor)
        }
    }
}

/// [`Code`] is written by its stable name; reading maps the name back through [`Code::ALL`].
mod code_name {
    use crate::error::Code;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(code: &Code, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(code.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Code, D::Error> {
        deserializer.deserialize_str(CodeVisitor)
    }

    struct CodeVisitor;

    impl serde::de::Visitor<'_> for CodeVisitor {
        type Value = Code;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a shellgate code name")
        }

        fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Code, E> {
            Code::ALL
                .into_iter()
                .find(|code| code.as_str() == name)
                .ok_or_else(|| E::custom(format!("unknown code {name:?}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_with_milliseconds() {
        let time = Timestamp::from_unix_ms(1_735_787_045_678);
        let json = serde_json::to_string(&time).unwrap();
        assert_eq!(json, "\"2025-01-02T03:04:05.678Z\"");
        assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), time);
        assert_eq!(
            Timestamp::parse_rfc3339("2025-01-02T03:04:05Z"),
            Some(Timestamp::from_unix_ms(1_735_787_045_000))
        );
    }

    #[test]
    fn kind_strings_match_serde() {
        let body = EventBody::AutoReviewState(ReviewSwitch {
            enabled: true,
            by: Actor::Person,
        });
        let json = serde_json::to_value(&body).unwrap();
        assert_eq!(json["kind"], body.kind());
        assert_eq!(json["data"]["by"], "person");
    }

    #[test]
    fn scrub_redacts_and_caps() {
        let mut body = EventBody::ApprovalDecided(ApprovalDecision {
            decision: Decision::Deny,
            by: Decider::Person,
            code: Code::ApprovalRejected,
            reason: format!("token=abc {}", "x".repeat(3 * MAX_TEXT_CHARS)),
        });
        body.scrub();
        let EventBody::ApprovalDecided(decided) = &body else {
            unreachable!()
        };
        assert!(decided.reason.starts_with("token=[REDACTED] x"));
        assert!(decided.reason.ends_with("…[truncated]"));
        assert!(decided.reason.chars().count() < MAX_TEXT_CHARS + 20);
    }

    #[test]
    fn events_decode_in_any_field_order() {
        let event = Event {
            v: SCHEMA_VERSION,
            seq: 7,
            time: Timestamp::from_unix_ms(1_000),
            session: SessionId::parse("s").unwrap(),
            request: Some(RequestId::parse("r1").unwrap()),
            prev: "ab".into(),
            body: EventBody::AutoReviewState(ReviewSwitch {
                enabled: false,
                by: Actor::Agent,
            }),
        };
        let json = serde_json::to_string(&event).unwrap();
        assert_eq!(serde_json::from_str::<Event>(&json).unwrap(), event);
        let reordered = r#"{"data":{"enabled":false,"by":"agent"},"extra":1,"prev":"ab",
            "kind":"autoReview/state","session":"s","time":"1970-01-01T00:00:01Z","seq":7,
            "request":"r1","v":1}"#;
        assert_eq!(serde_json::from_str::<Event>(reordered).unwrap(), event);
        for broken in [
            r#"{"v":1,"seq":7,"time":"1970-01-01T00:00:01Z","session":"s","prev":"ab","kind":"nope","data":{}}"#,
            r#"{"v":1,"seq":7,"time":"1970-01-01T00:00:01Z","session":"s","prev":"ab","kind":"autoReview/state","data":{"enabled":1}}"#,
            r#"{"v":1,"seq":7,"time":"1970-01-01T00:00:01Z","session":"../x","prev":"ab","kind":"autoReview/state","data":{"enabled":true,"by":"agent"}}"#,
            r#"{"v":1,"time":"1970-01-01T00:00:01Z","session":"s","prev":"ab","kind":"autoReview/state","data":{"enabled":true,"by":"agent"}}"#,
            r#"[1,2]"#,
        ] {
            assert!(serde_json::from_str::<Event>(broken).is_err(), "{broken}");
        }
    }

    #[test]
    fn unknown_codes_are_refused() {
        let json = r#"{"decision":"deny","by":"person","code":"NOPE","reason":""}"#;
        assert!(serde_json::from_str::<ApprovalDecision>(json).is_err());
        let json = r#"{"decision":"deny","by":"person","code":"APPROVAL_REJECTED","reason":""}"#;
        assert_eq!(
            serde_json::from_str::<ApprovalDecision>(json).unwrap().code,
            Code::ApprovalRejected
        );
    }
}
