//! The panel's HTML. Pure functions from a [`Snapshot`] to text.
//!
//! Every string that comes from the log, the config or the settings (command lines, reasons, mode
//! and model names) passes through [`shown`]: control and invisible characters are made visible
//! first (the same [`visible`] the terminal views use, so `ESC` reads `^[` in both), then the
//! result is HTML-escaped. Ids are escaped too, although their charset cannot hold markup. The
//! page loads no inline script and its Content-Security-Policy forbids any, so an escaping mistake
//! still could not run code.

use super::Panel;
use super::security::CSRF_FIELD;
use super::snapshot::Snapshot;
use crate::audit::describe::describe_body;
use crate::audit::event::{Decision, Event, Timestamp};
use crate::audit::fold::{BreakerStatus, SessionState, VerdictSummary};
use crate::audit::{RequestId, SessionId};
use crate::intake::visible_line as visible;
use std::fmt::Write as _;

/// Escapes text for HTML content and double- or single-quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

/// Text from the log as the page shows it: controls visible, then escaped.
pub fn shown(text: &str) -> String {
    escape(&visible(text))
}

/// The URLs of one session's pages and actions.
struct SessionUrls {
    page: String,
    base: String,
}

impl SessionUrls {
    fn new(panel: &Panel, id: &SessionId) -> SessionUrls {
        let base = format!("{}/s/{}", panel.base(), escape(id.as_str()));
        SessionUrls {
            page: format!("{base}/"),
            base,
        }
    }

    fn live(&self) -> String {
        format!("{}/live", self.base)
    }

    fn events(&self) -> String {
        format!("{}/events", self.base)
    }

    fn action(&self, name: &str) -> String {
        format!("{}/{name}", self.base)
    }

    fn chain(&self, request: &RequestId) -> String {
        format!("{}/chain/{}", self.base, escape(request.as_str()))
    }
}

/// The document around a page's body: head, stylesheet, script, skip link and header.
fn document(panel: &Panel, title: &str, header_extra: &str, body: &str) -> String {
    let base = panel.base();
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <meta name=\"referrer\" content=\"same-origin\">\n\
         <title>{title}</title>\n\
         <link rel=\"stylesheet\" href=\"{base}/assets/panel.css\">\n\
         <script src=\"{base}/assets/panel.js\" defer></script>\n</head>\n<body>\n\
         <a class=\"skip\" href=\"#main\">Skip to the session</a>\n\
         <header class=\"top\">\n<p class=\"brand\">shellgate panel</p>\n{header_extra}</header>\n\
         {body}</body>\n</html>\n"
    )
}

/// The whole page of one session.
pub fn page(panel: &Panel, snapshot: &Snapshot) -> String {
    let urls = SessionUrls::new(panel, &snapshot.session);
    let id = escape(snapshot.session.as_str());
    let header = format!(
        "<h1>Session <code>{id}</code></h1>\n\
         <p class=\"live\"><span id=\"live-status\" role=\"status\">Live updates need JavaScript; \
         reload to refresh.</span> <span id=\"action-status\" role=\"status\"></span></p>\n"
    );
    let mut body = String::new();
    body.push_str(&session_list(panel, snapshot));
    let _ = write!(
        body,
        "<main id=\"main\" tabindex=\"-1\" data-live=\"{}\" data-events=\"{}\">\n{}</main>\n\
         <div id=\"notice\" role=\"alert\" aria-live=\"assertive\" hidden></div>\n",
        urls.live(),
        urls.events(),
        live(panel, snapshot)
    );
    document(panel, &format!("shellgate panel: {id}"), &header, &body)
}

/// The list of sessions, when there is more than one to choose from.
fn session_list(panel: &Panel, snapshot: &Snapshot) -> String {
    if snapshot.sessions.len() < 2 {
        return String::new();
    }
    let mut out =
        String::from("<nav aria-label=\"Sessions\" class=\"sessions\">\n<h2>Sessions</h2>\n<ul>\n");
    for id in &snapshot.sessions {
        let current = id == &snapshot.session;
        let _ = writeln!(
            out,
            "<li><a href=\"{}\"{}>{}</a></li>",
            SessionUrls::new(panel, id).page,
            if current {
                " aria-current=\"page\""
            } else {
                ""
            },
            escape(id.as_str())
        );
    }
    out.push_str("</ul>\n</nav>\n");
    out
}

