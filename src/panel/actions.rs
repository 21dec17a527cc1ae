//! The page's buttons. Each one is exactly a `shellgate auto-review` command: the same fold of the
//! same log, then the same function ([`switch_review`], [`approve_denial`]) appending the same
//! events. The panel adds one guard of its own: an "approve once" button names the denial it was
//! drawn for, and is refused if the N-th denial is another one by now (a new denial arrived since
//! the page was drawn), so a click can never approve a line the person did not see.

use super::Panel;
use super::security::CSRF_FIELD;
use crate::audit::actions::{approve_denial, switch_review};
use crate::audit::event::Event;
use crate::audit::{Session, SessionId, fold};
use crate::error::{Code, Error, Result};
use crate::session::{Context, fold_params};

/// The most bytes an action's form may have; the real ones are about 150.
pub const MAX_FORM_BYTES: usize = 4096;

/// The fields of an `application/x-www-form-urlencoded` body.
///
/// No percent-decoding: every field the panel reads is hex, digits or `on`/`off`, which browsers
/// send unencoded. An encoded value simply fails to match, and the action is refused.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Form {
    fields: Vec<(String, String)>,
}

impl Form {
    pub fn parse(body: &[u8]) -> Form {
        let text = String::from_utf8_lossy(body);
        let fields = text
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                (name.to_owned(), value.to_owned())
            })
            .collect();
        Form { fields }
    }

    /// The value of `name`, when it occurs exactly once (a repeated field is ambiguous: refused).
    pub fn get(&self, name: &str) -> Option<&str> {
        let mut values = self.fields.iter().filter(|(n, _)| n == name);
        let first = values.next()?;
        if values.next().is_some() {
            return None;
        }
        Some(first.1.as_str())
    }

    pub fn csrf(&self) -> Option<&str> {
        self.get(CSRF_FIELD)
    }
}

/// What a button asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `shellgate auto-review on` / `off`.
    Review { enable: bool },
    /// `shellgate auto-review approve N`, for the denial recorded as event `seq`.
    Approve { n: usize, seq: u64 },
    /// `shellgate mode full --for Nm`: confirmed by typing `full` on the terminal the panel was
    /// started from, never by the click alone.
    FullAccess { minutes: u64 },
}

impl Action {
    pub fn review_from(form: &Form) -> Result<Action> {
        match form.get("enable") {
            Some("on") => Ok(Action::Review { enable: true }),
            Some("off") => Ok(Action::Review { enable: false }),
            _ => Err(Error::usage("the form must say enable=on or enable=off")),
        }
    }

    pub fn full_access_from(form: &Form) -> Result<Action> {
        let max = crate::mode_change::MAX_LASTING.as_secs() / 60;
        match form.get("minutes").and_then(|m| m.parse::<u64>().ok()) {
            Some(minutes) if (1..=max).contains(&minutes) => Ok(Action::FullAccess { minutes }),
            _ => Err(Error::usage(format!(
                "the form must say minutes=N, from 1 to {max}"
            ))),
        }
    }

    pub fn approve_from(form: &Form) -> Result<Action> {
        let n = form.get("n").and_then(|n| n.parse::<usize>().ok());
        let seq = form.get("seq").and_then(|s| s.parse::<u64>().ok());
        match (n, seq) {
            (Some(n), Some(seq)) if n > 0 => Ok(Action::Approve { n, seq }),
            _ => Err(Error::usage(
                "the form must name the denial: n (1 = the latest) and its event number seq",
            )),
        }
    }
}

/// Performs `action` on session `id` and returns the events appended.
pub fn perform(panel: &Panel, id: &SessionId, action: Action) -> Result<Vec<Event>> {
    // The same inputs as the CLI: config for the working directory, the saved settings, the fold
    // of the log as it is now.
    let ctx = Context::load_session(&panel.cwd, id.clone())?;
    let params = fold_params(&ctx.config, &ctx.settings.settings);
    let session = Session::open(&panel.paths, id.clone())?;
    let state = fold(&session.read()?.events, &params);
    match action {
        Action::Review { enable } => switch_review(&session, &state, enable, panel.person),
        Action::Approve { n, seq } => {
            let drawn = state.denial(n).map(|denial| denial.seq);
            if drawn != Some(seq) {
                return Err(Error::new(
                    Code::Usage,
                    format!(
                        "denial #{n} is no longer the one on your page (new denials arrived): \
                         reload the page and choose again"
                    ),
                ));
            }
            approve_denial(&session, &state, n, panel.person).map(|event| vec![event])
        }
        Action::FullAccess { minutes } => {
            if !panel.person {
                return Err(Error::new(
                    Code::TerminalRequired,
                    "this panel was started without a person at a terminal, so nobody can \
                     confirm Full access there",
                ));
            }
            let lasting = std::time::Duration::from_secs(minutes * 60);
            crate::mode_change::select(&ctx, &session, "full", Some(lasting))?;
            Ok(Vec::new())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_parse_single_fields_only() {
        let form = Form::parse(b"csrf=ab12&n=2&seq=17&x");
        assert_eq!(form.csrf(), Some("ab12"));
        assert_eq!(
            Action::approve_from(&form).unwrap(),
            Action::Approve { n: 2, seq: 17 }
        );
        assert_eq!(form.get("x"), Some(""));
        let repeated = Form::parse(b"csrf=a&csrf=b");
        assert_eq!(repeated.csrf(), None);
    }

    #[test]
    fn actions_refuse_unclear_forms() {
        assert!(Action::review_from(&Form::parse(b"enable=yes")).is_err());
        assert!(Action::review_from(&Form::parse(b"")).is_err());
        assert_eq!(
            Action::review_from(&Form::parse(b"enable=off")).unwrap(),
            Action::Review { enable: false }
        );
        for bad in [&b"n=0&seq=1"[..], b"n=1", b"n=-1&seq=2", b"n=1&seq=x"] {
            assert!(Action::approve_from(&Form::parse(bad)).is_err());
        }
    }
}
