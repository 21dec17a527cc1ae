//! Events as one readable line each: what `shellgate log` prints, `shellgate auto-review` echoes,
//! and the panel's event chain shows (after its own escaping).

use crate::audit::event::{Event, EventBody};
use crate::intake::visible_line as visible;

/// One readable line per event: time, sequence number, request, kind, and what happened.
pub fn describe_event(event: &Event) -> String {
    let request = event
        .request
        .as_ref()
        .map_or("-".to_string(), |id| id.to_string());
    format!(
        "{}  #{:<4} {:<18} {:<21} {}",
        event.time,
        event.seq,
        request,
        event.body.kind(),
        visible(&describe_body(&event.body))
    )
}

/// What one event says, without its header (shared with the panel's event chain). Not yet made
/// visible: callers pass it through [`visible`] or escape it.
pub fn describe_body(body: &EventBody) -> String {
    match body {
        EventBody::ApprovalAsked(e) => format!(
            "{}  [cwd {}, mode {}, sandbox {}] {}: {}",
            e.line,
            e.cwd,
            e.mode,
            e.grant
                .as_ref()
                .map_or_else(|| e.sandbox.as_str().to_owned(), ToString::to_string),
            e.code,
            e.reason
        ),
        EventBody::AutoReviewVerdict(e) => format!(
            "{} (risk {}{}, {} ms, {}/{}): {}  — {}",
            e.decision.as_str(),
            e.risk.as_str(),
            if e.cached { ", cached" } else { "" },
            e.duration_ms,
            e.reviewer.provider,
            e.reviewer.model,
            e.reason,
            e.line
        ),
        EventBody::AutoReviewRejection(e) => format!(
            "{:?} {}: {}{}  — {}",
            e.cause,
            e.code,
            e.reason,
            e.fallback
                .map_or(String::new(), |f| format!(" (fallback {f:?})")),
            e.line
        ),
        EventBody::ApprovalDecided(e) => format!(
            "{} by {:?}: {}: {}",
            e.decision.as_str(),
            e.by,
            e.code,
            e.reason
        ),
        // A program started without its shell (a typed line of plain commands) is named, not
        // the shell that did not run.
        EventBody::ExecStarted(e) => format!(
            "{} in sandbox {}{}{}",
            e.program.as_deref().unwrap_or(&e.shell),
            e.grant
                .as_ref()
                .map_or_else(|| e.sandbox.as_str().to_owned(), ToString::to_string),
            e.pid.map_or(String::new(), |pid| format!(", pid {pid}")),
            if e.withheld.is_empty() {
                String::new()
            } else {
                format!("; withheld {}", e.withheld.join(", "))
            }
        ),
        EventBody::ExecFinished(e) => {
            let status = match (e.exit_code, e.signal) {
                (_, Some(signal)) => format!("killed by signal {signal}"),
                (Some(code), None) => format!("exit {code}"),
                (None, None) => "status unknown".to_string(),
            };
            format!(
                "{status} after {} ms (sandbox {})",
                e.duration_ms,
                e.sandbox.as_str()
            )
        }
        EventBody::SandboxViolation(e) => match &e.quarantined {
            Some(to) => format!("sandbox violation: {} (moved aside to {to})", e.what),
            None => format!(
                "sandbox violation: {} (not moved: remove it by hand)",
                e.what
            ),
        },
        EventBody::AutoReviewState(e) => format!(
            "review {} by {}",
            if e.enabled { "on" } else { "off" },
            e.by.as_str()
        ),
        EventBody::AutoReviewOverride(e) => format!(
            "one-shot approval for {} ({} s) by {}{}: {}",
            e.program,
            e.ttl_secs,
            e.by.as_str(),
            e.target_request
                .as_ref()
                .map_or(String::new(), |r| format!(" of {r}")),
            e.line
        ),
        EventBody::AutoReviewCircuit(e) => {
            format!(
                "breaker {:?} by {}: {}",
                e.transition,
                e.by.as_str(),
                e.reason
            )
        }
        EventBody::ModeChanged(e) => format!(
            "{} → {} (sandbox {}) by {}{}{}",
            e.from.as_deref().unwrap_or("-"),
            e.to,
            e.sandbox.as_str(),
            e.by.as_str(),
            if e.confirmed { ", confirmed" } else { "" },
            e.expires.map_or(String::new(), |t| format!(", until {t}"))
        ),
        EventBody::SandboxDenied(e) => format!(
            "the sandbox refused {}{}",
            e.refused.join(", "),
            e.missing
                .as_ref()
                .map(|m| format!(
                    " (missing grant: {})",
                    serde_json::to_string(m).unwrap_or_default()
                ))
                .unwrap_or_else(|| " (nothing a line can be granted)".to_owned())
        ),
        EventBody::HarnessStep(e) => format!("{} {}: {} ({})", e.agent, e.step, e.path, e.note),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::event::ExecStarted;
    use crate::mode::SandboxPolicy;

    #[test]
    fn a_line_started_without_its_shell_names_its_programs() {
        let mut started = ExecStarted {
            sandbox: SandboxPolicy::WorkspaceWrite,
            grant: None,
            shell: "bash".to_owned(),
            program: None,
            pid: None,
            withheld: Vec::new(),
        };
        let text = describe_body(&EventBody::ExecStarted(started.clone()));
        assert!(text.starts_with("bash in sandbox"), "{text}");
        started.program = Some("/usr/bin/ls | /usr/bin/wc".to_owned());
        let text = describe_body(&EventBody::ExecStarted(started));
        assert!(
            text.starts_with("/usr/bin/ls | /usr/bin/wc in sandbox"),
            "{text}"
        );
    }
}