/// The part of the page that changes with the log: swapped in place by the script on every change.
pub fn live(panel: &Panel, snapshot: &Snapshot) -> String {
    let urls = SessionUrls::new(panel, &snapshot.session);
    let state = &snapshot.ctx.state;
    let mut out = String::new();
    if !panel.person {
        out.push_str(
            "<p class=\"note\" role=\"note\">This panel was started without a person at a \
             terminal, so its buttons act as an agent's call of <code>shellgate auto-review</code> \
             would: turning review back on after a person turned it off, and approving a denial, \
             are refused.</p>\n",
        );
    }
    out.push_str("<div class=\"grid\">\n");
    let reviewer = snapshot.ctx.config.reviewer.is_some();
    out.push_str(&review_section(panel, &urls, state, reviewer));
    out.push_str(&mode_section(panel, &urls, snapshot));
    out.push_str(&budget_section(state));
    out.push_str(&statistics_section(state));
    out.push_str("</div>\n");
    out.push_str(&denials_section(panel, &urls, state));
    out.push_str(&verdicts_section(&urls, state));
    let _ = writeln!(
        out,
        "<p class=\"meta\">{} events in the log{}.</p>",
        state.events,
        state
            .last_time
            .map_or(String::new(), |t| format!(", the last at {}", time(t)))
    );
    out
}

/// A hidden CSRF field: every form carries it.
fn csrf_field(panel: &Panel) -> String {
    format!(
        "<input type=\"hidden\" name=\"{CSRF_FIELD}\" value=\"{}\">",
        escape(panel.secrets.csrf.as_str())
    )
}

fn review_section(
    panel: &Panel,
    urls: &SessionUrls,
    state: &SessionState,
    reviewer_configured: bool,
) -> String {
    let review = &state.review;
    let (word, meaning) = review.describe(reviewer_configured);
    let class = if review.enabled && reviewer_configured {
        "on"
    } else {
        "off"
    };
    let since = review
        .since_seq
        .map_or(String::new(), |seq| format!(" (event #{seq})"));
    let breaker = &state.breaker;
    let on_label = if breaker.open {
        "Turn on and reset the breaker"
    } else {
        "Turn on"
    };
    let action = urls.action("review");
    let csrf = csrf_field(panel);
    let disabled = |yes: bool| if yes { " disabled" } else { "" };
    format!(
        "<section aria-labelledby=\"h-review\" class=\"card\">\n<h2 id=\"h-review\">Auto review</h2>\n\
         <p class=\"state\"><span class=\"badge {class}\">{word}</span> set by {}{since}: {}</p>\n\
         <div class=\"buttons\">\n\
         <form method=\"post\" action=\"{action}\">{csrf}<input type=\"hidden\" name=\"enable\" value=\"on\">\
         <button type=\"submit\" id=\"review-on\"{}>{on_label}</button></form>\n\
         <form method=\"post\" action=\"{action}\">{csrf}<input type=\"hidden\" name=\"enable\" value=\"off\">\
         <button type=\"submit\" id=\"review-off\"{}>Turn off</button></form>\n</div>\n\
         <h3>Circuit breaker</h3>\n{}</section>\n",
        escape(review.by.as_str()),
        shown(meaning),
        disabled(review.enabled && !breaker.open),
        disabled(!review.enabled),
        breaker_text(breaker)
    )
}

fn breaker_text(breaker: &BreakerStatus) -> String {
    let action = format!("{:?}", breaker.action).to_lowercase();
    if breaker.open {
        let why = breaker
            .cause
            .as_ref()
            .map_or("no cause recorded".to_string(), |cause| cause.describe());
        format!(
            "<p class=\"alert\"><span class=\"badge off\">tripped</span> {} (action: {action}). \
             A person resets it by turning review on.</p>\n",
            shown(&why)
        )
    } else {
        format!(
            "<p><span class=\"badge on\">closed</span> {} denial(s) in a row, {} in the last {} \
             verdict(s) (when tripped: {action}).</p>\n",
            breaker.consecutive_denies,
            breaker.window_denies(),
            breaker.window.len()
        )
    }
}

fn mode_section(panel: &Panel, urls: &SessionUrls, snapshot: &Snapshot) -> String {
    let ctx = &snapshot.ctx;
    let resolved = &ctx.resolved;
    let mut rows = String::new();
    row(
        &mut rows,
        "Desired mode",
        &format!("<code>{}</code>", shown(&ctx.desired)),
    );
    let mut effective = format!("<code>{}</code>", shown(&resolved.mode));
    if let Some(note) = &resolved.note {
        let _ = write!(effective, " <span class=\"why\">({})</span>", shown(note));
    }
    if let Some(end) = ctx.state.mode.as_ref().and_then(|m| m.expires) {
        let _ = write!(
            effective,
            " <strong>until {} UTC</strong>, then <code>{}</code> again",
            time(end),
            ctx.state
                .mode
                .as_ref()
                .map(|m| shown(&crate::session::after_expiry(&ctx.config, m)))
                .unwrap_or_default()
        );
    }
    row(&mut rows, "Effective mode", &effective);
    row(
        &mut rows,
        "Approval",
        &format!(
            "<code>{}</code>: {}",
            escape(resolved.approval.as_str()),
            escape(resolved.approval.describe())
        ),
    );
    row(
        &mut rows,
        "Sandbox policy",
        &format!(
            "{}, network {}",
            escape(resolved.sandbox.as_str()),
            if resolved.network { "on" } else { "off" }
        ),
    );
    let support = &panel.sandbox;
    let support_text = match (&support.reason, support.default_policy_enforceable) {
        (_, true) => format!(
            "workspace-write enforceable (Landlock ABI {})",
            support.landlock_abi
        ),
        (Some(reason), false) => format!("<strong>not enforceable</strong>: {}", shown(reason)),
        (None, false) => "<strong>not enforceable</strong>".to_string(),
    };
    row(&mut rows, "Sandbox support", &support_text);
    row(
        &mut rows,
        "Reviewer",
        if ctx.config.reviewer.is_some() {
            "configured"
        } else {
            "not configured (<code>[reviewer]</code> in the user config)"
        },
    );
    if panel.person && resolved.sandbox != crate::mode::SandboxPolicy::FullAccess {
        let _ = writeln!(
            rows,
            "<div><dt>Full access</dt><dd><form method=\"post\" action=\"{}\">{}\
             <label for=\"full-minutes\">for</label> <select id=\"full-minutes\" name=\"minutes\">\
             <option value=\"10\">10 minutes</option><option value=\"30\">30 minutes</option>\
             <option value=\"60\">1 hour</option></select> \
             <button type=\"submit\" id=\"full-access\">Ask at the terminal</button> \
             <span class=\"why\">(you confirm by typing <code>full</code> where the panel runs)</span>\
             </form></dd></div>",
            urls.action("full-access"),
            csrf_field(panel)
        );
    }
    let mut notes = String::new();
    for note in &ctx.settings.notes {
        let _ = writeln!(notes, "<p class=\"note\">{}</p>", shown(note));
    }
    format!(
        "<section aria-labelledby=\"h-mode\" class=\"card\">\n<h2 id=\"h-mode\">Mode and sandbox</h2>\n\
         <dl>\n{rows}</dl>\n{notes}</section>\n"
    )
}

fn row(out: &mut String, term: &str, value: &str) {
    let _ = writeln!(out, "<div><dt>{term}</dt><dd>{value}</dd></div>");
}

fn limit(used: u32, left: Option<u32>) -> String {
    match left {
        Some(left) => format!("{used} used, {left} left"),
        None => format!("{used} used, no limit"),
    }
}

fn budget_section(state: &SessionState) -> String {
    let budgets = &state.budgets;
    let mut rows = String::new();
    row(
        &mut rows,
        "Reviews",
        &limit(budgets.reviews, budgets.reviews_left()),
    );
    row(
        &mut rows,
        "Failures",
        &limit(budgets.failures, budgets.failures_left()),
    );
    let exhausted = budgets.exhausted().map_or(String::new(), |why| {
        format!("<p class=\"alert\">{}</p>\n", shown(&why))
    });
    format!(
        "<section aria-labelledby=\"h-budgets\" class=\"card\">\n<h2 id=\"h-budgets\">Budgets</h2>\n\
         <dl>\n{rows}</dl>\n{exhausted}</section>\n"
    )
}

fn statistics_section(state: &SessionState) -> String {
    let stats = &state.stats;
    let mut rows = String::new();
    row(&mut rows, "Lines decided", &stats.lines.to_string());
    row(&mut rows, "Refused", &stats.refused.to_string());
    row(
        &mut rows,
        "Failed in the sandbox",
        &stats.sandbox_denials.to_string(),
    );
    row(&mut rows, "Allowed by review", &stats.allows.to_string());
    row(&mut rows, "Denied by review", &stats.denies.to_string());
    row(&mut rows, "Cached verdicts", &stats.cached.to_string());
    row(&mut rows, "Fallbacks", &stats.fallbacks.to_string());
    row(
        &mut rows,
        "Never-rule rejections",
        &stats.never_rejections.to_string(),
    );
    row(&mut rows, "Failed reviews", &stats.failures.to_string());
    row(
        &mut rows,
        "Mean review time",
        &stats
            .mean_review_ms()
            .map_or("-".to_string(), |ms| format!("{ms} ms")),
    );
    format!(
        "<section aria-labelledby=\"h-stats\" class=\"card\">\n<h2 id=\"h-stats\">Statistics</h2>\n\
         <dl>\n{rows}</dl>\n</section>\n"
    )
}

/// A time as the tables show it: the UTC clock time (the log's times are UTC), with the full time
/// for machines and as a tooltip.
fn time(t: Timestamp) -> String {
    let full = t.to_string();
    let clock = full.get(11..19).unwrap_or(&full);
    format!(
        "<time datetime=\"{0}\" title=\"{0}\">{1}</time>",
        escape(&full),
        escape(clock)
    )
}

fn decision_badge(decision: Decision) -> String {
    let class = match decision {
        Decision::Allow => "on",
        Decision::Deny => "off",
    };
    format!("<span class=\"badge {class}\">{}</span>", decision.as_str())
}

fn denials_section(panel: &Panel, urls: &SessionUrls, state: &SessionState) -> String {
    let mut out = String::from(
        "<section aria-labelledby=\"h-denials\">\n<h2 id=\"h-denials\">Recent reviewer denials</h2>\n",
    );
    let now = Timestamp::now();
    for pending in state.pending_overrides(now) {
        let _ = writeln!(
            out,
            "<p class=\"note\">One-shot approval pending for <code>{}</code> until {} UTC.</p>",
            shown(&pending.program),
            time(pending.expires)
        );
    }
    // The list is the reviewer's denials (what "approve once" acts on); lines refused otherwise
    // are counted, so that an empty list never reads as "nothing was refused".
    let stats = &state.stats;
    if stats.refused > 0 || stats.sandbox_denials > 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\">In this session {} line(s) were refused before they ran (by a \
             rule, a person, the reviewer or a failure) and {} failed where the sandbox refused \
             them something; <code>shellgate log</code> lists them.</p>",
            stats.refused, stats.sandbox_denials
        );
    }
    if state.denials.is_empty() {
        out.push_str("<p>No reviewer denials in this session.</p>\n</section>\n");
        return out;
    }
    out.push_str(
        "<p class=\"hint\">“Approve once” is <code>shellgate auto-review approve N</code>: the next \
         review of the same program within 5 minutes is told a person approved it; the reviewer \
         still decides.</p>\n<div class=\"scroll\"><table>\n<thead><tr><th scope=\"col\">N</th>\
         <th scope=\"col\">Time (UTC)</th><th scope=\"col\">Line</th><th scope=\"col\">Risk</th>\
         <th scope=\"col\">Reason</th><th scope=\"col\">Action</th></tr></thead>\n<tbody>\n",
    );
    let action = urls.action("approve");
    let csrf = csrf_field(panel);
    for (index, denial) in state.denials.iter().rev().enumerate() {
        let n = index + 1;
        let verdict = &denial.verdict;
        let _ = writeln!(
            out,
            "<tr><td>{n}</td><td>{}</td><td><code class=\"line\">{}</code></td><td>{}</td>\
             <td>{}</td><td><form method=\"post\" action=\"{action}\">{csrf}\
             <input type=\"hidden\" name=\"n\" value=\"{n}\">\
             <input type=\"hidden\" name=\"seq\" value=\"{}\">\
             <button type=\"submit\" id=\"approve-{}\" aria-label=\"Approve once: denial {n}, {}\">\
             Approve once</button></form></td></tr>",
            time(denial.time),
            shown(&verdict.line),
            escape(verdict.risk.as_str()),
            shown(&verdict.reason),
            denial.seq,
            denial.seq,
            shown(&verdict.line)
        );
    }
    out.push_str("</tbody>\n</table></div>\n</section>\n");
    out
}

fn verdicts_section(urls: &SessionUrls, state: &SessionState) -> String {
    let mut out = String::from(
        "<section aria-labelledby=\"h-verdicts\">\n<h2 id=\"h-verdicts\">Recent verdicts</h2>\n",
    );
    if state.recent.is_empty() {
        out.push_str("<p>No verdicts in this session yet.</p>\n</section>\n");
        return out;
    }
    out.push_str(
        "<div class=\"scroll\"><table>\n<thead><tr><th scope=\"col\">Time (UTC)</th>\
         <th scope=\"col\">Line</th><th scope=\"col\">Decision</th><th scope=\"col\">Risk</th>\
         <th scope=\"col\">Reason</th><th scope=\"col\">Reviewer</th><th scope=\"col\">Duration</th>\
         <th scope=\"col\">Cached</th><th scope=\"col\">Events</th></tr></thead>\n<tbody>\n",
    );
    for summary in state.recent.iter().rev() {
        out.push_str(&verdict_row(urls, summary));
    }
    out.push_str("</tbody>\n</table></div>\n</section>\n");
    out
}

fn verdict_row(urls: &SessionUrls, summary: &VerdictSummary) -> String {
    let verdict = &summary.verdict;
    let chain = summary.request.as_ref().map_or("-".to_string(), |request| {
        format!(
            "<a href=\"{}\">chain<span class=\"visually-hidden\"> of {}</span></a>",
            urls.chain(request),
            shown(&verdict.line)
        )
    });
    format!(
        "<tr class=\"verdict\"><td>{}</td><td><code class=\"line\">{}</code></td><td>{}</td>\
         <td>{}</td><td>{}</td><td>{}/{}</td><td>{} ms</td><td>{}</td><td>{chain}</td></tr>\n",
        time(summary.time),
        shown(&verdict.line),
        decision_badge(verdict.decision),
        escape(verdict.risk.as_str()),
        shown(&verdict.reason),
        shown(&verdict.reviewer.provider),
        shown(&verdict.reviewer.model),
        verdict.duration_ms,
        if verdict.cached { "yes" } else { "no" }
    )
}

/// The page of one line's events.
pub fn chain_page(panel: &Panel, id: &SessionId, request: &RequestId, events: &[Event]) -> String {
    let urls = SessionUrls::new(panel, id);
    let header = format!(
        "<h1>Line <code>{}</code></h1>\n<p><a href=\"{}\">Back to session <code>{}</code></a></p>\n",
        escape(request.as_str()),
        urls.page,
        escape(id.as_str())
    );
    let mut body = String::from("<main id=\"main\" tabindex=\"-1\">\n");
    if events.is_empty() {
        body.push_str("<p>The log has no events of this line.</p>\n");
    } else {
        body.push_str("<h2>Its events, in order</h2>\n<ol class=\"chain\">\n");
        for event in events {
            let _ = writeln!(
                body,
                "<li><p><span class=\"kind\">{}</span> #{} at {}</p><p><code class=\"line\">{}</code></p></li>",
                escape(event.body.kind()),
                event.seq,
                time(event.time),
                shown(&describe_body(&event.body))
            );
        }
        body.push_str("</ol>\n");
    }
    body.push_str("</main>\n");
    document(
        panel,
        &format!("shellgate panel: line {}", escape(request.as_str())),
        &header,
        &body,
    )
}

/// The page shown when there is no session to show yet (the server adds a `Refresh` header, so it
/// looks again every few seconds).
pub fn no_session_page(panel: &Panel) -> String {
    let body = "<main id=\"main\" tabindex=\"-1\">\n<p>There is no session yet. Sessions start with \
                the shell hook (<code>eval \"$(shellgate init bash)\"</code>) or <code>shellgate \
                run</code>; this page looks again every few seconds.</p>\n</main>\n";
    document(panel, "shellgate panel", "<h1>No session yet</h1>\n", body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
    }

    #[test]
    fn shown_makes_controls_visible_before_escaping() {
        assert_eq!(shown("a\u{1b}[31m<b>\u{7}"), "a^[[31m&lt;b&gt;^G");
        assert_eq!(shown("x\u{202e}y"), "x\\u{202e}y");
        assert!(!shown("\u{1b}\n\r").chars().any(char::is_control));
    }
}
